//! JSON over HTTP for the providers: one POST, bounded and cancellable, retried when retrying
//! can help (a refused or failed connection, HTTP 408/429/5xx) with exponential backoff that
//! honours `Retry-After`; other statuses fail at once with the URL, status and the start of
//! the body.
//!
//! Invariants:
//! - Every call is bounded: a connect timeout, a read timeout (the longest silence, waiting
//!   for the answer or between two pieces of a stream) and a limit on the whole call, retries
//!   and pauses included, each cut further to the time left to the run's deadline
//!   ([`RunBounds`]). A server that took the request and then said nothing for the whole read
//!   timeout is not asked again: it would only multiply the wait.
//! - Every call is cancellable: the exchange runs on a thread of its own while the caller
//!   waits on it, looking at the bounds every [`TICK`]; on Ctrl-C or the deadline the caller
//!   returns at once and the thread is left to end by its own timeouts (its events go
//!   nowhere). Streamed events are handed to the caller's callback on the caller's thread.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::ProviderError;
use super::run_bounds::{RunBounds, TICK, seconds};

const ATTEMPTS: u32 = 4;
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Largest response body read (a batch of large vectors as JSON text).
const MAX_BODY: u64 = 512 * 1024 * 1024;

/// How long one call may wait.
#[derive(Debug, Clone, Copy)]
pub struct CallLimits {
    /// What a call is, for messages (`model call`, `embedding request`).
    pub what: &'static str,
    /// To open the connection (name lookup, TCP, TLS).
    pub connect: Duration,
    /// The longest silence: waiting for the answer, or between two pieces of it.
    pub read: Duration,
    /// The whole call, retries and their pauses included.
    pub total: Duration,
}

impl CallLimits {
    /// A model's turn: a slow local model may think for minutes before its first byte.
    pub fn model() -> CallLimits {
        CallLimits {
            what: "model call",
            connect: Duration::from_secs(20),
            read: Duration::from_secs(300),
            total: Duration::from_secs(600),
        }
    }
}

/// Posts JSON under [`CallLimits`] and a run's [`RunBounds`].
#[derive(Clone)]
pub struct HttpClient {
    agent: ureq::Agent,
    limits: CallLimits,
    bounds: RunBounds,
}

/// What one attempt came to.
enum Attempt {
    Done,
    /// Worth another try, after at least this long.
    Retry(ProviderError, Option<Duration>),
    Fail(ProviderError),
}

/// What the thread running an exchange tells the caller.
enum Msg {
    /// A server-sent event, or the whole body of a plain reply (as the event `json`).
    Event(String, String),
    End(Attempt),
}

/// One exchange, owned, to move onto its thread.
struct Exchange {
    agent: ureq::Agent,
    url: String,
    headers: Vec<(String, String)>,
    body: String,
    /// Read as server-sent events unless the reply is JSON.
    stream: bool,
    connect: Duration,
    read: Duration,
    /// The whole exchange.
    budget: Duration,
}

impl HttpClient {
    /// A client bounded by `limits` and by this process's [`RunBounds`].
    pub fn new(limits: CallLimits) -> HttpClient {
        // Non-2xx responses come back as responses: their bodies explain.
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        HttpClient {
            agent,
            limits,
            bounds: RunBounds::process(),
        }
    }

    /// The same client under other bounds.
    #[cfg(test)]
    pub fn with_bounds(mut self, bounds: RunBounds) -> HttpClient {
        self.bounds = bounds;
        self
    }

    /// POSTs `body` as JSON (with a bearer `key`), retried; the 2xx response body.
    pub fn post_json(
        &self,
        url: &str,
        key: Option<&str>,
        body: &serde_json::Value,
    ) -> Result<String, ProviderError> {
        let headers: Vec<(&str, String)> = key
            .map(|k| ("Authorization", format!("Bearer {k}")))
            .into_iter()
            .collect();
        let mut text = None;
        self.call(url, &headers, body, false, &mut |_, data| {
            text = Some(data.to_string())
        })?;
        text.ok_or_else(|| transport(url, "no response body".into()))
    }

    /// POSTs `body` as JSON with `headers` and reads the response as server-sent events,
    /// calling `on_event(event, data)` for each as it arrives (a plain JSON reply, from a
    /// server asked not to stream, is one event named `json`). Retried like
    /// [`HttpClient::post_json`] until the first byte of a 2xx stream; an error inside a stream
    /// fails (its events were already handed on).
    pub fn post_sse(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &serde_json::Value,
        on_event: &mut dyn FnMut(&str, &str),
    ) -> Result<(), ProviderError> {
        self.call(url, headers, body, true, on_event)
    }

