//! `ken callers`, `ken callees`, `ken refs`, `ken deps`, `ken graph stats`: the code graph
//! commands, with their human and JSON renderings.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use petgraph::Direction;

use super::args::{CallArgs, DepsArgs, GraphStatsArgs, QueryLocation, RefsArgs};
use super::commands::locate;
use crate::graph::{CodeGraph, GraphQuery, Lookup, SymbolId, SymbolInfo, Traversal};
use crate::index::{Coverage, IndexSnapshot, WorkingTreeDiff};

/// Exit code when a symbol address matches several definitions (they are listed).
const AMBIGUOUS: u8 = 2;

struct Opened {
    root: PathBuf,
    snapshot: IndexSnapshot,
    graph: CodeGraph,
}

fn open(at: &QueryLocation) -> Result<Opened> {
    let (root, dir) = locate(at.repo.as_deref(), at.location.index_dir.clone())?;
    let snapshot = IndexSnapshot::open(&dir)?;
    let graph = snapshot
        .graph()
        .with_context(|| format!("reading the code graph of {}", dir.display()))?;
    Ok(Opened {
        root,
        snapshot,
        graph,
    })
}

impl Opened {
    fn coverage(&self) -> Coverage {
        let diff = WorkingTreeDiff::quick(&self.root, &self.snapshot);
        Coverage::of(&self.snapshot, Some(&diff))
    }
}

/// The one symbol an address names, or an exit code after listing candidates / the miss.
fn resolve(
    q: &GraphQuery<'_>,
    address: &str,
    json: bool,
    cov: &Coverage,
) -> Result<Result<SymbolId, ExitCode>> {
    let mut out = std::io::stdout().lock();
    match q.find(address) {
        Lookup::Found(s) => Ok(Ok(s)),
        Lookup::Ambiguous(v) => {
            let candidates: Vec<SymbolInfo> = v.iter().map(|s| q.info(*s)).collect();
            if json {
                let j = serde_json::json!({ "query": address, "status": "ambiguous",
                    "candidates": candidates, "coverage": cov });
                serde_json::to_writer_pretty(&mut out, &j)?;
                writeln!(out)?;
            } else {
                writeln!(
                    out,
                    "{address:?} names {} definitions; pick one by qualified name or path:line:",
                    v.len()
                )?;
                for c in &candidates {
                    writeln!(out, "  {:<9} {}  {}:{}", c.kind, c.qualified, c.path, c.line)?;
                }
            }
            Ok(Err(ExitCode::from(AMBIGUOUS)))
        }
        Lookup::NotFound => {
            if json {
                let j = serde_json::json!({ "query": address, "status": "not-found", "coverage": cov });
                serde_json::to_writer_pretty(&mut out, &j)?;
                writeln!(out)?;
            }
            eprintln!(
                "no definition matches {address:?} ({} files indexed, {} skipped, {} stale); try `ken symbol {address}`",
                cov.files_indexed,
                cov.files_skipped,
                cov.stale.map_or("unknown".to_string(), |n| n.to_string())
            );
            Ok(Err(ExitCode::from(1)))
        }
    }
}

pub fn calls(a: CallArgs, dir: Direction) -> Result<ExitCode> {
    if !(0.0..=1.0).contains(&a.min_confidence) {
        anyhow::bail!(
            "--min-confidence must be between 0 and 1, not {}",
            a.min_confidence
        );
    }
    if a.depth == 0 || a.depth > crate::graph::MAX_DEPTH {
        anyhow::bail!(
            "--depth must be between 1 and {}, not {}",
            crate::graph::MAX_DEPTH,
            a.depth
        );
    }
    let o = open(&a.at)?;
    let cov = o.coverage();
    let q = GraphQuery::new(&o.graph);
    let s = match resolve(&q, &a.symbol, a.at.json, &cov)? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let t = q.calls(s, dir, a.depth, a.min_confidence);
    let label = match dir {
        Direction::Incoming => "callers",
        Direction::Outgoing => "callees",
    };
    let mut out = std::io::stdout().lock();
    if a.at.json {
        let j = serde_json::json!({ "query": a.symbol, "status": "ok", "direction": label,
            "depth": a.depth, "target": t.target, label: t.reached, "truncated": t.truncated,
            "coverage": cov });
        serde_json::to_writer_pretty(&mut out, &j)?;
        writeln!(out)?;
    } else {
        render_traversal(&mut out, &t, label)?;
    }
    note_stale(&cov);
    Ok(ExitCode::SUCCESS)
}

