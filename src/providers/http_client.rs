//! JSON over HTTP for the providers: one POST, retried when retrying can help (connection
//! errors, timeouts, HTTP 408/429/5xx) with exponential backoff that honours `Retry-After`;
//! other statuses fail at once with the URL, status and the start of the body.

use std::time::Duration;

use super::ProviderError;

const ATTEMPTS: u32 = 4;
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Largest response body read (a batch of large vectors as JSON text).
const MAX_BODY: u64 = 512 * 1024 * 1024;

/// An agent that returns non-2xx responses instead of erroring (their bodies explain).
pub fn agent(timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .build()
        .into()
}

/// What one attempt came to.
enum Attempt<T> {
    Done(T),
    /// Worth another try, after at least this long.
    Retry(ProviderError, Option<Duration>),
    Fail(ProviderError),
}

/// Runs `attempt` until it is done, fails for good, or has been tried [`ATTEMPTS`] times,
/// with exponential backoff that a `Retry-After` lengthens or shortens.
fn with_retries<T>(mut attempt: impl FnMut() -> Attempt<T>) -> Result<T, ProviderError> {
    let mut wait = FIRST_BACKOFF;
    let mut n = 1;
    loop {
        match attempt() {
            Attempt::Done(v) => return Ok(v),
            Attempt::Fail(e) => return Err(e),
            Attempt::Retry(e, _) if n >= ATTEMPTS => return Err(e),
            Attempt::Retry(e, after) => {
                let pause = after.unwrap_or(wait).min(MAX_BACKOFF);
                tracing::warn!(error = %e, attempt = n, pause_ms = pause.as_millis() as u64, "request failed; retrying");
                std::thread::sleep(pause);
                wait = (wait * 4).min(MAX_BACKOFF);
                n += 1;
            }
        }
    }
}

/// A non-2xx response as an attempt: 408, 429 and 5xx are retried (after `Retry-After` when
/// given), anything else fails at once with the start of the body.
fn status_attempt<T>(url: &str, resp: &mut ureq::http::Response<ureq::Body>) -> Attempt<T> {
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

/// POSTs `body` as JSON (with a bearer `key`), retried; the 2xx response body.
pub fn post_json(
    agent: &ureq::Agent,
    url: &str,
    key: Option<&str>,
    body: &serde_json::Value,
) -> Result<String, ProviderError> {
    let body = body.to_string();
    with_retries(|| {
        let mut req = agent.post(url).header("Content-Type", "application/json");
        if let Some(k) = key {
            req = req.header("Authorization", &format!("Bearer {k}"));
        }
        let mut resp = match req.send(&body) {
            Ok(r) => r,
            Err(e) => return Attempt::Retry(transport(url, e.to_string()), None),
        };
        if !resp.status().is_success() {
            return status_attempt(url, &mut resp);
        }
        match resp.body_mut().with_config().limit(MAX_BODY).read_to_string() {
            Ok(t) => Attempt::Done(t),
            Err(e) => Attempt::Retry(transport(url, format!("reading the response: {e}")), None),
        }
    })
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(super) fn truncate(s: &str, max: usize) -> &str {
    &s[..s.floor_char_boundary(max)]
}

/// POSTs `body` as JSON with `headers` and reads the response as server-sent events, calling
/// `on_event(event, data)` for each as it arrives (a plain JSON reply, from a server asked not
/// to stream, is one event named `json`). Retried like [`post_json`] until the first byte of a
/// 2xx stream; an error inside a stream fails (its events were already handed on).
pub fn post_sse(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(&str, String)],
    body: &serde_json::Value,
    on_event: &mut dyn FnMut(&str, &str),
) -> Result<(), ProviderError> {
    let body = body.to_string();
    with_retries(|| {
        let mut req = agent
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "text/event-stream");
        for (k, v) in headers {
            req = req.header(*k, v.as_str());
        }
        let mut resp = match req.send(&body) {
            Ok(r) => r,
            Err(e) => return Attempt::Retry(transport(url, e.to_string()), None),
        };
        if !resp.status().is_success() {
            return status_attempt(url, &mut resp);
        }
        // A server asked not to stream answers with one JSON body: one event.
        let json = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        let read = match json {
            true => resp
                .body_mut()
                .with_config()
                .limit(MAX_BODY)
                .read_to_string()
                .map(|text| on_event("json", &text))
                .map_err(|e| transport(url, format!("reading the response: {e}"))),
            false => read_events(resp.body_mut().as_reader(), url, on_event),
        };
        match read {
            Ok(()) => Attempt::Done(()),
            Err(e) => Attempt::Fail(e),
        }
    })
}

/// [`post_sse`] with each event's data parsed as JSON (`[DONE]` skipped) and handed to
/// `on_event`, which returns `Err` for an error the stream reports. The first problem — a
/// non-JSON event or a reported error — fails the call, naming the URL.
pub fn post_sse_json(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(&str, String)],
    body: &serde_json::Value,
    on_event: &mut dyn FnMut(&str, &serde_json::Value) -> Result<(), String>,
) -> Result<(), ProviderError> {
    let mut bad: Option<String> = None;
    post_sse(agent, url, headers, body, &mut |event, data| {
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

/// Splits an SSE stream into (event, data) pairs: `data:` lines joined by newlines, the
/// event name from `event:` (default `message`), dispatched at each blank line.
fn read_events(
    reader: impl std::io::Read,
    url: &str,
    on_event: &mut dyn FnMut(&str, &str),
) -> Result<(), ProviderError> {
    use std::io::BufRead;
    let mut event = String::new();
    let mut data = String::new();
    for line in std::io::BufReader::new(reader).lines() {
        let line = line.map_err(|e| ProviderError::Transport {
            url: url.to_string(),
            detail: format!("reading the event stream: {e}"),
        })?;
        let line = line.strip_suffix('\r').unwrap_or(&line);
        if line.is_empty() {
            if !data.is_empty() {
                on_event(if event.is_empty() { "message" } else { &event }, &data);
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
