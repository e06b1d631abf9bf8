//! The code graph: references resolved to definitions with a provenance and a confidence,
//! files and symbols connected in a petgraph graph, and centrality over it.
//!
//! Invariants:
//! - Resolution is a pure function of the file skeletons: the same tree gives the same
//!   graph, incrementally or not, at any thread count.
//! - Ambiguity is data: a reference with several candidates keeps them all (up to
//!   `MAX_TARGETS`, with the full count), marked `name-ambiguous`; nothing is guessed.
//! - Every walk is bounded (re-export chains, base classes, traversals), so cycles and
//!   self-imports terminate.

mod class_bases;
mod code_graph;
mod deps;
mod file_skeleton;
mod graph_layout;
mod graph_query;
mod graph_stream;
mod graph_update;
mod provenance;
mod resolver;
mod symbol_graph;
mod symbol_id;
mod symbol_table;

pub use class_bases::ClassBases;
pub use code_graph::{CodeGraph, FileResolution, GRAPH_VERSION, GraphUpdate};
pub use deps::{DepSet, Deps};
pub use file_skeleton::{BindingNode, DefNode, DefTypes, Family, FileSkeleton, Name, RefNode};
pub use graph_layout::{Flows, GraphBodies, GraphBytes, GraphDecodeError, GraphWritten, StoredBytes};
pub use graph_query::{
    FileDeps, GraphQuery, GraphStats, ImportInfo, LanguageRefs, Lookup, MAX_DEPTH, Reached, Site, SymbolInfo,
    Traversal,
};
pub use graph_stream::{
    FileRest, RESOLVE_BATCH, RESOLVE_REFS_TIGHT, ResolvedWrite, keep_base_refs, resolve_batches,
};
pub use graph_update::GraphDiff;
pub use provenance::Provenance;
pub use resolver::{
    ImportTarget, MAX_TARGETS, Resolution, Resolver, Targets, binding as import_binding, segments,
};
pub use symbol_graph::{Edge, EdgeKind, Node, RankFlows, SymbolGraph};
pub use symbol_id::SymbolId;
pub use symbol_table::{Space, SymbolTable, is_type_like};
