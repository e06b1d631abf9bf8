//! `VectorBuild`: writes a generation's vector part (see [`super::vector_store`]).
//!
//! Embeddings are reused by chunk hash from the previous generation, and the IDF table is
//! kept from the build that made it (a full build), so unchanged chunks keep their vectors;
//! a changed model id re-embeds everything. New points are appended after the previous ones
//! (the previous row files hard-linked, the new points in a file of their own) and replaced
//! ones tombstoned, until too many are dead and the part is rebuilt and renumbered.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::VectorPartEntry;
use super::part_links::{has_graph, link_dir, link_file};
use super::row_spill::RowSpill;
use super::semantic_index::SCAN_MAX_POINTS;
use super::vector_rows::Rows;
use super::vector_store::{
    ChunkMeta, ChunkTable, ChunksOut, FileOut, RowFile, StoredHeader, VECTOR_VERSION, VECTORS_DIR,
    VECTORS_FILE, VectorStore, model_error,
};
use super::{FileRecord, IndexError, IndexStore, SegmentInfo};
use crate::symbols::FileSymbols;
use crate::vector::{
    Chunk, ChunkConfig, Chunker, Embedder, StaticEmbedder, VectorIndex, center_of, encode_codes, idf_weights,
    quantize, row_len,
};

/// Row files a part may list before the small ones are concatenated.
const MAX_ROW_FILES: usize = 8;
/// Rebuild the graph (and renumber) when more than this share of its points are tombstones.
const MAX_DEAD_SHARE: f64 = 0.25;
/// Records decoded and chunked at a time by a build.
const RECORD_BATCH: usize = 1024;
/// Files chunked and embedded at a time under a tight cap: at 1024, a batch of large
/// generated files raised a capped first build's peak by about 20 MiB (2.8M-line tree).
const RECORD_BATCH_TIGHT: usize = 256;
/// Tokenized words a thread keeps under a tight cap (`StaticEmbedder::with_word_cache_cap`).
const WORD_CACHE_TIGHT: usize = 20_000;
/// Texts per call to a model other than the built-in one.
const EXTERNAL_BATCH: usize = 256;

/// A chunk with its token ids (tokenized once: for the IDF and for the embedding).
type Tokenized = (Chunk, Vec<u32>);
/// A chunk with its vector.
type Embedded = (Chunk, Vec<u8>);
/// Chunks by the index of their file in [`VectorBuild::files`].
type ByFile<T> = Vec<(usize, Vec<T>)>;

/// The previous generation's vector part, as a build reuses it: read in place, a file's
/// chunks decoded only where a build needs them (a one-file update decodes the changed
/// file's, and copies every other file's as stored).
pub struct PreviousVectors {
    pub table: ChunkTable,
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

/// The model a build embeds with.
enum Model<'a> {
    /// The built-in one, with the IDF an earlier (full) build made when it is known.
    Builtin {
        /// Boxed: the model's tables dwarf the other variant.
        base: Box<StaticEmbedder>,
        known_idf: Option<Vec<f32>>,
    },
    External(&'a dyn Embedder),
}

/// How a build chunks and embeds the changed files.
struct EmbedPlan<'a> {
    chunker: Chunker,
    model: Model<'a>,
    /// Each batch is embedded as soon as it is tokenized instead of after every file is.
    stream: bool,
}

/// What the embed step made: the changed files' chunks with their vectors.
struct Embedding {
    made: Made,
    dim: usize,
    /// The IDF the built-in model used (empty for another model).
    idf: Vec<f32>,
    /// Chunks embedded, not taken from the cache.
    embedded: usize,
}

/// The changed files' chunks with their vectors: held by file, to be numbered with the
/// previous part's, or (a first build that embeds as it goes) numbered and written already.
enum Made {
    Held(HashMap<usize, Vec<Embedded>>),
    /// Boxed: a spill's hasher dwarfs the other variant.
    Written(Box<RowSpill>),
}

impl Made {
    fn chunks(&self) -> usize {
        match self {
            Made::Held(fresh) => fresh.values().map(Vec::len).sum(),
            Made::Written(spill) => spill.points(),
        }
    }
}

