//! `SymbolTable`: repository-wide lookups over the file skeletons — by qualified name, by
//! name, by module, by (type name, member name) — that reference resolution reads.
//!
//! Every lookup is keyed by a name or a module, so what a resolution read can be recorded as
//! those keys (see `Deps`): a lookup's answer changes only when a file defining that name or
//! forming that module changes.

use std::collections::{HashMap, HashSet};

/// The table's maps hash with foldhash: the keys are names and name hashes built in-process
/// (no untrusted peer picks them), and SipHash was a tenth of a one-file update's table.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
type FastSet<K> = HashSet<K, foldhash::fast::RandomState>;

use super::deps::key_hash;
use super::{Family, FileSkeleton, SymbolId};
use crate::symbols::{FileId, SymbolKind};

/// The name space a file's definitions live in and its references resolve in: one per
/// language, shared where `language.toml` says `shares_names_with` (Kotlin and Java), so a
/// Lua call is never matched to a Ruby method of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space(usize);

impl Space {
    pub fn of(language: &str) -> Space {
        match crate::lang::LanguageRegistry::builtin() {
            Ok(r) => Space(r.name_space(language)),
            Err(_) => Space(0),
        }
    }
}

pub struct SymbolTable<'a> {
    pub files: &'a [FileSkeleton],
    pub families: Vec<Family>,
    spaces: Vec<Space>,
    /// Keyed by the hash of the qualified name (the strings themselves would double the
    /// table's memory); hits are checked against the definition's name.
    qualified: Vec<FastMap<u64, Vec<SymbolId>>>,
    by_name: Vec<FastMap<&'a str, Vec<SymbolId>>>,
    /// (type name, member name) -> members declared outside the type's body (Rust impls, Go
    /// methods, C++ out-of-line definitions).
    members: Vec<FastMap<u64, Vec<SymbolId>>>,
    modules: Vec<FastMap<&'a str, Vec<FileId>>>,
    /// First segments of every module path (Rust crate names, Python top-level packages).
    roots: Vec<FastSet<&'a str>>,
    paths: FastMap<&'a str, FileId>,
    by_file_name: FastMap<&'a str, Vec<FileId>>,
    /// Bare JavaScript import patterns naming repository paths, longest first.
    js_aliases: &'a [(String, String)],
}

fn member_key(owner: &str, name: &str) -> u64 {
    key_hash(owner).rotate_left(17) ^ key_hash(name)
}

fn slot(s: Space) -> usize {
    s.0
}

pub fn is_type_like(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Class
            | SymbolKind::Struct
            | SymbolKind::Enum
            | SymbolKind::Interface
            | SymbolKind::Trait
            | SymbolKind::Impl
            | SymbolKind::Type
    )
}

