//! `Deps`: what one file's resolution read — files, names and modules — so an incremental
//! build can tell which unchanged files must be resolved again.
//!
//! Soundness argument: every table lookup is keyed by a name (its last component) or a
//! module, and its answer can only change when a file defining that name or forming that
//! module changes; every read of another file's content (its imports, its class bases) is
//! recorded as that file. A file whose deps avoid all of these is resolved exactly as before.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// Sorted, deduplicated keys; names and modules as 64-bit hashes (a collision only causes an
/// unneeded re-resolution).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Deps {
    pub files: Vec<u32>,
    pub names: Vec<u64>,
    pub modules: Vec<u64>,
}

/// FNV-1a: stable across builds and platforms, unlike the std hasher.
pub fn key_hash(s: &str) -> u64 {
    key_hash_more(KEY_HASH_START, s)
}

/// The hash of the empty key: [`key_hash_more`] goes on from it.
pub(super) const KEY_HASH_START: u64 = 0xcbf2_9ce4_8422_2325;

/// The hash of a key `h` hashes, followed by `s`: a key hashed in pieces, never built.
pub(super) fn key_hash_more(mut h: u64, s: &str) -> u64 {
    for b in s.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[derive(Debug, Default)]
pub struct DepSet {
    pub files: HashSet<u32>,
    pub names: HashSet<u64>,
    pub modules: HashSet<u64>,
}

impl DepSet {
    pub fn name(&mut self, name: &str) {
        self.names.insert(key_hash(name));
    }

    pub fn module(&mut self, module: &str) {
        self.modules.insert(key_hash(module));
    }

    pub fn absorb(&mut self, other: DepSet) {
        self.files.extend(other.files);
        self.names.extend(other.names);
        self.modules.extend(other.modules);
    }

    pub fn merge(&mut self, d: &Deps) {
        self.files.extend(d.files.iter().copied());
        self.names.extend(d.names.iter().copied());
        self.modules.extend(d.modules.iter().copied());
    }

    pub fn finish(self) -> Deps {
        let sorted = |s: HashSet<u64>| {
            let mut v: Vec<u64> = s.into_iter().collect();
            v.sort_unstable();
            v
        };
        let mut files: Vec<u32> = self.files.into_iter().collect();
        files.sort_unstable();
        Deps {
            files,
            names: sorted(self.names),
            modules: sorted(self.modules),
        }
    }
}

impl Deps {
    /// Whether any recorded key is among the changed ones.
    pub fn touches(&self, files: &HashSet<u32>, names: &HashSet<u64>, modules: &HashSet<u64>) -> bool {
        self.files.iter().any(|f| files.contains(f))
            || self.names.iter().any(|n| names.contains(n))
            || self.modules.iter().any(|m| modules.contains(m))
    }
}
