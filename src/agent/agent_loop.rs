//! `Agent`: the plan/act/observe/fix/evaluate loop. The harness perceives first (overview
//! and `context` on the task, packed into the first prompt), then calls the model, runs the
//! tools it asks for, feeds the results back, and moves through an explicit state machine:
//! Planning -> Executing <-> AwaitingApproval; Executing -> Fixing on a failed command, a
//! refused edit or a syntax error; Executing -> Evaluating when the model calls `finish`,
//! where the harness runs the check itself and goes to Completed, or back to Fixing with the
//! failure; Failed or Cancelled on a limit or an abort.
//!
//! Invariants:
//! - Limits (steps, wall time, tokens, cost, consecutive errors, a stuck loop) are checked
//!   before every model call; hitting one ends in Failed with the limit named. The wall time
//!   also holds during a call: the CLI makes it the run's deadline (`providers::RunBounds`),
//!   and a call cut by it ends the run Failed and `out_of_time`; a call cut by Ctrl-C ends
//!   it Cancelled.
//! - Every event goes to the audit log before the next action: model calls (text and tool
//!   calls), tool calls (arguments, result, the policy's decision), checkpoints, evaluations.
//! - Each tool result answers the call with the same id, in order.

use std::time::Instant;

use serde::Serialize;
use serde_json::json;

use super::agent_limits::AgentLimits;
use super::agent_state::{AgentEvent, AgentState};
use super::environment_facts::EnvironmentFacts;
use super::stuck_detector::StuckDetector;
use super::tool_box::{ToolBox, ToolResult, cut};
use crate::api::Operation;
use crate::exec::{AuditLog, Decision};
use crate::providers::{Message, ModelReply, ProviderError, Role, ToolCall, ToolModel, Usage};

pub struct AgentConfig {
    pub session: String,
    pub task: String,
    pub limits: AgentLimits,
    /// Tokens of the first prompt given to the perception (overview and context).
    pub perception_tokens: usize,
    /// The conversation is kept under this many tokens (old tool outputs elided first).
    pub window_tokens: usize,
    /// Dollars per million input and output tokens.
    pub price: Option<(f64, f64)>,
    /// The same for the sub-agents' model, when it is another.
    pub delegate_price: Option<(f64, f64)>,
}

/// How a run ended.
#[derive(Debug, Clone, Serialize)]
pub struct AgentOutcome {
    pub session: String,
    pub state: AgentState,
    pub reason: String,
    pub steps: u32,
    pub usage: Usage,
    pub cost_usd: f64,
    pub files_changed: Vec<String>,
    /// Files commands deleted or overwrote during the run.
    pub files_lost: Vec<crate::exec::LostFile>,
    pub last_test: Option<(String, bool)>,
    /// The run ended because its wall time was spent (between steps or in a call).
    pub out_of_time: bool,
}

pub struct Agent<'a> {
    pub model: &'a dyn ToolModel,
    /// A cheaper model for compaction summaries (default: `model`).
    pub summary_model: Option<&'a dyn ToolModel>,
    /// The model sub-agents run on (default: `model`): routing by kind of work.
    pub delegate_model: Option<&'a dyn ToolModel>,
    /// Set when the user aborts (Ctrl-C): the run ends `cancelled` before the next call or
    /// tool call (a model call in flight is cut by `providers::RunBounds` and ends it too).
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    pub tools: ToolBox,
    pub audit: AuditLog,
    pub config: AgentConfig,
    state: AgentState,
    messages: Vec<Message>,
    usage: Usage,
    cost: f64,
    steps: u32,
    evaluations: u32,
    consecutive_errors: u32,
    /// The last model call's error while calls keep failing, so a limit that ends the run
    /// says what it was ending (not only "step limit reached").
    last_model_error: Option<String>,
    stuck: StuckDetector,
    compactions: u32,
    /// 0 for the agent, 1 inside a sub-agent.
    depth: u32,
    started: Instant,
    out_of_time: bool,
}

