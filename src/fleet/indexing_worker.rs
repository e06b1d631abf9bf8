//! `IndexingWorker`: pulls "index repository R at commit C" from the work queue, builds it
//! incrementally from the last published snapshot, publishes, moves the repository's
//! pointer, then acks. A failure is nak'ed for a later attempt; the last attempt's failure
//! goes to the dead-letter subject.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_nats::jetstream::AckKind;
use futures::StreamExt;
use serde::Serialize;

use super::fleet_bus::now_ms;
use super::{
    DeadLetter, FleetBus, FleetError, FleetMetrics, PointerMove, RepoPointer, WorkItem, WorkerBeat,
    subject_token,
};
use crate::index::{IndexStore, NoProgress};
use crate::remote::{RemoteError, RepoIdentity, SnapshotRemote};

#[derive(Debug, Clone)]
pub struct WorkerConfig {
    pub id: String,
    /// Checkouts and their indexes, one folder per repository, kept between items so the
    /// next build of a repository is incremental.
    pub workdir: PathBuf,
    /// Object storage the snapshots are published to (`s3://bucket/prefix`, `file:///path`).
    pub remote: String,
    /// How long an item stays with a worker without an ack or a progress ack.
    pub ack_wait: Duration,
    /// Attempts before an item goes to the dead-letter subject.
    pub max_attempts: i64,
    /// Delay before a failed item is offered again (times the attempt number).
    pub retry_delay: Duration,
    /// Stop after the queue has been empty this long (benchmarks); `None` runs until killed.
    pub exit_when_idle: Option<Duration>,
}

/// One thing a worker did, for its log (`ken worker` prints one line per event).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct WorkerEvent {
    pub worker: String,
    /// `building`, `done`, `superseded`, `failed` (offered again), `dead` (dead-lettered).
    pub event: String,
    pub repo: String,
    pub commit: String,
    pub attempt: i64,
    pub ms: u64,
    /// Pulled from the nearest published snapshot before building (a first build here).
    pub pulled: Option<String>,
    pub files_parsed: Option<u64>,
    pub uploaded: Option<usize>,
    pub uploaded_bytes: Option<u64>,
    pub pointer: Option<PointerMove>,
    pub error: Option<String>,
}

pub struct IndexingWorker {
    bus: FleetBus,
    config: WorkerConfig,
    metrics: Arc<FleetMetrics>,
    beat: Arc<Mutex<WorkerBeat>>,
}

/// What the blocking part of an item produced.
struct Published {
    snapshot: String,
    files: u64,
    lines: u64,
    parsed: u64,
    uploaded: usize,
    uploaded_bytes: u64,
    pulled: Option<String>,
}

impl IndexingWorker {
    pub fn new(bus: FleetBus, config: WorkerConfig, metrics: Arc<FleetMetrics>) -> IndexingWorker {
        let beat = WorkerBeat {
            worker: config.id.clone(),
            state: "idle".to_string(),
            started_unix_ms: now_ms(),
            ..WorkerBeat::default()
        };
        IndexingWorker {
            bus,
            config,
            metrics,
            beat: Arc::new(Mutex::new(beat)),
        }
    }

