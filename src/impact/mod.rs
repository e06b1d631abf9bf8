//! Change impact: the blast radius of a diff (the definitions it touches and what depends on
//! them), the tests to run for it (reached through the graph, changed together with it in
//! the history, named after it, or the suites of its package) with their commands, and a
//! risk level with its reasons.
//!
//! Invariants:
//! - Pure over the code graph, the history part and the file records; reads the working tree
//!   only for test attributes and manifests; never writes.
//! - Every test listed says how it was found (`found_by`).

mod blast_radius;
mod changed_symbol;
mod data_cases;
mod impact_analysis;
mod pytest_fixtures;
mod risk;
mod test_commands;
mod test_files;
mod test_selection;
mod unified_diff;

pub use blast_radius::{Affected, AffectedFile, EntryPointHit, Step};
pub use changed_symbol::{ChangeKind, ChangedFile, ChangedSymbol, changed_definitions, is_public};
pub use impact_analysis::{Impact, ImpactAnalysis};
pub use risk::Risk;
pub use test_commands::TestCommands;
pub use test_selection::TestToRun;
pub use unified_diff::{FileDiff, UnifiedDiff};
