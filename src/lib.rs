//! Kenning indexes very large codebases and tells a coding agent, or a person, what matters
//! for a task.
//!
//! Layers, each importing only from the ones before it (checked by `tests/architecture.rs`):
//! `util < symbols < lang < parse < {graph, lexical, vector} < index < search < context <
//! impact < {providers, remote} < api < exec < agent < {server, fleet} < cli`. See `ARCHITECTURE.md` for the map and the
//! invariants. The small facade below is what `tests/` and `benches/` use.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod agent;
pub mod api;
pub mod cli;
pub mod context;
pub mod exec;
pub mod fleet;
pub mod graph;
pub mod impact;
pub mod index;
pub mod lang;
pub mod lexical;
pub mod parse;
pub mod providers;
pub mod remote;
pub mod search;
pub mod server;
pub mod symbols;
pub mod util;
pub mod vector;

pub use index::{
    BuildReport, IndexBuilder, IndexConfig, IndexError, IndexSnapshot, NoProgress, SymbolLookup, WalkConfig,
};
pub use lang::LanguageRegistry;
pub use parse::FileParser;
pub use symbols::{FileSymbols, RepoPath};
