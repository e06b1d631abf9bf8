//! The vector part of a generation: every indexed file cut into chunks, each embedded with
//! the built-in model (IDF-weighted) and stored as int8, plus the HNSW graph over them.
//!
//! `vectors.bin` holds the model id, the IDF table, per file its chunks (lines, owning
//! definition, content hash, point id) and the list of row files; the vectors themselves are
//! in `rows-<first id>-<digest>.i8` files beside it, `dim` int8 values a point in id order. A row file is
//! never written again: an update hard-links the previous generation's row files and writes
//! one with only its new points (past 8 files, the small ones are concatenated into one;
//! ids never move), so a one-file change writes kilobytes, not the 50 MB of every vector.
//! `vectors/` holds the HNSW graph where one is kept. Embeddings are reused by chunk hash
//! from the previous generation, and the IDF table is kept from the build that made it (a
//! full build), so unchanged chunks keep their vectors; a changed model id re-embeds
//! everything.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::VectorPartEntry;
use super::mapped_part::MappedPart;
use super::{FileRecord, IndexError, IndexStore, SegmentInfo};
use crate::symbols::FileSymbols;
use crate::vector::{
    Chunk, ChunkConfig, Chunker, Embedder, StaticEmbedder, VectorError, VectorIndex, idf_weights, quantize,
};

