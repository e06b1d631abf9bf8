//! `GraphDiff`: an update of a stored graph made by difference, for the common edit: every
//! changed file kept what other files can see of it (an edit inside a body, a call added, a
//! line inserted, a comment).
//!
//! The previous part stays mapped bytes. Its heads are decoded, and of each body only its head
//! (imports, bindings, the references naming bases, what its resolution read), which is what
//! the symbol table and the class bases are made from; the references and resolutions of the
//! files that did not change are never decoded: their bodies are copied as stored. Only the
//! changed files are resolved again. Where their edges are the same the ranks are kept;
//! otherwise their flows replace theirs in the part's flows section and the whole graph is
//! ranked again from it (tens of milliseconds), exact either way.
//!
//! Any other update (a file added, removed or renamed, a definition or import changed, other
//! aliases) is declined before anything is written, and the caller decodes the
//! previous graph (`CodeGraph::build`). A changed file whose lines only moved keeps its
//! resolution, and when every changed file is such a one no symbol table is made at all.
//! Invariant: where an update is made here, its bytes are those that path writes, and the graph
//! equals a full rebuild's (`tests/graph_incremental.rs`, whose edits include lines inserted).

use std::io::{Seek, Write};

use rayon::prelude::*;

use super::code_graph::{NO_RESOLUTION, same_interface, same_rank_inputs};
use super::graph_layout::{
    Body, BodyInterface, BodyTable, Flows, FrameAt, GraphDecodeError, GraphWritten, Head, HeadWire, HeadsAt,
    encode_body, encode_head, write_head,
};
use super::{
    ClassBases, FileResolution, FileSkeleton, GRAPH_VERSION, GraphUpdate, RankFlows, Resolver, SymbolTable,
    keep_base_refs,
};
use crate::symbols::FileId;

/// A changed file, resolved again: its skeleton in full, and its resolution before and now.
struct Fresh {
    file: usize,
    skeleton: FileSkeleton,
    before: FileResolution,
    now: FileResolution,
}

impl Fresh {
    /// A file whose lines only moved: its resolution now is the one before.
    fn kept(c: Changed) -> Fresh {
        Fresh {
            file: c.file,
            skeleton: c.new,
            now: c.before.clone(),
            before: c.before,
        }
    }
}

/// The flows with the changed files' replaced, and the ranks they give.
type Ranked = (Flows, Vec<Vec<f32>>);

/// An update made by difference, ready to write.
pub struct GraphDiff<'a> {
    previous: &'a [u8],
    frame: FrameAt,
    /// The files' count, and their definitions'.
    files: usize,
    symbols: u64,
    /// The previous heads section and where its parts lie: unchanged heads, the rank and the
    /// aliases are copied from it.
    section: &'a [u8],
    heads: HeadsAt<'a>,
    fresh: Vec<Fresh>,
    /// Where the changed files changed edges: the flows with theirs replaced, and the ranks.
    ranked: Option<Ranked>,
    pub update: GraphUpdate,
}

