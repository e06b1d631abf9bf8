//! `HttpGuard`: what every HTTP endpoint of Kenning sits behind (`ken serve --http`, and the
//! fleet's shard servers and workers): on a loopback server, only loopback `Host` names and
//! `Origin`s (a DNS-rebinding page cannot reach it); with a token, `Authorization: Bearer`
//! on every request but `/healthz`, compared in constant time.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;

use super::ServerError;
use super::http_server::error_response;
use crate::api::ErrorBody;

#[derive(Debug, Clone, Default)]
pub struct HttpGuard {
    /// Answer any `Host` and `Origin` (the server listens beyond loopback).
    pub allow_remote: bool,
    /// The bearer token every request but `/healthz` must carry.
    pub token: Option<String>,
}

impl HttpGuard {
    /// Refuses a guard that would expose a server listening at `addr` (given as `flag`): a
    /// token under 16 characters; beyond loopback, no --allow-remote, or (`token_required`,
    /// a server that answers queries) no token.
    pub fn check(
        &self,
        flag: &str,
        addr: Option<SocketAddr>,
        token_required: bool,
    ) -> Result<(), ServerError> {
        if self.token.as_ref().is_some_and(|t| t.len() < 16) {
            return Err(ServerError::Config(
                "KEN_SERVE_TOKEN must be at least 16 characters".into(),
            ));
        }
        let Some(addr) = addr else { return Ok(()) };
        if addr.ip().is_loopback() {
            return Ok(());
        }
        match (self.allow_remote, token_required, &self.token) {
            (false, true, _) => Err(ServerError::Config(format!(
                "{flag} {addr} is not a loopback address; serving the repository beyond this machine needs \
                 --allow-remote and a bearer token in KEN_SERVE_TOKEN"
            ))),
            (false, false, _) => Err(ServerError::Config(format!(
                "{flag} {addr}: not a loopback address; pass --allow-remote to listen there"
            ))),
            (true, true, None) => Err(ServerError::Config(format!(
                "{flag} {addr} with --allow-remote needs a bearer token: set KEN_SERVE_TOKEN"
            ))),
            _ => Ok(()),
        }
    }

    /// `router` with the guard in front of every route.
    pub fn protect<S: Clone + Send + Sync + 'static>(&self, router: Router<S>) -> Router<S> {
        router.layer(middleware::from_fn_with_state(Arc::new(self.clone()), guard))
    }
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

async fn guard(State(g): State<Arc<HttpGuard>>, request: Request, next: Next) -> Response {
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
    if !g.allow_remote {
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
    if let Some(token) = &g.token
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
