//! `CheckpointStore`: the workspace's tree saved before every step that may change files, in a
//! shadow git repository outside the workspace (the user's own `.git`, history and index are
//! never touched), so `ken agent rollback` and `ken exec --undo` can put back every byte and
//! mode of any earlier step. It lives in `exec/` so that `ken exec` has an undo without the
//! agent.
//!
//! The checkpoint rule is the same for `ken exec` and the agent: every command that may write
//! work ([`CommandVerdict::may_write`](super::CommandVerdict::may_write): any not known to be
//! read-only, opaque programs included) is checkpointed before it runs, and a command whose
//! checkpoint cannot be saved does not run. [`CheckpointStore::lost_since`] then says which
//! saved files the command deleted or overwrote.
//!
//! Invariants: a checkpoint holds every file of the tree that is not ignored: tracked work,
//! uncommitted edits and untracked files alike; `.git` and `.kenning` are never saved or
//! restored; a rollback saves the tree it replaces first, so a rollback can itself be undone;
//! one process at a time changes the shadow repository (a lock file in it), so runs side by
//! side in one session do not fail on git's own index lock.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

#[derive(Debug, thiserror::Error)]
#[error("checkpoints in {dir}: {detail}")]
pub struct CheckpointError {
    pub dir: PathBuf,
    pub detail: String,
}

#[derive(Debug, Clone)]
pub struct CheckpointStore {
    git_dir: PathBuf,
    work_tree: PathBuf,
}

/// One saved tree.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Checkpoint {
    pub commit: String,
    pub label: String,
}

/// How a file a checkpoint saved was lost since.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FileLoss {
    Deleted,
    /// Its contents (or its kind: a file become a link) are not what was saved.
    Overwritten,
}

impl FileLoss {
    pub fn as_str(self) -> &'static str {
        match self {
            FileLoss::Deleted => "deleted",
            FileLoss::Overwritten => "overwritten",
        }
    }
}

/// A file a checkpoint saved that is gone or different now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LostFile {
    /// Relative to the work tree, `/`-separated.
    pub path: String,
    pub loss: FileLoss,
}

/// The file, in the shadow repository, that one process holds while it changes it.
const LOCK_FILE: &str = "kenning.lock";

impl CheckpointStore {
    /// The shadow repository at `git_dir` for the tree at `work_tree`. Nothing is written
    /// before the first save, so opening the store of a command that writes nothing leaves no
    /// trace (and `ken exec --undo` can say there is nothing to undo).
    pub fn open(git_dir: &Path, work_tree: &Path) -> Result<CheckpointStore, CheckpointError> {
        Ok(CheckpointStore {
            git_dir: git_dir.to_path_buf(),
            work_tree: work_tree.to_path_buf(),
        })
    }

    fn err(&self, detail: String) -> CheckpointError {
        CheckpointError {
            dir: self.git_dir.clone(),
            detail,
        }
    }