/// The previous generation's vectors by chunk hash: an unchanged chunk keeps its vector.
/// Only the changed files' own previous chunks are looked at: a chunk's text starts with its
/// file's path, so no other file's chunk can match (a map of all 195k previous chunks of the
/// 2.8M-line tree was 3.7 % of a one-file update's CPU samples, for nothing).
struct VectorCache<'p> {
    ids: HashMap<[u8; 16], u32>,
    previous: Option<&'p PreviousVectors>,
}

impl<'p> VectorCache<'p> {
    fn new(previous: Option<&'p PreviousVectors>, own: &[Vec<ChunkMeta>]) -> VectorCache<'p> {
        let ids = own.iter().flatten().map(|c| (c.hash, c.id)).collect();
        VectorCache { ids, previous }
    }

    fn contains(&self, c: &Chunk) -> bool {
        self.ids.contains_key(&c.hash)
    }

    fn get(&self, c: &Chunk) -> Option<Vec<u8>> {
        let (id, p) = (self.ids.get(&c.hash)?, self.previous?);
        Some(p.rows.vector(*id).to_vec()).filter(|v| !v.is_empty())
    }
}

impl VectorBuild<'_> {
    /// Builds (or carries over) the vector part; returns its manifest entry.
    pub fn run(mut self) -> Result<VectorPartEntry, IndexError> {
        let t0 = Instant::now();
        let model_id = match self.embedder {
            Some(e) => e.id(),
            None => crate::vector::BUILTIN_MODEL_ID.to_string(),
        };
        let previous = self
            .previous
            .take()
            .filter(|p| p.table.version == VECTOR_VERSION && p.table.model == model_id);
        let prev_files: PrevFiles = previous
            .as_ref()
            .map(|p| {
                (0..p.table.files())
                    .filter_map(|j| p.table.file(j).map(|(path, content)| (path, (j, content))))
                    .collect()
            })
            .unwrap_or_default();
        let changed = self.changed(&prev_files);
        if let Some(p) = &previous
            && changed.is_empty()
            && p.table.files() == self.files.len()
        {
            return self.carry_over(p, t0);
        }
        let plan = self.plan(previous.as_ref())?;
        let tokenized = self.chunk(&plan, &changed)?;
        let own: Vec<Vec<ChunkMeta>> = match &previous {
            Some(p) => changed
                .iter()
                .filter_map(|&i| prev_files.get(self.files[i].path.as_str()))
                .map(|&(j, _)| p.table.file_chunks(j))
                .collect::<Result<_, _>>()
                .map_err(|e| corrupt(&p.gen_dir, e))?,
            None => Vec::new(),
        };
        let cache = VectorCache::new(previous.as_ref(), &own);
        let first = previous.is_none();
        let embedding = self.embed(plan, tokenized, &changed, &cache, first)?;
        let fresh_chunks = embedding.made.chunks();
        let t_embed = t0.elapsed();
        let (dim, embedded) = (embedding.dim as u32, embedding.embedded);
        let (store, rebuilt, rows_written) = match embedding.made {
            Made::Held(fresh) => self.assemble(
                previous.as_ref(),
                &prev_files,
                fresh,
                model_id,
                dim,
                embedding.idf,
            )?,
            Made::Written(spill) => self.assemble_spilled(*spill, model_id, dim, embedding.idf)?,
        };
        let (bytes, hash) = self.write_bytes(&store.bytes)?;
        let v = entry(
            &store.shape,
            changed.len(),
            fresh_chunks,
            rebuilt,
            t0,
            bytes,
            rows_written,
        );
        Ok(self.with_settings(VectorPartEntry {
            blake3: hash,
            embed_ms: Some(t_embed.as_millis() as u64),
            chunks_embedded: Some(embedded as u64),
            ..v
        }))
    }

    /// The files to chunk again: those whose content is not what the previous part chunked.
    /// Files whose content is unchanged keep their chunks and vectors as they are.
    fn changed(&self, prev_files: &PrevFiles) -> Vec<usize> {
        (0..self.files.len())
            .filter(|&i| {
                prev_files
                    .get(self.files[i].path.as_str())
                    .is_none_or(|(_, content)| **content != self.files[i].hash)
            })
            .collect()
    }

