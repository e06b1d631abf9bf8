//! `HelperEvent`: one line of the status pipe from the sandbox helper to `ken exec` (JSON,
//! one event per line, each shorter than `PIPE_BUF` so writers in three processes never
//! interleave).

use serde::{Deserialize, Serialize};

use super::mechanism::Mechanism;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum HelperEvent {
    /// What confines the command, written by its own process just before `execve`.
    Mechanisms { mechanisms: Vec<Mechanism> },
    /// The command was not started (strict mode, or a setup step that cannot be stepped over).
    Refused {
        reason: String,
        /// What `ken exec` exits with: 125 for the sandbox, 127 for a command not found, 126
        /// for one that cannot be executed.
        #[serde(default = "setup_failed")]
        code: i32,
    },
    /// How the command itself ended, from the process that reaped it.
    Child { code: Option<i32>, signal: Option<i32> },
    /// The helper's last word: whether the timeout fired, and what the tree used.
    Done {
        timed_out: bool,
        max_rss_kib: u64,
        user_ms: u64,
        system_ms: u64,
    },
}

/// Exit code when the sandbox could not start the command at all.
pub const SETUP_FAILED: i32 = 125;

fn setup_failed() -> i32 {
    SETUP_FAILED
}
