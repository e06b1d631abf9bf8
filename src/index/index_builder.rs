//! `IndexBuilder`: one build, full or incremental, committed as a new generation.
//!
//! Incremental rule: a file whose size and mtime match the previous record (and whose mtime is
//! older than the previous build's start) is reused without being read; otherwise it is read
//! and hashed, and parsed only if the hash changed. New records go to one new segment; when
//! more than half of the referenced segment slots are dead, or there are too many segments,
//! all live records are rewritten into one segment.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use rayon::prelude::*;

use super::history_part::{HISTORY_FILE, HISTORY_VERSION, HistoryError, HistoryPart, HistoryRead};
use super::index_verifier::{Damage, IndexVerifier};
use super::manifest::FORMAT_NAME;
use super::mapped_part::MappedPart;
use super::repo_walker::{Candidate, Reader};
use super::vector_part::{PreviousVectors, Rows, VECTOR_VERSION, VECTORS_FILE, VectorBuild, VectorStore};
use super::{
    BuildObserver, BuildStats, EncodedRecord, FORMAT_VERSION, FileRecord, FileTable, IndexConfig, IndexError,
    IndexStore, LanguageSummary, Manifest, RepoWalker, SegmentInfo, SkipReason, SkippedFile, Summary,
    WalkOutcome,
};
use crate::graph::{CodeGraph, FileSkeleton, GRAPH_VERSION, GraphUpdate};
use crate::lang::{LanguageRegistry, TextFormats};
use crate::lexical::{FileDoc, LEXICAL_VERSION, LexicalError, LexicalWriter};
use crate::parse::{FileParser, ModulePaths};
use crate::symbols::{FileSymbols, SymbolKind};
use crate::util::ResidentMemory;

pub use super::index_store::{GRAPH_FILE, LEXICAL_DIR};
/// Compact when more segments than this are referenced.
const MAX_SEGMENTS: usize = 16;
/// Bytes inspected for NUL to call a file binary (git's heuristic).
const BINARY_PROBE: usize = 8000;
/// Worker threads a build starts at most, whatever it is asked for.
pub const MAX_THREADS: usize = 1024;

#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct BuildReport {
    pub index_dir: PathBuf,
    pub manifest: Manifest,
    /// Damage found in the previous generation: not reused, rebuilt from the source files.
    pub repairs: Vec<Damage>,
}

pub struct IndexBuilder<'a> {
    root: PathBuf,
    config: &'a IndexConfig,
    observer: &'a dyn BuildObserver,
    /// The semantic part's model; `None` is the built-in one.
    embedder: Option<std::sync::Arc<dyn crate::vector::Embedder>>,
    /// A generation this process committed itself and reuses without verifying again.
    trusted: Option<u64>,
}

/// What happened to one candidate file.
/// An outcome made ready for the segment: a parsed file's record encoded and its skeleton
/// made, its symbols dropped.
enum Ready {
    Reused(FileRecord),
    Fresh(FileRecord, Result<EncodedRecord, String>, Option<FileSkeleton>),
    Skipped(SkippedFile),
}

enum Outcome {
    Reused(FileRecord),
    Parsed(FileRecord, FileSymbols),
    Skipped(SkippedFile),
}

struct Assembled {
    table: FileTable,
    /// Skeletons of the parsed files (for the graph), aligned with `table.files`.
    skeletons: Vec<Option<FileSkeleton>>,
    segments: Vec<SegmentInfo>,
    parsed: u64,
    reused: u64,
    compacted: bool,
    removed_paths: Vec<String>,
    /// Bare JavaScript imports naming repository code (package names, tsconfig paths).
    js_aliases: Vec<(String, String)>,
}

struct Previous {
    generation: u64,
    manifest: Manifest,
    table: FileTable,
}

impl<'a> IndexBuilder<'a> {
    pub fn new(
        root: &Path,
        config: &'a IndexConfig,
        observer: &'a dyn BuildObserver,
    ) -> Result<Self, IndexError> {
        let root = root.canonicalize().map_err(IndexError::io(root))?;
        if !root.is_dir() {
            return Err(IndexError::NotADirectory(root));
        }
        Ok(IndexBuilder {
            root,
            config,
            observer,
            embedder: None,
            trusted: None,
        })
    }

    /// Embeds with this model instead of the built-in one (a changed model re-embeds
    /// everything).
    pub fn with_embedder(mut self, embedder: Option<std::sync::Arc<dyn crate::vector::Embedder>>) -> Self {
        self.embedder = embedder;
        self
    }

