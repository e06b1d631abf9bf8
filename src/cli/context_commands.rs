//! `ken context`, `ken ask` and `ken overview`: the ranked, packed context for a task, an
//! answer with checked citations, and a repository map; as markdown or JSON.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context as _, Result};

use super::args::{AskArgs, ContextArgs, ContextFormat, OverviewArgs};
use super::commands::{locate, read_task, stored_embedder};
use crate::agent::providers::{ChatMessage, ChatModel, OpenAiChat};
use crate::context::{
    ContextPack, ContextRanker, Overview, Ranking, Signals, Weights, find_citations, mark_unverified, pack,
};
use crate::index::{Coverage, IndexError, IndexSnapshot, WorkingTreeDiff};

/// A task's ranking and pack, with the graph it used.
struct Built {
    ranking: Ranking,
    packed: ContextPack,
    overview: Option<Overview>,
    coverage: Coverage,
    elapsed_ms: u64,
}

fn build_context(
    snapshot: &IndexSnapshot,
    root: &std::path::Path,
    task: &str,
    signals: Signals,
    budget: usize,
    with_overview: bool,
) -> Result<Built> {
    let weights = match std::env::var("KEN_CONTEXT_WEIGHTS") {
        Ok(spec) => Weights::default().with_overrides(&spec),
        Err(_) => Weights::default(),
    };
    let t0 = std::time::Instant::now();
    // The two big loads side by side: the semantic part (HNSW graph) and the code graph. An
    // unavailable semantic part (not built, model unreachable) drops the signal, noted.
    let (semantic, graph) = std::thread::scope(|s| {
        let semantic = s.spawn(|| {
            signals.semantic.then(|| match stored_embedder(snapshot) {
                Ok(e) => snapshot.semantic_with(e),
                Err(e) => Err(IndexError::Vector(format!("{e:#}"))),
            })
        });
        let graph = snapshot.graph();
        let semantic = semantic.join().unwrap_or_else(|_| {
            Some(Err(IndexError::Vector(
                "opening the semantic part panicked".into(),
            )))
        });
        (semantic, graph)
    });
    let ranker = ContextRanker::new(snapshot, root, semantic, Some(graph), signals, weights);
    let ranking = ranker.rank(task).context("ranking the task's context")?;
    let packed = pack(&ranking, snapshot, root, ranker.graph(), budget).context("packing the context")?;
    let overview = with_overview.then(|| Overview::build(snapshot, ranker.graph()));
    let elapsed_ms = t0.elapsed().as_millis() as u64;
    let diff = WorkingTreeDiff::quick(root, snapshot);
    let coverage = Coverage::of(snapshot, Some(&diff));
    Ok(Built {
        ranking,
        packed,
        overview,
        coverage,
        elapsed_ms,
    })
}

pub fn context(a: ContextArgs) -> Result<ExitCode> {
    let task = read_task(&a.task, a.query_file.as_deref())?;
    let (root, dir) = locate(a.repo.as_deref(), a.location.index_dir.clone())?;
    let snapshot = IndexSnapshot::open(&dir)?;
    let signals = match &a.signals {
        Some(list) => Signals::parse(list).map_err(|e| anyhow::anyhow!("--signals: {e}"))?,
        None => Signals::default(),
    };
    let Built {
        ranking,
        packed,
        coverage,
        elapsed_ms,
        ..
    } = build_context(&snapshot, &root, &task, signals, a.budget, false)?;
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
    let title: String = task
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(100)
        .collect();
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
        if packed.truncated {
            " (truncated: see Left out)"
        } else {
            ""
        }
    )?;
    writeln!(out, "## Files\n")?;
    for (i, f) in ranking.files.iter().take(files).enumerate() {
        writeln!(
            out,
            "{}. `{}` ({:.3}; {})",
            i + 1,
            f.path,
            f.score,
            f.why.summary()
        )?;
    }
    writeln!(out, "\n## Code\n")?;
    write!(out, "{}", packed.text)?;
    Ok(())
}

/// Tokens of the overview given alongside an answer's context.
const ASK_OVERVIEW_BUDGET: usize = 700;

const ASK_SYSTEM: &str = "You answer questions about a code repository for a developer who is new to it. \
Use only the repository overview and code given. Cite the code you rely on as path:line or path:start-end, \
exactly as the headers of the code sections give them. If the code given does not answer the question, say so \
and name the files that look closest. Be concise.";

