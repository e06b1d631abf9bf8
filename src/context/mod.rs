//! The context builder: what in the repository is relevant to a task (an issue text, a
//! question, a stack trace), as `search`'s ranking expanded along the graph and packed into a
//! token budget with citations; and the repository's overview.
//!
//! Invariants:
//! - Reads the index and the working tree; never writes, never touches the network.
//! - A pack says what it left out; it ranks nothing itself (`search::SearchRanker` does).

mod citations;
mod context_pack;
mod manifest_entry_points;
mod overview;

pub use citations::{Citation, find_citations, mark_unverified};
pub use context_pack::{ContextPack, LeftOut, Neighbour, Shown, count_tokens, pack, warm_token_counter};
pub use manifest_entry_points::{ENTRY_MANIFESTS, ManifestText, manifest_entry_points};
pub use overview::{Area, AreaEdge, CentralModule, EntryPoint, Overview, area_of, entry_points};