fn delegate_spec() -> crate::providers::ToolSpec {
    crate::providers::ToolSpec {
        name: "delegate".to_string(),
        description: "Hand one step of the plan to a sub-agent with a fresh context and its own budget of model calls; you get back only its summary and the files it changed. Use it for a self-contained step (explore a subsystem, make one focused change).".to_string(),
        parameters: json!({"type": "object", "properties": {"task": {"type": "string"}, "max_steps": {"type": "integer"}}, "required": ["task"]}),
    }
}

const MAX_COMPACTIONS: u32 = 2;

/// A rough token count: four bytes a token.
fn tokens(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| {
            m.content.len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.arguments.len() + c.name.len())
                    .sum::<usize>()
        })
        .sum::<usize>()
        / 4
}

const SYSTEM: &str = "You are Kenning's coding agent, working in a repository through tools. \
Work in small verified steps: find the relevant code with search_code, context, callers and \
impact; read it with read_file; change it with apply_patch (or str_replace / write_file); run \
commands and tests with run_command and run_tests. Commands run in a sandbox under an approval \
policy: a denied command comes back with the reason, do not retry it unchanged. Keep a short \
plan with update_plan. When the task is done and the tests pass, call finish with a summary: \
the harness then runs the evaluation itself.";

type Sink<'s> = &'s mut dyn FnMut(&AgentEvent);

const ZERO_TESTS: &[&str] = &[
    "Ran 0 tests",
    "collected 0 items",
    "no tests ran",
    "running 0 tests",
    "No tests found",
];

/// Whether a test runner's output says at least one test ran (unittest, pytest, cargo, go,
/// jest and mocha summaries).
fn ran_some_test(output: &str) -> bool {
    static RE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    RE.get_or_init(|| regex::Regex::new(r"(?m)(running [1-9]\d* tests?|Ran [1-9]\d* tests?|collected [1-9]\d* items?|\b[1-9]\d* (passed|passing)|^ok\s+\S+\s)").ok())
        .as_ref()
        .is_some_and(|re| re.is_match(output))
}