fn render_traversal(out: &mut impl Write, t: &Traversal, label: &str) -> std::io::Result<()> {
    let s = &t.target;
    writeln!(out, "{} {}  {}:{}", s.kind, s.qualified, s.path, s.line)?;
    if t.reached.is_empty() {
        writeln!(out, "  no {label} found in the index")?;
    }
    for r in &t.reached {
        let indent = "  ".repeat(r.depth);
        let first = r.sites.first();
        let how = first.map_or(String::new(), |f| {
            let amb = if f.candidates > 1 {
                format!(" of {}", f.candidates)
            } else {
                String::new()
            };
            format!("{}{amb} {:.2}", f.provenance, r.confidence)
        });
        writeln!(
            out,
            "{indent}{} {}  {}:{}  [{how}]",
            r.symbol.kind, r.symbol.qualified, r.symbol.path, r.symbol.line
        )?;
        for site in &r.sites {
            writeln!(out, "{indent}    at {}:{}", site.path, site.line)?;
        }
    }
    if t.truncated {
        writeln!(out, "  ... stopped at the depth or size bound (--depth)")?;
    }
    Ok(())
}

pub fn refs(a: RefsArgs) -> Result<ExitCode> {
    let o = open(&a.at)?;
    let cov = o.coverage();
    let q = GraphQuery::new(&o.graph);
    let s = match resolve(&q, &a.symbol, a.at.json, &cov)? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let mut all = q.refs(s);
    let total = all.len();
    all.truncate(a.limit);
    let target = q.info(s);
    let mut out = std::io::stdout().lock();
    if a.at.json {
        let refs: Vec<serde_json::Value> = all
            .iter()
            .map(|(site, from)| serde_json::json!({ "site": site, "from": from }))
            .collect();
        let j = serde_json::json!({ "query": a.symbol, "status": "ok", "target": target, "total": total,
            "refs": refs, "coverage": cov });
        serde_json::to_writer_pretty(&mut out, &j)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{} {}  {}:{}",
            target.kind, target.qualified, target.path, target.line
        )?;
        for (site, from) in &all {
            let amb = match site.candidates {
                0 | 1 => String::new(),
                n => format!(" of {n}"),
            };
            writeln!(
                out,
                "  {}:{}  {:<10} in {}  [{}{amb} {:.2}]",
                site.path, site.line, site.kind, from.qualified, site.provenance, site.confidence
            )?;
        }
        if total == 0 {
            writeln!(out, "  no references found in the index")?;
        } else if total > all.len() {
            writeln!(out, "  ... {} more (--limit)", total - all.len())?;
        }
    }
    note_stale(&cov);
    Ok(ExitCode::SUCCESS)
}

