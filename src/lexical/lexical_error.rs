//! Errors of the lexical layer.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LexicalError {
    #[error("lexical index at {path}: {source}")]
    Tantivy {
        path: PathBuf,
        #[source]
        source: tantivy::TantivyError,
    },
    #[error("lexical index {path} is damaged ({detail}); `ken index build` repairs it")]
    Damaged { path: PathBuf, detail: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid {what} {pattern:?}: {message}")]
    Pattern {
        what: &'static str,
        pattern: String,
        message: String,
    },
}

impl LexicalError {
    pub(crate) fn tantivy(path: &std::path::Path) -> impl FnOnce(tantivy::TantivyError) -> LexicalError + '_ {
        move |source| LexicalError::Tantivy {
            path: path.to_path_buf(),
            source,
        }
    }
}
