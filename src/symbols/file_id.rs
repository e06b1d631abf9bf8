//! `FileId`: a file's position in one index generation's file table.

use serde::{Deserialize, Serialize};

/// Dense id of a file inside one index generation (its row in the sorted file table).
/// Ids are not stable across generations; `RepoPath` is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct FileId(pub u32);

impl FileId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