pub const VECTORS_FILE: &str = "vectors.bin";
pub const VECTORS_DIR: &str = "vectors";
/// 3: vectors quantized each on its own scale. 4: the vectors in row files of their own.
pub const VECTOR_VERSION: u32 = 4;
/// Row files a part may list before the small ones are concatenated.
const MAX_ROW_FILES: usize = 8;
/// Rebuild the graph (and renumber) when more than this share of its points are tombstones.
const MAX_DEAD_SHARE: f64 = 0.25;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChunkMeta {
    pub start_line: u32,
    pub end_line: u32,
    /// Index of the owning definition in the file's symbols.
    pub symbol: Option<u32>,
    pub hash: [u8; 16],
    /// The chunk's point in the graph and its vector's position in `VectorStore::vectors`.
    pub id: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileChunks {
    pub path: String,
    /// The file's content hash when chunked.
    pub content: [u8; 32],
    pub chunks: Vec<ChunkMeta>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VectorStore {
    pub version: u32,
    pub model: String,
    pub dim: u32,
    /// Token weights the vectors were made with (a corpus IDF).
    pub idf: Vec<f32>,
    pub files: Vec<FileChunks>,
    /// The files holding every point of the graph, in id order (dead ones included): the
    /// first holds ids `0..points`, the next the ids after, each `dim` int8 values a point.
    pub rows: Vec<RowFile>,
    /// Ids of deleted chunks, still in the graph until the next rebuild.
    pub dead: Vec<u32>,
}

/// One file of vector rows in a generation's folder, named by its first id and content. It is never
/// written again: the next generation hard-links it and appends its new points in a file of
/// its own, so an update writes the rows it added, not every row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RowFile {
    pub file: String,
    pub points: u32,
    pub blake3: String,
}

impl VectorStore {
    pub fn points(&self) -> usize {
        self.rows.iter().map(|r| r.points as usize).sum()
    }

    /// (file index, chunk index) of each live id, indexed by id (ids are dense: one per
    /// point); `None` for a dead point.
    pub fn locate(&self) -> Vec<Option<(u32, u32)>> {
        let mut at = vec![None; self.points()];
        for (fi, f) in self.files.iter().enumerate() {
            for (ci, c) in f.chunks.iter().enumerate() {
                if let Some(slot) = at.get_mut(c.id as usize) {
                    *slot = Some((fi as u32, ci as u32));
                }
            }
        }
        at
    }
}

/// A store's vectors: its row files mapped in place (a scan reads them there: no copy, and
/// nothing but the pages it reads), or rows held in memory.
pub struct Rows {
    dim: usize,
    /// The first id of each block.
    starts: Vec<usize>,
    blocks: Vec<RowBlock>,
}

enum RowBlock {
    Owned(Vec<i8>),
    Mapped(MappedPart),
}

impl RowBlock {
    fn as_slice(&self) -> &[i8] {
        match self {
            RowBlock::Owned(v) => v,
            RowBlock::Mapped(m) => bytemuck::cast_slice(m),
        }
    }
}

impl Rows {
    pub fn owned(dim: usize, vectors: Vec<i8>) -> Rows {
        Rows {
            dim,
            starts: vec![0],
            blocks: vec![RowBlock::Owned(vectors)],
        }
    }

    /// The row files of `store` in the committed generation `generation`, mapped; each is
    /// checked against its size and, where `hash` says so, its blake3. A build trusts the
    /// files its stamp check passed; a reader hashes those its stamps do not vouch for.
    pub(super) fn open(
        index: &IndexStore,
        generation: u64,
        store: &VectorStore,
        hash: impl Fn(&RowFile) -> bool,
    ) -> Result<Rows, IndexError> {
        let dim = store.dim as usize;
        let mut rows = Rows {
            dim,
            starts: Vec::with_capacity(store.rows.len()),
            blocks: Vec::with_capacity(store.rows.len()),
        };
        let mut next = 0usize;
        for r in &store.rows {
            let map = match hash(r) {
                true => index.map_part_checked(generation, &r.file, Some(&r.blake3))?,
                false => index.map_part(generation, &r.file)?,
            };
            if map.len() != r.points as usize * dim {
                return Err(IndexError::Corrupt {
                    path: index.generation_dir(generation).join(&r.file),
                    detail: format!(
                        "{} bytes, the vector part says {} points of {dim}",
                        map.len(),
                        r.points
                    ),
                });
            }
            rows.starts.push(next);
            rows.blocks.push(RowBlock::Mapped(map));
            next += r.points as usize;
        }
        Ok(rows)
    }

    pub fn points(&self) -> usize {
        self.blocks.iter().map(|b| b.as_slice().len()).sum::<usize>() / self.dim.max(1)
    }

    /// Each block's first id and rows.
    fn slices(&self) -> Vec<(usize, &[i8])> {
        self.starts
            .iter()
            .zip(&self.blocks)
            .map(|(&s, b)| (s, b.as_slice()))
            .collect()
    }

    /// Block `k`'s rows (a row file's, when mapped).
    fn block(&self, k: usize) -> &[i8] {
        self.blocks.get(k).map_or(&[], RowBlock::as_slice)
    }

    pub fn vector(&self, id: u32) -> &[i8] {
        let id = id as usize;
        let k = self.starts.partition_point(|&s| s <= id).saturating_sub(1);
        let (Some(&start), Some(block)) = (self.starts.get(k), self.blocks.get(k)) else {
            return &[];
        };
        let d = self.dim;
        block
            .as_slice()
            .get((id - start) * d..(id - start + 1) * d)
            .unwrap_or(&[])
    }

    /// Every row in one owned buffer, for the HNSW graph (which keeps its vectors itself).
    fn to_vec(&self) -> Vec<i8> {
        let mut out = Vec::with_capacity(self.points() * self.dim);
        for b in &self.blocks {
            out.extend_from_slice(b.as_slice());
        }
        out
    }
}

fn model_error(e: VectorError) -> IndexError {
    IndexError::Vector(e.to_string())
}

/// A chunk with its token ids (tokenized once: for the IDF and for the embedding).
type Tokenized = (Chunk, Vec<u32>);
/// A chunk with its vector.
type Embedded = (Chunk, Vec<i8>);
/// Records decoded and chunked at a time by a build.
const RECORD_BATCH: usize = 1024;
/// Texts per call to a model other than the built-in one.
const EXTERNAL_BATCH: usize = 256;

/// The previous generation's vector part, as a build reuses it.
pub struct PreviousVectors {
    pub store: VectorStore,
    pub rows: Rows,
    /// Its generation's folder: its row files are linked from there, its graph loaded.
    pub gen_dir: PathBuf,
}

impl PreviousVectors {
    fn graph_dir(&self) -> PathBuf {
        self.gen_dir.join(VECTORS_DIR)
    }
}

pub struct VectorBuild<'a> {
    pub store: &'a IndexStore,
    pub root: &'a Path,
    pub files: &'a [FileRecord],
    pub segments: &'a [SegmentInfo],
    pub previous: Option<PreviousVectors>,
    pub gen_dir: &'a Path,
    /// The model; `None` is the built-in one (IDF-weighted).
    pub embedder: Option<&'a dyn Embedder>,
    /// A memory cap is in force: batches are embedded as they are tokenized (a full build
    /// tokenizes twice) instead of every chunk's token ids being held.
    pub bounded: bool,
}

