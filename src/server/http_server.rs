//! `HttpServer`: the JSON API (`POST /v1/<operation>`, `GET /v1/status`, `GET /healthz`) and,
//! with MCP on, the streamable HTTP transport at `/mcp`, behind one `HttpGuard` (the `Host`
//! and `Origin` checks against DNS rebinding, the bearer token) and the body size limit. An
//! MCP body is read and judged before rmcp sees it (`check_mcp_body`), so a message too large,
//! too deep, not UTF-8, not JSON or with `params` of the wrong shape is answered with a
//! JSON-RPC error (HTTP 400, or 413 over `--max-body`) carrying its id where it can be read.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any_service, get, post};
use futures::StreamExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::incoming_message::{IncomingMessage, Refusal};
use super::mcp_server::KenMcp;
use super::message_scan::MessageScan;
use super::{ServeConfig, ServerError, ServerMetrics, WorkspaceSlot, request_runner};
use crate::api::{ApiError, ErrorBody, Operation};

#[derive(Clone)]
struct AppState {
    ws: Arc<WorkspaceSlot>,
    config: Arc<ServeConfig>,
}

pub struct HttpServer {
    listener: tokio::net::TcpListener,
    router: Router,
    cancel: CancellationToken,
}

fn status_of(e: &ApiError) -> StatusCode {
    match e.code() {
        "invalid_argument" => StatusCode::BAD_REQUEST,
        "path_denied" => StatusCode::FORBIDDEN,
        "not_found" => StatusCode::NOT_FOUND,
        "busy" => StatusCode::CONFLICT,
        "deadline_exceeded" => StatusCode::GATEWAY_TIMEOUT,
        "no_index" | "unavailable" => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

pub(super) fn error_response(status: StatusCode, body: ErrorBody) -> Response {
    (status, axum::Json(serde_json::json!({ "error": body }))).into_response()
}

fn api_error(e: &ApiError) -> Response {
    error_response(status_of(e), e.body())
}

impl HttpServer {
    /// Binds the address (checked by [`ServeConfig::check`] first).
    pub async fn bind(ws: Arc<WorkspaceSlot>, config: ServeConfig) -> Result<HttpServer, ServerError> {
        config.check()?;
        let Some(addr) = config.http else {
            return Err(ServerError::Config("no --http address".into()));
        };
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| ServerError::Config(format!("cannot listen on {addr}: {e}")))?;
        let cancel = CancellationToken::new();
        let state = AppState {
            ws: ws.clone(),
            config: Arc::new(config.clone()),
        };
        let mut router = Router::new()
            .route("/healthz", get(healthz))
            .route("/v1/status", get(status))
            .route("/metrics", get(metrics))
            .route("/v1/{operation}", post(operation))
            .layer(DefaultBodyLimit::max(config.max_body));
        if config.mcp {
            let mut mcp_config = StreamableHttpServerConfig::default()
                .with_max_request_body_bytes(config.max_body)
                .with_cancellation_token(cancel.child_token());
            if config.allow_remote {
                mcp_config = mcp_config.disable_allowed_hosts();
            }
            let handler = KenMcp::new(ws, config.deadline, config.tools);
            let service: StreamableHttpService<KenMcp, LocalSessionManager> = StreamableHttpService::new(
                move || Ok(handler.clone()),
                Arc::new(LocalSessionManager::default()),
                mcp_config,
            );
            let checked =
                any_service(service).layer(middleware::from_fn_with_state(config.max_body, check_mcp_body));
            router = router.nest_service("/mcp", checked);
        }
        let router = config
            .guard()
            .protect(router.fallback(not_found))
            .with_state(state);
        Ok(HttpServer {
            listener,
            router,
            cancel,
        })
    }

    pub fn local_addr(&self) -> Result<SocketAddr, ServerError> {
        self.listener
            .local_addr()
            .map_err(|e| ServerError::Config(format!("the listening address: {e}")))
    }

    /// Serves until Ctrl-C (or SIGTERM).
    pub async fn run(self) -> Result<(), ServerError> {
        let cancel = self.cancel.clone();
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(async move {
                shutdown_signal().await;
                cancel.cancel();
            })
            .await
            .map_err(|e| ServerError::Io(e.to_string()))
    }
}

pub(super) async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(t) => t,
            Err(_) => {
                let _ = ctrl_c.await;
                return;
            }
        };
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

