//! `ReaderLease`: a process's claim on a committed generation for as long as it reads it.
//!
//! ```text
//! .kenning/readers/gate                  shared-locked while a reader picks its generation
//! .kenning/readers/gen-N.<pid>.<seq>     one per open snapshot, exclusively locked by its holder
//! ```
//! Invariants:
//! - A generation whose lease file is locked is never collected, nor the segments it names:
//!   a server answering from generation N keeps reading N while builds run beside it.
//! - A lease is taken under a shared lock of `gate`, and garbage collection lists the leases
//!   under an exclusive one. A reader either took its lease before the listing (so the listing
//!   sees it) or read `CURRENT` after the commit that precedes every collection (so it chose a
//!   generation the collection keeps).
//! - The OS drops a dead process's locks: a lease file whose lock can be taken is left over
//!   from a process that exited, and the collector removes it. Nothing depends on a holder
//!   cleaning up after itself.
//! - An index folder a reader cannot write (a read-only mount) gives no lease, not an error:
//!   no build can run there either.

use std::fs::{self, File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Lease files of this process get distinct names.
static NEXT_LEASE: AtomicU64 = AtomicU64::new(0);

const READERS_DIR: &str = "readers";
const GATE: &str = "gate";

/// Held while a reader picks a generation and leases it (shared) or while the collector lists
/// the leases (exclusive). Released on drop.
#[derive(Debug)]
pub struct ReaderGate {
    _file: File,
}

/// A reader's claim on one generation; released (and its file removed) on drop.
#[derive(Debug)]
pub struct ReaderLease {
    file: File,
    path: PathBuf,
}

impl Drop for ReaderLease {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

fn readers_dir(index_dir: &Path) -> PathBuf {
    index_dir.join(READERS_DIR)
}

fn open_gate(index_dir: &Path) -> Option<File> {
    let dir = readers_dir(index_dir);
    fs::create_dir_all(&dir).ok()?;
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(GATE))
        .ok()
}

/// The gate a reader holds (shared) while it reads `CURRENT` and leases what it names.
/// `None` where the folder cannot be written.
pub fn reader_gate(index_dir: &Path) -> Option<ReaderGate> {
    let file = open_gate(index_dir)?;
    file.lock_shared().ok()?;
    Some(ReaderGate { _file: file })
}

/// Leases `generation` for this process. Call with the [`reader_gate`] held.
pub fn lease(index_dir: &Path, generation: u64) -> Option<ReaderLease> {
    let seq = NEXT_LEASE.fetch_add(1, Ordering::Relaxed);
    let name = format!("gen-{generation}.{}.{seq}", std::process::id());
    let path = readers_dir(index_dir).join(name);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .ok()?;
    if file.try_lock().is_err() {
        let _ = fs::remove_file(&path);
        return None;
    }
    Some(ReaderLease { file, path })
}

/// The generations some live process holds a lease on, with the gate held exclusively so no
/// reader is between reading `CURRENT` and leasing. Lease files of exited processes are
/// removed on the way.
pub fn leased_generations(index_dir: &Path) -> Vec<u64> {
    let Some(gate) = open_gate(index_dir) else {
        return Vec::new();
    };
    if gate.lock().is_err() {
        return Vec::new();
    }
    let mut live = Vec::new();
    let Ok(entries) = fs::read_dir(readers_dir(index_dir)) else {
        return live;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(generation) = parse_lease_name(&name) else {
            continue;
        };
        let Ok(file) = OpenOptions::new().read(true).write(true).open(e.path()) else {
            continue;
        };
        match file.try_lock() {
            // Lockable: its holder has exited (the OS released the lock).
            Ok(()) => {
                let _ = fs::remove_file(e.path());
            }
            Err(_) => live.push(generation),
        }
    }
    live.sort_unstable();
    live.dedup();
    live
}

fn parse_lease_name(name: &str) -> Option<u64> {
    name.strip_prefix("gen-")?.split('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lease_is_live_and_a_dropped_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let gate = reader_gate(dir.path()).unwrap();
        let a = lease(dir.path(), 7).unwrap();
        let _b = lease(dir.path(), 9).unwrap();
        drop(gate);
        assert_eq!(leased_generations(dir.path()), vec![7, 9]);
        drop(a);
        assert_eq!(leased_generations(dir.path()), vec![9]);
    }

    #[test]
    fn a_lease_file_left_by_an_exited_process_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(readers_dir(dir.path())).unwrap();
        // No process holds a lock on this file: as if its holder was killed.
        let stale = readers_dir(dir.path()).join("gen-3.99999.0");
        fs::write(&stale, b"").unwrap();
        assert!(leased_generations(dir.path()).is_empty());
        assert!(!stale.exists());
    }

    #[test]
    fn lease_names_parse_back_to_their_generation() {
        assert_eq!(parse_lease_name("gen-12.345.6"), Some(12));
        assert_eq!(parse_lease_name("gate"), None);
    }
}