impl VectorBuild<'_> {
    /// Builds (or carries over) the vector part; returns its manifest entry.
    pub fn run(mut self) -> Result<VectorPartEntry, IndexError> {
        let t0 = std::time::Instant::now();
        let model_id = match self.embedder {
            Some(e) => e.id(),
            None => crate::vector::BUILTIN_MODEL_ID.to_string(),
        };
        let previous = self
            .previous
            .take()
            .filter(|p| p.store.version == VECTOR_VERSION && p.store.model == model_id);
        let prev_files: HashMap<&str, &FileChunks> = previous
            .as_ref()
            .map(|p| p.store.files.iter().map(|f| (f.path.as_str(), f)).collect())
            .unwrap_or_default();
        // Files whose content is unchanged keep their chunks and vectors as they are.
        let changed: Vec<usize> = (0..self.files.len())
            .filter(|&i| {
                prev_files
                    .get(self.files[i].path.as_str())
                    .is_none_or(|f| f.content != self.files[i].hash)
            })
            .collect();
        let same_files = previous
            .as_ref()
            .is_some_and(|p| p.store.files.len() == self.files.len());
        if changed.is_empty()
            && same_files
            && let Some(p) = &previous
        {
            if has_graph(&p.graph_dir()) {
                link_dir(&p.graph_dir(), &self.gen_dir.join(VECTORS_DIR))?;
            }
            for r in &p.store.rows {
                link_file(&p.gen_dir.join(&r.file), &self.gen_dir.join(&r.file))?;
            }
            let bytes = postcard::to_stdvec(&p.store).map_err(|e| corrupt(self.gen_dir, e))?;
            let hash = self.store.write_part(self.gen_dir, VECTORS_FILE, &bytes)?;
            let v = entry(&p.store, 0, 0, false, t0, bytes.len(), 0);
            return Ok(self.with_settings(VectorPartEntry { blake3: hash, ..v }));
        }
        let chunker = Chunker::new(ChunkConfig::default());
        let base = match self.embedder {
            None => Some(StaticEmbedder::builtin().map_err(model_error)?),
            Some(_) => None,
        };
        // The changed files' records decoded a batch at a time and chunked on every core;
        // with the built-in model each chunk is tokenized at once and its text dropped, so a
        // build holds token ids, not every file's symbols and text together.
        let chunk_batch = |batch: Vec<(usize, FileSymbols)>,
                           tokenizer: Option<&StaticEmbedder>|
         -> Vec<(usize, Vec<Tokenized>)> {
            batch
                .into_par_iter()
                .map(|(i, symbols)| {
                    let r = &self.files[i];
                    // Docs and config are searched lexically only: their chunks would stand
                    // in code answers' semantic rankings.
                    if crate::lang::text_kind(&r.language).is_some() {
                        return (i, Vec::new());
                    }
                    let bytes = crate::util::read_regular(&r.path.to_fs(self.root)).unwrap_or_default();
                    let chunks = chunker.chunk(r.path.as_str(), &bytes, &symbols);
                    let t = chunks
                        .into_iter()
                        .map(|mut c| match tokenizer {
                            Some(m) => {
                                let ids = m.token_ids(&c.text).unwrap_or_default();
                                c.text = String::new();
                                (c, ids)
                            }
                            None => (c, Vec::new()),
                        })
                        .collect();
                    (i, t)
                })
                .collect()
        };
        let known_idf = match (&previous, &base) {
            (Some(p), Some(m)) if p.store.idf.len() == m.vocab_size() => Some(p.store.idf.clone()),
            _ => None,
        };
        // With the built-in model and the IDF known (an incremental build), or under a memory
        // cap, each batch is embedded as soon as it is tokenized: a build then holds vectors,
        // not every chunk's token ids (a capped full build tokenizes twice: once for the IDF).
        let stream = base.is_some() && (known_idf.is_some() || self.bounded);
        let mut tokenized: Vec<(usize, Vec<Tokenized>)> = Vec::new();
        if !stream {
            tokenized.reserve(changed.len());
            self.store
                .visit_records(self.segments, self.files, &changed, RECORD_BATCH, |batch| {
                    tokenized.extend(chunk_batch(batch, base.as_ref()));
                    Ok(())
                })?;
        }
        let cache: HashMap<[u8; 16], u32> = previous
            .as_ref()
            .map(|p| {
                p.store
                    .files
                    .iter()
                    .flat_map(|f| f.chunks.iter().map(|c| (c.hash, c.id)))
                    .collect()
            })
            .unwrap_or_default();
        let cached = |c: &Chunk| -> Option<Vec<i8>> {
            let (id, p) = (cache.get(&c.hash)?, previous.as_ref()?);
            Some(p.rows.vector(*id).to_vec()).filter(|v| !v.is_empty())
        };
        let (fresh, dim, idf, embedded) = match self.embedder {
            None => {
                let Some(base) = base else {
                    return Err(IndexError::Vector("the built-in model vanished".into()));
                };
                // The IDF is made by a full build and kept by incremental ones.
                let idf = match known_idf {
                    Some(idf) => idf,
                    None if stream => {
                        let mut df = DocFreq::new(base.vocab_size());
                        self.store.visit_records(
                            self.segments,
                            self.files,
                            &changed,
                            RECORD_BATCH,
                            |batch| {
                                df.add(&chunk_batch(batch, Some(&base)));
                                Ok(())
                            },
                        )?;
                        df.weights()
                    }
                    None => {
                        let mut df = DocFreq::new(base.vocab_size());
                        df.add(&tokenized);
                        df.weights()
                    }
                };
                let model = base.with_weights(idf.clone());
                let embedded = std::sync::atomic::AtomicUsize::new(0);
                let embed = |tokenized: Vec<(usize, Vec<Tokenized>)>| -> Vec<(usize, Vec<Embedded>)> {
                    tokenized
                        .into_par_iter()
                        .map(|(file, chunks)| {
                            let e = chunks
                                .into_iter()
                                .map(|(c, ids)| {
                                    let v = cached(&c).unwrap_or_else(|| {
                                        embedded.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                        quantize(&model.embed_ids(&ids))
                                    });
                                    (c, v)
                                })
                                .collect();
                            (file, e)
                        })
                        .collect()
                };
                let mut fresh: HashMap<usize, Vec<Embedded>> = HashMap::with_capacity(changed.len());
                match stream {
                    true => self.store.visit_records(
                        self.segments,
                        self.files,
                        &changed,
                        RECORD_BATCH,
                        |batch| {
                            fresh.extend(embed(chunk_batch(batch, Some(&model))));
                            Ok(())
                        },
                    )?,
                    false => fresh.extend(embed(std::mem::take(&mut tokenized))),
                }
                (fresh, model.dim(), idf, embedded.into_inner())
            }
            Some(model) => {
                let chunked: Vec<(usize, Vec<Chunk>)> = tokenized
                    .into_iter()
                    .map(|(i, cs)| (i, cs.into_iter().map(|(c, _)| c).collect()))
                    .collect();
                // Another model: the chunk texts in batches (it parallelizes or batches
                // requests itself), only those not cached.
                let todo: Vec<&str> = chunked
                    .iter()
                    .flat_map(|(_, cs)| cs.iter())
                    .filter(|c| !cache.contains_key(&c.hash))
                    .map(|c| c.text.as_str())
                    .collect();
                let mut vectors = Vec::with_capacity(todo.len());
                for batch in todo.chunks(EXTERNAL_BATCH) {
                    let got = model.embed(batch).map_err(model_error)?;
                    if got.len() != batch.len() || got.iter().any(|v| v.len() != model.dim()) {
                        return Err(IndexError::Vector(format!(
                            "{} returned {} vectors for {} texts (expected {} dimensions each)",
                            model.id(),
                            got.len(),
                            batch.len(),
                            model.dim()
                        )));
                    }
                    vectors.extend(got.iter().map(|v| quantize(v)));
                }
                let embedded = vectors.len();
                let mut vectors = vectors.into_iter();
                let mut fresh = HashMap::new();
                for (file, chunks) in chunked {
                    let mut e = Vec::with_capacity(chunks.len());
                    for c in chunks {
                        let v = match cached(&c) {
                            Some(v) => v,
                            None => vectors.next().unwrap_or_default(),
                        };
                        e.push((c, v));
                    }
                    fresh.insert(file, e);
                }
                (fresh, model.dim(), Vec::new(), embedded)
            }
        };
        let fresh_chunks: usize = fresh.values().map(Vec::len).sum();
        let t_embed = t0.elapsed();
        let (store, rebuilt, rows_written) =
            self.assemble(previous.as_ref(), &prev_files, fresh, model_id, dim as u32, idf)?;
        let bytes = postcard::to_stdvec(&store).map_err(|e| corrupt(self.gen_dir, e))?;
        let hash = self.store.write_part(self.gen_dir, VECTORS_FILE, &bytes)?;
        let v = entry(
            &store,
            changed.len(),
            fresh_chunks,
            rebuilt,
            t0,
            bytes.len(),
            rows_written,
        );
        Ok(self.with_settings(VectorPartEntry {
            blake3: hash,
            embed_ms: Some(t_embed.as_millis() as u64),
            chunks_embedded: Some(embedded as u64),
            ..v
        }))
    }

    /// Records how to make the model again (for queries and later builds).
    fn with_settings(&self, entry: VectorPartEntry) -> VectorPartEntry {
        VectorPartEntry {
            embedder: self.embedder.and_then(|e| e.settings()),
            ..entry
        }
    }

    /// Gives ids and writes the rows and the graph: appends the new points after the previous
    /// ones (the previous row files linked, the new points in a file of their own) and
    /// tombstones the replaced ones, or rebuilds (renumbering every live chunk, one row file)
    /// when there is no previous part or too much of it would be dead. Returns the store,
    /// whether it was rebuilt, and the row bytes written.
    fn assemble(
        &self,
        previous: Option<&PreviousVectors>,
        prev_files: &HashMap<&str, &FileChunks>,
        mut fresh: HashMap<usize, Vec<Embedded>>,
        model: String,
        dim: u32,
        idf: Vec<f32>,
    ) -> Result<(VectorStore, bool, usize), IndexError> {
        let d = dim as usize;
        let changed_paths: std::collections::HashSet<&str> = fresh
            .keys()
            .filter_map(|&i| self.files.get(i))
            .map(|r| r.path.as_str())
            .collect();
        let kept_paths: std::collections::HashSet<&str> =
            self.files.iter().map(|r| r.path.as_str()).collect();
        let incremental = previous.and_then(|p| {
            // Old points that stop being live: the chunks of changed and removed files.
            let mut dead = p.store.dead.clone();
            for f in &p.store.files {
                if changed_paths.contains(f.path.as_str()) || !kept_paths.contains(f.path.as_str()) {
                    dead.extend(f.chunks.iter().map(|c| c.id));
                }
            }
            let added: usize = fresh.values().map(Vec::len).sum();
            let share = dead.len() as f64 / (p.store.points() + added).max(1) as f64;
            let whole = p.rows.points() == p.store.points();
            (share <= MAX_DEAD_SHARE && whole).then_some((p, dead))
        });
        // Incremental: only the new points (appended after the previous ones); rebuild: all.
        let (mut vectors, mut next, dead) = match &incremental {
            Some((p, dead)) => (Vec::new(), p.store.points() as u32, dead.clone()),
            None => (Vec::new(), 0u32, Vec::new()),
        };
        let mut files = Vec::with_capacity(self.files.len());
        for (i, r) in self.files.iter().enumerate() {
            let chunks = match fresh.remove(&i) {
                Some(new) => new
                    .into_iter()
                    .map(|(c, v)| {
                        vectors.extend_from_slice(&v);
                        next += 1;
                        ChunkMeta {
                            start_line: c.start_line,
                            end_line: c.end_line,
                            symbol: c.symbol,
                            hash: c.hash,
                            id: next - 1,
                        }
                    })
                    .collect(),
                None => {
                    let old = prev_files
                        .get(r.path.as_str())
                        .map(|f| f.chunks.clone())
                        .unwrap_or_default();
                    match (&incremental, previous) {
                        (Some(_), _) => old,
                        (None, Some(p)) => old
                            .into_iter()
                            .map(|mut c| {
                                vectors.extend_from_slice(p.rows.vector(c.id));
                                c.id = next;
                                next += 1;
                                c
                            })
                            .collect(),
                        (None, None) => Vec::new(),
                    }
                }
            };
            files.push(FileChunks {
                path: r.path.to_string(),
                content: r.hash,
                chunks,
            });
        }
        let points = incremental.as_ref().map_or(0, |(p, _)| p.store.points()) + vectors.len() / d.max(1);
        if keeps_graph(points) {
            // The graph keeps every vector itself: built from (or inserted into) all of them.
            let dir = self.gen_dir.join(VECTORS_DIR);
            std::fs::create_dir_all(&dir).map_err(IndexError::io(&dir))?;
            let index = match &incremental {
                Some((p, _)) if has_graph(&p.graph_dir()) => {
                    let mut index =
                        VectorIndex::load(&p.graph_dir(), d, p.rows.to_vec()).map_err(model_error)?;
                    index.insert(&vectors).map_err(model_error)?;
                    index
                }
                Some((p, _)) => {
                    let mut all = p.rows.to_vec();
                    all.extend_from_slice(&vectors);
                    VectorIndex::build(d, all).map_err(model_error)?
                }
                None => VectorIndex::build(d, vectors.clone()).map_err(model_error)?,
            };
            index.dump(&dir).map_err(model_error)?;
        }
        let (rows, written) = match &incremental {
            Some((p, _)) => self.append_rows(p, &vectors, d)?,
            None => {
                let rows: Vec<RowFile> = self.write_rows(0, &vectors, d)?.into_iter().collect();
                (rows, vectors.len())
            }
        };
        let rebuilt = incremental.is_none();
        let store = VectorStore {
            version: VECTOR_VERSION,
            model,
            dim,
            idf,
            files,
            rows,
            dead,
        };
        Ok((store, rebuilt, written))
    }

    /// The previous row files linked into this generation and `added` (new points) after
    /// them: in a file of its own, or, past [`MAX_ROW_FILES`], concatenated with the files
    /// after the first (with the first too once they outgrow half of it), so a part never
    /// lists many files and a one-file update still writes little. Ids stay where they were.
    fn append_rows(
        &self,
        p: &PreviousVectors,
        added: &[i8],
        dim: usize,
    ) -> Result<(Vec<RowFile>, usize), IndexError> {
        let old = &p.store.rows;
        let from = match added.is_empty() || old.len() < MAX_ROW_FILES {
            true => old.len(),
            false => {
                let first = old.first().map_or(0, |r| r.points as usize);
                let tail: usize = old.iter().skip(1).map(|r| r.points as usize).sum();
                match (tail + added.len() / dim.max(1)) * 2 > first {
                    true => 0,
                    false => 1,
                }
            }
        };
        let mut rows = Vec::with_capacity(from + 1);
        for r in old.iter().take(from) {
            link_file(&p.gen_dir.join(&r.file), &self.gen_dir.join(&r.file))?;
            rows.push(r.clone());
        }
        let mut merged: Vec<i8> = Vec::new();
        let bytes = match from == old.len() {
            true => added,
            false => {
                for k in from..old.len() {
                    merged.extend_from_slice(p.rows.block(k));
                }
                merged.extend_from_slice(added);
                &merged
            }
        };
        let start: u32 = rows.iter().map(|r| r.points).sum();
        rows.extend(self.write_rows(start, bytes, dim)?);
        Ok((rows, bytes.len()))
    }

    /// Writes `vectors`, the points from id `start` on, as a row file of this generation
    /// (none when empty), named by its first id and content: names never repeat within a
    /// part, and a file of a name is always the same bytes.
    fn write_rows(&self, start: u32, vectors: &[i8], dim: usize) -> Result<Option<RowFile>, IndexError> {
        if vectors.is_empty() {
            return Ok(None);
        }
        let bytes: &[u8] = bytemuck::cast_slice(vectors);
        let mut hasher = blake3::Hasher::new();
        hasher.update_rayon(bytes);
        let hash = hasher.finalize().to_hex().to_string();
        let file = format!("rows-{start:08}-{}.i8", &hash[..16]);
        self.store.write_new_part(self.gen_dir, &file, bytes)?;
        Ok(Some(RowFile {
            file,
            points: (vectors.len() / dim.max(1)) as u32,
            blake3: hash,
        }))
    }
}

