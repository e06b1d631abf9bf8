//! `index_status`: what the index holds (files, symbols, parts, skipped files, parse errors),
//! what changed in the working tree since the build, and how the server keeps it fresh.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::watch_state::RefreshReport;
use super::{Analysis, ApiError};
use crate::context::count_tokens;
use crate::index::{BuildStats, Coverage, SkippedFile, Summary, WorkingTreeDiff};
use crate::symbols::Diagnostic;

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IndexStatusRequest {
    /// Every skipped file and every file with parse errors, not only the first 20 of each.
    #[serde(default)]
    pub details: bool,
    /// Token budget (cl100k) for the whole answer: the lists of skipped files and parse errors
    /// are cut to fit (counts stay in `summary`).
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FileDiagnostics {
    pub path: String,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct IndexStatusResponse {
    pub root: String,
    pub index_dir: String,
    pub ken_version: String,
    pub created_unix_ms: u64,
    pub age_secs: u64,
    pub summary: Summary,
    pub last_build: BuildStats,
    /// Skipped files with the reason (the first 20 unless `details`; counts are in `summary`).
    pub skipped: Vec<SkippedFile>,
    pub unsupported_by_extension: BTreeMap<String, u64>,
    /// Files with parse errors (the first 20 unless `details`).
    pub diagnostics: Vec<FileDiagnostics>,
    /// Files changed, added or removed since the build (a full walk).
    pub working_tree: WorkingTreeDiff,
    /// What each part of this generation holds (lexical, graph, vectors, history).
    pub parts: crate::index::GenerationParts,
    /// A server watching the repository: whether it watches, and its last refresh.
    pub watching: bool,
    pub last_refresh: Option<RefreshReport>,
    /// The lists were cut (to 20 entries each without `details`, or to fit `max_tokens`).
    pub lists_truncated: bool,
    pub generation: u64,
    pub coverage: Coverage,
}

/// Entries listed without `details`.
const BRIEF: usize = 20;

impl Analysis {
    pub fn index_status(
        &self,
        r: &IndexStatusRequest,
        watch: Option<Option<RefreshReport>>,
    ) -> Result<IndexStatusResponse, ApiError> {
        let s = self.snapshot();
        let m = &s.manifest;
        let working_tree = WorkingTreeDiff::compute(self.root(), s)?;
        let max_tokens = super::page::check_tokens(r.max_tokens)?;
        let keep = if r.details { usize::MAX } else { BRIEF };
        let mut coverage = match watch {
            Some(_) => self.coverage(),
            None => Coverage::of(s, Some(&working_tree)),
        };
        coverage.damaged = self.damaged_parts();
        let mut out = IndexStatusResponse {
            root: self.root().display().to_string(),
            index_dir: s.index_dir().display().to_string(),
            ken_version: m.ken_version.clone(),
            created_unix_ms: m.created_unix_ms,
            age_secs: coverage.index_age_secs,
            summary: m.summary.clone(),
            last_build: m.stats.clone(),
            skipped: s.table.skipped.iter().take(keep).cloned().collect(),
            unsupported_by_extension: s.table.unsupported_by_extension.clone(),
            diagnostics: s
                .table
                .files
                .iter()
                .filter(|f| !f.diagnostics.is_empty())
                .take(keep)
                .map(|f| FileDiagnostics {
                    path: f.path.as_str().to_string(),
                    diagnostics: f.diagnostics.clone(),
                })
                .collect(),
            working_tree,
            parts: m.parts.clone(),
            watching: watch.is_some(),
            last_refresh: watch.flatten(),
            lists_truncated: false,
            generation: self.generation(),
            coverage,
        };
        out.lists_truncated = out.skipped.len() < s.table.skipped.len()
            || (out.diagnostics.len() as u64) < m.summary.files_with_diagnostics;
        if let Some(budget) = max_tokens {
            // Halve the lists until the answer fits (they may end empty; the counts remain).
            let tokens =
                |o: &IndexStatusResponse| serde_json::to_string(o).map(|t| count_tokens(&t)).unwrap_or(0);
            while tokens(&out) > budget && !(out.skipped.is_empty() && out.diagnostics.is_empty()) {
                out.skipped.truncate(out.skipped.len() / 2);
                out.diagnostics.truncate(out.diagnostics.len() / 2);
                out.lists_truncated = true;
            }
        }
        Ok(out)
    }
}
