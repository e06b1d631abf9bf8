//! `CheckpointStore`: the workspace's tree saved before every file-changing step, in a shadow
//! git repository outside the workspace (the user's own `.git`, history and index are never
//! touched), so `ken agent rollback` and `ken exec --undo` can put back every byte and mode
//! of any earlier step. It lives in `exec/` so that `ken exec` has an undo without the agent.
//!
//! Invariants: `.git` and `.kenning` are never saved or restored; a rollback saves the tree
//! it replaces first, so a rollback can itself be undone.

use std::path::{Path, PathBuf};
use std::process::Command;

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

impl CheckpointStore {
    /// Opens (or makes) the shadow repository at `git_dir` for the tree at `work_tree`.
    pub fn open(git_dir: &Path, work_tree: &Path) -> Result<CheckpointStore, CheckpointError> {
        let store = CheckpointStore {
            git_dir: git_dir.to_path_buf(),
            work_tree: work_tree.to_path_buf(),
        };
        if !git_dir.join("HEAD").exists() {
            std::fs::create_dir_all(git_dir).map_err(|e| store.err(e.to_string()))?;
            let out = Command::new("git")
                .args(["init", "-q", "--bare"])
                .arg(git_dir)
                .output()
                .map_err(|e| store.err(format!("cannot run git: {e}")))?;
            if !out.status.success() {
                return Err(store.err(format!(
                    "git init: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
            std::fs::create_dir_all(git_dir.join("info")).map_err(|e| store.err(e.to_string()))?;
            std::fs::write(git_dir.join("info/exclude"), "/.git\n/.kenning\n")
                .map_err(|e| store.err(e.to_string()))?;
        }
        Ok(store)
    }

    fn err(&self, detail: String) -> CheckpointError {
        CheckpointError {
            dir: self.git_dir.clone(),
            detail,
        }
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

    /// Saves the tree as it is now; returns the commit.
    pub fn save(&self, label: &str) -> Result<String, CheckpointError> {
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
        let before = self.save(&format!("before rollback to {}", &commit[..commit.len().min(12)]))?;
        self.git(&["read-tree", "--reset", "-u", commit])?;
        self.git(&["clean", "-fdq"])?;
        // Recorded on top, so every earlier checkpoint stays listed and reachable.
        self.save(&format!("rolled back to {}", &commit[..commit.len().min(12)]))?;
        Ok(before)
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
