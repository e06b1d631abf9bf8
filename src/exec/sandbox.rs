//! `Sandbox`: runs one command confined and reports what happened. It makes the private temp
//! dir and the cgroup, starts the helper (`ken __sandbox-init`, see
//! [`super::sandbox_helper`]) with the spec and a status pipe on fd 3, streams and captures
//! the output, and assembles the [`RunReport`].
//!
//! Invariants:
//! - The private temp dir and the cgroup are removed after every run, whatever its end.
//! - A wanted mechanism that is not in force is named in `degraded` on every run; it is never
//!   dropped silently.
//!
//! `unsafe` is allowed here for the `pre_exec` hook that places the status pipe on fd 3 and
//! for ignoring interrupts while a command owns the terminal.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::Instant;

use nix::fcntl::OFlag;
use nix::sys::signal::{SigHandler, Signal};

use super::cgroup_limits::{CgroupLimits, CgroupUsage};
use super::helper_event::HelperEvent;
use super::helper_event::SETUP_FAILED;
use super::mechanism::{Mechanism, MechanismState};
use super::output_capture::{CapturedOutput, OutputCapture};
use super::run_report::RunReport;
use super::sandbox_spec::SandboxSpec;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("no command to run")]
    NoCommand,
    #[error("workspace {0}: {1}")]
    Workspace(PathBuf, std::io::Error),
    #[error("cannot make the private temp dir {0}: {1}")]
    TempDir(PathBuf, std::io::Error),
    #[error("cannot start the sandbox helper {0}: {1}")]
    Helper(PathBuf, std::io::Error),
    #[error("sandbox plumbing: {0}")]
    Plumbing(String),
}

/// Called with the mechanisms in force as the command starts (to warn before its output).
pub type OnStart = std::sync::Arc<dyn Fn(&[Mechanism]) + Send + Sync>;

#[derive(Clone)]
pub struct Sandbox {
    /// The `ken` binary that becomes the helper.
    pub helper: PathBuf,
    /// Copy the command's output to this process's stdout and stderr as it comes.
    pub stream: bool,
    /// Bytes of each stream kept for the report (head and tail).
    pub capture_bytes: usize,
    /// Ignore SIGINT and SIGQUIT while the command runs (a CLI whose command owns the
    /// terminal); a library caller keeps its own handlers.
    pub ignore_interrupts: bool,
    pub on_start: Option<OnStart>,
}

impl Sandbox {
    pub fn new(helper: PathBuf) -> Sandbox {
        Sandbox {
            helper,
            stream: true,
            capture_bytes: 64 * 1024,
            ignore_interrupts: false,
            on_start: None,
        }
    }

    pub fn run(&self, mut spec: SandboxSpec) -> Result<RunReport, SandboxError> {
        if spec.argv.is_empty() {
            return Err(SandboxError::NoCommand);
        }
        spec.workspace = std::fs::canonicalize(&spec.workspace)
            .map_err(|e| SandboxError::Workspace(spec.workspace.clone(), e))?;
        spec.cwd =
            std::fs::canonicalize(&spec.cwd).map_err(|e| SandboxError::Workspace(spec.cwd.clone(), e))?;
        let tmp = PrivateTmp::create()?;
        spec.private_tmp = tmp.0.clone();
        let (cgroup, cgroup_mechanism) = match spec.disabled("cgroup") {
            Some(m) => (CgroupLimits::default(), m),
            None => CgroupLimits::create(spec.limits.processes, spec.limits.memory_bytes),
        };
        spec.cgroup_procs = cgroup.procs_files();
        spec.cgroup_processes = cgroup.bounds_processes();
        spec.cgroup_memory = cgroup.bounds_memory();
        let started = Instant::now();
        let outcome = self.spawn_and_wait(&spec);
        let usage = cgroup.finish();
        drop(tmp);
        let outcome = outcome?;
        let mechanisms = vec![cgroup_mechanism, timeout_mechanism(&spec), env_mechanism(&spec)];
        Ok(outcome.into_report(&spec, mechanisms, &usage, started))
    }