impl<'a> GraphDiff<'a> {
    /// The update of the graph stored in `previous` for a tree whose files are `files` (path
    /// and module, in file id order), where `parsed` holds the new skeleton of each file
    /// parsed again (`None`: unchanged). `Ok(None)` where the update is not one made by
    /// difference; an error where the previous bytes are damaged.
    pub fn prepare(
        previous: &'a [u8],
        files: &[(&str, &str)],
        parsed: &[Option<FileSkeleton>],
        js_aliases: &[(String, String)],
    ) -> Result<Option<GraphDiff<'a>>, GraphDecodeError> {
        let t0 = std::time::Instant::now();
        let frame = FrameAt::parse(previous)?;
        let n = files.len();
        if frame.version != GRAPH_VERSION || frame.files != n || parsed.len() != n {
            return Ok(None);
        }
        // Read in place: a head's definitions are decoded only where a file changed, or where
        // the symbol table is made (not when every changed file's lines only moved).
        let section = frame.heads(previous)?;
        let heads = HeadsAt::index(section)?;
        if heads.files.len() != n
            || heads.js_aliases != js_aliases
            || heads.ranks != n
            || !in_place(&heads, files, parsed)
        {
            return Ok(None);
        }
        let Some(changed) = changed_files(&frame, previous, &heads, parsed)? else {
            return Ok(None);
        };
        let symbols = heads
            .files
            .iter()
            .map(HeadWire::def_count)
            .sum::<Result<usize, _>>()? as u64;
        let heads_ms = t0.elapsed().as_secs_f64() * 1000.0;
        let moved = changed.iter().all(|c| c.moved);
        let (fresh, ranked, rank_ms) = match moved {
            // Nothing a resolution reads changed: each keeps its resolution, no table is made.
            true => (changed.into_iter().map(Fresh::kept).collect(), None, 0),
            false => Self::resolve_again(&frame, previous, &heads, js_aliases, changed)?,
        };
        let resolve_ms = (t0.elapsed().as_millis() as u64).saturating_sub(rank_ms);
        tracing::debug!(heads_ms, resolve_ms, "graph update by difference");
        let (files_resolved, refs_resolved, files_moved) = match moved {
            true => (0, 0, fresh.len() as u64),
            false => (
                fresh.len() as u64,
                fresh.iter().map(|f| f.now.refs.len() as u64).sum(),
                0,
            ),
        };
        let update = GraphUpdate {
            full: false,
            files_resolved,
            refs_resolved,
            files_moved,
            files_copied: (n - fresh.len()) as u64,
            resolve_ms,
            rank_ms,
            rank_kept: ranked.is_none(),
        };
        Ok(Some(GraphDiff {
            previous,
            frame,
            files: n,
            symbols,
            section,
            heads,
            fresh,
            ranked,
            update,
        }))
    }

    /// The changed files resolved against the table of every file's heads and body
    /// interface, and, where their edges changed, the graph ranked again (with the time that
    /// took, in ms).
    fn resolve_again(
        frame: &FrameAt,
        previous: &[u8],
        heads: &HeadsAt<'_>,
        js_aliases: &[(String, String)],
        changed: Vec<Changed>,
    ) -> Result<(Vec<Fresh>, Option<Ranked>, u64), GraphDecodeError> {
        let n = heads.files.len();
        // The heads are one stream, what the table reads of the bodies one per file: decoded
        // side by side.
        let (all, body_heads) = rayon::join(
            || heads.decode_all(),
            || -> Result<Vec<BodyInterface>, GraphDecodeError> {
                (0..n)
                    .into_par_iter()
                    .map(|i| Ok(postcard::take_from_bytes::<BodyInterface>(frame.body(previous, i)?)?.0))
                    .collect()
            },
        );
        let skeletons = table_skeletons(all?, body_heads?, &changed);
        let (fresh, same_edges) = resolve(&skeletons, js_aliases, changed);
        let t1 = std::time::Instant::now();
        let ranked = match same_edges {
            true => None,
            false => Some(Self::rank_again(frame, previous, &skeletons, &fresh)?),
        };
        Ok((fresh, ranked, t1.elapsed().as_millis() as u64))
    }

    /// The stored flows with the changed files' replaced, and the ranks they give.
    fn rank_again(
        frame: &FrameAt,
        previous: &[u8],
        files: &[FileSkeleton],
        fresh: &[Fresh],
    ) -> Result<(Flows, Vec<Vec<f32>>), GraphDecodeError> {
        let stored = frame.flows(previous)?;
        if stored.starts.len() != files.len() + 1 {
            return Err(GraphDecodeError::Layout(
                "graph part flows: another number of files".into(),
            ));
        }
        let mut flows = RankFlows::new(files);
        let mut next = fresh.iter().peekable();
        for i in 0..files.len() {
            match next.next_if(|f| f.file == i) {
                Some(f) => flows.add_file(i, &f.skeleton, &f.skeleton.refs, &f.now),
                None => flows.add_stored(stored.of(i)),
            }
        }
        let (rank, flows) = flows.finish_with_flows();
        Ok((flows, rank))
    }

    /// The definitions of every file.
    pub fn symbols(&self) -> u64 {
        self.symbols
    }

    /// Each file resolved again: its resolution before and now.
    pub fn changes(&self) -> impl Iterator<Item = (&FileResolution, &FileResolution)> {
        self.fresh.iter().map(|f| (&f.before, &f.now))
    }

    /// The heads section: the previous one, with the changed files' heads encoded again.
    fn heads_bytes(&self) -> std::io::Result<Vec<u8>> {
        let copy = |r: &std::ops::Range<usize>| {
            self.section
                .get(r.clone())
                .ok_or_else(|| std::io::Error::other("a graph head lies outside its section"))
        };
        let mut out = Vec::with_capacity(self.section.len() + 4096);
        out.extend_from_slice(copy(&self.heads.count)?);
        let mut fresh = self.fresh.iter().peekable();
        for (i, at) in self.heads.each.iter().enumerate() {
            match fresh.next_if(|f| f.file == i) {
                Some(f) => out.extend_from_slice(&encode_head(&f.skeleton)?),
                None => out.extend_from_slice(copy(at)?),
            }
        }
        match &self.ranked {
            // The rank and the aliases close the section, as `encode_heads` lays them.
            Some((_, rank)) => out.extend_from_slice(
                &postcard::to_stdvec(&(rank, &self.heads.js_aliases)).map_err(std::io::Error::other)?,
            ),
            None => out.extend_from_slice(copy(&self.heads.tail)?),
        }
        Ok(out)
    }

    /// The previous part's bytes in `r` (a run of bodies found in it).
    fn run_bytes(&self, r: std::ops::Range<usize>) -> std::io::Result<&'a [u8]> {
        self.previous
            .get(r)
            .ok_or_else(|| std::io::Error::other("a kept graph body lies outside its part"))
    }

    /// Writes the updated part to `w` (an empty file): the heads, then every body, the
    /// unchanged ones copied from the previous bytes with their digests.
    pub fn write<W: Write + Seek>(&self, w: &mut W) -> std::io::Result<GraphWritten> {
        let n = self.files;
        let heads = self.heads_bytes()?;
        let start = w.stream_position()?;
        write_head(w, GRAPH_VERSION, &heads, n)?;
        drop(heads);
        let table_at = w.stream_position()?;
        w.write_all(&vec![0u8; BodyTable::len_for(n)])?;
        let mut table = BodyTable::new(n);
        let mut fresh = self.fresh.iter().peekable();
        let mut kept = 0;
        // Unchanged bodies lie back to back in the previous part: each run between two changed
        // files is written as one slice of the mapped bytes.
        let mut run: Option<std::ops::Range<usize>> = None;
        let stored = |i: usize| {
            self.frame
                .stored_body(self.previous, i)
                .map_err(|e| std::io::Error::other(e.to_string()))
        };
        for i in 0..n {
            match fresh.next_if(|f| f.file == i) {
                Some(f) => {
                    if let Some(r) = run.take() {
                        w.write_all(self.run_bytes(r)?)?;
                    }
                    let body = encode_body(&f.skeleton, &f.skeleton.refs, &f.skeleton.bindings, &f.now)?;
                    w.write_all(&body)?;
                    table.push(body.len(), super::graph_layout::body_digest(&body));
                }
                None => {
                    let (body, at, digest) = stored(i)?;
                    run = match run.take() {
                        Some(r) if r.end == at.start => Some(r.start..at.end),
                        Some(r) => {
                            w.write_all(self.run_bytes(r)?)?;
                            Some(at)
                        }
                        None => Some(at),
                    };
                    table.push(body.len(), digest);
                    kept += 1;
                }
            }
        }
        if let Some(r) = run {
            w.write_all(self.run_bytes(r)?)?;
        }
        match &self.ranked {
            Some((flows, _)) => w.write_all(&flows.encode()?)?,
            None => w.write_all(
                self.frame
                    .flows_bytes(self.previous)
                    .ok_or_else(|| std::io::Error::other("the graph part's flows are cut"))?,
            )?,
        }
        table.fill_in(w, table_at, start, kept)
    }
}

