//! `CodeGraph::write_resolved`: a graph built from nothing (no previous graph to reuse),
//! written as it is resolved. The symbol table is made from every file's interface
//! (`FileSkeleton::interface`: definitions, imports, the references that name a type's
//! bases, the bindings other files read); the other references and bindings, which only the
//! file's own resolution reads, are read a batch of files at a time, resolved, encoded into
//! their bodies (spilled to a file beside the part) and dropped. The edges the rank reads
//! (12 bytes each) are spilled too, until the table is let go. The build holds the table and
//! the body table, not every reference and resolution of the tree: on a 2.8M-line tree,
//! about 115 MB less at the peak of a first build.
//!
//! Invariant: the bytes are those `CodeGraph::build` then `CodeGraph::write_stored` give for
//! the same skeletons (tested here, and by the incremental property test, whose full builds
//! come this way).

use std::io::{Read, Seek, SeekFrom, Write};
use std::time::Instant;

use rayon::prelude::*;

use super::code_graph::NO_RESOLUTION;
use super::graph_layout::{BodyTable, body_digest, encode_body, write_heads_streamed};
use super::symbol_graph::RankFlows;
use super::{
    BindingNode, ClassBases, CodeGraph, FileResolution, FileSkeleton, GRAPH_VERSION, GraphUpdate,
    GraphWritten, RefNode, Resolver, SymbolTable,
};
use crate::symbols::FileId;

/// Files whose references are read, resolved and encoded at a time.
pub const RESOLVE_BATCH: usize = 512;
/// References a batch reads at most under a tight memory cap (a file with more is a batch
/// of its own): by files alone, one batch of generated C++ headers (numpy's SIMD headers,
/// next to each other in path order) raised a capped first build's peak by 20 to 40 MiB;
/// 4,096 rather than 16,384 took 3 MiB more off a 128 MiB cap's peak (145 to 142).
pub const RESOLVE_REFS_TIGHT: u64 = 4_096;

/// The files, each with its number of references `refs`, in batches of at most `max_files`
/// and of at most `max_refs` references (a file with more is a batch of its own); in order,
/// each file once.
pub fn resolve_batches(refs: &[u64], max_files: usize, max_refs: u64) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut held) = (0, 0u64);
    for (i, &r) in refs.iter().enumerate() {
        if i > start && (i - start >= max_files.max(1) || held + r > max_refs) {
            out.push(start..i);
            (start, held) = (i, 0);
        }
        held += r;
    }
    if start < refs.len() {
        out.push(start..refs.len());
    }
    out
}

/// A file's references and bindings, read with its batch.
pub type FileRest = (Vec<RefNode>, Vec<BindingNode>);

/// What [`CodeGraph::write_resolved`] did.
#[derive(Debug, Clone)]
pub struct ResolvedWrite {
    pub written: GraphWritten,
    pub update: GraphUpdate,
    pub symbols: u64,
}

