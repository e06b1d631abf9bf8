//! `ServeLifecycle`: what `ken serve` does once its arguments are read. It opens the index (or,
//! with none yet, answers the handshake at once and builds one in the background), keeps the
//! repository watched, binds the chosen transport and serves until the client or a signal
//! stops it.
//!
//! Invariants:
//! - Nothing here prints: what a person should know goes to the front end as a
//!   [`ServeNotice`], and a first build's progress display is the front end's
//!   ([`ServeHost`]).
//! - An index a build repairs (a first build killed before its commit, a damaged `FORMAT` or
//!   `CURRENT`) is served like no index at all: the handshake now, the build behind it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::{HttpServer, ServeConfig, ServerError, WorkspaceSlot, serve_stdio};
use crate::api::{
    ApiError, BothObservers, BuildObserver, NoProgress, ReindexRequest, RepoWatcher, Staleness, WatchState,
    Workspace,
};

/// A `ken serve` run: the transports and where the index is.
pub struct ServeLifecycle {
    pub config: ServeConfig,
    /// Where to look for the repository and its index (`None`: the current folder).
    pub repo: Option<PathBuf>,
    /// The index's folder, when not the repository's default.
    pub index_dir: Option<PathBuf>,
    /// Keep the index fresh while serving (a file watcher, debounced background builds).
    pub watch: bool,
    pub debounce: Duration,
}

/// What happens while serving, for a person; the front end renders each.
#[derive(Debug, Clone)]
pub enum ServeNotice {
    /// The index cannot be opened but a build repairs it: served as if there were none.
    Repairing {
        root: PathBuf,
        reason: String,
    },
    /// No index: the first build starts while serving.
    FirstBuild {
        root: PathBuf,
    },
    FirstBuildFailed {
        error: String,
    },
    SecondStageFailed {
        error: String,
    },
    NotWatching {
        error: String,
    },
    /// MCP on stdio; `generation`: `None` while the first build is under way.
    ServingStdio {
        root: PathBuf,
        generation: Option<u64>,
    },
    /// HTTP at `addr`, with MCP at `/mcp` when `mcp`.
    ServingHttp {
        root: PathBuf,
        generation: Option<u64>,
        addr: SocketAddr,
        mcp: bool,
    },
}

/// The front end's side of a run.
pub trait ServeHost: Send + Sync {
    /// How a first build shows its progress to a person (hidden when nobody watches).
    fn build_progress(&self) -> Box<dyn BuildObserver>;
    fn notice(&self, notice: ServeNotice);
}

/// Why the index could not be opened, with the repository when it was found.
type NotOpened = (Option<PathBuf>, ApiError);

impl ServeLifecycle {
    /// Opens (or starts building) the index and serves until stopped.
    pub fn run(self, host: Arc<dyn ServeHost>) -> Result<(), ServerError> {
        let staleness = match self.watch {
            false => Staleness::Scan,
            true => Staleness::Watched(Arc::new(WatchState::default())),
        };
        let (root, slot) = match self.open(staleness.clone(), host.as_ref()) {
            Ok((root, ws)) => (root, self.ready(ws)?),
            // No index yet: answer the handshake and the tool list now, build in the background.
            Err((located, ApiError::NotFound(_))) => {
                let root = match located.or_else(|| self.repo.clone()) {
                    Some(r) => r,
                    None => repository_of_current_folder()?,
                };
                let slot = self.build_behind(root.clone(), staleness, host.clone());
                (root, slot)
            }
            Err((_, e)) => return Err(e.into()),
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|source| ServerError::Failed {
                context: "starting the async runtime".into(),
                source,
            })?;
        runtime.block_on(self.serve(&root, slot, host.as_ref()))
    }

    /// The workspace at the index found.
    fn open(&self, staleness: Staleness, host: &dyn ServeHost) -> Result<(PathBuf, Workspace), NotOpened> {
        let (root, index_dir) =
            Workspace::locate(self.repo.as_deref(), self.index_dir.clone()).map_err(|e| (None, e))?;
        match Workspace::open_at(root.clone(), index_dir, staleness) {
            Ok(ws) => Ok((root, ws)),
            Err(ApiError::Index(e)) if e.repaired_by_build() => {
                host.notice(ServeNotice::Repairing {
                    root: root.clone(),
                    reason: e.to_string(),
                });
                Err((Some(root), ApiError::NotFound(e.to_string())))
            }
            Err(e) => Err((None, e)),
        }
    }

    /// A slot holding the opened workspace, warmed and watched.
    fn ready(&self, ws: Workspace) -> Result<Arc<WorkspaceSlot>, ServerError> {
        let ws = Arc::new(ws);
        ws.analysis().warm(true);
        let slot = WorkspaceSlot::ready(ws.clone());
        if self.watch {
            slot.keep(Box::new(RepoWatcher::start(ws, self.debounce)?));
        }
        Ok(slot)
    }

