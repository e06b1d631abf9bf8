//! The language registry: which grammar parses which file, and the compiled tags and imports
//! queries for it, all built from the `grammars/<lang>/` folders embedded at compile time; and
//! the text formats (`grammars/text.toml`) read as docs or config where no grammar applies;
//! and [`PathKind`], the one classifier of test, example, benchmark, docs, generated and
//! vendored files by path.
//!
//! Invariants: the capture vocabulary is closed ([`Capture`]); a query that uses a capture
//! outside it is rejected when the registry is built, and a test builds the registry.

mod capture;
mod implicit_calls;
mod language_registry;
mod language_spec;
mod path_kind;
mod text_formats;

pub use capture::Capture;
pub use implicit_calls::{invoked_implicitly, is_property_decorator};
pub use language_registry::{LangError, LanguageRegistry};
pub use language_spec::{ImportStyle, ImportsName, LanguageQueries, LanguageSpec, TestGlobs};
pub use path_kind::{MODULE_ENTRY_FILES, PathKind, PathRole};
pub use text_formats::{TextFormat, TextFormats, TextKind, TextSection, is_text_path, sections, text_kind};