    /// Reuses `generation`, if it is the previous one, without verifying it: a resident
    /// server trusts what it committed itself moments ago (every other generation, and every
    /// build of a new process, is verified).
    pub fn trusting(mut self, generation: Option<u64>) -> Self {
        self.trusted = generation;
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn build(&self) -> Result<BuildReport, IndexError> {
        let t0 = Instant::now();
        let registry = LanguageRegistry::builtin()?;
        let index_dir = self.config.index_dir_for(&self.root);
        let store = IndexStore::new(&index_dir);
        store.prepare()?;
        let lock = store.lock()?;
        store.claim_root(&self.root)?;
        // What a killed or failed build left (its generation folder, segments no committed
        // generation names) goes before this build adds its own, and again if this one fails:
        // retries on a full disk do not pile up.
        let freed = store.clear_interrupted();
        if freed > 0 {
            tracing::info!("removed {freed} bytes left by an interrupted build");
        }
        let built = self.build_locked(t0, registry, index_dir, &store, &lock);
        if built.is_err() {
            store.clear_interrupted();
        }
        built
    }

    fn build_locked(
        &self,
        t0: Instant,
        registry: &'static LanguageRegistry,
        index_dir: PathBuf,
        store: &IndexStore,
        lock: &super::index_store::BuildLock,
    ) -> Result<BuildReport, IndexError> {
        // Kept by the collection even when this build does not reuse it (`--full`, damage):
        // a reader that has not leased it yet may be about to.
        let committed_before = store.current().ok().flatten();
        let extractor = self.extractor(registry);
        let (previous, repairs) = match self.config.full {
            true => (None, Vec::new()),
            false => load_previous(store, &extractor, self.trusted)?,
        };
        for d in &repairs {
            tracing::warn!(
                "{} is damaged ({}): rebuilding the index from the source files",
                d.path,
                d.detail
            );
        }
        let (highest_gen, _) = store.highest_ids();
        // Files are compared with this on the filesystem's clock, which may lag the system
        // clock by a tick: the earlier of the two is the safe choice.
        let build_started = lock.stamp_ns().map_or_else(now_ns, |s| s.min(now_ns()));
        let generation = previous
            .as_ref()
            .map_or(1, |p| p.generation + 1)
            .max(highest_gen + 1);
        let gen_dir = store.begin(generation)?;

        // The history is read by git in a thread of its own while the tree is parsed.
        let first = self.config.first_stage;
        let deferred: Vec<String> = [
            ("graph", self.config.graph),
            ("semantic", self.config.vectors),
            ("history", self.config.history),
        ]
        .into_iter()
        .filter(|(_, on)| *on && first)
        .map(|(part, _)| part.to_string())
        .collect();
        let history = (self.config.history && !first).then(|| {
            let root = self.root.clone();
            let before = previous_history(store, previous.as_ref());
            std::thread::spawn(move || {
                let t = Instant::now();
                (HistoryPart::read(&root, before), t.elapsed())
            })
        });
        let mut peaks: BTreeMap<String, u64> = BTreeMap::new();
        // The process's peak so far at the end of each phase: the phase where it rises is the
        // one that raised it. (The kernel's mark is never reset: `time` and other outside
        // tools read the same peak.)
        let mut peak_of = |phase: &str| {
            if let Some(mib) = ResidentMemory::peak_mib() {
                peaks.insert(phase.to_string(), mib);
            }
        };
        let walked = {
            let _span = tracing::info_span!("index.walk").entered();
            self.observer.phase("walk", 0);
            let exclude = index_dir.canonicalize().ok();
            let w = RepoWalker::new(&self.root, &self.config.walk, registry, exclude).walk();
            self.observer.finish_phase();
            w
        };
        let t_walk = t0.elapsed();
        peak_of("walk");

        let lexical = match self.config.lexical {
            true => Some(self.open_lexical(store, previous.as_ref(), &gen_dir)?),
            false => None,
        };
        let (outcomes, threads) =
            self.parse_all(&walked.candidates, previous.as_ref(), registry, lexical.as_ref())?;
        let t_parse = t0.elapsed();
        peak_of("parse");

        let _span = tracing::info_span!("index.write").entered();
        self.observer.phase("write", 0);
        let mut phases = BTreeMap::new();
        let mut lap = Instant::now();
        let mut mark = |phase: &str| {
            phases.insert(phase.to_string(), lap.elapsed().as_millis() as u64);
            peak_of(phase);
            lap = Instant::now();
        };
        let mut assembled = self.assemble(store, previous.as_ref(), outcomes, walked)?;
        mark("assemble");
        let mut parts = BTreeMap::new();
        if let Some(w) = lexical {
            for f in &assembled.removed_paths {
                w.remove_file(f);
            }
            let docs = w.commit()?;
            // File sizes, which a reader checks on open (a stat each); the content is checked
            // by `ken index verify` and by the next build.
            let files = super::index_snapshot::lexical_file_sizes(&gen_dir.join(LEXICAL_DIR))?;
            parts.insert(
                "lexical".to_string(),
                serde_json::json!({ "version": LEXICAL_VERSION, "dir": LEXICAL_DIR, "docs": docs, "files": files }),
            );
            mark("lexical");
        }
        if self.config.graph && !first {
            let _span = tracing::info_span!("graph.resolve").entered();
            self.observer.phase("graph", 0);
            let part = self.build_graph(store, previous.as_ref(), &mut assembled, &gen_dir)?;
            parts.insert("graph".to_string(), part);
            mark("graph");
        }
        let model_id = match self.embedder.as_deref() {
            Some(e) => e.id(),
            None => crate::vector::BUILTIN_MODEL_ID.to_string(),
        };
        let unchanged = assembled.parsed == 0 && assembled.removed_paths.is_empty();
        let reused_vectors = match (self.config.vectors && !first && unchanged, previous.as_ref()) {
            (true, Some(p)) => match p.manifest.parts.get("vectors") {
                Some(part) => super::vector_part::reuse_unchanged(
                    part,
                    &store.generation_dir(p.generation),
                    &gen_dir,
                    &model_id,
                )?,
                None => None,
            },
            _ => None,
        };
        if let Some(part) = reused_vectors {
            parts.insert("vectors".to_string(), part);
            mark("vectors");
        } else if self.config.vectors && !first {
            let _span = tracing::info_span!("vector.embed").entered();
            self.observer.phase("embed", 0);
            // The previous part's chunk table (checked) and its row files mapped (checked by
            // the stamps or hashes of `load_previous`); an older or damaged part re-embeds.
            let prev_vectors = previous.as_ref().and_then(|p| {
                let part = p.manifest.parts.get("vectors")?;
                let version = part.get("version").and_then(serde_json::Value::as_u64);
                if version != Some(u64::from(VECTOR_VERSION)) {
                    return None;
                }
                let hash = part.get("blake3").and_then(|b| b.as_str());
                let bytes = store.read_part(p.generation, VECTORS_FILE, hash).ok()?;
                let s: VectorStore = postcard::from_bytes(&bytes).ok()?;
                let rows = Rows::open(store, p.generation, &s, |_| false).ok()?;
                Some(PreviousVectors {
                    store: s,
                    rows,
                    gen_dir: store.generation_dir(p.generation),
                })
            });
            let part = VectorBuild {
                store,
                root: &self.root,
                files: &assembled.table.files,
                segments: &assembled.segments,
                previous: prev_vectors,
                gen_dir: &gen_dir,
                embedder: self.embedder.as_deref(),
                bounded: self.config.max_memory_mib.is_some(),
            }
            .run()?;
            parts.insert("vectors".to_string(), part);
            mark("vectors");
        }
        if let Some(h) = history {
            let _span = tracing::info_span!("index.history").entered();
            let part = self.write_history(store, h, &gen_dir)?;
            parts.insert("history".to_string(), part);
            mark("history");
        }
        let Assembled {
            table,
            skeletons: _,
            segments,
            parsed,
            reused,
            compacted,
            removed_paths,
            js_aliases: _,
        } = assembled;
        let mut manifest = Manifest {
            format: FORMAT_NAME.to_string(),
            version: FORMAT_VERSION,
            generation,
            ken_version: env!("CARGO_PKG_VERSION").to_string(),
            extractor,
            created_unix_ms: (now_ns() / 1_000_000) as u64,
            build_started_unix_ns: build_started,
            walk: self.config.walk.clone(),
            summary: summarize(&table),
            segments,
            parts,
            stamps: BTreeMap::new(),
            stats: BuildStats {
                full: previous.is_none(),
                parsed,
                reused,
                removed: removed_paths.len() as u64,
                compacted,
                threads,
                walk_ms: t_walk.as_millis() as u64,
                parse_ms: (t_parse - t_walk).as_millis() as u64,
                write_ms: 0,
                total_ms: 0,
                phases_ms: BTreeMap::new(),
                phases_peak_mib: BTreeMap::new(),
                peak_mib: None,
                max_memory_mib: self.config.max_memory_mib,
                deferred,
            },
            files_blake3: None,
            digest: None,
        };
        manifest.stats.write_ms = (t0.elapsed() - t_parse).as_millis() as u64;
        manifest.stats.total_ms = t0.elapsed().as_millis() as u64;
        manifest.stats.phases_ms = phases;
        manifest.stats.peak_mib = peaks.values().copied().max();
        manifest.stats.phases_peak_mib = peaks;
        store.commit(&manifest, &table)?;
        let keep: Vec<u64> = std::iter::once(generation)
            .chain(previous.as_ref().map(|p| p.generation))
            .chain(committed_before)
            .collect();
        store.collect_garbage(&keep);
        self.observer.finish_phase();
        Ok(BuildReport {
            index_dir,
            manifest,
            repairs,
        })
    }

    /// The history part: the previous generation's plus the commits since, or read whole.
    /// A tree that is not a git repository gets a part that says so (readers report the
    /// history signals as missing).
    fn write_history(
        &self,
        store: &IndexStore,
        reading: HistoryThread,
        gen_dir: &Path,
    ) -> Result<serde_json::Value, IndexError> {
        let (result, took) = reading.join().unwrap_or_else(|_| {
            (
                Err(HistoryError::Git("log".into(), "the reader panicked".into())),
                Default::default(),
            )
        });
        let (part, read) = match result {
            Ok(r) => r,
            Err(e) => return Ok(serde_json::json!({ "version": HISTORY_VERSION, "missing": e.to_string() })),
        };
        let bytes = postcard::to_allocvec(&part).map_err(|e| IndexError::Corrupt {
            path: gen_dir.join(HISTORY_FILE),
            detail: format!("encoding: {e}"),
        })?;
        let blake3 = store.write_part(gen_dir, HISTORY_FILE, &bytes)?;
        Ok(serde_json::json!({
            "version": HISTORY_VERSION,
            "file": HISTORY_FILE,
            "blake3": blake3,
            "head": part.head,
            "commits": part.commits,
            "skipped_large": part.skipped_large,
            "truncated": part.truncated,
            "files": part.files.len(),
            "new_commits": read.new_commits,
            "incremental": read.incremental,
            "ms": took.as_millis() as u64,
        }))
    }

    /// What records were extracted with: grammars and queries, and which parts are built.
    /// Any difference from the previous generation means a full rebuild.
    fn extractor(&self, registry: &LanguageRegistry) -> String {
        match self.config.lexical {
            true => format!("{}+lexical{LEXICAL_VERSION}", registry.fingerprint()),
            false => registry.fingerprint().to_string(),
        }
    }

    fn open_lexical(
        &self,
        store: &IndexStore,
        previous: Option<&Previous>,
        gen_dir: &Path,
    ) -> Result<LexicalWriter, IndexError> {
        let base = previous
            .filter(|p| p.manifest.parts.contains_key("lexical"))
            .map(|p| store.generation_dir(p.generation).join(LEXICAL_DIR));
        let threads = match self.config.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        // Under a cap the writer's heap takes at most a sixth of it.
        let budget = self
            .config
            .max_memory_mib
            .map(|m| (m as usize) << 20)
            .map(|b| b / 6);
        Ok(LexicalWriter::open(
            &gen_dir.join(LEXICAL_DIR),
            base.as_deref(),
            threads,
            budget,
        )?)
    }

    /// Reads, hashes and (where changed) parses every candidate in parallel, feeding changed
    /// files to the lexical writer from the same worker (delete, then add: opstamps stay in
    /// order per file).
    fn parse_all(
        &self,
        candidates: &[Candidate],
        previous: Option<&Previous>,
        registry: &LanguageRegistry,
        lexical: Option<&LexicalWriter>,
    ) -> Result<(Vec<Ready>, usize), IndexError> {
        let _span = tracing::info_span!("index.parse", files = candidates.len()).entered();
        let pool = rayon::ThreadPoolBuilder::new()
            // The CLI refuses more; a library caller asking for more gets the bound.
            .num_threads(self.config.threads.min(MAX_THREADS))
            .build()
            .map_err(|e| IndexError::ThreadPool(e.to_string()))?;
        self.observer.phase("parse", candidates.len() as u64);
        let lexical_error: Mutex<Option<LexicalError>> = Mutex::new(None);
        let outcomes: Vec<Ready> = pool.install(|| {
            candidates
                .par_iter()
                .map_init(FileParser::new, |parser, c| {
                    let prev = previous.and_then(|p| p.table.find(c.path.as_str()).map(|r| (r, p)));
                    let (out, bytes) = self.classify(c, prev, registry, parser);
                    if let (Some(w), Outcome::Parsed(r, s), Some(bytes)) = (lexical, &out, bytes) {
                        if prev.is_some() {
                            w.remove_file(r.path.as_str());
                        }
                        let sep = registry
                            .by_name(&r.language)
                            .map_or(".", |l| l.separator.as_str());
                        let doc = FileDoc {
                            path: r.path.as_str(),
                            language: &r.language,
                            separator: sep,
                            bytes: &bytes,
                            lines: r.lines,
                            symbols: s,
                        };
                        if let Err(e) = w.add_file(&doc)
                            && let Ok(mut slot) = lexical_error.lock()
                        {
                            slot.get_or_insert(e);
                        }
                    }
                    self.observer.advance(1);
                    // The record encoded and the skeleton made here, so a file's symbols are
                    // dropped as soon as its worker is done with it: what a build holds
                    // between the parse and the segment is bytes and skeletons, not every
                    // file's symbols at once.
                    match out {
                        Outcome::Parsed(r, s) => {
                            let (enc, sk) = self.fresh(&s, &r);
                            Ready::Fresh(r, enc, sk)
                        }
                        Outcome::Reused(r) => Ready::Reused(r),
                        Outcome::Skipped(s) => Ready::Skipped(s),
                    }
                })
                .collect()
        });
        self.observer.finish_phase();
        if let Some(e) = lexical_error.into_inner().ok().flatten() {
            return Err(e.into());
        }
        Ok((outcomes, pool.current_num_threads()))
    }

    /// A parsed file made ready for its segment and the graph: its record encoded and its
    /// skeleton made, its symbols then dropped.
    fn fresh(
        &self,
        s: &FileSymbols,
        r: &FileRecord,
    ) -> (Result<EncodedRecord, String>, Option<FileSkeleton>) {
        let skeleton = (self.config.graph && !self.config.first_stage)
            .then(|| FileSkeleton::new(r.path.clone(), &r.language, "", s));
        (EncodedRecord::of(s), skeleton)
    }

    /// Turns outcomes into the file table and segments; module paths are set here.
    fn assemble(
        &self,
        store: &IndexStore,
        previous: Option<&Previous>,
        outcomes: Vec<Ready>,
        walked: WalkOutcome,
    ) -> Result<Assembled, IndexError> {
        let mut skipped = walked.skipped;
        let mut records = Vec::with_capacity(outcomes.len());
        let mut skeletons = Vec::with_capacity(outcomes.len());
        let mut fresh: Vec<EncodedRecord> = Vec::new();
        let (mut parsed, mut reused) = (0u64, 0u64);
        let next_segment = previous
            .and_then(|p| p.manifest.segments.iter().map(|s| s.id + 1).max())
            .unwrap_or(1)
            .max(store.highest_ids().1 + 1);
        for o in outcomes {
            match o {
                Ready::Fresh(mut r, enc, sk) => {
                    parsed += 1;
                    skeletons.push(sk);
                    r.segment = next_segment;
                    r.slot = fresh.len() as u32;
                    fresh.push(enc.map_err(|e| unencodable(store, &r, e))?);
                    records.push(r);
                }
                Ready::Reused(r) => {
                    reused += 1;
                    records.push(r);
                    skeletons.push(None);
                }
                Ready::Skipped(s) => skipped.push(s),
            }
        }
        skipped.sort_by(|a, b| (&a.path, a.reason).cmp(&(&b.path, b.reason)));
        let prev_segments = previous.map(|p| p.manifest.segments.as_slice()).unwrap_or(&[]);
        let (segments, compacted) =
            self.write_segments(store, prev_segments, next_segment, &mut records, fresh)?;
        let modules = ModulePaths::new(
            records.iter().map(|r| (&r.path, r.language.as_str())),
            &walked.layout,
        );
        for (r, sk) in records.iter_mut().zip(skeletons.iter_mut()) {
            r.module = modules.module_of(&r.path, &r.language, r.package.as_deref());
            if let Some(sk) = sk {
                sk.module = r.module.as_str().into();
            }
        }
        let removed_paths: Vec<String> = previous
            .map(|p| {
                p.table
                    .files
                    .iter()
                    .filter(|f| records.binary_search_by(|r| r.path.cmp(&f.path)).is_err())
                    .map(|f| f.path.to_string())
                    .collect()
            })
            .unwrap_or_default();
        let table = FileTable {
            files: records,
            skipped,
            unsupported_by_extension: walked.unsupported_by_extension,
        };
        Ok(Assembled {
            table,
            skeletons,
            segments,
            parsed,
            reused,
            compacted,
            removed_paths,
            js_aliases: modules.js_aliases().to_vec(),
        })
    }

    /// Resolves the graph: skeletons of unchanged files come from the previous graph (or,
    /// without one, from their symbol records), and only what changed is resolved again.
    fn build_graph(
        &self,
        store: &IndexStore,
        previous: Option<&Previous>,
        assembled: &mut Assembled,
        gen_dir: &Path,
    ) -> Result<serde_json::Value, IndexError> {
        let t0 = Instant::now();
        if let Some(part) = self.reuse_graph(store, previous, assembled, gen_dir, t0)? {
            return Ok(part);
        }
        // Decoded from the mapped part, every section checked; the bytes stay mapped so that
        // unchanged bodies are copied, not encoded again.
        let (prev_graph, prev_bytes) = previous
            .and_then(|p| load_graph(store, p.generation, &p.manifest))
            .map_or((None, None), |(g, b)| (Some(g), Some(b)));
        let files = &assembled.table.files;
        let mut skeletons: Vec<Option<FileSkeleton>> = std::mem::take(&mut assembled.skeletons);
        if let Some(g) = &prev_graph {
            for (r, sk) in files
                .iter()
                .zip(skeletons.iter_mut())
                .filter(|(_, s)| s.is_none())
            {
                if let Ok(i) = g.files.binary_search_by(|f| f.path.cmp(&r.path)) {
                    let mut s = g.files[i].clone();
                    s.module = r.module.as_str().into();
                    *sk = Some(s);
                }
            }
        }
        let missing: Vec<usize> = (0..files.len()).filter(|&i| skeletons[i].is_none()).collect();
        if !missing.is_empty() {
            let records = store.load_records(&assembled.segments, files, &missing)?;
            for (i, symbols) in missing.into_iter().zip(records) {
                let r = &files[i];
                skeletons[i] = Some(FileSkeleton::new(
                    r.path.clone(),
                    &r.language,
                    &r.module,
                    &symbols,
                ));
            }
        }
        let skeletons: Vec<FileSkeleton> = skeletons.into_iter().flatten().collect();
        let prepare_ms = t0.elapsed().as_millis() as u64;
        let (graph, update) = CodeGraph::build(skeletons, assembled.js_aliases.clone(), prev_graph.as_ref());
        let t1 = Instant::now();
        let previous = prev_graph.as_ref().zip(prev_bytes.as_deref());
        // Unchanged bodies stay slices of the previous part's mapped bytes until written.
        let pieces = graph.encode_pieces(previous).map_err(|e| IndexError::Corrupt {
            path: gen_dir.join(GRAPH_FILE),
            detail: e.to_string(),
        })?;
        let blake3 = store.write_part_pieces(gen_dir, GRAPH_FILE, &pieces.pieces())?;
        let graph_bytes = pieces.len();
        drop(pieces);
        // Freeing a whole graph one allocation at a time takes as long as a fifth of an
        // incremental build: it goes on beside the rest of the build.
        free_beside(prev_graph);
        let write_ms = t1.elapsed().as_millis() as u64;
        let (mut rules, mut named, mut external, mut unresolved) = (0u64, 0u64, 0u64, 0u64);
        for r in graph.resolved.iter().flat_map(|f| &f.refs) {
            match r.provenance {
                Some(p) if p.is_resolved() => rules += 1,
                Some(_) => named += 1,
                None if r.external => external += 1,
                None => unresolved += 1,
            }
        }
        let symbols = graph.symbol_count();
        free_beside(graph);
        Ok(serde_json::json!({
            "version": GRAPH_VERSION,
            "file": GRAPH_FILE,
            "blake3": blake3,
            "aliases": aliases_digest(&assembled.js_aliases),
            "bytes": graph_bytes,
            "symbols": symbols,
            "update": update,
            "references": { "total": rules + named + external + unresolved, "rules": rules,
                "name_matched": named, "external": external, "unresolved": unresolved },
            "prepare_ms": prepare_ms,
            "write_ms": write_ms,
            "total_ms": t0.elapsed().as_millis() as u64,
        }))
    }

    /// When no file was parsed or removed and no module path moved, the previous graph is
    /// this generation's graph: it is hard-linked (or copied) instead of rebuilt.
    fn reuse_graph(
        &self,
        store: &IndexStore,
        previous: Option<&Previous>,
        assembled: &Assembled,
        gen_dir: &Path,
        t0: Instant,
    ) -> Result<Option<serde_json::Value>, IndexError> {
        let Some(p) = previous else { return Ok(None) };
        let Some(part) = p.manifest.parts.get("graph") else {
            return Ok(None);
        };
        let version_ok =
            part.get("version").and_then(serde_json::Value::as_u64) == Some(u64::from(GRAPH_VERSION));
        let aliases_same = part.get("aliases").and_then(|a| a.as_str())
            == Some(aliases_digest(&assembled.js_aliases).as_str());
        let unchanged = assembled.skeletons.iter().all(Option::is_none)
            && aliases_same
            && assembled.removed_paths.is_empty()
            && assembled.table.files.len() == p.table.files.len()
            && assembled
                .table
                .files
                .iter()
                .zip(&p.table.files)
                .all(|(a, b)| a.path == b.path && a.module == b.module);
        if !version_ok || !unchanged {
            return Ok(None);
        }
        let file = part.get("file").and_then(|f| f.as_str()).unwrap_or(GRAPH_FILE);
        let src = store.generation_dir(p.generation).join(file);
        let dest = gen_dir.join(GRAPH_FILE);
        if std::fs::hard_link(&src, &dest).is_err() {
            std::fs::copy(&src, &dest).map_err(IndexError::io(&dest))?;
        }
        let mut part = part.clone();
        let files = assembled.table.files.len() as u64;
        part["file"] = serde_json::json!(GRAPH_FILE);
        part["update"] = serde_json::to_value(GraphUpdate {
            files_copied: files,
            ..GraphUpdate::default()
        })
        .unwrap_or_default();
        part["prepare_ms"] = serde_json::json!(0);
        part["write_ms"] = serde_json::json!(0);
        part["total_ms"] = serde_json::json!(t0.elapsed().as_millis() as u64);
        Ok(Some(part))
    }

    /// The outcome for one file, and its bytes when it was parsed.
    fn classify(
        &self,
        c: &Candidate,
        prev: Option<(&FileRecord, &Previous)>,
        registry: &LanguageRegistry,
        parser: &mut FileParser,
    ) -> (Outcome, Option<Vec<u8>>) {
        if let Some((r, p)) = prev {
            let racy = c.mtime_ns >= p.manifest.build_started_unix_ns;
            if r.size == c.size && r.mtime_ns == c.mtime_ns && !racy {
                return (Outcome::Reused(r.clone()), None);
            }
        }
        let bytes = match crate::util::read_regular(&c.abs) {
            Ok(b) => b,
            Err(e) => return (skip(c, SkipReason::Unreadable, e.to_string()), None),
        };
        if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
            return (
                skip(c, SkipReason::Binary, "NUL byte in the first 8 KiB".into()),
                None,
            );
        }
        if let Some(detail) = minified(&bytes, &self.config.walk) {
            return (skip(c, SkipReason::Minified, detail), None);
        }
        let hash = *blake3::hash(&bytes).as_bytes();
        if let Some((r, _)) = prev.filter(|(r, _)| r.hash == hash) {
            return (
                Outcome::Reused(FileRecord {
                    size: c.size,
                    mtime_ns: c.mtime_ns,
                    ..r.clone()
                }),
                None,
            );
        }
        let (language, symbols) = match c.language {
            // Docs and config: a record without symbols; the lexical part cuts the text into
            // sections.
            Reader::Text(i) => {
                let Some(format) = TextFormats::builtin().ok().and_then(|t| t.formats().get(i)) else {
                    return (
                        skip(c, SkipReason::UnsupportedLanguage, "text format vanished".into()),
                        None,
                    );
                };
                (format.name.clone(), FileSymbols::default())
            }
            Reader::Grammar(i) => {
                let Some(spec) = registry.languages().get(i) else {
                    return (
                        skip(
                            c,
                            SkipReason::UnsupportedLanguage,
                            "language vanished from registry".into(),
                        ),
                        None,
                    );
                };
                match parser.parse_within(spec, &bytes, Some(&self.config.walk.parse_limits())) {
                    Ok(s) => (spec.name.clone(), s),
                    Err(hit) => return (skip(c, SkipReason::ParseLimit, hit.to_string()), None),
                }
            }
        };
        let record = FileRecord {
            path: c.path.clone(),
            language,
            size: bytes.len() as u64,
            mtime_ns: c.mtime_ns,
            hash,
            lines: count_lines(&bytes),
            module: String::new(),
            package: symbols.package.clone(),
            symbol_counts: count_kinds(&symbols),
            references: symbols.references.len() as u32,
            imports: symbols.imports.len() as u32,
            diagnostics: symbols.diagnostics.clone(),
            segment: 0,
            slot: 0,
        };
        (Outcome::Parsed(record, symbols), Some(bytes))
    }

