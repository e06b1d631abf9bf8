//! Human-readable output. Stable, sorted, repository-relative.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::api::{IndexStatusResponse, SearchMode, SearchResponse};
use crate::index::{BuildReport, Coverage, SearchHit, SymbolHit};
use crate::lexical::{Grain, LineMatch};

pub fn build_report(out: &mut impl Write, r: &BuildReport) -> io::Result<()> {
    let m = &r.manifest;
    let s = &m.summary;
    let st = &m.stats;
    nothing_indexed(out, s)?;
    writeln!(
        out,
        "indexed {} files ({} lines) in {:.2}s: {} parsed, {} unchanged, {} removed{}",
        s.files,
        s.lines,
        st.total_ms as f64 / 1000.0,
        st.parsed,
        st.reused,
        st.removed,
        if st.full { " (full build)" } else { "" }
    )?;
    let langs = |text: bool| -> Vec<String> {
        s.by_language
            .iter()
            .filter(|(l, _)| crate::lang::text_kind(l).is_some() == text)
            .map(|(l, x)| format!("{l} {}", x.files))
            .collect()
    };
    let phases: Vec<String> = [("walk", st.walk_ms), ("parse", st.parse_ms)]
        .into_iter()
        .chain(
            ["assemble", "lexical", "graph", "vectors", "history"]
                .into_iter()
                .filter_map(|k| Some((k, *st.phases_ms.get(k)?))),
        )
        .map(|(k, v)| format!("{k} {:.2}s", v as f64 / 1000.0))
        .collect();
    match st.peak_mib {
        Some(mib) => writeln!(out, "time: {}; memory peak {mib} MiB", phases.join(", "))?,
        None => writeln!(out, "time: {}", phases.join(", "))?,
    }
    if let Some(cap) = st.max_memory_mib {
        memory_against_cap(out, st, cap)?;
    }
    writeln!(out, "languages: {}", langs(false).join(", "))?;
    let text = langs(true);
    if !text.is_empty() {
        writeln!(out, "read as text: {}", text.join(", "))?;
    }
    let kinds: Vec<String> = s
        .symbols_by_kind
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    writeln!(out, "symbols: {}", kinds.join(", "))?;
    writeln!(out, "skipped: {}", counts(&s.skipped_by_reason))?;
    writeln!(out, "files with parse errors: {}", s.files_with_diagnostics)?;
    if let Some(g) = &m.parts.graph {
        let r = &g.references;
        writeln!(
            out,
            "graph: {} references, {:.1}% resolved by rules, {:.1}% name-matched, {:.1}% external, {:.1}% unresolved; {} files resolved, {}{} reused ({:.2}s)",
            r.total,
            r.percent(r.rules),
            r.percent(r.name_matched),
            r.percent(r.external),
            r.percent(r.unresolved),
            g.update.files_resolved,
            match g.update.files_moved {
                0 => String::new(),
                n => format!("{n} with lines moved, "),
            },
            g.update.files_copied,
            g.total_ms as f64 / 1000.0
        )?;
    }
    writeln!(
        out,
        "index: {} (generation {})",
        r.index_dir.display(),
        m.generation
    )
}

