//! `ParseBudget`: how many large files a capped build parses at once. A file's parse holds
//! its syntax tree, its symbols and its lexical documents, 30 to 90 times its size at the
//! peak (a 275 KB header of numpy took 21 MiB, an 861 KB C file 27, date-fns's 1 MB
//! `locale/cdn.js` bundle 30 for its tree alone), so two workers parsing two of the tree's
//! large files side by side went over a 128 MiB cap by themselves. Under a cap, a large file
//! waits while the files being parsed already take the budget; one is always let through
//! alone (never a deadlock, never a file refused), and small files never wait for the
//! budget. A large file whose parse still reached the cap's bound (the estimate is a
//! guess, and what the rest of the build holds moves) is parsed once more alone
//! ([`ParseBudget::admit_alone`]): every other worker waits until it is done.

use std::sync::{Condvar, Mutex, MutexGuard};

/// The memory a parse is taken to hold, per byte of the file.
pub const PARSE_BYTES_FACTOR: u64 = 64;
/// Files below this many bytes never wait for the budget (their parse is a few MiB at most),
/// and their parses are not bounded by the resident set.
pub const SMALL_FILE_BYTES: u64 = 64 * 1024;
/// What a large file's parse leaves of the cap, in MiB, for the rest of the process while
/// its tree grows (the other workers' small files, the lexical writer's next block).
pub const PARSE_HEADROOM_MIB: u64 = 4;

/// The memory the files being parsed are taken to hold, against a budget.
pub struct ParseBudget {
    budget: u64,
    state: Mutex<Held>,
    freed: Condvar,
}

#[derive(Default)]
struct Held {
    /// The shares of the large files being parsed.
    bytes: u64,
    /// The files being parsed, small ones too.
    files: usize,
    /// A file is being parsed alone, or waits to be.
    alone: bool,
}

/// A file's share of the budget, given back when dropped.
pub struct ParsePermit<'a> {
    of: &'a ParseBudget,
    bytes: u64,
    alone: bool,
    counted: bool,
}

impl ParseBudget {
    /// A budget of `budget` bytes of parse memory.
    pub fn new(budget: u64) -> ParseBudget {
        ParseBudget {
            budget,
            state: Mutex::new(Held::default()),
            freed: Condvar::new(),
        }
    }

    /// The budget a build under a cap of `cap_mib` gives its parses: a third of what the
    /// process's own pages leave of the cap.
    pub fn under_cap(cap_mib: u64) -> ParseBudget {
        let free = cap_mib.saturating_sub(super::memory_cap::PROCESS_FLOOR_MIB) << 20;
        ParseBudget::new(free / 3)
    }

    /// The resident set, in MiB, at which a large file's parse under a cap of `cap_mib`
    /// stops.
    pub fn resident_bound_mib(cap_mib: u64) -> u64 {
        cap_mib.saturating_sub(PARSE_HEADROOM_MIB).max(1)
    }

    /// Waits until a file of `size` bytes may be parsed: a small file at once unless one is
    /// parsed alone, a large one when its share fits beside the shares held, or when none
    /// is held.
    pub fn admit(&self, size: u64) -> ParsePermit<'_> {
        let need = match size < SMALL_FILE_BYTES {
            true => 0,
            false => size.saturating_mul(PARSE_BYTES_FACTOR),
        };
        // A poisoned lock (a worker panicked holding it) admits: parsing goes on unbounded.
        let Some(mut held) = self.wait_while(|h| {
            h.alone || (need > 0 && h.bytes > 0 && h.bytes.saturating_add(need) > self.budget)
        }) else {
            return self.unbounded();
        };
        held.bytes += need;
        held.files += 1;
        ParsePermit {
            of: self,
            bytes: need,
            alone: false,
            counted: true,
        }
    }

    /// Waits until no other file is being parsed, and keeps every other worker from starting
    /// one until the permit is dropped. The caller holds no permit of its own.
    pub fn admit_alone(&self) -> ParsePermit<'_> {
        // One at a time: a second file to be parsed alone waits for the first.
        let Some(mut held) = self.wait_while(|h| h.alone) else {
            return self.unbounded();
        };
        held.alone = true;
        drop(held);
        let Some(mut held) = self.wait_while(|h| h.files > 0) else {
            return self.unbounded();
        };
        held.files += 1;
        ParsePermit {
            of: self,
            bytes: 0,
            alone: true,
            counted: true,
        }
    }

    fn wait_while(&self, mut blocked: impl FnMut(&Held) -> bool) -> Option<MutexGuard<'_, Held>> {
        let mut held = self.state.lock().ok()?;
        while blocked(&held) {
            held = self.freed.wait(held).ok()?;
        }
        Some(held)
    }

    fn unbounded(&self) -> ParsePermit<'_> {
        ParsePermit {
            of: self,
            bytes: 0,
            alone: false,
            counted: false,
        }
    }
}

impl Drop for ParsePermit<'_> {
    fn drop(&mut self) {
        if !self.counted {
            return;
        }
        if let Ok(mut held) = self.of.state.lock() {
            held.bytes = held.bytes.saturating_sub(self.bytes);
            held.files = held.files.saturating_sub(1);
            if self.alone {
                held.alone = false;
            }
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
        assert_eq!(budget.state.lock().unwrap().bytes, 0, "every share given back");
    }

    #[test]
    fn small_files_never_wait() {
        let budget = ParseBudget::new(0);
        let held = budget.admit(100 * 1024);
        // The budget is taken (and over): a small file passes anyway, at once.
        let small = budget.admit(SMALL_FILE_BYTES - 1);
        drop(small);
        drop(held);
        let h = budget.state.lock().unwrap();
        assert_eq!((h.bytes, h.files), (0, 0));
    }

    /// A file parsed alone starts only once the files in flight are done, and no file, small
    /// or large, starts beside it.
    #[test]
    fn a_file_parsed_alone_has_the_process_to_itself() {
        let budget = ParseBudget::new(u64::MAX);
        let (in_flight, alone_running, overlap) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
        std::thread::scope(|s| {
            for i in 0..12u64 {
                let (budget, in_flight, alone_running, overlap) =
                    (&budget, &in_flight, &alone_running, &overlap);
                s.spawn(move || {
                    if i % 4 == 1 {
                        let _permit = budget.admit_alone();
                        alone_running.fetch_add(1, Ordering::SeqCst);
                        if in_flight.load(Ordering::SeqCst) > 0 {
                            overlap.fetch_add(1, Ordering::SeqCst);
                        }
                        std::thread::sleep(Duration::from_millis(15));
                        alone_running.fetch_sub(1, Ordering::SeqCst);
                    } else {
                        let size = if i % 2 == 0 { 1024 } else { 200 * 1024 };
                        let _permit = budget.admit(size);
                        in_flight.fetch_add(1, Ordering::SeqCst);
                        if alone_running.load(Ordering::SeqCst) > 0 {
                            overlap.fetch_add(1, Ordering::SeqCst);
                        }
                        std::thread::sleep(Duration::from_millis(10));
                        in_flight.fetch_sub(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(
            overlap.load(Ordering::SeqCst),
            0,
            "nothing parsed beside a file parsed alone"
        );
        let h = budget.state.lock().unwrap();
        assert_eq!((h.bytes, h.files, h.alone), (0, 0, false));
    }
}