impl<'a> SymbolTable<'a> {
    pub fn new(files: &'a [FileSkeleton], js_aliases: &'a [(String, String)]) -> SymbolTable<'a> {
        let spaces: Vec<Space> = files.iter().map(|f| Space::of(&f.language)).collect();
        let n = spaces.iter().map(|s| s.0 + 1).max().unwrap_or(1);
        let mut t = SymbolTable {
            files,
            js_aliases,
            families: files.iter().map(FileSkeleton::family).collect(),
            spaces,
            qualified: (0..n).map(|_| FastMap::default()).collect(),
            by_name: (0..n).map(|_| FastMap::default()).collect(),
            members: (0..n).map(|_| FastMap::default()).collect(),
            modules: (0..n).map(|_| FastMap::default()).collect(),
            roots: (0..n).map(|_| FastSet::default()).collect(),
            paths: FastMap::with_capacity_and_hasher(files.len(), Default::default()),
            by_file_name: FastMap::default(),
        };
        for (fi, f) in files.iter().enumerate() {
            let fam = slot(t.spaces[fi]);
            let id = FileId(fi as u32);
            t.paths.insert(f.path.as_str(), id);
            t.by_file_name.entry(f.path.file_name()).or_default().push(id);
            // A JavaScript package's root `index.js` is module `""`: `require('..')` names it.
            if !f.module.is_empty() || t.families[fi] == Family::Js {
                t.modules[fam].entry(f.module.as_str()).or_default().push(id);
                let sep = t.families[fi].separator();
                let root = f.module.split(sep).next().unwrap_or(&f.module);
                t.roots[fam].insert(root);
            }
            for (di, d) in f.defs.iter().enumerate() {
                let sid = SymbolId::new(fi as u32, di as u32);
                if d.kind == SymbolKind::Impl {
                    continue;
                }
                t.qualified[fam]
                    .entry(key_hash(&f.qualified(di as u32)))
                    .or_default()
                    .push(sid);
                t.by_name[fam].entry(d.name.as_str()).or_default().push(sid);
                if let Some(owner) = d.container.last() {
                    let outside = d.parent.is_none_or(|p| {
                        f.defs
                            .get(p as usize)
                            .is_some_and(|pd| pd.kind == SymbolKind::Impl || !is_type_like(pd.kind))
                    });
                    if outside {
                        t.members[fam]
                            .entry(member_key(owner, &d.name))
                            .or_default()
                            .push(sid);
                    }
                }
            }
        }
        t
    }

    pub fn family(&self, file: FileId) -> Family {
        self.families.get(file.index()).copied().unwrap_or(Family::Other)
    }

    pub fn space(&self, file: FileId) -> Space {
        self.spaces.get(file.index()).copied().unwrap_or(Space(0))
    }

    pub fn file(&self, file: FileId) -> Option<&'a FileSkeleton> {
        self.files.get(file.index())
    }

    pub fn def(&self, s: SymbolId) -> Option<&'a super::DefNode> {
        self.files.get(s.file.index())?.defs.get(s.def as usize)
    }

    pub fn qualified(&self, fam: Space, key: &str) -> &[SymbolId] {
        let hits = self
            .qualified
            .get(slot(fam))
            .and_then(|m| m.get(&key_hash(key)))
            .map_or(&[][..], Vec::as_slice);
        // A name may hold its own dots (Elixir's `defmodule Shop.Inventory`): the key ends
        // with it after a separator.
        let named = |n: &str| {
            key.strip_suffix(n)
                .is_some_and(|head| head.is_empty() || head.ends_with(['.', ':']))
        };
        match hits.iter().all(|s| self.def(*s).is_some_and(|d| named(&d.name))) {
            true => hits,
            false => &[],
        }
    }

    pub fn by_name(&self, fam: Space, name: &str) -> &[SymbolId] {
        self.by_name
            .get(slot(fam))
            .and_then(|m| m.get(name))
            .map_or(&[], Vec::as_slice)
    }

    /// Members named `name` of types named `owner` declared outside the type's body.
    pub fn members(&self, fam: Space, owner: &str, name: &str) -> Vec<SymbolId> {
        let Some(v) = self
            .members
            .get(slot(fam))
            .and_then(|m| m.get(&member_key(owner, name)))
        else {
            return Vec::new();
        };
        v.iter()
            .copied()
            .filter(|s| {
                self.def(*s)
                    .is_some_and(|d| d.name == name && d.container.last().is_some_and(|c| c == owner))
            })
            .collect()
    }

    /// The repository path (without extension) a bare JavaScript import names, through a
    /// package name or a tsconfig path.
    pub fn js_alias(&self, spec: &str) -> Option<String> {
        self.js_aliases
            .iter()
            .find_map(|(pattern, target)| match pattern.strip_suffix('*') {
                Some(prefix) => {
                    let rest = spec.strip_prefix(prefix)?;
                    Some(target.replacen('*', rest, 1))
                }
                None => (pattern == spec).then(|| target.clone()),
            })
    }

    pub fn module(&self, fam: Space, module: &str) -> &[FileId] {
        self.modules
            .get(slot(fam))
            .and_then(|m| m.get(module))
            .map_or(&[], Vec::as_slice)
    }

    pub fn is_root(&self, fam: Space, segment: &str) -> bool {
        self.roots.get(slot(fam)).is_some_and(|r| r.contains(segment))
    }

    pub fn path(&self, path: &str) -> Option<FileId> {
        self.paths.get(path).copied()
    }

    pub fn files_named(&self, file_name: &str) -> &[FileId] {
        self.by_file_name.get(file_name).map_or(&[], Vec::as_slice)
    }
}