    fn spawn_and_wait(&self, spec: &SandboxSpec) -> Result<Outcome, SandboxError> {
        let json = serde_json::to_string(spec).map_err(|e| SandboxError::Plumbing(e.to_string()))?;
        let (status_read, status_write) =
            nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|e| SandboxError::Plumbing(format!("pipe: {e}")))?;
        let mut cmd = Command::new(&self.helper);
        cmd.arg(SandboxSpec::HELPER_ARG)
            .env_clear()
            .env(SandboxSpec::ENV, json)
            .stdin(Stdio::inherit())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let fd = status_write.as_raw_fd();
        // SAFETY: the hook runs between fork and exec and calls only dup2/fcntl, which are
        // async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                let placed = if fd == 3 {
                    nix::libc::fcntl(3, nix::libc::F_SETFD, 0)
                } else {
                    nix::libc::dup2(fd, 3)
                };
                if placed < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| SandboxError::Helper(self.helper.clone(), e))?;
        drop(status_write);
        let previous = self.ignore_interrupts.then(ignore_interrupts);
        let stdout = child.stdout.take().map(|s| self.pump(s, Sink::Stdout));
        let stderr = child.stderr.take().map(|s| self.pump(s, Sink::Stderr));
        let on_start = self.on_start.clone();
        let events = std::thread::spawn(move || read_events(File::from(status_read), on_start));
        let waited = child.wait();
        if let Some(previous) = previous {
            restore_interrupts(previous);
        }
        let join = |h: Option<JoinHandle<CapturedOutput>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
        let (stdout, stderr) = (join(stdout), join(stderr));
        let events = events.join().unwrap_or_default();
        let helper_code = waited.ok().and_then(|s| s.code()).unwrap_or(SETUP_FAILED);
        let mut outcome = Outcome {
            stdout,
            stderr,
            helper_code,
            ..Outcome::default()
        };
        for event in events {
            match event {
                HelperEvent::Mechanisms { mechanisms } => outcome.mechanisms = mechanisms,
                HelperEvent::Refused { reason, code } => {
                    outcome.refused = Some(reason);
                    outcome.refused_code = code;
                }
                HelperEvent::Child { code, signal } => outcome.child = Some((code, signal)),
                HelperEvent::Done {
                    timed_out,
                    max_rss_kib,
                    user_ms,
                    system_ms,
                } => {
                    outcome.timed_out = timed_out;
                    outcome.max_rss_kib = max_rss_kib;
                    outcome.user_ms = user_ms;
                    outcome.system_ms = system_ms;
                }
            }
        }
        if outcome.mechanisms.is_empty() && outcome.refused.is_none() {
            outcome.refused = Some(format!(
                "the sandbox helper exited ({helper_code}) before starting the command"
            ));
        }
        Ok(outcome)
    }

    fn pump(&self, mut from: impl Read + Send + 'static, sink: Sink) -> JoinHandle<CapturedOutput> {
        let stream = self.stream;
        let mut capture = OutputCapture::new(self.capture_bytes);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                match from.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        capture.push(&buf[..n]);
                        if stream {
                            sink.write(&buf[..n]);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
            capture.finish()
        })
    }
}

#[derive(Debug, Default)]
struct Outcome {
    stdout: CapturedOutput,
    stderr: CapturedOutput,
    mechanisms: Vec<Mechanism>,
    refused: Option<String>,
    refused_code: i32,
    child: Option<(Option<i32>, Option<i32>)>,
    timed_out: bool,
    max_rss_kib: u64,
    user_ms: u64,
    system_ms: u64,
    helper_code: i32,
}

impl Outcome {
    /// The run's report: the sandbox's own `mechanisms` first, then the helper's.
    fn into_report(
        self,
        spec: &SandboxSpec,
        mut mechanisms: Vec<Mechanism>,
        usage: &CgroupUsage,
        started: Instant,
    ) -> RunReport {
        let killed_by = self.killed_by(spec, usage.oom_killed);
        let status = self.status();
        mechanisms.extend(self.mechanisms);
        let mut report = RunReport {
            command: spec.argv.clone(),
            sandbox: spec.mode,
            network: spec.network,
            workspace: spec.workspace.clone(),
            exit_code: self.child.and_then(|c| c.0),
            signal: self.child.and_then(|c| c.1).map(signal_name),
            timed_out: self.timed_out,
            killed_by,
            limits_hit: Vec::new(),
            duration_ms: started.elapsed().as_millis() as u64,
            peak_memory_bytes: usage.peak_memory_bytes.unwrap_or(0).max(self.max_rss_kib * 1024),
            cpu_user_ms: self.user_ms,
            cpu_system_ms: self.system_ms,
            stdout: self.stdout,
            stderr: self.stderr,
            degraded: mechanisms
                .iter()
                .filter(|m| m.degraded())
                .map(|m| format!("{}: {}", m.name, m.detail))
                .collect(),
            mechanisms,
            refused: self.refused,
            status,
        };
        if usage.processes_limited {
            report.limits_hit.push("processes".to_string());
        }
        report
            .limits_hit
            .extend(report.killed_by.clone().filter(|k| k != "processes"));
        report
    }

