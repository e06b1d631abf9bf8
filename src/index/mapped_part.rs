//! `MappedPart`: a file of a committed generation mapped read-only, so a reader decodes what it
//! needs in place instead of reading (and copying) the whole part first.
//!
//! The one module of `index/` where `unsafe` is allowed (the house style): mapping a file is
//! unsafe because another writer could change it under the mapping. Kenning never does:
//! - a committed generation is immutable: builds write parts into `gen-N.tmp/` and commit by
//!   renaming it; [`super::IndexStore::commit`] refuses a generation that exists, and builds
//!   number past every generation on disk (`highest_ids`), so no file a reader may map is
//!   written again (tested: `a_committed_generation_is_never_written_again`);
//! - garbage collection unlinks old generations; a mapping keeps its inode alive, so a reader
//!   still holding one reads the bytes it mapped.
//!
//! What stays outside ken's reach: another program truncating a file under `.kenning/` while a
//! reader maps it (reads past the new end would fault). The same holds for tantivy's own maps.
//! Damage short of that is caught by the digests each reader checks over what it decodes.

#![allow(unsafe_code)]

use std::fs::File;
use std::ops::Deref;
use std::path::Path;

use super::IndexError;

/// A read-only map of one committed generation file.
#[derive(Debug)]
pub struct MappedPart {
    map: Option<memmap2::Mmap>,
    /// The file mapped, for reads that should not map pages ([`MappedPart::read_at`]).
    file: Option<File>,
}

impl MappedPart {
    /// Maps `path`, a file inside a committed generation (only [`super::IndexStore`] calls
    /// this, with paths under `gen-N/`).
    pub(super) fn open(path: &Path) -> Result<MappedPart, IndexError> {
        let file = File::open(path).map_err(IndexError::io(path))?;
        let len = file.metadata().map_err(IndexError::io(path))?.len();
        if len == 0 {
            // An empty map is not portable; an empty part has nothing to map.
            return Ok(MappedPart {
                map: None,
                file: None,
            });
        }
        // SAFETY: the file belongs to a committed generation, which no ken process writes
        // again (see the module's invariant); the map is read-only and private to us.
        let map = unsafe { memmap2::MmapOptions::new().map(&file) }.map_err(IndexError::io(path))?;
        Ok(MappedPart {
            map: Some(map),
            file: Some(file),
        })
    }

    /// Reads `buf.len()` bytes at `offset` from the file, not through the map: a read of a few
    /// bytes here and there that would otherwise map the pages around each one (the kernel
    /// maps up to 64 KiB around a fault on a cached file) and count them to the process.
    #[cfg(unix)]
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        match &self.file {
            Some(f) => f.read_exact_at(buf, offset),
            None if buf.is_empty() => Ok(()),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "an empty part",
            )),
        }
    }

    /// Elsewhere, a copy out of the map.
    #[cfg(not(unix))]
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let _ = &self.file;
        let src = usize::try_from(offset)
            .ok()
            .and_then(|o| self.slice(o, buf.len()))
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "past the part's end"))?;
        buf.copy_from_slice(src);
        Ok(())
    }

    /// The mapped bytes, `len` of them from `start` (`None` past the end).
    pub fn slice(&self, start: usize, len: usize) -> Option<&[u8]> {
        self.get(start..start.checked_add(len)?)
    }
}

impl crate::graph::StoredBytes for MappedPart {
    fn bytes(&self) -> &[u8] {
        self
    }

    /// Copied with a positioned read of the file, so the pages around are not mapped.
    fn read_range(&self, range: std::ops::Range<usize>) -> Option<std::borrow::Cow<'_, [u8]>> {
        if range.end > self.len() || range.start > range.end {
            return None;
        }
        let mut buf = vec![0u8; range.len()];
        self.read_at(range.start as u64, &mut buf).ok()?;
        Some(std::borrow::Cow::Owned(buf))
    }
}

impl Deref for MappedPart {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }
}

impl AsRef<[u8]> for MappedPart {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::StoredBytes;

    #[test]
    fn a_range_read_from_the_file_is_the_range_of_the_map() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("part.bin");
        let bytes: Vec<u8> = (0..70_000u32).map(|i| (i * 7 % 256) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let part = MappedPart::open(&path).unwrap();
        for r in [0..0, 0..1, 4090..4100, 65_000..70_000] {
            assert_eq!(part.read_range(r.clone()).as_deref(), Some(&bytes[r]));
        }
        assert!(part.read_range(69_990..70_001).is_none());
        let empty = dir.path().join("empty.bin");
        std::fs::write(&empty, b"").unwrap();
        let part = MappedPart::open(&empty).unwrap();
        assert_eq!(part.read_range(0..0).as_deref(), Some(&[][..]));
        assert!(part.read_range(0..1).is_none());
    }
}
