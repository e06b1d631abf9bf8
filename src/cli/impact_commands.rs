//! `ken impact`: the change from git or a patch file, as a request to the query layer; the
//! blast radius rendered for people or printed as JSON.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context as _, Result};

use super::args::ImpactArgs;
use super::shared::{cli_error, open, print_json};
use crate::api::{ApiError, ImpactRequest};
use crate::exec::{Decision, EditPolicy, SandboxMode};
use crate::impact::Impact;

#[derive(serde::Serialize)]
struct WithApproval<'a> {
    #[serde(flatten)]
    response: &'a crate::api::ImpactResponse,
    #[serde(skip_serializing_if = "Option::is_none")]
    approval: Option<&'a crate::exec::EditVerdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    run: Option<&'a super::test_run::TestRun>,
}

/// The most of a patch `ken impact` reads: a diff past it is refused, never read whole.
const MAX_PATCH_BYTES: u64 = 64 << 20;

/// The patch at `p` (`-`: stdin), read through [`MAX_PATCH_BYTES`].
fn read_patch(p: &std::path::Path) -> Result<String> {
    let (bytes, more) = super::shared::read_input(p, MAX_PATCH_BYTES, "the patch", "--patch")?;
    if more {
        anyhow::bail!(
            "--patch {}: larger than the {} MiB bound on a patch",
            p.display(),
            MAX_PATCH_BYTES >> 20
        );
    }
    String::from_utf8(bytes).with_context(|| format!("--patch {}: not UTF-8 text", p.display()))
}

pub fn impact(a: ImpactArgs) -> Result<ExitCode> {
    let ws = open(a.repo.as_deref(), a.location.index_dir.clone())?;
    let patch = match &a.patch {
        None => None,
        Some(p) => Some(read_patch(p)?),
    };
    let r = ws
        .analysis()
        .impact(&ImpactRequest {
            patch,
            staged: a.staged,
            range: a.range.clone(),
            symbols: a.symbol.clone(),
            limit: None,
            max_tokens: None,
            cursor: None,
        })
        .map_err(|e| match e {
            // The request's `symbols` are the repeated `--symbol` flag here.
            ApiError::InvalidArgument { argument, message } if argument == "symbols" => {
                anyhow::anyhow!("--symbol: {message}")
            }
            e => cli_error(e),
        })?;
    let verdict = a.approval.map(|p| {
        let policy = super::exec_commands::approval_policy(p);
        EditPolicy::default().judge(&r.impact, policy, SandboxMode::WorkspaceWrite)
    });
    let run = match a.run {
        true => {
            let scratch = ws.index_dir().join("run");
            Some(super::test_run::run_tests(
                &r.impact,
                ws.root(),
                &scratch,
                a.run_timeout,
            )?)
        }
        false => None,
    };
    if a.json {
        // Serialized straight from the typed values, so numbers print as the server's do.
        print_json(&WithApproval {
            response: &r,
            approval: verdict.as_ref(),
            run: run.as_ref(),
        })?;
    } else {
        let mut out = std::io::stdout().lock();
        render(&mut out, &r.impact, a.limit)?;
        if let Some(run) = &run {
            super::test_run::render(&mut out, run)?;
        }
        if let Some(v) = &verdict {
            let word = match &v.decision {
                Decision::Allow => "allow".to_string(),
                Decision::Ask { reason } => format!("ask: {reason}"),
                Decision::Deny { reason } => format!("deny: {reason}"),
            };
            writeln!(out, "approval: {word} [{}]", v.class.as_str())?;
        }
    }
    for n in &r.notes {
        eprintln!("note: {n}");
    }
    if r.coverage.stale.unwrap_or(0) > 0 {
        eprintln!(
            "note: {} files changed since the index was built; dependents come from the index",
            r.coverage.stale.unwrap_or(0)
        );
    }
    Ok(match run.is_none_or(|r| r.all_passed()) {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}
fn render(out: &mut impl Write, i: &Impact, limit: usize) -> Result<()> {
    render_changed(out, i)?;
    render_affected(out, i, limit)?;
    render_reached(out, i)?;
    render_tests(out, i, limit)?;
    writeln!(out, "\nRisk: {} — {}", i.risk.level, i.risk.reasons.join("; "))?;
    Ok(())
}

/// The changed definitions.
fn render_changed(out: &mut impl Write, i: &Impact) -> Result<()> {
    writeln!(
        out,
        "Changed: {} definitions in {} files",
        i.changed.len(),
        i.changed_files.len()
    )?;
    for c in &i.changed {
        let change = serde_json::to_value(c.change)?.as_str().unwrap_or("").to_string();
        writeln!(
            out,
            "  {change:<9}  {}  {}:{}-{}{}",
            c.qualified_name,
            c.path,
            c.start_line,
            c.end_line,
            if c.public { "  (public)" } else { "" }
        )?;
    }
    Ok(())
}

/// The affected definitions, best first, each with the chain that reaches it.
fn render_affected(out: &mut impl Write, i: &Impact, limit: usize) -> Result<()> {
    writeln!(
        out,
        "\nAffected: {} direct, {} transitive dependents in {} files",
        i.direct_dependents,
        i.transitive_dependents,
        i.affected_files.len()
    )?;
    for a in i.affected.iter().take(limit) {
        // From the change to this definition: `changed <- caller (provenance confidence) <- ...`.
        let mut chain = a.via.first().map(|s| s.to.clone()).unwrap_or_default();
        for s in &a.via {
            let how = s.provenance.as_deref().unwrap_or(s.edge.as_str());
            chain.push_str(&format!(
                " <- {} ({} {} {:.2})",
                s.from,
                s.edge.as_str(),
                how,
                s.confidence
            ));
        }
        writeln!(
            out,
            "  {:.2}  {}{}  {}:{}{}\n        {chain}",
            a.score,
            a.qualified_name,
            if a.is_test { "  [test]" } else { "" },
            a.path,
            a.line,
            if a.direct { "  (direct)" } else { "" },
        )?;
    }
    if i.affected.len() > limit {
        writeln!(out, "  ... {} more (--limit, --json)", i.affected.len() - limit)?;
    }
    Ok(())
}

/// The public API and the entry points the change reaches.
fn render_reached(out: &mut impl Write, i: &Impact) -> Result<()> {
    if !i.public_api.is_empty() {
        writeln!(
            out,
            "\nPublic API touched or reached: {}",
            i.public_api
                .iter()
                .take(10)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    if !i.entry_points.is_empty() {
        writeln!(out, "\nEntry points reached:")?;
        for e in &i.entry_points {
            writeln!(out, "  {}: {} at {}:{}", e.kind, e.name, e.path, e.line)?;
        }
    }
    Ok(())
}

/// The tests to run and the commands that run them.
fn render_tests(out: &mut impl Write, i: &Impact, limit: usize) -> Result<()> {
    writeln!(out, "\nTests to run ({}):", i.tests.len())?;
    for t in i.tests.iter().take(limit) {
        writeln!(
            out,
            "  {}  ({}: {})",
            t.command.as_deref().unwrap_or(&t.path),
            t.found_by,
            if t.must_run { "must run" } else { "likely" }
        )?;
    }
    if !i.test_commands.is_empty() {
        writeln!(out, "\nRun:\n  {}", i.test_commands.join("\n  "))?;
    }
    Ok(())
}
