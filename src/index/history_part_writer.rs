//! `HistoryPartWriter`: the history part of a generation. Git is read on a thread of its own
//! while the tree is parsed, from the previous generation's part plus the commits since, or
//! whole; a tree that is not a git repository gets an entry that says so.

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::generation_parts::{HistoryPartEntry, HistoryPartRead};
use super::history_part::{HISTORY_FILE, HISTORY_VERSION, HistoryError, HistoryPart, HistoryRead};
use super::previous_generation::PreviousGeneration;
use super::{IndexError, IndexStore};

/// What the reader thread gives back: the history (or why not), and how long it took.
type HistoryReading = (Result<(HistoryPart, HistoryRead), HistoryError>, Duration);

/// The history being read beside the build.
pub(super) struct HistoryPartWriter {
    reading: JoinHandle<HistoryReading>,
}

impl HistoryPartWriter {
    /// Starts reading `root`'s history, adding to the previous generation's part where this
    /// ken can.
    pub fn start(
        root: PathBuf,
        store: &IndexStore,
        previous: Option<&PreviousGeneration>,
    ) -> HistoryPartWriter {
        let before = previous_history(store, previous);
        let reading = std::thread::spawn(move || {
            let t = Instant::now();
            (HistoryPart::read(&root, before), t.elapsed())
        });
        HistoryPartWriter { reading }
    }

    /// Waits for the reader and writes the part.
    pub fn write(self, store: &IndexStore, gen_dir: &Path) -> Result<HistoryPartEntry, IndexError> {
        let (result, took) = self.reading.join().unwrap_or_else(|_| {
            (
                Err(HistoryError::Git("log".into(), "the reader panicked".into())),
                Default::default(),
            )
        });
        let (part, read) = match result {
            Ok(r) => r,
            Err(e) => return Ok(HistoryPartEntry::missing(e.to_string())),
        };
        let bytes = postcard::to_allocvec(&part).map_err(|e| IndexError::Corrupt {
            path: gen_dir.join(HISTORY_FILE),
            detail: format!("encoding: {e}"),
        })?;
        let blake3 = store.write_part(gen_dir, HISTORY_FILE, &bytes)?;
        Ok(HistoryPartEntry::Read(HistoryPartRead {
            version: HISTORY_VERSION,
            file: HISTORY_FILE.to_string(),
            blake3,
            head: part.head,
            commits: part.commits,
            skipped_large: part.skipped_large,
            truncated: part.truncated,
            files: part.files.len() as u64,
            new_commits: read.new_commits,
            incremental: read.incremental,
            ms: took.as_millis() as u64,
        }))
    }
}

/// The previous generation's history part, when this ken can add to it.
fn previous_history(store: &IndexStore, previous: Option<&PreviousGeneration>) -> Option<HistoryPart> {
    let p = previous?;
    let part = p.manifest.parts.history.as_ref()?.current()?;
    let bytes = store
        .read_part(p.generation, &part.file, Some(&part.blake3))
        .ok()?;
    postcard::from_bytes(&bytes).ok()
}
