//! `ken agent`: a task run by the bundled agent (events streamed readably on stderr, or as
//! JSON lines on stdout), and `resume`, `rollback` and `stats` over past sessions, each kept
//! in `<state dir>/kenning/agent/<session>/` (its audit log, its checkpoints, its settings).

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::args::{AgentArgs, AgentCommand, AgentRunArgs};
use super::exec_commands::{
    agent_sessions_dir, approval_policy, config_dir, safe_name, sandbox_mode, state_dir,
};
use super::progress::ProgressBars;
use crate::agent::{
    Agent, AgentConfig, AgentEvent, AgentLimits, AgentOutcome, AgentState, AgentStats, Approver,
    CheckpointStore, ModelRouter, RoutedModel, ToolBox,
};
use crate::api::{ReindexRequest, Workspace};
use crate::exec::{AuditLog, ExecRules, Sandbox, verify_audit_log};
use crate::index::NoProgress;
use crate::providers::{Message, RunBounds, ToolCall};

pub fn agent(a: AgentArgs) -> Result<ExitCode> {
    match a.command {
        Some(AgentCommand::Rollback { session, step }) => rollback(&session, step),
        Some(AgentCommand::Stats { logs, json }) => stats(&logs, json),
        Some(AgentCommand::Resume { id: session, run }) => {
            let dir = session_dir(&session)?;
            let saved: SavedSession = serde_json::from_str(
                &std::fs::read_to_string(dir.join("session.json"))
                    .with_context(|| format!("no session `{session}` in {}", dir.display()))?,
            )?;
            let messages = replay(&dir.join("audit.jsonl"))?;
            let mut run = run;
            run.repo = Some(saved.repo.clone());
            run.model = run.model.or(saved.model.clone());
            run.test_cmd = run.test_cmd.or(saved.test_cmd.clone());
            start(&saved.task, run, Some((session, messages)))
        }
        None => match a.task {
            Some(task) if !task.trim().is_empty() => start(&task, a.run, None),
            _ => bail!(
                "ken agent: give the task, as in `ken agent \"fix the failing test in tests/test_cart.py\"`"
            ),
        },
    }
}

/// `.kenning/agent.toml` in the repository, then `agent.toml` in the user's config folder:
/// `model`, `summary_model`, `delegate_model` (what sub-agents run on), and `private = true`
/// (only loopback endpoints see the code).
/// The repository's file wins, and flags win over both.
#[derive(Default, Deserialize)]
struct AgentSettings {
    model: Option<String>,
    summary_model: Option<String>,
    delegate_model: Option<String>,
    private: Option<bool>,
}

impl AgentSettings {
    fn load(root: &Path) -> Result<AgentSettings> {
        let mut out = AgentSettings::default();
        let files = [
            Some(root.join(".kenning/agent.toml")),
            config_dir().map(|d| d.join("agent.toml")),
        ];
        for path in files.into_iter().flatten() {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let s: AgentSettings =
                toml::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
            out.model = out.model.or(s.model);
            out.summary_model = out.summary_model.or(s.summary_model);
            out.delegate_model = out.delegate_model.or(s.delegate_model);
            // Private anywhere is private.
            out.private = Some(out.private.unwrap_or(false) || s.private.unwrap_or(false));
        }
        Ok(out)
    }
}

/// What `resume` needs to start again.
#[derive(Serialize, Deserialize)]
struct SavedSession {
    task: String,
    repo: PathBuf,
    model: Option<String>,
    test_cmd: Option<String>,
}

fn session_dir(session: &str) -> Result<PathBuf> {
    Ok(state_dir()
        .context("no state folder: set XDG_STATE_HOME or HOME")?
        .join("agent")
        .join(safe_name(session)))
}

fn open_workspace(repo: Option<&Path>) -> Result<Arc<Workspace>> {
    let ws = match Workspace::locate(repo, None) {
        Ok((root, index_dir)) => Workspace::open_at(root, index_dir, crate::api::Staleness::Scan)?,
        Err(_) => {
            let root = match repo {
                Some(r) => r.to_path_buf(),
                None => std::env::current_dir()?,
            };
            eprintln!("no index for {}: building one first", root.display());
            let progress = ProgressBars::new(!std::io::stderr().is_terminal());
            let plan = crate::api::BuildPlan::default_for(&root, None);
            let builder = plan
                .builder(&progress)
                .with_context(|| format!("cannot index {}", root.display()))?;
            let report = builder.build()?;
            Workspace::open_at(
                builder.root().to_path_buf(),
                report.index_dir,
                crate::api::Staleness::Scan,
            )?
        }
    };
    // Start from the tree as it is now.
    ws.reindex(&ReindexRequest { full: false }, &NoProgress)?;
    Ok(Arc::new(ws))
}