/// Document frequencies of token ids over chunks, counted a batch at a time, for the IDF.
struct DocFreq {
    df: Vec<u32>,
    docs: u32,
}

impl DocFreq {
    fn new(vocab: usize) -> Self {
        DocFreq {
            df: vec![0u32; vocab],
            docs: 0,
        }
    }

    fn add(&mut self, tokenized: &[(usize, Vec<Tokenized>)]) {
        let mut seen: Vec<u32> = Vec::new();
        for (_, chunks) in tokenized {
            for (_, ids) in chunks {
                self.docs += 1;
                seen.clear();
                seen.extend_from_slice(ids);
                seen.sort_unstable();
                seen.dedup();
                for &t in &seen {
                    if let Some(d) = self.df.get_mut(t as usize) {
                        *d += 1;
                    }
                }
            }
        }
    }

    fn weights(&self) -> Vec<f32> {
        idf_weights(&self.df, self.docs)
    }
}

fn entry(
    s: &VectorStore,
    files: usize,
    chunks: usize,
    rebuilt: bool,
    t0: std::time::Instant,
    bytes: usize,
    rows_written: usize,
) -> VectorPartEntry {
    let total: usize = s.files.iter().map(|f| f.chunks.len()).sum();
    VectorPartEntry {
        version: VECTOR_VERSION,
        file: VECTORS_FILE.to_string(),
        dir: VECTORS_DIR.to_string(),
        model: s.model.clone(),
        dim: s.dim,
        chunks: total as u64,
        graph_points: s.points() as u64,
        dead: s.dead.len() as u64,
        graph_rebuilt: rebuilt,
        graph: keeps_graph(s.points()),
        files_chunked: files as u64,
        chunks_embedded_or_cached: chunks as u64,
        bytes: bytes as u64,
        rows: s.rows.clone(),
        row_bytes_written: rows_written as u64,
        total_ms: t0.elapsed().as_millis() as u64,
        ..VectorPartEntry::default()
    }
}

