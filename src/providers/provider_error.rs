//! Errors talking to a model provider; each names the URL or setting it concerns.

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("{url}: HTTP {status}: {body}")]
    Status { url: String, status: u16, body: String },
    #[error("{url}: {detail}")]
    Transport { url: String, detail: String },
    #[error("{url}: unexpected response: {detail}")]
    Response { url: String, detail: String },
    #[error("environment variable {0} is not set: the provider's key is read from it, and nothing was sent")]
    MissingKey(String),
    #[error("{0}")]
    Settings(String),
    /// The user interrupted the run (Ctrl-C) while the call was in flight or before it.
    #[error("{url}: the {what} was cancelled (interrupted by the user)")]
    Cancelled { url: String, what: String },
    /// The run's deadline passed while the call was in flight or before it.
    #[error("{url}: the {what} was cut at the run's deadline of {limit} s")]
    Deadline {
        url: String,
        what: String,
        limit: String,
    },
}
