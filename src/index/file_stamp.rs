//! `FileStamp`: what a committed generation's files looked like on disk when it was committed
//! (size, modification time, inode), so the next build can tell by one `stat` each that they
//! were not written since, instead of reading and hashing every byte of the index again (on
//! 2.8M lines that is 250 MB, and a quarter of a one-file update).
//!
//! A file is trusted unchanged only when its stamp matches and its stamped mtime is older
//! than the manifest's own (git's "racily clean" rule): a write after the commit gets an mtime
//! no older than the manifest's, so it never matches a stamp older than that. A file whose
//! stamp is as new as the manifest is hashed. `ken index verify` always hashes everything.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileStamp {
    pub bytes: u64,
    pub mtime_ns: i64,
    /// The inode (0 where the platform has none): a file replaced by another of the same
    /// size and mtime is still seen.
    #[serde(default)]
    pub ino: u64,
}

impl FileStamp {
    pub fn of(path: &Path) -> Option<FileStamp> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        meta.is_file().then(|| FileStamp {
            bytes: meta.len(),
            mtime_ns: super::repo_walker::mtime_ns(&meta),
            ino: inode(&meta),
        })
    }
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.ino()
}

#[cfg(not(unix))]
fn inode(_: &std::fs::Metadata) -> u64 {
    0
}

/// Stamps of a committed generation, with the manifest's mtime they must be older than.
pub struct CommitStamps<'a> {
    stamps: &'a BTreeMap<String, FileStamp>,
    /// The manifest's mtime now; `None` (trust nothing) when it cannot be read.
    manifest_mtime_ns: Option<i64>,
}

impl<'a> CommitStamps<'a> {
    /// `stamps` as the manifest in `gen_dir` lists them.
    pub fn new(stamps: &'a BTreeMap<String, FileStamp>, gen_dir: &Path) -> CommitStamps<'a> {
        CommitStamps {
            stamps,
            manifest_mtime_ns: FileStamp::of(&gen_dir.join("manifest.json")).map(|s| s.mtime_ns),
        }
    }

    /// Whether the file stamped under `key`, now at `path`, is as it was committed.
    pub fn unchanged(&self, key: &str, path: &Path) -> bool {
        let (Some(stamp), Some(limit)) = (self.stamps.get(key), self.manifest_mtime_ns) else {
            return false;
        };
        stamp.mtime_ns < limit && FileStamp::of(path).as_ref() == Some(stamp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_written_after_its_stamp_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("graph.bin");
        std::fs::write(&part, b"committed bytes").unwrap();
        let mut stamps = BTreeMap::new();
        stamps.insert("gen/graph.bin".to_string(), FileStamp::of(&part).unwrap());
        // The manifest is written after the stamp is taken; until its mtime is past the
        // stamp's, the stamp is racy and the file is hashed.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(dir.path().join("manifest.json"), b"{}").unwrap();
        let trusted = CommitStamps::new(&stamps, dir.path());
        assert!(trusted.unchanged("gen/graph.bin", &part));
        assert!(!trusted.unchanged("gen/other.bin", &part), "no stamp, no trust");

        // Same size, written again: a later mtime.
        std::fs::write(&part, b"committed bytez").unwrap();
        assert!(!CommitStamps::new(&stamps, dir.path()).unchanged("gen/graph.bin", &part));
    }

    #[test]
    fn a_stamp_as_new_as_the_manifest_is_racy() {
        let dir = tempfile::tempdir().unwrap();
        let part = dir.path().join("vectors.bin");
        std::fs::write(&part, b"bytes").unwrap();
        std::fs::write(dir.path().join("manifest.json"), b"{}").unwrap();
        let mut stamp = FileStamp::of(&part).unwrap();
        let manifest = FileStamp::of(&dir.path().join("manifest.json")).unwrap();
        // Stamped in the manifest's own tick (forced here): hashed, whatever the stat says.
        stamp.mtime_ns = manifest.mtime_ns;
        let _ = filetime_set(&part, manifest.mtime_ns);
        let mut stamps = BTreeMap::new();
        stamps.insert("gen/vectors.bin".to_string(), stamp);
        assert!(!CommitStamps::new(&stamps, dir.path()).unchanged("gen/vectors.bin", &part));
    }

    fn filetime_set(path: &Path, mtime_ns: i64) -> std::io::Result<()> {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(mtime_ns as u64);
        std::fs::File::options().write(true).open(path)?.set_modified(t)
    }
}
