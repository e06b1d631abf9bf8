//! Accuracy of the code graph's call edges against an independent oracle: a SCIP index of the
//! same tree made by scip-python, scip-typescript or rust-analyzer, or the JSON occurrences
//! that `benches/oracles/go_oracle.go` (go/types) and `benches/oracles/JavaOracle.java` (javac)
//! write (`benches/graph_accuracy.sh` makes them all).
//!
//! A call edge is one of our resolved targets at a call site. It is correct when the oracle's
//! occurrence at the same position (the name's line and column) refers to a symbol defined at
//! our target's name position (constructor symbols count as their class). Sites where the
//! oracle has no occurrence are not scored. Precision is per edge and per provenance. Recall
//! is over the oracle's own call sites — occurrences of repository functions, methods and
//! classes followed by `(` — so call sites our extractor misses count against us.
//!
//! Usage: `cargo bench --bench graph_accuracy -- REPO INDEX.scip|ORACLE.json [--json OUT] [--show N]`

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use kenning::graph::{CodeGraph, Family, Provenance, Resolver, SymbolId};
use kenning::symbols::ReferenceKind;
use kenning::{IndexBuilder, IndexConfig, IndexSnapshot, NoProgress};
use protobuf::Message;
use scip::types::{Index, PositionEncoding};

type Pos = (String, u32, u32);

#[derive(Default, Debug, serde::Serialize)]
struct Tally {
    edges: u64,
    correct: u64,
    /// The oracle says the site refers to something outside the repository.
    wrong_external: u64,
    wrong_other: u64,
}

#[derive(Default, Debug, serde::Serialize)]
struct Report {
    repo: String,
    scip: String,
    language_files: u64,
    call_sites: u64,
    call_sites_with_oracle: u64,
    by_provenance: BTreeMap<String, Tally>,
    oracle_call_sites: u64,
    oracle_sites_we_extracted: u64,
    recall_rules: u64,
    recall_rules_and_unique: u64,
    recall_any: u64,
}

struct Oracle {
    /// Non-definition occurrences: position -> symbols.
    refs: HashMap<Pos, Vec<String>>,
    /// Symbol -> its definition positions (overloads and redefinitions give several).
    defs: HashMap<String, Vec<Pos>>,
    /// Oracle call sites: position and symbol.
    call_sites: Vec<(Pos, String)>,
    utf16: bool,
    /// Occurrences from a JSON oracle, where a `new C()` site carries the constructor and the
    /// class at one position.
    json: bool,
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let mut pos = Vec::new();
    let (mut json, mut show) = (None, 0usize);
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json = it.next(),
            "--show" => show = it.next().and_then(|s| s.parse().ok()).unwrap_or(20),
            _ => pos.push(a),
        }
    }
    let [repo, scip_path] = pos.as_slice() else {
        eprintln!("usage: cargo bench --bench graph_accuracy -- REPO INDEX.scip [--json OUT] [--show N]");
        return Ok(());
    };
    let repo = PathBuf::from(repo).canonicalize().context("repo")?;
    // A full build: resolution rules may have changed since the last index of this tree.
    let config = IndexConfig {
        full: true,
        ..IndexConfig::default()
    };
    IndexBuilder::new(&repo, &config, &NoProgress)?.build()?;
    let snapshot = IndexSnapshot::open(&config.index_dir_for(&repo))?;
    let graph = snapshot.graph()?;
    let bytes = std::fs::read(scip_path).with_context(|| format!("reading {scip_path}"))?;
    let oracle = match scip_path.ends_with(".json") {
        true => Oracle::from_json(&serde_json::from_slice(&bytes).context("decoding the JSON oracle")?),
        false => Oracle::new(
            &Index::parse_from_bytes(&bytes).context("decoding the SCIP index")?,
            &repo,
        )?,
    };
    let report = score(&graph, &oracle, &repo, scip_path, show)?;
    print_report(&report);
    let refs = score_refs(&graph, &oracle, &repo);
    print_refs(&refs);
    if let Some(out) = json {
        let both = serde_json::json!({"calls": report, "references": refs});
        std::fs::write(&out, serde_json::to_vec_pretty(&both)?)?;
    }
    Ok(())
}

