//! Resolution a language outside the built-in families declares in its `language.toml`:
//! what an import names (`imports_name`: files, modules or definitions), where a file import
//! is looked for (`import_files`), and whether a name the file does not bind is looked up
//! among the repository's top-level definitions (`unbound_names = "repository"`).
//!
//! Invariant: every lookup records its keys in the resolver's dependencies (file paths and
//! names as module keys, names as name keys), so an incremental update re-resolves a file
//! when a file it could import or a definition it could name appears or goes.

use super::{Entity, Resolver, Via};
use crate::graph::SymbolId;
use crate::graph::{Family, is_type_like};
use crate::lang::{ImportsName, LanguageRegistry, LanguageSpec};
use crate::symbols::{FileId, Import, SymbolKind};
use crate::util::join_relative;

/// The declared resolution of a file's language, for a language outside the built-in
/// families (`None` for those).
pub(super) fn declared(language: &str) -> Option<&'static LanguageSpec> {
    match Family::of(language) {
        Family::Other => LanguageRegistry::builtin().ok()?.by_name(language),
        _ => None,
    }
}

/// An import path as a file path: quotes dropped, and a shell script's leading `$DIR/`,
/// `${BASH_SOURCE%/*}/` parts (known only when it runs) cut; `None` if a variable remains.
fn file_path(path: &str) -> Option<&str> {
    let p = path.trim_matches(|c| c == '"' || c == '\'');
    let Some(tail) = p.strip_prefix('$') else {
        return (!p.is_empty() && !p.contains('$')).then_some(p);
    };
    let end = if let Some(inner) = tail.strip_prefix('{') {
        inner.find('}')? + 2
    } else if tail.starts_with('(') {
        tail.rfind(')')? + 1
    } else {
        tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len())
    };
    let rest = tail.get(end..)?.trim_start_matches('"').strip_prefix('/')?;
    file_path(rest)
}

impl<'t, 'a> Resolver<'t, 'a> {
    /// What import `imp` of file `from` names, for a language that declares it; `None` when
    /// the built-in families decide.
    pub(super) fn declared_import(&mut self, from: FileId, imp: &Import, depth: u32) -> Option<Entity> {
        let spec = declared(&self.table.file(from)?.language)?;
        let space = self.table.space(from);
        Some(match spec.imports_name {
            ImportsName::Nothing => Entity::External,
            ImportsName::Files => {
                let files = self.import_files(from, spec, &imp.path);
                match (&imp.name, files.is_empty()) {
                    (_, true) => Entity::External,
                    (Some(n), false) => match self.file_members(&files, n) {
                        v if v.is_empty() => Entity::Missing,
                        v => Entity::Symbols(v),
                    },
                    (None, false) => Entity::Files(files),
                }
            }
            ImportsName::Modules => {
                self.deps.module(&imp.path);
                match self.table.module(space, &imp.path).is_empty() {
                    true => Entity::External,
                    false => match &imp.name {
                        // The walk goes on from where it is: a cycle of re-exports (Haskell modules
                        // importing each other) ends at the depth limit.
                        Some(n) => self.in_module(&imp.path, n, depth.max(1)),
                        None => Entity::Module(imp.path.clone()),
                    },
                }
            }
            ImportsName::Definitions => {
                let full = match &imp.name {
                    Some(n) => format!("{}.{n}", imp.path),
                    None => imp.path.clone(),
                };
                self.deps.name(full.rsplit('.').next().unwrap_or(&full));
                self.deps.name(&full);
                match self.table.qualified(space, &full) {
                    [] => Entity::External,
                    v => Entity::Symbols(v.to_vec()),
                }
            }
        })
    }

    /// The files an import of a declared language leads to; `None` when the built-in
    /// families decide.
    pub(super) fn declared_import_files(&mut self, imp: &Import) -> Option<Vec<FileId>> {
        let from = self.file;
        declared(&self.sk.language)?;
        Some(match self.declared_import(from, imp, 1)? {
            Entity::Files(f) => f,
            Entity::Symbols(v) => v.iter().map(|s| s.file).collect(),
            Entity::Module(m) => self.table.module(self.space, &m).to_vec(),
            _ => Vec::new(),
        })
    }