async fn healthz(State(state): State<AppState>) -> Response {
    match state.ws.now() {
        Some(ws) => axum::Json(serde_json::json!({ "ok": true, "generation": ws.analysis().generation() })),
        None => {
            axum::Json(serde_json::json!({ "ok": true, "building": true, "progress": state.ws.building() }))
        }
    }
    .into_response()
}

/// An operation on the workspace once it is there (waiting for a first build up to the
/// deadline).
async fn call(
    state: &AppState,
    op: Operation,
    args: serde_json::Value,
) -> Result<serde_json::Value, ApiError> {
    let ws = state.ws.wait(state.config.deadline).await?;
    request_runner::call(&ws, op, args, state.config.deadline).await
}

async fn status(State(state): State<AppState>) -> Response {
    // While the first build runs, the status is how far it has got.
    if let Some(b) = state.ws.building() {
        return axum::Json(b).into_response();
    }
    match call(&state, Operation::IndexStatus, serde_json::json!({})).await {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => api_error(&e),
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    let body = ServerMetrics::get().render(state.ws.now().as_deref());
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        body,
    )
        .into_response()
}

async fn not_found() -> Response {
    error_response(
        StatusCode::NOT_FOUND,
        ErrorBody {
            code: "not_found",
            message:
                "no such endpoint: POST /v1/<operation>, GET /v1/status, GET /healthz, GET /metrics, /mcp"
                    .into(),
        },
    )
}

/// Bytes of an MCP body past `--max-body` read (and dropped) to find its id and let the
/// client finish sending, so it reads the refusal rather than a reset connection.
const DRAINED_PAST_LIMIT: usize = 64 << 20;

/// An MCP POST body read (within `limit` bytes kept, scanned whole) and judged as stdio judges
/// a line: a message rmcp reads goes on to it, anything else is answered here.
async fn check_mcp_body(State(limit): State<usize>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let mut scan = MessageScan::default();
    let mut kept = Vec::new();
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = match chunk {
            Ok(c) => c,
            Err(e) => return refusal_response(Refusal::unreadable(scan.id(), &e.to_string())),
        };
        scan.feed(&chunk);
        match scan.bytes() <= limit {
            true => kept.extend_from_slice(&chunk),
            false => kept = Vec::new(),
        }
        if scan.bytes() > limit.saturating_add(DRAINED_PAST_LIMIT) {
            break;
        }
    }
    match IncomingMessage::read(&kept, &scan, limit) {
        IncomingMessage::Serve(_) => next.run(Request::from_parts(parts, Body::from(kept))).await,
        IncomingMessage::Drop(why) => refusal_response(Refusal::unreadable(None, &why)),
        IncomingMessage::Refuse(r) => refusal_response(r),
    }
}

/// A refused MCP message's JSON-RPC error as the HTTP answer.
fn refusal_response(r: Refusal) -> Response {
    let status = match r.too_large {
        true => StatusCode::PAYLOAD_TOO_LARGE,
        false => StatusCode::BAD_REQUEST,
    };
    (status, axum::Json(r.message())).into_response()
}

async fn operation(State(state): State<AppState>, Path(name): Path<String>, body: Bytes) -> Response {
    let Some(op) = Operation::from_name(&name) else {
        let names: Vec<&str> = Operation::ALL.iter().map(|o| o.name()).collect();
        return error_response(
            StatusCode::NOT_FOUND,
            ErrorBody {
                code: "not_found",
                message: format!("no operation {name:?}; operations: {}", names.join(", ")),
            },
        );
    };
    let args: serde_json::Value = match body.is_empty() {
        true => serde_json::json!({}),
        false => match serde_json::from_slice(&body) {
            Ok(v @ serde_json::Value::Object(_)) => v,
            Ok(_) => {
                return api_error(&ApiError::invalid(
                    "body",
                    "must be a JSON object of the operation's arguments",
                ));
            }
            Err(e) => return api_error(&ApiError::invalid("body", format!("not JSON: {e}"))),
        },
    };
    match call(&state, op, args).await {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => api_error(&e),
    }
}