/// Every reference, not only calls: what `ken refs` answers (the graph's edges, then the
/// uses found at query time) against the oracle's non-definition occurrences, by line.
#[derive(Default, Debug, serde::Serialize)]
struct RefsReport {
    /// Oracle occurrences of repository definitions we could map to ours.
    oracle_refs: u64,
    /// Of those, the ones on a line `ken refs` lists for the same definition.
    found: u64,
    /// The same for occurrences that are not call sites.
    oracle_non_call: u64,
    found_non_call: u64,
    /// `kind: uses` lines listed, those on a line where the oracle has occurrences, and those
    /// where one of the oracle's occurrences is the same definition.
    uses_listed: u64,
    uses_scored: u64,
    uses_correct: u64,
}

fn score_refs(graph: &CodeGraph, oracle: &Oracle, repo: &Path) -> RefsReport {
    let q = kenning::graph::GraphQuery::new(graph);
    let mut columns: HashMap<u32, Columns> = HashMap::new();
    // Our definitions by the position of their name.
    let mut by_pos: HashMap<Pos, SymbolId> = HashMap::new();
    for (fi, f) in graph.files.iter().enumerate() {
        let c = columns
            .entry(fi as u32)
            .or_insert_with(|| Columns::new(std::fs::read_to_string(f.path.to_fs(repo)).unwrap_or_default()));
        for (di, d) in f.defs.iter().enumerate() {
            let (l, col) = c.at(d.name_byte, oracle.utf16);
            by_pos.insert((f.path.to_string(), l, col), SymbolId::new(fi as u32, di as u32));
        }
    }
    // The oracle's symbols on each line.
    let mut on_line: HashMap<(String, u32), Vec<&str>> = HashMap::new();
    for (p, syms) in &oracle.refs {
        on_line
            .entry((p.0.clone(), p.1))
            .or_default()
            .extend(syms.iter().map(String::as_str));
    }
    let calls: HashSet<&Pos> = oracle.call_sites.iter().map(|(p, _)| p).collect();
    let mut ours: HashMap<SymbolId, HashSet<(String, u32)>> = HashMap::new();
    let mut uses_of: HashMap<SymbolId, Vec<(String, u32)>> = HashMap::new();
    let mut r = RefsReport::default();
    let mut positions: Vec<&Pos> = oracle.refs.keys().collect();
    positions.sort();
    for p in positions {
        if by_pos.contains_key(p) {
            continue;
        }
        let Some(syms) = oracle.refs.get(p) else { continue };
        let targets: Vec<SymbolId> = syms
            .iter()
            .flat_map(|s| oracle.def_of(s))
            .filter_map(|d| by_pos.get(d).copied())
            .collect();
        if targets.is_empty() {
            continue;
        }
        let mut hit = false;
        for t in &targets {
            let lines = ours.entry(*t).or_insert_with(|| {
                let mut set: HashSet<(String, u32)> = q
                    .refs(*t)
                    .into_iter()
                    .map(|(s, _)| (s.path, s.line - 1))
                    .collect();
                let (more, _) = kenning::api::uses::uses(&q, *t, repo, &HashSet::new());
                let listed: Vec<(String, u32)> =
                    more.into_iter().map(|(s, _)| (s.path, s.line - 1)).collect();
                set.extend(listed.iter().cloned());
                uses_of.insert(*t, listed);
                set
            });
            hit |= lines.contains(&(p.0.clone(), p.1));
        }
        r.oracle_refs += 1;
        r.found += u64::from(hit);
        if !calls.contains(p) {
            r.oracle_non_call += 1;
            r.found_non_call += u64::from(hit);
        }
    }
    for (t, listed) in &uses_of {
        for at in listed {
            r.uses_listed += 1;
            let Some(syms) = on_line.get(at) else { continue };
            r.uses_scored += 1;
            let same = syms
                .iter()
                .flat_map(|s| oracle.def_of(s))
                .any(|d| by_pos.get(d) == Some(t));
            r.uses_correct += u64::from(same);
        }
    }
    r
}

fn print_refs(r: &RefsReport) {
    let pct = |a: u64, b: u64| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    println!(
        "references (ken refs, all kinds): recall {:.1}% of {} oracle occurrences; non-call {:.1}% of {}; uses listed {}, precision {:.1}% of {} scored",
        pct(r.found, r.oracle_refs),
        r.oracle_refs,
        pct(r.found_non_call, r.oracle_non_call),
        r.oracle_non_call,
        r.uses_listed,
        pct(r.uses_correct, r.uses_scored),
        r.uses_scored
    );
}

