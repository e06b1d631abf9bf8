//! What extraction produces for one file: definitions, references, imports, diagnostics.
//!
//! Invariant: everything here depends only on the file's bytes and language, never on other
//! files, so a record can be reused verbatim while the file's content hash is unchanged.
//! Facts that depend on the rest of the repository (a Python module path depends on which
//! `__init__.py` files exist) live in the index's file table and are recomputed every build.

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
