//! Runs one request off the async threads, with a deadline, and turns a panic inside it into
//! an error answer: every request a server handles is independent, and the server goes on.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use super::ServerMetrics;
use crate::api::{Answer, ApiError, Operation, Workspace};

/// `f` on a blocking thread; its panic or a missed deadline becomes an error. A request that
/// misses its deadline finishes in the background and its answer is dropped.
pub async fn guarded<T, F>(what: &str, deadline: Duration, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ApiError> + Send + 'static,
{
    let task = tokio::task::spawn_blocking(move || std::panic::catch_unwind(AssertUnwindSafe(f)));
    match tokio::time::timeout(deadline, task).await {
        Err(_) => Err(ApiError::Deadline(format!(
            "{what} did not finish within the {:.1} s deadline",
            deadline.as_secs_f64()
        ))),
        Ok(Err(e)) => Err(ApiError::Internal(format!("{what}: the worker failed: {e}"))),
        Ok(Ok(Err(panic))) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            tracing::error!("{what} panicked: {msg}");
            Err(ApiError::Internal(format!(
                "{what} failed inside the server ({msg}); the server goes on"
            )))
        }
        Ok(Ok(Ok(r))) => r,
    }
}

/// One operation on the workspace's current generation, as JSON.
pub async fn call(
    ws: &Arc<Workspace>,
    op: Operation,
    args: serde_json::Value,
    deadline: Duration,
) -> Result<serde_json::Value, ApiError> {
    answer(ws, op, args, deadline).await?.to_json()
}

/// One operation on the workspace's current generation, typed.
pub async fn answer(
    ws: &Arc<Workspace>,
    op: Operation,
    args: serde_json::Value,
    deadline: Duration,
) -> Result<Answer, ApiError> {
    let ws = ws.clone();
    let metrics = ServerMetrics::get();
    metrics.started();
    let t0 = std::time::Instant::now();
    let r = guarded(op.name(), deadline, move || ws.answer(op, args)).await;
    let outcome = match &r {
        Ok(_) => "ok",
        Err(e) => e.code(),
    };
    metrics.finished(op.name(), outcome, t0.elapsed());
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    #[allow(clippy::panic)]
    fn a_panicking_request_becomes_an_error_and_the_next_one_is_answered() {
        let rt = runtime();
        let r: Result<u32, ApiError> =
            rt.block_on(guarded("boom", Duration::from_secs(5), || panic!("kaboom")));
        let e = r.unwrap_err();
        assert_eq!(e.code(), "internal");
        assert!(e.to_string().contains("kaboom"), "{e}");
        let ok = rt.block_on(guarded("fine", Duration::from_secs(5), || Ok(7u32)));
        assert_eq!(ok.unwrap(), 7);
    }

    #[test]
    fn a_slow_request_misses_its_deadline_without_blocking_the_answer() {
        let rt = runtime();
        let t0 = std::time::Instant::now();
        let r: Result<(), ApiError> = rt.block_on(guarded("slow", Duration::from_millis(100), || {
            std::thread::sleep(Duration::from_secs(2));
            Ok(())
        }));
        assert_eq!(r.unwrap_err().code(), "deadline_exceeded");
        assert!(t0.elapsed() < Duration::from_secs(1));
        // Dropping the runtime would wait for the sleeping worker.
        rt.shutdown_background();
    }
}
