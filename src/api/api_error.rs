//! `ApiError`: why a request could not be answered. Every front end maps it the same way (an
//! exit code, an HTTP status, an MCP tool error); the message names the argument or path.

use serde::Serialize;

use crate::index::IndexError;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request itself is wrong: the caller (or the model) can fix it.
    #[error("{argument}: {message}")]
    InvalidArgument { argument: String, message: String },
    /// A path the request names may not be read (outside the repository, index internals).
    #[error("{path}: {reason}")]
    PathDenied { path: String, reason: String },
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A part or service the answer needs is missing (no graph, no model, git failed).
    #[error("{0}")]
    Unavailable(String),
    /// Another build holds the index.
    #[error("{0}")]
    Busy(String),
    /// The request did not finish within its deadline.
    #[error("{0}")]
    Deadline(String),
    #[error("{0}")]
    Internal(String),
}

/// The wire form of an error: a stable code and the message.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ErrorBody {
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn invalid(argument: impl Into<String>, message: impl Into<String>) -> ApiError {
        ApiError::InvalidArgument {
            argument: argument.into(),
            message: message.into(),
        }
    }

    pub fn denied(path: impl Into<String>, reason: impl Into<String>) -> ApiError {
        ApiError::PathDenied {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// A stable, machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::InvalidArgument { .. } => "invalid_argument",
            ApiError::PathDenied { .. } => "path_denied",
            ApiError::NotFound(_) => "not_found",
            ApiError::Index(IndexError::NoIndex(_)) => "no_index",
            ApiError::Index(IndexError::Locked { .. }) => "busy",
            ApiError::Index(_) => "index_error",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Busy(_) => "busy",
            ApiError::Deadline(_) => "deadline_exceeded",
            ApiError::Internal(_) => "internal",
        }
    }

    /// Whether the caller can fix it by changing the request (MCP: a tool error the model
    /// reads) rather than a failure of the server.
    pub fn is_caller_error(&self) -> bool {
        matches!(
            self,
            ApiError::InvalidArgument { .. } | ApiError::PathDenied { .. } | ApiError::NotFound(_)
        )
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            code: self.code(),
            message: self.to_string(),
        }
    }
}
