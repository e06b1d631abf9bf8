//! `LanguageSpec`: one language's grammar, compiled queries and layout conventions.

use tree_sitter::{Language, Query};

use super::Capture;

/// How a language's `@import.path` node is turned into imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportStyle {
    /// One match of `imports.scm` is one import; the captured texts are used as they are.
    Plain,
    /// The captured node is a Rust use-tree (`a::{b as c, d::*}`), flattened into one import
    /// per leaf.
    RustUseTree,
}

pub struct LanguageSpec {
    /// Stable name (`rust`, `python`, `tsx`...), used in the index and in `lang:` filters.
    pub name: String,
    pub extensions: Vec<String>,
    /// The separator of qualified names (`::` for Rust and C++, `.` elsewhere).
    pub separator: String,
    pub import_style: ImportStyle,
    pub grammar: Language,
    pub tags: Query,
    pub imports: Query,
    /// `tags.capture_names()` mapped to the vocabulary, by capture index.
    pub tag_captures: Vec<Capture>,
    pub import_captures: Vec<Capture>,
}

impl std::fmt::Debug for LanguageSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanguageSpec")
            .field("name", &self.name)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}
