//! The context builder: what in the repository is relevant to a task (an issue text, a
//! question, a stack trace), ranked from every signal the index holds and packed into a
//! token budget with citations.
//!
//! Invariants:
//! - Reads the index and the working tree; never writes, never touches the network.
//! - Every ranked item says why it was chosen (its rank in each signal), and a pack says what
//!   it left out.

mod citations;
mod context_pack;
mod context_ranker;
mod environment_dump;
mod history_signal;
mod learned_ranker;
mod manifest_entry_points;
mod overview;
mod rank_features;
mod task_mentions;

pub use citations::{Citation, find_citations, mark_unverified};
pub use context_pack::{ContextPack, LeftOut, Neighbour, Shown, count_tokens, pack, warm_token_counter};
pub use context_ranker::{
    ContextRanker, RankedFile, RankedSymbol, RankerKind, RankerParts, Ranking, Signals, Weights, Why,
};
pub use environment_dump::EnvironmentDump;
pub use history_signal::{HistoryFacts, HistorySignal};
pub use learned_ranker::{LearnedRanker, MODEL_FORMAT, RankerModelError};
pub use manifest_entry_points::{ENTRY_MANIFESTS, ManifestText, manifest_entry_points};
pub use overview::{Area, AreaEdge, CentralModule, EntryPoint, Overview, area_of, entry_points};
pub use rank_features::{FEATURE_NAMES, FileFacts, FileSignals, RankFeatures, path_overlap};
pub use task_mentions::{MentionKind, PathMention, TaskMentions};
