//! `CodeGraph`: the stored graph part of an index generation — every file's skeleton, the
//! resolution of each of its references and imports, what each resolution read, and the
//! global centrality of each definition.
//!
//! Built incrementally: a file is resolved again only if it changed or if its recorded
//! dependencies (files read, names and modules looked up) touch a changed file; everything
//! else is copied from the previous graph with file ids remapped. The result equals a full
//! build (tested by property test in `tests/graph.rs`).

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{
    ClassBases, DepSet, Deps, FileSkeleton, ImportTarget, Resolution, Resolver, SymbolGraph, SymbolId,
    SymbolTable,
};
use crate::symbols::FileId;

/// Bumped when resolution rules or the stored layout change: the previous graph is then not
/// reused.
/// 11: a head's definitions behind a tag byte, packed with zstd when large.
pub const GRAPH_VERSION: u32 = 11;

/// Fewer than one file in this many resolved again: class bases are made as asked for.
const LAZY_BASES_RATIO: usize = 8;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileResolution {
    /// Aligned with the skeleton's `refs`.
    pub refs: Vec<Resolution>,
    /// Aligned with the skeleton's `imports`.
    pub imports: Vec<ImportTarget>,
    pub deps: Deps,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CodeGraph {
    pub version: u32,
    /// In `FileId` order (the index's file table order).
    pub files: Vec<FileSkeleton>,
    pub resolved: Vec<FileResolution>,
    /// PageRank of each definition, per file, summing to 1 over the repository.
    pub rank: Vec<Vec<f32>>,
    /// The bare JavaScript imports that name repository code it was resolved with.
    pub js_aliases: Vec<(String, String)>,
    /// Set when only the heads were decoded ([`CodeGraph::decode_heads`]): the bodies, as
    /// bytes; `files[i].refs`, `imports`, `bindings` and `resolved` are then empty.
    #[serde(skip)]
    #[schemars(skip)]
    pub bodies: Option<std::sync::Arc<super::GraphBodies>>,
}

/// The resolution of a file that has none.
pub(super) static NO_RESOLUTION: FileResolution = FileResolution {
    refs: Vec::new(),
    imports: Vec::new(),
    deps: super::Deps {
        files: Vec::new(),
        names: Vec::new(),
        modules: Vec::new(),
    },
};

/// What one build of the graph did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GraphUpdate {
    pub full: bool,
    pub files_resolved: u64,
    pub refs_resolved: u64,
    pub files_copied: u64,
    pub resolve_ms: u64,
    pub rank_ms: u64,
    /// The edges PageRank reads were the previous graph's (an edit inside a body, a line
    /// inserted): its ranks were kept, exact, instead of computed again.
    #[serde(default)]
    pub rank_kept: bool,
    /// Changed files whose lines moved and nothing else (a line inserted above them, a
    /// comment): their resolution was kept, and no symbol table was made for them.
    #[serde(default)]
    pub files_moved: u64,
}

impl CodeGraph {
    /// Resolves `files` (in file id order), reusing what `previous` resolved where nothing it
    /// depended on changed.
    pub fn build(
        files: Vec<FileSkeleton>,
        js_aliases: Vec<(String, String)>,
        previous: Option<&CodeGraph>,
    ) -> (CodeGraph, GraphUpdate) {
        let t0 = std::time::Instant::now();
        // Other aliases can change what any import means: nothing is reused then.
        let previous = previous.filter(|p| {
            p.version == GRAPH_VERSION
                && !p.heads_only()
                && p.resolved.len() == p.files.len()
                && p.js_aliases == js_aliases
        });
        let table = SymbolTable::new(&files, &js_aliases);
        let plan = previous.map(|p| plan(&files, p));
        let mut resolved = reused(files.len(), previous, plan.as_ref());
        let mut update = GraphUpdate {
            full: previous.is_none(),
            ..GraphUpdate::default()
        };
        let todo: Vec<usize> = (0..files.len()).filter(|&i| resolved[i].is_none()).collect();
        // A few files to resolve: only the bases their resolutions ask for are made.
        let bases = match todo.len().saturating_mul(LAZY_BASES_RATIO) < files.len() {
            true => ClassBases::lazy(&table),
            false => ClassBases::made(&table),
        };
        let fresh = resolve_files(&table, &bases, &todo);
        let same_edges = same_edges(previous, plan.as_ref(), &files, &fresh);
        update.files_resolved = fresh.len() as u64;
        update.refs_resolved = fresh.iter().map(|(_, r)| r.refs.len() as u64).sum();
        update.files_copied = (files.len() - todo.len()) as u64;
        for (i, r) in fresh {
            resolved[i] = Some(r);
        }
        let resolved = unresolved_as_empty(resolved);
        update.resolve_ms = t0.elapsed().as_millis() as u64;
        let t1 = std::time::Instant::now();
        let mut graph = CodeGraph {
            version: GRAPH_VERSION,
            files,
            resolved,
            rank: Vec::new(),
            js_aliases,
            bodies: None,
        };
        graph.rank = match (same_edges, previous) {
            (true, Some(p)) if p.rank.len() == graph.files.len() => {
                update.rank_kept = true;
                p.rank.clone()
            }
            _ => SymbolGraph::global_rank_of(&graph),
        };
        update.rank_ms = t1.elapsed().as_millis() as u64;
        (graph, update)
    }

