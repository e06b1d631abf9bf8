//! `FleetBus`: the fleet's NATS connection and the JetStream resources on it — the work
//! queue, the dead-letter stream, the pointer and worker key-value buckets — and the
//! operations on them that workers, servers and `ken fleet` share.

use std::time::Duration;

use async_nats::jetstream::{self, consumer, kv, stream};
use bytes::Bytes;
use futures::StreamExt;
use serde::{Deserialize, Serialize};

use super::{FleetError, NatsTarget, PointerMove, RepoPointer, WorkItem, subject_token};

pub(crate) const WORK_STREAM: &str = "KEN_WORK";
pub(crate) const DEAD_STREAM: &str = "KEN_DEAD";
pub(crate) const WORKERS_CONSUMER: &str = "ken-workers";
const POINTERS_BUCKET: &str = "ken_pointers";
const BEATS_BUCKET: &str = "ken_workers";
/// A worker's heartbeat lives this long unless renewed.
pub(crate) const BEAT_TTL: Duration = Duration::from_secs(30);
/// Exact repeats of a request (same repository, same commit) within this window are dropped.
const DUPLICATE_WINDOW: Duration = Duration::from_secs(120);

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[derive(Clone)]
pub struct FleetBus {
    url: String,
    client: async_nats::Client,
    js: jetstream::Context,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EnqueueReport {
    pub repo: String,
    pub commit: String,
    pub subject: String,
    pub sequence: u64,
    /// The same repository at the same commit was already queued: this request was dropped.
    pub duplicate: bool,
    /// A request for the repository was queued or in progress: this one replaces it.
    pub replaced: bool,
}

/// A worker's heartbeat, in the `ken_workers` bucket (gone `BEAT_TTL` after its last beat).
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorkerBeat {
    pub worker: String,
    /// `idle` or `building`.
    pub state: String,
    pub repo: Option<String>,
    pub commit: Option<String>,
    pub done: u64,
    pub failed: u64,
    pub dead: u64,
    pub started_unix_ms: u64,
    pub beat_unix_ms: u64,
}

/// An item that failed its last attempt, as published on `ken.dead.<token>`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DeadLetter {
    pub item: WorkItem,
    pub attempts: i64,
    pub error: String,
    pub worker: String,
    pub unix_ms: u64,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct QueueState {
    /// Items in the work queue (waiting or being built).
    pub items: u64,
    /// Items not yet delivered to any worker.
    pub waiting: u64,
    /// Items delivered and not yet acknowledged (being built, or held by a dead worker until
    /// its ack wait runs out).
    pub in_progress: usize,
    /// Items delivered more than once.
    pub redelivered: usize,
    pub ack_wait_s: f64,
    pub max_deliver: i64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FleetStatus {
    pub nats: String,
    pub queue: QueueState,
    pub workers: Vec<WorkerBeat>,
    pub pointers: Vec<RepoPointer>,
    pub dead: Vec<DeadLetter>,
}

fn text<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

impl FleetBus {
    /// Connects (reconnecting forever after a drop: a restarted server is picked up again)
    /// and makes sure the streams and buckets exist.
    pub async fn connect(target: &NatsTarget, name: &str) -> Result<FleetBus, FleetError> {
        let client = target.connect(name).await?;
        let js = jetstream::new(client.clone());
        let bus = FleetBus {
            url: target.shown(),
            client,
            js,
        };
        bus.ensure().await?;
        Ok(bus)
    }

    /// The server URL(s), with any user, password or token replaced by `***`.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn client(&self) -> &async_nats::Client {
        &self.client
    }

    async fn ensure(&self) -> Result<(), FleetError> {
        self.js
            .get_or_create_stream(stream::Config {
                name: WORK_STREAM.to_string(),
                description: Some("ken: index repository R at commit C, one subject per repository".into()),
                subjects: vec!["ken.work.*".to_string()],
                retention: stream::RetentionPolicy::WorkQueue,
                max_messages_per_subject: 1,
                discard: stream::DiscardPolicy::Old,
                duplicate_window: DUPLICATE_WINDOW,
                storage: stream::StorageType::File,
                ..Default::default()
            })
            .await
            .map_err(|e| FleetError::nats("the work queue stream")(text(e)))?;
        self.js
            .get_or_create_stream(stream::Config {
                name: DEAD_STREAM.to_string(),
                description: Some("ken: work items that failed their last attempt".into()),
                subjects: vec!["ken.dead.*".to_string()],
                max_messages_per_subject: 10,
                storage: stream::StorageType::File,
                ..Default::default()
            })
            .await
            .map_err(|e| FleetError::nats("the dead-letter stream")(text(e)))?;
        self.pointers().await?;
        self.beats().await?;
        Ok(())
    }

    async fn bucket(&self, name: &str, config: kv::Config) -> Result<kv::Store, FleetError> {
        match self.js.get_key_value(name).await {
            Ok(s) => Ok(s),
            Err(_) => match self.js.create_key_value(config).await {
                Ok(s) => Ok(s),
                // Another process created it in between.
                Err(_) => self
                    .js
                    .get_key_value(name)
                    .await
                    .map_err(|e| FleetError::nats(format!("bucket {name}"))(text(e))),
            },
        }
    }

    pub(crate) async fn pointers(&self) -> Result<kv::Store, FleetError> {
        self.bucket(
            POINTERS_BUCKET,
            kv::Config {
                bucket: POINTERS_BUCKET.to_string(),
                description: "ken: each repository's current published snapshot".to_string(),
                history: 5,
                storage: stream::StorageType::File,
                ..Default::default()
            },
        )
        .await
    }

    async fn beats(&self) -> Result<kv::Store, FleetError> {
        self.bucket(
            BEATS_BUCKET,
            kv::Config {
                bucket: BEATS_BUCKET.to_string(),
                description: "ken: worker heartbeats".to_string(),
                max_age: BEAT_TTL,
                storage: stream::StorageType::Memory,
                ..Default::default()
            },
        )
        .await
    }

    /// The workers' durable pull consumer, created or updated with these settings.
    pub(crate) async fn work_consumer(
        &self,
        ack_wait: Duration,
        max_deliver: i64,
    ) -> Result<consumer::PullConsumer, FleetError> {
        let stream = self
            .js
            .get_stream(WORK_STREAM)
            .await
            .map_err(|e| FleetError::nats("the work queue stream")(text(e)))?;
        stream
            .create_consumer(consumer::pull::Config {
                durable_name: Some(WORKERS_CONSUMER.to_string()),
                description: Some("ken workers".to_string()),
                ack_policy: consumer::AckPolicy::Explicit,
                ack_wait,
                max_deliver,
                max_ack_pending: 10_000,
                ..Default::default()
            })
            .await
            .map_err(|e| FleetError::nats("the workers' consumer")(text(e)))
    }

    /// Queues `item` on its repository's subject.
    pub async fn enqueue(&self, item: &WorkItem) -> Result<EnqueueReport, FleetError> {
        item.check()?;
        let subject = format!("ken.work.{}", subject_token(&item.repo));
        let stream = self
            .js
            .get_stream(WORK_STREAM)
            .await
            .map_err(|e| FleetError::nats("the work queue stream")(text(e)))?;
        let replaced = stream.get_last_raw_message_by_subject(&subject).await.is_ok();
        let body = serde_json::to_vec(item).map_err(|e| FleetError::Item(e.to_string()))?;
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", item.message_id().as_str());
        let ack = self
            .js
            .publish_with_headers(subject.clone(), headers, Bytes::from(body))
            .await
            .map_err(|e| FleetError::nats(format!("publish to {subject}"))(text(e)))?
            .await
            .map_err(|e| FleetError::nats(format!("publish to {subject}"))(text(e)))?;
        Ok(EnqueueReport {
            repo: item.repo.clone(),
            commit: item.commit.clone(),
            subject,
            sequence: ack.sequence,
            duplicate: ack.duplicate,
            replaced: replaced && !ack.duplicate,
        })
    }

    /// Publishes a dead letter on `ken.dead.<token>`.
    pub(crate) async fn dead_letter(&self, letter: &DeadLetter) -> Result<(), FleetError> {
        let subject = format!("ken.dead.{}", subject_token(&letter.item.repo));
        let body = serde_json::to_vec(letter).map_err(|e| FleetError::Item(e.to_string()))?;
        self.js
            .publish(subject.clone(), Bytes::from(body))
            .await
            .map_err(|e| FleetError::nats(format!("publish to {subject}"))(text(e)))?
            .await
            .map_err(|e| FleetError::nats(format!("publish to {subject}"))(text(e)))?;
        Ok(())
    }

    pub async fn pointer(&self, repo: &str) -> Result<Option<RepoPointer>, FleetError> {
        let store = self.pointers().await?;
        let entry = store
            .entry(subject_token(repo))
            .await
            .map_err(|e| FleetError::nats(format!("pointer of {repo}"))(text(e)))?;
        Ok(entry.and_then(|e| decode_pointer(&e)))
    }

    /// Moves `repo`'s pointer to `next` unless it already names that commit or a descendant of
    /// it (`is_ancestor(a, b)`: `a` is an ancestor of `b`). A swap that loses a race is
    /// re-read and retried.
    pub async fn move_pointer(
        &self,
        next: &RepoPointer,
        is_ancestor: impl Fn(&str, &str) -> bool,
    ) -> Result<PointerMove, FleetError> {
        let store = self.pointers().await?;
        let key = subject_token(&next.repo);
        let body = Bytes::from(serde_json::to_vec(next).map_err(|e| FleetError::Item(e.to_string()))?);
        let mut rejected = 0u32;
        loop {
            let entry = store
                .entry(key.clone())
                .await
                .map_err(|e| FleetError::nats(format!("pointer of {}", next.repo))(text(e)))?;
            let current = entry.as_ref().and_then(decode_pointer);
            let result = match (&entry, &current) {
                (Some(e), Some(c)) => {
                    if c.commit == next.commit {
                        return Ok(PointerMove::Already { revision: e.revision });
                    }
                    if is_ancestor(&next.commit, &c.commit) {
                        return Ok(PointerMove::Superseded {
                            current: c.commit.clone(),
                        });
                    }
                    store
                        .update(&key, body.clone(), e.revision)
                        .await
                        .map_err(|e| e.to_string())
                }
                // Absent, deleted, or unreadable: an entry at revision 0 cannot exist, so
                // `create` is the swap (it fails if another writer got there first).
                (Some(e), None) => store
                    .update(&key, body.clone(), e.revision)
                    .await
                    .map_err(|e| e.to_string()),
                (None, _) => store.create(&key, body.clone()).await.map_err(|e| e.to_string()),
            };
            match result {
                Ok(revision) => {
                    return Ok(PointerMove::Moved {
                        revision,
                        swaps_rejected: rejected,
                    });
                }
                Err(detail) if rejected < 16 => {
                    tracing::debug!(repo = %next.repo, %detail, "pointer swap rejected; re-reading");
                    rejected += 1;
                }
                Err(detail) => {
                    return Err(FleetError::Pointer {
                        repo: next.repo.clone(),
                        detail: format!("{rejected} swaps rejected, last: {detail}"),
                    });
                }
            }
        }
    }

    /// A compare-and-swap that fails unless the pointer is still at `revision`.
    pub async fn swap_pointer(&self, next: &RepoPointer, revision: u64) -> Result<u64, FleetError> {
        let store = self.pointers().await?;
        let body = Bytes::from(serde_json::to_vec(next).map_err(|e| FleetError::Item(e.to_string()))?);
        store
            .update(subject_token(&next.repo), body, revision)
            .await
            .map_err(|e| FleetError::Pointer {
                repo: next.repo.clone(),
                detail: format!("swap from revision {revision} rejected: {e}"),
            })
    }

    pub async fn all_pointers(&self) -> Result<Vec<RepoPointer>, FleetError> {
        let store = self.pointers().await?;
        let mut keys = match store.keys().await {
            Ok(k) => k,
            Err(e) => return Err(FleetError::nats("pointer keys")(text(e))),
        };
        let mut names = Vec::new();
        while let Some(k) = keys.next().await {
            if let Ok(k) = k {
                names.push(k);
            }
        }
        let mut out = Vec::new();
        for k in names {
            if let Ok(Some(e)) = store.entry(k).await
                && let Some(p) = decode_pointer(&e)
            {
                out.push(p);
            }
        }
        out.sort_by(|a, b| a.repo.cmp(&b.repo));
        Ok(out)
    }

    pub(crate) async fn beat(&self, beat: &WorkerBeat) -> Result<(), FleetError> {
        let store = self.beats().await?;
        let body = serde_json::to_vec(beat).map_err(|e| FleetError::Item(e.to_string()))?;
        store
            .put(subject_token(&beat.worker), Bytes::from(body))
            .await
            .map_err(|e| FleetError::nats("worker heartbeat")(text(e)))?;
        Ok(())
    }

    /// The work queue's depth and the workers' consumer's view of it.
    pub async fn queue_state(&self) -> Result<QueueState, FleetError> {
        let mut stream = self
            .js
            .get_stream(WORK_STREAM)
            .await
            .map_err(|e| FleetError::nats("the work queue stream")(text(e)))?;
        let items = stream
            .info()
            .await
            .map_err(|e| FleetError::nats("the work queue stream")(text(e)))?
            .state
            .messages;
        let mut queue = QueueState {
            items,
            waiting: items,
            ..QueueState::default()
        };
        if let Ok(mut c) = stream
            .get_consumer::<consumer::pull::Config>(WORKERS_CONSUMER)
            .await
            && let Ok(info) = c.info().await
        {
            queue.waiting = info.num_pending;
            queue.in_progress = info.num_ack_pending;
            queue.redelivered = info.num_redelivered;
            queue.ack_wait_s = info.config.ack_wait.as_secs_f64();
            queue.max_deliver = info.config.max_deliver;
        }
        Ok(queue)
    }

    pub async fn status(&self) -> Result<FleetStatus, FleetError> {
        let queue = self.queue_state().await?;
        let beats = self.beats().await?;
        let mut workers = Vec::new();
        if let Ok(mut keys) = beats.keys().await {
            let mut names = Vec::new();
            while let Some(Ok(k)) = keys.next().await {
                names.push(k);
            }
            for k in names {
                if let Ok(Some(v)) = beats.get(k).await
                    && let Ok(b) = serde_json::from_slice::<WorkerBeat>(&v)
                {
                    workers.push(b);
                }
            }
        }
        workers.sort_by(|a, b| a.worker.cmp(&b.worker));
        Ok(FleetStatus {
            nats: self.url.clone(),
            queue,
            workers,
            pointers: self.all_pointers().await?,
            dead: self.dead_letters().await?,
        })
    }

    /// The latest dead letter of each repository.
    pub async fn dead_letters(&self) -> Result<Vec<DeadLetter>, FleetError> {
        let stream = self
            .js
            .get_stream(DEAD_STREAM)
            .await
            .map_err(|e| FleetError::nats("the dead-letter stream")(text(e)))?;
        let reader = stream
            .create_consumer(consumer::pull::Config {
                deliver_policy: consumer::DeliverPolicy::LastPerSubject,
                filter_subject: "ken.dead.*".to_string(),
                ack_policy: consumer::AckPolicy::None,
                inactive_threshold: Duration::from_secs(30),
                ..Default::default()
            })
            .await
            .map_err(|e| FleetError::nats("reading dead letters")(text(e)))?;
        let mut out = Vec::new();
        let mut batch = reader
            .fetch()
            .max_messages(10_000)
            .messages()
            .await
            .map_err(|e| FleetError::nats("reading dead letters")(text(e)))?;
        while let Some(Ok(m)) = batch.next().await {
            if let Ok(d) = serde_json::from_slice::<DeadLetter>(&m.payload) {
                out.push(d);
            }
        }
        out.sort_by(|a, b| a.item.repo.cmp(&b.item.repo));
        Ok(out)
    }
}

fn decode_pointer(e: &kv::Entry) -> Option<RepoPointer> {
    if e.operation != kv::Operation::Put {
        return None;
    }
    let mut p: RepoPointer = serde_json::from_slice(&e.value).ok()?;
    p.revision = Some(e.revision);
    Some(p)
}