    /// Writes the new segment, or compacts everything into it; fixes records' slots.
    fn write_segments(
        &self,
        store: &IndexStore,
        prev: &[SegmentInfo],
        new_id: u32,
        records: &mut [FileRecord],
        fresh: Vec<EncodedRecord>,
    ) -> Result<(Vec<SegmentInfo>, bool), IndexError> {
        let mut live: BTreeMap<u32, u32> = BTreeMap::new();
        for r in records.iter().filter(|r| r.segment != new_id) {
            *live.entry(r.segment).or_default() += 1;
        }
        let referenced: Vec<&SegmentInfo> = prev.iter().filter(|s| live.contains_key(&s.id)).collect();
        let total: u64 = referenced.iter().map(|s| u64::from(s.slots)).sum::<u64>() + fresh.len() as u64;
        let live_total = records.len() as u64;
        let segment_count = referenced.len() + usize::from(!fresh.is_empty());
        let compact = (total > 0 && (total - live_total) * 2 > total) || segment_count > MAX_SEGMENTS;
        if !compact {
            let mut out: Vec<SegmentInfo> = referenced.into_iter().cloned().collect();
            if !fresh.is_empty() {
                let refs: Vec<&EncodedRecord> = fresh.iter().collect();
                out.push(store.write_segment(new_id, &refs)?);
            }
            return Ok((out, false));
        }
        let _span = tracing::info_span!("index.compact", segments = referenced.len()).entered();
        // Records are copied as stored: a compaction decodes nothing.
        let loaded: HashMap<u32, Vec<EncodedRecord>> = referenced
            .par_iter()
            .map(|s| store.read_segment_encoded(s).map(|v| (s.id, v)))
            .collect::<Result<_, _>>()?;
        let mut all: Vec<&EncodedRecord> = Vec::with_capacity(records.len());
        for r in records.iter_mut() {
            let src = if r.segment == new_id {
                fresh.get(r.slot as usize)
            } else {
                loaded.get(&r.segment).and_then(|v| v.get(r.slot as usize))
            };
            let Some(s) = src else {
                return Err(IndexError::Corrupt {
                    path: store.dir().join("segments"),
                    detail: format!("segment {} has no slot {} for {}", r.segment, r.slot, r.path),
                });
            };
            r.segment = new_id;
            r.slot = all.len() as u32;
            all.push(s);
        }
        Ok((vec![store.write_segment(new_id, &all)?], true))
    }
}

