//! `ClassBases`: every type's class bases, and per file what resolving them read. A build
//! makes them all up front, on every core; an update by difference, which resolves a few
//! files, makes a file's when a resolution first asks for one of its types. Either way a
//! type's bases and a file's deps are the same (a file's come from its own base references
//! alone, resolved with no bases), so the resolutions are too.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use rayon::prelude::*;

use super::{Deps, Provenance, Resolver, SymbolId, SymbolTable};
use crate::symbols::FileId;

/// Class bases per type.
type Bases = HashMap<SymbolId, Vec<SymbolId>>;

/// One file's class bases: (type, base) in reference order, and what resolving them read.
struct FileBases {
    pairs: Vec<(SymbolId, SymbolId)>,
    deps: Deps,
}

/// Every file's bases at once.
struct Made {
    bases: Bases,
    deps: HashMap<FileId, Deps>,
}

pub struct ClassBases<'t, 'a> {
    /// `None`: no bases at all (what the bases themselves are resolved with).
    table: Option<&'t SymbolTable<'a>>,
    made: OnceLock<Made>,
    /// Files made one at a time (`None`: the file names no base).
    files: Option<Mutex<HashMap<FileId, Option<std::sync::Arc<FileBases>>>>>,
}

impl<'t, 'a> ClassBases<'t, 'a> {
    /// No bases: the pass that resolves the bases themselves.
    pub fn none() -> ClassBases<'t, 'a> {
        ClassBases {
            table: None,
            made: OnceLock::new(),
            files: None,
        }
    }

    /// Every file's bases, made now on every core.
    pub fn made(table: &'t SymbolTable<'a>) -> ClassBases<'t, 'a> {
        let bases = ClassBases {
            table: Some(table),
            made: OnceLock::new(),
            files: None,
        };
        let _ = bases.all();
        bases
    }

    /// A file's bases made when first asked for (all of them only where a mixin's includers
    /// are looked for).
    pub fn lazy(table: &'t SymbolTable<'a>) -> ClassBases<'t, 'a> {
        ClassBases {
            table: Some(table),
            made: OnceLock::new(),
            files: Some(Mutex::new(HashMap::new())),
        }
    }

    /// The bases of type `ty`; `None` where it has none.
    pub fn of(&self, ty: SymbolId) -> Option<Vec<SymbolId>> {
        if let Some(m) = self.made.get() {
            return m.bases.get(&ty).cloned();
        }
        let f = self.file(ty.file)?;
        let bs: Vec<SymbolId> = f
            .pairs
            .iter()
            .filter(|(t, b)| *t == ty && t != b)
            .map(|(_, b)| *b)
            .collect();
        (!bs.is_empty()).then_some(bs)
    }

    /// What resolving file `f`'s bases read; `None` where it names none.
    pub fn deps_of(&self, f: FileId) -> Option<Deps> {
        if let Some(m) = self.made.get() {
            return m.deps.get(&f).cloned();
        }
        self.file(f).map(|b| b.deps.clone())
    }

