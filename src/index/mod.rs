//! Orchestration and the on-disk store: walk the repository, parse what changed in parallel,
//! and commit a new index generation atomically.
//!
//! Invariants:
//! - `index` owns all disk layout (see [`IndexStore`]); other layers add parts to a generation
//!   through it, never by writing files of their own.
//! - A build never modifies a committed generation: it writes a new one and switches `CURRENT`
//!   with a rename, so a build killed at any moment leaves the previous index readable.
//! - One builder at a time (an OS file lock); readers never take the lock.
//! - The stored result is a function of the tree alone (and, for the history part, of the
//!   commits reachable from `HEAD`): the same at any thread count, and an incremental build
//!   equals a full rebuild of the same tree and history.

mod assembled_generation;
mod build_observer;
mod code_search;
mod coverage;
mod file_fusion;
mod file_stamp;
mod file_table;
mod generation_parts;
mod graph_part;
mod history_part;
mod history_part_writer;
mod index_builder;
mod index_config;
mod index_error;
mod index_snapshot;
mod index_store;
mod index_verifier;
mod manifest;
mod mapped_part;
mod memory_cap;
mod parse_budget;
mod part_links;
mod previous_generation;
mod reader_lease;
mod record_codec;
mod record_columns;
mod repo_walker;
mod row_spill;
mod semantic_index;
mod skip_reason;
mod symbol_lookup;
mod vector_build;
mod vector_rows;
mod vector_store;
mod working_tree_diff;

pub use build_observer::{BothObservers, BuildObserver, NoProgress};
pub use code_search::{
    CodeSearch, FileHit, LineResults, PathWeighing, SearchHit, SearchResults, SearchTarget,
};
pub use coverage::Coverage;
pub use file_fusion::{FusedFile, fuse_files, semantic_files};
pub use file_stamp::{CommitStamps, FileStamp};
pub use file_table::{FileRecord, FileTable, SkippedFile};
pub use generation_parts::{
    GenerationParts, GraphPartEntry, HistoryMissing, HistoryPartEntry, HistoryPartRead, LexicalPartEntry,
    PartEntry, ReferenceCounts, VectorPartEntry,
};
pub use history_part::{
    FileHistory, HistoryError, HistoryPart, HistoryRead, MAX_COMMITS, MAX_FILES_PER_COMMIT,
};
pub use index_builder::{BuildReport, IndexBuilder};
pub use index_config::{CHECKPOINT_MIN_BYTES, IndexConfig, WalkConfig};
pub use index_error::IndexError;
pub use index_snapshot::IndexSnapshot;
pub use index_store::{EncodedRecord, FORMAT_VERSION, IndexStore};
pub use index_verifier::{Damage, IndexVerifier, VerifyReport};
pub use manifest::{BuildStats, LanguageSummary, Manifest, SegmentInfo, Summary};
pub use memory_cap::{CapSource, TIGHT_CAP_MIB, available_mib, default_cap_mib};
pub use repo_walker::{Candidate, Reader, RepoWalker, WalkOutcome};
pub use semantic_index::{SemanticHit, SemanticIndex};
pub use skip_reason::SkipReason;
pub use symbol_lookup::{MatchQuality, SymbolHit, SymbolLookup};
pub use vector_store::VectorStore;
pub use working_tree_diff::WorkingTreeDiff;