fn start(task: &str, run: AgentRunArgs, resumed: Option<(String, Vec<Message>)>) -> Result<ExitCode> {
    let ws = open_workspace(run.repo.as_deref())?;
    let root = ws.root().to_path_buf();
    let settings = AgentSettings::load(&root)?;
    let (routed, delegate, summarizer) = route_models(&run, &settings)?;
    let (session, dir) = open_session(task, &run, &root, resumed.as_ref())?;
    let audit_path = dir.join("audit.jsonl");
    let audit = AuditLog::open(&audit_path)?;
    super::shared::warn_audit_recovery(&audit);
    let checkpoints = CheckpointStore::open(&dir.join("checkpoints.git"), &root)?;
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal() && !run.json;
    let tools = tool_box(ws, &root, &run, &checkpoints, interactive)?;
    let delegate_price = delegate.as_ref().and_then(|d| d.price);
    let config = agent_config(task, &session, &run, routed.price, delegate_price);
    // The wall-time limit holds during a call too: it is the deadline of every call.
    let bounds = RunBounds::process();
    bounds.set_deadline(Duration::from_secs(run.max_time));
    let mut agent = Agent::new(routed.model.as_ref(), tools, audit, config);
    agent.summary_model = summarizer.as_ref().map(|s| s.model.as_ref());
    agent.delegate_model = delegate.as_ref().map(|s| s.model.as_ref());
    agent.cancel = Some(bounds.cancel_flag());
    on_interrupt("ken agent", &bounds);
    let json = run.json;
    let mut sink = |e: &AgentEvent| render(e, json);
    let outcome = match resumed {
        Some((_, messages)) => agent.resume(messages, &mut sink),
        None => agent.run(&mut sink),
    };
    summary(&outcome, &checkpoints, &audit_path, json)?;
    if matches!(outcome.state, AgentState::Failed | AgentState::Cancelled) {
        offer_restore(&checkpoints, &session, interactive)?;
    }
    Ok(exit_code(&outcome, run.max_time, &audit_path))
}

/// The run's model, its delegate's and its summarizer's: each from its flag, else the
/// settings.
fn route_models(
    run: &AgentRunArgs,
    settings: &AgentSettings,
) -> Result<(RoutedModel, Option<RoutedModel>, Option<RoutedModel>)> {
    let private = settings.private.unwrap_or(false);
    let model_spec = run.model.clone().or(settings.model.clone());
    // Latency measured by earlier sessions, for `fastest:` chains.
    let latency = state_dir().map(|d| d.join("agent").join("latency.json"));
    let latency = latency.as_deref();
    let routed = ModelRouter::route(model_spec.as_deref(), private, latency)?;
    let summary_spec = run.summary_model.clone().or(settings.summary_model.clone());
    let delegate_spec = run.delegate_model.clone().or(settings.delegate_model.clone());
    let delegate = delegate_spec
        .as_deref()
        .map(|s| ModelRouter::route(Some(s), private, latency))
        .transpose()?;
    let summarizer = summary_spec
        .as_deref()
        .map(|s| ModelRouter::route(Some(s), private, latency))
        .transpose()?;
    Ok((routed, delegate, summarizer))
}

/// The session's name (the resumed one's, else new) and its folder, with what resuming it
/// needs saved there.
fn open_session(
    task: &str,
    run: &AgentRunArgs,
    root: &Path,
    resumed: Option<&(String, Vec<Message>)>,
) -> Result<(String, PathBuf)> {
    let session = match resumed {
        Some((s, _)) => s.clone(),
        None => run.session.clone().unwrap_or_else(new_session_name),
    };
    let dir = session_dir(&session)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("making {}", dir.display()))?;
    let saved = SavedSession {
        task: task.to_string(),
        repo: root.to_path_buf(),
        model: run.model.clone(),
        test_cmd: run.test_cmd.clone(),
    };
    std::fs::write(dir.join("session.json"), serde_json::to_string_pretty(&saved)?)?;
    Ok((session, dir))
}