    /// Which limit ended the command, if one did: `timeout`, `memory`, `cpu` or `file-size`.
    fn killed_by(&self, spec: &SandboxSpec, oom_killed: bool) -> Option<String> {
        // The command's own signal, or the one a shell reports for its child (128 + N).
        let signal = self.child.and_then(|c| {
            c.1.or(c
                .0
                .filter(|code| *code > 128 && *code < 160)
                .map(|code| code - 128))
        });
        if self.timed_out {
            Some("timeout")
        } else if oom_killed {
            Some("memory")
        } else if signal == Some(Signal::SIGXCPU as i32)
            || (signal == Some(Signal::SIGKILL as i32)
                && spec
                    .limits
                    .cpu_seconds
                    .is_some_and(|c| self.user_ms + self.system_ms >= c * 1000))
        {
            Some("cpu")
        } else if signal == Some(Signal::SIGXFSZ as i32) {
            Some("file-size")
        } else {
            None
        }
        .map(str::to_string)
    }

    /// The exit status `ken exec` reports: the refusal's code, 124 on timeout, the command's
    /// code, 128 + its signal, else the helper's code.
    fn status(&self) -> i32 {
        if self.refused.is_some() {
            self.refused_code
        } else if self.timed_out {
            124
        } else {
            match self.child {
                Some((Some(code), _)) => code,
                Some((None, Some(sig))) => 128 + sig,
                _ => self.helper_code,
            }
        }
    }
}

/// What was removed from the command's environment.
fn env_mechanism(spec: &SandboxSpec) -> Mechanism {
    Mechanism::new(
        "environment",
        MechanismState::Enforced,
        if spec.env_removed.is_empty() {
            "nothing secret-looking to remove".to_string()
        } else {
            format!("removed {}", spec.env_removed.join(", "))
        },
    )
}

#[derive(Clone, Copy)]
enum Sink {
    Stdout,
    Stderr,
}

impl Sink {
    fn write(self, bytes: &[u8]) {
        // A closed terminal or pipe must not stop the capture.
        let _ = match self {
            Sink::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(bytes).and_then(|()| out.flush())
            }
            Sink::Stderr => std::io::stderr().lock().write_all(bytes),
        };
    }
}

fn read_events(pipe: File, on_start: Option<OnStart>) -> Vec<HelperEvent> {
    let mut out = Vec::new();
    for line in BufReader::new(pipe).lines().map_while(Result::ok) {
        let Ok(event) = serde_json::from_str::<HelperEvent>(&line) else {
            continue;
        };
        if let (HelperEvent::Mechanisms { mechanisms }, Some(f)) = (&event, &on_start) {
            f(mechanisms);
        }
        out.push(event);
    }
    out
}

fn timeout_mechanism(spec: &SandboxSpec) -> Mechanism {
    match spec.limits.timeout_ms {
        Some(ms) => Mechanism::new(
            "timeout",
            MechanismState::Enforced,
            format!(
                "{:.1} s wall clock, then the whole tree is killed",
                ms as f64 / 1000.0
            ),
        ),
        None => Mechanism::new("timeout", MechanismState::Off, "no wall-clock limit"),
    }
}

fn signal_name(sig: i32) -> String {
    Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal {sig}"))
}

fn ignore_interrupts() -> [SigHandler; 2] {
    // SAFETY: SIG_IGN installs no handler code.
    [Signal::SIGINT, Signal::SIGQUIT]
        .map(|s| unsafe { nix::sys::signal::signal(s, SigHandler::SigIgn) }.unwrap_or(SigHandler::SigDfl))
}

fn restore_interrupts(previous: [SigHandler; 2]) {
    for (s, h) in [Signal::SIGINT, Signal::SIGQUIT].into_iter().zip(previous) {
        // SAFETY: puts back the disposition this process had before the run.
        let _ = unsafe { nix::sys::signal::signal(s, h) };
    }
}

/// The private temp dir, removed when dropped.
struct PrivateTmp(PathBuf);

impl PrivateTmp {
    fn create() -> Result<PrivateTmp, SandboxError> {
        use std::os::unix::fs::DirBuilderExt;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("ken-exec-{}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| SandboxError::TempDir(dir.clone(), e))?;
        Ok(PrivateTmp(dir))
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The workspace a command in `cwd` writes to by default: the enclosing git repository's
/// root, else `cwd` itself.
pub fn default_workspace(cwd: &Path) -> PathBuf {
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}
