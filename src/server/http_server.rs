//! `HttpServer`: the JSON API (`POST /v1/<operation>`, `GET /v1/status`, `GET /healthz`) and,
//! with MCP on, the streamable HTTP transport at `/mcp`, behind one guard: the `Host` and
//! `Origin` checks against DNS rebinding, the bearer token, and the body size limit.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::mcp_server::KenMcp;
use super::{ServeConfig, ServerError, ServerMetrics, request_runner};
use crate::api::{ApiError, ErrorBody, Operation, Workspace};

#[derive(Clone)]
struct AppState {
    ws: Arc<Workspace>,
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

fn error_response(status: StatusCode, body: ErrorBody) -> Response {
    (status, axum::Json(serde_json::json!({ "error": body }))).into_response()
}

fn api_error(e: &ApiError) -> Response {
    error_response(status_of(e), e.body())
}

impl HttpServer {
    /// Binds the address (checked by [`ServeConfig::check`] first).
    pub async fn bind(ws: Arc<Workspace>, config: ServeConfig) -> Result<HttpServer, ServerError> {
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
            let handler = KenMcp::new(ws, config.deadline);
            let service: StreamableHttpService<KenMcp, LocalSessionManager> = StreamableHttpService::new(
                move || Ok(handler.clone()),
                Arc::new(LocalSessionManager::default()),
                mcp_config,
            );
            router = router.nest_service("/mcp", service);
        }
        let router = router
            .fallback(not_found)
            .layer(middleware::from_fn_with_state(state.clone(), guard))
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

/// Host names a loopback server answers to (DNS rebinding makes any other name suspect).
fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host
            .rsplit_once(':')
            .map_or(host, |(h, p)| match p.chars().all(|c| c.is_ascii_digit()) {
                true => h,
                false => host,
            }),
    };
    matches!(
        name.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "::1"
    ) || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    loopback_host(rest.trim_end_matches('/'))
}

/// Compares without an early exit, so the token cannot be guessed byte by byte from timing.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let headers: &HeaderMap = request.headers();
    let text = |name: header::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let forbidden = |message: String| {
        error_response(
            StatusCode::FORBIDDEN,
            ErrorBody {
                code: "forbidden",
                message,
            },
        )
    };
    if !state.config.allow_remote {
        let host = text(header::HOST).unwrap_or_default();
        if !loopback_host(&host) {
            return forbidden(format!(
                "Host {host:?} is not a loopback name; this server answers only to localhost (DNS rebinding guard)"
            ));
        }
        if let Some(origin) = text(header::ORIGIN)
            && !loopback_origin(&origin)
        {
            return forbidden(format!("Origin {origin:?} may not call this server"));
        }
    }
    if let Some(token) = &state.config.token
        && request.uri().path() != "/healthz"
    {
        let given = text(header::AUTHORIZATION).unwrap_or_default();
        let ok = given
            .strip_prefix("Bearer ")
            .is_some_and(|t| same_secret(t.trim().as_bytes(), token.as_bytes()));
        if !ok {
            let mut r = error_response(
                StatusCode::UNAUTHORIZED,
                ErrorBody {
                    code: "unauthorized",
                    message: "missing or wrong bearer token (Authorization: Bearer $KEN_SERVE_TOKEN)".into(),
                },
            );
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            return r;
        }
    }
    next.run(request).await
}

async fn healthz(State(state): State<AppState>) -> Response {
    let a = state.ws.analysis();
    axum::Json(serde_json::json!({ "ok": true, "generation": a.generation() })).into_response()
}

async fn status(State(state): State<AppState>) -> Response {
    match request_runner::call(
        &state.ws,
        Operation::IndexStatus,
        serde_json::json!({}),
        state.config.deadline,
    )
    .await
    {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => api_error(&e),
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    let body = ServerMetrics::get().render(&state.ws);
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
    match request_runner::call(&state.ws, op, args, state.config.deadline).await {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => api_error(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_hosts_and_origins_pass() {
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:9",
            "[::1]:80",
            "LOCALHOST",
        ] {
            assert!(loopback_host(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:80",
            "10.0.0.1:80",
            "localhost.evil.example",
            "",
        ] {
            assert!(!loopback_host(bad), "{bad}");
        }
        assert!(loopback_origin("http://localhost:3000"));
        assert!(!loopback_origin("http://evil.example"));
        assert!(!loopback_origin("null"));
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
    }
}