    /// [`HttpClient::post_sse`] with each event's data parsed as JSON (`[DONE]` skipped) and
    /// handed to `on_event`, which returns `Err` for an error the stream reports. The first
    /// problem — a non-JSON event or a reported error — fails the call, naming the URL.
    pub fn post_sse_json(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &serde_json::Value,
        on_event: &mut dyn FnMut(&str, &serde_json::Value) -> Result<(), String>,
    ) -> Result<(), ProviderError> {
        let mut bad: Option<String> = None;
        self.post_sse(url, headers, body, &mut |event, data| {
            if data.trim() == "[DONE]" || bad.is_some() {
                return;
            }
            let outcome = serde_json::from_str::<serde_json::Value>(data)
                .map_err(|_| format!("an event that is not JSON: {}", truncate(data, 120)))
                .and_then(|v| on_event(event, &v));
            if let Err(detail) = outcome {
                bad = Some(detail);
            }
        })?;
        match bad {
            Some(detail) => Err(ProviderError::Response {
                url: url.to_string(),
                detail,
            }),
            None => Ok(()),
        }
    }

    /// The call: attempts until one is done, one fails for good, [`ATTEMPTS`] were made, or
    /// the bounds end it; exponential backoff between attempts that a `Retry-After` lengthens
    /// or shortens.
    fn call(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &serde_json::Value,
        stream: bool,
        on_event: &mut dyn FnMut(&str, &str),
    ) -> Result<(), ProviderError> {
        let started = Instant::now();
        let mut headers: Vec<(String, String)> =
            headers.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        headers.push(("Content-Type".into(), "application/json".into()));
        if stream {
            headers.push(("Accept".into(), "text/event-stream".into()));
        }
        let body = body.to_string();
        let mut wait = FIRST_BACKOFF;
        let mut n = 1;
        loop {
            let budget = self.budget(url, started)?;
            let exchange = Exchange {
                agent: self.agent.clone(),
                url: url.to_string(),
                headers: headers.clone(),
                body: body.clone(),
                stream,
                connect: self.limits.connect.min(budget),
                read: self.limits.read.min(budget),
                budget,
            };
            match self.wait_on(exchange, on_event) {
                Attempt::Done => return Ok(()),
                Attempt::Fail(e) => return Err(self.explain(url, e)),
                Attempt::Retry(e, _) if n >= ATTEMPTS => return Err(self.explain(url, e)),
                Attempt::Retry(e, after) => {
                    let pause = after.unwrap_or(wait).min(MAX_BACKOFF);
                    // No time left for another try after the pause: this error is the answer.
                    if started.elapsed() + pause >= self.limits.total {
                        return Err(self.explain(url, e));
                    }
                    tracing::warn!(error = %e, attempt = n, pause_ms = pause.as_millis() as u64, "request failed; retrying");
                    self.bounds.sleep(pause, url, self.limits.what)?;
                    wait = (wait * 4).min(MAX_BACKOFF);
                    n += 1;
                }
            }
        }
    }

    /// How long the next attempt may take: what is left of the call's limit and of the run;
    /// `Err` when nothing is.
    fn budget(&self, url: &str, started: Instant) -> Result<Duration, ProviderError> {
        if let Some(e) = self.bounds.stop(url, self.limits.what) {
            return Err(e);
        }
        let left = self.limits.total.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(transport(
                url,
                format!(
                    "the {} took longer than its limit of {} s",
                    self.limits.what,
                    seconds(self.limits.total)
                ),
            ));
        }
        Ok(self.bounds.left().map_or(left, |run| run.min(left)))
    }

    /// A failure as the bounds explain it: an attempt cut by the deadline or an interrupt
    /// says so rather than showing the timeout that cut it.
    fn explain(&self, url: &str, e: ProviderError) -> ProviderError {
        self.bounds.stop(url, self.limits.what).unwrap_or(e)
    }

    /// Runs `exchange` on a thread of its own and waits on it, handing its events to
    /// `on_event`; returns at once when the bounds say stop.
    fn wait_on(&self, exchange: Exchange, on_event: &mut dyn FnMut(&str, &str)) -> Attempt {
        let url = exchange.url.clone();
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("ken-http".into())
            .spawn(move || {
                let end = exchange.run(&tx);
                let _ = tx.send(Msg::End(end));
            });
        if let Err(e) = spawned {
            return Attempt::Fail(transport(&url, format!("cannot start the request's thread: {e}")));
        }
        loop {
            match rx.recv_timeout(TICK) {
                Ok(Msg::Event(event, data)) => on_event(&event, &data),
                Ok(Msg::End(end)) => return end,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Some(e) = self.bounds.stop(&url, self.limits.what) {
                        return Attempt::Fail(e);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Attempt::Fail(transport(&url, "the request ended without an answer".into()));
                }
            }
        }
    }
}