/// A record that could not be encoded for its segment (postcard fails only on what serde
/// cannot represent; named with the file, never silently dropped).
fn unencodable(store: &IndexStore, r: &FileRecord, detail: String) -> IndexError {
    IndexError::Corrupt {
        path: store.dir().join("segments"),
        detail: format!("{}: {detail}", r.path),
    }
}

/// The previous generation, if it can be reused: readable, the same extractor, and
/// undamaged (its segments, lexical part, graph and vectors checked against their hashes).
/// Damage is returned, not raised: the build then starts from the source files.
fn load_previous(
    store: &IndexStore,
    extractor: &str,
    trusted: Option<u64>,
) -> Result<(Option<Previous>, Vec<Damage>), IndexError> {
    let none = |d: Vec<Damage>| Ok((None, d));
    if !store.check_format()? {
        return none(Vec::new());
    }
    let current = store.dir().join("CURRENT");
    let generation = match store.current() {
        Ok(Some(g)) => g,
        Ok(None) => return none(Vec::new()),
        Err(e) => return none(vec![Damage::new(&current, "current", e.brief())]),
    };
    let gen_dir = store.generation_dir(generation);
    let manifest = match store.read_manifest(generation) {
        Ok(m) => m,
        Err(
            e @ (IndexError::NewerFormat { .. } | IndexError::Foreign { .. } | IndexError::Corrupt { .. }),
        )
        | Err(e @ IndexError::Io { .. }) => {
            return none(vec![Damage::new(
                &gen_dir.join("manifest.json"),
                "manifest",
                e.brief(),
            )]);
        }
        Err(e) => return Err(e),
    };
    if manifest.version != FORMAT_VERSION || manifest.extractor != extractor {
        tracing::info!("extractor or format changed; rebuilding from scratch");
        return none(Vec::new());
    }
    let table = match store.read_file_table(generation, &manifest) {
        Ok(t) => t,
        Err(e) => return none(vec![Damage::new(&gen_dir.join("files.bin"), "files", e.brief())]),
    };
    let damage = match trusted == Some(generation) {
        true => Vec::new(),
        // Files whose size, mtime and inode are as committed are trusted without a read
        // (`ken index verify` reads everything).
        false => {
            let stamps = super::CommitStamps::new(&manifest.stamps, &gen_dir);
            IndexVerifier::parts(store, generation, &manifest, Some(&table), false, Some(&stamps))
        }
    };
    if !damage.is_empty() {
        return none(damage);
    }
    Ok((
        Some(Previous {
            generation,
            manifest,
            table,
        }),
        Vec::new(),
    ))
}

