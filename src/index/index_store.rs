//! `IndexStore`: the index folder's layout, format check, build lock, generations, segments.
//!
//! ```text
//! .kenning/
//!   .gitignore           `*`: the index ignores itself
//!   FORMAT               `kenning-index <version>`: checked before anything else is read
//!   CURRENT              name of the committed generation, replaced by rename
//!   lock                 held (flock) by the one running build; holds its pid
//!   ROOT                 the tree this index is built from (an outside `--index-dir` is checked)
//!   readers/             leases of the generations live readers hold (`reader_lease`)
//!   segments/seg-N.bin   immutable symbol records, shared by generations
//!   gen-N/manifest.json  what the generation holds (written last)
//!   gen-N/files.bin      the file table
//! ```
//! A build writes `gen-N.tmp/`, renames it to `gen-N/`, then replaces `CURRENT`. Garbage
//! collection keeps the current and the previously committed generation, every generation a
//! live reader holds a lease on, and the segments they reference.

use std::collections::{BTreeMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::file_stamp::FileStamp;
use super::manifest::FORMAT_NAME;
use super::record_codec::{MAGIC_COLUMNS, RecordCodec};
use super::{FileRecord, FileTable, IndexError, Manifest, SegmentInfo};
use crate::symbols::FileSymbols;
use crate::util::{fsync_dir, write_atomic};

/// The graph part's file inside a generation.
pub const GRAPH_FILE: &str = "graph.bin";
/// The lexical part's folder inside a generation.
pub const LEXICAL_DIR: &str = "lexical";

/// The root of the tree whose builds write this index (`claim_root`).
const ROOT_FILE: &str = "ROOT";

/// The first words of the `.gitignore` a build writes into the index folder.
const GITIGNORE_HEADER: &str = "# written by ken";

/// The on-disk format this build reads and writes.
pub const FORMAT_VERSION: u32 = 3;
/// Bytes of each record's own digest (a blake3 prefix) in a segment's digest table.
const RECORD_DIGEST: usize = 8;

/// Reading fewer than one in this many records of a segment reads them one by one.
const SPARSE_READ_RATIO: usize = 8;

#[derive(Debug, Clone)]
pub struct IndexStore {
    dir: PathBuf,
}

/// Times (10 ms apart) a build waits for a lock whose holder has not named itself.
const UNNAMED_HOLDER_WAITS: u32 = 30;

/// Holds the build lock until dropped (the OS releases it if the process dies).
#[derive(Debug)]
pub struct BuildLock {
    file: File,
}

impl Drop for BuildLock {
    /// The pid goes with the lock (the OS releases the lock itself when the file closes, or
    /// when the process dies): a lock file left behind names no holder.
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

impl BuildLock {
    /// The lock file's modification time, set when the lock was taken: "now" on the
    /// filesystem's own (often coarse) clock, which is what file mtimes are compared with.
    pub fn stamp_ns(&self) -> Option<i64> {
        self.file
            .metadata()
            .ok()
            .map(|m| super::repo_walker::mtime_ns(&m))
    }
}

impl IndexStore {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        IndexStore { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn format_path(&self) -> PathBuf {
        self.dir.join("FORMAT")
    }

    /// Checks `FORMAT`. `Ok(false)` when there is no index yet (no folder or an empty one).
    pub fn check_format(&self) -> Result<bool, IndexError> {
        if let Ok(m) = fs::metadata(&self.dir)
            && !m.is_dir()
        {
            return Err(IndexError::Foreign {
                dir: self.dir.clone(),
                detail: format!(
                    "it is {}, not a folder",
                    crate::util::special_kind(&m.file_type())
                ),
            });
        }
        let text = match fs::read_to_string(self.format_path()) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Empty, or holding only what `prepare` writes before `FORMAT` (another
                // build is creating the index right now), or only the settings a user keeps
                // here (`rules.toml` for `ken exec`, `agent.toml`): not an index yet, not
                // foreign.
                let empty = match fs::read_dir(&self.dir) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
                    Err(e) => return Err(IndexError::io(&self.dir)(e)),
                    Ok(entries) => entries.flatten().all(|e| {
                        let name = e.file_name();
                        let name = name.to_string_lossy();
                        [
                            "segments",
                            "readers",
                            ".gitignore",
                            "lock",
                            "ROOT",
                            "rules.toml",
                            "agent.toml",
                        ]
                        .contains(&name.as_ref())
                            || name.starts_with(".gitignore.tmp-")
                            || name.starts_with("FORMAT.tmp-")
                    }),
                };
                // Another build may have written `FORMAT` (and begun a generation) between
                // the two reads: read it again before calling the folder foreign.
                if !empty && self.format_path().exists() {
                    return self.check_format();
                }
                return match (empty, self.holds_our_files()) {
                    (true, _) => Ok(false),
                    // Ours, with `FORMAT` lost: damage a build repairs.
                    (false, true) => Err(IndexError::Corrupt {
                        path: self.format_path(),
                        detail: "missing, though the folder holds an index's files".into(),
                    }),
                    (false, false) => Err(IndexError::Foreign {
                        dir: self.dir.clone(),
                        detail: "the folder exists but has no FORMAT file".into(),
                    }),
                };
            }
            Err(e) => return Err(IndexError::io(self.format_path())(e)),
        };
        let mut words = text.split_whitespace();
        // A damaged FORMAT in a folder that holds our generations is damage, which a build
        // repairs; anything else is a folder that is not ours.
        let refuse = |detail: String| match self.holds_our_files() {
            true => IndexError::Corrupt {
                path: self.format_path(),
                detail,
            },
            false => IndexError::Foreign {
                dir: self.dir.clone(),
                detail,
            },
        };
        let (Some(FORMAT_NAME), Some(v)) = (words.next(), words.next()) else {
            return Err(refuse(format!("FORMAT says {:?}", text.trim())));
        };
        let found: u32 = v
            .parse()
            .map_err(|_| refuse(format!("FORMAT version {v:?} is not a number")))?;
        if found > FORMAT_VERSION {
            return Err(IndexError::NewerFormat {
                dir: self.dir.clone(),
                found,
                supported: FORMAT_VERSION,
            });
        }
        Ok(found == FORMAT_VERSION)
    }

    /// Whether the folder holds a committed generation folder and the segments folder: an
    /// index of ours, whatever its `FORMAT` or `CURRENT` say.
    fn has_generations(&self) -> bool {
        self.dir.join("segments").is_dir() && self.generations_on_disk().is_some()
    }

    /// Whether the folder is an index of ours, whatever its `FORMAT` says: committed
    /// generations, or the segments folder beside the `.gitignore` a build writes first or a
    /// generation a build began (a first build killed before its commit).
    fn holds_our_files(&self) -> bool {
        if !self.dir.join("segments").is_dir() {
            return false;
        }
        let our_gitignore =
            fs::read_to_string(self.dir.join(".gitignore")).is_ok_and(|t| t.starts_with(GITIGNORE_HEADER));
        let begun = fs::read_dir(&self.dir).is_ok_and(|d| {
            d.flatten().any(|e| {
                let n = e.file_name();
                let n = n.to_string_lossy();
                n.starts_with("gen-") && n.ends_with(".tmp")
            })
        });
        our_gitignore || begun || self.has_generations()
    }

    /// The lowest and highest committed generation folders on disk.
    fn generations_on_disk(&self) -> Option<(u64, u64)> {
        let gens: Vec<u64> = fs::read_dir(&self.dir)
            .ok()?
            .flatten()
            .filter(|e| e.path().is_dir())
            .filter_map(|e| parse_gen_name(&e.file_name().to_string_lossy()))
            .collect();
        Some((*gens.iter().min()?, *gens.iter().max()?))
    }

    /// Creates the folder, `FORMAT` and `.gitignore` if missing. Refuses foreign folders; a
    /// damaged `FORMAT` in a folder of ours is written again.
    pub fn prepare(&self) -> Result<(), IndexError> {
        match self.check_format() {
            Ok(_) | Err(IndexError::Corrupt { .. }) => {}
            Err(e) => return Err(e),
        }
        fs::create_dir_all(self.dir.join("segments")).map_err(IndexError::io(&self.dir))?;
        // Another build starting at the same moment writes these too, before either holds
        // the lock, and the one that takes it first clears the other's temporary files as
        // left over: a write that fails counts as done when the file is there as wanted.
        let gi = self.dir.join(".gitignore");
        if !gi.exists()
            && let Err(e) = write_atomic(
                &gi,
                format!("{GITIGNORE_HEADER}: the index ignores itself\n*\n").as_bytes(),
            )
            && !gi.exists()
        {
            return Err(IndexError::io(&gi)(e));
        }
        let fmt = format!("{FORMAT_NAME} {FORMAT_VERSION}\n");
        let format_is = |want: &str| fs::read_to_string(self.format_path()).ok().as_deref() == Some(want);
        if !format_is(&fmt)
            && let Err(e) = write_atomic(&self.format_path(), fmt.as_bytes())
            && !format_is(&fmt)
        {
            return Err(IndexError::io(self.format_path())(e));
        }
        Ok(())
    }

    /// Takes the build lock, or fails at once naming the holder.
    pub fn lock(&self) -> Result<BuildLock, IndexError> {
        let path = self.dir.join("lock");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(IndexError::io(&path))?;
        // A lock held with no pid in the file is held for an instant: by a build between
        // taking it and naming itself, or by a child process another thread of the same
        // program forked while a build held it, between its fork and its exec (the lock
        // goes with the copy of the descriptor until the exec closes it). Such a holder is
        // waited for a little; a build that names itself is refused at once.
        let mut waited = 0;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(fs::TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = file.seek(std::io::SeekFrom::Start(0));
                    let _ = file.read_to_string(&mut holder);
                    if holder.trim().is_empty() && waited < UNNAMED_HOLDER_WAITS {
                        waited += 1;
                        std::thread::sleep(std::time::Duration::from_millis(10));
                        continue;
                    }
                    let holder = match holder.trim() {
                        "" => "lock file held".to_string(),
                        h => h.to_string(),
                    };
                    return Err(IndexError::Locked {
                        dir: self.dir.clone(),
                        holder,
                    });
                }
                Err(fs::TryLockError::Error(e)) => return Err(IndexError::io(&path)(e)),
            }
        }
        file.set_len(0).map_err(IndexError::io(&path))?;
        let _ = write!(file, "pid {}", std::process::id());
        let _ = file.flush();
        Ok(BuildLock { file })
    }

    /// The committed generation, `None` before the first build.
    pub fn current(&self) -> Result<Option<u64>, IndexError> {
        let path = self.dir.join("CURRENT");
        match fs::read_to_string(&path) {
            Ok(t) => parse_gen_name(t.trim())
                .map(Some)
                .ok_or_else(|| IndexError::Corrupt {
                    path,
                    detail: format!("expected gen-<n>, found {:?}", t.trim()),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match self.generations_on_disk() {
                // Committed generations but no commit point: not "no index" but damage.
                Some((low, high)) => Err(IndexError::Corrupt {
                    path,
                    detail: format!(
                        "missing, though generations {} to {} are on disk, so none is known to be complete",
                        gen_name(low),
                        gen_name(high)
                    ),
                }),
                None => Ok(None),
            },
            Err(e) => Err(IndexError::io(path)(e)),
        }
    }

    pub fn generation_dir(&self, generation: u64) -> PathBuf {
        self.dir.join(gen_name(generation))
    }

    pub fn read_manifest(&self, generation: u64) -> Result<Manifest, IndexError> {
        let path = self.generation_dir(generation).join("manifest.json");
        let bytes = fs::read(&path).map_err(IndexError::io(&path))?;
        let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| IndexError::Corrupt {
            path: path.clone(),
            detail: e.to_string(),
        })?;
        if let Some(digest) = value.get("digest").and_then(|d| d.as_str()) {
            Manifest::check_digest(&bytes, digest).map_err(|detail| IndexError::Corrupt {
                path: path.clone(),
                detail,
            })?;
        }
        let version = value.get("version").and_then(|v| v.as_u64()).unwrap_or(0) as u32;
        if value.get("format").and_then(|v| v.as_str()) != Some(FORMAT_NAME) {
            return Err(IndexError::Foreign {
                dir: self.dir.clone(),
                detail: format!("{} has no kenning format tag", path.display()),
            });
        }
        if version > FORMAT_VERSION {
            return Err(IndexError::NewerFormat {
                dir: self.dir.clone(),
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        serde_json::from_value(value).map_err(|e| IndexError::Corrupt {
            path,
            detail: e.to_string(),
        })
    }

    /// Reads the generation's file table, checked against the hash `manifest` records for it.
    pub fn read_file_table(&self, generation: u64, manifest: &Manifest) -> Result<FileTable, IndexError> {
        let path = self.generation_dir(generation).join("files.bin");
        // Mapped, not read: decoded in place, without a copy of the whole table first.
        let bytes = self.map_part_hashed(generation, "files.bin", manifest.files_blake3.as_deref())?;
        postcard::from_bytes(&bytes).map_err(|e| IndexError::Corrupt {
            path,
            detail: e.to_string(),
        })
    }

    pub fn segment_path(&self, id: u32) -> PathBuf {
        self.dir.join("segments").join(format!("seg-{id:08}.bin"))
    }

    /// Writes an immutable segment. It is invisible until a manifest references it.
    ///
    /// Layout: magic, record count (u32 LE), `count + 1` record offsets (u64 LE, relative to
    /// the body), one 8-byte digest per record (the start of its blake3), then the records
    /// back to back, each its columns compressed with zstd on its own (`RecordCodec`), so one
    /// record can be read and checked without the others.
    /// Writes a segment of records encoded beforehand (by the parse workers, in parallel):
    /// the file is assembled in one buffer of its exact size.
    pub fn write_segment(&self, id: u32, records: &[&EncodedRecord]) -> Result<SegmentInfo, IndexError> {
        let path = self.segment_path(id);
        let body_len: usize = records.iter().map(|r| r.bytes.len()).sum();
        let head_len = MAGIC_COLUMNS.len() + 4 + 8 * (records.len() + 1) + RECORD_DIGEST * records.len();
        let mut bytes = Vec::with_capacity(head_len + body_len);
        bytes.extend_from_slice(MAGIC_COLUMNS.as_slice());
        bytes.extend_from_slice(&(records.len() as u32).to_le_bytes());
        let mut offset = 0u64;
        for r in records {
            bytes.extend_from_slice(&offset.to_le_bytes());
            offset += r.bytes.len() as u64;
        }
        bytes.extend_from_slice(&offset.to_le_bytes());
        for r in records {
            bytes.extend_from_slice(&r.digest);
        }
        for r in records {
            bytes.extend_from_slice(&r.bytes);
        }
        write_atomic(&path, &bytes).map_err(IndexError::io(&path))?;
        Ok(SegmentInfo {
            id,
            slots: records.len() as u32,
            bytes: bytes.len() as u64,
            blake3: blake3::hash(&bytes).to_hex().to_string(),
        })
    }

    /// `make(i, record)` for the record of `files[i]`, each `i` in `which`, in that order.
    /// A record is decoded, handed to `make` and dropped on the same thread: a record freed
    /// on another thread than the one that decoded it stays in that thread's heap until the
    /// thread allocates again, and idle worker threads held 27 MiB of a capped build's
    /// graph phase that way (the allocator's per-thread heaps, measured on 2.8M lines).
    pub fn map_records<T, F>(
        &self,
        segments: &[SegmentInfo],
        files: &[FileRecord],
        which: &[usize],
        make: F,
    ) -> Result<Vec<T>, IndexError>
    where
        T: Send,
        F: Fn(usize, FileSymbols) -> T + Sync + Send,
    {
        // (position in `which`, slot) by segment.
        let mut out: Vec<Option<T>> = which.iter().map(|_| None).collect();
        for (seg, items) in by_segment(files, which.iter().copied().enumerate()) {
            let info = self.listed(segments, seg)?;
            let made: Vec<(usize, T)> = if items.len().saturating_mul(SPARSE_READ_RATIO) < info.slots as usize
            {
                let slots: Vec<u32> = items.iter().map(|(_, s)| *s).collect();
                let read = self.read_sparse(info, &slots)?;
                items
                    .iter()
                    .zip(read)
                    .map(|(&(at, _), (_, r))| (at, make(which[at], r)))
                    .collect()
            } else {
                let (bytes, corrupt) = self.read_whole_segment(info)?;
                let (codec, table, _) = segment_table(&bytes, info).map_err(&corrupt)?;
                let body = bytes.get(header_len(info)..).unwrap_or(&[]);
                items
                    .par_iter()
                    .map(|&(at, slot)| {
                        let record = decode_slot(codec, table, body, slot).map_err(&corrupt)?;
                        Ok((at, make(which[at], record)))
                    })
                    .collect::<Result<_, IndexError>>()?
            };
            for (at, t) in made {
                out[at] = Some(t);
            }
        }
        out.into_iter()
            .zip(which)
            .map(|(t, &i)| {
                t.ok_or_else(|| IndexError::Corrupt {
                    path: self.dir().join("segments"),
                    detail: format!("no record for {}", files[i].path),
                })
            })
            .collect()
    }

    /// The records of the files at `which` (indices into `files`), handed to `visit` a batch
    /// of at most `batch` at a time with their file indices, so a caller holds one batch of
    /// decoded symbols, not all of them. Each segment is read and checked once (a few records
    /// of a large one by positioned reads); a batch is decoded on every core.
    pub fn visit_records<F>(
        &self,
        segments: &[SegmentInfo],
        files: &[FileRecord],
        which: &[usize],
        batch: usize,
        mut visit: F,
    ) -> Result<(), IndexError>
    where
        F: FnMut(Vec<(usize, FileSymbols)>) -> Result<(), IndexError>,
    {
        let batch = batch.max(1);
        for (seg, items) in by_segment(files, which.iter().map(|&i| (i, i))) {
            let info = self.listed(segments, seg)?;
            if items.len().saturating_mul(SPARSE_READ_RATIO) < info.slots as usize {
                for part in items.chunks(batch) {
                    let slots: Vec<u32> = part.iter().map(|(_, s)| *s).collect();
                    let read = self.read_sparse(info, &slots)?;
                    visit(
                        part.iter()
                            .map(|(i, _)| *i)
                            .zip(read.into_iter().map(|(_, r)| r))
                            .collect(),
                    )?;
                }
                continue;
            }
            let (bytes, corrupt) = self.read_whole_segment(info)?;
            let (codec, table, _) = segment_table(&bytes, info).map_err(&corrupt)?;
            let body = bytes.get(header_len(info)..).unwrap_or(&[]);
            for part in items.chunks(batch) {
                let decoded = part
                    .par_iter()
                    .map(|&(i, slot)| Ok((i, decode_slot(codec, table, body, slot).map_err(&corrupt)?)))
                    .collect::<Result<Vec<_>, IndexError>>()?;
                visit(decoded)?;
            }
        }
        Ok(())
    }

    /// The manifest's entry for segment `seg`.
    fn listed<'s>(&self, segments: &'s [SegmentInfo], seg: u32) -> Result<&'s SegmentInfo, IndexError> {
        segments
            .iter()
            .find(|s| s.id == seg)
            .ok_or_else(|| IndexError::Corrupt {
                path: self.dir().join("segments"),
                detail: format!("segment {seg} is not listed"),
            })
    }

    /// Checks a segment file's size and blake3 against its manifest entry.
    pub fn verify_segment(&self, info: &SegmentInfo) -> Result<(), IndexError> {
        let path = self.segment_path(info.id);
        let bytes = fs::read(&path).map_err(IndexError::io(&path))?;
        let detail = if bytes.len() as u64 != info.bytes {
            format!("{} bytes, the manifest says {}", bytes.len(), info.bytes)
        } else if blake3::hash(&bytes).to_hex().as_str() != info.blake3 {
            "checksum mismatch".to_string()
        } else {
            return Ok(());
        };
        Err(IndexError::Corrupt { path, detail })
    }

    /// A whole segment file, checked against the manifest's blake3, and how to name damage
    /// found in it.
    fn read_whole_segment(
        &self,
        info: &SegmentInfo,
    ) -> Result<(Vec<u8>, impl Fn(String) -> IndexError + use<>), IndexError> {
        let path = self.segment_path(info.id);
        let bytes = fs::read(&path).map_err(IndexError::io(&path))?;
        let corrupt = move |detail: String| IndexError::Corrupt {
            path: path.clone(),
            detail,
        };
        if blake3::hash(&bytes).to_hex().as_str() != info.blake3 {
            return Err(corrupt("checksum mismatch".into()));
        }
        Ok((bytes, corrupt))
    }

    /// A whole segment's records as stored (checked against the manifest's blake3), for a
    /// compaction that copies them without decoding.
    pub fn read_segment_encoded(&self, info: &SegmentInfo) -> Result<Vec<EncodedRecord>, IndexError> {
        let (bytes, corrupt) = self.read_whole_segment(info)?;
        let (codec, table, digests) = segment_table(&bytes, info).map_err(&corrupt)?;
        let body = bytes.get(header_len(info)..).unwrap_or(&[]);
        let offset = |i: usize| table_offset(table, i).map(|o| o as usize);
        (0..info.slots as usize)
            .map(|i| {
                let (a, b) = offset(i)
                    .zip(offset(i + 1))
                    .filter(|(a, b)| a <= b && *b <= body.len())
                    .ok_or_else(|| corrupt(format!("no record at slot {i}")))?;
                let mut digest = [0u8; RECORD_DIGEST];
                let d = digests
                    .get(RECORD_DIGEST * i..RECORD_DIGEST * (i + 1))
                    .ok_or_else(|| corrupt(format!("no digest for slot {i}")))?;
                digest.copy_from_slice(d);
                // An older segment's records are encoded again on the way.
                match codec.to_current(&body[a..b]).map_err(&corrupt)? {
                    None => Ok(EncodedRecord {
                        bytes: body[a..b].to_vec(),
                        digest,
                    }),
                    Some(bytes) => Ok(EncodedRecord {
                        digest: record_digest(&bytes),
                        bytes,
                    }),
                }
            })
            .collect()
    }

    /// Reads a whole segment and checks it against its manifest entry.
    pub fn read_segment(&self, info: &SegmentInfo) -> Result<Vec<FileSymbols>, IndexError> {
        let slots: Vec<u32> = (0..info.slots).collect();
        Ok(self
            .read_slots(info, &slots)?
            .into_iter()
            .map(|(_, r)| r)
            .collect())
    }

    /// Reads the records at `slots` of a segment (checksum verified), decoding only those.
    pub fn read_slots(
        &self,
        info: &SegmentInfo,
        slots: &[u32],
    ) -> Result<Vec<(u32, FileSymbols)>, IndexError> {
        // A few records of a large segment: read just them (and the offset table) instead of
        // reading and hashing the whole segment; a damaged record still fails to decode.
        if slots.len().saturating_mul(SPARSE_READ_RATIO) < info.slots as usize {
            return self.read_sparse(info, slots);
        }
        let (bytes, corrupt) = self.read_whole_segment(info)?;
        let (codec, table, _) = segment_table(&bytes, info).map_err(&corrupt)?;
        let body = bytes.get(header_len(info)..).unwrap_or(&[]);
        slots
            .iter()
            .map(|&slot| Ok((slot, decode_slot(codec, table, body, slot).map_err(&corrupt)?)))
            .collect()
    }

    /// [`IndexStore::read_slots`] by positioned reads: the header, the offset table, then
    /// each wanted record, checked against its own digest (and the file against its size):
    /// a reader never decodes damaged bytes, at the cost of hashing only what it reads.
    fn read_sparse(&self, info: &SegmentInfo, slots: &[u32]) -> Result<Vec<(u32, FileSymbols)>, IndexError> {
        use std::io::{Read, Seek, SeekFrom};
        let path = self.segment_path(info.id);
        let corrupt = |detail: String| IndexError::Corrupt {
            path: path.clone(),
            detail,
        };
        let mut f = fs::File::open(&path).map_err(IndexError::io(&path))?;
        let size = f.metadata().map_err(IndexError::io(&path))?.len();
        if size != info.bytes {
            return Err(corrupt(format!("{size} bytes, the manifest says {}", info.bytes)));
        }
        let head_len = header_len(info);
        let mut head = vec![0u8; head_len];
        f.read_exact(&mut head).map_err(IndexError::io(&path))?;
        let (codec, table, digests) = segment_table(&head, info).map_err(corrupt)?;
        let offset = |i: usize| table_offset(table, i);
        let mut out = Vec::with_capacity(slots.len());
        for &slot in slots {
            let i = slot as usize;
            let (a, b) = offset(i)
                .zip(offset(i + 1))
                .filter(|(a, b)| a <= b && b - a < u64::from(u32::MAX))
                .ok_or_else(|| corrupt(format!("no record at slot {slot}")))?;
            let mut record = vec![0u8; (b - a) as usize];
            f.seek(SeekFrom::Start(head_len as u64 + a))
                .map_err(IndexError::io(&path))?;
            f.read_exact(&mut record).map_err(IndexError::io(&path))?;
            if digests.get(RECORD_DIGEST * i..RECORD_DIGEST * (i + 1)) != Some(&record_digest(&record)[..]) {
                return Err(corrupt(format!("record {slot}: checksum mismatch")));
            }
            let decoded = codec.decode(&record).map_err(corrupt)?;
            out.push((slot, decoded));
        }
        Ok(out)
    }

    /// Starts generation `generation`: an empty `gen-N.tmp/` folder (a leftover of a killed
    /// build is removed) where layers write their parts before [`IndexStore::commit`].
    pub fn begin(&self, generation: u64) -> Result<PathBuf, IndexError> {
        let tmp = self.dir.join(format!("{}.tmp", gen_name(generation)));
        if tmp.exists() {
            fs::remove_dir_all(&tmp).map_err(IndexError::io(&tmp))?;
        }
        fs::create_dir_all(&tmp).map_err(IndexError::io(&tmp))?;
        Ok(tmp)
    }

    /// Writes a layer's part file into a generation being built; returns its blake3.
    /// The hash is taken beside the write and its sync (on every core for a large part), not
    /// after them.
    pub fn write_part(&self, gen_dir: &Path, file: &str, bytes: &[u8]) -> Result<String, IndexError> {
        let path = gen_dir.join(file);
        let (written, hash) = rayon::join(
            || -> Result<(), IndexError> {
                let mut f = File::create(&path).map_err(IndexError::io(&path))?;
                f.write_all(bytes).map_err(IndexError::io(&path))?;
                f.sync_all().map_err(IndexError::io(&path))
            },
            || blake3::Hasher::new().update_rayon(bytes).finalize(),
        );
        written?;
        Ok(hash.to_hex().to_string())
    }

    /// Writes a part file of a generation being built through `write`, which may seek back
    /// over what it wrote (a table filled in last), then syncs it and returns its blake3,
    /// read back from the file (in the page cache: the writer held no copy of it).
    pub fn write_part_streamed<T>(
        &self,
        gen_dir: &Path,
        file: &str,
        write: impl FnOnce(&mut std::io::BufWriter<File>) -> std::io::Result<T>,
    ) -> Result<(T, String), IndexError> {
        let path = gen_dir.join(file);
        let f = File::create(&path).map_err(IndexError::io(&path))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        let out = write(&mut w).map_err(IndexError::io(&path))?;
        let f = w
            .into_inner()
            .map_err(|e| IndexError::io(&path)(e.into_error()))?;
        f.sync_all().map_err(IndexError::io(&path))?;
        drop(f);
        let mut h = blake3::Hasher::new();
        h.update_mmap_rayon(&path).map_err(IndexError::io(&path))?;
        Ok((out, h.finalize().to_hex().to_string()))
    }

    /// Writes a part file named by its content into a generation being built, unless one of
    /// that name is there already (linked from the previous generation: the same bytes, and
    /// a file no build may write again). Never truncates a file that exists.
    pub fn write_new_part(&self, gen_dir: &Path, file: &str, bytes: &[u8]) -> Result<(), IndexError> {
        let path = gen_dir.join(file);
        let mut f = match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(()),
            Err(e) => return Err(IndexError::io(&path)(e)),
        };
        f.write_all(bytes).map_err(IndexError::io(&path))?;
        f.sync_all().map_err(IndexError::io(&path))
    }

    /// Reads a part file of a committed generation, checking its blake3 when one is given.
    pub fn read_part(
        &self,
        generation: u64,
        file: &str,
        blake3: Option<&str>,
    ) -> Result<Vec<u8>, IndexError> {
        let path = self.generation_dir(generation).join(file);
        let bytes = fs::read(&path).map_err(IndexError::io(&path))?;
        if let Some(expected) = blake3
            && blake3::hash(&bytes).to_hex().as_str() != expected
        {
            return Err(IndexError::Corrupt {
                path,
                detail: "checksum mismatch".to_string(),
            });
        }
        Ok(bytes)
    }

    /// Maps a part file of a committed generation read-only, to be decoded in place. Its
    /// reader checks the digests of the sections it decodes (the whole-file blake3 is `ken
    /// index verify`'s: checking it here would read every page of the part).
    pub fn map_part(
        &self,
        generation: u64,
        file: &str,
    ) -> Result<super::mapped_part::MappedPart, IndexError> {
        super::mapped_part::MappedPart::open(&self.generation_dir(generation).join(file))
    }

    /// Maps a part file of a committed generation and checks it whole against `blake3`: a
    /// read without the copy (for a part whose reader reads every page anyway, the check
    /// costs no extra page). Hashed on this thread, never on the pool: a reader opens parts
    /// inside a `OnceLock` that another task of the pool may wait on, and a worker that
    /// stole that task while hashing waited on itself (a fleet shard hung so).
    pub fn map_part_hashed(
        &self,
        generation: u64,
        file: &str,
        blake3: Option<&str>,
    ) -> Result<super::mapped_part::MappedPart, IndexError> {
        let map = self.map_part(generation, file)?;
        if let Some(expected) = blake3
            && blake3::hash(&map).to_hex().as_str() != expected
        {
            return Err(IndexError::Corrupt {
                path: self.generation_dir(generation).join(file),
                detail: "checksum mismatch".to_string(),
            });
        }
        Ok(map)
    }

    /// Writes the file table and manifest into the generation started by [`IndexStore::begin`]
    /// and switches `CURRENT` to it: the commit point of a build.
    pub fn commit(&self, manifest: &Manifest, table: &FileTable) -> Result<(), IndexError> {
        let name = gen_name(manifest.generation);
        let tmp = self.dir.join(format!("{name}.tmp"));
        let dest = self.dir.join(&name);
        fs::create_dir_all(&tmp).map_err(IndexError::io(&tmp))?;
        let files = tmp.join("files.bin");
        let table_bytes = postcard::to_stdvec(table).map_err(|e| IndexError::Corrupt {
            path: files.clone(),
            detail: e.to_string(),
        })?;
        write_synced(&files, &table_bytes)?;
        let mut manifest = manifest.clone();
        manifest.files_blake3 = Some(blake3::hash(&table_bytes).to_hex().to_string());
        manifest.stamps = self.stamps(&tmp, &manifest.segments);
        let mpath = tmp.join("manifest.json");
        let mbytes = manifest
            .into_bytes_with_digest()
            .map_err(|e| IndexError::Corrupt {
                path: mpath.clone(),
                detail: e.to_string(),
            })?;
        write_synced(&mpath, &mbytes)?;
        fsync_dir(&tmp).map_err(IndexError::io(&tmp))?;
        // A committed generation is never written again: readers map its files in place.
        if dest.exists() {
            return Err(IndexError::Corrupt {
                path: dest,
                detail: "this generation is already committed; a build numbers past it".to_string(),
            });
        }
        fs::rename(&tmp, &dest).map_err(IndexError::io(&dest))?;
        fsync_dir(&self.dir).map_err(IndexError::io(&self.dir))?;
        let current = self.dir.join("CURRENT");
        write_atomic(&current, format!("{name}\n").as_bytes()).map_err(IndexError::io(&current))
    }

    /// The stamps of a generation about to be committed: every file of `gen_dir` but the
    /// manifest and the file table (both checked whole on every read), and its segments.
    fn stamps(&self, gen_dir: &Path, segments: &[SegmentInfo]) -> BTreeMap<String, FileStamp> {
        let mut out = BTreeMap::new();
        let mut todo = vec![gen_dir.to_path_buf()];
        while let Some(dir) = todo.pop() {
            let Ok(entries) = fs::read_dir(&dir) else { continue };
            for e in entries.flatten() {
                let path = e.path();
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    todo.push(path);
                    continue;
                }
                let Ok(rel) = path.strip_prefix(gen_dir) else {
                    continue;
                };
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                let rel = rel.join("/");
                if rel == "manifest.json" || rel == "files.bin" {
                    continue;
                }
                if let Some(stamp) = FileStamp::of(&path) {
                    out.insert(format!("gen/{rel}"), stamp);
                }
            }
        }
        for s in segments {
            if let Some(stamp) = FileStamp::of(&self.segment_path(s.id)) {
                out.insert(segment_key(s.id), stamp);
            }
        }
        out
    }

    /// Removes what an interrupted or failed build left: generation folders it began
    /// (`gen-N.tmp`), half-written files (`*.tmp-*`), and segments no committed generation on
    /// disk names. Called with the build lock held, so no other build is writing them.
    /// Failures are ignored (the next build retries); returns the bytes freed.
    pub fn clear_interrupted(&self) -> u64 {
        let mut freed = 0;
        let mut named = HashSet::new();
        let mut unreadable = false;
        if let Ok(entries) = fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if let Some(g) = parse_gen_name(&name) {
                    match self.read_manifest(g) {
                        Ok(m) => named.extend(m.segments.iter().map(|s| s.id)),
                        Err(_) => unreadable = true,
                    }
                } else if is_temporary(&name) {
                    freed += remove_entry(&e.path());
                }
            }
        }
        // A generation whose manifest cannot be read may name any segment: keep them all.
        if !unreadable {
            freed += self.remove_segments_but(&named);
        }
        freed
    }

    /// Removes every segment file whose id is not in `named`; returns the bytes freed.
    fn remove_segments_but(&self, named: &HashSet<u32>) -> u64 {
        let Ok(entries) = fs::read_dir(self.dir.join("segments")) else {
            return 0;
        };
        entries
            .flatten()
            .filter(|e| segment_id(&e.file_name().to_string_lossy()).is_none_or(|id| !named.contains(&id)))
            .map(|e| remove_entry(&e.path()))
            .sum()
    }

    /// Records that this index belongs to `root`, refusing an index folder outside `root` that
    /// another existing tree's builds wrote: `--index-dir` naming another repository's index
    /// would otherwise replace it with this one. An index inside its tree belongs to it by
    /// place (a copied or moved repository takes its index along).
    pub fn claim_root(&self, root: &Path) -> Result<(), IndexError> {
        let path = self.dir.join(ROOT_FILE);
        let inside = self.dir.canonicalize().is_ok_and(|d| d.starts_with(root));
        if !inside && let Ok(text) = fs::read_to_string(&path) {
            let recorded = PathBuf::from(text.trim_end_matches('\n'));
            if let Some(other) = recorded.canonicalize().ok().filter(|r| r != root) {
                return Err(IndexError::OtherRoot {
                    dir: self.dir.clone(),
                    owner: other,
                    root: root.to_path_buf(),
                });
            }
        }
        let text = format!("{}\n", root.display());
        if fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            write_atomic(&path, text.as_bytes()).map_err(IndexError::io(&path))?;
        }
        Ok(())
    }

    /// The highest generation and segment numbers present on disk (0 when none): a build
    /// that cannot reuse the previous generation (`--full`, damage) still numbers past them,
    /// so it never writes over a file a reader may hold.
    pub fn highest_ids(&self) -> (u64, u32) {
        let gens = fs::read_dir(&self.dir)
            .map(|d| {
                d.flatten()
                    .filter_map(|e| parse_gen_name(e.file_name().to_string_lossy().trim_end_matches(".tmp")))
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        let segs = fs::read_dir(self.dir.join("segments"))
            .map(|d| {
                d.flatten()
                    .filter_map(|e| segment_id(&e.file_name().to_string_lossy()))
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        (gens, segs)
    }

    /// Removes generations other than `keep` and those a live reader holds a lease on (see
    /// `reader_lease`), temporaries, and segments no kept generation references. Failures are
    /// ignored: garbage is retried next build.
    pub fn collect_garbage(&self, keep: &[u64]) {
        let mut keep = keep.to_vec();
        keep.extend(super::reader_lease::leased_generations(&self.dir));
        let live_segments: HashSet<u32> = keep
            .iter()
            .filter_map(|&g| self.read_manifest(g).ok())
            .flat_map(|m| m.segments.into_iter().map(|s| s.id))
            .collect();
        if let Ok(entries) = fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                let stale_gen = parse_gen_name(&name).is_some_and(|g| !keep.contains(&g));
                if stale_gen || is_temporary(&name) {
                    remove_entry(&e.path());
                }
            }
        }
        self.remove_segments_but(&live_segments);
    }
}

/// A generation folder a build began (`gen-N.tmp`) or a half-written file (`*.tmp-*`).
fn is_temporary(name: &str) -> bool {
    name.starts_with("gen-") && name.ends_with(".tmp") || name.contains(".tmp-")
}

/// The id of a segment file named `seg-N.bin`.
fn segment_id(name: &str) -> Option<u32> {
    name.strip_prefix("seg-")?.strip_suffix(".bin")?.parse().ok()
}

/// Removes a file or folder, returning the bytes it held (0 when it could not be removed).
fn remove_entry(path: &Path) -> u64 {
    let bytes = bytes_under(path);
    let removed = fs::remove_dir_all(path).or_else(|_| fs::remove_file(path));
    if removed.is_ok() { bytes } else { 0 }
}

/// The bytes of the file at `path`, or of every file under the folder at `path`.
fn bytes_under(path: &Path) -> u64 {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::read_dir(path)
            .map(|es| es.flatten().map(|e| bytes_under(&e.path())).sum())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), IndexError> {
    let mut f = File::create(path).map_err(IndexError::io(path))?;
    f.write_all(bytes).map_err(IndexError::io(path))?;
    f.sync_all().map_err(IndexError::io(path))
}

/// One file's symbol record as a segment stores it, with its digest.
#[derive(Debug, Clone)]
pub struct EncodedRecord {
    bytes: Vec<u8>,
    digest: [u8; RECORD_DIGEST],
}

impl EncodedRecord {
    pub fn of(symbols: &FileSymbols) -> Result<EncodedRecord, String> {
        let bytes = RecordCodec::encode(symbols)?;
        let digest = record_digest(&bytes);
        Ok(EncodedRecord { bytes, digest })
    }
}

/// Bytes before a segment's first record: magic, record count, offset table, digests.
fn header_len(info: &SegmentInfo) -> usize {
    MAGIC_COLUMNS.len() + 4 + 8 * (info.slots as usize + 1) + RECORD_DIGEST * info.slots as usize
}

fn record_digest(record: &[u8]) -> [u8; RECORD_DIGEST] {
    let mut d = [0u8; RECORD_DIGEST];
    d.copy_from_slice(&blake3::hash(record).as_bytes()[..RECORD_DIGEST]);
    d
}

/// How a segment stores its records, its offset table and its digest table, after checking
/// its magic and record count against the manifest.
fn segment_table<'b>(
    bytes: &'b [u8],
    info: &SegmentInfo,
) -> Result<(RecordCodec, &'b [u8], &'b [u8]), String> {
    let (codec, rest) = RecordCodec::of_segment(bytes).ok_or_else(|| "bad magic".to_string())?;
    let count = rest
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes);
    if count != Some(info.slots) {
        return Err(format!("{count:?} records, manifest says {}", info.slots));
    }
    let offsets_end = 4 + 8 * (info.slots as usize + 1);
    let table = rest
        .get(4..offsets_end)
        .ok_or_else(|| "truncated offsets".to_string())?;
    let digests = rest
        .get(offsets_end..offsets_end + RECORD_DIGEST * info.slots as usize)
        .ok_or_else(|| "truncated digests".to_string())?;
    Ok((codec, table, digests))
}

