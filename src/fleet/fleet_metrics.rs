//! `FleetMetrics`: what a worker or a shard server has done, for Prometheus (`GET /metrics`,
//! OpenMetrics text): items by outcome, retries, build durations, bytes uploaded, queue lag;
//! shard queries by operation and outcome with their latency, snapshot cache hits, and the
//! repositories held.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::agent::AgentLogCollector;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Outcome {
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationOutcome {
    operation: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabel {
    operation: String,
}

fn seconds_histogram() -> Histogram {
    // 1 ms to about 9 minutes.
    Histogram::new(exponential_buckets(0.001, 2.0, 20))
}

pub struct FleetMetrics {
    registry: Mutex<Registry>,
    tasks: Family<Outcome, Counter>,
    retries: Counter,
    build_seconds: Histogram,
    uploaded_bytes: Counter,
    queue_waiting: Gauge,
    queue_in_progress: Gauge,
    queries: Family<OperationOutcome, Counter>,
    query_seconds: Family<OperationLabel, Histogram, fn() -> Histogram>,
    cache: Family<Outcome, Counter>,
    repos: Gauge,
}

impl FleetMetrics {
    pub fn new() -> Arc<FleetMetrics> {
        let mut r = Registry::with_prefix("ken_fleet");
        let m = FleetMetrics {
            registry: Mutex::new(Registry::default()),
            tasks: Family::default(),
            retries: Counter::default(),
            build_seconds: seconds_histogram(),
            uploaded_bytes: Counter::default(),
            queue_waiting: Gauge::default(),
            queue_in_progress: Gauge::default(),
            queries: Family::default(),
            query_seconds: Family::new_with_constructor(seconds_histogram as fn() -> Histogram),
            cache: Family::default(),
            repos: Gauge::default(),
        };
        r.register(
            "tasks",
            "Work items finished, by outcome (done, superseded, failed, dead)",
            m.tasks.clone(),
        );
        r.register(
            "retries",
            "Work items delivered again after a failure or a dead worker",
            m.retries.clone(),
        );
        r.register(
            "build_duration_seconds",
            "Wall time of a work item: checkout, build, publish, pointer move",
            m.build_seconds.clone(),
        );
        r.register(
            "uploaded_bytes",
            "Snapshot bytes sent to object storage",
            m.uploaded_bytes.clone(),
        );
        r.register(
            "queue_waiting",
            "Work items not yet delivered to a worker (the consumer's lag)",
            m.queue_waiting.clone(),
        );
        r.register(
            "queue_in_progress",
            "Work items delivered and not yet acknowledged",
            m.queue_in_progress.clone(),
        );
        r.register(
            "shard_queries",
            "Queries a shard server answered, by operation and outcome",
            m.queries.clone(),
        );
        r.register(
            "shard_query_duration_seconds",
            "Wall time of a shard's answer over all its repositories, by operation",
            m.query_seconds.clone(),
        );
        r.register(
            "snapshot_cache",
            "Snapshots a shard server needed: found in its local cache (hit) or downloaded (miss)",
            m.cache.clone(),
        );
        r.register("repos", "Repositories this shard server holds", m.repos.clone());
        if let Ok(mut reg) = m.registry.lock() {
            *reg = r;
        }
        Arc::new(m)
    }

    pub(crate) fn task(&self, outcome: &str, took: Duration, uploaded: u64) {
        self.tasks
            .get_or_create(&Outcome {
                outcome: outcome.to_string(),
            })
            .inc();
        if outcome == "done" || outcome == "superseded" {
            self.build_seconds.observe(took.as_secs_f64());
        }
        self.uploaded_bytes.inc_by(uploaded);
    }

    pub(crate) fn retry(&self) {
        self.retries.inc();
    }

    pub(crate) fn set_queue(&self, waiting: u64, in_progress: u64) {
        self.queue_waiting.set(waiting as i64);
        self.queue_in_progress.set(in_progress as i64);
    }

    pub(crate) fn query(&self, operation: &str, outcome: &str, took: Duration) {
        self.queries
            .get_or_create(&OperationOutcome {
                operation: operation.to_string(),
                outcome: outcome.to_string(),
            })
            .inc();
        self.query_seconds
            .get_or_create(&OperationLabel {
                operation: operation.to_string(),
            })
            .observe(took.as_secs_f64());
    }

    pub(crate) fn cache(&self, hit: bool) {
        let outcome = match hit {
            true => "hit",
            false => "miss",
        };
        self.cache
            .get_or_create(&Outcome {
                outcome: outcome.to_string(),
            })
            .inc();
    }

    pub(crate) fn set_repos(&self, n: usize) {
        self.repos.set(n as i64);
    }

    /// Also report the agent sessions whose audit logs are under `dir` (`ken_fleet_agent_*`,
    /// read at each scrape).
    pub fn collect_agent_logs(&self, dir: PathBuf) {
        if let Ok(mut registry) = self.registry.lock() {
            registry.register_collector(Box::new(AgentLogCollector::new(dir)));
        }
    }

    /// The OpenMetrics text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        if let Ok(registry) = self.registry.lock()
            && prometheus_client::encoding::text::encode(&mut out, &registry).is_err()
        {
            out.clear();
        }
        out
    }

    /// `GET /metrics` (and `GET /healthz`) for a worker or shard server.
    pub fn router(self: &Arc<Self>) -> axum::Router {
        let m = self.clone();
        axum::Router::new()
            .route(
                "/metrics",
                axum::routing::get(move || {
                    let body = m.encode();
                    async move {
                        (
                            [(
                                axum::http::header::CONTENT_TYPE,
                                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                            )],
                            body,
                        )
                    }
                }),
            )
            .route("/healthz", axum::routing::get(|| async { "ok\n" }))
    }
}
