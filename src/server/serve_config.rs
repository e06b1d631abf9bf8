//! `ServeConfig`: where and how a server listens, checked before anything binds. Loopback by
//! default; any other address needs both `allow_remote` and a bearer token.

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use super::{HttpGuard, ServerError};

#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Serve MCP (at `/mcp` over HTTP, or on stdio without an address).
    pub mcp: bool,
    /// Listen for HTTP here (`None`: MCP on stdio).
    pub http: Option<SocketAddr>,
    pub allow_remote: bool,
    /// Required as `Authorization: Bearer TOKEN` on every request but `/healthz`.
    pub token: Option<String>,
    /// Per request.
    pub deadline: Duration,
    /// Largest request body accepted.
    pub max_body: usize,
    /// The MCP tools listed.
    pub tools: ToolSet,
}

/// Which tools an MCP client is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolSet {
    /// The eight an agent needs (search, context, symbol, callers, refs, impact, read_span,
    /// overview), with short descriptions and lean argument schemas: a tool list of a few
    /// thousand characters, paid by every session.
    #[default]
    Core,
    /// Every tool with its full description and its output schema.
    Full,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            mcp: false,
            http: None,
            allow_remote: false,
            token: None,
            deadline: Duration::from_secs(30),
            max_body: 2 << 20,
            tools: ToolSet::Core,
        }
    }
}

/// `HOST:PORT` as given on the command line (`localhost` resolves to loopback).
pub fn parse_addr(given: &str) -> Result<SocketAddr, ServerError> {
    let bad = |why: String| ServerError::Config(format!("--http {given}: {why}"));
    if let Ok(a) = given.parse::<SocketAddr>() {
        return Ok(a);
    }
    let mut addrs = given
        .to_socket_addrs()
        .map_err(|e| bad(format!("not HOST:PORT ({e})")))?;
    addrs.next().ok_or_else(|| bad("resolves to no address".into()))
}

impl ServeConfig {
    /// Refuses a configuration that would expose the repository.
    pub fn check(&self) -> Result<(), ServerError> {
        self.guard().check("--http", self.http, true)
    }

    /// What every HTTP request passes: the loopback checks unless `allow_remote`, the token.
    pub fn guard(&self) -> HttpGuard {
        HttpGuard {
            allow_remote: self.allow_remote,
            token: self.token.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_addresses_need_both_the_flag_and_a_token() {
        let mut c = ServeConfig {
            http: Some("0.0.0.0:7000".parse().unwrap()),
            ..ServeConfig::default()
        };
        assert!(c.check().is_err());
        c.allow_remote = true;
        assert!(c.check().is_err());
        c.token = Some("short".into());
        assert!(c.check().is_err());
        c.token = Some("0123456789abcdef0123".into());
        assert!(c.check().is_ok());
        let local = ServeConfig {
            http: Some(parse_addr("localhost:0").unwrap()),
            ..ServeConfig::default()
        };
        assert!(local.check().is_ok());
    }
}
