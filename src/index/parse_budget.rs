//! `ParseBudget`: how many large files a capped build parses at once. A file's parse holds
//! its syntax tree, its symbols and its lexical documents, 30 to 90 times its size at the
//! peak (a 275 KB header of numpy took 21 MiB, an 861 KB C file 27), so two workers parsing two of the tree's
//! large files side by side went over a 128 MiB cap by themselves. Under a cap, a large file
//! waits while the files being parsed already take the budget, or while what the process
//! holds now (measured, not estimated: the lexical writer's heap and what the build has
//! gathered so far vary) leaves no room for it under the cap; one is always let through
//! alone (never a deadlock, never a file refused), and small files never wait.

use std::sync::{Condvar, Mutex};

/// The memory a parse is taken to hold, per byte of the file.
pub const PARSE_BYTES_FACTOR: u64 = 64;
/// Files below this many bytes never wait (their parse is a few MiB at most).
pub const SMALL_FILE_BYTES: u64 = 64 * 1024;

/// Reads what the process holds now, in bytes (`None` where it cannot be read).
type Resident = Box<dyn Fn() -> Option<u64> + Send + Sync>;

/// The memory the files being parsed are taken to hold, against a budget, and what the
/// process holds, against its cap.
pub struct ParseBudget {
    budget: u64,
    /// The cap, and how to read what the process holds against it.
    cap: Option<(u64, Resident)>,
    held: Mutex<u64>,
    freed: Condvar,
}

/// A file's share of the budget, given back when dropped.
pub struct ParsePermit<'a> {
    of: &'a ParseBudget,
    bytes: u64,
}

impl ParseBudget {
    /// A budget of `budget` bytes of parse memory.
    pub fn new(budget: u64) -> ParseBudget {
        ParseBudget {
            budget,
            cap: None,
            held: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// The budget a build under a cap of `cap_mib` gives its parses: a third of what the
    /// process's own pages leave of the cap; and a large file waits while what the process
    /// holds now and its share would pass the cap. (Keeping the lexical writer's heap free
    /// as well, which fills while files are parsed, made a 128 MiB build of the 2.8M-line
    /// tree a fifth slower for no lower peak.)
    pub fn under_cap(cap_mib: u64) -> ParseBudget {
        let free = cap_mib.saturating_sub(super::memory_cap::PROCESS_FLOOR_MIB) << 20;
        ParseBudget::new(free / 3).against(
            cap_mib << 20,
            Box::new(|| crate::util::ResidentMemory::current_mib().map(|m| m << 20)),
        )
    }

    /// This budget, with a large file also waiting while `resident()` and its share would
    /// pass `cap` bytes.
    fn against(mut self, cap: u64, resident: Resident) -> ParseBudget {
        self.cap = Some((cap, resident));
        self
    }

    /// Whether a share of `need` bytes fits beside `held` and what the process holds.
    fn fits(&self, held: u64, need: u64) -> bool {
        let room = match &self.cap {
            Some((cap, resident)) => resident().is_none_or(|r| r.saturating_add(need) <= *cap),
            None => true,
        };
        room && held.saturating_add(need) <= self.budget
    }

    /// Waits until a file of `size` bytes may be parsed: at once for a small file, else when
    /// its share fits beside the shares held, or when none is held.
    pub fn admit(&self, size: u64) -> ParsePermit<'_> {
        if size < SMALL_FILE_BYTES {
            return ParsePermit { of: self, bytes: 0 };
        }
        let need = size.saturating_mul(PARSE_BYTES_FACTOR);
        // A poisoned lock (a worker panicked holding it) admits: parsing goes on unbounded.
        let Ok(mut held) = self.held.lock() else {
            return ParsePermit { of: self, bytes: 0 };
        };
        while *held > 0 && !self.fits(*held, need) {
            held = match self.freed.wait(held) {
                Ok(h) => h,
                Err(_) => return ParsePermit { of: self, bytes: 0 },
            };
        }
        *held += need;
        ParsePermit {
            of: self,
            bytes: need,
        }
    }
}

impl Drop for ParsePermit<'_> {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        if let Ok(mut held) = self.of.held.lock() {
            *held = held.saturating_sub(self.bytes);
        }
        self.of.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    /// Large files parsed by several threads: the estimated memory in flight never passes
    /// the budget, except for one file alone larger than it, which is let through.
    #[test]
    fn large_files_wait_for_the_budget_and_one_alone_always_passes() {
        let budget = ParseBudget::new(100 * PARSE_BYTES_FACTOR * 1024);
        let (in_flight, most) = (AtomicU64::new(0), AtomicU64::new(0));
        // 60 KiB-ish files are small; 70 KiB files fit one at a time (70 + 70 > 100); a
        // 300 KiB file is over the budget alone.
        let sizes: Vec<u64> = [70u64, 70, 300, 70, 70, 70].iter().map(|k| k * 1024).collect();
        std::thread::scope(|s| {
            for &size in &sizes {
                let (budget, in_flight, most) = (&budget, &in_flight, &most);
                s.spawn(move || {
                    let _permit = budget.admit(size);
                    let now = in_flight.fetch_add(size, Ordering::SeqCst) + size;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    in_flight.fetch_sub(size, Ordering::SeqCst);
                });
            }
        });
        assert_eq!(
            most.load(Ordering::SeqCst),
            300 * 1024,
            "one file at a time, the largest alone"
        );
        assert_eq!(*budget.held.lock().unwrap(), 0, "every share given back");
    }

    /// Two large files that fit the budget together still go one at a time while what the
    /// process holds leaves room for one only; with room for both, they go side by side.
    #[test]
    fn large_files_wait_while_the_process_holds_too_much_for_them() {
        let most_side_by_side = |resident_mib: u64| {
            let budget =
                ParseBudget::new(1 << 30).against(128 << 20, Box::new(move || Some(resident_mib << 20)));
            let (in_flight, most) = (AtomicU64::new(0), AtomicU64::new(0));
            std::thread::scope(|s| {
                for _ in 0..4 {
                    let (budget, in_flight, most) = (&budget, &in_flight, &most);
                    s.spawn(move || {
                        // 100 KiB: a share of 6.25 MiB.
                        let _permit = budget.admit(100 * 1024);
                        let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(30));
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                    });
                }
            });
            most.load(Ordering::SeqCst)
        };
        assert_eq!(most_side_by_side(125), 1, "no room beside 125 MiB: one at a time");
        assert!(most_side_by_side(40) > 1, "room to spare: side by side");
    }

    #[test]
    fn small_files_never_wait() {
        let budget = ParseBudget::new(0);
        let held = budget.admit(100 * 1024);
        // The budget is taken (and over): a small file passes anyway, at once.
        let small = budget.admit(SMALL_FILE_BYTES - 1);
        drop(small);
        drop(held);
        assert_eq!(*budget.held.lock().unwrap(), 0);
    }
}
