//! `GraphPartWriter`: the code graph part of a generation. Skeletons of unchanged files come
//! from the previous graph (or, without one, from their symbol records) and only what changed
//! is resolved again; when nothing changed, the previous part is this generation's.

use std::path::Path;
use std::time::Instant;

use super::assembled_generation::AssembledGeneration;
use super::generation_parts::{GraphPartEntry, ReferenceCounts};
use super::index_store::GRAPH_FILE;
use super::mapped_part::MappedPart;
use super::previous_generation::PreviousGeneration;
use super::{IndexError, IndexStore, Manifest};
use crate::graph::{CodeGraph, FileRest, FileSkeleton, GRAPH_VERSION, GraphDiff, GraphUpdate};

pub(super) struct GraphPartWriter<'a> {
    pub store: &'a IndexStore,
    pub previous: Option<&'a PreviousGeneration>,
    pub gen_dir: &'a Path,
    /// The build's memory cap in MiB, if any: an update whose previous graph would not fit
    /// decoded resolves every file as a first build does, streamed from the records.
    pub cap_mib: Option<u64>,
    /// Under a tight cap ([`super::IndexConfig::cap_is_tight`]): the graphs are freed before
    /// the next phase starts, not beside it.
    pub bounded: bool,
}

/// Bytes a decoded graph holds per byte of its stored part (skeletons, resolutions and the
/// tables made of them): 8.2x was measured on the 2.8M-line tree of `benches/scale_curve.sh`
/// with raw bodies, which is 12.2x of the part with its bodies' references compressed (59.4
/// MB then, 40.0 MB now).
const DECODED_PER_STORED: u64 = 12;

/// The bodies of a graph written as it is resolved, until its heads are known, and its
/// edges, until its symbol table is let go: beside the part, in the generation being built,
/// removed once the part is written.
const GRAPH_SPILL: &str = "graph.bodies.tmp";
const FLOW_SPILL: &str = "graph.flows.tmp";

