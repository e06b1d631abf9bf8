//! `ShardServer` (`ken serve --fleet`): holds the repositories that rendezvous hashing gives
//! its group, each loaded from its published snapshot into a local cache and replaced when
//! its pointer moves, and answers the group's queries in the group's NATS queue group.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use futures::StreamExt;
use rayon::prelude::*;

use super::{
    FleetBus, FleetError, FleetMetrics, RepoAnswer, RepoPointer, ShardReply, ShardRequest, owner, scatter,
    subject_token,
};
use crate::api::{Operation, Staleness, WatchState, Workspace};
use crate::index::IndexStore;
use crate::remote::SnapshotRemote;

#[derive(Debug, Clone)]
pub struct ShardConfig {
    pub group: String,
    /// Every group of the fleet: the rendezvous hashing's members.
    pub groups: Vec<String>,
    /// This replica's name in answers.
    pub replica: String,
    pub remote: String,
    /// Local snapshot cache, one folder per repository.
    pub cache: PathBuf,
    /// The deadline of queries this server fans out as a root (`POST /v1/fleet/<operation>`).
    pub deadline: Duration,
}

struct Held {
    pointer: RepoPointer,
    ws: Arc<Workspace>,
}

pub struct ShardServer {
    bus: FleetBus,
    config: ShardConfig,
    metrics: Arc<FleetMetrics>,
    held: RwLock<BTreeMap<String, Held>>,
    /// Owned repositories whose snapshot is not loaded yet.
    loading: Mutex<BTreeSet<String>>,
}

impl ShardServer {
    pub fn new(
        bus: FleetBus,
        config: ShardConfig,
        metrics: Arc<FleetMetrics>,
    ) -> Result<Arc<ShardServer>, FleetError> {
        if !config.groups.contains(&config.group) {
            return Err(FleetError::Invalid(format!(
                "--group {} is not one of --groups {}",
                config.group,
                config.groups.join(",")
            )));
        }
        std::fs::create_dir_all(&config.cache).map_err(FleetError::io(&config.cache))?;
        Ok(Arc::new(ShardServer {
            bus,
            config,
            metrics,
            held: RwLock::new(BTreeMap::new()),
            loading: Mutex::new(BTreeSet::new()),
        }))
    }

    fn owns(&self, repo: &str) -> bool {
        owner(repo, &self.config.groups) == Some(self.config.group.as_str())
    }

    /// Loads the owned repositories, then answers queries (and, with `http`, serves
    /// `/metrics` and the root's `POST /v1/fleet/<operation>`, behind whatever `protect`
    /// puts in front of them: the CLI's `HttpGuard`) until the process stops. `ready` is
    /// called once the group's queries are being answered.
    pub async fn run(
        self: Arc<Self>,
        http: Option<SocketAddr>,
        protect: impl FnOnce(axum::Router) -> axum::Router,
        ready: impl FnOnce(usize, Option<SocketAddr>),
    ) -> Result<(), FleetError> {
        let pointers = self.bus.all_pointers().await?;
        let owned: Vec<RepoPointer> = pointers.into_iter().filter(|p| self.owns(&p.repo)).collect();
        if let Ok(mut l) = self.loading.lock() {
            l.extend(owned.iter().map(|p| p.repo.clone()));
        }
        let me = self.clone();
        tokio::task::spawn_blocking(move || {
            owned.par_iter().for_each(|p| me.load(p));
        })
        .await
        .map_err(|e| FleetError::Invalid(format!("loading snapshots failed: {e}")))?;
        let subject = format!("ken.query.{}", self.config.group);
        let mut queries = self
            .bus
            .client()
            .queue_subscribe(subject.clone(), self.config.group.clone())
            .await
            .map_err(|e| FleetError::nats(format!("subscribe to {subject}"))(e.to_string()))?;
        self.bus
            .client()
            .flush()
            .await
            .map_err(|e| FleetError::nats("flush")(e.to_string()))?;
        let watcher = tokio::spawn(self.clone().follow_pointers());
        let bound = match http {
            None => None,
            Some(addr) => {
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .map_err(|e| FleetError::Invalid(format!("cannot listen on {addr}: {e}")))?;
                let local = listener.local_addr().ok();
                let router = protect(self.clone().router());
                tokio::spawn(async move {
                    if let Err(e) = axum::serve(listener, router).await {
                        tracing::warn!(error = %e, "metrics listener stopped");
                    }
                });
                local
            }
        };
        ready(self.held.read().map(|h| h.len()).unwrap_or(0), bound);
        while let Some(msg) = queries.next().await {
            let me = self.clone();
            tokio::spawn(async move {
                let Some(reply) = msg.reply.clone() else { return };
                let answer = me.clone().answer(msg.payload.to_vec()).await;
                let body = serde_json::to_vec(&answer).unwrap_or_default();
                if let Err(e) = me.bus.client().publish(reply, body.into()).await {
                    tracing::warn!(error = %e, "reply not sent");
                }
            });
        }
        watcher.abort();
        Err(FleetError::nats(subject)("the subscription ended".to_string()))
    }

