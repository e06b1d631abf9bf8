//! `SandboxSpec`: everything one confined run needs, handed from `ken exec` to its helper
//! process as JSON (the helper re-executes `ken`, so it carries no state of its own), and the
//! limits it runs under.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::SandboxMode;

/// Resource limits; `None` leaves the inherited limit.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Limits {
    /// Wall-clock limit: the whole process tree is killed when it passes.
    pub timeout_ms: Option<u64>,
    /// `RLIMIT_CPU`, seconds of CPU per process.
    pub cpu_seconds: Option<u64>,
    /// Memory: a cgroup's limit where one can be made, else `RLIMIT_AS` (address space).
    pub memory_bytes: Option<u64>,
    /// `RLIMIT_FSIZE`: the largest file the command may write.
    pub file_size_bytes: Option<u64>,
    /// `RLIMIT_NOFILE`.
    pub open_files: Option<u64>,
    /// Processes and threads: a cgroup's `pids.max`, and `RLIMIT_NPROC` (which the kernel does
    /// not apply to root).
    pub processes: Option<u64>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            timeout_ms: Some(600_000),
            cpu_seconds: None,
            memory_bytes: Some(8 << 30),
            file_size_bytes: Some(4 << 30),
            open_files: Some(4096),
            processes: Some(1024),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SandboxSpec {
    pub mode: SandboxMode,
    /// Keep the host's network (no network namespace, no socket filter).
    pub network: bool,
    /// Writable root under `workspace-write`; `.git` and `read_only` beneath it stay read-only.
    pub workspace: PathBuf,
    /// Where the command starts.
    pub cwd: PathBuf,
    pub argv: Vec<String>,
    /// The whole environment of the command (already scrubbed).
    pub env: Vec<(String, String)>,
    /// Names of the variables scrubbing took out (reported, never their values).
    pub env_removed: Vec<String>,
    pub limits: Limits,
    /// Paths under the workspace kept read-only besides `.git`.
    pub read_only: Vec<PathBuf>,
    /// Refuse to run when a wanted mechanism is missing.
    pub strict: bool,
    /// Mechanisms to treat as missing (from `KEN_SANDBOX_DISABLE`): how the degraded paths
    /// are tested on a kernel that has everything.
    pub disabled: Vec<String>,
    /// A fresh directory the command may write, mounted on `/tmp` where a mount namespace
    /// exists; removed after the run.
    pub private_tmp: PathBuf,
    /// `cgroup.procs` files the helper joins before anything else (made by the parent).
    pub cgroup_procs: Vec<PathBuf>,
    /// The cgroup bounds processes (`pids.max`) and memory.
    pub cgroup_processes: bool,
    pub cgroup_memory: bool,
}

impl SandboxSpec {
    /// `Some(mechanism)` reporting it missing when the spec disables `name`.
    pub fn disabled(&self, name: &str) -> Option<super::Mechanism> {
        self.disabled.iter().any(|d| d == name).then(|| {
            super::Mechanism::new(
                name,
                super::MechanismState::Unavailable,
                format!("disabled by {}", SandboxSpec::DISABLE_ENV),
            )
        })
    }

    /// A spec with the default limits and no network, for `argv` run in `workspace`.
    pub fn new(mode: SandboxMode, workspace: PathBuf, argv: Vec<String>) -> SandboxSpec {
        SandboxSpec {
            mode,
            network: false,
            cwd: workspace.clone(),
            workspace,
            argv,
            env: Vec::new(),
            env_removed: Vec::new(),
            limits: Limits::default(),
            read_only: Vec::new(),
            strict: false,
            disabled: Vec::new(),
            private_tmp: PathBuf::new(),
            cgroup_procs: Vec::new(),
            cgroup_processes: false,
            cgroup_memory: false,
        }
    }

    /// The environment variable that carries the spec to the helper.
    pub const ENV: &'static str = "KEN_SANDBOX_SPEC";
    /// Comma-separated mechanism names `ken exec` treats as missing.
    pub const DISABLE_ENV: &'static str = "KEN_SANDBOX_DISABLE";
    /// The hidden first argument that turns `ken` into the helper.
    pub const HELPER_ARG: &'static str = "__sandbox-init";
}