impl CodeGraph {
    /// Resolves every file and writes the stored graph to `w` (an empty file). `files` are
    /// the skeletons in file id order, cut down to their interface here; their other
    /// references and bindings come from `rest_of` (given the file ids, each one's as its
    /// skeleton has them), a batch of `batches` at a time. `tally` sees each file's
    /// resolution once; `spill` (empty) holds the bodies until the heads, which carry the
    /// rank, are known, and `flow_spill` (empty) the edges PageRank reads until the symbol
    /// table is let go.
    #[allow(clippy::too_many_arguments)]
    pub fn write_resolved<W: Write + Seek, S: Read + Write + Seek, F: Read + Write + Seek>(
        mut files: Vec<FileSkeleton>,
        js_aliases: Vec<(String, String)>,
        batches: &[std::ops::Range<usize>],
        mut rest_of: impl FnMut(&[usize]) -> std::io::Result<Vec<FileRest>>,
        mut tally: impl FnMut(&FileResolution),
        spill: &mut S,
        flow_spill: &mut F,
        w: &mut W,
    ) -> std::io::Result<ResolvedWrite> {
        let t0 = Instant::now();
        for f in &mut files {
            f.keep_interface();
        }
        let table = SymbolTable::new(&files, &js_aliases);
        let bases = ClassBases::made(&table);
        let mut rank = RankFlows::new(&files);
        let mut bodies = BodyTable::new(files.len());
        let mut update = GraphUpdate {
            full: true,
            ..GraphUpdate::default()
        };
        let ids: Vec<usize> = (0..files.len()).collect();
        let covered = batches
            .iter()
            .try_fold(0, |at, b| (b.start == at && b.end >= at).then_some(b.end));
        if covered != Some(ids.len()) {
            return Err(std::io::Error::other(
                "batches that do not cover the files once in order",
            ));
        }
        for batch in batches.iter().map(|b| &ids[b.clone()]) {
            let rest = rest_of(batch)?;
            if rest.len() != batch.len() {
                return Err(std::io::Error::other(
                    "references read for another number of files",
                ));
            }
            type Done = (Option<FileResolution>, Vec<u8>, [u8; 8]);
            let done: Vec<Done> = batch
                .par_iter()
                .zip(rest.par_iter())
                .map(|(&i, (refs, bindings))| {
                    let res = Resolver::new(&table, &bases, FileId(i as u32)).map(|r| {
                        let (refs, imports, deps) = r.with_bindings(bindings).resolve_file_with(refs);
                        FileResolution { refs, imports, deps }
                    });
                    let no = &NO_RESOLUTION;
                    let body = encode_body(&files[i], refs, bindings, res.as_ref().unwrap_or(no))?;
                    let digest = body_digest(&body);
                    Ok((res, body, digest))
                })
                .collect::<std::io::Result<_>>()?;
            let mut out = Vec::with_capacity(done.iter().map(|d| d.1.len()).sum());
            for ((&i, (refs, _)), (res, body, digest)) in batch.iter().zip(&rest).zip(done) {
                if let Some(r) = &res {
                    update.files_resolved += 1;
                    update.refs_resolved += r.refs.len() as u64;
                }
                let res = res.as_ref().unwrap_or(&NO_RESOLUTION);
                tally(res);
                rank.add_file(i, &files[i], refs, res);
                bodies.push(body.len(), digest);
                out.extend_from_slice(&body);
            }
            spill.write_all(&out)?;
            rank.spill(flow_spill)?;
        }
        // What the resolution needed goes before the rank and the heads are made (about
        // 20 MiB of a capped build's peak on the 2.8M-line tree).
        drop(bases);
        drop(table);
        update.resolve_ms = t0.elapsed().as_millis() as u64;
        let t1 = Instant::now();
        flow_spill.flush()?;
        flow_spill.seek(SeekFrom::Start(0))?;
        let (rank, flows) = rank.finish_spilled(flow_spill)?;
        update.rank_ms = t1.elapsed().as_millis() as u64;
        let symbols = files.iter().map(|f| f.defs.len() as u64).sum();
        let start = w.stream_position()?;
        write_heads_streamed(w, GRAPH_VERSION, &files, &rank, &js_aliases)?;
        // The skeletons are not read again: gone before the bodies are copied.
        drop(rank);
        drop(files);
        bodies.write(w)?;
        spill.flush()?;
        spill.seek(SeekFrom::Start(0))?;
        std::io::copy(spill, w)?;
        w.write_all(&flows.encode()?)?;
        let end = w.stream_position()?;
        Ok(ResolvedWrite {
            written: GraphWritten {
                len: end - start,
                kept: 0,
            },
            update,
            symbols,
        })
    }
}

