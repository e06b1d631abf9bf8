//! `ken callers`, `ken callees`, `ken refs`, `ken deps`, `ken graph stats`: requests to the
//! query layer, rendered for people or printed as JSON.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use super::args::{CallArgs, DepsArgs, GraphStatsArgs, RefsArgs};
use super::shared::{cli_error, open, print_json};
use crate::api::{
    CallDirection, CallsRequest, CallsResponse, DepsRequest, GraphStatsRequest, LookupStatus, RefsRequest,
};
use crate::graph::SymbolInfo;
use crate::index::Coverage;

/// Exit code when a symbol address matches several definitions (they are listed).
const AMBIGUOUS: u8 = 2;

/// An address that named no single definition: the candidates or the miss, and the exit code.
fn unresolved(
    status: LookupStatus,
    query: &str,
    candidates: &[SymbolInfo],
    cov: &Coverage,
    json: bool,
) -> Result<Option<ExitCode>> {
    match status {
        LookupStatus::Ok => Ok(None),
        LookupStatus::Ambiguous => {
            if !json {
                let mut out = std::io::stdout().lock();
                writeln!(
                    out,
                    "{query:?} names {} definitions; pick one by qualified name or path:line:",
                    candidates.len()
                )?;
                for c in candidates {
                    writeln!(out, "  {:<9} {}  {}:{}", c.kind, c.qualified, c.path, c.line)?;
                }
            }
            Ok(Some(ExitCode::from(AMBIGUOUS)))
        }
        LookupStatus::NotFound => {
            eprintln!(
                "no definition matches {query:?} ({} files indexed, {} skipped, {} stale); try `ken symbol {query}`",
                cov.files_indexed,
                cov.files_skipped,
                cov.stale.map_or("unknown".to_string(), |n| n.to_string())
            );
            Ok(Some(ExitCode::from(1)))
        }
    }
}

pub fn calls(a: CallArgs, direction: CallDirection) -> Result<ExitCode> {
    let ws = open(a.at.repo.as_deref(), a.at.location.index_dir.clone())?;
    let r = ws
        .analysis()
        .calls(
            &CallsRequest {
                symbol: a.symbol.clone(),
                depth: Some(a.depth),
                min_confidence: Some(a.min_confidence),
                limit: None,
                max_tokens: None,
                cursor: None,
            },
            direction,
        )
        .map_err(cli_error)?;
    if a.at.json {
        print_json(&r)?;
    }
    if let Some(code) = unresolved(r.status, &a.symbol, &r.candidates, &r.coverage, a.at.json)? {
        return Ok(code);
    }
    if !a.at.json {
        render_traversal(&mut std::io::stdout().lock(), &r)?;
    }
    note_stale(&r.coverage);
    Ok(ExitCode::SUCCESS)
}

fn render_traversal(out: &mut impl Write, t: &CallsResponse) -> std::io::Result<()> {
    let label = match t.direction {
        CallDirection::Callers => "callers",
        CallDirection::Callees => "callees",
    };
    if let Some(s) = &t.target {
        writeln!(out, "{} {}  {}:{}", s.kind, s.qualified, s.path, s.line)?;
    }
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
    if let Some(c) = &t.page.next_cursor {
        writeln!(
            out,
            "  ... {} more reached (--json pages them; next cursor {c})",
            t.page.total - t.page.returned
        )?;
    }
    Ok(())
}

pub fn refs(a: RefsArgs) -> Result<ExitCode> {
    let ws = open(a.at.repo.as_deref(), a.at.location.index_dir.clone())?;
    let r = ws
        .analysis()
        .refs(&RefsRequest {
            symbol: a.symbol.clone(),
            limit: Some(a.limit),
            max_tokens: None,
            cursor: None,
        })
        .map_err(cli_error)?;
    if a.at.json {
        print_json(&r)?;
    }
    if let Some(code) = unresolved(r.status, &a.symbol, &r.candidates, &r.coverage, a.at.json)? {
        return Ok(code);
    }
    if !a.at.json {
        let mut out = std::io::stdout().lock();
        if let Some(t) = &r.target {
            writeln!(out, "{} {}  {}:{}", t.kind, t.qualified, t.path, t.line)?;
        }
        for rs in &r.refs {
            let (site, from) = (&rs.site, &rs.from);
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
        if r.page.total == 0 {
            writeln!(out, "  no references found in the index")?;
        } else if r.page.total > r.refs.len() {
            writeln!(out, "  ... {} more (--limit)", r.page.total - r.refs.len())?;
        }
    }
    note_stale(&r.coverage);
    Ok(ExitCode::SUCCESS)
}

pub fn deps(a: DepsArgs) -> Result<ExitCode> {
    let ws = open(a.at.repo.as_deref(), a.at.location.index_dir.clone())?;
    let file = normalize_path(ws.root(), &a.file);
    let d = ws
        .analysis()
        .deps(&DepsRequest {
            file,
            limit: None,
            max_tokens: None,
            cursor: None,
        })
        .map_err(cli_error)?;
    if a.at.json {
        print_json(&d)?;
    } else {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "{}  (module {})",
            d.file,
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
        for imp in &d.imported_by {
            let l: Vec<String> = imp.lines.iter().map(u32::to_string).collect();
            writeln!(out, "  {}:{}", imp.path, l.join(","))?;
        }
        if d.imported_by.is_empty() {
            writeln!(out, "  (no file in the repository)")?;
        }
    }
    note_stale(&d.coverage);
    Ok(ExitCode::SUCCESS)
}

pub fn stats(a: GraphStatsArgs) -> Result<ExitCode> {
    let ws = open(a.at.repo.as_deref(), a.at.location.index_dir.clone())?;
    let r = ws
        .analysis()
        .graph_stats(&GraphStatsRequest {})
        .map_err(cli_error)?;
    if a.at.json {
        print_json(&r)?;
        return Ok(ExitCode::SUCCESS);
    }
    let s = &r.stats;
    let mut out = std::io::stdout().lock();
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
    // Docs and config read as text have no references: not a row of zeros each.
    for (lang, l) in s
        .references_by_language
        .iter()
        .filter(|(lang, l)| l.references > 0 || crate::lang::text_kind(lang).is_none())
    {
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
    note_stale(&r.coverage);
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
    super::render::not_built_note(c);
}