impl Exchange {
    /// One POST and its reply, events sent to `tx` as they come; stops reading once nobody
    /// listens.
    fn run(self, tx: &mpsc::Sender<Msg>) -> Attempt {
        let url = self.url.as_str();
        let mut req = self
            .agent
            .post(url)
            .config()
            .timeout_connect(Some(self.connect))
            .timeout_per_read(Some(self.read))
            .timeout_global(Some(self.budget))
            .build();
        for (k, v) in &self.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let mut resp = match req.send(&self.body) {
            Ok(r) => r,
            Err(e) => return self.failed(e),
        };
        if !resp.status().is_success() {
            return status_attempt(url, &mut resp);
        }
        // A server asked not to stream answers with one JSON body: one event.
        let json = !self.stream
            || resp
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("application/json"));
        let read = match json {
            true => match resp.body_mut().with_config().limit(MAX_BODY).read_to_string() {
                Ok(text) => {
                    let _ = tx.send(Msg::Event("json".into(), text));
                    Ok(())
                }
                Err(e) => Err(e.into_io()),
            },
            false => read_events(resp.body_mut().as_reader(), &mut |event, data| {
                tx.send(Msg::Event(event.to_string(), data.to_string())).is_ok()
            }),
        };
        let Err(e) = read else {
            return Attempt::Done;
        };
        let (detail, timed_out) = self.io_detail(e);
        let e = transport(url, format!("reading the response: {detail}"));
        // A whole body may be asked for again; a stream's events were already handed on.
        match self.stream || timed_out {
            true => Attempt::Fail(e),
            false => Attempt::Retry(e, None),
        }
    }

    /// A failed send: a connection that could not be made is worth another try; silence for
    /// the read timeout, or the exchange's whole budget spent, is not.
    fn failed(&self, e: ureq::Error) -> Attempt {
        use ureq::Timeout;
        let url = self.url.as_str();
        match e {
            ureq::Error::Timeout(Timeout::Connect | Timeout::Resolve) => Attempt::Retry(
                transport(
                    url,
                    format!("could not connect within {} s", seconds(self.connect)),
                ),
                None,
            ),
            ureq::Error::Timeout(Timeout::PerRead | Timeout::RecvResponse) => {
                Attempt::Fail(transport(url, self.silent()))
            }
            ureq::Error::Timeout(_) => Attempt::Fail(transport(
                url,
                format!("no complete answer within {} s", seconds(self.budget)),
            )),
            other => Attempt::Retry(transport(url, other.to_string()), None),
        }
    }

    fn silent(&self) -> String {
        format!(
            "the server took the request but sent nothing for {} s (the read timeout)",
            seconds(self.read)
        )
    }

    /// An error reading the body, a timeout in it said plainly; and whether it was one.
    fn io_detail(&self, e: std::io::Error) -> (String, bool) {
        match ureq::Error::from(e) {
            ureq::Error::Timeout(ureq::Timeout::PerRead) => (self.silent(), true),
            ureq::Error::Timeout(_) => (
                format!("no complete answer within {} s", seconds(self.budget)),
                true,
            ),
            ureq::Error::Io(e) if e.kind() == std::io::ErrorKind::TimedOut => (self.silent(), true),
            other => (other.to_string(), false),
        }
    }
}

/// A non-2xx response as an attempt: 408, 429 and 5xx are retried (after `Retry-After` when
/// given), anything else fails at once with the start of the body.
fn status_attempt(url: &str, resp: &mut ureq::http::Response<ureq::Body>) -> Attempt {
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    let text = resp.body_mut().read_to_string().unwrap_or_default();
    let e = ProviderError::Status {
        url: url.to_string(),
        status,
        body: truncate(text.trim(), 300).to_string(),
    };
    match status {
        408 | 429 | 500..=599 => Attempt::Retry(e, retry_after),
        _ => Attempt::Fail(e),
    }
}

