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

use super::assembled_generation::AssembledGeneration;
use super::generation_parts::{GenerationParts, LexicalPartEntry, VectorPartEntry};
use super::graph_part::GraphPartWriter;
use super::history_part_writer::HistoryPartWriter;
use super::index_verifier::{Damage, IndexVerifier};
use super::manifest::FORMAT_NAME;
use super::parse_budget::{ParseBudget, SMALL_FILE_BYTES};
use super::previous_generation::PreviousGeneration;
use super::repo_walker::{Candidate, Reader};
use super::vector_build::{PreviousVectors, VectorBuild};
use super::vector_rows::Rows;
use super::vector_store::{ChunkTable, VECTOR_VERSION, VECTORS_FILE};
use super::{
    BuildObserver, BuildStats, EncodedRecord, FORMAT_VERSION, FileRecord, FileTable, IndexConfig, IndexError,
    IndexStore, LanguageSummary, Manifest, RepoWalker, SegmentInfo, SkipReason, SkippedFile, Summary,
    WalkOutcome,
};
use crate::graph::FileSkeleton;
use crate::lang::{LanguageRegistry, TextFormats};
use crate::lexical::{FileDoc, LEXICAL_VERSION, LexicalError, LexicalWriter};
use crate::parse::{FileParser, ModulePaths, ParseLimitHit};
use crate::symbols::{FileSymbols, SymbolKind};
use crate::util::ResidentMemory;

use super::index_store::LEXICAL_DIR;
/// Compact when more segments than this are referenced.
const MAX_SEGMENTS: usize = 16;
/// Bytes inspected for NUL to call a file binary (git's heuristic).
const BINARY_PROBE: usize = 8000;
/// An update that parsed at most this many files writes its graph and semantic parts side
/// by side.
const SIDE_BY_SIDE_MAX_PARSED: u64 = 256;

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
    /// Read only the first this many candidates (by path); the rest are pending (a
    /// checkpoint of a first build).
    limit: Option<usize>,
    /// The rest of a first build after its checkpoints (in this process): the memory peak
    /// this stage starts with is theirs.
    after_checkpoints: bool,
    /// How the lexical writer merges its segments.
    lexical_merge: LexicalMerge,
}

/// How a build's lexical writer merges segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LexicalMerge {
    /// By the merge policy; the whole tree's first generation after checkpoints that left
    /// their segments unmerged merges them all.
    Policy,
    /// Never: a checkpoint leaves its segments to the merge step after the last one.
    Deferred,
    /// Every segment into one at the commit: the merge step after a first build's
    /// checkpoints.
    Whole,
}

/// What a first build's checkpoints did: the last one's generation, the files they parsed,
/// and whether the first started from nothing.
struct Checkpoints {
    generation: u64,
    parsed: u64,
    full: bool,
}

impl Checkpoints {
    /// What the checkpoints did once `committed` (a stage after `before`) is committed.
    fn after(before: Option<&Checkpoints>, committed: &Manifest) -> Checkpoints {
        let stats = &committed.stats;
        Checkpoints {
            generation: committed.generation,
            parsed: before.map_or(0, |c| c.parsed) + stats.parsed,
            full: before.map_or(stats.full, |c| c.full),
        }
    }
}

/// Whether `p` is a generation of an unfinished first build whose lexical part is still in
/// several segments: checkpoints that have not covered the tree, or the last one before its
/// merge step.
fn lexical_unmerged(p: &Manifest) -> bool {
    p.stats.pending > 0
        || (!p.stats.deferred.is_empty() && p.parts.lexical.as_ref().is_some_and(|l| l.segments() > 1))
}

/// Checkpoints a first build commits: one for each eighth of the tree's bytes, the last
/// covering the whole tree (a first-stage generation), before the parts that need it all.
const CHECKPOINTS: usize = 8;

/// What happened to one candidate file.
/// An outcome made ready for the segment: a parsed file's record encoded and its skeleton
/// made, its symbols dropped.
enum Ready {
    Reused(FileRecord),
    Fresh(FileRecord, Result<EncodedRecord, String>, Option<FileSkeleton>),
    Skipped(SkippedFile),
}

/// The most files one parse job takes (a job makes its own tree-sitter parser).
const PARSE_JOB_FILES: usize = 4;

enum Outcome {
    Reused(FileRecord),
    Parsed(FileRecord, FileSymbols),
    Skipped(SkippedFile),
    /// The parse stopped at the memory cap's bound: tried again alone.
    OverCap(SkippedFile),
}

