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

/// Tells two observers the same (a progress bar and a server's progress, say).
pub struct BothObservers<'a>(pub &'a dyn BuildObserver, pub &'a dyn BuildObserver);

impl BuildObserver for BothObservers<'_> {
    fn phase(&self, name: &'static str, total: u64) {
        self.0.phase(name, total);
        self.1.phase(name, total);
    }
    fn advance(&self, n: u64) {
        self.0.advance(n);
        self.1.advance(n);
    }
    fn finish_phase(&self) {
        self.0.finish_phase();
        self.1.finish_phase();
    }
}
