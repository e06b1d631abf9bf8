//! The execution layer: what makes running commands and edits that a model chose safe, usable
//! without the agent. So far: the tamper-evident audit log, secret redaction, the scrubbed
//! environment, the action policy (classes and approval decisions for shell commands), and
//! the Linux sandbox (namespaces, read-only mounts, Landlock, seccomp, rlimits, cgroups, a
//! wall clock) that `ken exec` runs commands in, and the checkpoints that undo a run.
//!
//! Invariants:
//! - Nothing secret is written to the audit log: every event passes [`SecretRedactor`] first.
//! - An audit line is written whole and flushed before the action it records is reported done;
//!   a log is appended to only when it verifies intact.

mod action_policy;
mod audit_log;
mod cgroup_limits;
mod checkpoint_store;
mod command_event;
mod command_gate;
mod confinement;
mod edit_policy;
mod env_scrubber;
mod exec_rules;
mod helper_event;
mod mechanism;
mod mount_plan;
mod output_capture;
mod run_report;
mod sandbox;
mod sandbox_helper;
mod sandbox_spec;
mod secret_redactor;
mod session_approvals;
mod workspace_paths;
mod workspace_snapshot;

pub use action_policy::{
    ActionClass, ActionPart, ActionPolicy, ApprovalPolicy, CommandVerdict, Decision, PolicyContext,
    SandboxMode,
};
pub use audit_log::{
    AuditError, AuditLog, AuditReport, BadLine, DAMAGED_EVENT, GENESIS, PredecessorReport, Recovery,
    TORN_EVENT, verify as verify_audit_log,
};
pub use checkpoint_store::{Checkpoint, CheckpointError, CheckpointStore, FileLoss, LostFile};
pub use command_event::{CommandEvent, ExecResult, SandboxSettings, StreamRecord};
pub use command_gate::{Approval, ApprovalAsker, CommandGate, JudgedCommand};
pub use edit_policy::{EditPolicy, EditVerdict};
pub use env_scrubber::{EnvScrubber, ScrubbedEnv};
pub use exec_rules::{ExecRules, Rule, RuleDecision, RuledDecision, RulesError, SandboxRules};
pub use helper_event::SETUP_FAILED;
pub use mechanism::{Mechanism, MechanismState};
pub use output_capture::{CapturedOutput, OutputCapture};
pub use run_report::RunReport;
pub use sandbox::{OnStart, Sandbox, SandboxError, default_workspace};
pub use sandbox_helper::helper_main;
pub use sandbox_spec::{Limits, SandboxSpec};
pub use secret_redactor::{REDACTED, SecretRedactor};
pub use session_approvals::SessionApprovals;
pub use workspace_paths::{Touch, WorkspacePaths};
pub use workspace_snapshot::WorkspaceSnapshot;
