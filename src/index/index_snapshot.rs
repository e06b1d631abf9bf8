//! `IndexSnapshot`: a committed generation opened for reading. Takes no build lock; a build
//! running meanwhile writes a new generation and never touches this one, and the snapshot's
//! [`ReaderLease`] keeps garbage collection off it (and its segments) until it is dropped.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::reader_lease::{ReaderLease, lease, reader_gate};
use super::semantic_index::SemanticIndex;
use super::vector_rows::Rows;
use super::vector_store::{ChunkTable, VECTOR_VERSION};
use super::{FileTable, IndexError, IndexStore, Manifest};
use crate::graph::{CodeGraph, GRAPH_VERSION};
use crate::lexical::{LEXICAL_VERSION, LexicalIndex};
use crate::symbols::{FileId, FileSymbols};

#[derive(Debug)]
pub struct IndexSnapshot {
    store: IndexStore,
    generation: u64,
    pub manifest: Manifest,
    pub table: FileTable,
    /// Keeps this generation from being collected while the snapshot lives.
    _lease: Option<ReaderLease>,
}

impl IndexSnapshot {
    /// Opens the current generation of the index in `index_dir`.
    pub fn open(index_dir: &Path) -> Result<IndexSnapshot, IndexError> {
        let store = IndexStore::new(index_dir);
        if !store.check_format()? {
            return Err(IndexError::NoIndex(index_dir.to_path_buf()));
        }
        // A build may switch CURRENT and collect the generation we just chose: retry once.
        let mut last_err = None;
        for _ in 0..2 {
            // Under the gate, the generation `CURRENT` names is leased before a collector can
            // list the leases: it stays on disk for as long as the snapshot lives.
            let gate = reader_gate(index_dir);
            let Some(generation) = store.current()? else {
                return Err(IndexError::NoIndex(index_dir.to_path_buf()));
            };
            let lease = gate.as_ref().and_then(|_| lease(index_dir, generation));
            drop(gate);
            match Self::open_generation(&store, generation, lease) {
                Ok(s) => return Ok(s),
                Err(e @ IndexError::Io { .. }) => last_err = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last_err.unwrap_or_else(|| IndexError::NoIndex(index_dir.to_path_buf())))
    }

    /// The committed generation's number, read from `CURRENT` alone (cheap: a server polls it).
    pub fn current_generation(index_dir: &Path) -> Result<Option<u64>, IndexError> {
        IndexStore::new(index_dir).current()
    }

    fn open_generation(
        store: &IndexStore,
        generation: u64,
        lease: Option<ReaderLease>,
    ) -> Result<IndexSnapshot, IndexError> {
        let manifest = store.read_manifest(generation)?;
        let table = store.read_file_table(generation, &manifest)?;
        Ok(IndexSnapshot {
            store: store.clone(),
            generation,
            manifest,
            table,
            _lease: lease,
        })
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn index_dir(&self) -> &Path {
        self.store.dir()
    }

    pub fn generation_dir(&self) -> PathBuf {
        self.store.generation_dir(self.generation)
    }

    /// Loads every file's symbols, in `FileId` order (segments decoded in parallel).
    pub fn load_symbols(&self) -> Result<Vec<FileSymbols>, IndexError> {
        let segments: Vec<(u32, Vec<FileSymbols>)> = self
            .manifest
            .segments
            .par_iter()
            .map(|s| self.store.read_segment(s).map(|v| (s.id, v)))
            .collect::<Result<_, _>>()?;
        let mut by_id: std::collections::HashMap<u32, Vec<Option<FileSymbols>>> = segments
            .into_iter()
            .map(|(id, v)| (id, v.into_iter().map(Some).collect()))
            .collect();
        self.table
            .files
            .iter()
            .map(|r| {
                by_id
                    .get_mut(&r.segment)
                    .and_then(|v| v.get_mut(r.slot as usize))
                    .and_then(Option::take)
                    .ok_or_else(|| IndexError::Corrupt {
                        path: self.generation_dir().join("files.bin"),
                        detail: format!(
                            "{} points at missing segment {} slot {}",
                            r.path, r.segment, r.slot
                        ),
                    })
            })
            .collect()
    }

    /// Whether this ken reads a part of layout `version`: an older one is named as old (the
    /// next build makes it again), a newer one as damage of `path`.
    fn readable(&self, part: &'static str, version: u32, reads: u32, path: &Path) -> Result<(), IndexError> {
        match version {
            v if v == reads => Ok(()),
            v if v < reads => Err(IndexError::OldPart {
                dir: self.index_dir().to_path_buf(),
                part,
                found: u64::from(v),
                reads,
            }),
            v => Err(IndexError::Corrupt {
                path: path.to_path_buf(),
                detail: format!("{part} version {v}, this ken reads {reads}"),
            }),
        }
    }

    /// Opens the lexical (tantivy) part of this generation.
    pub fn lexical(&self) -> Result<LexicalIndex, IndexError> {
        let Some(part) = &self.manifest.parts.lexical else {
            return Err(IndexError::MissingPart {
                dir: self.index_dir().to_path_buf(),
                part: "lexical",
            });
        };
        let dir = self.generation_dir().join(&part.dir);
        // Another schema reads as damage to tantivy (a field that is not a column): named here
        // by its version instead.
        self.readable("lexical", part.version, LEXICAL_VERSION, &dir)?;
        // Cheap: a missing or truncated file is refused before tantivy reads it.
        if part.files.is_empty() {
            return Ok(LexicalIndex::open(&dir)?);
        }
        let mut bytes = 0u64;
        for (name, &want) in &part.files {
            let path = dir.join(name);
            let size = std::fs::metadata(&path).map(|m| m.len()).ok();
            if size != Some(want) {
                let found = size.map_or("missing".to_string(), |s| format!("{s} bytes"));
                return Err(IndexError::Corrupt {
                    path,
                    detail: format!(
                        "{found}, the manifest says {want} bytes; run `ken index build` to repair"
                    ),
                });
            }
            bytes += want;
        }
        Ok(LexicalIndex::open_sized(&dir, bytes)?)
    }

    /// Loads the code graph part of this generation (every section checked against its digest).
    pub fn graph(&self) -> Result<CodeGraph, IndexError> {
        let (path, bytes) = self.graph_map()?;
        CodeGraph::decode(&bytes).map_err(|e| IndexError::Corrupt {
            path,
            detail: e.to_string(),
        })
    }

    /// Loads the code graph's heads only: every file's names, spans and rank; a file's
    /// references and resolutions are decoded when asked for ([`CodeGraph::file_body`]),
    /// read in place from the mapped part.
    pub fn graph_heads(&self) -> Result<CodeGraph, IndexError> {
        let (path, bytes) = self.graph_map()?;
        CodeGraph::decode_heads(std::sync::Arc::new(bytes)).map_err(|e| IndexError::Corrupt {
            path,
            detail: e.to_string(),
        })
    }

    /// The graph part mapped read-only. Not checked whole against the manifest's blake3 (that
    /// would read every page): the decoders check each section they read against its own
    /// digest.
    fn graph_map(&self) -> Result<(std::path::PathBuf, super::mapped_part::MappedPart), IndexError> {
        let Some(part) = &self.manifest.parts.graph else {
            return Err(IndexError::MissingPart {
                dir: self.index_dir().to_path_buf(),
                part: "graph",
            });
        };
        let file = part.file.as_str();
        let path = self.generation_dir().join(file);
        self.readable("graph", part.version, GRAPH_VERSION, &path)?;
        let map = self.store.map_part(self.generation, file)?;
        Ok((path, map))
    }

    /// The history part: per-file change counts, co-changes and commit words. Missing when
    /// the tree is not a git repository or the index was built without it (the reason says
    /// which).
    pub fn history(&self) -> Result<super::HistoryPart, IndexError> {
        let no = |why: &str| IndexError::NoHistory {
            dir: self.index_dir().to_path_buf(),
            why: why.to_string(),
        };
        let Some(part) = &self.manifest.parts.history else {
            return Err(no(
                "built without it, or by an older ken; `ken index build` adds it",
            ));
        };
        let part = match part {
            super::HistoryPartEntry::Missing(m) => return Err(no(&m.missing)),
            super::HistoryPartEntry::Read(r) => r,
        };
        let (file, blake3) = (part.file.as_str(), Some(part.blake3.as_str()));
        let bytes = self.store.read_part(self.generation, file, blake3)?;
        postcard::from_bytes(&bytes).map_err(|e| IndexError::Corrupt {
            path: self.generation_dir().join(file),
            detail: e.to_string(),
        })
    }

    /// Opens the semantic part (vectors and their HNSW graph) with the built-in model.
    pub fn semantic(&self) -> Result<SemanticIndex, IndexError> {
        self.semantic_with(None)
    }

    /// Opens the semantic part; `embedder` must be the model it was built with unless that
    /// is the built-in one.
    pub fn semantic_with(
        &self,
        embedder: Option<std::sync::Arc<dyn crate::vector::Embedder>>,
    ) -> Result<SemanticIndex, IndexError> {
        let Some(part) = &self.manifest.parts.vectors else {
            return Err(IndexError::NoSemantic(self.index_dir().to_path_buf()));
        };
        let (file, dir) = (part.file.as_str(), part.dir.as_str());
        if part.older() {
            return Err(IndexError::OldPart {
                dir: self.index_dir().to_path_buf(),
                part: "vectors",
                found: u64::from(part.version),
                reads: VECTOR_VERSION,
            });
        }
        let blake3 = Some(part.blake3.as_str());
        // The chunk table is read whole (checked); the rows are mapped, each file checked
        // against its size, and against its blake3 unless its stamp (size, mtime, inode, older
        // than the manifest) says it is as committed: any bytes of the right length are
        // vectors a scan can read, and `ken index verify` hashes every row file.
        let open = || -> Result<(ChunkTable, Rows), IndexError> {
            let map = self.store.map_part_hashed(self.generation, file, blake3)?;
            let store = ChunkTable::open_mapped(map).map_err(|e| IndexError::Corrupt {
                path: self.generation_dir().join(file),
                detail: e.to_string(),
            })?;
            let gen_dir = self.generation_dir();
            let stamps = super::file_stamp::CommitStamps::new(&self.manifest.stamps, &gen_dir);
            let rows = Rows::open(&self.store, self.generation, (&store).into(), |file| {
                !stamps.unchanged(&format!("gen/{file}"), &gen_dir.join(file))
            })?;
            Ok((store, rows))
        };
        // The built-in model (its tokenizer made from JSON) loads beside the chunk table.
        let builtin = embedder.is_none() && part.model == crate::vector::BUILTIN_MODEL_ID;
        let (opened, model) = std::thread::scope(|s| {
            let model = builtin.then(|| s.spawn(crate::vector::StaticEmbedder::builtin));
            (open(), model.map(|m| m.join()))
        });
        let (store, rows) = opened?;
        // A load that panicked is made again where its error is reported.
        let builtin = match model {
            Some(Ok(Ok(m))) => Some(m),
            Some(Ok(Err(e))) => return Err(super::vector_store::model_error(e)),
            Some(Err(_)) | None => None,
        };
        SemanticIndex::open_with(store, rows, &self.generation_dir().join(dir), embedder, builtin)
    }

    /// Loads the symbols of some files only (decoding just their records), in `files` order.
    pub fn load_symbols_of(&self, files: &[FileId]) -> Result<Vec<FileSymbols>, IndexError> {
        let mut by_segment: std::collections::BTreeMap<u32, Vec<u32>> = std::collections::BTreeMap::new();
        for id in files {
            if let Some(r) = self.table.files.get(id.index()) {
                by_segment.entry(r.segment).or_default().push(r.slot);
            }
        }
        let mut loaded: std::collections::HashMap<(u32, u32), FileSymbols> = std::collections::HashMap::new();
        for (segment, slots) in by_segment {
            let info = self
                .manifest
                .segments
                .iter()
                .find(|s| s.id == segment)
                .ok_or_else(|| IndexError::Corrupt {
                    path: self.generation_dir().join("manifest.json"),
                    detail: format!("segment {segment} is not listed"),
                })?;
            for (slot, record) in self.store.read_slots(info, &slots)? {
                loaded.insert((segment, slot), record);
            }
        }
        files
            .iter()
            .map(|id| {
                self.table
                    .files
                    .get(id.index())
                    .and_then(|r| loaded.remove(&(r.segment, r.slot)))
                    .ok_or_else(|| IndexError::Corrupt {
                        path: self.generation_dir().join("files.bin"),
                        detail: format!("no record for file id {}", id.0),
                    })
            })
            .collect()
    }

    pub fn file_id(&self, path: &str) -> Option<FileId> {
        self.table
            .files
            .binary_search_by(|r| r.path.as_str().cmp(path))
            .ok()
            .map(|i| FileId(i as u32))
    }
}

/// The lexical part's files and their sizes (tantivy's lock and bookkeeping files left out:
/// they are not part of what a generation holds).
pub(crate) fn lexical_file_sizes(
    dir: &std::path::Path,
) -> Result<std::collections::BTreeMap<String, u64>, IndexError> {
    let mut out = std::collections::BTreeMap::new();
    for e in std::fs::read_dir(dir).map_err(IndexError::io(dir))? {
        let e = e.map_err(IndexError::io(dir))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let meta = e.metadata().map_err(IndexError::io(e.path()))?;
        if meta.is_file() && !name.starts_with(".tantivy-") && name != ".managed.json" {
            out.insert(name, meta.len());
        }
    }
    Ok(out)
}
