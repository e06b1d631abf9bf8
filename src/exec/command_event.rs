//! `CommandEvent`: what the audit log records for one command that went through the
//! [`super::CommandGate`]: the command, how it was judged and decided, the sandbox it ran in,
//! the checkpoint saved before it, and its result (output as byte counts, digests and an
//! excerpt, never whole).

use std::path::PathBuf;

use serde::Serialize;

use super::{ActionClass, Decision, LostFile, RunReport, SandboxMode};

#[derive(Serialize)]
pub struct CommandEvent {
    pub kind: &'static str,
    pub session: String,
    pub command: Vec<String>,
    pub cwd: PathBuf,
    pub class: ActionClass,
    pub parsed: bool,
    pub parts: Vec<String>,
    pub decision: Decision,
    pub decided_by: String,
    /// What a person who denied the command said.
    pub person_reason: Option<String>,
    pub allowed: bool,
    pub sandbox: SandboxSettings,
    pub result: Option<ExecResult>,
    /// The checkpoint saved before a command that may write (`ken exec --undo` restores it).
    pub checkpoint: Option<String>,
}

#[derive(Serialize)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    pub network: bool,
    pub workspace: PathBuf,
    pub timeout_s: f64,
    pub strict: bool,
}

#[derive(Serialize)]
pub struct ExecResult {
    pub status: i32,
    pub exit_code: Option<i32>,
    pub signal: Option<String>,
    pub killed_by: Option<String>,
    pub limits_hit: Vec<String>,
    pub duration_ms: u64,
    pub peak_memory_bytes: u64,
    pub stdout: StreamRecord,
    pub stderr: StreamRecord,
    pub degraded: Vec<String>,
    pub refused: Option<String>,
    /// `None` outside a git work tree.
    pub files_changed: Option<Vec<String>>,
    /// Files the checkpoint saved that the command deleted or overwrote; `None` when no
    /// checkpoint was saved (a command known to write nothing).
    pub files_lost: Option<Vec<LostFile>>,
}

#[derive(Serialize)]
pub struct StreamRecord {
    pub bytes: u64,
    pub blake3: String,
    pub excerpt: String,
}

const EXCERPT: usize = 2000;

impl ExecResult {
    pub fn of(
        r: &RunReport,
        files_changed: Option<Vec<String>>,
        files_lost: Option<Vec<LostFile>>,
    ) -> ExecResult {
        let stream = |c: &super::CapturedOutput| StreamRecord {
            bytes: c.total_bytes,
            blake3: c.blake3.clone(),
            excerpt: tail_chars(&c.text, EXCERPT),
        };
        ExecResult {
            status: r.status,
            exit_code: r.exit_code,
            signal: r.signal.clone(),
            killed_by: r.killed_by.clone(),
            limits_hit: r.limits_hit.clone(),
            duration_ms: r.duration_ms,
            peak_memory_bytes: r.peak_memory_bytes,
            stdout: stream(&r.stdout),
            stderr: stream(&r.stderr),
            degraded: r.degraded.clone(),
            refused: r.refused.clone(),
            files_changed,
            files_lost,
        }
    }
}

fn tail_chars(s: &str, n: usize) -> String {
    let count = s.chars().count();
    s.chars().skip(count.saturating_sub(n)).collect()
}
