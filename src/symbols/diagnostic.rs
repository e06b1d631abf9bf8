//! Per-file diagnostics: partial results are data, never errors.

use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum DiagnosticKind {
    /// tree-sitter recovered from syntax errors; extraction continued around them.
    SyntaxError,
    /// The file is not valid UTF-8; names were decoded lossily.
    InvalidUtf8,
    /// tree-sitter gave up (timeout or cancellation); nothing was extracted.
    ParseFailed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    /// 1-based line of the first occurrence, 0 when unknown.
    pub line: u32,
    pub message: String,
}