impl GraphPartWriter<'_> {
    /// The previous part, reused, or a new one; `parsed` holds the skeleton of each file
    /// parsed by this build (`None`: unchanged), by file id (taken from the generation, so
    /// that the semantic part can be written beside the graph).
    pub fn write(
        &self,
        assembled: &AssembledGeneration,
        parsed: Vec<Option<FileSkeleton>>,
    ) -> Result<GraphPartEntry, IndexError> {
        let t0 = Instant::now();
        if let Some(part) = self.reuse(assembled, &parsed, t0)? {
            return Ok(part);
        }
        if let Some(part) = self.write_by_difference(assembled, &parsed, t0)? {
            return Ok(part);
        }
        if self.previous_too_big() {
            return self.write_resolved(assembled, parsed, t0);
        }
        // Decoded from the mapped part, every section checked; the bytes stay mapped so that
        // unchanged bodies are copied, not encoded again.
        let (prev_graph, prev_bytes) = self
            .previous
            .and_then(|p| load_graph(self.store, p.generation, &p.manifest))
            .map_or((None, None), |(g, b)| (Some(g), Some(b)));
        if prev_graph.is_none() {
            return self.write_resolved(assembled, parsed, t0);
        }
        let skeletons = self.skeletons(assembled, parsed, prev_graph.as_ref(), false)?;
        let prepare_ms = t0.elapsed().as_millis() as u64;
        let (graph, update) = CodeGraph::build(skeletons, assembled.js_aliases.clone(), prev_graph.as_ref());
        let t1 = Instant::now();
        let previous = prev_graph.as_ref().zip(prev_bytes.as_deref());
        // Written as encoded, a batch of bodies at a time; unchanged bodies are copied from the
        // previous part's mapped bytes.
        let (written, blake3) = self
            .store
            .write_part_streamed(self.gen_dir, GRAPH_FILE, |w| graph.write_stored(previous, w))?;
        let bytes = written.len;
        // Freeing a whole graph one allocation at a time takes as long as a fifth of an
        // incremental build: it goes on beside the rest of the build.
        self.free(prev_graph);
        let write_ms = t1.elapsed().as_millis() as u64;
        let references = reference_counts(&graph);
        let symbols = graph.symbol_count() as u64;
        self.free(graph);
        Ok(GraphPartEntry {
            version: GRAPH_VERSION,
            file: GRAPH_FILE.to_string(),
            blake3,
            aliases: aliases_digest(&assembled.js_aliases),
            bytes,
            symbols,
            update,
            references,
            prepare_ms,
            write_ms,
            total_ms: t0.elapsed().as_millis() as u64,
        })
    }

    /// The update made by difference where it can be (`GraphDiff`: every changed file kept its
    /// interface): the previous part read in place, only the changed files resolved, the
    /// other bodies copied as stored, the graph ranked again from the stored flows where
    /// edges changed. `None` for any other update.
    fn write_by_difference(
        &self,
        assembled: &AssembledGeneration,
        parsed: &[Option<FileSkeleton>],
        t0: Instant,
    ) -> Result<Option<GraphPartEntry>, IndexError> {
        let Some(p) = self.previous else { return Ok(None) };
        let Some(part) = p.manifest.parts.graph.as_ref().filter(|g| g.current()) else {
            return Ok(None);
        };
        let Ok(bytes) = self.store.map_part(p.generation, &part.file) else {
            return Ok(None);
        };
        let files: Vec<(&str, &str)> = assembled
            .table
            .files
            .iter()
            .map(|r| (r.path.as_str(), r.module.as_str()))
            .collect();
        // Damaged bytes decline too: the decoding path reports them and builds anew.
        let Ok(Some(diff)) = GraphDiff::prepare(&bytes, &files, parsed, &assembled.js_aliases) else {
            return Ok(None);
        };
        let prepare_ms = t0.elapsed().as_millis() as u64;
        let t1 = Instant::now();
        let (written, blake3) = self
            .store
            .write_part_streamed(self.gen_dir, GRAPH_FILE, |w| diff.write(w))?;
        let write_ms = t1.elapsed().as_millis() as u64;
        // The previous counts, less what the files resolved again counted before, plus now.
        let mut gone = ReferenceCounts::default();
        let mut now = ReferenceCounts::default();
        for (before, after) in diff.changes() {
            count_references(&mut gone, before);
            count_references(&mut now, after);
        }
        let was = &part.references;
        let mut references = ReferenceCounts {
            rules: (was.rules + now.rules).saturating_sub(gone.rules),
            name_matched: (was.name_matched + now.name_matched).saturating_sub(gone.name_matched),
            external: (was.external + now.external).saturating_sub(gone.external),
            unresolved: (was.unresolved + now.unresolved).saturating_sub(gone.unresolved),
            ..ReferenceCounts::default()
        };
        references.total =
            references.rules + references.name_matched + references.external + references.unresolved;
        Ok(Some(GraphPartEntry {
            version: GRAPH_VERSION,
            file: GRAPH_FILE.to_string(),
            blake3,
            aliases: aliases_digest(&assembled.js_aliases),
            bytes: written.len,
            symbols: diff.symbols(),
            update: diff.update.clone(),
            references,
            prepare_ms,
            write_ms,
            total_ms: t0.elapsed().as_millis() as u64,
        }))
    }

    /// A graph with no previous one to reuse: every file resolved, the part written as it
    /// goes (`CodeGraph::write_resolved`), each batch's references read again from the
    /// records, so the build never holds every reference and resolution of the tree.
    fn write_resolved(
        &self,
        assembled: &AssembledGeneration,
        parsed: Vec<Option<FileSkeleton>>,
        t0: Instant,
    ) -> Result<GraphPartEntry, IndexError> {
        let heads = self.skeletons(assembled, parsed, None, true)?;
        let prepare_ms = t0.elapsed().as_millis() as u64;
        let t1 = Instant::now();
        let (store, files, segments) = (self.store, &assembled.table.files, &assembled.segments);
        let rest_of = |batch: &[usize]| -> std::io::Result<Vec<FileRest>> {
            store
                .map_records(segments, files, batch, |_, r| {
                    (FileSkeleton::refs_of(&r), FileSkeleton::bindings_of(&r))
                })
                .map_err(std::io::Error::other)
        };
        let mut references = ReferenceCounts::default();
        let spill_path = self.gen_dir.join(GRAPH_SPILL);
        let flow_path = self.gen_dir.join(FLOW_SPILL);
        let new_file = |path: &std::path::Path| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(IndexError::io(path))
        };
        let mut spill = new_file(&spill_path)?;
        let mut flow_spill = match new_file(&flow_path) {
            Ok(f) => f,
            Err(e) => {
                let _ = std::fs::remove_file(&spill_path);
                return Err(e);
            }
        };
        // Under a tight cap a batch is bounded by its references too: a few generated files
        // with tens of thousands each, side by side in path order, made a batch of their own.
        let refs: Vec<u64> = files.iter().map(|r| u64::from(r.references)).collect();
        let max_refs = match self.bounded {
            true => crate::graph::RESOLVE_REFS_TIGHT,
            false => u64::MAX,
        };
        let batches = crate::graph::resolve_batches(&refs, crate::graph::RESOLVE_BATCH, max_refs);
        let written = self.store.write_part_streamed(self.gen_dir, GRAPH_FILE, |w| {
            CodeGraph::write_resolved(
                heads,
                assembled.js_aliases.clone(),
                &batches,
                rest_of,
                |r| count_references(&mut references, r),
                &mut spill,
                &mut flow_spill,
                w,
            )
        });
        drop(spill);
        drop(flow_spill);
        // Gone whether or not the part was written (a failed build's folder goes too).
        let _ = std::fs::remove_file(&spill_path);
        let _ = std::fs::remove_file(&flow_path);
        let (done, blake3) = written?;
        references.total =
            references.rules + references.name_matched + references.external + references.unresolved;
        let write_ms =
            (t1.elapsed().as_millis() as u64).saturating_sub(done.update.resolve_ms + done.update.rank_ms);
        Ok(GraphPartEntry {
            version: GRAPH_VERSION,
            file: GRAPH_FILE.to_string(),
            blake3,
            aliases: aliases_digest(&assembled.js_aliases),
            bytes: done.written.len,
            symbols: done.symbols,
            update: done.update,
            references,
            prepare_ms,
            write_ms,
            total_ms: t0.elapsed().as_millis() as u64,
        })
    }

    /// Every file's skeleton: the parsed files' from the parse, the others' from the previous
    /// graph or, where it has none, from their symbol records (their interface only when
    /// `heads` is asked for: `FileSkeleton::interface`).
    fn skeletons(
        &self,
        assembled: &AssembledGeneration,
        mut skeletons: Vec<Option<FileSkeleton>>,
        prev_graph: Option<&CodeGraph>,
        heads: bool,
    ) -> Result<Vec<FileSkeleton>, IndexError> {
        let files = &assembled.table.files;
        if heads {
            skeletons
                .iter_mut()
                .flatten()
                .for_each(FileSkeleton::keep_interface);
        }
        if let Some(g) = prev_graph {
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
        // Each record is made into its skeleton where it is decoded and dropped there: the
        // records of a whole tree are larger than the skeletons made from them.
        let made = self
            .store
            .map_records(&assembled.segments, files, &missing, |i, symbols| {
                let r = &files[i];
                match heads {
                    true => FileSkeleton::interface(r.path.clone(), &r.language, &r.module, &symbols),
                    false => FileSkeleton::new(r.path.clone(), &r.language, &r.module, &symbols),
                }
            })?;
        for (i, sk) in missing.into_iter().zip(made) {
            skeletons[i] = Some(sk);
        }
        Ok(skeletons.into_iter().flatten().collect())
    }

    /// Frees a graph beside the rest of the build, or now under a memory cap (on another
    /// thread the next phase's allocations would come on top of it).
    fn free<T: Send + 'static>(&self, value: T) {
        match self.bounded {
            true => drop(value),
            false => free_beside(value),
        }
    }

    /// Whether the previous graph, decoded, would take more than half the memory cap: the
    /// update then resolves every file from the records (slower: a first build's graph
    /// phase), and the cap holds.
    fn previous_too_big(&self) -> bool {
        let (Some(cap), Some(part)) = (
            self.cap_mib,
            self.previous.and_then(|p| p.manifest.parts.graph.as_ref()),
        ) else {
            return false;
        };
        let decoded = part.bytes.saturating_mul(DECODED_PER_STORED);
        let too_big = decoded > cap.saturating_mul(1 << 20) / 2;
        if too_big {
            let decoded_mib = decoded >> 20;
            tracing::debug!(
                decoded_mib,
                cap,
                "the previous graph is not decoded under the cap"
            );
        }
        too_big
    }

    /// When no file was parsed or removed and no module path moved, the previous graph is
    /// this generation's graph: it is hard-linked (or copied) instead of rebuilt.
    fn reuse(
        &self,
        assembled: &AssembledGeneration,
        parsed: &[Option<FileSkeleton>],
        t0: Instant,
    ) -> Result<Option<GraphPartEntry>, IndexError> {
        let Some(p) = self.previous else { return Ok(None) };
        let Some(part) = &p.manifest.parts.graph else {
            return Ok(None);
        };
        let unchanged = parsed.iter().all(Option::is_none)
            && part.aliases == aliases_digest(&assembled.js_aliases)
            && assembled.removed_paths.is_empty()
            && assembled.table.files.len() == p.table.files.len()
            && assembled
                .table
                .files
                .iter()
                .zip(&p.table.files)
                .all(|(a, b)| a.path == b.path && a.module == b.module);
        if !part.current() || !unchanged {
            return Ok(None);
        }
        let src = self.store.generation_dir(p.generation).join(&part.file);
        let dest = self.gen_dir.join(GRAPH_FILE);
        if std::fs::hard_link(&src, &dest).is_err() {
            std::fs::copy(&src, &dest).map_err(IndexError::io(&dest))?;
        }
        Ok(Some(GraphPartEntry {
            file: GRAPH_FILE.to_string(),
            update: GraphUpdate {
                files_copied: assembled.table.files.len() as u64,
                ..GraphUpdate::default()
            },
            prepare_ms: 0,
            write_ms: 0,
            total_ms: t0.elapsed().as_millis() as u64,
            ..part.clone()
        }))
    }
}

