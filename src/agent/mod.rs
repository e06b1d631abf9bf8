//! The bundled coding agent: a controlled plan/act/observe/fix/evaluate loop over Kenning's
//! index (through the query API) and the execution layer (policy, sandbox, audit log), with
//! any model behind the `ToolModel` trait.
//!
//! Invariants:
//! - The model is replaceable; the harness decides: it perceives before the first call,
//!   checks limits before every call, runs the evaluation itself, and records everything.
//! - Every file-changing action is checkpointed first in a shadow repository, never in the
//!   workspace's own `.git`.
//! - Nothing here prints; the CLI renders the events.

mod agent_limits;
mod agent_loop;
mod agent_state;
mod agent_stats;
mod environment_facts;
mod model_chain;
mod model_router;
mod patch_applier;
mod stuck_detector;
mod syntax_check;
mod tool_box;

pub use crate::exec::{Checkpoint, CheckpointError, CheckpointStore};
pub use agent_limits::AgentLimits;
pub use agent_loop::{Agent, AgentConfig, AgentOutcome};
pub use agent_state::{AgentEvent, AgentState};
pub use agent_stats::{AgentLogCollector, AgentStats, SkippedLog};
pub use environment_facts::EnvironmentFacts;
pub use model_chain::{Latency, ModelChain};
pub use model_router::{ModelRouter, RouteError, RoutedModel};
pub use patch_applier::{FileChange, FileOp, PatchApplier, PatchError};
pub use stuck_detector::StuckDetector;
pub use syntax_check::SyntaxCheck;
pub use tool_box::{Approver, PlanStep, ToolBox, ToolResult, cut};
