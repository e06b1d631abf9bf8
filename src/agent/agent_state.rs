//! `AgentState` and `AgentEvent`: the loop's explicit state machine and the typed events it
//! emits at every transition, model call and tool call (rendered by the CLI, written to the
//! audit log).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AgentState {
    Planning,
    Executing,
    AwaitingApproval,
    Fixing,
    Evaluating,
    Completed,
    Failed,
    Cancelled,
}

impl AgentState {
    pub fn is_final(self) -> bool {
        matches!(
            self,
            AgentState::Completed | AgentState::Failed | AgentState::Cancelled
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Planning => "planning",
            AgentState::Executing => "executing",
            AgentState::AwaitingApproval => "awaiting-approval",
            AgentState::Fixing => "fixing",
            AgentState::Evaluating => "evaluating",
            AgentState::Completed => "completed",
            AgentState::Failed => "failed",
            AgentState::Cancelled => "cancelled",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum AgentEvent {
    /// `prompt` is the first prompt (task and perception), kept so a run can be resumed.
    Started {
        session: String,
        task: String,
        model: String,
        workspace: String,
        prompt: String,
    },
    Transition {
        from: AgentState,
        to: AgentState,
        why: String,
    },
    ModelCall {
        step: u32,
        model: String,
        input_tokens: u64,
        output_tokens: u64,
        cost_usd: f64,
        tool_calls: usize,
        text: String,
    },
    ToolCall {
        step: u32,
        id: String,
        name: String,
        arguments: String,
        ok: bool,
        result: String,
    },
    Checkpoint {
        step: u32,
        commit: String,
    },
    /// A plan step went to a sub-agent.
    Delegated {
        task: String,
        max_steps: u32,
    },
    DelegationDone {
        summary: String,
        files_changed: Vec<String>,
    },
    /// Old turns were summarized to fit the window.
    Compaction {
        before_tokens: u64,
        after_tokens: u64,
    },
    Evaluation {
        command: String,
        passed: bool,
        status: i32,
        output: String,
    },
    Finished {
        state: AgentState,
        reason: String,
        steps: u32,
        input_tokens: u64,
        output_tokens: u64,
        cost_usd: f64,
        files_changed: Vec<String>,
        /// Files commands deleted or overwrote during the run (a completed run's reason says
        /// so too).
        files_lost: Vec<crate::exec::LostFile>,
    },
}
