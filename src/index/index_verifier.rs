//! `IndexVerifier`: checks a committed generation end to end — `FORMAT`, `CURRENT`, the
//! manifest, the file table, every segment it references (size and blake3), the records'
//! references into them, the lexical part (tantivy's per-file checksums), the graph and the
//! vectors (blake3, and with `deep` a full decode) — and lists what is damaged, by path.
//! `ken index verify` runs it deep; every build runs it shallow on the generation it is about
//! to reuse, so damage is rebuilt from the source files instead of carried forward. A build
//! reads only the files whose stamps (size, mtime, inode as committed) no longer match: a
//! file written since its commit is hashed, one untouched costs a `stat`.

use std::collections::BTreeMap;
use std::path::Path;

use rayon::prelude::*;
use serde::Serialize;

use super::file_stamp::CommitStamps;
use super::history_part::HistoryPart;
use super::index_store::segment_key;
use super::vector_store::VectorStore;
use super::{FileTable, IndexError, IndexStore, Manifest, PartEntry};
use crate::graph::CodeGraph;
use crate::lexical::LexicalIndex;

/// One damaged file of the index.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Damage {
    pub path: String,
    /// Which part it belongs to: `current`, `manifest`, `files`, `segment`, `lexical`,
    /// `graph`, `vectors`.
    pub part: &'static str,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct VerifyReport {
    pub index_dir: String,
    pub generation: Option<u64>,
    /// What was checked: counts per kind.
    pub checked: BTreeMap<String, u64>,
    pub damage: Vec<Damage>,
}

pub struct IndexVerifier;

impl Damage {
    pub fn new(path: &Path, part: &'static str, detail: impl ToString) -> Damage {
        Damage {
            path: path.display().to_string(),
            part,
            detail: detail.to_string(),
        }
    }
}

impl IndexVerifier {
    /// Verifies the current generation of the index in `index_dir`. Fails only when there is
    /// no index at all (or a foreign one); damage is the report's content.
    pub fn verify(index_dir: &Path, deep: bool) -> Result<VerifyReport, IndexError> {
        let store = IndexStore::new(index_dir);
        if !store.check_format()? {
            return Err(IndexError::NoIndex(index_dir.to_path_buf()));
        }
        let mut report = VerifyReport {
            index_dir: index_dir.display().to_string(),
            generation: None,
            checked: BTreeMap::new(),
            damage: Vec::new(),
        };
        let generation = match store.current() {
            Ok(Some(g)) => g,
            Ok(None) => return Ok(report),
            Err(e) => {
                report
                    .damage
                    .push(Damage::new(&index_dir.join("CURRENT"), "current", e.brief()));
                return Ok(report);
            }
        };
        report.generation = Some(generation);
        let gen_dir = store.generation_dir(generation);
        let manifest = match store.read_manifest(generation) {
            Ok(m) => m,
            Err(e) => {
                report
                    .damage
                    .push(Damage::new(&gen_dir.join("manifest.json"), "manifest", e.brief()));
                return Ok(report);
            }
        };
        let table = match store.read_file_table(generation, &manifest) {
            Ok(t) => Some(t),
            Err(e) => {
                report
                    .damage
                    .push(Damage::new(&gen_dir.join("files.bin"), "files", e.brief()));
                None
            }
        };
        report.damage.extend(Self::parts(
            &store,
            generation,
            &manifest,
            table.as_ref(),
            deep,
            None,
        ));
        let mut count = |k: &str, n: usize| {
            report.checked.insert(k.to_string(), n as u64);
        };
        count("segments", manifest.segments.len());
        count("files", table.as_ref().map_or(0, |t| t.files.len()));
        count("parts", manifest.parts.len());
        Ok(report)
    }

