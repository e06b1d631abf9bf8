//! `ken serve`: opens (or first builds) the index, starts the watcher, and runs the chosen
//! transports until stopped.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::args::ServeArgs;
use super::shared::build_default_observed;
use crate::api::{ApiError, RepoWatcher, Staleness, WatchState, Workspace};
use crate::server::{HttpServer, ServeConfig, WorkspaceSlot, parse_addr, serve_stdio};

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
    if let Some(r) = &a.repo
        && !r.is_dir()
    {
        match std::fs::metadata(r) {
            Ok(m) => bail!(
                "--repo {}: {}, not a folder",
                r.display(),
                crate::util::special_kind(&m.file_type())
            ),
            Err(e) => bail!("--repo {}: {e}", r.display()),
        }
    }
    if let Some(dir) = super::exec_commands::agent_sessions_dir() {
        crate::server::ServerMetrics::get().collect_agent_logs(dir);
    }
    let staleness = match a.no_watch {
        true => Staleness::Scan,
        false => Staleness::Watched(Arc::new(WatchState::default())),
    };
    let debounce = Duration::from_millis(a.debounce_ms);
    // An index a build repairs (a first build killed before its commit, a damaged `FORMAT`
    // or `CURRENT`) is served like no index at all: the handshake now, the build behind it.
    let opened = match Workspace::locate(a.repo.as_deref(), a.location.index_dir.clone()) {
        Ok((root, index_dir)) => match Workspace::open_at(root.clone(), index_dir, staleness.clone()) {
            Ok(ws) => Ok((root, ws)),
            Err(ApiError::Index(e)) if e.repaired_by_build() => {
                eprintln!(
                    "the index of {} cannot be opened ({e}); rebuilding it while serving",
                    root.display()
                );
                Err((Some(root), ApiError::NotFound(e.to_string())))
            }
            Err(e) => Err((None, e)),
        },
        Err(e) => Err((None, e)),
    };
    let (root, slot) = match opened {
        Ok((root, ws)) => {
            let ws = Arc::new(ws);
            ws.analysis().warm(true);
            let slot = WorkspaceSlot::ready(ws.clone());
            if !a.no_watch {
                slot.keep(Box::new(RepoWatcher::start(ws, debounce)?));
            }
            (root, slot)
        }
        // No index yet: answer the handshake and the tool list now, build in the background.
        Err((located, ApiError::NotFound(_))) => {
            let root = match located.or_else(|| a.repo.clone()) {
                Some(r) => r,
                None => repository_of_current_folder()?,
            };
            let slot = WorkspaceSlot::pending();
            let (building, index_dir, watch) = (slot.clone(), a.location.index_dir.clone(), !a.no_watch);
            let at = root.clone();
            std::thread::spawn(move || {
                let progress = building.progress();
                match first_build(&at, index_dir, staleness, quiet, progress.as_ref()) {
                    Ok(ws) => {
                        // Answers start from symbols and the lexical part; the graph,
                        // semantic and history parts follow, and answers say so until then.
                        building.fill(ws.clone());
                        match ws.reindex(&crate::api::ReindexRequest::default(), &crate::index::NoProgress) {
                            Ok(_) => ws.analysis().warm(true),
                            Err(e) => eprintln!("warning: the second stage of the first build failed: {e}"),
                        }
                        if watch {
                            match RepoWatcher::start(ws, debounce) {
                                Ok(w) => building.keep(Box::new(w)),
                                Err(e) => eprintln!("warning: not watching the repository: {e:#}"),
                            }
                        }
                    }
                    Err(e) => {
                        eprintln!("error: the first index build failed: {e:#}");
                        building.fail(format!("{e:#}"));
                    }
                }
            });
            (root, slot)
        }
        Err((_, e)) => return Err(e.into()),
    };
    let generation = |slot: &WorkspaceSlot| {
        slot.now().map_or("building its first index".to_string(), |ws| {
            format!("generation {}", ws.analysis().generation())
        })
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        match config.http {
            None => {
                eprintln!(
                    "serving MCP on stdio for {} ({})",
                    root.display(),
                    generation(&slot)
                );
                serve_stdio(slot, &config).await?;
            }
            Some(_) => {
                let server = HttpServer::bind(slot.clone(), config.clone()).await?;
                let addr = server.local_addr()?;
                let what = match config.mcp {
                    true => format!("MCP at http://{addr}/mcp and the JSON API"),
                    false => "the JSON API".to_string(),
                };
                eprintln!("serving {what} for {} ({})", root.display(), generation(&slot));
                eprintln!("listening on http://{addr}");
                server.run().await?;
            }
        }
        Ok::<(), anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The repository a server started with no `--repo` and no index serves: the nearest folder
/// at or above the current one holding `.git` (an agent opened in a subfolder), else the
/// current folder. The home folder and `/` are refused: a client that starts its servers there
/// (from a user-scope config) would otherwise index everything under them.
fn repository_of_current_folder() -> Result<std::path::PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let root = cwd
        .ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(&cwd)
        .to_path_buf();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let canon = |p: &std::path::Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    if root.parent().is_none() || home.as_deref().is_some_and(|h| canon(h) == canon(&root)) {
        bail!(
            "ken serve was started in {} with no index and no --repo: refusing to index that whole folder; \
             start the client in a repository, or pass --repo <path>",
            root.display()
        );
    }
    Ok(root)
}

/// No index at or above the repository: build the first stage of one at the repository root
/// (symbols and the lexical part), then open it as a server does.
fn first_build(
    root: &std::path::Path,
    index_dir: Option<std::path::PathBuf>,
    staleness: Staleness,
    quiet: bool,
    progress: &dyn crate::index::BuildObserver,
) -> Result<Arc<Workspace>> {
    eprintln!("no index for {}: building one while serving", root.display());
    let (root, report) = build_default_observed(root, index_dir, quiet, progress, true)?;
    let ws = Arc::new(Workspace::open_at(root, report.index_dir, staleness)?);
    ws.analysis().warm(false);
    Ok(ws)
}
