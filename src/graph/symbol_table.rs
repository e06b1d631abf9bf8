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
/// Each key's definitions as one run of a shared array (`ids[start..start + len]`), the map
/// holding only where the run lies: a qualified name's entry is 16 bytes and a name's 24,
/// where an inline small vector made them 32 and 40, and no key's list is an allocation of
/// its own. A capped first build holds the table while it resolves (207,570 definitions on
/// 2.8M lines).
struct IdRuns<K> {
    runs: FastMap<K, (u32, u32)>,
    ids: Vec<SymbolId>,
}

impl<K: std::hash::Hash + Eq> IdRuns<K> {
    /// The runs of `items`, each key's ids in the order given. Each key is hashed once: it
    /// is numbered as it first comes, the runs are laid out by those numbers, then each
    /// key's number is replaced by where its run lies.
    fn new(items: impl Iterator<Item = (K, SymbolId)>) -> IdRuns<K> {
        let mut runs: FastMap<K, (u32, u32)> = FastMap::default();
        let mut numbered: Vec<(u32, SymbolId)> = Vec::new();
        let mut lens: Vec<u32> = Vec::new();
        for (k, id) in items {
            let next = lens.len() as u32;
            let n = runs.entry(k).or_insert((next, 0)).0;
            if n == next {
                lens.push(0);
            }
            if let Some(l) = lens.get_mut(n as usize) {
                *l += 1;
            }
            numbered.push((n, id));
        }
        // Where each run starts; each is moved along as its ids are laid down, so it ends
        // where the run ends.
        let mut fill = Vec::with_capacity(lens.len());
        let mut at = 0u32;
        for &l in &lens {
            fill.push(at);
            at += l;
        }
        let mut ids = vec![SymbolId::new(0, 0); at as usize];
        for (n, id) in numbered {
            if let Some(f) = fill.get_mut(n as usize) {
                if let Some(slot) = ids.get_mut(*f as usize) {
                    *slot = id;
                }
                *f += 1;
            }
        }
        for run in runs.values_mut() {
            let n = run.0 as usize;
            let (end, len) = (
                fill.get(n).copied().unwrap_or(0),
                lens.get(n).copied().unwrap_or(0),
            );
            *run = (end.saturating_sub(len), len);
        }
        IdRuns { runs, ids }
    }

    fn get<Q>(&self, key: &Q) -> &[SymbolId]
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        self.runs
            .get(key)
            .and_then(|&(start, len)| self.ids.get(start as usize..(start + len) as usize))
            .unwrap_or(&[])
    }
}

use super::deps::{KEY_HASH_START, key_hash, key_hash_more};
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
    qualified: Vec<IdRuns<u64>>,
    by_name: Vec<IdRuns<&'a str>>,
    /// (type name, member name) -> members declared outside the type's body (Rust impls, Go
    /// methods, C++ out-of-line definitions).
    members: Vec<IdRuns<u64>>,
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