    pub fn symbol_count(&self) -> usize {
        self.files.iter().map(|f| f.defs.len()).sum()
    }

    pub fn rank_of(&self, s: SymbolId) -> f32 {
        self.rank
            .get(s.file.index())
            .and_then(|r| r.get(s.def as usize))
            .copied()
            .unwrap_or(0.0)
    }
}

/// Per file, the resolution `previous` made that `plan` keeps (remapped to the new ids).
fn reused(files: usize, previous: Option<&CodeGraph>, plan: Option<&Plan>) -> Vec<Option<FileResolution>> {
    let mut resolved: Vec<Option<FileResolution>> = vec![None; files];
    if let (Some(p), Some(plan)) = (previous, plan) {
        for (i, slot) in resolved.iter_mut().enumerate() {
            if let Some(old) = plan.reuse[i] {
                *slot = remap(&p.resolved[old as usize], &plan.old_to_new);
            }
        }
    }
    resolved
}

/// Resolves the files `todo` names, in parallel; a file the resolver cannot open is left out.
fn resolve_files(
    table: &SymbolTable<'_>,
    bases: &ClassBases<'_, '_>,
    todo: &[usize],
) -> Vec<(usize, FileResolution)> {
    todo.par_iter()
        .filter_map(|&i| {
            let r = Resolver::new(table, bases, FileId(i as u32))?;
            let (refs, imports, deps) = r.resolve_file();
            Some((i, FileResolution { refs, imports, deps }))
        })
        .collect()
}

/// Every file's resolution, empty where there is none.
fn unresolved_as_empty(resolved: Vec<Option<FileResolution>>) -> Vec<FileResolution> {
    resolved
        .into_iter()
        .map(|r| {
            r.unwrap_or(FileResolution {
                refs: Vec::new(),
                imports: Vec::new(),
                deps: Deps::default(),
            })
        })
        .collect()
}

/// Whether every file resolved again gives PageRank the edges it gave before.
fn same_edges(
    previous: Option<&CodeGraph>,
    plan: Option<&Plan>,
    files: &[FileSkeleton],
    fresh: &[(usize, FileResolution)],
) -> bool {
    match (previous, plan) {
        (Some(p), Some(plan)) => {
            p.files.len() == files.len()
                && plan
                    .old_to_new
                    .iter()
                    .enumerate()
                    .all(|(i, n)| *n == Some(i as u32))
                && fresh
                    .iter()
                    .all(|(i, r)| same_rank_inputs(&p.files[*i], &p.resolved[*i], &files[*i], r))
        }
        _ => false,
    }
}

