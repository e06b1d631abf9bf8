//! `ken context`: the ranked, packed context for a task, as markdown or JSON.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context as _, Result};

use super::args::{ContextArgs, ContextFormat};
use super::commands::{locate, read_task, stored_embedder};
use crate::context::{ContextPack, ContextRanker, Ranking, Signals, Weights, pack};
use crate::index::{Coverage, IndexSnapshot, WorkingTreeDiff};

pub fn context(a: ContextArgs) -> Result<ExitCode> {
    let task = read_task(&a.task, a.query_file.as_deref())?;
    let (root, dir) = locate(a.repo.as_deref(), a.location.index_dir.clone())?;
    let snapshot = IndexSnapshot::open(&dir)?;
    let signals = match &a.signals {
        Some(list) => Signals::parse(list).map_err(|e| anyhow::anyhow!("--signals: {e}"))?,
        None => Signals::default(),
    };
    let weights = match std::env::var("KEN_CONTEXT_WEIGHTS") {
        Ok(spec) => Weights::default().with_overrides(&spec),
        Err(_) => Weights::default(),
    };
    let semantic = match signals.semantic && snapshot.manifest.parts.contains_key("vectors") {
        true => Some(snapshot.semantic_with(stored_embedder(&snapshot)?)),
        false => None,
    };
    let t0 = std::time::Instant::now();
    let ranker = ContextRanker::new(&snapshot, &root, semantic, signals, weights);
    let ranking = ranker.rank(&task).context("ranking the task's context")?;
    let packed = pack(&ranking, &snapshot, &root, ranker.graph(), a.budget).context("packing the context")?;
    let elapsed_ms = t0.elapsed().as_millis() as u64;
    let diff = WorkingTreeDiff::quick(&root, &snapshot);
    let coverage = Coverage::of(&snapshot, Some(&diff));
    let mut out = std::io::stdout().lock();
    match a.format {
        ContextFormat::Json => {
            let files: Vec<_> = ranking.files.iter().take(a.files).collect();
            let v = serde_json::json!({
                "task": task,
                "files": files,
                "symbols": ranking.symbols,
                "pack": packed,
                "truncated": packed.truncated,
                "signals": { "used": ranking.signals_used, "missing": ranking.signals_missing },
                "coverage": coverage,
                "elapsed_ms": elapsed_ms,
            });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        }
        ContextFormat::Markdown => markdown(&mut out, &task, &ranking, &packed, &coverage, a.files)?,
    }
    for m in &ranking.signals_missing {
        eprintln!("note: signal unavailable: {m}");
    }
    Ok(if ranking.files.is_empty() {
        eprintln!(
            "nothing relevant found ({} files indexed, {} skipped, {} with parse errors)",
            coverage.files_indexed, coverage.files_skipped, coverage.files_with_errors
        );
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn markdown(
    out: &mut impl Write,
    task: &str,
    ranking: &Ranking,
    packed: &ContextPack,
    coverage: &Coverage,
    files: usize,
) -> Result<()> {
    let title: String = task.lines().find(|l| !l.trim().is_empty()).unwrap_or("").chars().take(100).collect();
    writeln!(out, "# Context: {}\n", title.trim())?;
    let stale = match coverage.stale {
        Some(0) => "up to date".to_string(),
        Some(n) => format!("{n} files changed since the build"),
        None => "staleness unknown".to_string(),
    };
    writeln!(
        out,
        "Index: {} files indexed, {} skipped, {} with parse errors, {stale}. Signals: {}. Packed {} of {} tokens{}.\n",
        coverage.files_indexed,
        coverage.files_skipped,
        coverage.files_with_errors,
        ranking.signals_used.join(", "),
        packed.tokens,
        packed.budget,
        if packed.truncated { " (truncated: see Left out)" } else { "" }
    )?;
    writeln!(out, "## Files\n")?;
    for (i, f) in ranking.files.iter().take(files).enumerate() {
        writeln!(out, "{}. `{}` ({:.3}; {})", i + 1, f.path, f.score, f.why.summary())?;
    }
    writeln!(out, "\n## Code\n")?;
    write!(out, "{}", packed.text)?;
    Ok(())
}
