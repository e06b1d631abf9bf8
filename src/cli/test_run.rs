//! `ken impact --run`: the commands of the tests that must run, each through `ken exec` (its
//! gate, checkpoint, sandbox and audit log, session `impact`), the runner's output streamed to
//! stderr as it comes; what passed, what failed with the end of its output, and which likely
//! tests were not run.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context as _, Result};
use serde::Serialize;

use crate::impact::Impact;

/// Characters of a failed command's output kept for the report.
const OUTPUT_TAIL: usize = 4000;
/// `ken exec`'s exit code for a command the gate refused.
const DENIED: i32 = 126;

/// What `--run` did.
#[derive(Debug, Serialize)]
pub struct TestRun {
    pub commands: Vec<CommandRun>,
    pub passed: usize,
    pub failed: usize,
    /// Commands the gate refused (they did not run).
    pub refused: usize,
    /// The likely tests (history, names, suites) left out of the run.
    pub not_run: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct CommandRun {
    pub command: String,
    /// `passed`, `failed` or `refused`.
    pub outcome: &'static str,
    pub status: Option<i32>,
    pub duration_ms: u64,
    /// The end of the runner's output, for a command that did not pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
}

impl TestRun {
    pub fn all_passed(&self) -> bool {
        self.failed == 0 && self.refused == 0
    }
}

/// Runs the must-run commands of `impact` in `root`, one after another. Temporary files go
/// under `scratch` (inside the workspace: the sandbox keeps the rest of the disk read-only).
pub fn run_tests(impact: &Impact, root: &Path, scratch: &Path, timeout_s: f64) -> Result<TestRun> {
    std::fs::create_dir_all(scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let ken = std::env::current_exe().context("finding the ken binary")?;
    let total = impact.must_run_commands.len();
    let mut commands = Vec::with_capacity(total);
    for (i, command) in impact.must_run_commands.iter().enumerate() {
        eprintln!("ken impact --run: [{}/{total}] {command}", i + 1);
        commands.push(run_one(&ken, command, root, scratch, timeout_s)?);
    }
    let count = |o: &str| commands.iter().filter(|c: &&CommandRun| c.outcome == o).count();
    let not_run = impact
        .tests
        .iter()
        .filter(|t| !t.must_run)
        .map(|t| t.command.clone().unwrap_or_else(|| t.path.clone()))
        .collect();
    Ok(TestRun {
        passed: count("passed"),
        failed: count("failed"),
        refused: count("refused"),
        commands,
        not_run,
    })
}

/// One command through `ken exec -- sh -c COMMAND`, its output echoed to stderr and its end kept.
fn run_one(ken: &Path, command: &str, root: &Path, scratch: &Path, timeout_s: f64) -> Result<CommandRun> {
    let t0 = Instant::now();
    let mut child = Command::new(ken)
        .args([
            "exec",
            "--session",
            "impact",
            "--timeout",
            &timeout_s.to_string(),
            "--",
        ])
        .args(["sh", "-c", command])
        .current_dir(root)
        .env("TMPDIR", scratch)
        .env("GOCACHE", scratch.join("go-build"))
        .env("GOTMPDIR", scratch)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting `ken exec` for {command}"))?;
    let kept = Arc::new(Mutex::new(String::new()));
    let readers: Vec<_> = [
        child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
        child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|stream| {
        let kept = kept.clone();
        std::thread::spawn(move || echo(stream, &kept))
    })
    .collect();
    let status = child.wait().with_context(|| format!("waiting for {command}"))?;
    for r in readers {
        let _ = r.join();
    }
    let code = status.code();
    let outcome = match code {
        Some(0) => "passed",
        Some(DENIED) => "refused",
        _ => "failed",
    };
    let output_tail = (outcome != "passed").then(|| {
        let text = kept.lock().map(|t| t.clone()).unwrap_or_default();
        let skip = text.chars().count().saturating_sub(OUTPUT_TAIL);
        text.chars().skip(skip).collect()
    });
    Ok(CommandRun {
        command: command.to_string(),
        outcome,
        status: code,
        duration_ms: t0.elapsed().as_millis() as u64,
        output_tail,
    })
}

/// Copies `stream` to stderr as it comes, keeping the last [`OUTPUT_TAIL`] characters or so.
fn echo(mut stream: Box<dyn Read + Send>, kept: &Mutex<String>) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        let _ = std::io::stderr().write_all(&buf[..n]);
        if let Ok(mut k) = kept.lock() {
            k.push_str(&String::from_utf8_lossy(&buf[..n]));
            if k.len() > 4 * OUTPUT_TAIL {
                let cut = k.len() - 2 * OUTPUT_TAIL;
                let at = (cut..k.len()).find(|&i| k.is_char_boundary(i)).unwrap_or(0);
                k.drain(..at);
            }
        }
    }
}

/// The run for a person: each command's outcome, a failure's output, what was left out.
pub fn render(out: &mut impl Write, run: &TestRun) -> std::io::Result<()> {
    writeln!(
        out,
        "\nRan {} command(s) of the tests that must run: {} passed, {} failed, {} refused",
        run.commands.len(),
        run.passed,
        run.failed,
        run.refused
    )?;
    for c in &run.commands {
        writeln!(
            out,
            "  {:<7} {}  ({:.1} s)",
            c.outcome,
            c.command,
            c.duration_ms as f64 / 1000.0
        )?;
        if let Some(tail) = &c.output_tail {
            for line in tail.lines().rev().take(20).collect::<Vec<_>>().into_iter().rev() {
                writeln!(out, "          | {line}")?;
            }
        }
    }
    if !run.not_run.is_empty() {
        writeln!(
            out,
            "Not run ({} likely): {}",
            run.not_run.len(),
            run.not_run.join(", ")
        )?;
    }
    Ok(())
}
