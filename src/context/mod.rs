//! The context builder: what in the repository is relevant to a task (an issue text, a
//! question, a stack trace), ranked from every signal the index holds and packed into a
//! token budget with citations.
//!
//! Invariants:
//! - Reads the index and the working tree; never writes, never touches the network.
//! - Every ranked item says why it was chosen (its rank in each signal), and a pack says what
//!   it left out.

mod change_impact;
mod citations;
mod context_pack;
mod context_ranker;
mod manifest_entry_points;
mod overview;
mod task_mentions;
mod test_commands;
mod unified_diff;

pub use change_impact::{
    Affected, AffectedFile, ChangeKind, ChangedFile, ChangedSymbol, EntryPointHit, Impact, ImpactAnalysis,
    Risk, Step, TestToRun, changed_definitions, is_public,
};
pub use citations::{Citation, find_citations, mark_unverified};
pub use context_pack::{ContextPack, LeftOut, Neighbour, Shown, count_tokens, pack};
pub use context_ranker::{
    ContextRanker, RankedFile, RankedSymbol, RankerParts, Ranking, Signals, Weights, Why,
};
pub use manifest_entry_points::{ENTRY_MANIFESTS, ManifestText, manifest_entry_points};
pub use overview::{Area, AreaEdge, CentralModule, EntryPoint, Overview, area_of};
pub use task_mentions::{MentionKind, PathMention, TaskMentions};
pub use test_commands::TestCommands;
pub use unified_diff::{FileDiff, UnifiedDiff};