    /// Runs `f` holding the store's lock, the shadow repository made first if it is not there.
    fn locked<T>(&self, f: impl FnOnce() -> Result<T, CheckpointError>) -> Result<T, CheckpointError> {
        std::fs::create_dir_all(&self.git_dir).map_err(|e| self.err(e.to_string()))?;
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.git_dir.join(LOCK_FILE))
            .map_err(|e| self.err(format!("{LOCK_FILE}: {e}")))?;
        lock.lock().map_err(|e| self.err(format!("{LOCK_FILE}: {e}")))?;
        self.init()?;
        // The lock goes with `lock`, after `f`.
        f()
    }

    fn init(&self) -> Result<(), CheckpointError> {
        if self.git_dir.join("HEAD").exists() {
            return Ok(());
        }
        let out = Command::new("git")
            .args(["init", "-q", "--bare"])
            .arg(&self.git_dir)
            .output()
            .map_err(|e| self.err(format!("cannot run git: {e}")))?;
        if !out.status.success() {
            return Err(self.err(format!(
                "git init: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        std::fs::create_dir_all(self.git_dir.join("info")).map_err(|e| self.err(e.to_string()))?;
        std::fs::write(self.git_dir.join("info/exclude"), "/.git\n/.kenning\n")
            .map_err(|e| self.err(e.to_string()))
    }

    fn git(&self, args: &[&str]) -> Result<String, CheckpointError> {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(&self.git_dir)
            .arg("--work-tree")
            .arg(&self.work_tree)
            .args([
                "-c",
                "user.name=kenning",
                "-c",
                "user.email=agent@kenning.invalid",
            ])
            .args([
                "-c",
                "commit.gpgsign=false",
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "core.autocrlf=false",
            ])
            .args(args)
            .current_dir(&self.work_tree)
            .output()
            .map_err(|e| self.err(format!("cannot run git: {e}")))?;
        if !out.status.success() {
            return Err(self.err(format!(
                "git {}: {}",
                args.first().copied().unwrap_or(""),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Saves the tree as it is now (every file not ignored, tracked or not); returns the
    /// commit.
    pub fn save(&self, label: &str) -> Result<String, CheckpointError> {
        self.locked(|| self.save_locked(label))
    }

    fn save_locked(&self, label: &str) -> Result<String, CheckpointError> {
        self.git(&["add", "-A", "--", "."])?;
        self.git(&["commit", "-q", "--allow-empty", "--no-verify", "-m", label])?;
        self.git(&["rev-parse", "HEAD"])
    }

    /// Every checkpoint, oldest first.
    pub fn list(&self) -> Result<Vec<Checkpoint>, CheckpointError> {
        if self.git(&["rev-parse", "-q", "--verify", "HEAD"]).is_err() {
            return Ok(Vec::new());
        }
        let log = self.git(&["log", "--reverse", "--format=%H %s"])?;
        Ok(log
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(c, s)| Checkpoint {
                commit: c.to_string(),
                label: s.to_string(),
            })
            .collect())
    }

    /// Puts the tree back as `commit` saved it: changed files restored, files made since
    /// removed (ignored files, `.git` and `.kenning` left alone). The tree it replaces is
    /// saved first; its commit is returned.
    pub fn restore(&self, commit: &str) -> Result<String, CheckpointError> {
        let short = &commit[..commit.len().min(12)];
        self.locked(|| {
            let before = self.save_locked(&format!("before rollback to {short}"))?;
            self.git(&["read-tree", "--reset", "-u", commit])?;
            self.git(&["clean", "-fdq"])?;
            // Recorded on top, so every earlier checkpoint stays listed and reachable.
            self.save_locked(&format!("rolled back to {short}"))?;
            Ok(before)
        })
    }

    /// The files `commit` saved that are gone from the tree now, or whose contents or kind
    /// differ: what the steps since then took away (files made since are no loss). Sorted
    /// by path.
    pub fn lost_since(&self, commit: &str) -> Result<Vec<LostFile>, CheckpointError> {
        let out = self.locked(|| {
            // A mode change alone (`chmod +x`) loses no work.
            self.git(&[
                "-c",
                "core.fileMode=false",
                "diff",
                "--no-renames",
                "--no-ext-diff",
                "--ignore-submodules",
                "--name-status",
                "-z",
                commit,
                "--",
            ])
        })?;
        let mut fields = out.split('\0');
        let mut lost = Vec::new();
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            let loss = match status {
                "D" => FileLoss::Deleted,
                "M" | "T" => FileLoss::Overwritten,
                _ => continue,
            };
            lost.push(LostFile {
                path: path.to_string(),
                loss,
            });
        }
        lost.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(lost)
    }
}

impl CheckpointStore {
    /// `git diff --stat` from the `start` checkpoint to the tree as it is now.
    pub fn diff_stat_since_start(&self) -> Result<String, CheckpointError> {
        let start = self
            .list()?
            .into_iter()
            .find(|c| c.label == "start")
            .ok_or_else(|| self.err("no starting checkpoint".to_string()))?;
        let now = self.save("end")?;
        self.git(&["diff", "--stat", &start.commit, &now])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A work tree with an ignored build folder, and its store.
    fn tree() -> (tempfile::TempDir, PathBuf, CheckpointStore) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join(".gitignore"), "/build/\n").unwrap();
        for (path, text) in [
            ("src/a.rs", "a\n"),
            ("src/b.rs", "b\n"),
            ("src/c.rs", "c\n"),
            ("run.sh", "#!/bin/sh\n"),
            ("build/out.o", "ignored\n"),
        ] {
            std::fs::write(root.join(path), text).unwrap();
        }
        let store = CheckpointStore::open(&dir.path().join("store.git"), &root).unwrap();
        (dir, root, store)
    }

    #[test]
    fn opening_a_store_writes_nothing_until_the_first_save() {
        let (dir, _root, store) = tree();
        assert!(store.list().unwrap().is_empty());
        assert!(!dir.path().join("store.git").exists());
        store.save("first").unwrap();
        assert_eq!(store.list().unwrap().len(), 1);
    }

    #[test]
    fn lost_files_are_the_saved_ones_deleted_or_rewritten_not_new_or_chmodded_ones() {
        use std::os::unix::fs::PermissionsExt;
        let (_dir, root, store) = tree();
        let commit = store.save("before").unwrap();
        std::fs::remove_file(root.join("src/a.rs")).unwrap();
        std::fs::write(root.join("src/b.rs"), "rewritten\n").unwrap();
        std::fs::write(root.join("src/new.rs"), "new\n").unwrap();
        std::fs::set_permissions(root.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::remove_dir_all(root.join("build")).unwrap();
        let lost = store.lost_since(&commit).unwrap();
        assert_eq!(
            lost,
            [
                LostFile {
                    path: "src/a.rs".into(),
                    loss: FileLoss::Deleted
                },
                LostFile {
                    path: "src/b.rs".into(),
                    loss: FileLoss::Overwritten
                },
            ]
        );
    }

    #[test]
    fn a_restore_brings_back_untracked_work_but_leaves_ignored_files_alone() {
        let (_dir, root, store) = tree();
        let commit = store.save("before").unwrap();
        std::fs::remove_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("build/out.o"), "rebuilt\n").unwrap();
        store.restore(&commit).unwrap();
        for (path, text) in [("src/a.rs", "a\n"), ("src/b.rs", "b\n"), ("src/c.rs", "c\n")] {
            assert_eq!(std::fs::read_to_string(root.join(path)).unwrap(), text);
        }
        // Never saved, so neither put back nor removed.
        assert_eq!(
            std::fs::read_to_string(root.join("build/out.o")).unwrap(),
            "rebuilt\n"
        );
    }
}
