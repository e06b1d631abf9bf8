//! `WorkspaceSlot`: the workspace a server answers from, or the promise of one. A server on
//! a repository without an index answers `initialize` and `tools/list` at once and builds in
//! the background; a call that needs the index waits for the build up to its deadline, and
//! past it is told plainly that the first build is under way and for how long it has run.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::api::{ApiError, Workspace};

pub struct WorkspaceSlot {
    ws: OnceLock<Arc<Workspace>>,
    ready: Notify,
    failed: Mutex<Option<String>>,
    started: Instant,
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
                    "the first index build of this repository is under way ({:.0} s so far); ask again shortly",
                    self.started.elapsed().as_secs_f64()
                )));
            }
        }
    }
}