pub fn deps(a: DepsArgs) -> Result<ExitCode> {
    let o = open(&a.at)?;
    let cov = o.coverage();
    let q = GraphQuery::new(&o.graph);
    let path = normalize_path(&o.root, &a.file);
    let Some(file) = q.file(&path) else {
        anyhow::bail!(
            "{} is not an indexed file ({} files indexed, {} skipped; see `ken index status --details`)",
            a.file,
            cov.files_indexed,
            cov.files_skipped
        );
    };
    let d = q.deps(file);
    let mut out = std::io::stdout().lock();
    if a.at.json {
        let j = serde_json::json!({ "file": d.path, "module": d.module, "imports": d.imports,
            "imported_by": d.imported_by.iter().map(|(p, l)| serde_json::json!({"path": p, "lines": l})).collect::<Vec<_>>(),
            "coverage": cov });
        serde_json::to_writer_pretty(&mut out, &j)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{}  (module {})",
            d.path,
            if d.module.is_empty() { "-" } else { &d.module }
        )?;
        writeln!(out, "imports:")?;
        for i in &d.imports {
            let what = match &i.name {
                Some(n) => format!("{} {n}", i.path),
                None => i.path.clone(),
            };
            let to = match (i.external, i.files.is_empty()) {
                (true, _) => "external".to_string(),
                (false, true) => "not found in the repository".to_string(),
                (false, false) => i.files.join(", "),
            };
            writeln!(out, "  {:>5}  {what}  -> {to}", i.line)?;
        }
        writeln!(out, "imported by:")?;
        for (p, lines) in &d.imported_by {
            let l: Vec<String> = lines.iter().map(u32::to_string).collect();
            writeln!(out, "  {p}:{}", l.join(","))?;
        }
        if d.imported_by.is_empty() {
            writeln!(out, "  (no file in the repository)")?;
        }
    }
    note_stale(&cov);
    Ok(ExitCode::SUCCESS)
}

pub fn stats(a: GraphStatsArgs) -> Result<ExitCode> {
    let o = open(&a.at)?;
    let cov = o.coverage();
    let q = GraphQuery::new(&o.graph);
    let s = q.stats();
    let update = o
        .snapshot
        .manifest
        .parts
        .get("graph")
        .and_then(|p| p.get("update"))
        .cloned();
    let mut out = std::io::stdout().lock();
    if a.at.json {
        let j = serde_json::json!({ "stats": s, "last_update": update, "coverage": cov });
        serde_json::to_writer_pretty(&mut out, &j)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(
        out,
        "nodes: {} files, {} symbols; edges: {}",
        s.files, s.symbols, s.edges
    )?;
    writeln!(out, "edges by kind:")?;
    for (k, n) in &s.edges_by_kind {
        writeln!(out, "  {k:<12} {n:>10}")?;
    }
    writeln!(out, "reference edges by provenance:")?;
    for (k, n) in &s.edges_by_provenance {
        writeln!(out, "  {k:<15} {n:>10}")?;
    }
    writeln!(
        out,
        "imports: {} ({} resolved to files, {} external)",
        s.imports, s.imports_resolved, s.imports_external
    )?;
    writeln!(
        out,
        "references by language: total, resolved by rules, name-matched, external, unresolved"
    )?;
    for (lang, l) in &s.references_by_language {
        let pct = |n: u64| 100.0 * n as f64 / l.references.max(1) as f64;
        writeln!(
            out,
            "  {lang:<11} {:>9}  {:>5.1}%  {:>5.1}%  {:>5.1}%  {:>5.1}%",
            l.references,
            pct(l.resolved),
            pct(l.name_matched),
            pct(l.external),
            pct(l.unresolved)
        )?;
    }
    note_stale(&cov);
    Ok(ExitCode::SUCCESS)
}

/// A path as given (relative to the current folder or absolute) to a repository path.
fn normalize_path(root: &std::path::Path, given: &str) -> String {
    let p = std::path::Path::new(given);
    let abs = match p.is_absolute() {
        true => p.to_path_buf(),
        false => std::env::current_dir()
            .map(|c| c.join(p))
            .unwrap_or_else(|_| p.to_path_buf()),
    };
    match abs
        .canonicalize()
        .ok()
        .and_then(|c| c.strip_prefix(root).ok().map(|r| r.to_path_buf()))
    {
        Some(rel) => rel.to_string_lossy().replace('\\', "/"),
        None => given.trim_start_matches("./").to_string(),
    }
}

fn note_stale(c: &Coverage) {
    if let Some(n) = c.stale.filter(|&n| n > 0) {
        eprintln!("note: {n} files changed since the build; run `ken index build`");
    }
}