    /// Nothing changed: the previous part's rows and graph linked and its store written again.
    fn carry_over(&self, p: &PreviousVectors, t0: Instant) -> Result<VectorPartEntry, IndexError> {
        if has_graph(&p.graph_dir()) {
            link_dir(&p.graph_dir(), &self.gen_dir.join(VECTORS_DIR))?;
        }
        for file in p.table.rows.iter().flat_map(RowFile::files) {
            link_file(&p.gen_dir.join(&file), &self.gen_dir.join(&file))?;
        }
        // The same files with the same chunks: the same bytes.
        let (bytes, hash) = self.write_bytes(p.table.bytes())?;
        let shape = PartShape::of_table(&p.table).map_err(|e| corrupt(&p.gen_dir, e))?;
        let v = entry(&shape, 0, 0, false, t0, bytes, 0);
        Ok(self.with_settings(VectorPartEntry { blake3: hash, ..v }))
    }

    /// The model to embed with and whether batches are embedded as they are chunked.
    fn plan(&self, previous: Option<&PreviousVectors>) -> Result<EmbedPlan<'_>, IndexError> {
        let chunker = Chunker::new(ChunkConfig::default());
        let model = match self.embedder {
            None => {
                let base = StaticEmbedder::builtin().map_err(model_error)?;
                let known_idf = match previous {
                    Some(p) if p.table.idf.len() == base.vocab_size() => Some(p.table.idf.clone()),
                    _ => None,
                };
                Model::Builtin {
                    base: Box::new(base),
                    known_idf,
                }
            }
            Some(e) => Model::External(e),
        };
        // With the built-in model and the IDF known (an incremental build), or under a memory
        // cap, each batch is embedded as soon as it is tokenized: a build then holds vectors,
        // not every chunk's token ids (a capped full build tokenizes twice: once for the IDF).
        let stream = match &model {
            Model::Builtin { known_idf, .. } => known_idf.is_some() || self.bounded,
            Model::External(_) => false,
        };
        Ok(EmbedPlan {
            chunker,
            model,
            stream,
        })
    }

    /// Every changed file chunked (and, with the built-in model, tokenized) up front; nothing
    /// when the plan streams (the embed step then chunks a batch at a time).
    fn chunk(&self, plan: &EmbedPlan, changed: &[usize]) -> Result<ByFile<Tokenized>, IndexError> {
        let mut tokenized = Vec::new();
        if !plan.stream {
            let tokenizer = match &plan.model {
                Model::Builtin { base, .. } => Some(&**base),
                Model::External(_) => None,
            };
            tokenized.reserve(changed.len());
            self.store
                .visit_records(self.segments, self.files, changed, self.record_batch(), |batch| {
                    tokenized.extend(self.chunk_batch(&plan.chunker, batch, tokenizer));
                    Ok(())
                })?;
        }
        Ok(tokenized)
    }

    /// A batch of the changed files' records chunked on every core; with the built-in model
    /// each chunk is tokenized at once and its text dropped, so a build holds token ids, not
    /// every file's symbols and text together.
    fn chunk_batch(
        &self,
        chunker: &Chunker,
        batch: Vec<(usize, FileSymbols)>,
        tokenizer: Option<&StaticEmbedder>,
    ) -> ByFile<Tokenized> {
        let (files, root) = (self.files, self.root);
        batch
            .into_par_iter()
            .map(|(i, symbols)| {
                let r = &files[i];
                // Docs and config are searched lexically only: their chunks would stand
                // in code answers' semantic rankings.
                if crate::lang::text_kind(&r.language).is_some() {
                    return (i, Vec::new());
                }
                let bytes = crate::util::read_regular(&r.path.to_fs(root)).unwrap_or_default();
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
    }

    /// Files read, chunked and embedded at a time.
    fn record_batch(&self) -> usize {
        match self.bounded {
            true => RECORD_BATCH_TIGHT,
            false => RECORD_BATCH,
        }
    }

    /// The changed files' chunks with their vectors: cached ones reused, the rest embedded;
    /// with the built-in model and `stream`, each batch of the changed files as it is chunked
    /// (and in a `first` build, with no previous part, numbered and written as it comes).
    fn embed(
        &self,
        plan: EmbedPlan,
        tokenized: ByFile<Tokenized>,
        changed: &[usize],
        cache: &VectorCache,
        first: bool,
    ) -> Result<Embedding, IndexError> {
        let EmbedPlan {
            chunker,
            model,
            stream,
        } = plan;
        let (base, known_idf) = match model {
            // Under a tight cap each thread keeps fewer words tokenized: at the default,
            // the two threads' caches were about 22 MiB of a capped first build's embedding.
            Model::Builtin { base, known_idf } if self.bounded => {
                ((*base).with_word_cache_cap(WORD_CACHE_TIGHT), known_idf)
            }
            Model::Builtin { base, known_idf } => (*base, known_idf),
            Model::External(model) => return embed_external(model, tokenized, cache),
        };
        // The IDF is made by a full build and kept by incremental ones.
        let idf = match known_idf {
            Some(idf) => idf,
            None if stream => self.streamed_idf(&chunker, &base, changed)?,
            None => {
                let mut df = DocFreq::new(base.vocab_size());
                df.add(&tokenized);
                df.weights()
            }
        };
        let model = base.with_weights(idf.clone());
        let embedded = AtomicUsize::new(0);
        let mut fresh: HashMap<usize, Vec<Embedded>> = HashMap::new();
        let mut spill = match stream && first {
            true => Some(RowSpill::create(self.gen_dir, model.dim())?),
            false => None,
        };
        match stream {
            true => self.store.visit_records(
                self.segments,
                self.files,
                changed,
                self.record_batch(),
                |batch| {
                    let batch = self.chunk_batch(&chunker, batch, Some(&model));
                    let batch = embed_ids(&model, batch, cache, &embedded);
                    match &mut spill {
                        Some(s) => s.add(batch)?,
                        None => fresh.extend(batch),
                    }
                    Ok(())
                },
            )?,
            false => fresh.extend(embed_ids(&model, tokenized, cache, &embedded)),
        }
        Ok(Embedding {
            made: match spill {
                Some(s) => Made::Written(Box::new(s)),
                None => Made::Held(fresh),
            },
            dim: model.dim(),
            idf,
            embedded: embedded.into_inner(),
        })
    }

    /// The IDF of the changed files' chunks, tokenized a batch at a time and not kept.
    fn streamed_idf(
        &self,
        chunker: &Chunker,
        base: &StaticEmbedder,
        changed: &[usize],
    ) -> Result<Vec<f32>, IndexError> {
        let mut df = DocFreq::new(base.vocab_size());
        self.store
            .visit_records(self.segments, self.files, changed, self.record_batch(), |batch| {
                df.add(&self.chunk_batch(chunker, batch, Some(base)));
                Ok(())
            })?;
        Ok(df.weights())
    }

    /// Writes `bytes` as this generation's `vectors.bin`; returns its size and blake3.
    fn write_bytes(&self, bytes: &[u8]) -> Result<(usize, String), IndexError> {
        let hash = self.store.write_part(self.gen_dir, VECTORS_FILE, bytes)?;
        Ok((bytes.len(), hash))
    }

    /// `store` encoded, with its shape.
    fn encoded(&self, store: &VectorStore) -> Result<EncodedPart, IndexError> {
        Ok(EncodedPart {
            bytes: store.encode().map_err(|e| corrupt(self.gen_dir, e))?,
            shape: PartShape::of_store(store),
        })
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
    /// when there is no previous part or too much of it would be dead. Returns the part
    /// encoded, whether it was rebuilt, and the row bytes written.
    fn assemble(
        &self,
        previous: Option<&PreviousVectors>,
        prev_files: &PrevFiles,
        fresh: HashMap<usize, Vec<Embedded>>,
        model: String,
        dim: u32,
        idf: Vec<f32>,
    ) -> Result<(EncodedPart, bool, usize), IndexError> {
        let d = dim as usize;
        let incremental = self.incremental(previous, &fresh)?;
        // Incremental: only the new points (appended after the previous ones); rebuild: all.
        let (mut points, dead) = match &incremental {
            Some((p, dead)) => (Points::after(p.table.points() as u32), dead.clone()),
            None => (Points::after(0), Vec::new()),
        };
        // Sized once: grown by doubling, the rows of a whole tree (50 MB for 3M lines) were
        // held twice over while they moved, the peak of a capped build.
        let fresh_points: usize = fresh.values().map(Vec::len).sum();
        let kept_points = match (&incremental, previous) {
            (None, Some(p)) => p.table.points(),
            _ => 0,
        };
        points
            .vectors
            .reserve_exact((fresh_points + kept_points) * row_len(d));
        let files = self.number_files(previous, prev_files, incremental.is_some(), fresh, &mut points)?;
        let vectors = points.vectors;
        let base = incremental.as_ref().map(|(p, _)| *p);
        if keeps_graph(base.map_or(0, |p| p.table.points()) + vectors.len() / row_len(d).max(1)) {
            self.write_graph(base, &vectors, d)?;
        }
        // The sign bits of appended points are taken about the center their part has.
        let center = match base {
            Some(p) if p.table.center.len() == d => p.table.center.clone(),
            _ => center_of(&vectors, d),
        };
        let (rows, written) = match base {
            Some(p) => self.append_rows(p, &vectors, d, &center)?,
            None => {
                let rows: Vec<RowFile> = self.write_rows(0, &vectors, d, &center)?.into_iter().collect();
                (rows, vectors.len())
            }
        };
        let header = StoredHeader {
            version: VECTOR_VERSION,
            model,
            dim,
            idf,
            rows,
            dead,
            center,
        };
        let part = match base {
            // Every unchanged file's chunks copied as the previous part stored them.
            Some(p) => {
                EncodedPart::appended(&p.table, &files, header).map_err(|e| corrupt(self.gen_dir, e))?
            }
            None => self.encoded(&VectorStore::rebuilt(header, files))?,
        };
        Ok((part, incremental.is_none(), written))
    }

    /// A first build's part from its rows written as they were embedded ([`RowSpill`]):
    /// what [`VectorBuild::assemble`] makes of the same vectors held, without holding them.
    fn assemble_spilled(
        &self,
        spill: RowSpill,
        model: String,
        dim: u32,
        idf: Vec<f32>,
    ) -> Result<(EncodedPart, bool, usize), IndexError> {
        let d = dim as usize;
        let mut done = spill.finish(self.store, self.gen_dir)?;
        if let Some(row) = done.row.as_ref().filter(|r| keeps_graph(r.points as usize)) {
            let path = self.gen_dir.join(&row.file);
            let bytes = std::fs::read(&path).map_err(IndexError::io(&path))?;
            self.write_graph(None, &bytes, d)?;
        }
        let files = self
            .files
            .iter()
            .enumerate()
            .map(|(i, r)| FileOut {
                path: r.path.to_string(),
                content: r.hash,
                chunks: ChunksOut::New(done.chunks.remove(&i).unwrap_or_default()),
            })
            .collect();
        let header = StoredHeader {
            version: VECTOR_VERSION,
            model,
            dim,
            idf,
            rows: done.row.into_iter().collect(),
            dead: Vec::new(),
            center: done.center,
        };
        Ok((
            self.encoded(&VectorStore::rebuilt(header, files))?,
            true,
            done.bytes,
        ))
    }

    /// Each file's chunks with their ids: a changed file's new chunks as new points, an
    /// unchanged file's kept as the previous part stored them (`incremental`) or given new
    /// ids with their vectors copied (a rebuild).
    fn number_files(
        &self,
        previous: Option<&PreviousVectors>,
        prev_files: &PrevFiles,
        incremental: bool,
        mut fresh: HashMap<usize, Vec<Embedded>>,
        points: &mut Points,
    ) -> Result<Vec<FileOut>, IndexError> {
        let mut files = Vec::with_capacity(self.files.len());
        for (i, r) in self.files.iter().enumerate() {
            let old = prev_files.get(r.path.as_str()).map(|&(j, _)| j);
            let chunks = match (fresh.remove(&i), previous, old) {
                (Some(new), _, _) => ChunksOut::New(points.add_fresh(new)),
                (None, Some(_), Some(j)) if incremental => ChunksOut::Kept(j),
                (None, Some(p), Some(j)) => {
                    let old = p.table.file_chunks(j).map_err(|e| corrupt(&p.gen_dir, e))?;
                    ChunksOut::New(points.renumber(old, &p.rows))
                }
                (None, _, _) => ChunksOut::New(Vec::new()),
            };
            files.push(FileOut {
                path: r.path.to_string(),
                content: r.hash,
                chunks,
            });
        }
        Ok(files)
    }

    /// The previous part and its dead ids when the new points can be appended to it: its rows
    /// are all there and no more than [`MAX_DEAD_SHARE`] of the points would be dead. `None`
    /// when the part must be rebuilt.
    fn incremental<'p>(
        &self,
        previous: Option<&'p PreviousVectors>,
        fresh: &HashMap<usize, Vec<Embedded>>,
    ) -> Result<Option<(&'p PreviousVectors, Vec<u32>)>, IndexError> {
        let Some(p) = previous else { return Ok(None) };
        let changed_paths: HashSet<&str> = fresh
            .keys()
            .filter_map(|&i| self.files.get(i))
            .map(|r| r.path.as_str())
            .collect();
        let kept_paths: HashSet<&str> = self.files.iter().map(|r| r.path.as_str()).collect();
        // Old points that stop being live: the chunks of changed and removed files.
        let mut dead = p.table.dead.clone();
        for j in 0..p.table.files() {
            let Some((path, _)) = p.table.file(j) else {
                continue;
            };
            if changed_paths.contains(path) || !kept_paths.contains(path) {
                let gone = p.table.file_chunks(j).map_err(|e| corrupt(&p.gen_dir, e))?;
                dead.extend(gone.iter().map(|c| c.id));
            }
        }
        let added: usize = fresh.values().map(Vec::len).sum();
        let share = dead.len() as f64 / (p.table.points() + added).max(1) as f64;
        let whole = p.rows.points() == p.table.points();
        Ok((share <= MAX_DEAD_SHARE && whole).then_some((p, dead)))
    }

    /// Writes the HNSW graph of every point: the previous part's graph loaded with `vectors`
    /// (the new points) inserted, or built from the previous rows and `vectors`, or (a
    /// rebuild, `base` `None`) from `vectors` alone. The graph keeps every vector itself.
    fn write_graph(
        &self,
        base: Option<&PreviousVectors>,
        vectors: &[u8],
        d: usize,
    ) -> Result<(), IndexError> {
        let dir = self.gen_dir.join(VECTORS_DIR);
        std::fs::create_dir_all(&dir).map_err(IndexError::io(&dir))?;
        let index = match base {
            Some(p) if has_graph(&p.graph_dir()) => {
                let mut index = VectorIndex::load(&p.graph_dir(), d, p.rows.to_vec()).map_err(model_error)?;
                index.insert(vectors).map_err(model_error)?;
                index
            }
            Some(p) => {
                let mut all = p.rows.to_vec();
                all.extend_from_slice(vectors);
                VectorIndex::build(d, all).map_err(model_error)?
            }
            None => VectorIndex::build(d, vectors.to_vec()).map_err(model_error)?,
        };
        index.dump(&dir).map_err(model_error)
    }
    /// The previous row files linked into this generation and `added` (new points) after
    /// them: in a file of its own, or, past [`MAX_ROW_FILES`], concatenated with the files
    /// after the first (with the first too once they outgrow half of it), so a part never
    /// lists many files and a one-file update still writes little. Ids stay where they were.
    fn append_rows(
        &self,
        p: &PreviousVectors,
        added: &[u8],
        dim: usize,
        center: &[f32],
    ) -> Result<(Vec<RowFile>, usize), IndexError> {
        let old = &p.table.rows;
        let from = match added.is_empty() || old.len() < MAX_ROW_FILES {
            true => old.len(),
            false => {
                let first = old.first().map_or(0, |r| r.points as usize);
                let tail: usize = old.iter().skip(1).map(|r| r.points as usize).sum();
                match (tail + added.len() / row_len(dim).max(1)) * 2 > first {
                    true => 0,
                    false => 1,
                }
            }
        };
        let mut rows = Vec::with_capacity(from + 1);
        for r in old.iter().take(from) {
            for file in r.files() {
                link_file(&p.gen_dir.join(&file), &self.gen_dir.join(&file))?;
            }
            rows.push(r.clone());
        }
        let mut merged: Vec<u8> = Vec::new();
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
        rows.extend(self.write_rows(start, bytes, dim, center)?);
        Ok((rows, bytes.len()))
    }

    /// Writes `vectors`, the points from id `start` on, as a row file of this generation
    /// (none when empty), named by its first id and content (names never repeat within a
    /// part, and a file of a name is always the same bytes), and their sign bits about
    /// `center` beside it.
    fn write_rows(
        &self,
        start: u32,
        vectors: &[u8],
        dim: usize,
        center: &[f32],
    ) -> Result<Option<RowFile>, IndexError> {
        if vectors.is_empty() {
            return Ok(None);
        }
        let hash = blake3::Hasher::new()
            .update_rayon(vectors)
            .finalize()
            .to_hex()
            .to_string();
        let codes = encode_codes(vectors, dim, center);
        let row = RowFile::new(start, (vectors.len() / row_len(dim).max(1)) as u32, hash, &codes);
        self.store.write_new_part(self.gen_dir, &row.file, vectors)?;
        self.store
            .write_new_part(self.gen_dir, &row.codes_file(), &codes)?;
        Ok(Some(row))
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

/// Files of the previous part by path: their index there, and their content hash when chunked.
type PrevFiles<'p> = HashMap<&'p str, (usize, &'p [u8; 32])>;

/// What a part holds, as its manifest entry says it.
struct PartShape {
    model: String,
    dim: u32,
    chunks: usize,
    points: usize,
    dead: usize,
    rows: Vec<RowFile>,
}

impl PartShape {
    fn of_store(s: &VectorStore) -> PartShape {
        PartShape {
            model: s.model.clone(),
            dim: s.dim,
            chunks: s.files.iter().map(|f| f.chunks.len()).sum(),
            points: s.points(),
            dead: s.dead.len(),
            rows: s.rows.clone(),
        }
    }

    fn of_table(t: &ChunkTable) -> Result<PartShape, postcard::Error> {
        Ok(PartShape {
            model: t.model.clone(),
            dim: t.dim,
            chunks: (0..t.files())
                .map(|j| t.chunk_count(j))
                .sum::<Result<usize, _>>()?,
            points: t.points(),
            dead: t.dead.len(),
            rows: t.rows.clone(),
        })
    }
}

/// A part's stored bytes, and what it holds.
struct EncodedPart {
    bytes: Vec<u8>,
    shape: PartShape,
}

impl EncodedPart {
    /// The previous part `table` with `files` and `header` ([`ChunkTable::encode_appended`]).
    fn appended(
        table: &ChunkTable,
        files: &[FileOut],
        header: StoredHeader,
    ) -> Result<EncodedPart, postcard::Error> {
        let chunks = files
            .iter()
            .map(|f| match &f.chunks {
                ChunksOut::New(c) => Ok(c.len()),
                ChunksOut::Kept(j) => table.chunk_count(*j),
            })
            .sum::<Result<usize, _>>()?;
        Ok(EncodedPart {
            bytes: table.encode_appended(files, &header)?,
            shape: PartShape {
                chunks,
                points: header.rows.iter().map(|r| r.points as usize).sum(),
                dead: header.dead.len(),
                model: header.model,
                dim: header.dim,
                rows: header.rows,
            },
        })
    }
}

fn entry(
    s: &PartShape,
    files: usize,
    chunks: usize,
    rebuilt: bool,
    t0: std::time::Instant,
    bytes: usize,
    rows_written: usize,
) -> VectorPartEntry {
    VectorPartEntry {
        version: VECTOR_VERSION,
        file: VECTORS_FILE.to_string(),
        dir: VECTORS_DIR.to_string(),
        model: s.model.clone(),
        dim: s.dim,
        chunks: s.chunks as u64,
        graph_points: s.points as u64,
        dead: s.dead as u64,
        graph_rebuilt: rebuilt,
        graph: keeps_graph(s.points),
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
    for file in prev_part.rows.iter().flat_map(RowFile::files) {
        link_file(&prev_gen_dir.join(&file), &gen_dir.join(&file))?;
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

/// The built-in model's vectors for `tokenized` (cached ones reused), on every core;
/// `embedded` counts those made.
fn embed_ids(
    model: &StaticEmbedder,
    tokenized: ByFile<Tokenized>,
    cache: &VectorCache,
    embedded: &AtomicUsize,
) -> ByFile<Embedded> {
    tokenized
        .into_par_iter()
        .map(|(file, chunks)| {
            let e = chunks
                .into_iter()
                .map(|(c, ids)| {
                    let v = cache.get(&c).unwrap_or_else(|| {
                        embedded.fetch_add(1, Ordering::Relaxed);
                        quantize(&model.embed_ids(&ids))
                    });
                    (c, v)
                })
                .collect();
            (file, e)
        })
        .collect()
}

/// Another model's vectors for the chunk texts not cached (it parallelizes or batches
/// requests itself); cached chunks keep theirs.
fn embed_external(
    model: &dyn Embedder,
    tokenized: ByFile<Tokenized>,
    cache: &VectorCache,
) -> Result<Embedding, IndexError> {
    let chunked: ByFile<Chunk> = tokenized
        .into_iter()
        .map(|(i, cs)| (i, cs.into_iter().map(|(c, _)| c).collect()))
        .collect();
    let todo: Vec<&str> = chunked
        .iter()
        .flat_map(|(_, cs)| cs.iter())
        .filter(|c| !cache.contains(c))
        .map(|c| c.text.as_str())
        .collect();
    let vectors = embed_texts(model, &todo)?;
    let embedded = vectors.len();
    let mut vectors = vectors.into_iter();
    let mut fresh = HashMap::new();
    for (file, chunks) in chunked {
        let mut e = Vec::with_capacity(chunks.len());
        for c in chunks {
            let v = match cache.get(&c) {
                Some(v) => v,
                None => vectors.next().unwrap_or_default(),
            };
            e.push((c, v));
        }
        fresh.insert(file, e);
    }
    Ok(Embedding {
        made: Made::Held(fresh),
        dim: model.dim(),
        idf: Vec::new(),
        embedded,
    })
}

/// `texts` embedded by `model` in batches of [`EXTERNAL_BATCH`] and quantized; a batch
/// answered with the wrong number or size of vectors is an error.
fn embed_texts(model: &dyn Embedder, texts: &[&str]) -> Result<Vec<Vec<u8>>, IndexError> {
    let mut vectors = Vec::with_capacity(texts.len());
    for batch in texts.chunks(EXTERNAL_BATCH) {
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
    Ok(vectors)
}

/// The points a build adds, in id order: each one's vector appended to `vectors`, its id the
/// next after the last.
struct Points {
    vectors: Vec<u8>,
    next: u32,
}

impl Points {
    /// No points yet; the first gets id `start`.
    fn after(start: u32) -> Points {
        Points {
            vectors: Vec::new(),
            next: start,
        }
    }

    fn add(&mut self, vector: &[u8]) -> u32 {
        self.vectors.extend_from_slice(vector);
        self.next += 1;
        self.next - 1
    }

    /// New chunks, each a new point.
    fn add_fresh(&mut self, new: Vec<Embedded>) -> Vec<ChunkMeta> {
        new.into_iter()
            .map(|(c, v)| ChunkMeta {
                start_line: c.start_line,
                end_line: c.end_line,
                symbol: c.symbol,
                hash: c.hash,
                id: self.add(&v),
            })
            .collect()
    }

    /// Kept chunks given new ids (a rebuild), their vectors copied from `rows`.
    fn renumber(&mut self, old: Vec<ChunkMeta>, rows: &Rows) -> Vec<ChunkMeta> {
        old.into_iter()
            .map(|mut c| {
                c.id = self.add(rows.vector(c.id));
                c
            })
            .collect()
    }
}
