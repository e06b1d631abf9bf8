//! Progress reporting without printing: the CLI implements this with progress bars.

/// Receives progress from a build. Called from worker threads.
pub trait BuildObserver: Sync {
    /// A phase starts; `total` is the number of steps, 0 when unknown.
    fn phase(&self, _name: &'static str, _total: u64) {}
    /// `n` more steps of the current phase are done.
    fn advance(&self, _n: u64) {}
    /// The current phase ended.
    fn finish_phase(&self) {}
}

/// Reports nothing.
pub struct NoProgress;

impl BuildObserver for NoProgress {}