    /// The local name an import of a declared language binds: its alias, its name, and for
    /// `alias Shop.Inventory` the last segment.
    pub(super) fn declared_binding<'i>(&self, imp: &'i Import) -> Option<&'i str> {
        if let Some(a) = imp.alias.as_deref().or(imp.name.as_deref()) {
            return (!imp.glob || imp.alias.is_some()).then_some(a);
        }
        match self.spec.map(|s| s.imports_name) {
            Some(ImportsName::Definitions) if !imp.glob => imp.path.rsplit('.').next(),
            _ => None,
        }
    }

    /// A name the file does not bind: the top-level definitions of the imported files that
    /// bind no name (`require "a/b"`, `source lib.sh`), then, when the language makes
    /// definitions global, the name inside each enclosing module or class (`Item` in
    /// `module Shop` is `Shop::Item`) and at the top of the repository.
    pub(super) fn declared_unbound(&mut self, h: &str, enclosing: Option<u32>) -> Option<(Entity, Via)> {
        let spec = self.spec?;
        self.deps.name(h);
        if spec.imports_name == ImportsName::Files {
            let sk = self.sk;
            let mut found = Vec::new();
            for imp in sk
                .imports
                .iter()
                .filter(|i| i.alias.is_none() && i.name.is_none())
            {
                let files = self.import_files(self.file, spec, &imp.path);
                found.extend(
                    self.file_members(&files, h)
                        .into_iter()
                        .filter(|s| self.top_level(*s)),
                );
            }
            if !found.is_empty() {
                return Some((Entity::Symbols(found), Via::Import));
            }
        }
        if !spec.unbound_names_global {
            return None;
        }
        let sk = self.sk;
        let mut at = enclosing;
        for _ in 0..64 {
            let Some(i) = at else { break };
            let Some(d) = sk.defs.get(i as usize) else { break };
            if is_type_like(d.kind) || matches!(d.kind, SymbolKind::Module | SymbolKind::Namespace) {
                let full = format!("{}{}{h}", sk.qualified(i), self.sep);
                let v = self.table.qualified(self.space, &full);
                if !v.is_empty() {
                    return Some((Entity::Symbols(v.to_vec()), Via::Scope));
                }
            }
            at = d.parent;
        }
        let v: Vec<SymbolId> = self
            .table
            .qualified(self.space, h)
            .iter()
            .copied()
            .filter(|s| self.top_level(*s))
            .collect();
        (!v.is_empty()).then_some((Entity::Symbols(v), Via::Scope))
    }

    /// `Shop.Inventory.Item.new`, `Foo::Bar.baz`: the longest prefix of a receiver path that
    /// is a definition's full name, and the segments after it.
    pub(super) fn declared_prefix(&mut self, segs: &[&str]) -> Option<(Entity, usize)> {
        let spec = self.spec?;
        if !spec.unbound_names_global && spec.imports_name != ImportsName::Definitions {
            return None;
        }
        for k in (2..=segs.len()).rev() {
            let full = segs[..k].join(self.sep);
            self.deps.name(segs[k - 1]);
            self.deps.name(&full);
            let v = self.table.qualified(self.space, &full);
            if !v.is_empty() {
                return Some((Entity::Symbols(v.to_vec()), k));
            }
        }
        None
    }

    /// Definitions named `name` at the top of `files`, or members of a table or struct
    /// declared at the top (`function M.get()` in a Lua module that returns `M`).
    pub(super) fn file_members(&mut self, files: &[FileId], name: &str) -> Vec<SymbolId> {
        self.deps.name(name);
        let t = self.table;
        let mut v = Vec::new();
        for &f in files {
            self.deps.files.insert(f.0);
            let Some(fsk) = t.file(f) else { continue };
            for (i, d) in fsk.defs.iter().enumerate() {
                if d.name == name && d.parent.is_none() && d.container.len() <= 1 {
                    v.push(SymbolId {
                        file: f,
                        def: i as u32,
                    });
                }
            }
        }
        v
    }

    fn top_level(&self, s: SymbolId) -> bool {
        self.table
            .def(s)
            .is_some_and(|d| d.parent.is_none() && d.container.is_empty())
    }

    /// The files an import path names, by the language's `import_files` candidates: next to
    /// the importing file, at the repository root, then as the end of a path.
    fn import_files(&mut self, from: FileId, spec: &LanguageSpec, path: &str) -> Vec<FileId> {
        let t = self.table;
        let Some(p) = file_path(path) else {
            return Vec::new();
        };
        let dir = t.file(from).map(|f| f.path.parent()).unwrap_or("");
        let slashed = p.replace('.', "/");
        for template in &spec.import_files {
            let cand = template.replace("{path}", p).replace("{slashed}", &slashed);
            let joined = join_relative(dir, &cand);
            self.deps.module(&joined);
            self.deps.module(&cand);
            if let Some(f) = t.path(&joined).or_else(|| t.path(&cand)) {
                return vec![f];
            }
            let name = cand.rsplit('/').next().unwrap_or(&cand);
            self.deps.module(name);
            let suffix = format!("/{}", cand.trim_start_matches("./"));
            let found: Vec<FileId> = t
                .files_named(name)
                .iter()
                .copied()
                .filter(|f| t.file(*f).is_some_and(|s| s.path.as_str().ends_with(&suffix)))
                .collect();
            if !found.is_empty() {
                return found;
            }
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::file_path;

    #[test]
    fn shell_variables_before_the_path_are_cut() {
        assert_eq!(file_path("\"$DIR/lib/util.sh\""), Some("lib/util.sh"));
        assert_eq!(file_path("${BASH_SOURCE%/*}/x.sh"), Some("x.sh"));
        assert_eq!(file_path("a/b"), Some("a/b"));
        assert_eq!(file_path("$(dirname \"$0\")/lib.sh"), Some("lib.sh"));
        assert_eq!(file_path("$CONFIG"), None);
        assert_eq!(file_path("lib/$NAME.sh"), None);
    }
}
