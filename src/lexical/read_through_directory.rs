//! `ReadThroughDirectory`: a writer's tantivy folder whose files are read with `pread`, not
//! mapped. Under a tight memory cap the merge of a first build's checkpoint segments reads
//! every segment whole; mapped, each page it touched stays resident (and counted in the
//! process's peak) until the merge ends, up to the size of every segment together (58 MB of
//! the 2.8M-line tree's 57 MiB lexical part, on top of the binary's own pages). Read through,
//! a file's bytes live only as long as tantivy holds them: a term's postings while it is
//! merged, a segment's stored documents while they are copied.
//!
//! Small reads go through a window of [`WINDOW`] bytes per file, so a merge's many small
//! sequential reads (one a term and segment) cost one `pread` a window, not one each.
//! Everything but reading is the inner [`MmapDirectory`]'s: writes, deletes, locks, watches.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tantivy::HasLen;
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, OwnedBytes, WatchCallback, WatchHandle,
    WritePtr,
};

/// The bytes read at once for a small read: a merge reads each segment's postings in order,
/// so the next terms' postings are in the window already.
const WINDOW: usize = 64 << 10;

#[derive(Debug, Clone)]
pub struct ReadThroughDirectory {
    inner: MmapDirectory,
    root: PathBuf,
}

impl ReadThroughDirectory {
    pub fn open(root: &Path) -> Result<ReadThroughDirectory, tantivy::directory::error::OpenDirectoryError> {
        Ok(ReadThroughDirectory {
            inner: MmapDirectory::open(root)?,
            root: root.to_path_buf(),
        })
    }
}

impl Directory for ReadThroughDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        let full = self.root.join(path);
        let file = File::open(&full).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => OpenReadError::FileDoesNotExist(path.to_path_buf()),
            _ => OpenReadError::wrap_io_error(e, full.clone()),
        })?;
        let len = file
            .metadata()
            .map_err(|e| OpenReadError::wrap_io_error(e, full.clone()))?
            .len() as usize;
        Ok(Arc::new(ReadThroughFile {
            file,
            len,
            path: full,
            window: Mutex::new(None),
        }))
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        self.inner.open_write(path)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        self.inner.atomic_write(path, data)
    }

    fn sync_directory(&self) -> io::Result<()> {
        self.inner.sync_directory()
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        self.inner.acquire_lock(lock)
    }

    fn watch(&self, callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(callback)
    }
}

/// One file read with `pread`: a committed segment file, which nothing writes again while it
/// is open (tantivy's contract for a file handle).
#[derive(Debug)]
struct ReadThroughFile {
    file: File,
    len: usize,
    path: PathBuf,
    /// The last window read: where it starts, and its bytes (shared with the slices handed
    /// out of it, so it is freed when the last of them is).
    window: Mutex<Option<(usize, OwnedBytes)>>,
}

impl ReadThroughFile {
    fn read(&self, range: Range<usize>) -> io::Result<OwnedBytes> {
        let mut buf = vec![0u8; range.len()];
        self.file
            .read_exact_at(&mut buf, range.start as u64)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.path.display())))?;
        Ok(OwnedBytes::new(buf))
    }
}

impl HasLen for ReadThroughFile {
    fn len(&self) -> usize {
        self.len
    }
}

impl FileHandle for ReadThroughFile {
    fn read_bytes(&self, range: Range<usize>) -> io::Result<OwnedBytes> {
        if range.end > self.len || range.start > range.end {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{}: bytes {}..{} asked of a file of {}",
                    self.path.display(),
                    range.start,
                    range.end,
                    self.len
                ),
            ));
        }
        if range.is_empty() {
            return Ok(OwnedBytes::empty());
        }
        if range.len() >= WINDOW {
            return self.read(range);
        }
        let mut window = self
            .window
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((start, bytes)) = window.as_ref()
            && range.start >= *start
            && range.end <= start + bytes.len()
        {
            return Ok(bytes.slice(range.start - start..range.end - start));
        }
        let start = range.start;
        let bytes = self.read(start..(start + WINDOW).min(self.len))?;
        let out = bytes.slice(0..range.len());
        *window = Some((start, bytes));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file_of(bytes: &[u8]) -> (tempfile::TempDir, Arc<dyn FileHandle>) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), bytes).unwrap();
        let d = ReadThroughDirectory::open(dir.path()).unwrap();
        let h = d.get_file_handle(Path::new("f")).unwrap();
        (dir, h)
    }

    #[test]
    fn reads_any_range_as_the_file_has_it_through_the_window_and_past_it() {
        let bytes: Vec<u8> = (0..3 * WINDOW + 17).map(|i| (i * 7 % 251) as u8).collect();
        let (_dir, h) = file_of(&bytes);
        assert_eq!(h.len(), bytes.len());
        // Small reads in order (served from windows), one across a window's end, a large one,
        // one going back, the last byte and an empty one.
        let ranges = [
            0..10,
            10..4000,
            WINDOW - 5..WINDOW + 5,
            100..2 * WINDOW + 3,
            7..8,
            bytes.len() - 1..bytes.len(),
            5..5,
        ];
        for r in ranges {
            assert_eq!(
                h.read_bytes(r.clone()).unwrap().as_slice(),
                &bytes[r.clone()],
                "{r:?}"
            );
        }
    }

    #[test]
    fn a_range_past_the_end_is_an_error_naming_the_file() {
        let (dir, h) = file_of(b"abc");
        let err = h.read_bytes(1..9).unwrap_err().to_string();
        assert!(err.contains(&dir.path().join("f").display().to_string()), "{err}");
        assert!(matches!(
            ReadThroughDirectory::open(dir.path())
                .unwrap()
                .get_file_handle(Path::new("none")),
            Err(OpenReadError::FileDoesNotExist(_))
        ));
    }
}