type HistoryThread = std::thread::JoinHandle<(
    Result<(HistoryPart, HistoryRead), HistoryError>,
    std::time::Duration,
)>;

/// The previous generation's history part, when this ken can add to it.
fn previous_history(store: &IndexStore, previous: Option<&Previous>) -> Option<HistoryPart> {
    let p = previous?;
    let part = p.manifest.parts.get("history")?;
    if part.get("version").and_then(|v| v.as_u64()) != Some(u64::from(HISTORY_VERSION)) {
        return None;
    }
    let hash = part.get("blake3").and_then(|b| b.as_str());
    let bytes = store.read_part(p.generation, HISTORY_FILE, hash).ok()?;
    postcard::from_bytes(&bytes).ok()
}

/// The graph of a committed generation, if it has one this ken can reuse.
pub(crate) fn load_graph(
    store: &IndexStore,
    generation: u64,
    manifest: &Manifest,
) -> Option<(CodeGraph, MappedPart)> {
    let part = manifest.parts.get("graph")?;
    if part.get("version").and_then(serde_json::Value::as_u64) != Some(u64::from(GRAPH_VERSION)) {
        return None;
    }
    let file = part.get("file").and_then(|f| f.as_str()).unwrap_or(GRAPH_FILE);
    // Read in place; the decoder checks every section against its digest.
    let bytes = store.map_part(generation, file).ok()?;
    let graph = CodeGraph::decode(&bytes)
        .ok()
        .filter(|g| g.version == GRAPH_VERSION)?;
    Some((graph, bytes))
}

