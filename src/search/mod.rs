//! Query-time ranking, in one place: what `ken search` and `ken context` both rank by.
//!
//! A [`SearchQuery`] is parsed once (the text cut of pasted environment listings, its filters,
//! the identifiers and paths it names, its kind) and passed down. [`SearchRanker`] gathers
//! candidate files from every signal the index holds (lexical BM25, semantic chunks, exact
//! definitions of a named identifier, paths the query names, the graph walk from the
//! strongest seeds, centrality, commit history and co-change), gives each candidate its
//! [`RankFeatures`], and orders them with the [`LearnedRanker`] (LambdaMART trees shipped in
//! the binary); weighted reciprocal rank fusion stands when the model is turned off
//! (`--ranker fused`) or cannot be read.
//!
//! `context` is this ranking plus graph expansion and packing; `api::search`'s hybrid mode is
//! this ranking plus each file's spans to read. Neither ranks on its own.
//!
//! Invariants:
//! - Reads the index only; never writes, never touches the network, never prints.
//! - Every ranked file says why it was chosen (its rank in each signal) and a ranking names
//!   the signals it could not use.

mod environment_dump;
mod history_signal;
mod learned_ranker;
mod rank_features;
mod search_query;
mod search_ranker;
mod task_mentions;

pub use environment_dump::EnvironmentDump;
pub use history_signal::{HistoryFacts, HistorySignal};
pub use learned_ranker::{LearnedRanker, MODEL_FORMAT, RankerModelError};
pub use rank_features::{FEATURE_NAMES, FileFacts, FileSignals, RankFeatures, path_overlap};
pub use search_query::{QueryKind, SearchQuery};
pub(crate) use search_query::{is_identifier, plain_text};
pub use search_ranker::{
    Ahead, Found, RankedFile, RankedSymbol, RankerKind, RankerParts, Ranking, SearchRanker, Signals, Weights,
    Why,
};
pub use task_mentions::{MentionKind, PathMention, TaskMentions};
