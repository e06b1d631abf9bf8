//! `ken audit verify|show`: an audit log checked line by line, or rendered for a person.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};

use super::args::AuditArgs;
use super::shared::print_json;
use crate::exec::verify_audit_log;

pub fn verify(a: AuditArgs) -> Result<ExitCode> {
    let report = verify_audit_log(&a.file)?;
    if a.json {
        print_json(&report)?;
    } else {
        let mut out = std::io::stdout().lock();
        match &report.first_bad {
            None => writeln!(
                out,
                "{}: intact, {} line(s), head {}{}",
                report.path,
                report.lines,
                report.head,
                if report.torn {
                    "; the final line is torn (cut short while being written, as by a crash)"
                } else {
                    ""
                }
            )?,
            Some(bad) => writeln!(
                out,
                "{}: line {} is bad: {}; the {} line(s) before it are intact",
                report.path, bad.line, bad.reason, report.lines
            )?,
        }
        for p in &report.predecessors {
            match (&p.report, &p.error) {
                (Some(r), _) => match &r.first_bad {
                    Some(bad) => writeln!(
                        out,
                        "{}: replaced by the log above, kept as evidence: line {} is bad: {}; the {} line(s) before it are intact",
                        p.path, bad.line, bad.reason, r.lines
                    )?,
                    None => writeln!(
                        out,
                        "{}: replaced by the log above, which recorded line {} as bad ({}), now verifies intact: it was changed since",
                        p.path, p.recorded.line, p.recorded.reason
                    )?,
                },
                (None, error) => writeln!(
                    out,
                    "{}: replaced by the log above (line {} was bad: {}), cannot be read now: {}",
                    p.path,
                    p.recorded.line,
                    p.recorded.reason,
                    error.as_deref().unwrap_or("unknown error")
                )?,
            }
        }
    }
    Ok(match report.intact() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}

pub fn show(a: AuditArgs) -> Result<ExitCode> {
    let report = verify_audit_log(&a.file)?;
    let text = std::fs::read_to_string(&a.file).with_context(|| format!("reading {}", a.file.display()))?;
    let mut out = std::io::stdout().lock();
    let intact = usize::try_from(report.lines).unwrap_or(usize::MAX);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .take(intact)
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if a.json {
        print_json(&serde_json::json!({ "report": report, "lines": lines }))?;
    } else {
        for v in &lines {
            let event = &v["event"];
            let kind = event.get("kind").and_then(|k| k.as_str()).unwrap_or("event");
            let mut fields: Vec<String> = event
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| k.as_str() != "kind")
                .map(|(k, val)| match val {
                    serde_json::Value::String(s) => format!("{k}={s}"),
                    other => format!("{k}={other}"),
                })
                .collect();
            fields.sort();
            writeln!(
                out,
                "{:>5}  {}  {:<10} {}",
                v["seq"],
                v["ts_ms"],
                kind,
                fields.join("  ")
            )?;
        }
        match &report.first_bad {
            Some(bad) => writeln!(out, "-- line {} is bad: {}; not shown", bad.line, bad.reason)?,
            None if report.torn => writeln!(out, "-- the final line is torn (a crash while writing)")?,
            None => writeln!(out, "-- {} line(s), intact, head {}", report.lines, report.head)?,
        }
    }
    Ok(match report.intact() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}
