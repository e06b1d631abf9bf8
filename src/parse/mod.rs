//! tree-sitter -> per-file symbols. Parsing never fails: a file with syntax errors or invalid
//! UTF-8 yields whatever tree-sitter recovered plus diagnostics, never an error.
//!
//! Invariant: [`FileParser::parse`] is a pure function of (language, bytes); the index relies
//! on it to reuse records of unchanged files and to produce identical output at any thread
//! count. Module paths, which depend on the repository layout, are computed separately by
//! [`ModulePaths`] from the list of files and the manifests (`Cargo.toml`, `go.mod`).

mod doc_comment;
mod file_parser;
mod imports;
mod module_paths;
mod node_text;
mod tags;

pub use file_parser::{FileParser, OVER_CAP_DIAGNOSTIC, ParseLimitHit, ParseLimits};
pub use module_paths::{LayoutFile, ModulePaths};
