//! `ServerMetrics`: what a running `ken serve` has done, for Prometheus (`GET /metrics`,
//! OpenMetrics text): requests per operation and outcome, their latency, requests in
//! flight, and the generation being served. One per process: the MCP and HTTP transports
//! count into the same families.

use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::api::Workspace;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    operation: String,
    /// `ok`, or the error's code (`invalid_argument`, `deadline_exceeded`, ...).
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    operation: String,
}

fn latency_histogram() -> Histogram {
    // 1 ms to about 33 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

pub struct ServerMetrics {
    registry: Mutex<Registry>,
    requests: Family<OutcomeLabels, Counter>,
    seconds: Family<OperationLabels, Histogram, fn() -> Histogram>,
    in_flight: Gauge,
    generation: Gauge,
    files: Gauge,
    tokens_returned: Family<OperationLabels, Counter>,
    tokens_drawn: Family<OperationLabels, Counter>,
}

static METRICS: LazyLock<ServerMetrics> = LazyLock::new(ServerMetrics::new);

impl ServerMetrics {
    fn new() -> ServerMetrics {
        let mut registry = Registry::with_prefix("ken");
        let requests = Family::<OutcomeLabels, Counter>::default();
        let seconds = Family::<OperationLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        let (in_flight, generation, files) = (Gauge::default(), Gauge::default(), Gauge::default());
        registry.register(
            "requests",
            "Requests answered, by operation and outcome",
            requests.clone(),
        );
        registry.register(
            "request_duration_seconds",
            "Wall time of a request, by operation",
            seconds.clone(),
        );
        registry.register(
            "requests_in_flight",
            "Requests being answered now",
            in_flight.clone(),
        );
        registry.register(
            "index_generation",
            "The index generation being served",
            generation.clone(),
        );
        registry.register(
            "index_files",
            "Files in the generation being served",
            files.clone(),
        );
        let (tokens_returned, tokens_drawn) = (
            Family::<OperationLabels, Counter>::default(),
            Family::<OperationLabels, Counter>::default(),
        );
        registry.register(
            "mcp_tokens_returned",
            "Tokens (cl100k) of the text MCP answers gave the model, by tool",
            tokens_returned.clone(),
        );
        registry.register(
            "mcp_tokens_drawn_from",
            "Tokens (estimated as bytes / 4) of the indexed files those answers drew from, by tool",
            tokens_drawn.clone(),
        );
        ServerMetrics {
            tokens_returned,
            tokens_drawn,
            registry: Mutex::new(registry),
            requests,
            seconds,
            in_flight,
            generation,
            files,
        }
    }

    /// The process's metrics.
    pub fn get() -> &'static ServerMetrics {
        &METRICS
    }

    pub fn started(&self) {
        self.in_flight.inc();
    }

    pub fn finished(&self, operation: &str, outcome: &str, took: Duration) {
        self.in_flight.dec();
        self.requests
            .get_or_create(&OutcomeLabels {
                operation: operation.to_string(),
                outcome: outcome.to_string(),
            })
            .inc();
        self.seconds
            .get_or_create(&OperationLabels {
                operation: operation.to_string(),
            })
            .observe(took.as_secs_f64());
    }

    /// One MCP answer: the tokens it gave the model and those of the files it drew from.
    pub fn answered(&self, operation: &str, returned: u64, drawn: u64) {
        let labels = OperationLabels {
            operation: operation.to_string(),
        };
        self.tokens_returned.get_or_create(&labels).inc_by(returned);
        self.tokens_drawn.get_or_create(&labels).inc_by(drawn);
    }

    /// Also report what `collector` reads at each scrape (the front end passes the agent
    /// sessions' figures, `ken_agent_*`: this layer does not know the agent).
    pub fn add_collector(&self, collector: Box<dyn Collector>) {
        let mut registry = match self.registry.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        registry.register_collector(collector);
    }

    /// The text exposition, with the served generation read now.
    /// (`None`: the first build is still under way; the index gauges keep their last value.)
    pub fn render(&self, ws: Option<&Workspace>) -> String {
        if let Some(ws) = ws {
            let a = ws.analysis();
            self.generation.set(a.generation() as i64);
            self.files.set(a.snapshot().table.files.len() as i64);
        }
        let mut out = String::new();
        let registry = match self.registry.lock() {
            Ok(r) => r,
            Err(poisoned) => poisoned.into_inner(),
        };
        if prometheus_client::encoding::text::encode(&mut out, &registry).is_err() {
            out.clear();
        }
        out
    }
}