/// Drops a skeleton's references but those naming a type's bases (which the table's bases
/// are resolved from, over every file, before any file is).
pub fn keep_base_refs(f: &mut FileSkeleton) {
    // `is_base_ref` reads the definitions only: the references are moved out, not cloned.
    let refs = std::mem::take(&mut f.refs);
    f.refs = refs.into_iter().filter(|r| Resolver::is_base_ref(f, r)).collect();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{EdgeKind, SymbolGraph};
    use crate::lang::LanguageRegistry;
    use crate::parse::FileParser;
    use crate::symbols::RepoPath;

    /// More files than two batches: a base class, subclasses calling each other across files.
    fn skeletons(n: usize) -> Vec<FileSkeleton> {
        let registry = LanguageRegistry::builtin().unwrap();
        let python = registry.by_name("python").unwrap();
        let mut parser = FileParser::new();
        let mut out = Vec::new();
        let mut add = |module: &str, text: &str| {
            let symbols = parser.parse(python, text.as_bytes());
            let path = RepoPath::parse(&format!("{}.py", module.replace('.', "/"))).unwrap();
            out.push(FileSkeleton::new(path, "python", module, &symbols));
        };
        add(
            "pkg.base",
            "class Base:\n    def helper(self):\n        return 1\n\n    def fresh(self) -> Base:\n        return Base()\n",
        );
        // A type whose attribute is typed through a local of the method that assigns it,
        // read from the last file (another batch): `h.part.helper()`, where `helper` alone
        // names two methods. `other`'s local is what no other file reads.
        add(
            "pkg.attrs",
            "from pkg.base import Base\n\nclass Holder:\n    def __init__(self):\n        s = Base()\n        self.part = s.fresh()\n\nclass Other:\n    def helper(self):\n        return 2\n\ndef other():\n    t = Base()\n    return t\n",
        );
        for i in 1..n {
            let text = format!(
                "from pkg.base import Base\nfrom pkg.m{prev} import f{prev}\n\nclass C{i}(Base):\n    def run(self):\n        return self.helper() + f{prev}()\n\ndef f{i}():\n    return C{i}().run()\n",
                prev = i.saturating_sub(1).max(1),
            );
            add(&format!("pkg.m{i}"), &text);
        }
        add(
            "pkg.user",
            "from pkg.attrs import Holder\n\ndef use():\n    h = Holder()\n    return h.part.helper()\n",
        );
        out
    }

    #[test]
    fn a_graph_written_as_it_is_resolved_is_the_graph_built_whole_to_the_byte() {
        let files = skeletons(2 * RESOLVE_BATCH + 7);
        let aliases = vec![("@pkg/x".to_string(), "pkg/x".to_string())];
        let (graph, whole_update) = CodeGraph::build(files.clone(), aliases.clone(), None);
        let sg = SymbolGraph::new(&graph);
        assert!(
            sg.graph.edge_weights().any(|e| e.kind == EdgeKind::Inherits),
            "the fixture has resolved bases"
        );
        assert!(
            sg.graph
                .edge_weights()
                .any(|e| e.kind == EdgeKind::Calls && e.file.index() > RESOLVE_BATCH)
        );
        let whole = graph.encode().unwrap();
        // The attribute's type is found through bindings another file holds: those of its
        // scope are in that file's interface, the others are not.
        let user = files.len() - 1;
        let helper = files[user].refs.iter().position(|r| r.name == "helper").unwrap();
        let res = &graph.resolved[user].refs[helper];
        assert!(
            res.targets.len() == 1 && res.targets[0].file == FileId(0),
            "h.part.helper() resolved through Holder's attribute: {res:?}"
        );
        let attrs = &files[1];
        let kept = attrs.interface_bindings();
        assert!(kept.iter().any(|b| b.name == "s") && kept.iter().any(|b| b.name == "self.part"));
        assert!(!kept.iter().any(|b| b.name == "t") && attrs.bindings.iter().any(|b| b.name == "t"));

        // By files alone (3 batches), and by references too (a tight cap: many more).
        let refs: Vec<u64> = files.iter().map(|f| f.refs.len() as u64).collect();
        for limit in [u64::MAX, 40] {
            let batches = resolve_batches(&refs, RESOLVE_BATCH, limit);
            assert_eq!(
                batches.len() == 3,
                limit == u64::MAX,
                "{limit}: {} batches",
                batches.len()
            );
            let (mut spill, mut out) = (std::io::Cursor::new(Vec::new()), std::io::Cursor::new(Vec::new()));
            let mut flow_spill = std::io::Cursor::new(Vec::new());
            let mut tallied = 0;
            let mut asked = 0;
            let done = CodeGraph::write_resolved(
                files.clone(),
                aliases.clone(),
                &batches,
                |batch| {
                    asked += 1;
                    Ok(batch
                        .iter()
                        .map(|&i| (files[i].refs.clone(), files[i].bindings.clone()))
                        .collect())
                },
                |r| tallied += r.refs.len(),
                &mut spill,
                &mut flow_spill,
                &mut out,
            )
            .unwrap();
            assert_eq!(out.into_inner(), whole, "at most {limit} references a batch");
            assert_eq!(asked, batches.len(), "references read a batch at a time");
            assert_eq!(
                tallied,
                graph.resolved.iter().map(|r| r.refs.len()).sum::<usize>()
            );
            assert_eq!(done.update.files_resolved, whole_update.files_resolved);
            assert_eq!(done.update.refs_resolved, whole_update.refs_resolved);
            assert_eq!(done.symbols, graph.symbol_count() as u64);
            assert_eq!(done.written.len, whole.len() as u64);
        }
    }

    #[test]
    fn batches_hold_their_bounds_and_cover_every_file_once_in_order() {
        let refs = [5, 0, 30, 2, 2, 100, 1, 1, 1, 1];
        let b = resolve_batches(&refs, 3, 10);
        assert_eq!(b, vec![0..2, 2..3, 3..5, 5..6, 6..9, 9..10]);
        for r in &b {
            let held: u64 = refs[r.clone()].iter().sum();
            assert!(r.len() <= 3 && (held <= 10 || r.len() == 1), "{r:?}");
        }
        assert_eq!(resolve_batches(&[0; 7], 3, 0), vec![0..3, 3..6, 6..7]);
        assert!(resolve_batches(&[], 3, 10).is_empty());
    }

    #[test]
    fn batches_that_miss_a_file_are_an_error() {
        let files = skeletons(4);
        let (mut spill, mut out) = (std::io::Cursor::new(Vec::new()), std::io::Cursor::new(Vec::new()));
        let mut flow_spill = std::io::Cursor::new(Vec::new());
        let r = CodeGraph::write_resolved(
            files.clone(),
            Vec::new(),
            &[0..2, 3..4],
            |b| {
                Ok(b.iter()
                    .map(|&i| (files[i].refs.clone(), files[i].bindings.clone()))
                    .collect())
            },
            |_| {},
            &mut spill,
            &mut flow_spill,
            &mut out,
        );
        assert!(r.is_err());
    }

    #[test]
    fn references_read_for_another_number_of_files_are_an_error() {
        let files = skeletons(3);
        let (mut spill, mut out) = (std::io::Cursor::new(Vec::new()), std::io::Cursor::new(Vec::new()));
        let mut flow_spill = std::io::Cursor::new(Vec::new());
        let r = CodeGraph::write_resolved(
            files,
            Vec::new(),
            &resolve_batches(&[0; 3], RESOLVE_BATCH, u64::MAX),
            |_| Ok(Vec::new()),
            |_| {},
            &mut spill,
            &mut flow_spill,
            &mut out,
        );
        assert!(r.is_err());
    }
}