    /// Works the queue until killed (or idle for `exit_when_idle`), reporting each event.
    pub async fn run(&self, on_event: impl Fn(&WorkerEvent)) -> Result<(), FleetError> {
        if self.config.max_attempts < 1 {
            return Err(FleetError::Invalid(
                "--max-attempts must be at least 1".to_string(),
            ));
        }
        std::fs::create_dir_all(&self.config.workdir).map_err(FleetError::io(&self.config.workdir))?;
        // One delivery more than the attempts: an item whose every attempt died without an
        // answer is dead-lettered on that extra delivery instead of being left in the queue.
        let consumer = self
            .bus
            .work_consumer(self.config.ack_wait, self.config.max_attempts + 1)
            .await?;
        let beats = self.spawn_heartbeat();
        let mut idle_since = Instant::now();
        let result = loop {
            let batch = consumer
                .batch()
                .max_messages(1)
                .expires(Duration::from_secs(2))
                .messages()
                .await;
            let mut batch = match batch {
                Ok(b) => b,
                Err(e) => {
                    // NATS away (restarting, say): the client reconnects; ask again shortly.
                    tracing::warn!(error = %e, "cannot fetch from the work queue; retrying");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                    continue;
                }
            };
            let mut got = false;
            while let Some(m) = batch.next().await {
                match m {
                    Ok(msg) => {
                        got = true;
                        self.handle(msg, &on_event).await;
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "work queue fetch ended");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        break;
                    }
                }
            }
            match got {
                true => idle_since = Instant::now(),
                false => {
                    if let Some(idle) = self.config.exit_when_idle
                        && idle_since.elapsed() >= idle
                    {
                        break Ok(());
                    }
                }
            }
        };
        beats.abort();
        result
    }

    fn spawn_heartbeat(&self) -> tokio::task::JoinHandle<()> {
        let (bus, beat, metrics) = (self.bus.clone(), self.beat.clone(), self.metrics.clone());
        tokio::spawn(async move {
            loop {
                let now = match beat.lock() {
                    Ok(mut b) => {
                        b.beat_unix_ms = now_ms();
                        b.clone()
                    }
                    Err(_) => return,
                };
                if let Err(e) = bus.beat(&now).await {
                    tracing::debug!(error = %e, "heartbeat not sent");
                }
                if let Ok(q) = bus.queue_state().await {
                    metrics.set_queue(q.waiting, q.in_progress as u64);
                }
                tokio::time::sleep(Duration::from_secs(5)).await;
            }
        })
    }

    fn set_beat(&self, f: impl FnOnce(&mut WorkerBeat)) {
        if let Ok(mut b) = self.beat.lock() {
            f(&mut b);
        }
    }

    async fn handle(&self, msg: async_nats::jetstream::Message, on_event: &impl Fn(&WorkerEvent)) {
        let attempt = msg.info().map_or(1, |i| i.delivered);
        let t0 = Instant::now();
        let item: WorkItem = match serde_json::from_slice::<WorkItem>(&msg.payload)
            .map_err(|e| FleetError::Item(format!("unreadable work item: {e}")))
            .and_then(|i| i.check().map(|_| i))
        {
            Ok(i) => i,
            Err(e) => {
                // Nothing to retry: no attempt can read it.
                let item = WorkItem {
                    repo: msg.subject.to_string(),
                    source: String::new(),
                    commit: String::new(),
                    enqueued_unix_ms: 0,
                };
                self.give_up(&msg, item, attempt, e.to_string(), t0, on_event)
                    .await;
                return;
            }
        };
        let mut event = WorkerEvent {
            worker: self.config.id.clone(),
            event: "building".to_string(),
            repo: item.repo.clone(),
            commit: item.commit.clone(),
            attempt,
            ..WorkerEvent::default()
        };
        if attempt > self.config.max_attempts {
            let error = format!(
                "delivered {attempt} times: every one of {} attempts ended without an answer (a worker died or timed out)",
                self.config.max_attempts
            );
            self.give_up(&msg, item, attempt, error, t0, on_event).await;
            return;
        }
        if attempt > 1 {
            self.metrics.retry();
        }
        on_event(&event);
        self.set_beat(|b| {
            b.state = "building".to_string();
            b.repo = Some(item.repo.clone());
            b.commit = Some(item.commit.clone());
        });
        let keeper = self.keep_alive(&msg);
        let (config, job) = (self.config.clone(), item.clone());
        let built = tokio::task::spawn_blocking(move || build_and_publish(&config, &job))
            .await
            .unwrap_or_else(|e| Err(FleetError::Item(format!("the build task failed: {e}"))));
        let result = match built {
            Ok(p) => self.move_pointer(&item, p).await,
            Err(e) => Err(e),
        };
        keeper.abort();
        event.ms = t0.elapsed().as_millis() as u64;
        match result {
            Ok((p, moved)) => {
                if let Err(e) = msg.double_ack().await {
                    // The item was replaced by a newer request meanwhile, or NATS is away:
                    // the work is published either way, and a redelivery finds it done.
                    tracing::warn!(error = %e, repo = %item.repo, "ack not confirmed");
                }
                event.event = match moved {
                    PointerMove::Superseded { .. } => "superseded",
                    _ => "done",
                }
                .to_string();
                event.pulled = p.pulled;
                event.files_parsed = Some(p.parsed);
                event.uploaded = Some(p.uploaded);
                event.uploaded_bytes = Some(p.uploaded_bytes);
                event.pointer = Some(moved);
                self.metrics.task(&event.event, t0.elapsed(), p.uploaded_bytes);
                self.set_beat(|b| b.done += 1);
            }
            Err(e) if attempt >= self.config.max_attempts => {
                self.give_up(&msg, item, attempt, e.to_string(), t0, on_event)
                    .await;
                self.set_beat(|b| b.state = "idle".to_string());
                return;
            }
            Err(e) => {
                let delay = self.config.retry_delay * (attempt.max(1) as u32);
                if let Err(e) = msg.ack_with(AckKind::Nak(Some(delay))).await {
                    tracing::warn!(error = %e, "nak not sent: the item comes back after its ack wait");
                }
                event.event = "failed".to_string();
                event.error = Some(e.to_string());
                self.metrics.task("failed", t0.elapsed(), 0);
                self.set_beat(|b| b.failed += 1);
            }
        }
        self.set_beat(|b| {
            b.state = "idle".to_string();
            b.repo = None;
            b.commit = None;
        });
        on_event(&event);
    }

    /// Progress acks that keep the item while the build runs; a dead worker sends none.
    fn keep_alive(&self, msg: &async_nats::jetstream::Message) -> tokio::task::JoinHandle<()> {
        let msg = msg.clone();
        let every = (self.config.ack_wait / 3).max(Duration::from_millis(200));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                if let Err(e) = msg.ack_with(AckKind::Progress).await {
                    tracing::debug!(error = %e, "progress ack not sent");
                }
            }
        })
    }

    /// Points the repository at what was just published (unless it names a descendant).
    async fn move_pointer(
        &self,
        item: &WorkItem,
        p: Published,
    ) -> Result<(Published, PointerMove), FleetError> {
        let checkout = self.config.workdir.join(subject_token(&item.repo));
        let pointer = RepoPointer {
            repo: item.repo.clone(),
            commit: item.commit.clone(),
            snapshot: p.snapshot.clone(),
            files: p.files,
            lines: p.lines,
            worker: self.config.id.clone(),
            unix_ms: now_ms(),
            revision: None,
        };
        let moved = self
            .bus
            .move_pointer(&pointer, |a, b| is_ancestor(&checkout, a, b))
            .await?;
        Ok((p, moved))
    }

    async fn give_up(
        &self,
        msg: &async_nats::jetstream::Message,
        item: WorkItem,
        attempt: i64,
        error: String,
        t0: Instant,
        on_event: &impl Fn(&WorkerEvent),
    ) {
        let letter = DeadLetter {
            item: item.clone(),
            attempts: attempt,
            error: error.clone(),
            worker: self.config.id.clone(),
            unix_ms: now_ms(),
        };
        match self.bus.dead_letter(&letter).await {
            // Terminated only once the dead letter is stored: otherwise it comes back.
            Ok(()) => {
                if let Err(e) = msg.ack_with(AckKind::Term).await {
                    tracing::warn!(error = %e, "term not sent");
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, repo = %item.repo, "dead letter not stored; the item stays queued")
            }
        }
        self.metrics.task("dead", t0.elapsed(), 0);
        self.set_beat(|b| b.dead += 1);
        on_event(&WorkerEvent {
            worker: self.config.id.clone(),
            event: "dead".to_string(),
            repo: item.repo,
            commit: item.commit,
            attempt,
            ms: t0.elapsed().as_millis() as u64,
            error: Some(error),
            ..WorkerEvent::default()
        });
    }
}