fn skip(c: &Candidate, reason: SkipReason, detail: String) -> Outcome {
    Outcome::Skipped(SkippedFile {
        path: c.path.to_string(),
        reason,
        detail: Some(detail),
    })
}

/// `Some(reason)` when the content looks minified or generated: a very long line, or long
/// lines on average in a file of some size.
fn minified(bytes: &[u8], cfg: &super::WalkConfig) -> Option<String> {
    let mut longest = 0usize;
    let mut lines = 0usize;
    for line in bytes.split(|&b| b == b'\n') {
        longest = longest.max(line.len());
        lines += 1;
    }
    if longest > cfg.max_line_length {
        return Some(format!("a line of {longest} bytes"));
    }
    let average = bytes.len() / lines.max(1);
    (bytes.len() > 4096 && average > cfg.max_average_line_length)
        .then(|| format!("average line of {average} bytes"))
}

fn count_lines(bytes: &[u8]) -> u32 {
    let n = bytes.iter().filter(|&&b| b == b'\n').count()
        + usize::from(bytes.last().is_some_and(|&b| b != b'\n'));
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn count_kinds(s: &FileSymbols) -> BTreeMap<SymbolKind, u32> {
    let mut m = BTreeMap::new();
    for d in &s.definitions {
        *m.entry(d.kind).or_default() += 1;
    }
    m
}

fn summarize(table: &FileTable) -> Summary {
    let mut s = Summary::default();
    for r in &table.files {
        s.files += 1;
        s.lines += u64::from(r.lines);
        s.bytes += r.size;
        let l: &mut LanguageSummary = s.by_language.entry(r.language.clone()).or_default();
        l.files += 1;
        l.lines += u64::from(r.lines);
        l.bytes += r.size;
        for (k, n) in &r.symbol_counts {
            *s.symbols_by_kind.entry(k.as_str().to_string()).or_default() += u64::from(*n);
        }
        s.references += u64::from(r.references);
        s.imports += u64::from(r.imports);
        if !r.diagnostics.is_empty() {
            s.files_with_diagnostics += 1;
        }
        let mut kinds: Vec<_> = r.diagnostics.iter().map(|d| d.kind).collect();
        kinds.dedup();
        for k in kinds {
            let key = serde_json::to_value(k)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            *s.diagnostics_by_kind.entry(key).or_default() += 1;
        }
    }
    for k in &table.skipped {
        *s.skipped_by_reason
            .entry(k.reason.as_str().to_string())
            .or_default() += 1;
    }
    s.unsupported_by_extension = table.unsupported_by_extension.clone();
    let unsupported: u64 = table.unsupported_by_extension.values().sum();
    if unsupported > 0 {
        s.skipped_by_reason
            .insert(SkipReason::UnsupportedLanguage.as_str().to_string(), unsupported);
    }
    s
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A digest of the import aliases a graph was resolved with: another set means another graph.
fn aliases_digest(aliases: &[(String, String)]) -> String {
    let mut h = blake3::Hasher::new();
    for (a, b) in aliases {
        h.update(a.as_bytes());
        h.update(&[0]);
        h.update(b.as_bytes());
        h.update(&[1]);
    }
    h.finalize().to_hex().to_string()
}

/// Drops `value` on a thread of its own (or here, when no thread can be started): large
/// structures are freed while the build goes on, and the process exit does not wait for it.
fn free_beside<T: Send + 'static>(value: T) {
    let keep = std::thread::Builder::new()
        .name("ken-free".into())
        .spawn(move || drop(value));
    if let Err(e) = keep {
        tracing::debug!("freeing on this thread: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minified_detection_uses_line_lengths() {
        let cfg = super::super::WalkConfig::default();
        assert!(minified(b"fn main() {}\n", &cfg).is_none());
        let long = vec![b'a'; 20_000];
        assert!(minified(&long, &cfg).is_some());
        let avg: Vec<u8> = (0..20)
            .flat_map(|_| {
                let mut l = vec![b'x'; 600];
                l.push(b'\n');
                l
            })
            .collect();
        assert!(minified(&avg, &cfg).is_some());
    }

    #[test]
    fn lines_are_counted_with_or_without_final_newline() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"a\nb\n"), 2);
    }
}