/// A changed file whose interface held: its id, its skeleton before and now, its
/// resolution before, and whether only its lines moved ([`only_moved`]).
struct Changed {
    file: usize,
    old: FileSkeleton,
    new: FileSkeleton,
    before: FileResolution,
    moved: bool,
}

/// Whether `new`, whose interface is `old`'s ([`same_interface`], checked by the caller), is
/// `old` with its lines moved and nothing else: the same references too, in the same order,
/// and any two elements that shared a line, or lay one before the other, still do. The resolver compares lines only within a
/// file (a binding before a reference, a base named on its class's line, a constant on an
/// import's line), so such a file resolves as it did, and no other file reads its lines.
fn only_moved(old: &FileSkeleton, new: &FileSkeleton) -> bool {
    let same_refs = old.refs.len() == new.refs.len()
        && old.refs.iter().zip(&new.refs).all(|(a, b)| {
            a.kind == b.kind
                && a.name == b.name
                && a.receiver == b.receiver
                && a.macro_call == b.macro_call
                && a.enclosing == b.enclosing
        });
    if !same_refs {
        return false;
    }
    // Every line each of them names, before and now, in the same order.
    fn lines(f: &FileSkeleton) -> impl Iterator<Item = u32> + '_ {
        let defs = f.defs.iter().flat_map(|d| [d.line, d.end_line]);
        let refs = f.refs.iter().map(|r| r.line);
        let imports = f.imports.iter().map(|i| i.line);
        let bindings = f.bindings.iter().map(|b| b.line);
        defs.chain(refs).chain(imports).chain(bindings)
    }
    let mut pairs: Vec<(u32, u32)> = lines(old).zip(lines(new)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    // Strictly increasing both ways: no two old lines merged, none split, none reordered.
    pairs.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1)
}