    /// The types with `mixin` among their bases, in no order (every file's bases are made).
    pub fn includers(&self, mixin: SymbolId) -> Vec<SymbolId> {
        self.all()
            .map(|m| {
                m.bases
                    .iter()
                    .filter(|(_, bs)| bs.contains(&mixin))
                    .map(|(t, _)| *t)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn all(&self) -> Option<&Made> {
        let table = self.table?;
        Some(self.made.get_or_init(|| {
            let per_file: Vec<(FileId, FileBases)> = (0..table.files.len())
                .into_par_iter()
                .filter_map(|i| file_bases(table, FileId(i as u32)).map(|b| (FileId(i as u32), b)))
                .collect();
            let mut made = Made {
                bases: Bases::new(),
                deps: HashMap::new(),
            };
            for (file, b) in per_file {
                for (ty, base) in b.pairs {
                    if ty != base {
                        made.bases.entry(ty).or_default().push(base);
                    }
                }
                made.deps.insert(file, b.deps);
            }
            made
        }))
    }

    fn file(&self, f: FileId) -> Option<std::sync::Arc<FileBases>> {
        let (table, files) = (self.table?, self.files.as_ref()?);
        if let Ok(known) = files.lock()
            && let Some(b) = known.get(&f)
        {
            return b.clone();
        }
        // Made outside the lock (it resolves references); two threads may both make it.
        let b = file_bases(table, f).map(std::sync::Arc::new);
        if let Ok(mut known) = files.lock() {
            known.insert(f, b.clone());
        }
        b
    }
}

/// File `file`'s class bases, resolved with no bases; `None` where it names none.
fn file_bases(table: &SymbolTable<'_>, file: FileId) -> Option<FileBases> {
    let sk = table.files.get(file.index())?;
    if !sk.refs.iter().any(|r| Resolver::is_base_ref(sk, r)) {
        return None;
    }
    let none = ClassBases::none();
    let mut r = Resolver::new(table, &none, file)?;
    let mut pairs = Vec::new();
    for rf in sk.refs.iter().filter(|r| Resolver::is_base_ref(sk, r)) {
        let res = r.resolve(rf);
        let Some(e) = rf.enclosing else { continue };
        if res.provenance.is_some_and(|p| p != Provenance::NameAmbiguous) {
            for t in res.targets {
                pairs.push((SymbolId { file, def: e }, t));
            }
        }
    }
    Some(FileBases {
        pairs,
        deps: r.deps.finish(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::FileSkeleton;
    use crate::lang::LanguageRegistry;
    use crate::parse::FileParser;
    use crate::symbols::RepoPath;

    fn skeleton(path: &str, language: &str, module: &str, text: &str) -> FileSkeleton {
        let registry = LanguageRegistry::builtin().expect("registry");
        let mut parser = FileParser::new();
        let symbols = parser.parse(registry.by_name(language).expect("language"), text.as_bytes());
        FileSkeleton::new(RepoPath::parse(path).expect("path"), language, module, &symbols)
    }

    /// Bases made a file at a time are those made all at once: every type's, every file's
    /// deps, and a mixin's includers (which makes them all).
    #[test]
    fn lazy_bases_are_the_bases_made_up_front() {
        let files = vec![
            skeleton(
                "pkg/base.py",
                "python",
                "pkg.base",
                "class Base:\n    def helper(self):\n        return 1\n",
            ),
            skeleton(
                "pkg/core.py",
                "python",
                "pkg.core",
                "from pkg.base import Base\n\nclass Engine(Base):\n    def run(self):\n        return self.helper()\n\nclass Turbo(Engine):\n    pass\n",
            ),
            skeleton(
                "lib/totals.rb",
                "ruby",
                "totals",
                "module Totals\n  def total\n    1\n  end\nend\n\nclass Invoice\n  include Totals\nend\n",
            ),
        ];
        let table = SymbolTable::new(&files, &[]);
        let made = ClassBases::made(&table);
        let lazy = ClassBases::lazy(&table);
        let types: Vec<SymbolId> = files
            .iter()
            .enumerate()
            .flat_map(|(f, sk)| {
                (0..sk.defs.len()).map(move |d| SymbolId {
                    file: FileId(f as u32),
                    def: d as u32,
                })
            })
            .collect();
        let mut with_bases = 0;
        for &t in &types {
            assert_eq!(lazy.of(t), made.of(t), "{t:?}");
            with_bases += usize::from(made.of(t).is_some());
        }
        assert!(
            with_bases >= 3,
            "Engine, Turbo and Invoice have bases: {with_bases}"
        );
        for f in 0..files.len() {
            let f = FileId(f as u32);
            assert_eq!(lazy.deps_of(f), made.deps_of(f), "{f:?}");
        }
        let mut includers: Vec<Vec<SymbolId>> = types
            .iter()
            .map(|&t| {
                let mut v = made.includers(t);
                v.sort_unstable();
                v
            })
            .collect();
        for (i, &t) in types.iter().enumerate() {
            let mut v = lazy.includers(t);
            v.sort_unstable();
            assert_eq!(v, std::mem::take(&mut includers[i]), "{t:?}");
        }
        let base = SymbolId {
            file: FileId(0),
            def: 0,
        };
        assert_eq!(made.includers(base).len(), 1, "Base has one subclass");
    }
}
