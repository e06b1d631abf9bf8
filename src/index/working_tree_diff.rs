//! `WorkingTreeDiff`: which files changed, appeared or vanished since the build, walking the
//! tree under the build's own rules and hashing only files whose metadata moved.

use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

use super::{FileRecord, IndexError, IndexSnapshot, RepoWalker};
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
                let same = crate::util::read_regular(&c.abs)
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
        let files = &snapshot.table.files;
        let states: Vec<Option<bool>> = stat_all(root, files)
            .into_par_iter()
            .zip(files.par_iter())
            .map(|(stat, r)| {
                stat.map(|(len, mtime)| {
                    if len != r.size || mtime != r.mtime_ns {
                        return true;
                    }
                    // Written in the same clock tick the build started: compare contents.
                    mtime >= started
                        && crate::util::read_regular(&r.path.to_fs(root))
                            .map_or(true, |b| *blake3::hash(&b).as_bytes() != r.hash)
                })
            })
            .collect();
        let mut diff = WorkingTreeDiff::default();
        for (r, state) in files.iter().zip(states) {
            match state {
                None => diff.removed.push(r.path.to_string()),
                Some(true) => diff.changed.push(r.path.to_string()),
                Some(false) => {}
            }
        }
        diff
    }

    pub fn is_clean(&self) -> bool {
        self.changed.is_empty() && self.added.is_empty() && self.removed.is_empty()
    }
}

/// The size and mtime (ns since the epoch, as [`super::repo_walker::mtime_ns`] reads them) of
/// each file, `None` where it cannot be stat'ed. Files sorted by path come in runs of one
/// folder: each folder is opened once and its files stat'ed relative to it, so the kernel
/// resolves each file's folders once a run, not once a file (that resolution was a tenth of
/// a cold query's samples on a 2.8M-line tree). Symbolic links are followed, as by `metadata`.
fn stat_all(root: &Path, files: &[FileRecord]) -> Vec<Option<(u64, i64)>> {
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, r) in files.iter().enumerate() {
        match runs.last_mut() {
            Some(run) if files[run.start].path.parent() == r.path.parent() => run.end = i + 1,
            _ => runs.push(i..i + 1),
        }
    }
    runs.par_iter()
        .flat_map_iter(|run| {
            let parent = files[run.start].path.parent();
            // A path-only descriptor: enough to stat relative to, and cheaper to open than a
            // readable one (no read permission checked, no file state set up).
            let flags =
                nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_CLOEXEC;
            let open = |dir: &Path| nix::fcntl::open(dir, flags, nix::sys::stat::Mode::empty());
            let dir = match parent.is_empty() {
                true => open(root),
                false => open(&root.join(parent)),
            };
            files[run.clone()].iter().map(move |r| match dir.as_ref() {
                Ok(dir) => {
                    let flags = nix::fcntl::AtFlags::empty();
                    let st = nix::sys::stat::fstatat(dir, r.path.file_name(), flags).ok()?;
                    let ns = i128::from(st.st_mtime) * 1_000_000_000 + i128::from(st.st_mtime_nsec);
                    Some((st.st_size as u64, i64::try_from(ns).unwrap_or(i64::MAX)))
                }
                // A folder that can be passed through but not opened (no read permission):
                // its files are still there, stat'ed by their whole paths.
                Err(_) => {
                    let m = r.path.to_fs(root).metadata().ok()?;
                    Some((m.len(), super::repo_walker::mtime_ns(&m)))
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbols::RepoPath;

    fn record(path: &str) -> FileRecord {
        FileRecord {
            path: RepoPath::parse(path).unwrap(),
            language: "python".into(),
            size: 0,
            mtime_ns: 0,
            hash: [0; 32],
            lines: 0,
            module: String::new(),
            package: None,
            symbol_counts: Default::default(),
            references: 0,
            imports: 0,
            diagnostics: Vec::new(),
            segment: 0,
            slot: 0,
        }
    }

    /// Stat'ed by folder, each file reads as its whole path's metadata does (what a build
    /// records), across folder runs, at the root, and for a file or folder that is gone.
    #[test]
    fn files_stat_by_folder_as_by_their_whole_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("top.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("a/one.py"), "y = 22\n").unwrap();
        std::fs::write(root.join("a/two.py"), "z = 333\n").unwrap();
        std::fs::write(root.join("a/b/three.py"), "w = 4444\n").unwrap();
        let paths = [
            "a/b/three.py",
            "a/gone.py",
            "a/one.py",
            "a/two.py",
            "nowhere/x.py",
            "top.py",
        ];
        let files: Vec<FileRecord> = paths.iter().map(|p| record(p)).collect();
        let got = stat_all(root, &files);
        for (p, g) in paths.iter().zip(&got) {
            let want = root
                .join(p)
                .metadata()
                .ok()
                .map(|m| (m.len(), super::super::repo_walker::mtime_ns(&m)));
            assert_eq!(*g, want, "{p}");
        }
        assert!(got[1].is_none() && got[4].is_none());
        assert_eq!(got[5].map(|(len, _)| len), Some(6));
    }
}
