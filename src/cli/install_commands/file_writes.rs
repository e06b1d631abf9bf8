//! The writes of one `ken install` or `ken uninstall`, kept so that a failure part way
//! undoes them: each file gets back its bytes from before (or goes, if it was not there) and
//! each folder the run made goes again when empty. Every write is recorded before it is
//! made, so a write that fails half way is undone too.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

#[derive(Debug, Default)]
pub(super) struct FileWrites {
    /// Each file touched, with its bytes from before (`None`: it was not there), in order.
    files: Vec<(PathBuf, Option<Vec<u8>>)>,
    /// Folders this run created, parents first.
    dirs: Vec<PathBuf>,
}

impl FileWrites {
    /// Writes `bytes` to `path` (a real location, no symbolic link left in it), making its
    /// folder if needed; `before` is what the file held (`None`: absent).
    pub(super) fn write(&mut self, path: &Path, bytes: &[u8], before: Option<Vec<u8>>) -> Result<()> {
        if let Some(parent) = path.parent() {
            self.make_dirs(parent)?;
        }
        self.files.push((path.to_path_buf(), before));
        std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
    }

    /// Removes `path`, which held `before`.
    pub(super) fn remove(&mut self, path: &Path, before: Vec<u8>) -> Result<()> {
        self.files.push((path.to_path_buf(), Some(before)));
        std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))
    }

    fn make_dirs(&mut self, dir: &Path) -> Result<()> {
        let missing: Vec<PathBuf> = dir
            .ancestors()
            .take_while(|d| !d.as_os_str().is_empty() && std::fs::symlink_metadata(d).is_err())
            .map(Path::to_path_buf)
            .collect();
        // Recorded first: a folder made before a later one fails still goes on undo.
        self.dirs.extend(missing.into_iter().rev());
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
    }

    /// Puts every file back as it was and removes the folders this run made, newest first;
    /// returns what could not be undone, one line each.
    pub(super) fn undo(self) -> Vec<String> {
        let mut failed = Vec::new();
        for (path, before) in self.files.into_iter().rev() {
            let undone = match before {
                Some(bytes) => std::fs::write(&path, bytes),
                None => match std::fs::remove_file(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    other => other,
                },
            };
            if let Err(e) = undone {
                failed.push(format!("{}: {e}", path.display()));
            }
        }
        for dir in self.dirs.into_iter().rev() {
            match std::fs::remove_dir(&dir) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    failed.push(format!("{}: {e}", dir.display()));
                }
                _ => {}
            }
        }
        failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_restores_changed_files_and_removes_new_files_and_folders() {
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("kept.md");
        std::fs::write(&kept, "mine\n").unwrap();
        let gone = dir.path().join("gone.md");
        std::fs::write(&gone, "old\n").unwrap();
        let mut w = FileWrites::default();
        w.write(&kept, b"changed\n", Some(b"mine\n".to_vec())).unwrap();
        w.write(&dir.path().join("a/b/new.md"), b"new\n", None).unwrap();
        w.remove(&gone, b"old\n".to_vec()).unwrap();
        assert!(w.undo().is_empty());
        assert_eq!(std::fs::read_to_string(&kept).unwrap(), "mine\n");
        assert_eq!(std::fs::read_to_string(&gone).unwrap(), "old\n");
        assert!(!dir.path().join("a").exists(), "a folder the run made was left");
    }
}