/// The JSON oracles' format: occurrences per document, 0-based lines and columns.
#[derive(serde::Deserialize)]
struct JsonOracle {
    encoding: String,
    documents: Vec<JsonDocument>,
}

#[derive(serde::Deserialize)]
struct JsonDocument {
    path: String,
    occurrences: Vec<JsonOccurrence>,
}

#[derive(serde::Deserialize)]
struct JsonOccurrence {
    symbol: String,
    line: u32,
    col: u32,
    def: bool,
    callable: bool,
}

impl Oracle {
    fn from_json(j: &JsonOracle) -> Oracle {
        let mut o = Oracle {
            refs: HashMap::new(),
            defs: HashMap::new(),
            call_sites: Vec::new(),
            utf16: j.encoding == "utf16",
            json: true,
        };
        for doc in &j.documents {
            for occ in &doc.occurrences {
                let p = (doc.path.clone(), occ.line, occ.col);
                if occ.def {
                    o.defs.entry(occ.symbol.clone()).or_default().push(p);
                    continue;
                }
                if occ.callable {
                    o.call_sites.push((p.clone(), occ.symbol.clone()));
                }
                o.refs.entry(p).or_default().push(occ.symbol.clone());
            }
        }
        let defs = &o.defs;
        o.call_sites.retain(|(_, s)| defs.contains_key(s));
        o
    }

    /// Where any symbol the oracle gives at `p` is defined (a `new C()` site names the
    /// constructor and the class).
    fn truth_at(&self, p: &Pos, symbol: &str) -> Vec<&Pos> {
        let mut v = self.def_of(symbol);
        let others = if self.json { self.refs.get(p) } else { None };
        for s in others.into_iter().flatten() {
            v.extend(self.def_of(s));
        }
        v
    }

    fn new(index: &Index, repo: &Path) -> Result<Oracle> {
        let mut o = Oracle {
            refs: HashMap::new(),
            defs: HashMap::new(),
            call_sites: Vec::new(),
            utf16: true,
            json: false,
        };
        for doc in &index.documents {
            let path = doc.relative_path.clone();
            o.utf16 = !matches!(
                doc.position_encoding.enum_value_or_default(),
                PositionEncoding::UTF8CodeUnitOffsetFromLineStart
            );
            let text = std::fs::read_to_string(repo.join(&path)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            for occ in &doc.occurrences {
                if occ.symbol.starts_with("local ") || occ.range.len() < 3 {
                    continue;
                }
                let (line, start, end) = (
                    occ.range[0] as u32,
                    occ.range[1] as u32,
                    *occ.range.last().unwrap_or(&0) as u32,
                );
                let p = (path.clone(), line, start);
                if occ.symbol_roles & 1 == 1 {
                    o.defs.entry(occ.symbol.clone()).or_default().push(p);
                    continue;
                }
                let callable = occ.symbol.ends_with(").") || occ.symbol.ends_with('#');
                if callable
                    && followed_by_paren(lines.get(line as usize).copied().unwrap_or(""), end, o.utf16)
                {
                    o.call_sites.push((p.clone(), occ.symbol.clone()));
                }
                o.refs.entry(p).or_default().push(occ.symbol.clone());
            }
        }
        // Only call sites of symbols defined in the repository.
        let defs = &o.defs;
        o.call_sites
            .retain(|(_, s)| defs.contains_key(&class_of(s)) || defs.contains_key(s));
        Ok(o)
    }

    /// Where the symbol is defined; a constructor counts as its class.
    fn def_of(&self, symbol: &str) -> Vec<&Pos> {
        let mut v: Vec<&Pos> = self.defs.get(symbol).into_iter().flatten().collect();
        if let Some(c) = self.defs.get(&class_of(symbol)) {
            v.extend(c);
        }
        v
    }
}

/// `a/B#__init__().` and a TypeScript constructor `a/B#<constructor>().` -> `a/B#`.
fn class_of(symbol: &str) -> String {
    for ctor in ["__init__().", "`<constructor>`().", "<constructor>()."] {
        if let Some(c) = symbol.strip_suffix(ctor) {
            return c.to_string();
        }
    }
    symbol.to_string()
}

fn followed_by_paren(line: &str, end: u32, utf16: bool) -> bool {
    let byte = col_to_byte(line, end, utf16);
    let rest = line.get(byte..).unwrap_or("").trim_start();
    rest.starts_with('(') || rest.starts_with("::<") || rest.starts_with("!(")
}

fn col_to_byte(line: &str, col: u32, utf16: bool) -> usize {
    if !utf16 {
        return col as usize;
    }
    let mut units = 0u32;
    for (i, c) in line.char_indices() {
        if units >= col {
            return i;
        }
        units += c.len_utf16() as u32;
    }
    line.len()
}

/// Line (0-based) and column of a byte offset, in the oracle's units.
struct Columns {
    starts: Vec<usize>,
    text: String,
}

impl Columns {
    fn new(text: String) -> Columns {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Columns { starts, text }
    }

