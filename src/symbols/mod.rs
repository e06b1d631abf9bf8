//! Pure data shared by every layer: paths, spans, symbol kinds and the per-file extraction
//! result. No IO, no tree-sitter types: everything here serializes with serde and compares
//! with `==`, which is what the determinism and incremental-vs-full tests rely on.

mod diagnostic;
mod file_id;
mod file_symbols;
mod repo_path;
mod span;
mod symbol_kind;
mod written_name;

pub use diagnostic::{Diagnostic, DiagnosticKind};
pub use file_id::FileId;
pub use file_symbols::{Binding, Definition, FileSymbols, Import, RECORD_VERSION, Reference};
pub use repo_path::{RepoPath, RepoPathError};
pub use span::Span;
pub use symbol_kind::{ReferenceKind, SymbolKind};
pub use written_name::{NAME_SEPARATORS, last_part, with_separator};