fn corrupt(dir: &Path, e: impl std::fmt::Display) -> IndexError {
    IndexError::Corrupt {
        path: dir.join(VECTORS_FILE),
        detail: e.to_string(),
    }
}

/// Whether a build keeps the HNSW graph: only where queries use it (above the scan
/// threshold), or when `KEN_VECTOR_GRAPH=1` asks (to measure it). Below, a one-shot query
/// scans exactly, a server scans its resident vectors, and `KEN_VECTOR_SEARCH=graph` builds
/// the graph in memory; skipping it saves the graph's reload, insert and write on every build.
fn keeps_graph(points: usize) -> bool {
    points > SCAN_MAX_POINTS || std::env::var("KEN_VECTOR_GRAPH").as_deref() == Ok("1")
}

/// Whether a generation's vectors folder holds a graph dump.
/// When no file changed and the model is the same, the previous generation's vectors are
/// this one's: the part file and the HNSW folder are hard-linked (or copied), and nothing
/// is read, decoded or written again (a no-change build on 2.8M lines spent 1.7 s here).
/// `None` when the part must be built.
pub fn reuse_unchanged(
    prev_part: &VectorPartEntry,
    prev_gen_dir: &Path,
    gen_dir: &Path,
    model_id: &str,
) -> Result<Option<VectorPartEntry>, IndexError> {
    let t0 = std::time::Instant::now();
    if prev_part.version != VECTOR_VERSION || prev_part.model != model_id {
        return Ok(None);
    }
    let (src, dest) = (prev_gen_dir.join(&prev_part.file), gen_dir.join(VECTORS_FILE));
    if !src.is_file() {
        return Ok(None);
    }
    link_file(&src, &dest)?;
    for r in &prev_part.rows {
        link_file(&prev_gen_dir.join(&r.file), &gen_dir.join(&r.file))?;
    }
    let dir = prev_gen_dir.join(VECTORS_DIR);
    if has_graph(&dir) {
        link_dir(&dir, &gen_dir.join(VECTORS_DIR))?;
    }
    Ok(Some(VectorPartEntry {
        file: VECTORS_FILE.to_string(),
        files_chunked: 0,
        chunks_embedded_or_cached: 0,
        graph_rebuilt: false,
        row_bytes_written: 0,
        total_ms: t0.elapsed().as_millis() as u64,
        ..prev_part.clone()
    }))
}

