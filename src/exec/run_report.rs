//! `RunReport`: what one confined run did — how it ended, what it used, what confined it, and
//! its output within the cap.

use std::path::PathBuf;

use serde::Serialize;

use super::SandboxMode;
use super::mechanism::Mechanism;
use super::output_capture::CapturedOutput;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RunReport {
    pub command: Vec<String>,
    pub sandbox: SandboxMode,
    pub network: bool,
    pub workspace: PathBuf,
    /// The command's exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it (`SIGKILL`, ...), when one did.
    pub signal: Option<String>,
    pub timed_out: bool,
    /// The limit that ended the run: `timeout`, `cpu`, `memory`, `file-size`.
    pub killed_by: Option<String>,
    /// Every limit the run ran into, whether or not it ended the run (`processes`, ...).
    pub limits_hit: Vec<String>,
    pub duration_ms: u64,
    /// The peak memory of the command's tree: the cgroup's peak where one was made, else the
    /// largest resident set among the processes reaped.
    pub peak_memory_bytes: u64,
    pub cpu_user_ms: u64,
    pub cpu_system_ms: u64,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub mechanisms: Vec<Mechanism>,
    /// `name: why` for every wanted mechanism not fully in force.
    pub degraded: Vec<String>,
    /// Why the command was not started, when it was not.
    pub refused: Option<String>,
    /// What `ken exec` exits with: the command's code, 128 + signal, 124 on timeout, 125 when
    /// the sandbox could not start it.
    pub status: i32,
}