    /// The damage in a generation's segments, record references and parts. With `stamps`,
    /// a file whose stamp says it is as committed is not read (a build's check of the
    /// generation it reuses); without, every file is read and hashed.
    pub fn parts(
        store: &IndexStore,
        generation: u64,
        manifest: &Manifest,
        table: Option<&FileTable>,
        deep: bool,
        stamps: Option<&CommitStamps<'_>>,
    ) -> Vec<Damage> {
        let gen_dir = store.generation_dir(generation);
        let unchanged = |key: &str, path: &Path| stamps.is_some_and(|s| s.unchanged(key, path));
        // The four parts side by side (each is a read and a hash of tens of megabytes).
        let ((segments, lexical), (graph, vectors)) = rayon::join(
            || {
                rayon::join(
                    || Self::segments(store, manifest, table, &gen_dir, &unchanged),
                    || Self::lexical(manifest, &gen_dir, &unchanged),
                )
            },
            || {
                rayon::join(
                    || {
                        let decode = |b: &[u8]| CodeGraph::decode(b).map(|_| ()).map_err(|e| e.to_string());
                        Self::part(
                            store,
                            generation,
                            manifest.parts.graph.as_ref(),
                            deep,
                            decode,
                            &unchanged,
                        )
                    },
                    || {
                        // Decoded, its row files must be the ones the manifest lists.
                        let part = manifest.parts.vectors.as_ref();
                        let listed = part.map(|p| p.rows.as_slice()).unwrap_or_default();
                        // An older layout is not damage: readers name it, and a build re-embeds.
                        let older = part.is_some_and(|p| p.older());
                        let decode = |b: &[u8]| match VectorStore::decode(b) {
                            _ if older => Ok(()),
                            Ok(s) if s.rows == listed => Ok(()),
                            Ok(_) => Err("its row files are not the ones the manifest lists".to_string()),
                            Err(e) => Err(e.to_string()),
                        };
                        Self::part(store, generation, part, deep, decode, &unchanged)
                    },
                )
            },
        );
        let mut out = segments;
        out.extend(lexical);
        out.extend(graph);
        out.extend(vectors);
        out.extend(Self::vector_rows(store, generation, manifest, &unchanged));
        // A history part that says it is missing has no file.
        let decode = |b: &[u8]| {
            postcard::from_bytes::<HistoryPart>(b)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        out.extend(Self::part(
            store,
            generation,
            manifest.parts.history.as_ref(),
            deep,
            decode,
            &unchanged,
        ));
        out
    }

    fn segments(
        store: &IndexStore,
        manifest: &Manifest,
        table: Option<&FileTable>,
        gen_dir: &Path,
        unchanged: &(dyn Fn(&str, &Path) -> bool + Sync),
    ) -> Vec<Damage> {
        let mut out: Vec<Damage> = manifest
            .segments
            .par_iter()
            .filter(|s| !unchanged(&segment_key(s.id), &store.segment_path(s.id)))
            .filter_map(|s| {
                store
                    .verify_segment(s)
                    .err()
                    .map(|e| Damage::new(&store.segment_path(s.id), "segment", e.brief()))
            })
            .collect();
        if let Some(t) = table {
            let slots: BTreeMap<u32, u32> = manifest.segments.iter().map(|s| (s.id, s.slots)).collect();
            if let Some(bad) = t
                .files
                .iter()
                .find(|r| slots.get(&r.segment).is_none_or(|&n| r.slot >= n))
            {
                out.push(Damage::new(
                    &gen_dir.join("files.bin"),
                    "files",
                    format!(
                        "{} points at segment {} slot {}, which the manifest does not have",
                        bad.path, bad.segment, bad.slot
                    ),
                ));
            }
        }
        out
    }

    fn lexical(
        manifest: &Manifest,
        gen_dir: &Path,
        unchanged: &(dyn Fn(&str, &Path) -> bool + Sync),
    ) -> Vec<Damage> {
        let Some(part) = &manifest.parts.lexical else {
            return Vec::new();
        };
        let name = part.dir.as_str();
        let dir = gen_dir.join(name);
        // Every file the part lists as committed: nothing to read.
        if !part.files.is_empty()
            && part
                .files
                .keys()
                .all(|f| unchanged(&format!("gen/{name}/{f}"), &dir.join(f)))
        {
            return Vec::new();
        }
        match LexicalIndex::damaged_files(&dir) {
            Ok(files) => files
                .into_iter()
                .map(|f| Damage::new(&dir.join(f), "lexical", "checksum mismatch"))
                .collect(),
            Err(e) => vec![Damage::new(&dir, "lexical", e)],
        }
    }

    /// The vector part's row files and their sign bits' files (listed in its manifest entry)
    /// against their sizes and blake3, on every core; those whose stamps match are not read.
    fn vector_rows(
        store: &IndexStore,
        generation: u64,
        manifest: &Manifest,
        unchanged: &(dyn Fn(&str, &Path) -> bool + Sync),
    ) -> Vec<Damage> {
        let Some(part) = &manifest.parts.vectors else {
            return Vec::new();
        };
        let dim = part.dim as usize;
        let gen_dir = store.generation_dir(generation);
        // Each row file and the file of its sign bits.
        let files: Vec<(String, &str, usize, u32)> = part
            .rows
            .iter()
            .flat_map(|r| {
                let n = r.points as usize;
                [
                    (
                        r.file.clone(),
                        r.blake3.as_str(),
                        n * crate::vector::row_len(dim),
                        r.points,
                    ),
                    (
                        r.codes_file(),
                        r.codes.as_str(),
                        n * crate::vector::code_len(dim),
                        r.points,
                    ),
                ]
            })
            .collect();
        files
            .par_iter()
            .filter_map(|(file, blake3, len, points)| {
                let path = gen_dir.join(file);
                if unchanged(&format!("gen/{file}"), &path) {
                    return None;
                }
                match store.read_part(generation, file, Some(blake3)) {
                    Err(e) => Some(Damage::new(&path, "vectors", e.brief())),
                    Ok(b) if b.len() != *len => Some(Damage::new(
                        &path,
                        "vectors",
                        format!("{} bytes, the part says {points} points of {dim}", b.len()),
                    )),
                    Ok(_) => None,
                }
            })
            .collect()
    }

    /// A part file against its recorded blake3 (and, `deep` or without one, decoded).
    fn part<P: PartEntry>(
        store: &IndexStore,
        generation: u64,
        part: Option<&P>,
        deep: bool,
        decode: impl Fn(&[u8]) -> Result<(), String>,
        unchanged: &(dyn Fn(&str, &Path) -> bool + Sync),
    ) -> Vec<Damage> {
        let Some((file, hash)) = part.and_then(PartEntry::stored) else {
            return Vec::new();
        };
        let name = P::NAME;
        let path = store.generation_dir(generation).join(file);
        if !deep && hash.is_some() && unchanged(&format!("gen/{file}"), &path) {
            return Vec::new();
        }
        match store.read_part(generation, file, hash) {
            Err(e) => vec![Damage::new(&path, name, e.brief())],
            Ok(bytes) if deep || hash.is_none() => match decode(&bytes) {
                Err(e) => vec![Damage::new(&path, name, e)],
                Ok(_) => Vec::new(),
            },
            Ok(_) => Vec::new(),
        }
    }
}