    /// A slot the first build of `root` fills from its own thread.
    fn build_behind(
        &self,
        root: PathBuf,
        staleness: Staleness,
        host: Arc<dyn ServeHost>,
    ) -> Arc<WorkspaceSlot> {
        let slot = WorkspaceSlot::pending();
        let building = slot.clone();
        let (index_dir, watch) = (self.index_dir.clone(), self.watch.then_some(self.debounce));
        std::thread::spawn(move || {
            let progress = building.progress();
            match first_build(&root, index_dir, staleness, host.as_ref(), progress.as_ref()) {
                Ok(ws) => finish_first_build(&building, ws, watch, host.as_ref()),
                Err(e) => {
                    host.notice(ServeNotice::FirstBuildFailed { error: e.clone() });
                    building.fail(e);
                }
            }
        });
        slot
    }

    /// Binds the configured transport and serves until the client or a signal stops it.
    async fn serve(
        &self,
        root: &Path,
        slot: Arc<WorkspaceSlot>,
        host: &dyn ServeHost,
    ) -> Result<(), ServerError> {
        let root = root.to_path_buf();
        if self.config.http.is_none() {
            let generation = generation(&slot);
            host.notice(ServeNotice::ServingStdio { root, generation });
            return serve_stdio(slot, &self.config).await;
        }
        let server = HttpServer::bind(slot.clone(), self.config.clone()).await?;
        let addr = server.local_addr()?;
        host.notice(ServeNotice::ServingHttp {
            root,
            generation: generation(&slot),
            addr,
            mcp: self.config.mcp,
        });
        server.run().await
    }
}

/// The generation being served (`None`: the first build is under way).
fn generation(slot: &WorkspaceSlot) -> Option<u64> {
    slot.now().map(|ws| ws.analysis().generation())
}

/// No index at or above the repository: build the first stage of one at the repository root
/// (symbols and the lexical part), then open it. The error as a person reads it.
fn first_build(
    root: &Path,
    index_dir: Option<PathBuf>,
    staleness: Staleness,
    host: &dyn ServeHost,
    slot_progress: &dyn BuildObserver,
) -> Result<Arc<Workspace>, String> {
    host.notice(ServeNotice::FirstBuild {
        root: root.to_path_buf(),
    });
    let shown = host.build_progress();
    let progress = BothObservers(shown.as_ref(), slot_progress);
    let root = root
        .canonicalize()
        .map_err(|e| format!("cannot index {}: {}", root.display(), causes(&e)))?;
    let report = crate::api::BuildPlan::first_stage(&root, index_dir)
        .run(&progress)
        .map_err(|e| format!("indexing {} failed: {}", root.display(), causes(&e)))?;
    let ws = Workspace::open_at(root, report.index_dir, staleness).map_err(|e| causes(&e))?;
    let ws = Arc::new(ws);
    ws.analysis().warm(false);
    Ok(ws)
}

/// After the first stage: serve it, build the rest behind it, then watch.
fn finish_first_build(
    slot: &WorkspaceSlot,
    ws: Arc<Workspace>,
    watch: Option<Duration>,
    host: &dyn ServeHost,
) {
    // Answers start from symbols and the lexical part; the graph, semantic and history parts
    // follow, and answers say so until then.
    slot.fill(ws.clone());
    match ws.reindex(&ReindexRequest::default(), &NoProgress) {
        Ok(_) => ws.analysis().warm(true),
        Err(e) => host.notice(ServeNotice::SecondStageFailed { error: e.to_string() }),
    }
    if let Some(debounce) = watch {
        match RepoWatcher::start(ws, debounce) {
            Ok(w) => slot.keep(Box::new(w)),
            Err(e) => host.notice(ServeNotice::NotWatching {
                error: format!("{e:#}"),
            }),
        }
    }
}

/// An error and its causes, joined by `: ` (anyhow's alternate form, which the first build's
/// failure was always written in).
fn causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// The repository a server started with no `--repo` and no index serves: the nearest folder
/// at or above the current one holding `.git` (an agent opened in a subfolder), else the
/// current folder. The home folder and `/` are refused: a client that starts its servers there
/// (from a user-scope config) would otherwise index everything under them.
fn repository_of_current_folder() -> Result<PathBuf, ServerError> {
    let cwd = std::env::current_dir().map_err(|source| ServerError::Failed {
        context: "cannot read the current folder".into(),
        source,
    })?;
    let root = cwd
        .ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(&cwd)
        .to_path_buf();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    if root.parent().is_none() || home.as_deref().is_some_and(|h| canon(h) == canon(&root)) {
        return Err(ServerError::Config(format!(
            "ken serve was started in {} with no index and no --repo: refusing to index that whole folder; \
             start the client in a repository, or pass --repo <path>",
            root.display()
        )));
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn causes_are_joined_as_anyhow_writes_them() {
        let outer = || Outer(std::io::Error::other("inner"));
        assert_eq!(causes(&outer()), "outer: inner");
        assert_eq!(causes(&outer()), format!("{:#}", anyhow::Error::new(outer())));
    }
}
