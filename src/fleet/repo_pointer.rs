//! `RepoPointer`: which published snapshot is a repository's current one, kept in the
//! JetStream key-value bucket `ken_pointers` and moved only by compare-and-swap.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RepoPointer {
    pub repo: String,
    pub commit: String,
    /// The snapshot manifest's key in object storage.
    pub snapshot: String,
    pub files: u64,
    pub lines: u64,
    /// The worker that published it.
    pub worker: String,
    pub unix_ms: u64,
    /// The bucket entry's revision (set when read; the swap's precondition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<u64>,
}

/// What a compare-and-swap of a pointer did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PointerMove {
    /// The pointer now names this commit (at this revision).
    Moved { revision: u64, swaps_rejected: u32 },
    /// It already named this commit.
    Already { revision: u64 },
    /// It names a descendant of this commit: left where it is.
    Superseded { current: String },
}