fn has_graph(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some())
}

/// Hard-links `from` to `to`, or where the file system cannot link, copies it into a new
/// file. Never opens an existing `to` for writing: it may be a link to `from` itself, and
/// truncating it would damage every generation that shares it.
fn link_file(from: &Path, to: &Path) -> Result<(), IndexError> {
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
fn link_dir(from: &Path, to: &Path) -> Result<(), IndexError> {
    std::fs::create_dir_all(to).map_err(IndexError::io(to))?;
    for e in std::fs::read_dir(from).map_err(IndexError::io(from))?.flatten() {
        link_file(&e.path(), &to.join(e.file_name()))?;
    }
    Ok(())
}

/// A semantic match: one chunk of one file.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SemanticHit {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<u32>,
    pub score: f32,
}

/// The vector part opened for queries.
/// Below this many points a one-shot query scans the int8 vectors exactly: faster than
/// reloading the HNSW graph (`hnsw_rs` rebuilds its structure on load: 0.4 s for 43k points,
/// 2.5 s for 223k, while a scan of 223k takes milliseconds). `KEN_VECTOR_SEARCH=graph`
/// forces the graph, `scan` the scan.
const SCAN_MAX_POINTS: usize = 5_000_000;

/// How queries find their neighbours.
enum Backend {
    Graph(VectorIndex),
    Scan {
        rows: Rows,
        dim: usize,
        dead: Vec<usize>,
    },
}

