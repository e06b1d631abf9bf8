//! Sharing files between generations: a committed file is never rewritten, so the next
//! generation hard-links it (or, where the file system cannot link, copies it) instead of
//! writing it again. Used for the vector part's row files, graph folder and part file.

use std::path::Path;

use super::IndexError;

/// Whether a generation's vectors folder holds a graph dump.
pub(super) fn has_graph(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some())
}

/// Hard-links `from` to `to`, or where the file system cannot link, copies it into a new
/// file. Never opens an existing `to` for writing: it may be a link to `from` itself, and
/// truncating it would damage every generation that shares it.
pub(super) fn link_file(from: &Path, to: &Path) -> Result<(), IndexError> {
    match std::fs::hard_link(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(IndexError::io(to)(e)),
        Err(_) => {
            let mut src = std::fs::File::open(from).map_err(IndexError::io(from))?;
            let mut dst = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(to)
                .map_err(IndexError::io(to))?;
            std::io::copy(&mut src, &mut dst).map_err(IndexError::io(to))?;
            dst.sync_all().map_err(IndexError::io(to))
        }
    }
}

/// Hard-links (or copies) every file of `from` into `to`.
pub(super) fn link_dir(from: &Path, to: &Path) -> Result<(), IndexError> {
    std::fs::create_dir_all(to).map_err(IndexError::io(to))?;
    for e in std::fs::read_dir(from).map_err(IndexError::io(from))?.flatten() {
        link_file(&e.path(), &to.join(e.file_name()))?;
    }
    Ok(())
}