    fn at(&self, byte: u32, utf16: bool) -> (u32, u32) {
        let b = byte as usize;
        let line = self.starts.partition_point(|&s| s <= b).saturating_sub(1);
        let start = self.starts[line];
        let col = match utf16 {
            true => self.text.get(start..b).map_or(0, |s| s.encode_utf16().count()),
            false => b - start,
        };
        (line as u32, col as u32)
    }
}

fn score(graph: &CodeGraph, oracle: &Oracle, repo: &Path, scip: &str, show: usize) -> Result<Report> {
    let documents: HashSet<&str> = oracle
        .refs
        .keys()
        .map(|p| p.0.as_str())
        .chain(oracle.defs.values().flatten().map(|p| p.0.as_str()))
        .collect();
    let mut columns: HashMap<u32, Columns> = HashMap::new();
    let def_pos = |s: SymbolId, columns: &mut HashMap<u32, Columns>| -> Option<Pos> {
        let f = graph.files.get(s.file.index())?;
        let d = f.defs.get(s.def as usize)?;
        let c = columns
            .entry(s.file.0)
            .or_insert_with(|| Columns::new(std::fs::read_to_string(f.path.to_fs(repo)).unwrap_or_default()));
        let (l, col) = c.at(d.name_byte, oracle.utf16);
        Some((f.path.to_string(), l, col))
    };
    let mut report = Report {
        repo: repo.display().to_string(),
        scip: scip.to_string(),
        ..Report::default()
    };
    let mut ours_at: HashMap<Pos, (Option<Provenance>, Vec<Pos>)> = HashMap::new();
    let mut shown = 0usize;
    for (fi, f) in graph.files.iter().enumerate() {
        if !documents.contains(f.path.as_str()) || f.family() == Family::Other {
            continue;
        }
        report.language_files += 1;
        let res = &graph.resolved[fi];
        for (r, rr) in f.refs.iter().zip(&res.refs) {
            let call = r.kind == ReferenceKind::Call
                || (r.kind == ReferenceKind::Class && !Resolver::is_base_ref(f, r));
            if !call {
                continue;
            }
            report.call_sites += 1;
            let c = columns.entry(fi as u32).or_insert_with(|| {
                Columns::new(std::fs::read_to_string(f.path.to_fs(repo)).unwrap_or_default())
            });
            let (l, col) = c.at(r.name_byte, oracle.utf16);
            let p: Pos = (f.path.to_string(), l, col);
            // Definitions sharing a qualified name are one symbol: overloads, redefinitions,
            // and a Rust method spread over several trait impls (`Bytes::from`).
            let mut groups: BTreeMap<String, Vec<Pos>> = BTreeMap::new();
            for t in &rr.targets {
                if let Some(dp) = def_pos(*t, &mut columns) {
                    let q = graph.files[t.file.index()].qualified(t.def);
                    groups.entry(q).or_default().push(dp);
                }
            }
            let targets: Vec<Vec<Pos>> = groups.into_values().collect();
            ours_at.insert(
                p.clone(),
                (rr.provenance, targets.iter().flatten().cloned().collect()),
            );
            let Some(symbols) = oracle.refs.get(&p) else {
                continue;
            };
            report.call_sites_with_oracle += 1;
            let Some(prov) = rr.provenance else { continue };
            let truth: Vec<&Pos> = symbols.iter().flat_map(|s| oracle.def_of(s)).collect();
            let tally = report.by_provenance.entry(prov.as_str().to_string()).or_default();
            for group in &targets {
                let hit = group.iter().any(|t| truth.contains(&t));
                let t = &group[0];
                tally.edges += 1;
                if hit {
                    tally.correct += 1;
                } else if truth.is_empty() {
                    tally.wrong_external += 1;
                } else {
                    tally.wrong_other += 1;
                }
                if !hit && shown < show && prov.is_resolved() {
                    shown += 1;
                    eprintln!(
                        "wrong {prov}: {}:{} `{}` -> ours {}:{}  oracle {:?}",
                        p.0,
                        p.1 + 1,
                        r.name,
                        t.0,
                        t.1 + 1,
                        symbols
                    );
                }
            }
        }
    }
    // Decorated overloads make the oracle report definitions as references: drop sites
    // that are one of our definitions' names.
    let mut our_defs: HashSet<Pos> = HashSet::new();
    for (fi, f) in graph.files.iter().enumerate() {
        if !documents.contains(f.path.as_str()) {
            continue;
        }
        for di in 0..f.defs.len() {
            if let Some(p) = def_pos(SymbolId::new(fi as u32, di as u32), &mut columns) {
                our_defs.insert(p);
            }
        }
    }
    let sites: Vec<&(Pos, String)> = oracle
        .call_sites
        .iter()
        .filter(|(p, _)| !our_defs.contains(p))
        .collect();
    report.oracle_call_sites = sites.len() as u64;
    let mut missed = 0usize;
    for (p, sym) in sites {
        let Some((prov, targets)) = ours_at.get(p) else {
            if missed < show {
                missed += 1;
                eprintln!("missed site: {}:{}:{} {sym}", p.0, p.1 + 1, p.2);
            }
            continue;
        };
        report.oracle_sites_we_extracted += 1;
        let truth = oracle.truth_at(p, sym);
        if !targets.iter().any(|t| truth.contains(&t)) {
            if missed < show {
                missed += 1;
                eprintln!(
                    "missed edge: {}:{}:{} {sym} ours {prov:?} {:?}",
                    p.0,
                    p.1 + 1,
                    p.2,
                    targets.first()
                );
            }
            continue;
        }
        match prov {
            Some(p) if p.is_resolved() => {
                report.recall_rules += 1;
                report.recall_rules_and_unique += 1;
                report.recall_any += 1;
            }
            Some(Provenance::NameUnique) => {
                report.recall_rules_and_unique += 1;
                report.recall_any += 1;
                if missed < show {
                    missed += 1;
                    eprintln!("found by name only: {}:{}:{} {sym}", p.0, p.1 + 1, p.2);
                }
            }
            Some(_) => {
                report.recall_any += 1;
                if missed < show {
                    missed += 1;
                    eprintln!("found by ambiguous name: {}:{}:{} {sym}", p.0, p.1 + 1, p.2);
                }
            }
            None => {}
        }
    }
    if report.call_sites == 0 {
        bail!("no call sites of the oracle's documents found in the index");
    }
    Ok(report)
}

fn print_report(r: &Report) {
    let pct = |a: u64, b: u64| {
        if b == 0 {
            "-".to_string()
        } else {
            format!("{:.1}%", 100.0 * a as f64 / b as f64)
        }
    };
    println!("# {} vs {}", r.repo, r.scip);
    println!(
        "files {}  call sites {} (oracle occurrence at {})",
        r.language_files, r.call_sites, r.call_sites_with_oracle
    );
    println!("| provenance | edges | precision | wrong: external | wrong: other target |");
    println!("|---|---:|---:|---:|---:|");
    let mut rules = Tally::default();
    for (p, t) in &r.by_provenance {
        println!(
            "| {p} | {} | {} | {} | {} |",
            t.edges,
            pct(t.correct, t.edges),
            t.wrong_external,
            t.wrong_other
        );
        if !matches!(p.as_str(), "name-unique" | "name-ambiguous") {
            rules.edges += t.edges;
            rules.correct += t.correct;
        }
    }
    println!(
        "| import+qualified+receiver+scope | {} | {} | | |",
        rules.edges,
        pct(rules.correct, rules.edges)
    );
    let n = r.oracle_call_sites;
    println!(
        "recall over {n} oracle call sites (we extracted {}): rules {}, +name-unique {}, +ambiguous {}",
        pct(r.oracle_sites_we_extracted, n),
        pct(r.recall_rules, n),
        pct(r.recall_rules_and_unique, n),
        pct(r.recall_any, n)
    );
    let _ = Provenance::ALL;
}
