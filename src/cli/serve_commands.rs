//! `ken serve`: opens (or first builds) the index, starts the watcher, and runs the chosen
//! transports until stopped.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::args::ServeArgs;
use super::shared::build_default;
use crate::api::{ApiError, RepoWatcher, Staleness, WatchState, Workspace};
use crate::server::{HttpServer, ServeConfig, parse_addr, serve_stdio};

pub fn serve(a: ServeArgs, quiet: bool) -> Result<ExitCode> {
    if a.fleet {
        return super::fleet_commands::serve_fleet(a);
    }
    if !a.mcp && a.http.is_none() {
        bail!(
            "give --mcp (MCP on stdio), --mcp --http ADDR (MCP over HTTP at /mcp) or --http ADDR (the JSON API)"
        );
    }
    if !(a.deadline.is_finite() && a.deadline > 0.0 && a.deadline <= 3600.0) {
        bail!(
            "--deadline must be between 0 and 3600 seconds, not {}",
            a.deadline
        );
    }
    if a.max_body < 1024 {
        bail!("--max-body must be at least 1024 bytes, not {}", a.max_body);
    }
    let config = ServeConfig {
        mcp: a.mcp,
        http: a.http.as_deref().map(parse_addr).transpose()?,
        allow_remote: a.allow_remote,
        token: std::env::var("KEN_SERVE_TOKEN").ok().filter(|t| !t.is_empty()),
        deadline: Duration::from_secs_f64(a.deadline),
        max_body: a.max_body,
        tools: match a.tools {
            super::args::ToolSetArg::Core => crate::server::ToolSet::Core,
            super::args::ToolSetArg::Full => crate::server::ToolSet::Full,
        },
    };
    config.check()?;
    if let Some(dir) = super::exec_commands::agent_sessions_dir() {
        crate::server::ServerMetrics::get().collect_agent_logs(dir);
    }
    let (root, index_dir) = match Workspace::locate(a.repo.as_deref(), a.location.index_dir.clone()) {
        Ok(found) => found,
        Err(ApiError::NotFound(_)) => first_build(&a, quiet)?,
        Err(e) => return Err(e.into()),
    };
    let staleness = match a.no_watch {
        true => Staleness::Scan,
        false => Staleness::Watched(Arc::new(WatchState::default())),
    };
    let ws = Arc::new(Workspace::open_at(root.clone(), index_dir, staleness)?);
    ws.analysis().warm(true);
    let _watcher = match a.no_watch {
        true => None,
        false => Some(RepoWatcher::start(
            ws.clone(),
            Duration::from_millis(a.debounce_ms),
        )?),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        match config.http {
            None => {
                eprintln!(
                    "serving MCP on stdio for {} (generation {})",
                    root.display(),
                    ws.analysis().generation()
                );
                serve_stdio(ws, &config).await?;
            }
            Some(_) => {
                let server = HttpServer::bind(ws.clone(), config.clone()).await?;
                let addr = server.local_addr()?;
                let what = match config.mcp {
                    true => format!("MCP at http://{addr}/mcp and the JSON API"),
                    false => "the JSON API".to_string(),
                };
                eprintln!(
                    "serving {what} for {} (generation {})",
                    root.display(),
                    ws.analysis().generation()
                );
                eprintln!("listening on http://{addr}");
                server.run().await?;
            }
        }
        Ok::<(), anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// No index at or above the repository: build one at the repository root.
fn first_build(a: &ServeArgs, quiet: bool) -> Result<(std::path::PathBuf, std::path::PathBuf)> {
    let root = match &a.repo {
        Some(r) => r.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    eprintln!("no index for {}: building one first", root.display());
    let (root, report) = build_default(&root, a.location.index_dir.clone(), quiet)?;
    Ok((root, report.index_dir))
}
