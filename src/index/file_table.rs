//! `FileTable`: every indexed file with its facts, and every skipped file with its reason.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::SkipReason;
use crate::symbols::{Diagnostic, RepoPath, SymbolKind};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileRecord {
    pub path: RepoPath,
    pub language: String,
    pub size: u64,
    /// Modification time in nanoseconds since the epoch, as last seen.
    pub mtime_ns: i64,
    pub hash: [u8; 32],
    pub lines: u32,
    /// The module path (`requests.models`, `grep_cli::pattern`), recomputed every build.
    pub module: String,
    /// The package the file declares, if any (Java, Go).
    pub package: Option<String>,
    pub symbol_counts: BTreeMap<SymbolKind, u32>,
    pub references: u32,
    pub imports: u32,
    pub diagnostics: Vec<Diagnostic>,
    /// Where the file's symbols are: a segment id and the slot inside it.
    pub segment: u32,
    pub slot: u32,
}

impl FileRecord {
    pub fn hash_hex(&self) -> String {
        blake3::Hash::from_bytes(self.hash).to_hex().to_string()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SkippedFile {
    /// Repository-relative, `/`-separated (lossy when the name is not UTF-8).
    pub path: String,
    pub reason: SkipReason,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileTable {
    /// Sorted by path; a file's position is its `FileId`.
    #[serde(deserialize_with = "records_presized")]
    pub files: Vec<FileRecord>,
    /// Sorted by path. Files without a grammar are only counted, by extension, below.
    pub skipped: Vec<SkippedFile>,
    pub unsupported_by_extension: BTreeMap<String, u64>,
}

/// The records, in a vector made to the length the encoding gives (up to a bound a damaged
/// length cannot pass by much): serde's own stops at 1 MiB and grows from there, copying
/// the records read so far, a cold query's millisecond on a 12,000-file tree.
fn records_presized<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<FileRecord>, D::Error> {
    struct Records;
    impl<'de> serde::de::Visitor<'de> for Records {
        type Value = Vec<FileRecord>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a sequence of file records")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            const MOST: usize = 1 << 18;
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MOST));
            while let Some(r) = seq.next_element()? {
                out.push(r);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Records)
}

impl FileTable {
    pub fn find(&self, path: &str) -> Option<&FileRecord> {
        self.files
            .binary_search_by(|r| r.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }
}