impl<'a> Agent<'a> {
    pub fn new(model: &'a dyn ToolModel, tools: ToolBox, audit: AuditLog, config: AgentConfig) -> Agent<'a> {
        Agent {
            model,
            summary_model: None,
            delegate_model: None,
            cancel: None,
            tools,
            audit,
            config,
            state: AgentState::Planning,
            messages: Vec::new(),
            usage: Usage::default(),
            cost: 0.0,
            steps: 0,
            evaluations: 0,
            consecutive_errors: 0,
            last_model_error: None,
            stuck: StuckDetector::default(),
            compactions: 0,
            depth: 0,
            started: Instant::now(),
            out_of_time: false,
        }
    }

    fn emit(&mut self, sink: Sink, event: AgentEvent) {
        // The log is the record: an event that cannot be written stops the run.
        if let Err(e) = self.audit.append(&event) {
            self.state = AgentState::Failed;
            sink(&AgentEvent::Transition {
                from: self.state,
                to: AgentState::Failed,
                why: format!("the audit log failed: {e}"),
            });
        }
        sink(&event);
    }

    fn go(&mut self, sink: Sink, to: AgentState, why: impl Into<String>) {
        if self.state == to {
            return;
        }
        let from = self.state;
        self.state = to;
        self.emit(
            sink,
            AgentEvent::Transition {
                from,
                to,
                why: why.into(),
            },
        );
    }

    /// The first prompt: the task, the repository overview and the task's context, within
    /// the perception budget.
    pub fn perceive(&self) -> String {
        let budget = self.config.perception_tokens;
        let ws = &self.tools.workspace;
        let overview = ws
            .answer(Operation::Overview, json!({}))
            .map(|a| crate::api::answer_text::render(&a))
            .unwrap_or_else(|e| format!("(no overview: {e})"));
        let context = ws
            .answer(
                Operation::Context,
                json!({"task": self.config.task, "max_tokens": budget * 2 / 3}),
            )
            .map(|a| crate::api::answer_text::render(&a))
            .unwrap_or_else(|e| format!("(no context: {e})"));
        format!(
            "Task:\n{}\n\nRepository overview:\n{}\n\nCode relevant to the task (from the index):\n{}",
            self.config.task,
            cut(&overview, budget * 4 / 3),
            cut(&context, budget * 8 / 3),
        )
    }

    /// Runs until a final state.
    pub fn run(&mut self, sink: Sink) -> AgentOutcome {
        let prompt = self.perceive();
        self.emit(
            sink,
            AgentEvent::Started {
                session: self.config.session.clone(),
                task: self.config.task.clone(),
                model: self.model.id(),
                workspace: self.tools.root.display().to_string(),
                prompt: prompt.clone(),
            },
        );
        if let Err(e) = self.tools.checkpoints.save("start") {
            self.go(
                sink,
                AgentState::Failed,
                format!("cannot checkpoint the starting tree: {e}"),
            );
        }
        self.messages.push(Message::user(prompt));
        self.run_from_here(sink)
    }

    /// Continues a conversation rebuilt from an audit log (`ken agent resume`).
    pub fn resume(&mut self, messages: Vec<Message>, sink: Sink) -> AgentOutcome {
        self.messages = messages;
        self.go(sink, AgentState::Executing, "resumed from the audit log");
        self.run_from_here(sink)
    }

    fn run_from_here(&mut self, sink: Sink) -> AgentOutcome {
        let reason = loop {
            if self.state.is_final() {
                break "the audit log failed".to_string();
            }
            if self.cancelled() {
                let why = "cancelled by the user".to_string();
                self.go(sink, AgentState::Cancelled, why.clone());
                break why;
            }
            if let Some(why) = self.over_limit() {
                self.out_of_time |= self.wall_time_spent();
                self.go(sink, AgentState::Failed, why.clone());
                break why;
            }
            match self.turn(sink) {
                Ok(Some(done)) => break done,
                Ok(None) => {}
                // A call cut by Ctrl-C ends the run cancelled, saying where it was.
                Err(why) if self.cancelled() => {
                    self.go(sink, AgentState::Cancelled, why.clone());
                    break why;
                }
                Err(why) => {
                    self.go(sink, AgentState::Failed, why.clone());
                    break why;
                }
            }
        };
        let outcome = AgentOutcome {
            session: self.config.session.clone(),
            state: self.state,
            reason: reason.clone(),
            steps: self.steps,
            usage: self.usage,
            cost_usd: self.cost,
            files_changed: self.tools.files_changed.iter().cloned().collect(),
            files_lost: self.tools.command_losses.list(),
            last_test: self.tools.last_test.clone(),
            out_of_time: self.out_of_time && self.state == AgentState::Failed,
        };
        self.emit(
            sink,
            AgentEvent::Finished {
                state: self.state,
                reason,
                steps: self.steps,
                input_tokens: self.usage.input_tokens,
                output_tokens: self.usage.output_tokens,
                cost_usd: self.cost,
                files_changed: outcome.files_changed.clone(),
                files_lost: outcome.files_lost.clone(),
            },
        );
        outcome
    }

    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::SeqCst))
    }

    fn wall_time_spent(&self) -> bool {
        self.started.elapsed() >= self.config.limits.max_wall
    }

    /// A model call that the run's bounds ended (Ctrl-C or the deadline) ends the run:
    /// `Some(why)`, said for the call at `when`. Any other error is the caller's to weigh.
    fn cut_short(&mut self, e: &ProviderError, when: &str) -> Option<String> {
        match e {
            ProviderError::Cancelled { .. } => Some(format!("cancelled by the user during {when}: {e}")),
            ProviderError::Deadline { .. } => {
                self.out_of_time = true;
                Some(format!(
                    "wall-time limit reached ({} s) during {when}: {e}",
                    self.config.limits.max_wall.as_secs()
                ))
            }
            _ => None,
        }
    }

    fn over_limit(&self) -> Option<String> {
        let l = &self.config.limits;
        let tokens = self.usage.input_tokens + self.usage.output_tokens;
        if self.steps >= l.max_steps {
            return Some(match &self.last_model_error {
                Some(e) => format!(
                    "step limit reached ({} model calls); the last model call failed: {e}",
                    l.max_steps
                ),
                None => format!("step limit reached ({} model calls)", l.max_steps),
            });
        }
        if self.wall_time_spent() {
            return Some(format!("wall-time limit reached ({} s)", l.max_wall.as_secs()));
        }
        if tokens >= l.max_tokens {
            return Some(format!("token limit reached ({tokens} of {})", l.max_tokens));
        }
        if self.cost >= l.max_cost_usd {
            return Some(format!(
                "cost limit reached (${:.4} of ${:.2})",
                self.cost, l.max_cost_usd
            ));
        }
        if self.consecutive_errors >= l.max_consecutive_errors {
            return Some(format!("{} consecutive errors", self.consecutive_errors));
        }
        None
    }

    /// The system prompt with the workspace state the harness keeps.
    fn system(&self) -> String {
        let t = &self.tools;
        let plan: Vec<String> = t
            .plan
            .iter()
            .map(|p| format!("[{}] {}", p.status, p.step))
            .collect();
        let cmds: Vec<String> = t
            .commands_run
            .iter()
            .rev()
            .take(5)
            .map(|(c, s)| format!("`{c}` -> {s}"))
            .collect();
        format!(
            "{SYSTEM}\n\nState (kept by the harness):\n- plan: {}\n- files changed: {}\n- last commands: {}\n- last test: {}\n- step {} of {}, tokens {}, cost ${:.4}",
            if plan.is_empty() {
                "(none yet)".to_string()
            } else {
                plan.join("; ")
            },
            if t.files_changed.is_empty() {
                "none".to_string()
            } else {
                t.files_changed.iter().cloned().collect::<Vec<_>>().join(", ")
            },
            if cmds.is_empty() {
                "none".to_string()
            } else {
                cmds.join("; ")
            },
            match &t.last_test {
                Some((c, ok)) => format!("`{c}` {}", if *ok { "passed" } else { "failed" }),
                None => "not run".to_string(),
            },
            self.steps + 1,
            self.config.limits.max_steps,
            self.usage.input_tokens + self.usage.output_tokens,
            self.cost,
        )
    }

    /// Old tool outputs give way first when the conversation outgrows the window; the first
    /// prompt and the latest results stay whole, and a call is never split from its result.
    /// If that is not enough, a compaction turn summarizes the middle of the conversation;
    /// after two compactions the run stops rather than compacting forever.
    fn fit_window(&mut self, sink: Sink) -> Result<(), String> {
        let keep_recent = 6;
        let n = self.messages.len();
        for i in 1..n.saturating_sub(keep_recent) {
            if tokens(&self.messages) <= self.config.window_tokens {
                return Ok(());
            }
            let m = &mut self.messages[i];
            if m.role == Role::Tool && m.content.len() > 200 {
                m.content = format!(
                    "[elided by the harness to fit the window: {} bytes; call the tool again if needed]",
                    m.content.len()
                );
            }
        }
        if tokens(&self.messages) <= self.config.window_tokens {
            return Ok(());
        }
        if self.compactions >= MAX_COMPACTIONS {
            return Err(format!(
                "the conversation no longer fits {} tokens after {MAX_COMPACTIONS} compactions",
                self.config.window_tokens
            ));
        }
        // The kept tail starts at an assistant message, so every tool result keeps its call.
        let Some(cut) = (1..self.messages.len().saturating_sub(keep_recent))
            .rev()
            .find(|&i| self.messages[i].role == Role::Assistant)
        else {
            return Ok(());
        };
        let before = tokens(&self.messages);
        let mut middle: Vec<Message> = self.messages[..cut].to_vec();
        middle.push(Message::user(
            "Summarize the work so far for your own later use: what the task needs, what you found (files, functions), what you changed, what failed and why, and what is left. Be concise and concrete.",
        ));
        let reply =
            match self
                .summary_model
                .unwrap_or(self.model)
                .complete(&self.system(), &middle, &[], &mut |_| {})
            {
                Ok(r) => r,
                Err(e) => {
                    return Err(self
                        .cut_short(&e, "the compaction turn")
                        .unwrap_or_else(|| format!("the compaction turn failed: {e}")));
                }
            };
        self.usage.input_tokens += reply.usage.input_tokens;
        self.usage.output_tokens += reply.usage.output_tokens;
        let mut kept = vec![
            self.messages[0].clone(),
            Message::user(format!(
                "Summary of the work so far (written by you in a compaction turn):\n{}",
                reply.text
            )),
        ];
        kept.extend(self.messages[cut..].iter().cloned());
        self.messages = kept;
        self.compactions += 1;
        let after = tokens(&self.messages);
        self.emit(
            sink,
            AgentEvent::Compaction {
                before_tokens: before as u64,
                after_tokens: after as u64,
            },
        );
        Ok(())
    }

    /// One model call and the tools it asks for; `Some(reason)` when the run is over.
    fn turn(&mut self, sink: Sink) -> Result<Option<String>, String> {
        self.fit_window(sink)?;
        let Some((reply, step)) = self.call_model()? else {
            return Ok(None);
        };
        self.account(sink, step, &reply);
        self.messages
            .push(Message::assistant(reply.text.clone(), reply.tool_calls.clone()));
        if reply.tool_calls.is_empty() {
            self.consecutive_errors += 1;
            self.messages.push(Message::user(
                "Use the tools to make progress, or call `finish` with a summary when the task is done.",
            ));
            return Ok(None);
        }
        let mut finish = None;
        for (i, call) in reply.tool_calls.iter().enumerate() {
            // Ctrl-C between two calls: the rest are not run (the loop ends the run next). The
            // first call of a reply is the step in flight: it runs, whenever the Ctrl-C came
            // after the reply (a test raced here under load).
            if i > 0 && self.cancelled() {
                return Ok(None);
            }
            if let Some(summary) = self.run_call(sink, call, step)? {
                finish = Some(summary);
            }
        }
        match finish {
            // A sub-agent's finish is its summary; the parent evaluates the whole task.
            Some(summary) if self.depth > 0 => Ok(Some(summary)),
            Some(summary) => self.evaluate(sink, &summary),
            None => Ok(None),
        }
    }

    /// The next step's model reply and the step's number; `Ok(None)` when the call failed but
    /// a later one may do better, `Err` when the run is over.
    fn call_model(&mut self) -> Result<Option<(ModelReply, u32)>, String> {
        let mut specs = self.tools.specs();
        if self.depth == 0 {
            specs.push(delegate_spec());
        }
        // The prompt states the steps taken so far: written before this one counts.
        let system = self.system();
        self.steps += 1;
        let step = self.steps;
        let mut streamed = String::new();
        match self
            .model
            .complete(&system, &self.messages, &specs, &mut |t| streamed.push_str(t))
        {
            Ok(r) => {
                self.last_model_error = None;
                Ok(Some((r, step)))
            }
            Err(e @ (ProviderError::Cancelled { .. } | ProviderError::Deadline { .. })) => {
                let when = format!("the model call of step {step}");
                Err(self.cut_short(&e, &when).unwrap_or_else(|| e.to_string()))
            }
            // Refused for who is asking or what is asked for: no later call will do better.
            Err(
                e @ ProviderError::Status {
                    status: 401 | 403 | 404,
                    ..
                },
            ) => Err(format!("the model endpoint refused the request: {e}")),
            Err(e) => {
                self.last_model_error = Some(e.to_string());
                self.consecutive_errors += 1;
                if self.consecutive_errors >= self.config.limits.max_consecutive_errors {
                    return Err(format!(
                        "the model failed {} times running: {e}",
                        self.consecutive_errors
                    ));
                }
                Ok(None)
            }
        }
    }

    /// Counts the reply's tokens and cost, and reports the call.
    fn account(&mut self, sink: Sink, step: u32, reply: &ModelReply) {
        self.usage.input_tokens += reply.usage.input_tokens;
        self.usage.output_tokens += reply.usage.output_tokens;
        let price = match self.depth > 0 && self.delegate_model.is_some() {
            true => self.config.delegate_price,
            false => self.config.price,
        };
        let call_cost = price
            .map(|(i, o)| (reply.usage.input_tokens as f64 * i + reply.usage.output_tokens as f64 * o) / 1e6)
            .unwrap_or(0.0);
        self.cost += call_cost;
        self.emit(
            sink,
            AgentEvent::ModelCall {
                step,
                model: self.model.id(),
                input_tokens: reply.usage.input_tokens,
                output_tokens: reply.usage.output_tokens,
                cost_usd: call_cost,
                tool_calls: reply.tool_calls.len(),
                text: reply.text.clone(),
            },
        );
    }

    /// One tool call: run, recorded, answered in the conversation, and watched for loops;
    /// `Some(summary)` when it was `finish`.
    fn run_call(&mut self, sink: Sink, call: &ToolCall, step: u32) -> Result<Option<String>, String> {
        if !matches!(self.state, AgentState::Executing) {
            self.go(sink, AgentState::Executing, format!("running `{}`", call.name));
        }
        let result = match call.name.as_str() {
            "delegate" => self.delegate(sink, &call.arguments),
            _ => self.tools.call(&call.name, &call.arguments, step),
        };
        if let Some(commit) = &result.checkpoint {
            self.emit(
                sink,
                AgentEvent::Checkpoint {
                    step,
                    commit: commit.clone(),
                },
            );
        }
        if let Some((Decision::Deny { .. }, _)) = &result.decision {
            self.go(
                sink,
                AgentState::AwaitingApproval,
                format!("`{}` needed approval", call.name),
            );
        }
        let mut content = result.content.clone();
        if result.error
            && let Some(facts) = EnvironmentFacts::for_failure(&content)
        {
            content.push_str(&format!("\n\nenvironment facts:\n{facts}"));
        }
        self.emit(
            sink,
            AgentEvent::ToolCall {
                step,
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                ok: !result.error,
                result: content.clone(),
            },
        );
        self.messages.push(Message::tool(&call.id, content.clone()));
        if let Some(why) = self
            .stuck
            .record(&call.name, &call.arguments, &content, result.error)
        {
            return Err(format!("stuck: {why}"));
        }
        if result.error {
            self.consecutive_errors += 1;
            self.go(sink, AgentState::Fixing, format!("`{}` failed", call.name));
        } else {
            self.consecutive_errors = 0;
        }
        Ok(result.finish)
    }

    /// A plan step handed to a sub-agent: the same harness and tools with a fresh
    /// conversation and its own budget of model calls. The parent sees only the summary and
    /// the files it changed.
    fn delegate(&mut self, sink: Sink, arguments: &str) -> ToolResult {
        if self.depth > 0 {
            return ToolResult {
                content: "a sub-agent cannot delegate further".into(),
                error: true,
                ..ToolResult::default()
            };
        }
        let args: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
        let Some(task) = args["task"].as_str().filter(|t| !t.trim().is_empty()) else {
            return ToolResult {
                content: "delegate needs `task`".into(),
                error: true,
                ..ToolResult::default()
            };
        };
        let budget = args["max_steps"].as_u64().unwrap_or(10).clamp(1, 25) as u32;
        let parent = std::mem::take(&mut self.messages);
        let before: std::collections::BTreeSet<String> = self.tools.files_changed.clone();
        let end = self.steps + budget;
        self.depth += 1;
        let parent_model = self.model;
        if let Some(m) = self.delegate_model {
            self.model = m;
        }
        self.emit(
            sink,
            AgentEvent::Delegated {
                task: task.to_string(),
                max_steps: budget,
            },
        );
        self.messages.push(Message::user(format!(
            "You are a sub-agent with a fresh context, doing one step of a larger task. Do only this, then call finish with a concise summary of what you did and found (files, functions, results):\n{task}"
        )));
        let summary = loop {
            if self.steps >= end {
                break format!("the sub-agent used its {budget} model calls without finishing");
            }
            if self.cancelled() {
                break "the sub-agent stopped: cancelled by the user".to_string();
            }
            if let Some(why) = self.over_limit() {
                break format!("the sub-agent stopped: {why}");
            }
            match self.turn(sink) {
                Ok(Some(s)) => break s,
                Ok(None) => {}
                Err(why) => break format!("the sub-agent stopped: {why}"),
            }
        };
        self.depth -= 1;
        self.model = parent_model;
        self.messages = parent;
        let changed: Vec<String> = self.tools.files_changed.difference(&before).cloned().collect();
        self.emit(
            sink,
            AgentEvent::DelegationDone {
                summary: summary.clone(),
                files_changed: changed.clone(),
            },
        );
        ToolResult {
            content: format!(
                "sub-agent summary: {summary}\nfiles it changed: {}",
                if changed.is_empty() {
                    "none".to_string()
                } else {
                    changed.join(", ")
                }
            ),
            changed,
            ..ToolResult::default()
        }
    }

    /// The harness's own check after `finish`: the test command, run in the sandbox.
    fn evaluate(&mut self, sink: Sink, summary: &str) -> Result<Option<String>, String> {
        self.go(
            sink,
            AgentState::Evaluating,
            format!("the model says it is done: {summary}"),
        );
        let Some(cmd) = self.tools.test_command() else {
            self.go(
                sink,
                AgentState::Completed,
                "no evaluation is configured (no --test-cmd, no test reached by the changes)",
            );
            let completed = self.tools.command_losses.completed(&self.config.session);
            return Ok(Some(format!("{completed} without an evaluation: {summary}")));
        };
        let (report, checkpoint) = self
            .tools
            .evaluation(&cmd, self.steps)
            .map_err(|e| format!("the evaluation could not run: {e}"))?;
        if let Some(commit) = checkpoint {
            let step = self.steps;
            self.emit(sink, AgentEvent::Checkpoint { step, commit });
        }
        let output = cut(&format!("{}\n{}", report.stdout.text, report.stderr.text), 4000);
        // A run that found no test proves nothing (cargo's empty doc-test section does not
        // count when another section ran tests).
        let ran_nothing = ZERO_TESTS.iter().any(|m| output.contains(m)) && !ran_some_test(&output);
        let passed = report.status == 0 && !ran_nothing;
        let output = match ran_nothing {
            true => format!("the evaluation ran no test; check the test command\n{output}"),
            false => output,
        };
        self.tools.last_test = Some((cmd.clone(), passed));
        self.emit(
            sink,
            AgentEvent::Evaluation {
                command: cmd.clone(),
                passed,
                status: report.status,
                output: output.clone(),
            },
        );
        if passed {
            self.go(sink, AgentState::Completed, format!("`{cmd}` passed"));
            let completed = self.tools.command_losses.completed(&self.config.session);
            return Ok(Some(format!("{completed}: {summary}")));
        }
        self.evaluations += 1;
        if self.evaluations >= self.config.limits.max_evaluations {
            return Err(format!("the evaluation failed {} times", self.evaluations));
        }
        self.go(
            sink,
            AgentState::Fixing,
            format!("`{cmd}` failed (status {})", report.status),
        );
        self.messages.push(Message::user(format!(
            "The evaluation `{cmd}` failed with status {}. Fix it, then call finish again.\n{output}",
            report.status
        )));
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_ran_no_test_is_told_apart() {
        let cargo_empty_doctests = "running 3 tests\ntest a ... ok\n\ntest result: ok. 3 passed\n   Doc-tests x\n\nrunning 0 tests\n";
        assert!(ran_some_test(cargo_empty_doctests));
        assert!(!ran_some_test("\n----\nRan 0 tests in 0.000s\n\nOK\n"));
        assert!(ran_some_test("Ran 2 tests in 0.01s\n\nOK"));
        assert!(ran_some_test("collected 4 items\n\n4 passed in 0.02s"));
        assert!(!ran_some_test("collected 0 items\n\nno tests ran in 0.01s"));
        assert!(ran_some_test("ok  \texample.com/m\t0.01s\n"));
    }
}