pub fn ask(a: AskArgs) -> Result<ExitCode> {
    let question = read_task(&a.question, a.query_file.as_deref())?;
    let (root, dir) = locate(a.repo.as_deref(), a.location.index_dir.clone())?;
    let snapshot = IndexSnapshot::open(&dir)?;
    let built = build_context(&snapshot, &root, &question, Signals::default(), a.budget, true)?;
    let overview_md = built
        .overview
        .as_ref()
        .map(|o| o.markdown(ASK_OVERVIEW_BUDGET))
        .unwrap_or_default();
    let model = OpenAiChat::from_env();
    let mut out = std::io::stdout().lock();
    let Some(model) = model else {
        eprintln!(
            "note: no model configured (set OPENAI_API_KEY and/or OPENAI_BASE_URL, KEN_MODEL): showing the relevant code and an overview"
        );
        match a.format {
            ContextFormat::Json => {
                let v = serde_json::json!({
                    "question": question, "answer": null, "model": null,
                    "files": built.ranking.files.iter().take(20).collect::<Vec<_>>(),
                    "symbols": built.ranking.symbols, "pack": built.packed, "overview": built.overview,
                    "coverage": built.coverage,
                });
                serde_json::to_writer_pretty(&mut out, &v)?;
                writeln!(out)?;
            }
            ContextFormat::Markdown => {
                writeln!(out, "{overview_md}")?;
                markdown(
                    &mut out,
                    &question,
                    &built.ranking,
                    &built.packed,
                    &built.coverage,
                    10,
                )?;
            }
        }
        return Ok(ExitCode::SUCCESS);
    };
    let prompt = format!(
        "Question: {question}\n\n{overview_md}\n## Code\n\n{}",
        built.packed.text
    );
    let answer = model
        .complete(&[ChatMessage::system(ASK_SYSTEM), ChatMessage::user(prompt)])
        .with_context(|| format!("asking {}", model.id()))?;
    let citations = find_citations(&answer, &snapshot);
    let answer = mark_unverified(&answer, &citations);
    let invalid = citations.iter().filter(|c| !c.valid).count();
    match a.format {
        ContextFormat::Json => {
            let v = serde_json::json!({
                "question": question, "answer": answer, "model": model.id(), "citations": citations,
                "files": built.ranking.files.iter().take(20).collect::<Vec<_>>(),
                "pack": { "tokens": built.packed.tokens, "budget": built.packed.budget, "truncated": built.packed.truncated,
                          "shown": built.packed.shown },
                "coverage": built.coverage,
            });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        }
        ContextFormat::Markdown => {
            writeln!(out, "{}\n", answer.trim_end())?;
            let valid: Vec<String> = citations
                .iter()
                .filter(|c| c.valid)
                .map(|c| match c.start_line == c.end_line {
                    true => format!("{}:{}", c.path, c.start_line),
                    false => format!("{}:{}-{}", c.path, c.start_line, c.end_line),
                })
                .collect();
            if !valid.is_empty() {
                writeln!(out, "Sources (checked against the index): {}", valid.join(", "))?;
            }
        }
    }
    if invalid > 0 {
        eprintln!("note: {invalid} citation(s) in the answer do not exist in the index; marked [unverified]");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn overview(a: OverviewArgs) -> Result<ExitCode> {
    let (root, dir) = locate(a.repo.as_deref(), a.location.index_dir.clone())?;
    let snapshot = IndexSnapshot::open(&dir)?;
    let graph = match snapshot.graph() {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!("note: no code graph ({e}): central modules, entry points and calls are left out");
            None
        }
    };
    let o = Overview::build(&snapshot, graph.as_ref());
    let diff = WorkingTreeDiff::quick(&root, &snapshot);
    let coverage = Coverage::of(&snapshot, Some(&diff));
    let mut out = std::io::stdout().lock();
    match a.format {
        ContextFormat::Json => {
            let v =
                serde_json::json!({ "overview": o, "markdown": o.markdown(a.budget), "coverage": coverage });
            serde_json::to_writer_pretty(&mut out, &v)?;
            writeln!(out)?;
        }
        ContextFormat::Markdown => write!(out, "{}", o.markdown(a.budget))?,
    }
    Ok(ExitCode::SUCCESS)
}