/// Offset `i` of an offset table (from the start of the records).
fn table_offset(table: &[u8], i: usize) -> Option<u64> {
    table
        .get(8 * i..8 * i + 8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
}

/// The record at `slot` of a segment's records `body`, found by its offset table.
fn decode_slot(codec: RecordCodec, table: &[u8], body: &[u8], slot: u32) -> Result<FileSymbols, String> {
    let s = slot as usize;
    let offset = |i: usize| table_offset(table, i).map(|o| o as usize);
    let (a, b) = offset(s)
        .zip(offset(s + 1))
        .filter(|(a, b)| a <= b && *b <= body.len())
        .ok_or_else(|| format!("no record at slot {slot}"))?;
    codec.decode(&body[a..b])
}

/// The items' (key, slot) grouped by segment, in the order given within each: `key` is what a
/// caller places each record by.
fn by_segment(
    files: &[FileRecord],
    items: impl Iterator<Item = (usize, usize)>,
) -> BTreeMap<u32, Vec<(usize, u32)>> {
    let mut out: BTreeMap<u32, Vec<(usize, u32)>> = BTreeMap::new();
    for (key, i) in items {
        out.entry(files[i].segment)
            .or_default()
            .push((key, files[i].slot));
    }
    out
}

/// A segment's key in a manifest's stamps.
pub(crate) fn segment_key(id: u32) -> String {
    format!("segments/seg-{id:08}.bin")
}

fn gen_name(generation: u64) -> String {
    format!("gen-{generation:08}")
}

fn parse_gen_name(name: &str) -> Option<u64> {
    name.strip_prefix("gen-")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::LanguageRegistry;
    use crate::parse::FileParser;
    use crate::symbols::RepoPath;

    fn records(n: usize) -> Vec<FileSymbols> {
        let registry = LanguageRegistry::builtin().expect("registry");
        let python = registry.by_name("python").expect("python");
        let mut parser = FileParser::new();
        (0..n)
            .map(|i| {
                let text: String = (0..30)
                    .map(|j| {
                        format!(
                            "def handler_{i}_{j}(request):\n    return render(request, 'page_{j}.html')\n"
                        )
                    })
                    .collect();
                parser.parse(python, text.as_bytes())
            })
            .collect()
    }

    /// A store at `dir` with segment 1 written now: `n` records, and its entry.
    fn written(dir: &Path, n: usize) -> (IndexStore, Vec<FileSymbols>, SegmentInfo) {
        let store = IndexStore::new(dir);
        fs::create_dir_all(dir.join("segments")).expect("mkdir");
        let want = records(n);
        let encoded: Vec<EncodedRecord> = want
            .iter()
            .map(|r| EncodedRecord::of(r).expect("encode"))
            .collect();
        let info = store
            .write_segment(1, &encoded.iter().collect::<Vec<_>>())
            .expect("write");
        (store, want, info)
    }

    /// A segment as an older format wrote it: the records' postcard bytes raw (format 3) or
    /// compressed (format 4), under its magic.
    fn write_older_segment(store: &IndexStore, id: u32, records: &[FileSymbols], format: u8) -> SegmentInfo {
        use super::super::record_codec::{MAGIC_RAW, MAGIC_ZSTD};
        let raw: Vec<EncodedRecord> = records
            .iter()
            .map(|r| {
                let bytes = postcard::to_stdvec(r).expect("postcard");
                let bytes = match format {
                    3 => bytes,
                    _ => crate::util::zstd_compress(&bytes, 3).expect("zstd"),
                };
                EncodedRecord {
                    digest: record_digest(&bytes),
                    bytes,
                }
            })
            .collect();
        store
            .write_segment(id, &raw.iter().collect::<Vec<_>>())
            .expect("write");
        let path = store.segment_path(id);
        let mut bytes = fs::read(&path).expect("read");
        bytes[..8].copy_from_slice(if format == 3 { MAGIC_RAW } else { MAGIC_ZSTD });
        fs::write(&path, &bytes).expect("write");
        SegmentInfo {
            id,
            slots: raw.len() as u32,
            bytes: bytes.len() as u64,
            blake3: blake3::hash(&bytes).to_hex().to_string(),
        }
    }

    fn files(info: &SegmentInfo) -> Vec<FileRecord> {
        (0..info.slots)
            .map(|slot| FileRecord {
                path: RepoPath::parse(&format!("f{slot}.py")).expect("path"),
                language: "python".into(),
                size: 0,
                mtime_ns: 0,
                hash: [0; 32],
                lines: 2,
                module: format!("f{slot}"),
                package: None,
                symbol_counts: Default::default(),
                references: 0,
                imports: 0,
                diagnostics: Vec::new(),
                segment: info.id,
                slot,
            })
            .collect()
    }

    /// Every way a segment is read gives the records back, from a segment written now
    /// (columns), from one written by format 4 (postcard, compressed) and from one written by
    /// format 3 (raw); a compaction of an old one writes the current format.
    #[test]
    fn current_and_older_segments_read_alike_on_every_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, want, new) = written(dir.path(), 20);
        let old = write_older_segment(&store, 2, &want, 3);
        let format4 = write_older_segment(&store, 3, &want, 4);
        assert!(
            new.bytes < format4.bytes,
            "columns {} bytes, format 4 {}",
            new.bytes,
            format4.bytes
        );
        let raw_len: usize = want
            .iter()
            .map(|r| postcard::to_stdvec(r).expect("postcard").len())
            .sum();
        assert!(
            (new.bytes as usize) < old.bytes as usize,
            "compressed {} bytes, raw {} ({raw_len} of records)",
            new.bytes,
            old.bytes
        );
        for info in [&new, &old, &format4] {
            assert_eq!(
                store.read_segment(info).expect("whole"),
                want,
                "segment {}",
                info.id
            );
            // One record of twenty: read by positioned reads, checked by its own digest.
            let sparse = store.read_slots(info, &[7]).expect("sparse");
            assert_eq!(sparse, vec![(7, want[7].clone())]);
            let table = files(info);
            let which: Vec<usize> = (0..want.len()).rev().collect();
            let loaded = store
                .map_records(std::slice::from_ref(info), &table, &which, |_, r| r)
                .expect("load");
            assert_eq!(loaded, which.iter().map(|&i| want[i].clone()).collect::<Vec<_>>());
            let mut visited = Vec::new();
            store
                .visit_records(std::slice::from_ref(info), &table, &which, 6, |batch| {
                    visited.extend(batch);
                    Ok(())
                })
                .expect("visit");
            visited.sort_by_key(|(i, _)| *i);
            assert_eq!(visited.into_iter().map(|(_, r)| r).collect::<Vec<_>>(), want);
            let copied = store.read_segment_encoded(info).expect("encoded");
            let again = store
                .write_segment(10 + info.id, &copied.iter().collect::<Vec<_>>())
                .expect("compact");
            assert_eq!(store.read_segment(&again).expect("compacted"), want);
            assert_eq!(again.bytes, new.bytes, "a compaction writes the current format");
        }
    }

    #[test]
    fn a_damaged_compressed_record_is_named_not_decoded() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, _, info) = written(dir.path(), 16);
        let path = store.segment_path(1);
        let mut bytes = fs::read(&path).expect("read");
        let last = bytes.len() - 3;
        bytes[last] ^= 0xff;
        fs::write(&path, &bytes).expect("write");
        let err = store.read_slots(&info, &[15]).expect_err("damaged record");
        assert!(err.to_string().contains("checksum"), "{err}");
        let err = store.read_segment(&info).expect_err("damaged segment");
        assert!(err.to_string().contains("seg-00000001"), "{err}");
    }
}
