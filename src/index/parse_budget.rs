//! `ParseBudget`: how many large files a capped build parses at once. A file's parse holds
//! its syntax tree, its symbols and its lexical documents, 30 to 90 times its size at the
//! peak (a 275 KB header of numpy took 21 MiB, an 861 KB C file 27), so two workers parsing two of the tree's
//! large files side by side went over a 128 MiB cap by themselves. Under a cap, a large file
//! waits while the files being parsed already take the budget; one is always let through
//! alone (never a deadlock, never a file refused), and small files never wait.

use std::sync::{Condvar, Mutex};

/// The memory a parse is taken to hold, per byte of the file.
pub const PARSE_BYTES_FACTOR: u64 = 64;
/// Files below this many bytes never wait (their parse is a few MiB at most).
pub const SMALL_FILE_BYTES: u64 = 64 * 1024;

/// The memory the files being parsed are taken to hold, against a budget.
pub struct ParseBudget {
    budget: u64,
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
            held: Mutex::new(0),
            freed: Condvar::new(),
        }
    }

    /// The budget a build under a cap of `cap_mib` gives its parses: a third of what the
    /// process's own pages leave of the cap.
    pub fn under_cap(cap_mib: u64) -> ParseBudget {
        let free = cap_mib.saturating_sub(super::memory_cap::PROCESS_FLOOR_MIB) << 20;
        ParseBudget::new(free / 3)
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
        while *held > 0 && held.saturating_add(need) > self.budget {
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
