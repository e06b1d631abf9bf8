//! Change impact: the blast radius of a diff (the definitions it touches and what depends on
//! them), the tests to run for it (reached through the graph, changed together with it in
//! the history, named after it, or the suites of its package) with their commands, and a
//! risk level with its reasons.
//!
//! Invariants:
//! - Pure over the code graph, the history part and the file records; reads the working tree
//!   only for test attributes and manifests; never writes.
//! - Every test listed says how it was found (`found_by`).

mod change_impact;
mod data_cases;
mod test_commands;
mod test_files;
mod unified_diff;

pub use change_impact::{
    Affected, AffectedFile, ChangeKind, ChangedFile, ChangedSymbol, EntryPointHit, Impact, ImpactAnalysis,
    Risk, Step, TestToRun, changed_definitions, is_public,
};
pub use test_commands::TestCommands;
pub use unified_diff::{FileDiff, UnifiedDiff};
