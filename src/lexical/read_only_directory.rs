//! `ReadOnlyDirectory`: how a query opens a committed generation's tantivy files. A reader
//! writes nothing and takes no lock: a generation is immutable once committed (a build writes
//! a new one and never touches this one), so tantivy's meta lock, which guards against a
//! writer committing under a reader, guards nothing here, and taking it needs write access.
//! Opened this way, a read-only checkout, a read-only mount or another user's index can be
//! searched.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};

#[derive(Debug, Clone)]
pub struct ReadOnlyDirectory {
    inner: MmapDirectory,
    root: PathBuf,
}

impl ReadOnlyDirectory {
    pub fn open(root: &Path) -> Result<ReadOnlyDirectory, tantivy::directory::error::OpenDirectoryError> {
        Ok(ReadOnlyDirectory {
            inner: MmapDirectory::open(root)?,
            root: root.to_path_buf(),
        })
    }

    fn refused(&self, path: &Path) -> Arc<io::Error> {
        Arc::new(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{}: a reader of the index writes nothing",
                self.root.join(path).display()
            ),
        ))
    }
}

impl Directory for ReadOnlyDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError {
            io_error: self.refused(path),
            filepath: path.to_path_buf(),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::IoError {
            io_error: self.refused(path),
            filepath: path.to_path_buf(),
        })
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            self.refused(path).to_string(),
        ))
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    /// No lock file: see the module's invariant.
    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(())))
    }

    fn watch(&self, _callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        // Readers reload by hand (a new generation is a new folder), so nothing is watched.
        Ok(WatchHandle::empty())
    }
}
