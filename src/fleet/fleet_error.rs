//! `FleetError`: what can go wrong talking to NATS, building a work item, or serving a shard.

use std::path::PathBuf;

use crate::api::ApiError;
use crate::remote::RemoteError;

#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    #[error("nats {url}: {detail}")]
    Connect { url: String, detail: String },
    #[error("nats: {what}: {detail}")]
    Nats { what: String, detail: String },
    #[error("work item: {0}")]
    Item(String),
    #[error("repository {repo}: {detail}")]
    Source { repo: String, detail: String },
    #[error("pointer of {repo}: {detail}")]
    Pointer { repo: String, detail: String },
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Remote(#[from] RemoteError),
    #[error(transparent)]
    Api(#[from] ApiError),
}

impl FleetError {
    pub(crate) fn nats(what: impl Into<String>) -> impl FnOnce(String) -> FleetError {
        let what = what.into();
        move |detail| FleetError::Nats { what, detail }
    }

    pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> FleetError + '_ {
        move |source| FleetError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