/// The agent's tools over `ws`, with the sandbox, approvals and rules the flags ask for.
fn tool_box(
    ws: Arc<Workspace>,
    root: &Path,
    run: &AgentRunArgs,
    checkpoints: &CheckpointStore,
    interactive: bool,
) -> Result<ToolBox> {
    let mut sandbox = Sandbox::new(std::env::current_exe().context("finding the ken binary")?);
    sandbox.stream = false;
    Ok(ToolBox {
        workspace: ws,
        root: root.to_path_buf(),
        sandbox,
        mode: sandbox_mode(run.sandbox),
        network: run.network,
        approval: approval_policy(run.approval),
        rules: ExecRules::load(root, config_dir().as_deref())?,
        approver: interactive.then(tty_approver),
        edits_preapproved: run.approve_edits,
        checkpoints: checkpoints.clone(),
        test_cmd: run.test_cmd.clone(),
        command_timeout_ms: run.command_timeout.saturating_mul(1000),
        output_cap: 12_000,
        plan: Vec::new(),
        files_changed: Default::default(),
        commands_run: Vec::new(),
        last_test: None,
        command_losses: Default::default(),
    })
}

/// The run's limits and window from the flags, and the models' prices.
fn agent_config(
    task: &str,
    session: &str,
    run: &AgentRunArgs,
    price: Option<(f64, f64)>,
    delegate_price: Option<(f64, f64)>,
) -> AgentConfig {
    AgentConfig {
        session: session.to_string(),
        task: task.to_string(),
        limits: AgentLimits {
            max_steps: run.max_steps,
            max_wall: Duration::from_secs(run.max_time),
            max_tokens: run.max_tokens,
            max_cost_usd: run.max_cost,
            ..AgentLimits::default()
        },
        perception_tokens: (run.window_tokens / 3).clamp(500, 6000),
        window_tokens: run.window_tokens.max(2_000),
        price,
        delegate_price,
    }
}

/// Completed 0, cancelled 130 (as a shell reports Ctrl-C), out of time 124 (as `timeout`
/// does), any other failure 1; the two that a person did not read on the way get a line on
/// stderr.
fn exit_code(o: &AgentOutcome, max_time: u64, audit: &Path) -> ExitCode {
    match o.state {
        AgentState::Completed => ExitCode::SUCCESS,
        AgentState::Cancelled => {
            eprintln!("ken agent: cancelled (recorded in {})", audit.display());
            ExitCode::from(130)
        }
        AgentState::Failed if o.out_of_time => {
            eprintln!("ken agent: out of time: the run's deadline (--max-time {max_time}) passed");
            ExitCode::from(124)
        }
        _ => ExitCode::from(1),
    }
}

/// Ctrl-C during a run (`ken agent`, `ken ask`), instead of killing `ken`: the first cancels
/// `bounds`, so the model or embedding call in flight is abandoned at once and the run ends
/// `cancelled` with its log and summary written (a sandboxed command in flight is waited
/// for); a second exits at once with 130. The handler is registered before this returns, so
/// no Ctrl-C after it is the default kill.
pub(super) fn on_interrupt(command: &'static str, bounds: &RunBounds) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        return;
    };
    let registered = {
        let _in = rt.enter();
        signal(SignalKind::interrupt())
    };
    let Ok(mut interrupts) = registered else {
        return;
    };
    let bounds = bounds.clone();
    std::thread::spawn(move || {
        rt.block_on(async move {
            if interrupts.recv().await.is_none() {
                return;
            }
            bounds.cancel();
            eprintln!("\n{command}: interrupted: cancelling the call in flight (Ctrl-C again stops at once)");
            if interrupts.recv().await.is_some() {
                eprintln!("{command}: stopped at once");
                std::process::exit(130);
            }
        });
    });
}

fn new_session_name() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("{secs}-{}", std::process::id())
}

/// Asks on the terminal: `y` approves, anything else denies (with that as the reason).
fn tty_approver() -> Approver {
    Box::new(|what: &str, reason: &str| {
        let Ok(tty) = std::fs::File::open("/dev/tty") else {
            return Err("no terminal".to_string());
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\nken agent wants to: {what}\n  why it asks: {reason}\n  [y] approve, or type a reason to deny > "
        );
        let _ = err.flush();
        let mut line = String::new();
        let _ = std::io::BufReader::new(tty).read_line(&mut line);
        match line.trim() {
            "y" | "yes" => Ok(()),
            "" => Err("denied".to_string()),
            why => Err(why.to_string()),
        }
    })
}

