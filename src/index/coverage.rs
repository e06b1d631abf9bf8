//! `Coverage`: what an answer was computed over, attached to every result.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{IndexSnapshot, WorkingTreeDiff};
use crate::lang::text_kind;

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
    /// Files read by a grammar, by language.
    pub languages: BTreeMap<String, u64>,
    /// Files read as text (docs and config: no symbols, no graph), by format.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub read_as_text: BTreeMap<String, u64>,
    /// Files no language reads, by extension (`""`: none): the five most common, the rest
    /// summed under `"other"`. Answers say nothing about these files.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_read: BTreeMap<String, u64>,
    /// Parts this generation does not have yet: a first-stage build (`ken index build
    /// --quick`, or a server's first build) answers from symbols and the lexical part while
    /// the next build adds these (`graph`, `semantic`, `history`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_built_yet: Vec<String>,
    /// Files the build found but has not read yet: the generation is a checkpoint of a first
    /// build still going (or stopped; the next build reads them). Answers say nothing of them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_read_yet: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Extensions named in `not_read` before the rest is summed.
const NOT_READ_SHOWN: usize = 5;

/// The most common unread extensions, the rest summed under `other`.
fn not_read(by_ext: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    let mut v: Vec<(&String, &u64)> = by_ext.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    let mut out: BTreeMap<String, u64> = v
        .iter()
        .take(NOT_READ_SHOWN)
        .map(|(k, n)| ((*k).clone(), **n))
        .collect();
    let rest: u64 = v.iter().skip(NOT_READ_SHOWN).map(|(_, n)| **n).sum();
    if rest > 0 {
        *out.entry("other".to_string()).or_default() += rest;
    }
    out
}

impl Coverage {
    pub fn of(snapshot: &IndexSnapshot, diff: Option<&WorkingTreeDiff>) -> Coverage {
        let s = &snapshot.manifest.summary;
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let (read_as_text, languages): (BTreeMap<String, u64>, BTreeMap<String, u64>) = s
            .by_language
            .iter()
            .map(|(l, x)| (l.clone(), x.files))
            .partition(|(l, _)| text_kind(l).is_some());
        Coverage {
            files_indexed: s.files,
            files_skipped: s.skipped_by_reason.values().sum(),
            files_with_errors: s.files_with_diagnostics,
            stale: diff.map(|d| (d.changed.len() + d.added.len() + d.removed.len()) as u64),
            generation: snapshot.generation(),
            index_age_secs: now_ms.saturating_sub(snapshot.manifest.created_unix_ms) / 1000,
            damaged: Vec::new(),
            languages,
            read_as_text,
            not_read: not_read(&s.unsupported_by_extension),
            not_built_yet: snapshot.manifest.stats.deferred.clone(),
            not_read_yet: snapshot.manifest.stats.pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_read_names_the_five_most_common_and_sums_the_rest() {
        let by_ext: BTreeMap<String, u64> = [
            ("md", 9),
            ("yml", 7),
            ("png", 5),
            ("", 4),
            ("txt", 3),
            ("lock", 2),
            ("svg", 1),
        ]
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect();
        let shown = not_read(&by_ext);
        assert_eq!(shown.len(), 6);
        assert_eq!(shown.get("md"), Some(&9));
        assert_eq!(shown.get(""), Some(&4));
        assert_eq!(shown.get("other"), Some(&3));
        assert!(!shown.contains_key("svg"));
        assert_eq!(shown.values().sum::<u64>(), by_ext.values().sum::<u64>());
    }
}