/// Whether every file is where it was, an unchanged one in the module it was in.
fn in_place(heads: &HeadsAt<'_>, files: &[(&str, &str)], parsed: &[Option<FileSkeleton>]) -> bool {
    heads
        .files
        .iter()
        .zip(files)
        .zip(parsed)
        .all(|((h, (path, module)), p)| {
            h.path.as_str() == *path
                && match p {
                    Some(sk) => sk.path.as_str() == *path && sk.module.as_str() == *module,
                    None => h.module.as_str() == *module,
                }
        })
}

/// The parsed files that changed, each with what it was; `None` if one changed its interface
/// (the update is then not made by difference).
fn changed_files(
    frame: &FrameAt,
    previous: &[u8],
    heads: &HeadsAt<'_>,
    parsed: &[Option<FileSkeleton>],
) -> Result<Option<Vec<Changed>>, GraphDecodeError> {
    let mut changed = Vec::new();
    for (i, sk) in parsed.iter().enumerate() {
        let (Some(sk), Some(h)) = (sk, heads.files.get(i)) else {
            continue;
        };
        let h = h.head()?;
        let body = Body::decode(frame.body(previous, i)?)?;
        let (refs, imports, bindings, before) = body.parts();
        let old = FileSkeleton {
            path: h.path,
            language: h.language,
            module: h.module,
            defs: h.defs,
            refs,
            imports,
            bindings,
        };
        if old == *sk {
            continue;
        }
        if !same_interface(&old, sk) {
            return Ok(None);
        }
        changed.push(Changed {
            file: i,
            moved: only_moved(&old, sk),
            old,
            new: sk.clone(),
            before,
        });
    }
    Ok(Some(changed))
}

