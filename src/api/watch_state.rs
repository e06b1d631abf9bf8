//! `WatchState`: what the repository watcher knows — changed paths not yet in a generation
//! (the staleness every answer reports) and how the last refresh went — and `Staleness`,
//! how an answer learns it.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use serde::Serialize;

/// How an answer's staleness is known.
#[derive(Clone)]
pub enum Staleness {
    /// A quick metadata check of the indexed files on every answer (one-shot commands).
    Scan,
    /// The paths a watcher saw change since the current generation was built.
    Watched(Arc<WatchState>),
}

/// What the repository watcher knows: paths changed and not yet in a generation, and how the
/// last refresh went.
#[derive(Default)]
pub struct WatchState {
    pending: Mutex<BTreeSet<String>>,
    /// Paths taken by the build running now: still stale until its generation is swapped in.
    in_flight: Mutex<usize>,
    last: Mutex<Option<RefreshReport>>,
}

impl WatchState {
    /// Changed paths not yet in the current generation (waiting, or in the running build).
    pub fn pending(&self) -> u64 {
        let waiting = self.pending.lock().map(|p| p.len()).unwrap_or(0);
        let building = self.in_flight.lock().map(|n| *n).unwrap_or(0);
        (waiting + building) as u64
    }

    pub fn add(&self, paths: impl IntoIterator<Item = String>) {
        if let Ok(mut p) = self.pending.lock() {
            p.extend(paths);
        }
    }

    /// Takes the pending paths: a build is about to cover them ([`WatchState::finish`] when
    /// its generation is in).
    pub fn take(&self) -> Vec<String> {
        let taken: Vec<String> = self
            .pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p).into_iter().collect())
            .unwrap_or_default();
        if let Ok(mut n) = self.in_flight.lock() {
            *n = taken.len();
        }
        taken
    }

    pub fn finish(&self) {
        if let Ok(mut n) = self.in_flight.lock() {
            *n = 0;
        }
    }

    pub fn record(&self, r: RefreshReport) {
        if let Ok(mut l) = self.last.lock() {
            *l = Some(r);
        }
    }

    pub fn last(&self) -> Option<RefreshReport> {
        self.last.lock().ok().and_then(|l| l.clone())
    }
}

/// One background refresh: from the first change seen to the new generation queryable.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RefreshReport {
    pub generation: u64,
    pub paths_changed: usize,
    /// From the first event of the batch to the swap (debounce, build and open).
    pub save_to_queryable_ms: u64,
    pub build_ms: u64,
    pub error: Option<String>,
    pub finished_unix_ms: u64,
}
