//! What extraction produces for one file: definitions, references, imports, diagnostics.
//!
//! Invariant: everything here depends only on the file's bytes and language, never on other
//! files, so a record can be reused verbatim while the file's content hash is unchanged.
//! Facts that depend on the rest of the repository (a Python module path depends on which
//! `__init__.py` files exist) live in the index's file table and are recomputed every build.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::{Diagnostic, ReferenceKind, Span, SymbolKind};

/// Version of the record layout above; part of the extractor fingerprint, so records written
/// with another layout are re-parsed instead of mis-decoded.
pub const RECORD_VERSION: u32 = 3;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Definition {
    pub kind: SymbolKind,
    pub name: String,
    /// Names of the enclosing containers inside this file, outermost first
    /// (`["Request"]` for `Request.register_hook`, `["inner", "Foo"]` for a method in
    /// `mod inner { impl Foo { .. } }`). The module path is prepended by the index.
    pub container: Vec<String>,
    pub span: Span,
    /// The span of the name identifier.
    pub name_span: Span,
    /// The declaration up to its body, whitespace collapsed (`fn parse(s: &str) -> Ast`).
    pub signature: String,
    /// The doc comment or docstring, markers stripped.
    pub doc: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reference {
    pub kind: ReferenceKind,
    /// The referenced name (`register_hook` in `self.session.register_hook(..)`).
    pub name: String,
    /// The callee expression as written, up to the name (`self.session.register_hook`).
    pub callee: String,
    /// The receiver or qualifying path, if any (`self.session`, `Vec`, `os.path`).
    pub receiver: Option<String>,
    pub span: Span,
    /// The span of the name identifier (where an editor's "go to definition" starts).
    pub name_span: Span,
    /// Index into `FileSymbols::definitions` of the innermost enclosing definition.
    pub enclosing: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Import {
    /// The module path as written (`os.path`, `.models`, `crate::a::b`, `./util`, `fmt`).
    pub path: String,
    /// The imported name, if the import names one (`from x import y` -> `y`).
    pub name: Option<String>,
    /// The local alias (`import numpy as np` -> `np`).
    pub alias: Option<String>,
    /// `from x import *`, `use a::*`, `import a.b.*`.
    pub glob: bool,
    pub line: u32,
}

/// A variable whose type is visible where it is bound: `s = Session()`, `let c = Cache::new()`,
/// `x: Foo = ...`, `Foo x = ...`. Receivers named like it resolve through its type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Binding {
    pub name: String,
    /// The callee of the initializer as written (`requests.Session`, `Cache::new`).
    pub value: Option<String>,
    /// The written type (`Foo`, `a::Bar<T>`).
    pub type_name: Option<String>,
    pub line: u32,
    /// Index into `FileSymbols::definitions` of the innermost enclosing definition.
    pub enclosing: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileSymbols {
    pub definitions: Vec<Definition>,
    pub references: Vec<Reference>,
    pub imports: Vec<Import>,
    pub bindings: Vec<Binding>,
    /// The package a file declares about itself (Java `package a.b;`, Go `package x`).
    pub package: Option<String>,
    pub diagnostics: Vec<Diagnostic>,
}

impl FileSymbols {
    /// A deterministic text rendering for snapshots and query authoring: one line per definition, reference and import, in file order.
    pub fn render(&self, module: &str, sep: &str) -> String {
        let s = self;
        let mut out = String::new();
        let in_def = |i: Option<u32>| {
            i.and_then(|i| s.definitions.get(i as usize))
                .map(|d| d.local_name(sep))
                .unwrap_or_else(|| "-".into())
        };
        if let Some(p) = &s.package {
            let _ = writeln!(out, "package {p}");
        }
        for d in &s.definitions {
            let _ = writeln!(
                out,
                "def {:<9} {} @{}-{} sig={:?}{}",
                d.kind.as_str(),
                d.qualified_name(module, sep),
                d.span.start_line,
                d.span.end_line,
                d.signature,
                d.doc.as_ref().map(|x| format!(" doc={x:?}")).unwrap_or_default()
            );
        }
        for r in &s.references {
            let enclosing = in_def(r.enclosing);
            let _ = writeln!(
                out,
                "ref {:<14} {} @{} callee={:?} receiver={:?} in={}",
                r.kind.as_str(),
                r.name,
                r.span.start_line,
                r.callee,
                r.receiver,
                enclosing
            );
        }
        for i in &s.imports {
            let _ = writeln!(
                out,
                "import @{} path={:?} name={:?} alias={:?}{}",
                i.line,
                i.path,
                i.name,
                i.alias,
                if i.glob { " glob" } else { "" }
            );
        }
        for b in &s.bindings {
            let enclosing = in_def(b.enclosing);
            let _ = writeln!(
                out,
                "binding @{} {} value={:?} type={:?} in={}",
                b.line, b.name, b.value, b.type_name, enclosing
            );
        }
        for d in &s.diagnostics {
            let _ = writeln!(out, "diagnostic {:?} @{} {}", d.kind, d.line, d.message);
        }
        out
    }
}

impl Definition {
    /// `module` + containers + name, joined by the language's separator
    /// (`requests.models.Request.register_hook`, `grep_cli::a::Foo::bar`).
    pub fn qualified_name(&self, module: &str, separator: &str) -> String {
        let mut parts: Vec<&str> = Vec::with_capacity(self.container.len() + 2);
        if !module.is_empty() {
            parts.push(module);
        }
        parts.extend(self.container.iter().map(String::as_str));
        parts.push(&self.name);
        parts.join(separator)
    }

    /// Containers and name without the module (`Request.register_hook`).
    pub fn local_name(&self, separator: &str) -> String {
        self.qualified_name("", separator)
    }
}
