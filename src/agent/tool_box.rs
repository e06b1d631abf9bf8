//! `ToolBox`: the tools the agent's model may call, with their JSON schemas, and what each
//! does. Index tools go through the query API (`Workspace::call`); edits are checkpointed
//! first, validated whole, syntax-checked after and followed by an incremental reindex so
//! later searches see them; commands go through the execution layer's policy and sandbox,
//! checkpointed first by the execution layer's rule when they may write, and the files each
//! one deleted or overwrote are kept for the run's summary.
//!
//! Invariants:
//! - A tool error the model can act on (a bad path, a patch that does not fit, a denied
//!   command, malformed arguments) comes back as the tool's result; only the harness's own
//!   failures end the turn.
//! - No path outside the workspace, nor under `.git` or `.kenning`, is ever written.
//! - Every output is cut head and tail with a marker before the model sees it.
//! - A command that may write (the evaluation's included) runs only after its checkpoint is
//!   saved; when it cannot be, the command does not run and the model is told why.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::patch_applier::PatchApplier;
use super::syntax_check::SyntaxCheck;
use crate::api::{ImpactRequest, Operation, ReindexRequest, Workspace};
use crate::exec::{
    ActionPolicy, Approval, ApprovalAsker, ApprovalPolicy, CheckpointStore, CommandGate, CommandVerdict,
    Decision, EditPolicy, ExecRules, FileLoss, JudgedCommand, Limits, LostFile, OutputCapture, PolicyContext,
    RuledDecision, RunReport, Sandbox, SandboxMode, SandboxSpec, WorkspacePaths, WorkspaceSnapshot,
};
use crate::index::NoProgress;
use crate::providers::ToolSpec;

/// Asks a person: `Ok` approves, `Err(reason)` denies.
pub type Approver = Box<dyn FnMut(&str, &str) -> Result<(), String> + Send>;

/// The agent's way of asking a person: its approver, or a refusal in a non-interactive run.
struct AgentAsker<'a>(&'a mut Option<Approver>);

impl AgentAsker<'_> {
    fn answer(approver: &mut Option<Approver>, what: &str, reason: &str) -> Approval {
        match approver.as_mut() {
            Some(ask) => match ask(what, reason) {
                Ok(()) => Approval::allowed("a person"),
                Err(why) => Approval::denied(format!("a person denied `{what}`: {why}"), "a person"),
            },
            None => Approval::denied(
                format!("{reason}; needs approval, and no one is asked in a non-interactive run"),
                "non-interactive: denied",
            ),
        }
    }
}

impl ApprovalAsker for AgentAsker<'_> {
    fn ask(&mut self, text: &str, _: &CommandVerdict, reason: &str) -> Result<Approval, String> {
        Ok(AgentAsker::answer(self.0, text, reason))
    }
}

/// What a tool call came to.
#[derive(Debug, Clone, Default)]
pub struct ToolResult {
    pub content: String,
    pub error: bool,
    /// The model called `finish` with this summary.
    pub finish: Option<String>,
    /// Files this call changed.
    pub changed: Vec<String>,
    /// A command's run report (for the audit log).
    pub run: Option<Box<RunReport>>,
    /// The policy's decision on a command or edit, and who made it.
    pub decision: Option<(Decision, String)>,
    /// The checkpoint saved before this call changed files.
    pub checkpoint: Option<String>,
}

impl ToolResult {
    fn ok(content: impl Into<String>) -> ToolResult {
        ToolResult {
            content: content.into(),
            ..ToolResult::default()
        }
    }

    fn err(content: impl Into<String>) -> ToolResult {
        ToolResult {
            content: content.into(),
            error: true,
            ..ToolResult::default()
        }
    }
}

/// One step of the model's plan.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PlanStep {
    pub step: String,
    /// `pending`, `in_progress` or `done`.
    pub status: String,
}

