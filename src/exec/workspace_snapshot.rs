//! `WorkspaceSnapshot`: the files a run changed in a git workspace, for the audit log — every
//! path `git status` lists (modified, added, deleted, untracked) with its size and mtime,
//! taken before and after; a path whose entry differs was changed by the run.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::SystemTime;

#[derive(Debug, Default, PartialEq, Eq)]
pub struct WorkspaceSnapshot {
    entries: BTreeMap<String, (String, Option<(u64, SystemTime)>)>,
}

impl WorkspaceSnapshot {
    /// `None` when `workspace` is not a git work tree (or git is missing).
    pub fn take(workspace: &Path) -> Option<WorkspaceSnapshot> {
        if !workspace.join(".git").exists() {
            return None;
        }
        let out = Command::new("git")
            .arg("-C")
            .arg(workspace)
            .args([
                "status",
                "--porcelain=v1",
                "-z",
                "--untracked-files=all",
                "--no-renames",
            ])
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let mut entries = BTreeMap::new();
        for record in out.stdout.split(|b| *b == 0).filter(|r| r.len() > 3) {
            let text = String::from_utf8_lossy(record);
            let (code, path) = text.split_at(3);
            let stat = std::fs::symlink_metadata(workspace.join(path))
                .ok()
                .map(|m| (m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
            entries.insert(path.to_string(), (code.trim().to_string(), stat));
        }
        Some(WorkspaceSnapshot { entries })
    }

    /// Paths whose status or contents' size and mtime differ between `self` and `after`.
    pub fn changed(&self, after: &WorkspaceSnapshot) -> Vec<String> {
        let mut out: Vec<String> = after
            .entries
            .iter()
            .filter(|(p, e)| self.entries.get(*p) != Some(e))
            .map(|(p, _)| p.clone())
            .collect();
        out.extend(
            self.entries
                .keys()
                .filter(|p| !after.entries.contains_key(*p))
                .cloned(),
        );
        out.sort();
        out.dedup();
        out
    }
}

impl WorkspaceSnapshot {
    /// The checked-out branch, read from `.git/HEAD` (no git process); a worktree's `.git`
    /// file is asked of git itself. `None` when detached or not a repository.
    pub fn branch(workspace: &Path) -> Option<String> {
        let git = workspace.join(".git");
        if git.is_dir() {
            let head = std::fs::read_to_string(git.join("HEAD")).ok()?;
            return head.trim().strip_prefix("ref: refs/heads/").map(str::to_string);
        }
        let out = Command::new("git")
            .arg("-C")
            .arg(workspace)
            .args(["symbolic-ref", "--short", "-q", "HEAD"])
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        Some(String::from_utf8_lossy(&out.stdout).trim().to_string()).filter(|b| !b.is_empty())
    }
}