/// Why a build indexed no code, when it did not: an empty tree, only unsupported files, or
/// files skipped for other reasons.
fn nothing_indexed(out: &mut impl Write, s: &crate::index::Summary) -> io::Result<()> {
    let as_text: u64 = s
        .by_language
        .iter()
        .filter(|(l, _)| crate::lang::text_kind(l).is_some())
        .map(|(_, x)| x.files)
        .sum();
    if s.files != as_text {
        return Ok(());
    }
    let unsupported: Vec<String> = s
        .skipped_by_reason
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    let mut why = match unsupported.is_empty() {
        true => "the tree is empty or everything in it is ignored".to_string(),
        false => format!("skipped: {}", unsupported.join(", ")),
    };
    if as_text > 0 {
        why.push_str(&format!("; {as_text} files read as text only"));
    }
    // Only unsupported files (or none) is a tree Kenning cannot read; files skipped for
    // other reasons (too large, a parse bound) are said as such.
    let only_unsupported = s.skipped_by_reason.keys().all(|k| k == "unsupported-language");
    match only_unsupported {
        true => writeln!(
            out,
            "no supported source files: no code was indexed ({why}); Kenning reads {}",
            crate::lang::LanguageRegistry::builtin()
                .map(|r| r
                    .languages()
                    .iter()
                    .map(|l| l.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "))
                .unwrap_or_default()
        )?,
        false => writeln!(
            out,
            "no code was indexed ({why}); `ken index status` lists each skipped file with its reason"
        )?,
    }
    Ok(())
}

/// Under a memory cap: whether the build held it, and else the phases that raised the peak
/// past it.
fn memory_against_cap(out: &mut impl Write, st: &crate::index::BuildStats, cap: u64) -> io::Result<()> {
    // The peaks are the process's mark at each phase's end: the phases that raised it
    // past the cap are those where it rose above it.
    let mut before = 0u64;
    let mut over: Vec<String> = Vec::new();
    for phase in [
        "checkpoints",
        "walk",
        "parse",
        "assemble",
        "lexical",
        "graph",
        "vectors",
        "history",
    ] {
        let Some(&mib) = st.phases_peak_mib.get(phase) else {
            continue;
        };
        if mib > cap && mib > before {
            over.push(format!("{phase} (to {mib} MiB)"));
        }
        before = before.max(mib);
    }
    let whose = match st.max_memory_from {
        Some(crate::index::CapSource::Available) => " (three quarters of the memory available)",
        _ => "",
    };
    match over.is_empty() {
        true => writeln!(out, "memory: within the cap of {cap} MiB{whose}")?,
        false => writeln!(
            out,
            "memory: over the cap of {cap} MiB{whose}, raised by {} (the symbols and graph a build holds grow with the tree: a larger cap, or fewer threads)",
            over.join(", ")
        )?,
    }
    Ok(())
}

fn counts(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per part: what it holds.
fn parts(out: &mut impl Write, parts: &crate::index::GenerationParts) -> io::Result<()> {
    writeln!(out, "\nparts:")?;
    for line in parts.describe() {
        writeln!(out, "  {line}")?;
    }
    Ok(())
}

pub fn status(out: &mut impl Write, v: &IndexStatusResponse, details: bool) -> io::Result<()> {
    let s = &v.summary;
    writeln!(
        out,
        "index {} (generation {}, built {} ago by ken {})",
        v.index_dir,
        v.generation,
        age(v.age_secs),
        v.ken_version
    )?;
    writeln!(out, "{} files, {} lines, {} bytes", s.files, s.lines, s.bytes)?;
    if v.last_build.pending > 0 {
        writeln!(
            out,
            "a checkpoint of a first build: {} files not read yet; `ken index build` reads them, reusing the rest",
            v.last_build.pending
        )?;
    }
    if !v.last_build.deferred.is_empty() {
        writeln!(
            out,
            "not built yet (a first-stage build): {}; the next `ken index build` adds them",
            v.last_build.deferred.join(", ")
        )?;
    }
    writeln!(out, "\nfiles by language:")?;
    for (l, x) in &s.by_language {
        let how = match crate::lang::text_kind(l) {
            Some(k) => format!("  (as text: {})", k.as_str()),
            None => String::new(),
        };
        writeln!(out, "  {l:<16} {:>8} files {:>10} lines{how}", x.files, x.lines)?;
    }
    not_read(out, s, details)?;
    writeln!(out, "\nsymbols by kind:")?;
    for (k, n) in &s.symbols_by_kind {
        writeln!(out, "  {k:<12} {n:>8}")?;
    }
    writeln!(
        out,
        "  {:<12} {:>8}\n  {:<12} {:>8}",
        "references", s.references, "imports", s.imports
    )?;
    skipped(out, v, details)?;
    parts(out, &v.parts)?;
    parse_errors(out, v, details)?;
    working_tree(out, &v.working_tree, details)?;
    Ok(())
}

/// Files no language reads, by extension (the ten most common unless `details`).
fn not_read(out: &mut impl Write, s: &crate::index::Summary, details: bool) -> io::Result<()> {
    if !s.unsupported_by_extension.is_empty() {
        let mut v: Vec<(&String, &u64)> = s.unsupported_by_extension.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let total: u64 = v.iter().map(|(_, n)| **n).sum();
        writeln!(out, "\nnot read ({total} files no language reads), by extension:")?;
        let shown = if details { v.len() } else { v.len().min(10) };
        for (ext, n) in &v[..shown] {
            let ext = match ext.as_str() {
                "" => "(none)".to_string(),
                e => format!(".{e}"),
            };
            writeln!(out, "  {ext:<12} {n:>8} files")?;
        }
        if shown < v.len() {
            writeln!(
                out,
                "  ... {} more extensions (--details lists all)",
                v.len() - shown
            )?;
        }
    }
    Ok(())
}

/// Skipped files with their reasons (ten unless `details`).
fn skipped(out: &mut impl Write, v: &IndexStatusResponse, details: bool) -> io::Result<()> {
    let s = &v.summary;
    writeln!(out, "\nskipped: {}", counts(&s.skipped_by_reason))?;
    let shown = if details {
        v.skipped.len()
    } else {
        v.skipped.len().min(10)
    };
    for f in &v.skipped[..shown] {
        writeln!(
            out,
            "  {:<20} {}{}",
            f.reason.as_str(),
            f.path,
            f.detail.as_deref().map(|d| format!(" ({d})")).unwrap_or_default()
        )?;
    }
    let skipped_total: u64 = s.skipped_by_reason.values().sum();
    if (shown as u64) < skipped_total {
        writeln!(
            out,
            "  ... {} more (--details lists all)",
            skipped_total - shown as u64
        )?;
    }
    Ok(())
}

/// Files with parse errors, each error's line and message (ten files unless `details`).
fn parse_errors(out: &mut impl Write, v: &IndexStatusResponse, details: bool) -> io::Result<()> {
    let s = &v.summary;
    writeln!(out, "\nfiles with parse errors: {}", s.files_with_diagnostics)?;
    let shown = if details {
        v.diagnostics.len()
    } else {
        v.diagnostics.len().min(10)
    };
    for f in &v.diagnostics[..shown] {
        for d in &f.diagnostics {
            writeln!(out, "  {}:{}: {}", f.path, d.line, d.message)?;
        }
    }
    if (shown as u64) < s.files_with_diagnostics {
        writeln!(
            out,
            "  ... {} more (--details lists all)",
            s.files_with_diagnostics - shown as u64
        )?;
    }
    Ok(())
}

/// The working tree against the index: up to date, or what changed since (twenty of each
/// unless `details`).
fn working_tree(out: &mut impl Write, wt: &crate::index::WorkingTreeDiff, details: bool) -> io::Result<()> {
    if wt.is_clean() {
        writeln!(out, "\nworking tree: up to date with the index")?;
    } else {
        writeln!(
            out,
            "\nworking tree: {} changed, {} added, {} removed since the build (run `ken index build`)",
            wt.changed.len(),
            wt.added.len(),
            wt.removed.len()
        )?;
        for (tag, list) in [
            ("changed", &wt.changed),
            ("added", &wt.added),
            ("removed", &wt.removed),
        ] {
            let n = if details { list.len() } else { list.len().min(20) };
            for p in &list[..n] {
                writeln!(out, "  {tag:<8} {p}")?;
            }
            if n < list.len() {
                writeln!(out, "  {tag:<8} ... {} more", list.len() - n)?;
            }
        }
    }
    Ok(())
}

fn age(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86_400),
    }
}

pub fn symbol_hits(out: &mut impl Write, hits: &[SymbolHit], total: usize) -> io::Result<()> {
    for h in hits {
        writeln!(
            out,
            "{:<9} {}  {}:{}",
            h.kind.as_str(),
            h.qualified_name,
            h.path,
            h.line
        )?;
        if !h.signature.is_empty() {
            writeln!(out, "          {}", h.signature)?;
        }
    }
    if total > hits.len() {
        writeln!(out, "... {} more (--limit)", total - hits.len())?;
    }
    Ok(())
}

/// Coverage goes to stderr so stdout stays pure results; an empty answer always says why.
pub fn coverage_note(c: &Coverage, empty: bool, query: &str) {
    let stale = match c.stale {
        Some(0) => "index up to date".to_string(),
        Some(n) => format!("{n} files changed since the build; run `ken index build`"),
        None => "staleness unknown".to_string(),
    };
    if empty {
        eprintln!(
            "no definition matches {query:?} ({} files indexed, {} skipped, {} with parse errors; {stale})",
            c.files_indexed, c.files_skipped, c.files_with_errors
        );
    } else if c.stale.unwrap_or(0) > 0 {
        eprintln!("note: {stale}");
    }
    not_built_note(c);
}

/// A first-stage generation answers without the parts it left for the next build, a
/// checkpoint without the files it has not read.
pub fn not_built_note(c: &Coverage) {
    if c.not_read_yet > 0 {
        eprintln!(
            "note: {} files not read yet (a first build's checkpoint); `ken index build` reads them",
            c.not_read_yet
        );
    }
    if !c.not_built_yet.is_empty() {
        eprintln!(
            "note: answered without the {} part(s), not built yet; `ken index build` adds them",
            c.not_built_yet.join(", ")
        );
    }
}

pub fn line_matches(out: &mut impl Write, matches: &[LineMatch]) -> io::Result<()> {
    for m in matches {
        writeln!(out, "{}:{}:{}", m.path, m.line, m.text)?;
    }
    Ok(())
}

fn hit_line(out: &mut impl Write, h: &SearchHit) -> io::Result<()> {
    match h.grain {
        Grain::File => writeln!(out, "{}:{}  file  ({:.1})", h.path, h.line, h.score)?,
        Grain::Symbol => writeln!(
            out,
            "{}:{}  {}  {}  ({:.1})",
            h.path,
            h.line,
            h.kind.as_deref().unwrap_or("symbol"),
            h.qualified_name.as_deref().unwrap_or(""),
            h.score
        )?,
    }
    if let Some(s) = &h.snippet {
        for (i, l) in s.text.lines().enumerate() {
            writeln!(
                out,
                "    {}{}",
                if i == 0 {
                    format!("{}: ", s.line)
                } else {
                    "   ".into()
                },
                l.trim()
            )?;
        }
    }
    Ok(())
}

pub fn search_response(out: &mut impl Write, r: &SearchResponse) -> io::Result<()> {
    match r.mode {
        SearchMode::Literal | SearchMode::Regex => line_matches(out, &r.matches),
        SearchMode::Semantic => {
            for h in &r.chunks {
                writeln!(
                    out,
                    "{}:{}-{}  {}  ({:.3})",
                    h.path,
                    h.start_line,
                    h.end_line,
                    h.symbol.as_deref().unwrap_or("-"),
                    h.score
                )?;
            }
            Ok(())
        }
        SearchMode::Hybrid => {
            let rank = |r: Option<usize>| r.map_or("-".to_string(), |r| r.to_string());
            for f in &r.files {
                let lines = match (&f.best, f.lines) {
                    (Some(b), _) if !f.defines_query => format!(":{}", b.line),
                    (_, Some((s, e))) => format!(":{s}-{e}"),
                    _ => String::new(),
                };
                let why = match f.defines_query {
                    true => "defines it".to_string(),
                    false => format!(
                        "{:.4}; lexical #{}, semantic #{}",
                        f.score,
                        rank(f.lexical_rank),
                        rank(f.semantic_rank)
                    ),
                };
                if f.chunks.is_empty() {
                    writeln!(
                        out,
                        "{}{lines}  {}  ({why})",
                        f.path,
                        f.symbol.as_deref().unwrap_or("-")
                    )?;
                    continue;
                }
                // The file's best span on its line, the others under it.
                for (i, c) in f.chunks.iter().enumerate() {
                    let name = c.symbol.as_deref().unwrap_or("-");
                    match i {
                        0 => writeln!(out, "{}:{}-{}  {name}  ({why})", f.path, c.start_line, c.end_line)?,
                        _ => writeln!(out, "    :{}-{}  {name}", c.start_line, c.end_line)?,
                    }
                }
            }
            Ok(())
        }
        SearchMode::Files => {
            for f in &r.files {
                writeln!(out, "{}  ({:.1})", f.path, f.score)?;
                if let Some(b) = &f.best
                    && let Some(q) = &b.qualified_name
                {
                    writeln!(out, "    best: {} {}:{}", q, b.path, b.line)?;
                }
            }
            Ok(())
        }
        SearchMode::Lexical | SearchMode::Symbols => {
            for h in &r.hits {
                hit_line(out, h)?;
            }
            Ok(())
        }
    }
}

pub fn search_coverage_note(c: &Coverage, empty: bool) {
    let stale = match c.stale {
        Some(0) | None => String::new(),
        Some(n) => format!("; {n} files changed since the build, run `ken index build`"),
    };
    if empty {
        eprintln!(
            "no match ({} files indexed, {} skipped, {} with parse errors{stale})",
            c.files_indexed, c.files_skipped, c.files_with_errors
        );
    } else if !stale.is_empty() {
        eprintln!("note: results may be stale{stale}");
    }
    not_built_note(c);
}