/// `key_hash(&f.qualified(i))` for definition `d` of `f`, hashed part by part: the module,
/// the containers and the name, with the family's separator between them.
fn qualified_hash(f: &FileSkeleton, family: Family, d: &super::DefNode) -> u64 {
    let sep = family.separator();
    let mut h = KEY_HASH_START;
    let mut first = true;
    if !f.module.is_empty() {
        h = key_hash_more(h, &f.module);
        first = false;
    }
    for part in d
        .container
        .iter()
        .map(|c| c.as_str())
        .chain(std::iter::once(d.name.as_str()))
    {
        if !first {
            h = key_hash_more(h, sep);
        }
        h = key_hash_more(h, part);
        first = false;
    }
    h
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
    /// The table over `files`. Its three groups of maps (by qualified name and by member,
    /// by name, by module and path) are made side by side; a qualified name is hashed as its
    /// parts go by, never built as a string (it was a third of a one-file update's table).
    pub fn new(files: &'a [FileSkeleton], js_aliases: &'a [(String, String)]) -> SymbolTable<'a> {
        let spaces: Vec<Space> = files.iter().map(|f| Space::of(&f.language)).collect();
        let families: Vec<Family> = files.iter().map(FileSkeleton::family).collect();
        let n = spaces.iter().map(|s| s.0 + 1).max().unwrap_or(1);
        let by_space = Self::files_by_space(&spaces, n);
        let ((qualified, members), (by_name, by_module)) = rayon::join(
            || Self::by_key(files, &by_space, &families),
            || {
                rayon::join(
                    || Self::names(files, &by_space),
                    || Self::by_module(files, &spaces, &families, n),
                )
            },
        );
        let (modules, roots, paths, by_file_name) = by_module;
        SymbolTable {
            files,
            js_aliases,
            families,
            spaces,
            qualified,
            by_name,
            members,
            modules,
            roots,
            paths,
            by_file_name,
        }
    }

    /// The files of each name space, in file order.
    fn files_by_space(spaces: &[Space], n: usize) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); n];
        for (fi, s) in spaces.iter().enumerate() {
            if let Some(of) = out.get_mut(slot(*s)) {
                of.push(fi);
            }
        }
        out
    }

    /// Definitions (not impl blocks) of the files `which`, in that order.
    fn defs_of<'w>(
        files: &'a [FileSkeleton],
        which: &'w [usize],
    ) -> impl Iterator<Item = (usize, SymbolId, &'a super::DefNode)> + use<'a, 'w> {
        which.iter().flat_map(move |&fi| {
            files[fi]
                .defs
                .iter()
                .enumerate()
                .filter(|(_, d)| d.kind != SymbolKind::Impl)
                .map(move |(di, d)| (fi, SymbolId::new(fi as u32, di as u32), d))
        })
    }

    /// Definitions by the hash of their qualified name, and members declared outside their
    /// type's body by (type name, member name).
    #[allow(clippy::type_complexity)]
    fn by_key(
        files: &'a [FileSkeleton],
        by_space: &[Vec<usize>],
        families: &[Family],
    ) -> (Vec<IdRuns<u64>>, Vec<IdRuns<u64>>) {
        let n = by_space.len();
        let in_space = |fam: usize| Self::defs_of(files, &by_space[fam]);
        let qualified = (0..n)
            .map(|fam| {
                IdRuns::new(
                    in_space(fam).map(|(fi, sid, d)| (qualified_hash(&files[fi], families[fi], d), sid)),
                )
            })
            .collect();
        let members = (0..n)
            .map(|fam| {
                IdRuns::new(in_space(fam).filter_map(|(fi, sid, d)| {
                    let owner = d.container.last()?;
                    let f = &files[fi];
                    let outside = d.parent.is_none_or(|p| {
                        f.defs
                            .get(p as usize)
                            .is_some_and(|pd| pd.kind == SymbolKind::Impl || !is_type_like(pd.kind))
                    });
                    outside.then(|| (member_key(owner, &d.name), sid))
                }))
            })
            .collect();
        (qualified, members)
    }

    /// Definitions by their name.
    fn names(files: &'a [FileSkeleton], by_space: &[Vec<usize>]) -> Vec<IdRuns<&'a str>> {
        by_space
            .iter()
            .map(|of| IdRuns::new(Self::defs_of(files, of).map(|(_, sid, d)| (d.name.as_str(), sid))))
            .collect()
    }

    /// Files by module, the modules' first segments, files by path and by file name.
    #[allow(clippy::type_complexity)]
    fn by_module(
        files: &'a [FileSkeleton],
        spaces: &[Space],
        families: &[Family],
        n: usize,
    ) -> (
        Vec<FastMap<&'a str, Vec<FileId>>>,
        Vec<FastSet<&'a str>>,
        FastMap<&'a str, FileId>,
        FastMap<&'a str, Vec<FileId>>,
    ) {
        let mut modules: Vec<FastMap<&'a str, Vec<FileId>>> = (0..n).map(|_| FastMap::default()).collect();
        let mut roots: Vec<FastSet<&'a str>> = (0..n).map(|_| FastSet::default()).collect();
        let mut paths: FastMap<&'a str, FileId> =
            FastMap::with_capacity_and_hasher(files.len(), Default::default());
        let mut by_file_name: FastMap<&'a str, Vec<FileId>> = FastMap::default();
        for (fi, f) in files.iter().enumerate() {
            let fam = slot(spaces[fi]);
            let id = FileId(fi as u32);
            paths.insert(f.path.as_str(), id);
            by_file_name.entry(f.path.file_name()).or_default().push(id);
            // A JavaScript package's root `index.js` is module `""`: `require('..')` names it.
            if !f.module.is_empty() || families[fi] == Family::Js {
                modules[fam].entry(f.module.as_str()).or_default().push(id);
                let sep = families[fi].separator();
                let root = f.module.split(sep).next().unwrap_or(&f.module);
                roots[fam].insert(root);
            }
        }
        (modules, roots, paths, by_file_name)
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
            .map_or(&[][..], |m| m.get(&key_hash(key)));
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
        self.by_name.get(slot(fam)).map_or(&[], |m| m.get(name))
    }

    /// Members named `name` of types named `owner` declared outside the type's body.
    pub fn members(&self, fam: Space, owner: &str, name: &str) -> Vec<SymbolId> {
        let Some(m) = self.members.get(slot(fam)) else {
            return Vec::new();
        };
        m.get(&member_key(owner, name))
            .iter()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::LanguageRegistry;
    use crate::parse::FileParser;
    use crate::symbols::RepoPath;

    fn skeleton(path: &str, language: &str, module: &str, text: &str) -> FileSkeleton {
        let registry = LanguageRegistry::builtin().unwrap();
        let symbols = FileParser::new().parse(registry.by_name(language).unwrap(), text.as_bytes());
        FileSkeleton::new(RepoPath::parse(path).unwrap(), language, module, &symbols)
    }

    #[test]
    fn a_qualified_name_hashed_in_parts_is_its_hash_built_whole() {
        let files = [
            skeleton(
                "shop/cart.py",
                "python",
                "shop.cart",
                "class Cart:\n    class Line:\n        def total(self):\n            return 1\n",
            ),
            skeleton("run.py", "python", "", "def main():\n    pass\n"),
            skeleton(
                "src/lib.rs",
                "rust",
                "shop",
                "mod cart { pub struct Cart; impl Cart { pub fn total(&self) -> u32 { 1 } } }\n",
            ),
        ];
        let mut seen = 0;
        for f in &files {
            for (i, d) in f.defs.iter().enumerate() {
                assert_eq!(
                    qualified_hash(f, f.family(), d),
                    key_hash(&f.qualified(i as u32)),
                    "{}",
                    f.qualified(i as u32)
                );
                seen += 1;
            }
        }
        assert!(seen >= 6, "{seen} definitions");
        // The table finds them by the names built whole.
        let table = SymbolTable::new(&files, &[]);
        let py = Space::of("python");
        assert_eq!(table.qualified(py, "shop.cart.Cart.Line.total").len(), 1);
        assert_eq!(table.qualified(py, "main").len(), 1);
        assert_eq!(table.by_name(py, "total").len(), 1);
        assert_eq!(table.module(py, "shop.cart"), &[FileId(0)]);
    }
}
