//! `WorkspaceSlot`: the workspace a server answers from, or the promise of one. A server on
//! a repository without an index answers `initialize` and `tools/list` at once and builds in
//! the background; a call that needs the index waits for the build up to its deadline, and
//! past it is told plainly that the first build is under way, how far it has got (phase, files
//! parsed of how many) and for how long it has run. [`BuildProgress`] is what the build reports
//! to; `index_status`, the status resource, `/healthz` and MCP progress notifications read it.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::api::{ApiError, BuildObserver, Workspace};

/// How far a first build has got; the build reports to it from its worker threads.
#[derive(Default)]
pub struct BuildProgress {
    state: Mutex<ProgressState>,
}

#[derive(Default)]
struct ProgressState {
    phase: &'static str,
    done: u64,
    total: u64,
    /// Files the parse phase counted, kept after it ends.
    files: u64,
    parsed: u64,
    /// Phases that said they ended.
    ended: Vec<&'static str>,
}

/// A build's progress as answers and notifications say it.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct BuildSnapshot {
    /// The first build is running (every answer waits for it).
    pub building: bool,
    /// The phase running now: walk, parse, write, graph or embed.
    pub phase: String,
    /// Files parsed, and the files to parse (0 until the walk is done).
    pub files_parsed: u64,
    pub files_total: u64,
    /// A rough share of the whole build done, 0 to 100: the parse counts for most of it.
    pub percent: f64,
    pub elapsed_secs: f64,
}

impl BuildObserver for BuildProgress {
    fn phase(&self, name: &'static str, total: u64) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.phase = name;
        s.done = 0;
        s.total = total;
        if name == "parse" {
            s.files = total;
        }
    }

    fn advance(&self, n: u64) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.done += n;
        if s.phase == "parse" {
            s.parsed = s.done.min(s.files);
        }
    }

    fn finish_phase(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let phase = s.phase;
        s.ended.push(phase);
    }
}

impl BuildProgress {
    fn snapshot(&self, started: Instant) -> BuildSnapshot {
        let s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        // The parse is most of a build; what comes after it (write, graph, vectors) the rest.
        let parse_share = match s.files {
            0 => 0.0,
            n => s.parsed as f64 / n as f64,
        };
        // Phases come in this order; each later one starts where the one before ended.
        let percent = match s.phase {
            "write" => 80.0,
            "graph" => 85.0,
            "embed" => 92.0,
            _ if s.ended.contains(&"parse") => 80.0,
            _ => 5.0 + 75.0 * parse_share,
        };
        BuildSnapshot {
            building: true,
            phase: match s.phase {
                "" => "start".into(),
                p => p.into(),
            },
            files_parsed: s.parsed,
            files_total: s.files,
            percent: (percent * 10.0).round() / 10.0,
            elapsed_secs: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        }
    }
}

impl BuildSnapshot {
    /// One line for a person or a model.
    pub fn line(&self) -> String {
        let files = match self.files_total {
            0 => String::new(),
            n => format!(", {} of {n} files parsed", self.files_parsed),
        };
        format!(
            "{} phase{files}, about {:.0} % done, {:.0} s so far",
            self.phase, self.percent, self.elapsed_secs
        )
    }
}

pub struct WorkspaceSlot {
    ws: OnceLock<Arc<Workspace>>,
    ready: Notify,
    failed: Mutex<Option<String>>,
    started: Instant,
    progress: Arc<BuildProgress>,
    /// What must live as long as the server once the workspace is there (its file watcher).
    kept: Mutex<Vec<Box<dyn std::any::Any + Send>>>,
}

impl WorkspaceSlot {
    /// A workspace that is there already.
    pub fn ready(ws: Arc<Workspace>) -> Arc<WorkspaceSlot> {
        let slot = Self::pending();
        slot.fill(ws);
        slot
    }

    /// A workspace still being built; [`Self::fill`] or [`Self::fail`] ends the wait.
    pub fn pending() -> Arc<WorkspaceSlot> {
        Arc::new(WorkspaceSlot {
            ws: OnceLock::new(),
            ready: Notify::new(),
            failed: Mutex::new(None),
            started: Instant::now(),
            progress: Arc::new(BuildProgress::default()),
            kept: Mutex::new(Vec::new()),
        })
    }

    pub fn fill(&self, ws: Arc<Workspace>) {
        let _ = self.ws.set(ws);
        self.ready.notify_waiters();
    }

    /// The build failed: every call from now on says why.
    pub fn fail(&self, why: String) {
        *self.failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(why);
        self.ready.notify_waiters();
    }

    /// Keeps `thing` alive as long as the server.
    pub fn keep(&self, thing: Box<dyn std::any::Any + Send>) {
        self.kept.lock().unwrap_or_else(|p| p.into_inner()).push(thing);
    }

    /// What the first build reports to.
    pub fn progress(&self) -> Arc<BuildProgress> {
        self.progress.clone()
    }

    /// How far the first build has got; `None` once the workspace is there or the build failed.
    pub fn building(&self) -> Option<BuildSnapshot> {
        if self.ws.get().is_some() || self.failed.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
            return None;
        }
        Some(self.progress.snapshot(self.started))
    }

    /// The workspace if it is there now.
    pub fn now(&self) -> Option<Arc<Workspace>> {
        self.ws.get().cloned()
    }

    /// The workspace, waiting for the first build at most `limit`.
    pub async fn wait(&self, limit: Duration) -> Result<Arc<Workspace>, ApiError> {
        let until = tokio::time::Instant::now() + limit;
        loop {
            // Registered before the check, so a fill in between is not missed.
            let woken = self.ready.notified();
            if let Some(ws) = self.ws.get() {
                return Ok(ws.clone());
            }
            if let Some(why) = self.failed.lock().unwrap_or_else(|p| p.into_inner()).clone() {
                return Err(ApiError::Unavailable(format!(
                    "the first index build failed: {why}"
                )));
            }
            if tokio::time::timeout_at(until, woken).await.is_err() {
                return Err(ApiError::Unavailable(format!(
                    "the first index build of this repository is under way ({}); ask again shortly",
                    self.progress.snapshot(self.started).line()
                )));
            }
        }
    }
}
