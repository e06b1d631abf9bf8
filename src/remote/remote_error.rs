//! `RemoteError`: what can go wrong publishing or fetching a snapshot.

use std::path::PathBuf;

use crate::index::IndexError;

#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("remote {url}: {detail}")]
    Url { url: String, detail: String },
    #[error("remote object {key}: {detail}")]
    Store { key: String, detail: String },
    #[error(
        "no snapshot of {repo} is published at {remote} for {tried} commit(s) from {head}; \
         publish one with `ken index push` or build locally with `ken index build`"
    )]
    NoSnapshot {
        repo: String,
        remote: String,
        head: String,
        tried: usize,
    },
    #[error("remote object {key} ({path}) failed verification: {detail}; nothing was committed")]
    Tampered {
        key: String,
        path: String,
        detail: String,
    },
    #[error("snapshot {key}: {detail}")]
    Snapshot { key: String, detail: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Git(String),
    #[error(transparent)]
    Index(#[from] IndexError),
}

impl RemoteError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> RemoteError {
        let path = path.into();
        move |source| RemoteError::Io { path, source }
    }
}
