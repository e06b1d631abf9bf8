//! `Manifest`: what one index generation contains, written last, as JSON, so a person can read
//! it and an old or foreign index is recognised before anything binary is decoded.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::WalkConfig;

pub const FORMAT_NAME: &str = "kenning-index";

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    pub generation: u64,
    /// The `ken` that wrote it.
    pub ken_version: String,
    /// Digest of the grammars and queries the records were extracted with.
    pub extractor: String,
    pub created_unix_ms: u64,
    /// When the build began, on the filesystem's clock (the lock file's mtime): a file whose
    /// mtime is not older is re-hashed next time even if its size and mtime match (git's
    /// "racily clean" rule).
    pub build_started_unix_ns: i64,
    pub walk: WalkConfig,
    /// Symbol segments this generation reads, in id order.
    pub segments: Vec<SegmentInfo>,
    /// Parts that other layers (lexical, vector, graph, history) store in this generation.
    #[serde(default)]
    pub parts: super::GenerationParts,
    pub stats: BuildStats,
    pub summary: Summary,
    /// blake3 of `files.bin`, checked when the file table is read (absent in older indexes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_blake3: Option<String>,
    /// Size, mtime and inode of every file the generation reads (`gen/<path>` inside its
    /// folder, `segments/seg-<id>.bin`) as committed: the next build trusts a file whose
    /// stamp still matches instead of hashing it ([`super::file_stamp`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub stamps: BTreeMap<String, super::file_stamp::FileStamp>,
    /// blake3 of this file's bytes with this value written as 64 zeros: a flipped byte
    /// anywhere in the manifest is found before any of it is trusted (absent in older indexes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// The placeholder the manifest's digest is computed over.
const DIGEST_ZEROS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

impl Manifest {
    /// The manifest's bytes as written: pretty JSON carrying its own digest.
    pub(crate) fn into_bytes_with_digest(mut self) -> serde_json::Result<Vec<u8>> {
        self.digest = Some(DIGEST_ZEROS.to_string());
        let mut bytes = serde_json::to_vec_pretty(&self)?;
        let hex = blake3::hash(&bytes).to_hex();
        if let Some(at) = find(&bytes, DIGEST_ZEROS.as_bytes()) {
            bytes[at..at + DIGEST_ZEROS.len()].copy_from_slice(hex.as_bytes());
        }
        Ok(bytes)
    }

    /// Checks the digest a manifest's bytes carry (`digest`, the value parsed from them);
    /// `Err` says what is wrong.
    pub(crate) fn check_digest(bytes: &[u8], digest: &str) -> Result<(), String> {
        if digest.len() != DIGEST_ZEROS.len() {
            return Err(format!("its digest {digest:?} is not a blake3 hash"));
        }
        let Some(at) = find(bytes, digest.as_bytes()) else {
            return Err("its digest is not where it was written".to_string());
        };
        let mut zeroed = bytes.to_vec();
        zeroed[at..at + DIGEST_ZEROS.len()].copy_from_slice(DIGEST_ZEROS.as_bytes());
        match blake3::hash(&zeroed).to_hex().as_str() == digest {
            true => Ok(()),
            false => Err("its digest does not match its bytes".to_string()),
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SegmentInfo {
    pub id: u32,
    /// Records in the segment (live or not).
    pub slots: u32,
    pub bytes: u64,
    /// blake3 of the file, checked on load.
    pub blake3: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BuildStats {
    /// The previous generation was not used (first build, `--full`, new extractor or format).
    pub full: bool,
    pub parsed: u64,
    pub reused: u64,
    pub removed: u64,
    /// Segments rewritten into one because too much of them was dead.
    pub compacted: bool,
    pub threads: usize,
    pub walk_ms: u64,
    pub parse_ms: u64,
    pub write_ms: u64,
    pub total_ms: u64,
    /// Wall time of each phase after the parse (`assemble`, `lexical`, `graph`, `vectors`,
    /// `history`), so a build's time is attributed where it goes; `walk_ms` and
    /// `parse_ms` are the two before.
    #[serde(default)]
    pub phases_ms: std::collections::BTreeMap<String, u64>,
    /// The process's resident-memory peak so far at the end of each phase (`walk`, `parse`
    /// and the phases of `phases_ms`), in MiB: the phase where it rises is the one that
    /// raised it. Empty where it cannot be read (outside Linux).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub phases_peak_mib: std::collections::BTreeMap<String, u64>,
    /// The build's resident-memory peak, in MiB (the highest of `phases_peak_mib`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_mib: Option<u64>,
    /// The memory cap the build ran under (`--max-memory`), in MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory_mib: Option<u64>,
    /// Where that cap came from (`given`, or `available`: three quarters of the memory
    /// available when the build started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory_from: Option<super::CapSource>,
    /// Parts a first-stage build left for the next build (`graph`, `semantic`, `history`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deferred: Vec<String>,
    /// Files the walk found that this generation has not read yet: a checkpoint of a first
    /// build (the next build reads them, reusing what is here).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pending: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LanguageSummary {
    pub files: u64,
    pub lines: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub files: u64,
    pub lines: u64,
    pub bytes: u64,
    pub by_language: BTreeMap<String, LanguageSummary>,
    pub symbols_by_kind: BTreeMap<String, u64>,
    pub references: u64,
    pub imports: u64,
    pub skipped_by_reason: BTreeMap<String, u64>,
    /// Files with at least one diagnostic, by diagnostic kind.
    pub diagnostics_by_kind: BTreeMap<String, u64>,
    pub files_with_diagnostics: u64,
    /// Files not read because no language reads them, by extension (`""`: none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unsupported_by_extension: BTreeMap<String, u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
