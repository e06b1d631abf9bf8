//! `RunBounds`: what ends every outside call of a run early — the run's deadline and the
//! user's interrupt. The HTTP client checks them while it waits on a call (so a call in flight
//! is abandoned within a tick of either) and gives no attempt longer than the time left.
//!
//! A CLI command is one run: [`RunBounds::process`] is the one every provider made in this
//! process consults unless given another; `ken agent` sets its deadline from `--max-time`
//! and cancels it on Ctrl-C. A server never sets either, so its calls are bounded by their
//! own timeouts only. Clones share their state.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::ProviderError;

#[derive(Clone, Default)]
pub struct RunBounds {
    cancelled: Arc<AtomicBool>,
    deadline: Arc<Mutex<Option<Deadline>>>,
}

/// When the run must end, and the limit it was given (for messages).
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    pub at: Instant,
    pub limit: Duration,
}

impl RunBounds {
    /// This process's bounds (none set until a command sets them).
    pub fn process() -> RunBounds {
        static PROCESS: OnceLock<RunBounds> = OnceLock::new();
        PROCESS.get_or_init(RunBounds::default).clone()
    }

    /// The run ends `limit` from now.
    pub fn set_deadline(&self, limit: Duration) {
        let d = Deadline {
            at: Instant::now() + limit,
            limit,
        };
        if let Ok(mut slot) = self.deadline.lock() {
            *slot = Some(d);
        }
    }

    pub fn deadline(&self) -> Option<Deadline> {
        self.deadline.lock().ok().and_then(|d| *d)
    }

    /// Time left to the deadline (`None`: there is none).
    pub fn left(&self) -> Option<Duration> {
        self.deadline()
            .map(|d| d.at.saturating_duration_since(Instant::now()))
    }

    /// Calls in flight give up and new ones are refused.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// The flag [`RunBounds::cancel`] sets, for a loop that checks it between its own steps.
    pub fn cancel_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.cancelled)
    }

    pub fn is_past_deadline(&self) -> bool {
        self.left().is_some_and(|l| l.is_zero())
    }

    /// Why a call (`what`, to `url`) must stop now, if it must.
    pub fn stop(&self, url: &str, what: &str) -> Option<ProviderError> {
        if self.is_cancelled() {
            return Some(ProviderError::Cancelled {
                url: url.to_string(),
                what: what.to_string(),
            });
        }
        let d = self.deadline()?;
        (Instant::now() >= d.at).then(|| ProviderError::Deadline {
            url: url.to_string(),
            what: what.to_string(),
            limit: seconds(d.limit),
        })
    }

    /// Sleeps `pause`, waking early when the call must stop; `Err` says why.
    pub fn sleep(&self, pause: Duration, url: &str, what: &str) -> Result<(), ProviderError> {
        let end = Instant::now() + pause;
        loop {
            if let Some(e) = self.stop(url, what) {
                return Err(e);
            }
            let now = Instant::now();
            if now >= end {
                return Ok(());
            }
            std::thread::sleep((end - now).min(TICK));
        }
    }
}

/// How often a waiting call looks at the bounds.
pub(super) const TICK: Duration = Duration::from_millis(50);

/// `d` for a message: whole seconds as `20`, anything else to a tenth (`0.5`).
pub(super) fn seconds(d: Duration) -> String {
    match d.subsec_millis() {
        0 => d.as_secs().to_string(),
        _ => format!("{:.1}", d.as_secs_f64()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_run_stops_calls_and_wakes_a_pause_at_once() {
        let b = RunBounds::default();
        assert!(b.stop("http://h/v1", "model call").is_none());
        let other = b.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            other.cancel();
        });
        let started = Instant::now();
        let e = b.sleep(Duration::from_secs(30), "http://h/v1", "model call");
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(matches!(e, Err(ProviderError::Cancelled { .. })), "{e:?}");
        assert!(b.cancel_flag().load(Ordering::SeqCst));
    }

    #[test]
    fn a_passed_deadline_names_its_limit() {
        let b = RunBounds::default();
        b.set_deadline(Duration::from_millis(1500));
        assert!(b.stop("u", "model call").is_none());
        assert!(b.left().is_some_and(|l| l <= Duration::from_millis(1500)));
        b.set_deadline(Duration::ZERO);
        let e = b.stop("http://h/v1", "model call").map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("http://h/v1: the model call was cut at the run's deadline of 0 s")
        );
        assert!(b.is_past_deadline());
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5");
        assert_eq!(seconds(Duration::from_secs(20)), "20");
    }
}