fn render(e: &AgentEvent, json: bool) {
    if json {
        if let Ok(line) = serde_json::to_string(e) {
            println!("{line}");
        }
        return;
    }
    if let Some(line) = event_line(e) {
        eprintln!("{line}");
    }
}

/// `s` on one line, cut to `n` characters.
fn one(s: &str, n: usize) -> String {
    let s = s.replace('\n', " ⏎ ");
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// The human line for an event of the run; `None` for the end (the summary says it).
fn event_line(e: &AgentEvent) -> Option<String> {
    Some(match e {
        AgentEvent::Started {
            session,
            task,
            model,
            workspace,
            ..
        } => format!(
            "▶ session {session} · {model} · {workspace}\n  task: {}",
            one(task, 200)
        ),
        AgentEvent::Transition { to, why, .. } => format!("  ◆ {} — {}", to.as_str(), one(why, 160)),
        AgentEvent::ModelCall { .. } | AgentEvent::ToolCall { .. } | AgentEvent::Checkpoint { .. } => {
            return step_line(e);
        }
        AgentEvent::Evaluation {
            command,
            passed,
            status,
            ..
        } => format!(
            "  ⚖ evaluation `{command}`: {} (status {status})",
            if *passed { "passed" } else { "failed" }
        ),
        AgentEvent::Compaction {
            before_tokens,
            after_tokens,
        } => format!("  ⇣ compacted the conversation: {before_tokens} -> {after_tokens} tokens"),
        AgentEvent::Delegated { task, max_steps } => {
            format!("  ↳ sub-agent ({max_steps} calls): {}", one(task, 160))
        }
        AgentEvent::DelegationDone { summary, .. } => format!("  ↲ sub-agent done: {}", one(summary, 160)),
        AgentEvent::Finished { .. } => return None,
    })
}

/// The lines of a step: its model call, its tool calls, its checkpoint.
fn step_line(e: &AgentEvent) -> Option<String> {
    match e {
        AgentEvent::ModelCall {
            step,
            input_tokens,
            output_tokens,
            text,
            ..
        } => Some(format!(
            "[{step}] model: {input_tokens}+{output_tokens} tokens{}",
            if text.is_empty() {
                String::new()
            } else {
                format!(" · {}", one(text, 160))
            }
        )),
        AgentEvent::ToolCall {
            name,
            arguments,
            ok,
            result,
            ..
        } => Some(format!(
            "    {} {name} {} → {}",
            if *ok { "✓" } else { "✗" },
            one(arguments, 100),
            one(result, 140)
        )),
        AgentEvent::Checkpoint { commit, .. } => {
            Some(format!("    checkpoint {}", &commit[..commit.len().min(12)]))
        }
        _ => None,
    }
}

fn summary(o: &AgentOutcome, checkpoints: &CheckpointStore, audit: &Path, json: bool) -> Result<()> {
    if json {
        println!(
            "{}",
            serde_json::to_string(&serde_json::json!({"outcome": o, "audit_log": audit}))?
        );
        return Ok(());
    }
    let stat = checkpoints.diff_stat_since_start().unwrap_or_default();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} after {} model call(s): {}",
        o.state.as_str(),
        o.steps,
        o.reason
    )?;
    writeln!(
        out,
        "files changed: {}",
        if o.files_changed.is_empty() {
            "none".to_string()
        } else {
            o.files_changed.join(", ")
        }
    )?;
    if !o.files_lost.is_empty() {
        let lost: Vec<String> = o
            .files_lost
            .iter()
            .map(|l| format!("{} ({})", l.path, l.loss.as_str()))
            .collect();
        writeln!(out, "deleted or overwritten by commands: {}", lost.join(", "))?;
    }
    if !stat.is_empty() {
        writeln!(out, "{stat}")?;
    }
    match &o.last_test {
        Some((cmd, ok)) => writeln!(out, "tests: `{cmd}` {}", if *ok { "passed" } else { "failed" })?,
        None => writeln!(out, "tests: not run")?,
    }
    writeln!(
        out,
        "tokens: {} in, {} out · cost ${:.4}",
        o.usage.input_tokens, o.usage.output_tokens, o.cost_usd
    )?;
    writeln!(out, "audit log: {} (ken audit verify it)", audit.display())?;
    writeln!(
        out,
        "session: {} (ken agent rollback {} to undo)",
        o.session, o.session
    )?;
    Ok(())
}

