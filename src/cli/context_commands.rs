//! `ken context`, `ken ask` and `ken overview`: requests to the query layer, as markdown or
//! the JSON a server returns.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;

use super::args::{AskArgs, ContextArgs, ContextFormat, OverviewArgs, RankFeaturesArgs};
use super::shared::{cli_error, open, print_json, read_task};
use crate::api::{AskRequest, ContextRequest, OverviewRequest};
use crate::context::ContextPack;
use crate::index::Coverage;
use crate::providers::RunBounds;
use crate::search::RankedFile;

pub fn context(a: ContextArgs) -> Result<ExitCode> {
    crate::api::prepare_for_a_query();
    let task = read_task(&a.task, a.query_file.as_deref())?;
    let ws = open(a.repo.as_deref(), a.location.index_dir.clone())?;
    let r = ws
        .analysis()
        .context(&ContextRequest {
            task,
            max_tokens: Some(a.budget),
            files: Some(a.files),
            symbols: Some(a.symbols),
            signals: a.signals.clone(),
            ranker: a.ranker.clone(),
            features: a.features.then_some(true),
        })
        .map_err(cli_error)?;
    match json_or(a.format, a.json) {
        ContextFormat::Json => print_json(&r)?,
        ContextFormat::Markdown => markdown(
            &mut std::io::stdout().lock(),
            &r.task,
            &r.files,
            &r.signals.used,
            &r.pack,
            &r.coverage,
        )?,
    }
    for m in &r.signals.missing {
        eprintln!("note: signal unavailable: {m}");
    }
    for n in &r.notes {
        eprintln!("note: {n}");
    }
    if r.files.is_empty() {
        eprintln!(
            "nothing relevant found ({} files indexed, {} skipped, {} with parse errors)",
            r.coverage.files_indexed, r.coverage.files_skipped, r.coverage.files_with_errors
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

pub fn rank_features(a: RankFeaturesArgs) -> Result<ExitCode> {
    use anyhow::Context as _;
    let text = crate::util::read_regular(&a.queries)
        .with_context(|| format!("cannot read --queries {}", a.queries.display()))?;
    let text = String::from_utf8_lossy(&text);
    let ws = open(a.repo.as_deref(), a.location.index_dir.clone())?;
    let analysis = ws.analysis();
    let mut out = std::io::stdout().lock();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let q: serde_json::Value = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not a JSON line", a.queries.display(), n + 1))?;
        let (Some(id), Some(query)) = (q.get("id"), q.get("query").and_then(|v| v.as_str())) else {
            anyhow::bail!("{}:{}: needs \"id\" and \"query\"", a.queries.display(), n + 1);
        };
        let t0 = std::time::Instant::now();
        let row = match analysis.ranking_features(query, !a.without_history) {
            Ok((r, kind)) => serde_json::json!({
                "id": id,
                "ms": t0.elapsed().as_secs_f64() * 1000.0,
                "kind": kind,
                "files": r.files.iter().filter(|f| f.features.is_some())
                    .map(|f| serde_json::json!({"path": f.path, "features": f.features}))
                    .collect::<Vec<_>>(),
            }),
            Err(e) => serde_json::json!({"id": id, "error": e.to_string()}),
        };
        writeln!(out, "{row}")?;
    }
    Ok(ExitCode::SUCCESS)
}

fn markdown(
    out: &mut impl Write,
    task: &str,
    files: &[RankedFile],
    signals: &[&str],
    packed: &ContextPack,
    coverage: &Coverage,
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
        signals.join(", "),
        packed.tokens,
        packed.budget,
        if packed.truncated {
            " (truncated: see Left out)"
        } else {
            ""
        }
    )?;
    writeln!(out, "## Files\n")?;
    for (i, f) in files.iter().enumerate() {
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

/// Ranked files shown with an answer (or without a model).
const ASK_FILES_SHOWN: usize = 10;

pub fn ask(a: AskArgs) -> Result<ExitCode> {
    // The question is one run: `--max-time` is the deadline of its model call, and Ctrl-C
    // cuts that call at once.
    let bounds = RunBounds::process();
    if let Some(secs) = a.max_time {
        bounds.set_deadline(Duration::from_secs(secs));
    }
    let question = read_task(&a.question, a.query_file.as_deref())?;
    let ws = open(a.repo.as_deref(), a.location.index_dir.clone())?;
    super::agent_commands::on_interrupt("ken ask", &bounds);
    let asked = ws.analysis().ask(&AskRequest {
        question,
        max_tokens: Some(a.budget),
    });
    let r = match asked {
        Ok(r) => r,
        Err(e) if bounds.is_cancelled() => {
            eprintln!("ken ask: cancelled: {e}");
            return Ok(ExitCode::from(130));
        }
        Err(e) if bounds.is_past_deadline() => {
            eprintln!(
                "ken ask: stopped at the deadline (--max-time {}): {e}",
                a.max_time.unwrap_or_default()
            );
            return Ok(ExitCode::from(124));
        }
        Err(e) => return Err(cli_error(e)),
    };
    for n in &r.notes {
        eprintln!("note: {n}");
    }
    if json_or(a.format, a.json) == ContextFormat::Json {
        print_json(&r)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::stdout().lock();
    match &r.answer {
        None => {
            // The answer's material first, the map of the repository after it.
            let files: Vec<RankedFile> = r.files.iter().take(ASK_FILES_SHOWN).cloned().collect();
            markdown(
                &mut out,
                &r.question,
                &files,
                &r.signals.used,
                &r.pack,
                &r.coverage,
            )?;
            writeln!(out, "\n{}", r.overview_markdown)?;
        }
        Some(answer) => {
            writeln!(out, "{}\n", answer.trim_end())?;
            let valid: Vec<String> = r
                .citations
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
    Ok(ExitCode::SUCCESS)
}

pub fn overview(a: OverviewArgs) -> Result<ExitCode> {
    let ws = open(a.repo.as_deref(), a.location.index_dir.clone())?;
    let r = ws
        .analysis()
        .overview(&OverviewRequest {
            max_tokens: Some(a.budget),
        })
        .map_err(cli_error)?;
    for n in &r.notes {
        eprintln!("note: {n}");
    }
    match json_or(a.format, a.json) {
        ContextFormat::Json => print_json(&r)?,
        ContextFormat::Markdown => write!(std::io::stdout().lock(), "{}", r.markdown)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `--json` is `--format json`, as on every other command.
fn json_or(format: ContextFormat, json: bool) -> ContextFormat {
    match json {
        true => ContextFormat::Json,
        false => format,
    }
}