/// What commands took away during a run: every file a command deleted or overwrote (its last
/// loss), and the first step that lost one, so the summary can say so and how to go back.
#[derive(Debug, Clone, Default)]
pub struct CommandLosses {
    pub files: BTreeMap<String, FileLoss>,
    pub first_step: Option<u32>,
}

impl CommandLosses {
    fn record(&mut self, step: u32, lost: &[LostFile]) {
        if lost.is_empty() {
            return;
        }
        self.first_step.get_or_insert(step);
        for l in lost {
            self.files.insert(l.path.clone(), l.loss);
        }
    }

    /// Every lost file, by path.
    pub fn list(&self) -> Vec<LostFile> {
        self.files
            .iter()
            .map(|(path, loss)| LostFile {
                path: path.clone(),
                loss: *loss,
            })
            .collect()
    }

    /// How a run that reached its goal is called: `completed`, or, when commands took work
    /// away, `completed with N file(s) deleted and M overwritten by commands (which; how to
    /// go back)`: such a run is never called completed without saying so.
    pub fn completed(&self, session: &str) -> String {
        let Some(step) = self.first_step.filter(|_| !self.files.is_empty()) else {
            return "completed".to_string();
        };
        let count = |loss: FileLoss| self.files.values().filter(|l| **l == loss).count();
        format!(
            "completed with {} file(s) deleted and {} overwritten by commands ({}; `ken agent rollback {session} {step}` puts back the tree from before step {step})",
            count(FileLoss::Deleted),
            count(FileLoss::Overwritten),
            lost_names(&self.list(), 20),
        )
    }
}

/// `a (deleted), b (overwritten), … and N more`.
fn lost_names(lost: &[LostFile], shown: usize) -> String {
    let mut names: Vec<String> = lost
        .iter()
        .take(shown)
        .map(|l| format!("{} ({})", l.path, l.loss.as_str()))
        .collect();
    if lost.len() > shown {
        names.push(format!("and {} more", lost.len() - shown));
    }
    names.join(", ")
}

pub struct ToolBox {
    pub workspace: Arc<Workspace>,
    pub root: PathBuf,
    pub sandbox: Sandbox,
    pub mode: SandboxMode,
    pub network: bool,
    pub approval: ApprovalPolicy,
    pub rules: ExecRules,
    pub approver: Option<Approver>,
    /// Every edit inside the workspace was approved up front (`--approve-edits`).
    pub edits_preapproved: bool,
    pub checkpoints: CheckpointStore,
    pub test_cmd: Option<String>,
    pub command_timeout_ms: u64,
    pub output_cap: usize,
    pub plan: Vec<PlanStep>,
    pub files_changed: BTreeSet<String>,
    pub commands_run: Vec<(String, i32)>,
    pub last_test: Option<(String, bool)>,
    /// Files commands deleted or overwrote this run.
    pub command_losses: CommandLosses,
}

const READ_WINDOW: usize = 250;