/// Checks the commit out, brings the index up to date (from the nearest published snapshot on
/// a first build here), and publishes it.
fn build_and_publish(config: &WorkerConfig, item: &WorkItem) -> Result<Published, FleetError> {
    let dir = config.workdir.join(subject_token(&item.repo));
    checkout(item, &dir)?;
    let index_dir = dir.join(".kenning");
    let remote = SnapshotRemote::open(&config.remote)?;
    let mut pulled = None;
    if IndexStore::new(&index_dir).current().ok().flatten().is_none() {
        let commits = RepoIdentity::ancestors(&dir, 100)?;
        match remote.find(&item.repo, &commits) {
            Ok((snapshot, key, behind)) => {
                remote.install(&index_dir, &snapshot, &key, behind)?;
                pulled = Some(key);
            }
            Err(RemoteError::NoSnapshot { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let report = crate::api::BuildPlan::default_for(&dir, None)
        .run(&NoProgress)
        .map_err(|e| FleetError::Source {
            repo: item.repo.clone(),
            detail: format!("indexing failed: {e}"),
        })?;
    // With the sources: shard servers have no checkout, and show code from them.
    let push = remote.push(&index_dir, &item.repo, &item.commit, false, Some(&dir))?;
    Ok(Published {
        snapshot: push.key,
        files: report.manifest.summary.files,
        lines: report.manifest.summary.lines,
        parsed: report.manifest.stats.parsed,
        uploaded: push.uploaded,
        uploaded_bytes: push.uploaded_bytes,
        pulled,
    })
}

fn git(dir: Option<&Path>, args: &[&str]) -> Result<String, String> {
    let mut cmd = Command::new("git");
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    let out = cmd
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    match out.status.success() {
        true => Ok(String::from_utf8_lossy(&out.stdout).trim().to_string()),
        false => Err(format!(
            "git {}: {}",
            args.first().copied().unwrap_or_default(),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

fn has_commit(dir: &Path, commit: &str) -> bool {
    git(Some(dir), &["cat-file", "-e", &format!("{commit}^{{commit}}")]).is_ok()
}

/// `dir` holds `item.source` checked out at `item.commit`, with nothing else in the tree
/// but the index.
fn checkout(item: &WorkItem, dir: &Path) -> Result<(), FleetError> {
    let fail = |detail: String| FleetError::Source {
        repo: item.repo.clone(),
        detail,
    };
    if !dir.join(".git").exists() {
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(FleetError::io(parent))?;
        }
        let path = dir.to_string_lossy().to_string();
        if let Err(e) = git(
            None,
            &["clone", "--quiet", "--no-checkout", "--", &item.source, &path],
        ) {
            let _ = std::fs::remove_dir_all(dir);
            return Err(fail(format!("cannot clone {}: {e}", item.source)));
        }
    }
    if !has_commit(dir, &item.commit) {
        let refs = [
            "fetch",
            "--quiet",
            "--",
            &item.source,
            "+refs/heads/*:refs/remotes/origin/*",
            "+refs/tags/*:refs/tags/*",
        ];
        git(Some(dir), &refs).map_err(|e| fail(format!("cannot fetch from {}: {e}", item.source)))?;
        if !has_commit(dir, &item.commit) {
            // Not on a branch or tag: ask for the commit itself.
            let _ = git(Some(dir), &["fetch", "--quiet", "--", &item.source, &item.commit]);
        }
        if !has_commit(dir, &item.commit) {
            return Err(fail(format!("commit {} is not in {}", item.commit, item.source)));
        }
    }
    git(
        Some(dir),
        &[
            "-c",
            "advice.detachedHead=false",
            "checkout",
            "--quiet",
            "--force",
            "--detach",
            &item.commit,
        ],
    )
    .map_err(fail)?;
    git(Some(dir), &["clean", "-fdqx", "-e", ".kenning"]).map_err(fail)?;
    Ok(())
}

/// `a` is an ancestor of `b` in the checkout at `dir` (false when either is unknown there).
fn is_ancestor(dir: &Path, a: &str, b: &str) -> bool {
    git(Some(dir), &["merge-base", "--is-ancestor", a, b]).is_ok()
}
