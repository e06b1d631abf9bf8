//! Transports over the query layer: MCP on stdio and streamable HTTP (`rmcp`), and the JSON
//! HTTP API (`axum`). Transport only: every answer comes from `api::Workspace`.
//!
//! Invariants:
//! - Loopback by default; another address needs `--allow-remote` and a bearer token.
//! - Every MCP request gets an answer on either transport: one too large
//!   ([`MAX_MCP_MESSAGE_BYTES`] on stdio, `--max-body` over HTTP), nested past
//!   [`MAX_MCP_DEPTH`], not UTF-8, not JSON or with `params` of the wrong shape is refused
//!   with a JSON-RPC error carrying its id when the id can be read (`IncomingMessage`), and the
//!   server goes on.
//! - Every request is independent: it runs on its own blocking thread with a deadline, and a
//!   panic inside it becomes an error answer while the server goes on.
//! - Every operation, on either transport, is counted and timed in `ServerMetrics`
//!   (`GET /metrics`, OpenMetrics text, behind the same guard as the API).
//! - Nothing here prints (stdout is the MCP stdio transport); logs go through `tracing`.

mod http_guard;
mod http_server;
mod incoming_message;
mod mcp_server;
mod message_scan;
mod request_runner;
mod serve_config;
mod serve_lifecycle;
mod server_metrics;
mod stdio_transport;
mod workspace_slot;

pub use http_guard::HttpGuard;
pub use http_server::HttpServer;
pub use incoming_message::{MAX_MCP_DEPTH, MAX_MCP_MESSAGE_BYTES};
pub use mcp_server::{KenMcp, OVERVIEW_URI, STATUS_URI};
pub use serve_config::{ServeConfig, ToolSet, parse_addr};
pub use serve_lifecycle::{ServeHost, ServeLifecycle, ServeNotice};
pub use server_metrics::ServerMetrics;
pub use stdio_transport::StdioTransport;
pub use workspace_slot::{BuildProgress, BuildSnapshot, WorkspaceSlot};

use std::sync::Arc;

use rmcp::ServiceExt;

#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Io(String),
    #[error("the MCP session failed: {0}")]
    Mcp(String),
    /// The workspace could not be opened or watched.
    #[error(transparent)]
    Api(#[from] crate::api::ApiError),
    /// What failed, with the system's reason under it.
    #[error("{context}")]
    Failed {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// MCP over stdin/stdout until the client closes it (or Ctrl-C).
pub async fn serve_stdio(ws: Arc<WorkspaceSlot>, config: &ServeConfig) -> Result<(), ServerError> {
    let service = KenMcp::new(ws, config.deadline, config.tools)
        .serve(StdioTransport::new(tokio::io::stdin(), tokio::io::stdout()))
        .await
        .map_err(|e| ServerError::Mcp(e.to_string()))?;
    tokio::select! {
        r = service.waiting() => r.map(|_| ()).map_err(|e| ServerError::Mcp(e.to_string())),
        _ = http_server::shutdown_signal() => Ok(()),
    }
}