impl ToolBox {
    /// The tools, as the model sees them.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut out: Vec<ToolSpec> = [
            ("search_code", Operation::Search),
            ("context", Operation::Context),
            ("callers", Operation::Callers),
            ("callees", Operation::Callees),
            ("impact", Operation::Impact),
            ("overview", Operation::Overview),
        ]
        .into_iter()
        .map(|(name, op)| ToolSpec {
            name: name.to_string(),
            description: op.description().to_string(),
            parameters: op.input_schema(),
        })
        .collect();
        let spec = |name: &str, description: &str, parameters: Value| ToolSpec {
            name: name.to_string(),
            description: description.to_string(),
            parameters,
        };
        let obj = |props: Value, required: &[&str]| json!({"type": "object", "properties": props, "required": required});
        out.extend([
            spec("read_file", "Read a file of the workspace with line numbers (a window of lines; default the first 250).",
                obj(json!({"path": {"type": "string"}, "start_line": {"type": "integer"}, "end_line": {"type": "integer"}, "ignored": {"type": "boolean", "description": "read a file the ignore rules keep out of the index, on purpose"}}), &["path"])),
            spec("list_dir", "List a folder of the workspace (default its root).", obj(json!({"path": {"type": "string"}}), &[])),
            spec("apply_patch", "Edit files with a patch in the `*** Begin Patch` format: `*** Update File: PATH` then hunks of ' ' context, '-' removed and '+' added lines (an optional `@@ line` anchor first), `*** Add File: PATH` with '+' lines, `*** Delete File: PATH`, and `*** End Patch`. Every hunk is checked before any file is written.",
                obj(json!({"patch": {"type": "string"}}), &["patch"])),
            spec("str_replace", "Replace one exact, unique occurrence of `old` by `new` in a file.",
                obj(json!({"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}}), &["path", "old", "new"])),
            spec("write_file", "Write a new file (or replace a whole file) with `contents`.",
                obj(json!({"path": {"type": "string"}, "contents": {"type": "string"}}), &["path", "contents"])),
            spec("run_command", "Run a shell command in the workspace, in the sandbox, after the approval policy; returns its exit status and output.",
                obj(json!({"command": {"type": "string"}}), &["command"])),
            spec("run_tests", "Run the tests: the configured test command, else the tests the impact analysis selects for the files changed.", obj(json!({}), &[])),
            spec("update_plan", "Replace the plan: a list of steps, each with a status (pending, in_progress, done).",
                obj(json!({"steps": {"type": "array", "items": {"type": "object", "properties": {"step": {"type": "string"}, "status": {"type": "string"}}, "required": ["step", "status"]}}}), &["steps"])),
            spec("finish", "Say the task is done, with a short summary; the harness then runs the evaluation.",
                obj(json!({"summary": {"type": "string"}}), &["summary"])),
        ]);
        out
    }

    /// Runs one call; `step` labels its checkpoint.
    pub fn call(&mut self, name: &str, arguments: &str, step: u32) -> ToolResult {
        let args: Value = match serde_json::from_str(if arguments.trim().is_empty() {
            "{}"
        } else {
            arguments
        }) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return ToolResult::err("the arguments must be a JSON object"),
            Err(e) => {
                return ToolResult::err(format!(
                    "the arguments are not valid JSON ({e}); send a JSON object matching the tool's schema"
                ));
            }
        };
        let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_string);
        let mut result = match name {
            "search_code" => self.index(Operation::Search, args.clone()),
            "context" => self.index(Operation::Context, args.clone()),
            "callers" => self.index(Operation::Callers, args.clone()),
            "callees" => self.index(Operation::Callees, args.clone()),
            "impact" => self.index(Operation::Impact, args.clone()),
            "overview" => self.index(Operation::Overview, args.clone()),
            "read_file" => match text("path") {
                Some(p) => self.read_file(
                    &p,
                    args["start_line"].as_u64(),
                    args["end_line"].as_u64(),
                    args["ignored"].as_bool().unwrap_or(false),
                ),
                None => ToolResult::err("read_file needs `path`"),
            },
            "list_dir" => self.list_dir(text("path").as_deref().unwrap_or(".")),
            "apply_patch" => match text("patch") {
                Some(p) => self.edit(step, "apply_patch", |tb| tb.apply_patch(&p)),
                None => ToolResult::err("apply_patch needs `patch`"),
            },
            "str_replace" => match (text("path"), text("old"), text("new")) {
                (Some(p), Some(o), Some(n)) => {
                    self.edit(step, "str_replace", |tb| tb.str_replace(&p, &o, &n))
                }
                _ => ToolResult::err("str_replace needs `path`, `old` and `new`"),
            },
            "write_file" => match (text("path"), text("contents")) {
                (Some(p), Some(c)) => self.edit(step, "write_file", |tb| tb.write_file(&p, &c)),
                _ => ToolResult::err("write_file needs `path` and `contents`"),
            },
            "run_command" => match text("command") {
                Some(c) => self.run_command(&c, step),
                None => ToolResult::err("run_command needs `command`"),
            },
            "run_tests" => self.run_tests(step),
            "update_plan" => match serde_json::from_value::<Vec<PlanStep>>(args["steps"].clone()) {
                Ok(steps) => {
                    self.plan = steps;
                    ToolResult::ok(format!("plan updated ({} steps)", self.plan.len()))
                }
                Err(e) => ToolResult::err(format!("`steps` must be a list of {{step, status}}: {e}")),
            },
            "finish" => ToolResult {
                content: "the harness runs the evaluation now".to_string(),
                finish: Some(text("summary").unwrap_or_default()),
                ..ToolResult::default()
            },
            other => ToolResult::err(format!(
                "there is no tool `{other}`; the tools are: {}",
                self.specs()
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        };
        result.content = cut(&result.content, self.output_cap);
        result
    }

    fn index(&self, op: Operation, args: Value) -> ToolResult {
        match self.workspace.answer(op, args) {
            // What the model reads: spans, names, code, a coverage line; not the JSON.
            Ok(a) => ToolResult::ok(crate::api::answer_text::render(&a)),
            Err(e) => ToolResult::err(e.to_string()),
        }
    }

    /// The file a path names, if it may be written: inside the workspace (symlinks resolved),
    /// not under `.kenning` or a version-control folder at any depth (`repo_path` refuses
    /// those: a hook written there would run outside the sandbox).
    pub fn writable(&self, given: &str) -> Result<PathBuf, String> {
        let rel = crate::api::repo_path(&self.root, "path", given).map_err(|e| e.to_string())?;
        let target = self.root.join(&rel);
        let real_root = self.root.canonicalize().map_err(|e| e.to_string())?;
        let mut probe = target.clone();
        while !probe.exists() {
            if !probe.pop() {
                break;
            }
        }
        let real = probe.canonicalize().map_err(|e| format!("{rel}: {e}"))?;
        if !real.starts_with(&real_root) {
            return Err(format!("{rel}: resolves outside the workspace"));
        }
        if target.is_symlink() {
            return Err(format!("{rel}: is a symlink; edit the file it points to"));
        }
        Ok(target)
    }

    fn read_file(&self, given: &str, start: Option<u64>, end: Option<u64>, ignored: bool) -> ToolResult {
        let (rel, real) =
            match crate::api::confined_file(&self.root, self.workspace.index_dir(), "path", given, ignored) {
                Ok(v) => v,
                Err(e) => return ToolResult::err(e.to_string()),
            };
        let text = match std::fs::read_to_string(&real) {
            Ok(t) => t,
            Err(e) => return ToolResult::err(format!("{rel}: {e}")),
        };
        let lines: Vec<&str> = text.lines().collect();
        let from = start.unwrap_or(1).max(1) as usize;
        let to = end
            .map(|e| e as usize)
            .unwrap_or(from + READ_WINDOW - 1)
            .min(lines.len());
        if from > lines.len().max(1) {
            return ToolResult::err(format!("{rel} has {} lines", lines.len()));
        }
        let mut out = format!("{rel} (lines {from}-{to} of {})\n", lines.len());
        for (i, l) in lines.iter().enumerate().take(to).skip(from - 1) {
            out.push_str(&format!("{:>5}  {l}\n", i + 1));
        }
        ToolResult::ok(out)
    }

    fn list_dir(&self, given: &str) -> ToolResult {
        let dir = if given.trim().is_empty() || given == "." {
            self.root.clone()
        } else {
            match crate::api::repo_path(&self.root, "path", given) {
                Ok(rel) => self.root.join(rel),
                Err(e) => return ToolResult::err(e.to_string()),
            }
        };
        // A folder reached through a symbolic link must still be inside the workspace.
        let inside = match (dir.canonicalize(), self.root.canonicalize()) {
            (Ok(d), Ok(r)) => d.starts_with(&r),
            _ => false,
        };
        let entries = match inside.then(|| std::fs::read_dir(&dir)) {
            Some(Ok(entries)) => entries,
            _ => return ToolResult::err(format!("{given}: not a folder of the workspace")),
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|e| {
                let n = e.file_name();
                n != ".kenning" && !matches!(n.to_str(), Some(".git" | ".hg" | ".svn"))
            })
            .map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                if e.path().is_dir() { format!("{n}/") } else { n }
            })
            .collect();
        names.sort();
        ToolResult::ok(names.join("\n"))
    }

    /// Checkpoints, runs the edit, then checks its risk, its syntax, and reindexes.
    fn edit(
        &mut self,
        step: u32,
        tool: &str,
        f: impl FnOnce(&mut ToolBox) -> Result<Vec<String>, String>,
    ) -> ToolResult {
        let before = match self.checkpoints.save(&format!("step {step}: before {tool}")) {
            Ok(c) => c,
            Err(e) => return ToolResult::err(format!("cannot checkpoint before editing: {e}")),
        };
        let changed = match f(self) {
            Ok(c) => c,
            Err(e) => return ToolResult::err(e),
        };
        let mut result = ToolResult::ok(format!("edited {}", changed.join(", ")));
        result.checkpoint = Some(before.clone());
        let (judged, notes) = self.judge_edit();
        if !notes.is_empty() {
            result
                .content
                .push_str(&format!(" (noted: {})", notes.join("; ")));
        }
        if let Some((decision, by)) = judged {
            if let Decision::Deny { reason } = &decision {
                let undone = self.checkpoints.restore(&before).is_ok();
                return ToolResult {
                    content: format!(
                        "edit refused and undone{}: {reason}",
                        if undone { "" } else { " (UNDO FAILED)" }
                    ),
                    error: true,
                    decision: Some((decision, by)),
                    ..ToolResult::default()
                };
            }
            result.decision = Some((decision, by));
        }
        let mut problems = Vec::new();
        for rel in &changed {
            let path = self.root.join(rel);
            if let Ok(text) = std::fs::read_to_string(&path) {
                problems.extend(SyntaxCheck::errors(Path::new(rel), &text));
            }
        }
        self.files_changed.extend(changed.iter().cloned());
        result.changed = changed;
        if let Err(e) = self
            .workspace
            .reindex(&ReindexRequest { full: false }, &NoProgress)
        {
            result
                .content
                .push_str(&format!("\n(note: the index could not be updated: {e})"));
        }
        if !problems.is_empty() {
            result.error = true;
            result
                .content
                .push_str("\nthe edit left syntax errors; fix them:\n");
            result.content.push_str(&problems.join("\n"));
        }
        result
    }

    /// The edit policy on the working tree as it now stands (`None` when nothing asks), and
    /// its notes (the blast radius of a body change asks for nothing but is recorded).
    fn judge_edit(&mut self) -> (Option<(Decision, String)>, Vec<String>) {
        if self.edits_preapproved {
            return (
                Some((Decision::Allow, "approved up front (--approve-edits)".to_string())),
                Vec::new(),
            );
        }
        let Ok(impact) = self.workspace.analysis().impact(&ImpactRequest::default()) else {
            return (None, Vec::new());
        };
        let verdict = EditPolicy::default().judge(&impact.impact, self.approval, self.mode);
        let allow_with = "pass --approve-edits to allow edits up front, or run on a terminal to be asked";
        let judged = match verdict.decision {
            Decision::Allow => None,
            Decision::Deny { reason } => Some((
                Decision::Deny {
                    reason: format!("{reason}; {allow_with}"),
                },
                "edit policy".to_string(),
            )),
            Decision::Ask { reason } => {
                let (decision, by) = self.ask(&format!("edit: {}", verdict.risks.join("; ")), &reason);
                let decision = match decision {
                    Decision::Deny { reason } if self.approver.is_none() => Decision::Deny {
                        reason: format!("{reason} ({allow_with})"),
                    },
                    d => d,
                };
                Some((decision, by))
            }
        };
        (judged, verdict.notes)
    }

    /// What needs approval, put to the person (if one can be asked) or refused.
    fn ask(&mut self, what: &str, reason: &str) -> (Decision, String) {
        let a = AgentAsker::answer(&mut self.approver, what, reason);
        (a.decision, a.decided_by)
    }

    fn apply_patch(&mut self, patch: &str) -> Result<Vec<String>, String> {
        let ops = PatchApplier::parse(patch).map_err(|e| format!("the patch does not parse: {e}"))?;
        let resolve = |p: &str| self.writable(p);
        let changes = PatchApplier::apply(&ops, &self.root, &resolve)
            .map_err(|e| format!("the patch does not apply (nothing was written): {e}"))?;
        Ok(changes.into_iter().map(|c| c.path).collect())
    }

    fn str_replace(&mut self, path: &str, old: &str, new: &str) -> Result<Vec<String>, String> {
        let target = self.writable(path)?;
        let text = std::fs::read_to_string(&target).map_err(|e| format!("{path}: {e}"))?;
        match text.matches(old).count() {
            0 => {
                return Err(format!(
                    "{path}: `old` is not in the file (it must match exactly, whitespace included)"
                ));
            }
            1 => {}
            n => {
                return Err(format!(
                    "{path}: `old` occurs {n} times; give more context so it is unique"
                ));
            }
        }
        std::fs::write(&target, text.replacen(old, new, 1)).map_err(|e| format!("{path}: {e}"))?;
        Ok(vec![self.rel(&target)])
    }

    fn write_file(&mut self, path: &str, contents: &str) -> Result<Vec<String>, String> {
        let target = self.writable(path)?;
        if let Some(dir) = target.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{path}: {e}"))?;
        }
        std::fs::write(&target, contents).map_err(|e| format!("{path}: {e}"))?;
        Ok(vec![self.rel(&target)])
    }

    fn rel(&self, p: &Path) -> String {
        p.strip_prefix(&self.root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    }

    fn policy_context(&self) -> PolicyContext {
        PolicyContext {
            branch: WorkspaceSnapshot::branch(&self.root),
            network: self.network,
            paths: Some(WorkspacePaths::load(&self.root, &self.root)),
        }
    }

    /// The files a command deleted or overwrote since `checkpoint`, kept for the summary.
    fn record_losses(&mut self, checkpoint: Option<&str>, step: u32) -> Vec<LostFile> {
        let Some(commit) = checkpoint else {
            return Vec::new();
        };
        // Unknown losses are no reason to fail the call: the checkpoint is there either way.
        let lost = self.checkpoints.lost_since(commit).unwrap_or_default();
        self.command_losses.record(step, &lost);
        lost
    }

    /// The harness's own evaluation command, under the same checkpoint rule as the model's
    /// commands; the run and the checkpoint saved before it.
    pub fn evaluation(&mut self, command: &str, step: u32) -> Result<(RunReport, Option<String>), String> {
        let judged = JudgedCommand {
            text: command.to_string(),
            verdict: ActionPolicy::classify(command, &self.policy_context()),
            ruled: RuledDecision {
                decision: Decision::Allow,
                decided_by: "the harness".to_string(),
            },
        };
        let label = format!("step {step}: before evaluation");
        let checkpoint = CommandGate::checkpoint(&judged, || self.checkpoints.save(&label))?;
        let report = self.confined(command)?;
        self.record_losses(checkpoint.as_deref(), step);
        Ok((report, checkpoint))
    }

    /// Through the command gate: judged by the policy and rules, a person asked where one can
    /// be, checkpointed where it may write; then run confined.
    pub fn run_command(&mut self, command: &str, step: u32) -> ToolResult {
        let gate = CommandGate {
            rules: &self.rules,
            approval: self.approval,
            mode: self.mode,
            context: self.policy_context(),
        };
        let judged = gate.judge(command);
        let approval = gate
            .approve(&judged, &mut AgentAsker(&mut self.approver))
            .unwrap_or_else(|why| Approval::denied(why, "a person"));
        let (decision, by) = (approval.decision, approval.decided_by);
        if let Decision::Deny { reason } = &decision {
            return ToolResult {
                content: format!("denied [{}]: {reason}", judged.verdict.class.as_str()),
                error: true,
                decision: Some((decision, by)),
                ..ToolResult::default()
            };
        }
        let label = format!("step {step}: before run_command");
        let checkpoint = match CommandGate::checkpoint(&judged, || self.checkpoints.save(&label)) {
            Ok(c) => c,
            Err(why) => {
                return ToolResult {
                    content: why,
                    error: true,
                    decision: Some((decision, by)),
                    ..ToolResult::default()
                };
            }
        };
        let before = WorkspaceSnapshot::take(&self.root);
        let report = match self.confined(command) {
            Ok(r) => r,
            Err(e) => return ToolResult::err(format!("the sandbox could not run it: {e}")),
        };
        self.commands_run.push((command.to_string(), report.status));
        let changed: Vec<String> = before
            .and_then(|b| WorkspaceSnapshot::take(&self.root).map(|a| b.changed(&a)))
            .unwrap_or_default();
        self.files_changed.extend(changed.iter().cloned());
        let lost = self.record_losses(checkpoint.as_deref(), step);
        let mut content = format!("exit status {}", report.status);
        if let Some(k) = &report.killed_by {
            content.push_str(&format!(" (stopped by the {k} limit)"));
        }
        if let Some(r) = &report.refused {
            content.push_str(&format!(" (not run: {r})"));
        }
        if !lost.is_empty() {
            content.push_str(&format!(
                "\nthis command took away {} file(s) saved before it: {}",
                lost.len(),
                lost_names(&lost, 20)
            ));
        }
        content.push_str(&format!(
            "\nstdout:\n{}\nstderr:\n{}",
            report.stdout.text, report.stderr.text
        ));
        ToolResult {
            content,
            error: report.status != 0,
            decision: Some((decision, by)),
            run: Some(Box::new(report)),
            changed,
            checkpoint,
            ..ToolResult::default()
        }
    }

    /// A command in the sandbox as the agent runs them: `sh -c`, in the workspace.
    pub fn confined(&self, command: &str) -> Result<RunReport, String> {
        let mut spec = SandboxSpec::new(
            self.mode,
            self.root.clone(),
            vec!["sh".into(), "-c".into(), command.to_string()],
        );
        let env = self.rules.scrubber(&[]).scrub(std::env::vars());
        spec.env = env.vars;
        spec.env_removed = env.removed;
        spec.network = self.network;
        spec.read_only = self.rules.sandbox.read_only.clone();
        spec.limits = Limits {
            timeout_ms: Some(self.command_timeout_ms),
            ..Limits::default()
        };
        self.sandbox.run(spec).map_err(|e| e.to_string())
    }

    /// The test command to run: the configured one, else the impact analysis's selection for
    /// the files changed so far — the tests that must run (as `ken impact --run` runs them),
    /// or, when no test reaches the change, the likely ones.
    pub fn test_command(&self) -> Option<String> {
        if let Some(c) = &self.test_cmd {
            return Some(c.clone());
        }
        let impact = self
            .workspace
            .analysis()
            .impact(&ImpactRequest::default())
            .ok()?
            .impact;
        let cmds = match impact.must_run_commands.is_empty() {
            true => impact.test_commands,
            false => impact.must_run_commands,
        };
        (!cmds.is_empty()).then(|| cmds.join(" && "))
    }

    fn run_tests(&mut self, step: u32) -> ToolResult {
        let Some(cmd) = self.test_command() else {
            return ToolResult::err(
                "no test command is configured and the impact analysis selects no test for the changes",
            );
        };
        let r = self.run_command(&cmd, step);
        self.last_test = Some((cmd, !r.error));
        r
    }
}

/// Head and tail of `s` within `cap` bytes, with a marker.
pub fn cut(s: &str, cap: usize) -> String {
    if s.len() <= cap {
        return s.to_string();
    }
    let mut c = OutputCapture::new(cap);
    c.push(s.as_bytes());
    c.finish().text
}
