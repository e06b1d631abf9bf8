//! The one typed query layer: every front end (the CLI, the MCP and JSON HTTP servers, the
//! agent) asks the index through it. A [`Workspace`] is the host: it opens a repository's
//! index once, holds the current generation as an [`Analysis`] and swaps in new ones after a
//! build; each request runs on the `Analysis` it started with. Requests and responses are
//! plain serde types with JSON schemas; every response carries its coverage and the index
//! generation it was answered from.
//!
//! Invariants:
//! - Nothing here prints; front ends render responses.
//! - `ken X --json` prints exactly the serialized response a server returns for the same
//!   request (tested for every operation).
//! - Paths a request names are confined to the repository (`repo_file`); limits and budgets
//!   are checked here, once, for every front end.

mod analysis;
pub mod answer_text;
mod api_error;
mod build_activity;
mod build_plan;
mod context_ops;
mod graph_ops;
mod impact;
mod index_status;
mod operation;
mod page;
mod private_path;
mod repo_file;
mod repo_watcher;
mod search;
pub mod uses;
mod watch_state;
mod workspace;

pub use analysis::{Analysis, prepare_for_a_query};
pub use api_error::{ApiError, ErrorBody};
pub use build_activity::BuildActivity;
pub use build_plan::{BuildPlan, EmbedderChoice, stored_embedder};
pub use context_ops::{
    AskRequest, AskResponse, ContextRequest, ContextResponse, OverviewRequest, OverviewResponse, SignalsUsed,
};
pub use graph_ops::{
    CallDirection, CallsRequest, CallsResponse, DepsRequest, DepsResponse, GraphStatsRequest,
    GraphStatsResponse, Importer, LookupStatus, RefSite, RefsRequest, RefsResponse, SymbolRequest,
    SymbolResponse,
};
pub use impact::{ImpactRequest, ImpactResponse};
pub use index_status::{FileDiagnostics, IndexStatusRequest, IndexStatusResponse};
pub use operation::{Answer, Operation};
pub use page::{MAX_QUERY_BYTES, MIN_MAX_TOKENS, PageInfo};
pub use private_path::PrivatePath;
pub use repo_file::{ReadSpanRequest, ReadSpanResponse, confined_file, repo_path};
pub use repo_watcher::RepoWatcher;
pub use search::{
    ChunkHit, ChunkSource, FileChunk, SearchFile, SearchMode, SearchRequest, SearchResponse, SearchSignal,
};
pub use watch_state::{RefreshReport, Staleness, WatchState};
pub use workspace::{ReindexRequest, ReindexResponse, Workspace};
// What a transport needs from below the query layer, named here so `server/` imports only
// `api` (and `util`): the token counter its budgets are checked with, and the build observer
// a reindex reports through (and, for a first build behind a server, the two it reports to).
pub use crate::context::count_tokens;
pub use crate::index::{BothObservers, BuildObserver, NoProgress};

/// Runs `work`, its time at debug level (`KEN_LOG=kenning::api=debug`).
pub(crate) fn timed<T>(what: &str, work: impl FnOnce() -> T) -> T {
    let cpu = || {
        nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
            .map(|t| t.tv_sec() as f64 * 1000.0 + t.tv_nsec() as f64 / 1e6)
            .unwrap_or(0.0)
    };
    let (start, cpu0) = (std::time::Instant::now(), cpu());
    let out = work();
    tracing::debug!(
        what,
        ms = start.elapsed().as_secs_f64() * 1000.0,
        cpu_ms = cpu() - cpu0,
        "cold query step"
    );
    out
}
