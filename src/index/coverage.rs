//! `Coverage`: what an answer was computed over, attached to every result.

use serde::Serialize;

use super::{IndexSnapshot, WorkingTreeDiff};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Coverage {
    pub files_indexed: u64,
    pub files_skipped: u64,
    /// Indexed files with syntax errors or undecodable bytes (indexed as far as recovered).
    pub files_with_errors: u64,
    /// Working-tree files changed, added or removed since the build; `None` if not checked.
    /// Query commands count indexed files whose metadata moved or that vanished
    /// ([`WorkingTreeDiff::quick`]); `ken index status` also finds new files.
    pub stale: Option<u64>,
    pub generation: u64,
    pub index_age_secs: u64,
    /// Parts of the index that could not be read (damaged or missing files), each with why and
    /// the command that repairs it; the answer was made without them (or is an error).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub damaged: Vec<String>,
}

impl Coverage {
    pub fn of(snapshot: &IndexSnapshot, diff: Option<&WorkingTreeDiff>) -> Coverage {
        let s = &snapshot.manifest.summary;
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        Coverage {
            files_indexed: s.files,
            files_skipped: s.skipped_by_reason.values().sum(),
            files_with_errors: s.files_with_diagnostics,
            stale: diff.map(|d| (d.changed.len() + d.added.len() + d.removed.len()) as u64),
            generation: snapshot.generation(),
            index_age_secs: now_ms.saturating_sub(snapshot.manifest.created_unix_ms) / 1000,
            damaged: Vec::new(),
        }
    }
}