/// How the graph's references were resolved.
fn reference_counts(graph: &CodeGraph) -> ReferenceCounts {
    let mut c = ReferenceCounts::default();
    for r in &graph.resolved {
        count_references(&mut c, r);
    }
    c.total = c.rules + c.name_matched + c.external + c.unresolved;
    c
}

/// Adds one file's resolutions to `c` (its total is left to the caller).
fn count_references(c: &mut ReferenceCounts, file: &crate::graph::FileResolution) {
    for r in &file.refs {
        match r.provenance {
            Some(p) if p.is_resolved() => c.rules += 1,
            Some(_) => c.name_matched += 1,
            None if r.external => c.external += 1,
            None => c.unresolved += 1,
        }
    }
}

/// The graph of a committed generation, if it has one this ken can reuse.
pub(crate) fn load_graph(
    store: &IndexStore,
    generation: u64,
    manifest: &Manifest,
) -> Option<(CodeGraph, MappedPart)> {
    let part = manifest.parts.graph.as_ref().filter(|p| p.current())?;
    // Read in place; the decoder checks every section against its digest.
    let bytes = store.map_part(generation, &part.file).ok()?;
    let graph = CodeGraph::decode(&bytes)
        .ok()
        .filter(|g| g.version == GRAPH_VERSION)?;
    Some((graph, bytes))
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
pub(super) fn free_beside<T: Send + 'static>(value: T) {
    let keep = std::thread::Builder::new()
        .name("ken-free".into())
        .spawn(move || drop(value));
    if let Err(e) = keep {
        tracing::debug!("freeing on this thread: {e}");
    }
}