/// How a file's parse is bounded by the resident set under a cap of `cap` MiB (stopped at
/// [`ParseBudget::resident_bound_mib`]).
#[derive(Clone, Copy)]
enum MemoryBound {
    None,
    /// Stopped at the bound, the file is tried again alone.
    First {
        cap: u64,
    },
    /// Stopped at the bound alone, the file is indexed as text.
    Last {
        cap: u64,
    },
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
            limit: None,
            after_checkpoints: false,
            lexical_merge: LexicalMerge::Policy,
        })
    }

    /// The same build with another configuration, trusting `trusted`, reading only the first
    /// `limit` candidates.
    fn stage<'c>(
        &self,
        config: &'c IndexConfig,
        trusted: Option<u64>,
        limit: Option<usize>,
    ) -> IndexBuilder<'c>
    where
        'a: 'c,
    {
        IndexBuilder {
            root: self.root.clone(),
            config,
            observer: self.observer,
            embedder: self.embedder.clone(),
            trusted,
            limit,
            after_checkpoints: false,
            lexical_merge: LexicalMerge::Policy,
        }
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
        let built = self
            .checkpoints(registry, &index_dir, &store, &lock)
            .and_then(|checkpoints| match checkpoints {
                None => self.build_locked(t0, registry, index_dir, &store, &lock),
                // The rest of the first build, from the last checkpoint (never `--full` again).
                Some(done) => {
                    let config = IndexConfig {
                        full: false,
                        ..self.config.clone()
                    };
                    let mut rest = self.stage(&config, Some(done.generation), None);
                    rest.after_checkpoints = true;
                    let mut report = rest.build_locked(t0, registry, index_dir, &store, &lock)?;
                    // The report tells the whole build: what its checkpoints read counts as
                    // parsed, not as reused (the manifest keeps this generation's own counts).
                    let stats = &mut report.manifest.stats;
                    stats.parsed += done.parsed;
                    stats.reused = stats.reused.saturating_sub(done.parsed);
                    stats.full |= done.full;
                    Ok(report)
                }
            });
        if built.is_err() {
            store.clear_interrupted();
        }
        built
    }

    /// A first build of a big tree commits checkpoints as it goes: a first-stage generation
    /// (symbols and the lexical part) for each eighth of the tree's bytes, in path order,
    /// each reusing the one before, the last covering the whole tree. A build killed on the
    /// way resumes from the last one (its files are reused by their stamps); queries answer
    /// from it meanwhile, their coverage counting the files not read yet (`pending`). Only
    /// while no complete generation is committed: a rebuild never replaces one with part of
    /// the tree. What the checkpoints did, if any was committed.
    fn checkpoints(
        &self,
        registry: &'static LanguageRegistry,
        index_dir: &Path,
        store: &IndexStore,
        lock: &super::index_store::BuildLock,
    ) -> Result<Option<Checkpoints>, IndexError> {
        let Some(min_bytes) = self.config.checkpoint_min_bytes else {
            return Ok(None);
        };
        if self.config.first_stage || self.limit.is_some() {
            return Ok(None);
        }
        // A damaged `CURRENT` or manifest is the build's to report and repair, not this.
        let committed = store
            .current()
            .ok()
            .flatten()
            .and_then(|g| store.read_manifest(g).ok());
        if committed
            .as_ref()
            .is_some_and(|m| m.stats.pending == 0 && m.stats.deferred.is_empty())
        {
            return Ok(None);
        }
        let sizes: Vec<u64> = self
            .walk(registry, index_dir)
            .candidates
            .iter()
            .map(|c| c.size)
            .collect();
        let total: u64 = sizes.iter().sum();
        if total < min_bytes {
            return Ok(None);
        }
        // Files a checkpoint already committed (`--full` reads them again).
        let done = match self.config.full {
            true => 0,
            false => committed.as_ref().map_or(0, |m| {
                (m.summary.files + m.summary.skipped_by_reason.values().sum::<u64>()) as usize
            }),
        };
        let mut last: Option<Checkpoints> = None;
        // A build killed between the last checkpoint and its merge step merges first.
        let mut unmerged = !self.config.full && committed.as_ref().is_some_and(lexical_unmerged);
        for (k, end) in checkpoint_ends(&sizes, CHECKPOINTS).into_iter().enumerate() {
            if end <= done {
                continue;
            }
            tracing::info!(
                "checkpoint {}/{CHECKPOINTS}: the first {end} of {} files",
                k + 1,
                sizes.len()
            );
            let config = IndexConfig {
                first_stage: true,
                full: self.config.full && last.is_none(),
                ..self.config.clone()
            };
            let limit = (end < sizes.len()).then_some(end);
            let mut stage = self.stage(&config, last.as_ref().map(|c| c.generation), limit);
            stage.lexical_merge = LexicalMerge::Deferred;
            let report =
                stage.build_locked(Instant::now(), registry, index_dir.to_path_buf(), store, lock)?;
            unmerged = lexical_unmerged(&report.manifest);
            last = Some(Checkpoints::after(last.as_ref(), &report.manifest));
        }
        // The checkpoints' lexical segments merged into one, committed as a step of its own: a
        // build killed in the merge or after it does not read the last eighth of the tree
        // again (the merge is about a tenth of a first build).
        // Under a tight cap only: otherwise the whole tree's generation merges them beside
        // its graph and semantic parts (the step's own walk and commit, and most of the
        // merge's time, saved), and a build killed then merges again, reading nothing again.
        if unmerged && self.config.lexical && self.config.cap_is_tight() {
            tracing::info!("checkpoint: merging the lexical part's segments");
            let config = IndexConfig {
                first_stage: true,
                full: false,
                ..self.config.clone()
            };
            let mut stage = self.stage(&config, last.as_ref().map(|c| c.generation), None);
            stage.lexical_merge = LexicalMerge::Whole;
            let report =
                stage.build_locked(Instant::now(), registry, index_dir.to_path_buf(), store, lock)?;
            last = Some(Checkpoints::after(last.as_ref(), &report.manifest));
        }
        Ok(last)
    }

    /// The build as a list of phases: the previous generation, the walk, the parse, the
    /// segments, each part, and the commit.
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
        let (previous, repairs) = self.previous(store, &extractor)?;
        // Files are compared with this on the filesystem's clock, which may lag the system
        // clock by a tick: the earlier of the two is the safe choice.
        let build_started = lock.stamp_ns().map_or_else(now_ns, |s| s.min(now_ns()));
        let generation = next_generation(store, previous.as_ref());
        let gen_dir = store.begin(generation)?;
        let first = self.config.first_stage;
        // The history is read by git in a thread of its own while the tree is parsed.
        let history = (self.config.history && !first)
            .then(|| HistoryPartWriter::start(self.root.clone(), store, previous.as_ref()));
        let start = Instant::now();
        let mut clock = BuildClock::new(start);
        if self.after_checkpoints {
            // What the checkpoints before this stage held is theirs, not this walk's.
            clock.peak("checkpoints");
        }
        let mut walked = self.walk(registry, &index_dir);
        let pending = match self.limit {
            Some(n) if n < walked.candidates.len() => {
                let rest = walked.candidates.len() - n;
                walked.candidates.truncate(n);
                rest
            }
            _ => 0,
        };
        let t_walk = start.elapsed();
        clock.peak("walk");
        // A checkpoint leaves its segments to the merge step after the last one, which merges
        // them all; a generation of the whole tree built on unmerged checkpoints (whose merge
        // step did not run) merges them itself (left to the next commit, the merge would land
        // on a one-file update).
        let merge = match self.lexical_merge {
            LexicalMerge::Policy if pending > 0 => LexicalMerge::Deferred,
            LexicalMerge::Policy if previous.as_ref().is_some_and(|p| lexical_unmerged(&p.manifest)) => {
                LexicalMerge::Whole
            }
            m => m,
        };
        let lexical = match self.config.lexical {
            true => {
                let writer = self.open_lexical(store, previous.as_ref(), &gen_dir)?;
                // No merge of the policy's own may start on the way to a whole merge (a small
                // cap flushes segments while the tree is read, and a merge running at the
                // commit took segments the whole merge then did not find).
                Some(match merge {
                    LexicalMerge::Deferred => writer.without_merges(),
                    LexicalMerge::Whole => writer.merged_at_commit(),
                    LexicalMerge::Policy => writer,
                })
            }
            false => None,
        };
        let (outcomes, threads) =
            self.parse_all(&walked.candidates, previous.as_ref(), registry, lexical.as_ref())?;
        let t_parse = start.elapsed();
        clock.peak("parse");

        let _span = tracing::info_span!("index.write").entered();
        self.observer.phase("write", 0);
        clock.lap();
        let mut assembled = self.assemble(store, previous.as_ref(), outcomes, walked)?;
        clock.mark("assemble");
        let writing = PartsWriting {
            store,
            previous: previous.as_ref(),
            gen_dir: &gen_dir,
            first,
        };
        let parts = self.write_parts(&writing, &mut assembled, lexical, history, &mut clock)?;
        let (table, mut manifest) = self.manifest(generation, extractor, build_started, assembled, parts);
        manifest.stats.full = previous.is_none();
        manifest.stats.threads = threads;
        manifest.stats.walk_ms = t_walk.as_millis() as u64;
        manifest.stats.parse_ms = (t_parse - t_walk).as_millis() as u64;
        manifest.stats.write_ms = (start.elapsed() - t_parse).as_millis() as u64;
        manifest.stats.total_ms = t0.elapsed().as_millis() as u64;
        manifest.stats.pending = pending as u64;
        clock.into_stats(&mut manifest.stats);
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

    /// The previous generation, unless the build is full; its damage is logged (the build
    /// then starts from the source files).
    fn previous(
        &self,
        store: &IndexStore,
        extractor: &str,
    ) -> Result<(Option<PreviousGeneration>, Vec<Damage>), IndexError> {
        let (previous, repairs) = match self.config.full {
            true => (None, Vec::new()),
            false => load_previous(store, extractor, self.trusted)?,
        };
        for d in &repairs {
            tracing::warn!(
                "{} is damaged ({}): rebuilding the index from the source files",
                d.path,
                d.detail
            );
        }
        Ok((previous, repairs))
    }

    fn walk(&self, registry: &LanguageRegistry, index_dir: &Path) -> WalkOutcome {
        let _span = tracing::info_span!("index.walk").entered();
        self.observer.phase("walk", 0);
        let exclude = index_dir.canonicalize().ok();
        let w = RepoWalker::new(&self.root, &self.config.walk, registry, exclude)
            .with_threads(self.config.threads.min(MAX_THREADS))
            .walk();
        self.observer.finish_phase();
        w
    }

    /// Each part the configuration asks for, reused or written; a first-stage build writes
    /// only the lexical part.
    fn write_parts(
        &self,
        w: &PartsWriting<'_>,
        assembled: &mut AssembledGeneration,
        lexical: Option<LexicalWriter>,
        history: Option<HistoryPartWriter>,
        clock: &mut BuildClock,
    ) -> Result<GenerationParts, IndexError> {
        let mut parts = GenerationParts::default();
        let parsed = std::mem::take(&mut assembled.skeletons);
        let assembled = &*assembled;
        let derived = self.config.graph || self.config.vectors || history.is_some();
        // The whole tree's generation after a first build's checkpoints merges their lexical
        // segments (one thread, a tenth of the build) while the graph and semantic parts are
        // written; not under a tight cap, where the peaks would add up.
        let merge_beside = !w.first
            && derived
            && !self.config.cap_is_tight()
            && lexical.as_ref().is_some_and(LexicalWriter::merges_whole);
        match lexical {
            Some(writer) if merge_beside => {
                let (lexical, rest) = std::thread::scope(|s| {
                    let l = s.spawn(|| {
                        let t = Instant::now();
                        (self.commit_lexical(writer, assembled, w), t.elapsed())
                    });
                    let rest = self.write_derived(w, assembled, parsed, history, clock, &mut parts);
                    let l = l.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                    (l, rest)
                });
                parts.lexical = Some(lexical.0?);
                rest?;
                clock.record("lexical", lexical.1);
            }
            Some(writer) => {
                parts.lexical = Some(self.commit_lexical(writer, assembled, w)?);
                clock.mark("lexical");
                self.write_derived(w, assembled, parsed, history, clock, &mut parts)?;
            }
            None => self.write_derived(w, assembled, parsed, history, clock, &mut parts)?,
        }
        Ok(parts)
    }

    /// The parts made from the parse: the graph, the semantic part and the history.
    fn write_derived(
        &self,
        w: &PartsWriting<'_>,
        assembled: &AssembledGeneration,
        parsed: Vec<Option<FileSkeleton>>,
        history: Option<HistoryPartWriter>,
        clock: &mut BuildClock,
        parts: &mut GenerationParts,
    ) -> Result<(), IndexError> {
        let graph = self.config.graph && !w.first;
        let vectors = self.config.vectors && !w.first;
        let write_graph = |parsed| {
            let _span = tracing::info_span!("graph.resolve").entered();
            self.observer.phase("graph", 0);
            let writer = GraphPartWriter {
                store: w.store,
                previous: w.previous,
                gen_dir: w.gen_dir,
                cap_mib: self.config.max_memory_mib,
                bounded: self.config.cap_is_tight(),
            };
            writer.write(assembled, parsed)
        };
        // An update writes its graph and semantic parts side by side: each is mostly one
        // thread and waits on its own fsync. Any other build writes them one after the other,
        // so that their peaks do not add up: one that parsed many files, one whose previous
        // generation lacks either part (the end of a first build, after its checkpoints: it
        // parsed nothing but builds both parts whole), one under a tight cap.
        let updates =
            |p: &PreviousGeneration| p.manifest.parts.graph.is_some() && p.manifest.parts.vectors.is_some();
        let side_by_side = graph
            && vectors
            && w.previous.is_some_and(updates)
            && assembled.parsed <= SIDE_BY_SIDE_MAX_PARSED
            && assembled.removed_paths.len() as u64 <= SIDE_BY_SIDE_MAX_PARSED
            && !self.config.cap_is_tight();
        if side_by_side {
            let (g, v) = std::thread::scope(|s| {
                let g = s.spawn(|| {
                    let t = Instant::now();
                    (write_graph(parsed), t.elapsed())
                });
                let t = Instant::now();
                let v = (self.write_vectors(w, assembled), t.elapsed());
                let g = g.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (g, v)
            });
            parts.graph = Some(g.0?);
            parts.vectors = Some(v.0?);
            clock.record("graph", g.1);
            clock.record("vectors", v.1);
            clock.lap();
        } else {
            if graph {
                parts.graph = Some(write_graph(parsed)?);
                clock.mark("graph");
            }
            if vectors {
                parts.vectors = Some(self.write_vectors(w, assembled)?);
                clock.mark("vectors");
            }
        }
        if let Some(h) = history {
            let _span = tracing::info_span!("index.history").entered();
            parts.history = Some(h.write(w.store, w.gen_dir)?);
            clock.mark("history");
        }
        Ok(())
    }

    /// The lexical part: the removed files deleted, the writer committed.
    fn commit_lexical(
        &self,
        writer: LexicalWriter,
        assembled: &AssembledGeneration,
        w: &PartsWriting<'_>,
    ) -> Result<LexicalPartEntry, IndexError> {
        for f in &assembled.removed_paths {
            writer.remove_file(f);
        }
        let docs = writer.commit()?;
        // File sizes, which a reader checks on open (a stat each); the content is checked
        // by `ken index verify` and by the next build.
        let files = super::index_snapshot::lexical_file_sizes(&w.gen_dir.join(LEXICAL_DIR))?;
        Ok(LexicalPartEntry::new(docs, files))
    }

    /// The semantic part: the previous one when no file changed and the model is the same,
    /// else embedded where chunks changed.
    fn write_vectors(
        &self,
        w: &PartsWriting<'_>,
        assembled: &AssembledGeneration,
    ) -> Result<VectorPartEntry, IndexError> {
        let model_id = match self.embedder.as_deref() {
            Some(e) => e.id(),
            None => crate::vector::BUILTIN_MODEL_ID.to_string(),
        };
        let unchanged = assembled.parsed == 0 && assembled.removed_paths.is_empty();
        if unchanged
            && let Some(p) = w.previous
            && let Some(part) = &p.manifest.parts.vectors
            && let Some(reused) = super::vector_build::reuse_unchanged(
                part,
                &w.store.generation_dir(p.generation),
                w.gen_dir,
                &model_id,
            )?
        {
            return Ok(reused);
        }
        let _span = tracing::info_span!("vector.embed").entered();
        self.observer.phase("embed", 0);
        VectorBuild {
            store: w.store,
            root: &self.root,
            files: &assembled.table.files,
            segments: &assembled.segments,
            previous: previous_vectors(w.store, w.previous),
            gen_dir: w.gen_dir,
            embedder: self.embedder.as_deref(),
            bounded: self.config.cap_is_tight(),
        }
        .run()
    }

    /// The manifest of the new generation (the build's timings are added by the caller), and
    /// the file table it describes.
    fn manifest(
        &self,
        generation: u64,
        extractor: String,
        build_started: i64,
        assembled: AssembledGeneration,
        parts: GenerationParts,
    ) -> (FileTable, Manifest) {
        let AssembledGeneration {
            table,
            skeletons: _,
            segments,
            parsed,
            reused,
            compacted,
            removed_paths,
            js_aliases: _,
        } = assembled;
        let deferred: Vec<String> = [
            ("graph", self.config.graph),
            ("semantic", self.config.vectors),
            ("history", self.config.history),
        ]
        .into_iter()
        .filter(|(_, on)| *on && self.config.first_stage)
        .map(|(part, _)| part.to_string())
        .collect();
        let manifest = Manifest {
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
                full: false,
                parsed,
                reused,
                removed: removed_paths.len() as u64,
                compacted,
                threads: 0,
                walk_ms: 0,
                parse_ms: 0,
                write_ms: 0,
                total_ms: 0,
                phases_ms: BTreeMap::new(),
                phases_peak_mib: BTreeMap::new(),
                peak_mib: None,
                max_memory_mib: self.config.max_memory_mib,
                max_memory_from: self.config.max_memory_mib.map(|_| self.config.max_memory_from),
                deferred,
                pending: 0,
            },
            files_blake3: None,
            digest: None,
        };
        (table, manifest)
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
        previous: Option<&PreviousGeneration>,
        gen_dir: &Path,
    ) -> Result<LexicalWriter, IndexError> {
        let base = previous
            .filter(|p| p.manifest.parts.lexical.is_some())
            .map(|p| store.generation_dir(p.generation).join(LEXICAL_DIR));
        let threads = match self.config.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        // Under a cap the writer's heap takes at most a sixth of what the process's own
        // pages leave of it (the binary's code and tables: 27 MiB resident after a parse).
        let budget = self
            .config
            .max_memory_mib
            .map(|m| (m.saturating_sub(super::memory_cap::PROCESS_FLOOR_MIB) as usize) << 20)
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
        previous: Option<&PreviousGeneration>,
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
        // Under a tight cap, large files are parsed a few at a time (`ParseBudget`).
        let budget = match self.config.cap_is_tight() {
            true => self.config.max_memory_mib.map(ParseBudget::under_cap),
            false => None,
        };
        // The cap a large file's parse is bounded under: the budget's.
        let cap = self.config.max_memory_mib.filter(|_| budget.is_some());
        let outcomes: Vec<Ready> = pool.install(|| {
            candidates
                .par_iter()
                // Jobs of a few files: rayon splits a range only when a worker steals from
                // it, and a leaf of hundreds of large headers (numpy's highway) otherwise
                // kept one worker busy for seconds while the other had nothing to take.
                .with_max_len(PARSE_JOB_FILES)
                .map_init(FileParser::new, |parser, c| {
                    let mut permit = budget.as_ref().map(|b| b.admit(c.size));
                    let prev = previous.and_then(|p| p.table.find(c.path.as_str()).map(|r| (r, p)));
                    let bound = match cap {
                        Some(cap) if c.size >= SMALL_FILE_BYTES => MemoryBound::First { cap },
                        _ => MemoryBound::None,
                    };
                    let (mut out, mut bytes) = self.classify(c, prev, registry, parser, bound);
                    // Stopped at the cap's bound beside other parses: once more with the
                    // process to itself, and as text if even that reaches it.
                    if let (Outcome::OverCap(s), Some(b), Some(cap)) = (&out, &budget, cap) {
                        tracing::debug!(
                            "{}: {}; parsed again alone",
                            s.path,
                            s.detail.as_deref().unwrap_or("")
                        );
                        drop(permit.take());
                        permit = Some(b.admit_alone());
                        (out, bytes) = self.classify(c, prev, registry, parser, MemoryBound::Last { cap });
                    }
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
                    let ready = match out {
                        Outcome::Parsed(r, s) => {
                            let (enc, sk) = self.fresh(&s, &r);
                            Ready::Fresh(r, enc, sk)
                        }
                        Outcome::Reused(r) => Ready::Reused(r),
                        Outcome::Skipped(s) | Outcome::OverCap(s) => Ready::Skipped(s),
                    };
                    // Held until the file's lexical documents and skeleton are made.
                    drop(permit);
                    ready
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
        previous: Option<&PreviousGeneration>,
        outcomes: Vec<Ready>,
        walked: WalkOutcome,
    ) -> Result<AssembledGeneration, IndexError> {
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
        Ok(AssembledGeneration {
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

    /// The outcome for one file, and its bytes when it was parsed.
    fn classify(
        &self,
        c: &Candidate,
        prev: Option<(&FileRecord, &PreviousGeneration)>,
        registry: &LanguageRegistry,
        parser: &mut FileParser,
        bound: MemoryBound,
    ) -> (Outcome, Option<Vec<u8>>) {
        // A file indexed as text because its parse reached a cap's bound is parsed again:
        // this build's cap may leave it room.
        let prev = prev.filter(|(r, _)| {
            !r.diagnostics
                .iter()
                .any(|d| d.message.starts_with(crate::parse::OVER_CAP_DIAGNOSTIC))
        });
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
                let mut limits = self.config.walk.parse_limits();
                limits.max_resident_mib = match bound {
                    MemoryBound::None => None,
                    MemoryBound::First { cap } | MemoryBound::Last { cap } => {
                        Some(ParseBudget::resident_bound_mib(cap))
                    }
                };
                match (parser.parse_within(spec, &bytes, Some(&limits)), bound) {
                    (Ok(s), _) => (spec.name.clone(), s),
                    (Err(hit @ ParseLimitHit::Memory { .. }), MemoryBound::Last { cap }) => {
                        // Said by the diagnostic: after a first build's checkpoints, the
                        // generation of the whole tree parses such a file again.
                        tracing::debug!("{}: {hit}, parsed alone; indexed as text", c.path);
                        (spec.name.clone(), hit.over_cap_symbols(cap))
                    }
                    (Err(hit @ ParseLimitHit::Memory { .. }), _) => {
                        let s = skipped(c, SkipReason::ParseLimit, hit.to_string());
                        return (Outcome::OverCap(s), None);
                    }
                    (Err(hit), _) => return (skip(c, SkipReason::ParseLimit, hit.to_string()), None),
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
) -> Result<(Option<PreviousGeneration>, Vec<Damage>), IndexError> {
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
        Some(PreviousGeneration {
            generation,
            manifest,
            table,
        }),
        Vec::new(),
    ))
}

/// The next generation's number: after the previous one, and after any a killed build left.
fn next_generation(store: &IndexStore, previous: Option<&PreviousGeneration>) -> u64 {
    let (highest_gen, _) = store.highest_ids();
    previous.map_or(1, |p| p.generation + 1).max(highest_gen + 1)
}

/// The previous generation's semantic part, its chunk table checked and its row files mapped
/// (checked by the stamps or hashes of `load_previous`); an older or damaged part re-embeds.
fn previous_vectors(store: &IndexStore, previous: Option<&PreviousGeneration>) -> Option<PreviousVectors> {
    let p = previous?;
    let part = p.manifest.parts.vectors.as_ref()?;
    if part.version != VECTOR_VERSION {
        return None;
    }
    let map = store
        .map_part_hashed(p.generation, VECTORS_FILE, Some(&part.blake3))
        .ok()?;
    let table = ChunkTable::open_mapped(map).ok()?;
    let rows = Rows::open(store, p.generation, (&table).into(), |_| false).ok()?;
    Some(PreviousVectors {
        table,
        rows,
        gen_dir: store.generation_dir(p.generation),
    })
}

/// Where and how one build writes its parts.
struct PartsWriting<'a> {
    store: &'a IndexStore,
    previous: Option<&'a PreviousGeneration>,
    gen_dir: &'a Path,
    /// A first-stage build: only the lexical part.
    first: bool,
}

/// The candidate counts at which each of `parts` checkpoints ends: the first files (in
/// path order) holding `k/parts` of the bytes, the last one all of them.
fn checkpoint_ends(sizes: &[u64], parts: usize) -> Vec<usize> {
    let total: u64 = sizes.iter().sum();
    let mut ends = Vec::with_capacity(parts);
    let mut sum = 0u64;
    let mut k = 1;
    for (i, size) in sizes.iter().enumerate() {
        sum += size;
        while k < parts && sum * parts as u64 >= total * k as u64 {
            ends.push(i + 1);
            k += 1;
        }
    }
    ends.push(sizes.len());
    ends.dedup();
    ends
}

/// The build's phase times and the process's peak memory at the end of each phase.
struct BuildClock {
    lap: Instant,
    phases: BTreeMap<String, u64>,
    peaks: BTreeMap<String, u64>,
}

impl BuildClock {
    fn new(t0: Instant) -> BuildClock {
        BuildClock {
            lap: t0,
            phases: BTreeMap::new(),
            peaks: BTreeMap::new(),
        }
    }

    /// The process's peak so far at the end of `phase`: the phase where it rises is the one
    /// that raised it. (The kernel's mark is never reset: `time` and other outside tools read
    /// the same peak.)
    fn peak(&mut self, phase: &str) {
        if let Some(mib) = ResidentMemory::peak_mib() {
            self.peaks.insert(phase.to_string(), mib);
        }
    }

    /// Starts timing the next phase.
    fn lap(&mut self) {
        self.lap = Instant::now();
    }

    /// A phase timed apart (one that ran beside another), with the peak so far.
    fn record(&mut self, phase: &str, took: std::time::Duration) {
        self.phases.insert(phase.to_string(), took.as_millis() as u64);
        self.peak(phase);
    }

    /// Ends a timed phase.
    fn mark(&mut self, phase: &str) {
        self.phases
            .insert(phase.to_string(), self.lap.elapsed().as_millis() as u64);
        self.peak(phase);
        self.lap = Instant::now();
    }

    fn into_stats(self, stats: &mut BuildStats) {
        stats.phases_ms = self.phases;
        stats.peak_mib = self.peaks.values().copied().max();
        stats.phases_peak_mib = self.peaks;
    }
}

fn skip(c: &Candidate, reason: SkipReason, detail: String) -> Outcome {
    Outcome::Skipped(skipped(c, reason, detail))
}

fn skipped(c: &Candidate, reason: SkipReason, detail: String) -> SkippedFile {
    SkippedFile {
        path: c.path.to_string(),
        reason,
        detail: Some(detail),
    }
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

    /// The state a first build killed after its last checkpoint and before the merge step
    /// leaves (the whole tree read, its lexical part in one segment per checkpoint): the next
    /// build merges them beside its graph (under a tight cap, as a step of its own first),
    /// reading no file again.
    #[test]
    fn a_build_killed_before_the_merge_step_merges_first() {
        for cap in [None, Some(256)] {
            killed_before_the_merge_step(cap);
        }
    }

    fn killed_before_the_merge_step(cap: Option<u64>) {
        let repo = tempfile::tempdir().unwrap();
        for i in 0..30 {
            let dir = repo.path().join(format!("d{}", i % 5));
            std::fs::create_dir_all(&dir).unwrap();
            let text = format!("def f{i}(x):\n    return x + {i}\n");
            std::fs::write(dir.join(format!("m{i}.py")), text).unwrap();
        }
        let index = tempfile::tempdir().unwrap();
        let config = IndexConfig {
            index_dir: Some(index.path().join("idx")),
            checkpoint_min_bytes: Some(0),
            vectors: false,
            max_memory_mib: cap,
            max_memory_from: super::super::CapSource::Given,
            ..IndexConfig::default()
        };
        assert_eq!(config.cap_is_tight(), cap.is_some());
        let observer = super::super::NoProgress;
        let builder = IndexBuilder::new(repo.path(), &config, &observer).unwrap();
        let store = IndexStore::new(config.index_dir_for(repo.path()));
        store.prepare().unwrap();
        let registry = LanguageRegistry::builtin().unwrap();
        let first = IndexConfig {
            first_stage: true,
            ..config.clone()
        };
        let mut last = None;
        {
            let lock = store.lock().unwrap();
            store.claim_root(builder.root()).unwrap();
            for limit in [Some(15), None] {
                let mut stage = builder.stage(&first, last, limit);
                stage.lexical_merge = LexicalMerge::Deferred;
                let dir = store.dir().to_path_buf();
                let report = stage
                    .build_locked(Instant::now(), registry, dir, &store, &lock)
                    .unwrap();
                last = Some(report.manifest.generation);
                if limit.is_none() {
                    assert!(
                        lexical_unmerged(&report.manifest),
                        "{:?}",
                        report.manifest.parts.lexical
                    );
                }
            }
        }
        let done = builder.build().unwrap().manifest;
        match cap {
            // The merge step (generation 3), then the graph (4).
            Some(_) => {
                assert_eq!(done.generation, 4);
                let merged = store.read_manifest(3).unwrap();
                assert_eq!(merged.parts.lexical.as_ref().map(|l| l.segments()), Some(1));
                assert_eq!((merged.stats.parsed, merged.stats.pending), (0, 0));
            }
            // The merge beside the graph, in one generation.
            None => assert_eq!(done.generation, 3),
        }
        assert_eq!(done.stats.parsed, 0, "{cap:?}");
        assert_eq!(done.parts.lexical.as_ref().map(|l| l.segments()), Some(1));
        assert!(done.stats.deferred.is_empty() && done.parts.graph.is_some());
        assert_eq!(done.summary.files, 30);
    }

    #[test]
    fn lines_are_counted_with_or_without_final_newline() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"a\nb\n"), 2);
    }
}