fn offer_restore(checkpoints: &CheckpointStore, session: &str, interactive: bool) -> Result<()> {
    if !interactive {
        eprintln!(
            "the tree is kept as the run left it; `ken agent rollback {session}` restores the starting tree"
        );
        return Ok(());
    }
    eprint!("restore the tree as it was before the run? [y/N] ");
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    if line.trim() == "y" {
        let start = checkpoints
            .list()?
            .into_iter()
            .find(|c| c.label == "start")
            .context("no starting checkpoint")?;
        checkpoints.restore(&start.commit)?;
        eprintln!("restored");
    }
    Ok(())
}

fn rollback(session: &str, step: Option<u32>) -> Result<ExitCode> {
    let dir = session_dir(session)?;
    let saved: SavedSession = serde_json::from_str(
        &std::fs::read_to_string(dir.join("session.json"))
            .with_context(|| format!("no session `{session}` in {}", dir.display()))?,
    )?;
    let store = CheckpointStore::open(&dir.join("checkpoints.git"), &saved.repo)?;
    let all = store.list()?;
    let target = match step {
        None => all.iter().find(|c| c.label == "start"),
        Some(n) => all
            .iter()
            .find(|c| c.label.starts_with(&format!("step {n}: before"))),
    };
    let Some(target) = target else {
        let steps: Vec<&str> = all.iter().map(|c| c.label.as_str()).collect();
        bail!(
            "session {session} has no checkpoint for {}; it has: {}",
            step.map_or("its start".to_string(), |n| format!("step {n}")),
            steps.join("; ")
        );
    };
    let undo = store.restore(&target.commit)?;
    println!(
        "restored {} to `{}`; the tree it replaced is checkpoint {}",
        saved.repo.display(),
        target.label,
        &undo[..undo.len().min(12)]
    );
    Ok(ExitCode::SUCCESS)
}

/// The conversation an audit log holds: the first prompt, each model turn with its calls,
/// each call's result, and each failed evaluation's report.
fn replay(log: &Path) -> Result<Vec<Message>> {
    let report = verify_audit_log(log)?;
    if !report.intact() {
        bail!(
            "{}: the audit log does not verify; a session is resumed only from an intact log",
            log.display()
        );
    }
    let mut out: Vec<Message> = Vec::new();
    let text = std::fs::read_to_string(log)?;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let e = &v["event"];
        match e["kind"].as_str() {
            Some("started") => out.push(Message::user(e["prompt"].as_str().unwrap_or_default())),
            Some("model-call") => out.push(Message::assistant(
                e["text"].as_str().unwrap_or_default(),
                Vec::new(),
            )),
            Some("tool-call") => {
                let call = ToolCall {
                    id: e["id"].as_str().unwrap_or_default().to_string(),
                    name: e["name"].as_str().unwrap_or_default().to_string(),
                    arguments: e["arguments"].as_str().unwrap_or_default().to_string(),
                };
                if let Some(m) = out
                    .iter_mut()
                    .rev()
                    .find(|m| m.role == crate::providers::Role::Assistant)
                {
                    m.tool_calls.push(call.clone());
                }
                out.push(Message::tool(&call.id, e["result"].as_str().unwrap_or_default()));
            }
            Some("evaluation") if e["passed"] == false => out.push(Message::user(format!(
                "The evaluation `{}` failed. Fix it, then call finish again.\n{}",
                e["command"].as_str().unwrap_or_default(),
                e["output"].as_str().unwrap_or_default()
            ))),
            _ => {}
        }
    }
    if out.is_empty() {
        bail!("{}: nothing to resume", log.display());
    }
    Ok(out)
}

fn stats(logs: &[PathBuf], json: bool) -> Result<ExitCode> {
    let logs: Vec<PathBuf> = if logs.is_empty() {
        AgentStats::session_logs(&agent_sessions_dir().context("no state folder")?)
    } else {
        logs.to_vec()
    };
    let s = AgentStats::from_logs(&logs)?;
    for skipped in &s.skipped {
        eprintln!(
            "warning: {} is left out: {} (`ken audit verify` it)",
            skipped.path, skipped.reason
        );
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        println!(
            "{} session(s): {} completed, {} not ({:.0}% success) · {:.1} model calls on average · {} + {} tokens · ${:.4}",
            s.sessions,
            s.completed,
            s.failed,
            s.success_rate * 100.0,
            s.average_model_calls,
            s.input_tokens,
            s.output_tokens,
            s.cost_usd
        );
    }
    Ok(ExitCode::SUCCESS)
}
