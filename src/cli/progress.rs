//! Progress bars on stderr (hidden when stderr is not a terminal or with `--quiet`).

use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::index::BuildObserver;

pub struct ProgressBars {
    bar: Mutex<Option<ProgressBar>>,
    hidden: bool,
}

impl ProgressBars {
    pub fn new(hidden: bool) -> Self {
        ProgressBars {
            bar: Mutex::new(None),
            hidden,
        }
    }
}

impl BuildObserver for ProgressBars {
    fn phase(&self, name: &'static str, total: u64) {
        let target = if self.hidden {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let bar = if total > 0 {
            let b = ProgressBar::with_draw_target(Some(total), target);
            if let Ok(style) =
                ProgressStyle::with_template("{prefix:>6} [{bar:30}] {pos}/{len} files {per_sec} eta {eta}")
            {
                b.set_style(style.progress_chars("=> "));
            }
            b
        } else {
            let b = ProgressBar::with_draw_target(None, target);
            if let Ok(style) = ProgressStyle::with_template("{prefix:>6} {spinner} {elapsed}") {
                b.set_style(style);
            }
            b.enable_steady_tick(Duration::from_millis(120));
            b
        };
        bar.set_prefix(name);
        if let Ok(mut slot) = self.bar.lock()
            && let Some(old) = slot.replace(bar)
        {
            old.finish_and_clear();
        }
    }

    fn advance(&self, n: u64) {
        if let Ok(slot) = self.bar.lock()
            && let Some(b) = slot.as_ref()
        {
            b.inc(n);
        }
    }

    fn finish_phase(&self) {
        if let Ok(mut slot) = self.bar.lock()
            && let Some(b) = slot.take()
        {
            b.finish_and_clear();
        }
    }
}