pub struct SemanticIndex {
    store: VectorStore,
    /// (file, chunk) by point id.
    ids: Vec<Option<(u32, u32)>>,
    live: usize,
    index: Backend,
    /// What embeds queries: the model that embedded the chunks.
    model: std::sync::Arc<dyn Embedder>,
}

impl SemanticIndex {
    /// `store`'s chunk table with its vectors; `embedder` must be the model the part was
    /// built with when that is not the built-in one.
    pub fn open_with(
        store: VectorStore,
        rows: Rows,
        dir: &Path,
        embedder: Option<std::sync::Arc<dyn Embedder>>,
    ) -> Result<SemanticIndex, IndexError> {
        let model = match embedder {
            Some(e) if e.id() == store.model && e.dim() == store.dim as usize => e,
            Some(e) => {
                return Err(IndexError::Vector(format!(
                    "the index was embedded with {} ({} dimensions), not {} ({} dimensions): \
                     rebuild it with `ken index build` to re-embed",
                    store.model,
                    store.dim,
                    e.id(),
                    e.dim()
                )));
            }
            None => {
                let model = StaticEmbedder::builtin().map_err(model_error)?;
                if store.model != crate::vector::BUILTIN_MODEL_ID || store.dim as usize != model.dim() {
                    return Err(IndexError::Vector(format!(
                        "the index was embedded with {} ({} dimensions), which this ken cannot \
                         make from the index's settings; rebuild it with `ken index build`",
                        store.model, store.dim,
                    )));
                }
                std::sync::Arc::new(model.with_weights(store.idf.clone()))
            }
        };
        let dim = store.dim as usize;
        let points = rows.points();
        if points != store.points() {
            return Err(IndexError::Corrupt {
                path: dir.to_path_buf(),
                detail: format!("{points} vectors, the vector part lists {}", store.points()),
            });
        }
        let ids = store.locate();
        let live = ids.iter().flatten().count();
        // The backend owns the vectors; queries read only the chunk table.
        let dead: Vec<usize> = {
            let mut d: Vec<usize> = store.dead.iter().map(|&d| d as usize).collect();
            d.sort_unstable();
            d.dedup();
            d
        };
        let mode = std::env::var("KEN_VECTOR_SEARCH").unwrap_or_default();
        let scan = match mode.as_str() {
            "graph" => false,
            "scan" => true,
            _ => points <= SCAN_MAX_POINTS,
        };
        let index = match scan {
            true => Backend::Scan { rows, dim, dead },
            false => {
                let vectors = rows.to_vec();
                // hnsw_rs may panic on a damaged dump: the boundary makes that damage of the
                // folder, which the next build rewrites.
                let mut index = crate::util::contain(|| match has_graph(dir) {
                    true => VectorIndex::load(dir, dim, vectors),
                    // Not kept below the scan threshold: built here, in memory.
                    false => VectorIndex::build(dim, vectors),
                })
                .map_err(|panic| IndexError::Corrupt {
                    path: dir.to_path_buf(),
                    detail: format!("reading the vector graph failed: {panic}"),
                })?
                .map_err(model_error)?;
                index.set_dead(dead);
                Backend::Graph(index)
            }
        };
        Ok(SemanticIndex {
            store,
            ids,
            live,
            index,
            model,
        })
    }

