//! `BuildActivity`: the build this process is running for a workspace, as answers describe it.
//! A part that a first-stage generation deferred is "being built, at this phase" while the
//! second stage runs, not "missing: run `ken index build`" (the server is doing just that).

use std::sync::Mutex;
use std::time::Instant;

use crate::index::BuildObserver;

#[derive(Default)]
pub struct BuildActivity {
    running: Mutex<Option<Running>>,
}

struct Running {
    started: Instant,
    phase: &'static str,
    done: u64,
    total: u64,
}

impl BuildActivity {
    /// A build of this workspace starts.
    pub fn begin(&self) {
        self.set(Some(Running {
            started: Instant::now(),
            phase: "starting",
            done: 0,
            total: 0,
        }));
    }

    /// The build ended (committed or failed).
    pub fn end(&self) {
        self.set(None);
    }

    fn set(&self, r: Option<Running>) {
        match self.running.lock() {
            Ok(mut g) => *g = r,
            Err(p) => *p.into_inner() = r,
        }
    }

    /// How far the running build is, in words (`None` when none runs): "at graph (1200 of 4000),
    /// 12 s in".
    pub fn describe(&self) -> Option<String> {
        let g = self.running.lock().ok()?;
        let r = g.as_ref()?;
        let steps = match r.total {
            0 => String::new(),
            t => format!(" ({} of {t})", r.done.min(t)),
        };
        Some(format!(
            "at {}{steps}, {} s in",
            r.phase,
            r.started.elapsed().as_secs()
        ))
    }
}

impl BuildObserver for BuildActivity {
    fn phase(&self, name: &'static str, total: u64) {
        if let Ok(mut g) = self.running.lock()
            && let Some(r) = g.as_mut()
        {
            r.phase = name;
            r.done = 0;
            r.total = total;
        }
    }

    fn advance(&self, n: u64) {
        if let Ok(mut g) = self.running.lock()
            && let Some(r) = g.as_mut()
        {
            r.done += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_build_says_its_phase_and_steps_and_an_ended_one_nothing() {
        let a = BuildActivity::default();
        assert_eq!(a.describe(), None);
        a.begin();
        a.phase("graph", 40);
        a.advance(10);
        let said = a.describe().unwrap();
        assert!(said.starts_with("at graph (10 of 40), "), "{said}");
        a.end();
        assert_eq!(a.describe(), None);
    }
}