fn transport(url: &str, detail: String) -> ProviderError {
    ProviderError::Transport {
        url: url.to_string(),
        detail,
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(super) fn truncate(s: &str, max: usize) -> &str {
    &s[..s.floor_char_boundary(max)]
}

/// Splits an SSE stream into (event, data) pairs: `data:` lines joined by newlines, the
/// event name from `event:` (default `message`), dispatched at each blank line. Stops early,
/// without error, when `on_event` returns false.
fn read_events(
    reader: impl std::io::Read,
    on_event: &mut dyn FnMut(&str, &str) -> bool,
) -> std::io::Result<()> {
    use std::io::BufRead;
    let mut event = String::new();
    let mut data = String::new();
    for line in std::io::BufReader::new(reader).lines() {
        let line = line?;
        let line = line.strip_suffix('\r').unwrap_or(&line);
        if line.is_empty() {
            if !data.is_empty() && !on_event(if event.is_empty() { "message" } else { &event }, &data) {
                return Ok(());
            }
            event.clear();
            data.clear();
        } else if let Some(v) = line.strip_prefix("event:") {
            event = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(v.strip_prefix(' ').unwrap_or(v));
        }
    }
    if !data.is_empty() {
        on_event(if event.is_empty() { "message" } else { &event }, &data);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::sync::{Arc, Mutex};

    /// A loopback server that accepts every connection, reads the request, sends `reply`
    /// (perhaps nothing) and then keeps the connection open without a word; it counts the
    /// connections.
    fn silent_after(reply: &'static str) -> (String, Arc<Mutex<usize>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/x", listener.local_addr().unwrap());
        let count = Arc::new(Mutex::new(0));
        let seen = Arc::clone(&count);
        std::thread::spawn(move || {
            let mut held: Vec<TcpStream> = Vec::new();
            for mut s in listener.incoming().flatten() {
                *seen.lock().unwrap() += 1;
                let mut buf = [0u8; 4096];
                let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
                let _ = s.read(&mut buf);
                let _ = s.write_all(reply.as_bytes());
                held.push(s);
            }
        });
        (url, count)
    }

    fn client(read_ms: u64, bounds: &RunBounds) -> HttpClient {
        HttpClient::new(CallLimits {
            what: "model call",
            connect: Duration::from_secs(5),
            read: Duration::from_millis(read_ms),
            total: Duration::from_secs(60),
        })
        .with_bounds(bounds.clone())
    }

    #[test]
    fn ctrl_c_ends_a_call_in_flight_within_a_tick() {
        let (url, _) = silent_after("");
        let bounds = RunBounds::default();
        let c = client(30_000, &bounds);
        let later = bounds.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            later.cancel();
        });
        let started = Instant::now();
        let e = c.post_json(&url, None, &serde_json::json!({})).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        assert!(matches!(e, ProviderError::Cancelled { .. }), "{e}");
        assert!(e.to_string().starts_with(&url), "{e}");
        // Nothing new starts once cancelled.
        let again = c.post_json(&url, None, &serde_json::json!({})).unwrap_err();
        assert!(matches!(again, ProviderError::Cancelled { .. }), "{again}");
    }

    #[test]
    fn the_run_deadline_cuts_a_call_in_flight_and_says_so() {
        let (url, _) = silent_after("");
        let bounds = RunBounds::default();
        bounds.set_deadline(Duration::from_millis(500));
        let started = Instant::now();
        let e = client(30_000, &bounds)
            .post_json(&url, None, &serde_json::json!({}))
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_millis(1500),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            e.to_string(),
            format!("{url}: the model call was cut at the run's deadline of 0.5 s")
        );
    }

    #[test]
    fn a_silent_server_fails_at_the_read_timeout_and_is_not_asked_again() {
        let (url, connections) = silent_after("");
        let started = Instant::now();
        let e = client(400, &RunBounds::default())
            .post_json(&url, None, &serde_json::json!({}))
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        assert!(
            e.to_string()
                .contains("sent nothing for 0.4 s (the read timeout)"),
            "{e}"
        );
        assert_eq!(*connections.lock().unwrap(), 1);
    }

    #[test]
    fn a_stream_that_stalls_hands_on_its_events_then_fails_at_the_read_timeout() {
        let (url, _) =
            silent_after("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {\"a\":1}\n\n");
        let mut events = Vec::new();
        let e = client(400, &RunBounds::default())
            .post_sse(&url, &[], &serde_json::json!({}), &mut |_, d| {
                events.push(d.to_string())
            })
            .unwrap_err();
        assert_eq!(events, vec![r#"{"a":1}"#.to_string()]);
        assert!(e.to_string().contains("(the read timeout)"), "{e}");
    }

    #[test]
    fn a_refused_connection_is_retried_while_the_call_limit_allows() {
        // A port nobody listens on: refused at once, retried with backoff, then given up
        // when the call's own limit is spent.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url = format!("http://127.0.0.1:{port}/v1/x");
        let c = HttpClient::new(CallLimits {
            what: "embedding request",
            connect: Duration::from_secs(1),
            read: Duration::from_secs(1),
            total: Duration::from_millis(600),
        })
        .with_bounds(RunBounds::default());
        let started = Instant::now();
        let e = c.post_json(&url, None, &serde_json::json!({})).unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        assert!(e.to_string().starts_with(&url), "{e}");
        assert!(e.to_string().to_lowercase().contains("refused"), "{e}");
    }
}
