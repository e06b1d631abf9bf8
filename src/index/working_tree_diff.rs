//! `WorkingTreeDiff`: which files changed, appeared or vanished since the build, walking the
//! tree under the build's own rules and hashing only files whose metadata moved.

use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

use super::{IndexError, IndexSnapshot, RepoWalker};
use crate::lang::LanguageRegistry;

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct WorkingTreeDiff {
    pub changed: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

impl WorkingTreeDiff {
    pub fn compute(root: &Path, snapshot: &IndexSnapshot) -> Result<WorkingTreeDiff, IndexError> {
        let registry = LanguageRegistry::builtin()?;
        let exclude = snapshot.index_dir().canonicalize().ok();
        let walked = RepoWalker::new(root, &snapshot.manifest.walk, registry, exclude).walk();
        let started = snapshot.manifest.build_started_unix_ns;
        let table = &snapshot.table;
        let changed: Vec<Option<String>> = walked
            .candidates
            .par_iter()
            .map(|c| {
                let r = table.find(c.path.as_str())?;
                if r.size == c.size && r.mtime_ns == c.mtime_ns && c.mtime_ns < started {
                    return None;
                }
                let same = std::fs::read(&c.abs)
                    .map(|b| *blake3::hash(&b).as_bytes() == r.hash)
                    .unwrap_or(false);
                (!same).then(|| c.path.to_string())
            })
            .collect();
        let mut diff = WorkingTreeDiff {
            changed: changed.into_iter().flatten().collect(),
            ..Default::default()
        };
        // A file skipped at build time (binary, minified) is not "added".
        let skipped: std::collections::HashSet<&str> =
            table.skipped.iter().map(|s| s.path.as_str()).collect();
        for c in &walked.candidates {
            if table.find(c.path.as_str()).is_none() && !skipped.contains(c.path.as_str()) {
                diff.added.push(c.path.to_string());
            }
        }
        for r in &table.files {
            if walked
                .candidates
                .binary_search_by(|c| c.path.cmp(&r.path))
                .is_err()
            {
                diff.removed.push(r.path.to_string());
            }
        }
        Ok(diff)
    }

    /// A cheaper check for answers that only report staleness: stats the indexed files (no
    /// walk; only files written in the tick the build started are hashed), so new files go
    /// unnoticed and a touched but identical file counts as changed. `ken index status` uses the full [`WorkingTreeDiff::compute`].
    pub fn quick(root: &Path, snapshot: &IndexSnapshot) -> WorkingTreeDiff {
        let started = snapshot.manifest.build_started_unix_ns;
        let states: Vec<(String, Option<bool>)> = snapshot
            .table
            .files
            .par_iter()
            .map(|r| {
                let abs = r.path.to_fs(root);
                let state = abs.metadata().ok().map(|m| {
                    let mtime = super::repo_walker::mtime_ns(&m);
                    if m.len() != r.size || mtime != r.mtime_ns {
                        return true;
                    }
                    // Written in the same clock tick the build started: compare contents.
                    mtime >= started
                        && std::fs::read(&abs).map_or(true, |b| *blake3::hash(&b).as_bytes() != r.hash)
                });
                (r.path.to_string(), state)
            })
            .collect();
        let mut diff = WorkingTreeDiff::default();
        for (path, state) in states {
            match state {
                None => diff.removed.push(path),
                Some(true) => diff.changed.push(path),
                Some(false) => {}
            }
        }
        diff
    }

    pub fn is_clean(&self) -> bool {
        self.changed.is_empty() && self.added.is_empty() && self.removed.is_empty()
    }
}