    /// The model's identity.
    pub fn model(&self) -> &str {
        &self.store.model
    }

    pub fn chunks(&self) -> usize {
        self.live
    }

    pub fn search(&self, query: &str, k: usize) -> Result<Vec<SemanticHit>, IndexError> {
        let q = self.model.embed(&[query]).map_err(model_error)?;
        let Some(q) = q.first() else { return Ok(Vec::new()) };
        let found = match &self.index {
            Backend::Graph(g) => g.search(q, k),
            Backend::Scan { rows, dim, dead } => {
                crate::vector::exact_top_k_in(&rows.slices(), *dim, dead, q, k)
            }
        };
        Ok(found
            .into_iter()
            .filter_map(|(id, score)| {
                let (fi, ci) = (*self.ids.get(id)?)?;
                let f = self.store.files.get(fi as usize)?;
                let c = f.chunks.get(ci as usize)?;
                Some(SemanticHit {
                    path: f.path.clone(),
                    start_line: c.start_line,
                    end_line: c.end_line,
                    symbol: c.symbol,
                    score,
                })
            })
            .collect())
    }
}

/// A file ranked by reciprocal rank fusion of the lexical and semantic file rankings.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FusedFile {
    pub path: String,
    pub score: f32,
    /// 1-based ranks in each list, when present.
    pub lexical_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
    /// The best semantic chunk's lines in this file.
    pub lines: Option<(u32, u32)>,
}

/// Files from semantic chunk hits, best chunk first, each file once.
pub fn semantic_files(hits: &[SemanticHit]) -> Vec<&SemanticHit> {
    let mut seen = std::collections::HashSet::new();
    hits.iter().filter(|h| seen.insert(h.path.as_str())).collect()
}

/// Weight of a file's next strong chunk relative to the one before (its best counts in full).
const MORE_CHUNKS_DECAY: f32 = 0.5;
/// Chunks of one file that count.
const CHUNKS_COUNTED: usize = 3;

/// Files from semantic chunk hits ranked by their strong chunks together: the best in full,
/// the next ones with diminishing weight (a file with three close chunks is more likely the
/// answer than one with a single lucky one). Each file once, with its best chunk.
pub fn semantic_files_together(hits: &[SemanticHit]) -> Vec<&SemanticHit> {
    let mut by: HashMap<&str, (f32, usize, &SemanticHit)> = HashMap::new();
    for h in hits {
        let e = by.entry(h.path.as_str()).or_insert((0.0, 0, h));
        if e.1 < CHUNKS_COUNTED {
            e.0 += h.score * MORE_CHUNKS_DECAY.powi(e.1 as i32);
            e.1 += 1;
        }
    }
    let mut files: Vec<(f32, &SemanticHit)> =
        by.into_values().map(|(score, _, best)| (score, best)).collect();
    files.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    files.into_iter().map(|(_, best)| best).collect()
}

/// Reciprocal rank fusion, `1 / (k + rank)` summed over the lists a file appears in.
pub fn fuse_files(lexical: &[String], semantic: &[SemanticHit], k: f32, limit: usize) -> Vec<FusedFile> {
    let mut by: HashMap<String, FusedFile> = HashMap::new();
    for (r, path) in lexical.iter().enumerate() {
        let e = by.entry(path.clone()).or_insert_with(|| FusedFile {
            path: path.clone(),
            score: 0.0,
            lexical_rank: None,
            semantic_rank: None,
            lines: None,
        });
        e.score += 1.0 / (k + r as f32 + 1.0);
        e.lexical_rank = Some(r + 1);
    }
    for (r, h) in semantic_files_together(semantic).into_iter().enumerate() {
        let e = by.entry(h.path.clone()).or_insert_with(|| FusedFile {
            path: h.path.clone(),
            score: 0.0,
            lexical_rank: None,
            semantic_rank: None,
            lines: None,
        });
        e.score += 1.0 / (k + r as f32 + 1.0);
        e.semantic_rank = Some(r + 1);
        e.lines = Some((h.start_line, h.end_line));
    }
    let mut out: Vec<FusedFile> = by.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    out.truncate(limit);
    out
}
