//! `WorkspacePaths`: what a path word in a command touches, so the action policy judges a
//! command by its targets and not by how they are spelled. `src`, `./src`, `$PWD/src`,
//! `${PWD}/src`, `~/repo/src` and `/abs/repo/src` all resolve to the same place.
//!
//! Invariants:
//! - A word that cannot be resolved (a variable other than `PWD`/`HOME`/`TMPDIR`, a command
//!   substitution, `~user`) is taken to touch the workspace: unsure never means "outside".
//! - A glob touches what its literal prefix folder holds.
//! - A path that holds the workspace (`..`, `/`, `/tmp`) touches the workspace.
//! - Whether a file is tracked comes from `git ls-files`; where git cannot tell (no
//!   repository, git missing) any existing file is taken to be tracked work.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

/// The workspace a command runs in, its folder and the files git tracks there.
#[derive(Debug, Clone)]
pub struct WorkspacePaths {
    pub root: PathBuf,
    /// The folder the command starts in.
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
    /// Tracked files, relative to `root` and `/`-separated; `None` where git cannot tell.
    tracked: Option<Arc<BTreeSet<String>>>,
}

/// Where a path word lands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Touch {
    /// Inside the workspace (or holding it); `tracked` when tracked work is at or under it.
    Workspace { rel: String, tracked: bool },
    /// Outside the workspace, in a temporary folder.
    Temp,
    /// Outside the workspace elsewhere.
    Outside(PathBuf),
}

impl WorkspacePaths {
    /// The workspace at `root` (as given, and canonical where it exists) seen from `cwd`; asks
    /// git once for the tracked files.
    pub fn load(root: &Path, cwd: &Path) -> WorkspacePaths {
        let tracked = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["ls-files", "-z", "--cached"])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| {
                o.stdout
                    .split(|b| *b == 0)
                    .filter(|r| !r.is_empty())
                    .map(|r| String::from_utf8_lossy(r).into_owned())
                    .collect::<BTreeSet<String>>()
            });
        WorkspacePaths {
            root: std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf()),
            cwd: std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf()),
            home: std::env::var_os("HOME").map(PathBuf::from),
            tracked: tracked.map(Arc::new),
        }
    }

    /// Where `word` (a command argument, quotes and all) lands. `after_cd`: the command
    /// changed folder before this word, so a relative path may start anywhere.
    pub fn touch(&self, word: &str, after_cd: bool) -> Touch {
        let text: String = word.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect();
        let Some(expanded) = self.expand(&text) else {
            return self.in_workspace(String::new(), true);
        };
        let relative = !expanded.starts_with('/');
        let glob_at = expanded.find(['*', '?', '[']);
        let literal = match glob_at {
            Some(i) => match expanded[..i].rsplit_once('/') {
                Some(("", _)) => "/",
                Some((d, _)) => d,
                None => "",
            },
            None => expanded.as_str(),
        };
        let path = normalize(&self.cwd.join(if literal.is_empty() { "." } else { literal }));
        let path = canonical_parent(&path);
        if let Ok(rel) = path.strip_prefix(&self.root) {
            let rel = rel.to_string_lossy().replace('\\', "/");
            let tracked = self.tracked_at(&rel, glob_at.is_some())
                || (after_cd && relative && self.tracked_anywhere(&expanded));
            return Touch::Workspace { rel, tracked };
        }
        if self.root.starts_with(&path) {
            return self.in_workspace(String::new(), true);
        }
        if after_cd && relative {
            // Where a relative path lands after `cd` is not followed: judged as if in the
            // workspace, where it could name tracked work.
            let tracked = self.tracked_anywhere(&expanded);
            return Touch::Workspace {
                rel: expanded,
                tracked,
            };
        }
        let temp = ["/tmp", "/var/tmp", "/dev/shm"]
            .iter()
            .chain(std::env::var("TMPDIR").ok().as_deref().iter())
            .any(|t| path.starts_with(t) && path != Path::new(t));
        match temp {
            true => Touch::Temp,
            false => Touch::Outside(path),
        }
    }

    /// `word` names a folder (it ends in `/` or one exists there): a copy lands inside it.
    pub fn is_dir(&self, word: &str) -> bool {
        let text: String = word.chars().filter(|c| !matches!(c, '"' | '\'' | '\\')).collect();
        text.ends_with('/') || self.expand(&text).is_some_and(|e| self.cwd.join(e).is_dir())
    }

    fn in_workspace(&self, rel: String, tracked: bool) -> Touch {
        Touch::Workspace { rel, tracked }
    }

    /// `$PWD`, `${PWD}`, `~`, `$HOME`, `${HOME}`, `$TMPDIR` replaced; `None` when anything else
    /// would be expanded by the shell.
    fn expand(&self, text: &str) -> Option<String> {
        let home = self.home.as_ref().map(|h| h.to_string_lossy().into_owned());
        let cwd = self.cwd.to_string_lossy().into_owned();
        let mut s = text.to_string();
        if s == "~" || s.starts_with("~/") {
            s = format!("{}{}", home.clone()?, &s[1..]);
        } else if s.starts_with('~') {
            return None;
        }
        let tmp = std::env::var("TMPDIR").unwrap_or_else(|_| "/tmp".to_string());
        for (var, value) in [
            ("${PWD}", Some(cwd.clone())),
            ("$PWD", Some(cwd)),
            ("${HOME}", home.clone()),
            ("$HOME", home),
            ("${TMPDIR}", Some(tmp.clone())),
            ("$TMPDIR", Some(tmp)),
        ] {
            if s.contains(var) {
                s = s.replace(var, &value?);
            }
        }
        (!s.contains('$') && !s.contains('`')).then_some(s)
    }

    /// Tracked work at `rel` or under it (all of it when `rel` is the root). Where git cannot
    /// tell, whatever exists there counts.
    fn tracked_at(&self, rel: &str, glob: bool) -> bool {
        let Some(tracked) = &self.tracked else {
            let p = self.root.join(rel);
            return p.symlink_metadata().is_ok() && (!glob || p.is_dir());
        };
        if rel.is_empty() {
            return !tracked.is_empty();
        }
        let dir = format!("{rel}/");
        tracked.contains(rel)
            || tracked
                .range(dir.clone()..)
                .next()
                .is_some_and(|t| t.starts_with(&dir))
    }

    /// Some tracked path ends with `rel` (where a relative path lands is not known).
    fn tracked_anywhere(&self, rel: &str) -> bool {
        let rel = rel.trim_start_matches("./");
        match &self.tracked {
            Some(t) => t
                .iter()
                .any(|p| p == rel || p.ends_with(&format!("/{rel}")) || p.starts_with(&format!("{rel}/"))),
            None => true,
        }
    }
}