/// Whether a file gives the symbol graph the same nodes and edges as before: definitions
/// (kind, parent), import targets, and each reference's kind, source, provenance, candidate
/// count and targets; lines and names do not matter to PageRank.
pub(super) fn same_rank_inputs(
    old: &FileSkeleton,
    old_res: &FileResolution,
    new: &FileSkeleton,
    new_res: &FileResolution,
) -> bool {
    let defs = |f: &FileSkeleton| f.defs.iter().map(|d| (d.kind, d.parent)).collect::<Vec<_>>();
    let same_imports = old_res.imports.len() == new_res.imports.len()
        && old_res
            .imports
            .iter()
            .zip(&new_res.imports)
            .all(|(a, b)| a.files == b.files);
    let refs = |f: &FileSkeleton, r: &FileResolution| {
        f.refs
            .iter()
            .zip(&r.refs)
            .filter(|(_, rr)| rr.provenance.is_some())
            .map(|(x, rr)| {
                let base = Resolver::is_base_ref(f, x);
                (
                    x.kind,
                    x.enclosing,
                    base,
                    rr.provenance,
                    rr.candidates,
                    rr.targets.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    same_imports && defs(old) == defs(new) && refs(old, old_res) == refs(new, new_res)
}

struct Plan {
    /// For each new file: the old file id whose resolution can be copied.
    reuse: Vec<Option<u32>>,
    old_to_new: Vec<Option<u32>>,
}

/// Decides which files keep their previous resolution.
fn plan(files: &[FileSkeleton], prev: &CodeGraph) -> Plan {
    let old_by_path: HashMap<&str, u32> = prev
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_str(), i as u32))
        .collect();
    let new_paths: HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
    let mut old_to_new = vec![None; prev.files.len()];
    let mut unchanged: Vec<Option<u32>> = vec![None; files.len()];
    let mut changed_names = DepSet::default();
    // Names a changed file defines (before and after) are what lookups by name can see
    // differently. Module and path keys only answer "does it exist", which changes only when
    // a file comes, goes or moves to another module.
    let note = |f: &FileSkeleton, set: &mut DepSet, membership: bool| {
        for d in &f.defs {
            set.name(&d.name);
        }
        if !membership {
            return;
        }
        let sep = f.family().separator();
        set.module(&f.module);
        set.module(f.module.split(sep).next().unwrap_or(&f.module));
        set.module(f.path.as_str());
        set.module(f.path.file_name());
        let stem = f
            .path
            .as_str()
            .rsplit_once('.')
            .map_or(f.path.as_str(), |(s, _)| s);
        set.module(stem);
        set.module(stem.strip_suffix("/index").unwrap_or(stem));
    };
    for (i, f) in files.iter().enumerate() {
        match old_by_path.get(f.path.as_str()) {
            Some(&o) if prev.files[o as usize] == *f => {
                old_to_new[o as usize] = Some(i as u32);
                unchanged[i] = Some(o);
            }
            // Code moved (lines, offsets, references) without changing what other files can
            // see of it: only this file is resolved again, its dependents keep theirs.
            Some(&o) if same_interface(&prev.files[o as usize], f) => {
                old_to_new[o as usize] = Some(i as u32);
            }
            Some(&o) => {
                let moved = prev.files[o as usize].module != f.module
                    || prev.files[o as usize].language != f.language;
                note(f, &mut changed_names, moved);
                note(&prev.files[o as usize], &mut changed_names, moved);
            }
            None => note(f, &mut changed_names, true),
        }
    }
    let mut changed_old: HashSet<u32> = HashSet::new();
    for (o, n) in old_to_new.iter().enumerate() {
        if n.is_none() {
            changed_old.insert(o as u32);
            let removed = !new_paths.contains(prev.files[o].path.as_str());
            note(&prev.files[o], &mut changed_names, removed);
        }
    }
    let reuse = unchanged
        .iter()
        .map(|u| {
            u.filter(|&o| {
                !prev.resolved[o as usize].deps.touches(
                    &changed_old,
                    &changed_names.names,
                    &changed_names.modules,
                )
            })
        })
        .collect();
    Plan { reuse, old_to_new }
}

/// What resolving another file can read of this one — module, language, definitions (their
/// order too: targets are definition indices), imports and typed bindings — without their
/// positions, which no other file's resolution reads.
pub(super) fn same_interface(a: &FileSkeleton, b: &FileSkeleton) -> bool {
    let defs = a.defs.len() == b.defs.len()
        && a.defs.iter().zip(&b.defs).all(|(x, y)| {
            x.name == y.name
                && x.kind == y.kind
                && x.container == y.container
                && x.parent == y.parent
                && x.typing == y.typing
        });
    let imports = a.imports.len() == b.imports.len()
        && a.imports
            .iter()
            .zip(&b.imports)
            .all(|(x, y)| x.path == y.path && x.name == y.name && x.alias == y.alias && x.glob == y.glob);
    let bindings = a.bindings.len() == b.bindings.len()
        && a.bindings.iter().zip(&b.bindings).all(|(x, y)| {
            x.name == y.name && x.value == y.value && x.type_name == y.type_name && x.enclosing == y.enclosing
        });
    a.module == b.module && a.language == b.language && defs && imports && bindings
}

/// A previous resolution with file ids moved to the new generation; `None` if something it
/// points at is gone (then the file is resolved again).
fn remap(r: &FileResolution, old_to_new: &[Option<u32>]) -> Option<FileResolution> {
    let map = |f: FileId| old_to_new.get(f.index()).copied().flatten().map(FileId);
    let refs = r
        .refs
        .iter()
        .map(|res| {
            let targets = res
                .targets
                .iter()
                .map(|t| map(t.file).map(|file| SymbolId { file, def: t.def }))
                .collect::<Option<Vec<_>>>()?;
            let mut res = res.clone();
            res.targets = targets.into();
            Some(res)
        })
        .collect::<Option<Vec<_>>>()?;
    let imports = r
        .imports
        .iter()
        .map(|it| {
            let mut files = it.files.iter().map(|f| map(*f)).collect::<Option<Vec<_>>>()?;
            files.sort_unstable();
            Some(ImportTarget {
                files,
                external: it.external,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    let mut files = r
        .deps
        .files
        .iter()
        .map(|f| map(FileId(*f)).map(|n| n.0))
        .collect::<Option<Vec<_>>>()?;
    files.sort_unstable();
    Some(FileResolution {
        refs,
        imports,
        deps: Deps {
            files,
            names: r.deps.names.clone(),
            modules: r.deps.modules.clone(),
        },
    })
}