/// What the symbol table is made from: every file's heads with the imports, bindings and
/// base references of its body, the changed files' as they are now.
fn table_skeletons(heads: Vec<Head>, bodies: Vec<BodyInterface>, changed: &[Changed]) -> Vec<FileSkeleton> {
    let mut skeletons: Vec<FileSkeleton> = heads
        .into_iter()
        .zip(bodies)
        .map(|(h, b)| FileSkeleton {
            path: h.path,
            language: h.language,
            module: h.module,
            defs: h.defs,
            refs: b.base_refs,
            imports: b.imports,
            bindings: b.bindings,
        })
        .collect();
    for c in changed {
        let mut light = c.new.clone();
        keep_base_refs(&mut light);
        skeletons[c.file] = light;
    }
    skeletons
}

/// The changed files resolved against the table of `skeletons`, and whether they give
/// PageRank the edges they gave before.
fn resolve(
    skeletons: &[FileSkeleton],
    js_aliases: &[(String, String)],
    changed: Vec<Changed>,
) -> (Vec<Fresh>, bool) {
    let t0 = std::time::Instant::now();
    let table = SymbolTable::new(skeletons, js_aliases);
    tracing::debug!(
        table_ms = t0.elapsed().as_secs_f64() * 1000.0,
        "graph update: the symbol table"
    );
    // A few files resolved: only the class bases they ask for are made.
    let bases = ClassBases::lazy(&table);
    let resolved: Vec<FileResolution> = changed
        .par_iter()
        .map(|c| match Resolver::new(&table, &bases, FileId(c.file as u32)) {
            Some(r) => {
                let (refs, imports, deps) = r.resolve_file_with(&c.new.refs);
                FileResolution { refs, imports, deps }
            }
            None => NO_RESOLUTION.clone(),
        })
        .collect();
    let mut same_edges = true;
    let fresh = changed
        .into_iter()
        .zip(resolved)
        .map(|(c, now)| {
            same_edges &= same_rank_inputs(&c.old, &c.before, &c.new, &now);
            Fresh {
                file: c.file,
                skeleton: c.new,
                before: c.before,
                now,
            }
        })
        .collect();
    (fresh, same_edges)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::CodeGraph;
    use crate::lang::LanguageRegistry;
    use crate::parse::FileParser;
    use crate::symbols::RepoPath;

    fn skeleton(path: &str, module: &str, text: &str) -> FileSkeleton {
        let registry = LanguageRegistry::builtin().unwrap();
        let mut parser = FileParser::new();
        let symbols = parser.parse(registry.by_name("python").unwrap(), text.as_bytes());
        FileSkeleton::new(RepoPath::parse(path).unwrap(), "python", module, &symbols)
    }

    fn tree(core: &str) -> Vec<FileSkeleton> {
        vec![
            skeleton(
                "pkg/base.py",
                "pkg.base",
                "class Base:\n    def helper(self):\n        return 1\n",
            ),
            skeleton("pkg/core.py", "pkg.core", core),
            skeleton(
                "pkg/user.py",
                "pkg.user",
                "from pkg.core import Engine\n\ndef use():\n    return Engine().run()\n",
            ),
        ]
    }

    const CORE: &str = "from pkg.base import Base\n\nclass Engine(Base):\n    def run(self):\n        return self.helper()\n";

    fn stored(files: Vec<FileSkeleton>) -> Vec<u8> {
        let (g, _) = CodeGraph::build(files, Vec::new(), None);
        g.encode().unwrap()
    }

    fn diffed(previous: &[u8], files: &[FileSkeleton], changed: usize) -> Option<Vec<u8>> {
        diffed_with(previous, files, changed).map(|(bytes, _)| bytes)
    }

    fn diffed_with(
        previous: &[u8],
        files: &[FileSkeleton],
        changed: usize,
    ) -> Option<(Vec<u8>, GraphUpdate)> {
        let names: Vec<(&str, &str)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.module.as_str()))
            .collect();
        let parsed: Vec<Option<FileSkeleton>> = (0..files.len())
            .map(|i| (i == changed).then(|| files[i].clone()))
            .collect();
        let diff = GraphDiff::prepare(previous, &names, &parsed, &[]).unwrap()?;
        let mut out = std::io::Cursor::new(Vec::new());
        diff.write(&mut out).unwrap();
        Some((out.into_inner(), diff.update.clone()))
    }

    #[test]
    fn a_body_edit_and_a_line_inserted_are_written_as_a_full_update_writes_them() {
        let before = stored(tree(CORE));
        for core in [
            CORE.replace("return self.helper()", "return self.helper()  # edited"),
            format!("# a line on top\n{CORE}"),
        ] {
            let files = tree(&core);
            let prev = CodeGraph::decode(&before).unwrap();
            let (full, _) = CodeGraph::build(files.clone(), Vec::new(), Some(&prev));
            let want = full.encode_reusing(Some((&prev, &before))).unwrap();
            let (got, update) = diffed_with(&before, &files, 1).expect("made by difference");
            assert_eq!(got, want);
            assert_eq!(CodeGraph::decode(&got).unwrap().files[1].refs, files[1].refs);
            // Only lines moved (or nothing the graph reads changed): no table was made.
            assert_eq!(
                (update.files_resolved, update.refs_resolved),
                (0, 0),
                "{update:?}"
            );
        }
        let files = tree(&format!("# a line on top\n{CORE}"));
        let (_, update) = diffed_with(&before, &files, 1).expect("made by difference");
        assert_eq!(update.files_moved, 1);
    }

    /// Lines that moved apart from each other, or together, are not a move: the file is
    /// resolved against the table, to the bytes a full update writes.
    #[test]
    fn lines_joined_or_reordered_are_resolved_again() {
        const BOUND: &str =
            "from pkg.core import Engine\n\ndef use():\n    e = Engine()\n    return e.run()\n";
        let core = |user: &str| {
            let mut files = tree(CORE);
            files[2] = skeleton("pkg/user.py", "pkg.user", user);
            files
        };
        let before = stored(core(BOUND));
        for user in [
            // The binding and its use on one line.
            "from pkg.core import Engine\n\ndef use():\n    e = Engine(); return e.run()\n",
            // The use above the binding.
            "from pkg.core import Engine\n\ndef use():\n    e = Engine()\n    return e.run()\n"
                .replace(
                    "    e = Engine()\n    return e.run()\n",
                    "    return e.run()\n    e = Engine()\n",
                )
                .as_str(),
        ] {
            let files = core(user);
            let prev = CodeGraph::decode(&before).unwrap();
            let (full, _) = CodeGraph::build(files.clone(), Vec::new(), Some(&prev));
            let want = full.encode_reusing(Some((&prev, &before))).unwrap();
            let (got, update) = diffed_with(&before, &files, 2).expect("made by difference");
            assert_eq!(got, want, "{user}");
            assert_eq!(update.files_moved, 0, "{user}: {update:?}");
        }
    }

    #[test]
    fn an_interface_changed_is_declined_and_an_edge_changed_is_ranked_again() {
        let before = stored(tree(CORE));
        // A method added: other files can see it.
        let added = CORE.replace(
            "        return self.helper()\n",
            "        return self.helper()\n    def stop(self):\n        return 0\n",
        );
        assert!(diffed(&before, &tree(&added), 1).is_none());
        // A call added inside a body: the same interface, another edge, the graph ranked again
        // to the bytes a full update writes.
        let called = CORE.replace("return self.helper()", "return self.helper() + self.run()");
        let files = tree(&called);
        let prev = CodeGraph::decode(&before).unwrap();
        let (full, update) = CodeGraph::build(files.clone(), Vec::new(), Some(&prev));
        assert!(!update.rank_kept);
        let want = full.encode_reusing(Some((&prev, &before))).unwrap();
        let got = diffed(&before, &files, 1).expect("made by difference");
        assert_eq!(got, want);
        assert_ne!(CodeGraph::decode(&got).unwrap().rank, prev.rank);
    }
}