/// `a/./b/../c` -> `a/c`, without touching the disk.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The path with its longest existing prefix resolved through symlinks, so a link into the
/// workspace is seen as the workspace.
fn canonical_parent(p: &Path) -> PathBuf {
    let mut base = p.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(&base) {
            return rest.iter().rev().fold(c, |acc: PathBuf, part| acc.join(part));
        }
        match (base.file_name().map(|f| f.to_os_string()), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                base = parent.to_path_buf();
            }
            _ => return p.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, WorkspacePaths) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        let mut paths = WorkspacePaths::load(&root, &root);
        paths.home = Some(dir.path().to_path_buf());
        paths.tracked = Some(Arc::new(["src/lib.rs".to_string()].into_iter().collect()));
        (dir, paths)
    }

    #[test]
    fn every_spelling_of_a_workspace_path_lands_in_the_workspace() {
        let (_d, p) = ws();
        let abs = p.root.join("src").display().to_string();
        for word in [
            "src",
            "./src",
            "$PWD/src",
            "${PWD}/src",
            "\"$PWD\"/src",
            "~/repo/src",
            "$HOME/repo/src",
            abs.as_str(),
            "src/../src",
            "src/*.rs",
        ] {
            assert_eq!(
                p.touch(word, false),
                Touch::Workspace {
                    rel: "src".into(),
                    tracked: true
                },
                "{word}"
            );
        }
    }

    #[test]
    fn what_cannot_be_expanded_or_holds_the_workspace_touches_it() {
        let (_d, p) = ws();
        for word in ["$DIR", "$(pwd)/src", "~other/x", "..", "/", "*"] {
            assert!(
                matches!(p.touch(word, false), Touch::Workspace { tracked: true, .. }),
                "{word}: {:?}",
                p.touch(word, false)
            );
        }
        assert_eq!(
            p.touch("build.log", false),
            Touch::Workspace {
                rel: "build.log".into(),
                tracked: false
            }
        );
        assert!(matches!(
            p.touch("lib.rs", true),
            Touch::Workspace { tracked: true, .. }
        ));
    }
}
