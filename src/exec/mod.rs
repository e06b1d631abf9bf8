//! The execution layer: what makes running commands and edits that a model chose safe, usable
//! without the agent. So far: the tamper-evident audit log, secret redaction, the scrubbed
//! environment, and the action policy (classes and approval decisions for shell commands);
//! the sandbox that enforces them comes next (issue 14).
//!
//! Invariants:
//! - Nothing secret is written to the audit log: every event passes [`SecretRedactor`] first.
//! - An audit line is written whole and flushed before the action it records is reported done;
//!   a log is appended to only when it verifies intact.

mod action_policy;
mod audit_log;
mod env_scrubber;
mod secret_redactor;

pub use action_policy::{
    ActionClass, ActionPart, ActionPolicy, ApprovalPolicy, CommandVerdict, Decision, PolicyContext,
    SandboxMode,
};
pub use audit_log::{AuditError, AuditLog, AuditReport, BadLine, GENESIS, verify as verify_audit_log};
pub use env_scrubber::{EnvScrubber, ScrubbedEnv};
pub use secret_redactor::{REDACTED, SecretRedactor};