    /// Loads every pointer move of an owned repository (a new commit published).
    async fn follow_pointers(self: Arc<Self>) {
        loop {
            let watch = match self.bus.pointers().await {
                Ok(store) => store.watch_with_history(">").await,
                Err(e) => {
                    tracing::warn!(error = %e, "pointer bucket unavailable");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            let mut watch = match watch {
                Ok(w) => w,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot watch pointers; retrying");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            while let Some(entry) = watch.next().await {
                let Ok(entry) = entry else { break };
                if entry.operation != async_nats::jetstream::kv::Operation::Put {
                    continue;
                }
                let Ok(pointer) = serde_json::from_slice::<RepoPointer>(&entry.value) else {
                    continue;
                };
                if !self.owns(&pointer.repo) {
                    continue;
                }
                let current = self
                    .held
                    .read()
                    .ok()
                    .and_then(|h| h.get(&pointer.repo).map(|x| x.pointer.snapshot.clone()));
                if current.as_deref() == Some(pointer.snapshot.as_str()) {
                    continue;
                }
                let me = self.clone();
                let _ = tokio::task::spawn_blocking(move || me.load(&pointer)).await;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Installs `pointer`'s snapshot into the cache (unless it is there already) and swaps
    /// the repository's workspace. A failure keeps what was held and is logged.
    fn load(&self, pointer: &RepoPointer) {
        match self.try_load(pointer) {
            Ok(ws) => {
                if let Ok(mut h) = self.held.write() {
                    h.insert(
                        pointer.repo.clone(),
                        Held {
                            pointer: pointer.clone(),
                            ws: Arc::new(ws),
                        },
                    );
                    self.metrics.set_repos(h.len());
                }
                if let Ok(mut l) = self.loading.lock() {
                    l.remove(&pointer.repo);
                }
            }
            Err(e) => tracing::warn!(repo = %pointer.repo, error = %e, "snapshot not loaded"),
        }
    }

    /// The snapshot's index in `cache/<token>/index`, and its sources (when it was published
    /// with them) in `cache/<token>/tree-<key hash>`, the workspace's root: read spans,
    /// context packs and literal search show code from there. Without sources the root is
    /// the cache folder and those answers say the file is not there.
    fn try_load(&self, pointer: &RepoPointer) -> Result<Workspace, FleetError> {
        let dir = self.config.cache.join(subject_token(&pointer.repo));
        let index_dir = dir.join("index");
        let marker = dir.join("SNAPSHOT");
        let cached = std::fs::read_to_string(&marker).ok();
        let committed = IndexStore::new(&index_dir).current().ok().flatten().is_some();
        let hit = committed && cached.as_deref() == Some(pointer.snapshot.as_str());
        self.metrics.cache(hit);
        let tree_name = format!(
            "tree-{}",
            &blake3::hash(pointer.snapshot.as_bytes()).to_hex()[..16]
        );
        let tree = dir.join(&tree_name);
        let no_sources = dir.join(format!("{tree_name}.none"));
        let mut remote = None;
        let mut snapshot = None;
        if !hit {
            std::fs::create_dir_all(&dir).map_err(FleetError::io(&dir))?;
            let r = SnapshotRemote::open(&self.config.remote)?;
            let (found, key, _) = r.find(&pointer.repo, std::slice::from_ref(&pointer.commit))?;
            r.install(&index_dir, &found, &key, 0)?;
            let tmp = dir.join("SNAPSHOT.tmp");
            std::fs::write(&tmp, key.as_bytes()).map_err(FleetError::io(&tmp))?;
            std::fs::rename(&tmp, &marker).map_err(FleetError::io(&marker))?;
            snapshot = Some(found);
            remote = Some(r);
        }
        if !tree.is_dir() && !no_sources.exists() {
            let r = match remote {
                Some(r) => r,
                None => SnapshotRemote::open(&self.config.remote)?,
            };
            let found = match snapshot {
                Some(s) => s,
                None => r.find(&pointer.repo, std::slice::from_ref(&pointer.commit))?.0,
            };
            if found.sources.is_empty() {
                std::fs::write(&no_sources, b"").map_err(FleetError::io(&no_sources))?;
            } else {
                r.install_sources(&found, &tree)?;
            }
        }
        prune_trees(&dir, &tree_name);
        let root = if tree.is_dir() { tree } else { dir };
        // A snapshot is a fixed commit: nothing under it changes, so nothing is stale.
        let ws = Workspace::open_at(
            root,
            index_dir,
            Staleness::Watched(Arc::new(WatchState::default())),
        )?;
        ws.analysis().warm(false);
        Ok(ws)
    }

    /// Answers one request over every repository held.
    async fn answer(self: Arc<Self>, body: Vec<u8>) -> ShardReply {
        let t0 = Instant::now();
        let mut reply = ShardReply {
            group: self.config.group.clone(),
            replica: self.config.replica.clone(),
            repos: Vec::new(),
            loading: self
                .loading
                .lock()
                .map(|l| l.iter().cloned().collect())
                .unwrap_or_default(),
            ms: 0,
            error: None,
        };
        let request = match serde_json::from_slice::<ShardRequest>(&body) {
            Ok(r) => r,
            Err(e) => {
                reply.error = Some(format!("unreadable request: {e}"));
                return reply;
            }
        };
        let op = match Operation::from_name(&request.operation) {
            Some(op) if op.read_only() => op,
            Some(_) => {
                reply.error = Some(format!(
                    "{} changes an index: not served by the fleet",
                    request.operation
                ));
                return reply;
            }
            None => {
                reply.error = Some(format!("unknown operation {:?}", request.operation));
                return reply;
            }
        };
        let me = self.clone();
        let repos = tokio::task::spawn_blocking(move || {
            let held: Vec<(String, RepoPointer, Arc<Workspace>)> = match me.held.read() {
                Ok(h) => h
                    .iter()
                    .map(|(r, x)| (r.clone(), x.pointer.clone(), x.ws.clone()))
                    .collect(),
                Err(_) => Vec::new(),
            };
            held.par_iter()
                .map(|(repo, pointer, ws)| {
                    let (answer, error) = match ws.call(op, request.args.clone()) {
                        Ok(v) => (Some(v), None),
                        Err(e) => (None, Some(e.to_string())),
                    };
                    RepoAnswer {
                        repo: repo.clone(),
                        commit: pointer.commit.clone(),
                        group: me.config.group.clone(),
                        answer,
                        error,
                    }
                })
                .collect::<Vec<_>>()
        })
        .await;
        let outcome = match &repos {
            Ok(r) if r.iter().all(|a| a.error.is_none()) => "ok",
            Ok(_) => "repo_error",
            Err(_) => "internal",
        };
        reply.repos = repos.unwrap_or_default();
        reply.ms = t0.elapsed().as_millis() as u64;
        self.metrics.query(op.name(), outcome, t0.elapsed());
        reply
    }

    fn router(self: Arc<Self>) -> axum::Router {
        let me = self.clone();
        let root = axum::routing::post(
            move |axum::extract::Path(operation): axum::extract::Path<String>,
                  axum::Json(args): axum::Json<serde_json::Value>| {
                let me = me.clone();
                async move {
                    let request = ShardRequest { operation, args };
                    match scatter(me.bus.client(), &me.config.groups, &request, me.config.deadline).await {
                        Ok(a) => (
                            axum::http::StatusCode::OK,
                            axum::Json(serde_json::to_value(a).unwrap_or_default()),
                        ),
                        Err(e) => (
                            axum::http::StatusCode::BAD_REQUEST,
                            axum::Json(serde_json::json!({"error": e.to_string()})),
                        ),
                    }
                }
            },
        );
        self.metrics.router().route("/v1/fleet/{operation}", root)
    }
}

/// Removes the source trees of older snapshots in a repository's cache folder, keeping
/// `current` and the newest other one (a query may still be reading the one it replaces).
fn prune_trees(dir: &std::path::Path, current: &str) {
    let mut others: Vec<(std::time::SystemTime, std::path::PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            name.starts_with("tree-") && !name.starts_with(current)
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    others.sort_by_key(|o| std::cmp::Reverse(o.0));
    for (_, p) in others.into_iter().skip(1) {
        let _ = match p.is_dir() {
            true => std::fs::remove_dir_all(&p),
            false => std::fs::remove_file(&p),
        };
    }
}
