//! `ken exec`: judge a command (policy, rules, a person on a TTY), run it in the sandbox,
//! record it in the audit log, exit with its status. Every command that may write work (all
//! but those known to be read-only: opaque programs such as `python3 -c`, `make` or a script
//! included) is checkpointed first, and does not run when the checkpoint cannot be saved;
//! `ken exec --undo` restores, and a run that deleted or overwrote saved files says which.
//! `ken exec --doctor` prints what this kernel enforces.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};

use super::args::{ApprovalArg, ExecArgs, SandboxArg};
use super::shared::print_json;
use crate::exec::{
    ActionClass, Approval, ApprovalAsker, ApprovalPolicy, AuditLog, Checkpoint, CheckpointStore,
    CommandEvent, CommandGate, CommandVerdict, Decision, ExecResult, ExecRules, FileLoss, JudgedCommand,
    Limits, LostFile, Mechanism, MechanismState, PolicyContext, RunReport, Sandbox, SandboxMode,
    SandboxSettings, SandboxSpec, SessionApprovals, WorkspacePaths, WorkspaceSnapshot, default_workspace,
};

/// Exit code of a command the policy or a person refused.
const DENIED: u8 = 126;

pub fn exec(a: ExecArgs) -> Result<ExitCode> {
    if a.doctor {
        return doctor(a.json);
    }
    if a.undo.is_none() && a.command.is_empty() {
        bail!("ken exec: no command given; put it after `--`, as in `ken exec -- cargo test`");
    }
    check_limits(&a)?;
    let cwd = std::env::current_dir().context("reading the current folder")?;
    let workspace = workspace_of(&a, &cwd)?;
    if let Some(which) = &a.undo {
        return undo(&a, &workspace, which);
    }
    let rules = ExecRules::load(&workspace, config_dir().as_deref())?;
    let mode = sandbox_mode(a.sandbox);
    let gate = gate_for(&a, &rules, &workspace, &cwd);
    let text = shlex::try_join(a.command.iter().map(String::as_str)).unwrap_or_else(|_| a.command.join(" "));
    let judged = gate.judge(&text);
    if a.explain {
        return explain(&judged.verdict, &judged.ruled, a.json);
    }
    let audit_path = audit_path(&a)?;
    let mut audit = AuditLog::open(&audit_path)?;
    super::shared::warn_audit_recovery(&audit);
    let mut asker = TerminalAsker {
        approvals_path: audit_path.with_extension("approvals.json"),
    };
    let approval = gate.approve(&judged, &mut asker).map_err(anyhow::Error::msg)?;
    if let Decision::Deny { reason } = &approval.decision
        && !approval.aborted
    {
        eprintln!("ken exec: denied: {reason}");
    }
    let network = gate.network(&judged, &approval);
    let mut event = command_event(&a, &judged, &approval, cwd.clone(), mode, network, &workspace);
    if !approval.is_allowed() {
        audit.append(&event)?;
        if approval.aborted {
            bail!("aborted at the approval prompt");
        }
        return Ok(ExitCode::from(DENIED));
    }
    // Whatever may write work can be undone: the tree is saved first (in every sandbox mode:
    // a degraded sandbox may not hold a read-only one), and a command whose undo cannot be
    // saved does not run.
    let mut store = None;
    let saved = CommandGate::checkpoint(&judged, || {
        save_checkpoint(&a.session, &workspace, &text).map(|(s, commit)| {
            store = Some(s);
            commit
        })
    });
    match saved {
        Ok(commit) => event.checkpoint = commit,
        Err(why) => {
            audit.append(&event)?;
            bail!("{why}");
        }
    }
    let spec = sandbox_spec(&a, mode, &workspace, cwd, network, &rules);
    let Confined {
        report,
        files_changed,
        files_lost,
    } = run_confined(&a, spec, &workspace, store.as_ref(), event.checkpoint.as_deref())?;
    event.result = Some(ExecResult::of(&report, files_changed, files_lost.clone()));
    audit.append(&event)?;
    report_run(
        &a,
        &report,
        &event,
        &audit_path,
        files_lost.as_deref(),
        judged.verdict.class,
    )
}

/// The audit event for a judged command, before it runs.
fn command_event(
    a: &ExecArgs,
    judged: &JudgedCommand,
    approval: &Approval,
    cwd: PathBuf,
    mode: SandboxMode,
    network: bool,
    workspace: &Path,
) -> CommandEvent {
    let verdict = &judged.verdict;
    CommandEvent {
        kind: "command",
        session: a.session.clone(),
        command: a.command.clone(),
        cwd,
        class: verdict.class,
        parsed: verdict.parsed,
        parts: verdict
            .parts
            .iter()
            .map(|p| format!("{} [{}]: {}", p.text, p.class.as_str(), p.why))
            .collect(),
        decision: judged.ruled.decision.clone(),
        decided_by: approval.decided_by.clone(),
        person_reason: approval.person_reason.clone(),
        allowed: approval.is_allowed(),
        sandbox: SandboxSettings {
            mode,
            network,
            workspace: workspace.to_path_buf(),
            timeout_s: a.timeout,
            strict: a.sandbox_strict,
        },
        result: None,
        checkpoint: None,
    }
}

/// Runs `spec` in the sandbox; with the files it changed (`None` outside a git work tree) and
/// those it deleted or overwrote since the checkpoint, when one was saved.
fn run_confined(
    a: &ExecArgs,
    spec: SandboxSpec,
    workspace: &Path,
    store: Option<&CheckpointStore>,
    checkpoint: Option<&str>,
) -> Result<Confined> {
    let mut sandbox = Sandbox::new(std::env::current_exe().context("finding the ken binary")?);
    sandbox.stream = !a.json;
    sandbox.capture_bytes = a.capture_bytes.max(64);
    sandbox.ignore_interrupts = true;
    if !a.json {
        sandbox.on_start = Some(Arc::new(|mechanisms: &[Mechanism]| warn_degraded(mechanisms)));
    }
    let before = WorkspaceSnapshot::take(workspace);
    let report = sandbox.run(spec)?;
    let files_changed =
        before.and_then(|b| WorkspaceSnapshot::take(workspace).map(|after| b.changed(&after)));
    let files_lost = match (store, checkpoint) {
        (Some(store), Some(commit)) => Some(store.lost_since(commit).unwrap_or_else(|e| {
            eprintln!("ken exec: cannot tell which files the command removed: {e}");
            Vec::new()
        })),
        _ => None,
    };
    Ok(Confined {
        report,
        files_changed,
        files_lost,
    })
}

/// A confined run and what it did to the workspace.
struct Confined {
    report: RunReport,
    /// `None` outside a git work tree.
    files_changed: Option<Vec<String>>,
    /// `None` when no checkpoint was saved.
    files_lost: Option<Vec<LostFile>>,
}

/// Prints the run's outcome (JSON, or a summary and the undo line on stderr) and gives the
/// command's exit status.
fn report_run(
    a: &ExecArgs,
    report: &RunReport,
    event: &CommandEvent,
    audit_path: &Path,
    files_lost: Option<&[LostFile]>,
    class: ActionClass,
) -> Result<ExitCode> {
    if let Some(why) = &report.refused {
        eprintln!("ken exec: not run: {why}");
    }
    if a.json {
        print_json(&serde_json::json!({
            "report": report,
            "decided_by": event.decided_by,
            "audit_log": audit_path,
            "checkpoint": event.checkpoint,
            "files_lost": files_lost,
        }))?;
    } else {
        eprintln!("{}", summary(report));
    }
    if let Some(commit) = &event.checkpoint {
        let lost = files_lost.unwrap_or_default();
        if let Some(line) = undo_line(&a.session, commit, class, lost) {
            eprintln!("{line}");
        }
    }
    // A command that never ran did not succeed, whatever status the sandbox reported.
    let status = match (&report.refused, report.status) {
        (Some(_), 0) => crate::exec::SETUP_FAILED,
        (_, s) => s,
    };
    Ok(ExitCode::from(u8::try_from(status.clamp(0, 255)).unwrap_or(1)))
}

/// The gate as the flags and the rules file set it.
fn gate_for<'r>(a: &ExecArgs, rules: &'r ExecRules, workspace: &Path, cwd: &Path) -> CommandGate<'r> {
    CommandGate {
        rules,
        approval: approval_policy(a.approval),
        mode: sandbox_mode(a.sandbox),
        context: PolicyContext {
            branch: WorkspaceSnapshot::branch(workspace),
            network: a.network,
            paths: Some(WorkspacePaths::load(workspace, cwd)),
        },
    }
}

/// The workspace the flags name (the enclosing repository by default), checked to be a folder.
fn workspace_of(a: &ExecArgs, cwd: &Path) -> Result<PathBuf> {
    let workspace = match &a.workspace {
        Some(w) => std::fs::canonicalize(w).with_context(|| format!("--workspace {}", w.display()))?,
        None => default_workspace(cwd),
    };
    if !workspace.is_dir() {
        bail!("--workspace {}: not a folder", workspace.display());
    }
    Ok(workspace)
}

/// A timeout, and limits below which no command can start, are refused up front, naming the
/// flag.
fn check_limits(a: &ExecArgs) -> Result<()> {
    if !(a.timeout.is_finite() && a.timeout > 0.0) {
        bail!("--timeout: {} is not a positive number of seconds", a.timeout);
    }
    if a.memory_mib < 16 {
        bail!(
            "--memory-mib: {} MiB is below the 16 MiB a command needs to start",
            a.memory_mib
        );
    }
    if a.max_processes < 1 {
        bail!("--max-processes: must be at least 1, not {}", a.max_processes);
    }
    if a.max_file_mib < 1 {
        bail!("--max-file-mib: must be at least 1, not {}", a.max_file_mib);
    }
    if a.cpu_seconds == Some(0) {
        bail!("--cpu-seconds: must be at least 1 (leave it out for no CPU limit)");
    }
    Ok(())
}

/// The checkpoint saved before `text` runs, in the session's store for `workspace`.
fn save_checkpoint(session: &str, workspace: &Path, text: &str) -> Result<(CheckpointStore, String)> {
    let store = CheckpointStore::open(&checkpoint_dir(session, workspace)?, workspace)?;
    let commit = store.save(&format!("before: {text}"))?;
    Ok((store, commit))
}

/// What to tell a person after a checkpointed run: which saved files it deleted or
/// overwrote, or for a destructive command that it can be undone, and how; `None` for a
/// run that lost nothing.
fn undo_line(session: &str, commit: &str, class: ActionClass, lost: &[LostFile]) -> Option<String> {
    let undo = format!(
        "`ken exec{} --undo` puts the workspace back",
        match session {
            "exec" => String::new(),
            s => format!(" --session {}", shlex::try_quote(s).unwrap_or_default()),
        }
    );
    let short = &commit[..commit.len().min(12)];
    if lost.is_empty() {
        return (class == ActionClass::Destructive)
            .then(|| format!("ken exec: checkpoint {short} saved before this destructive command; {undo}"));
    }
    let count = |loss: FileLoss| lost.iter().filter(|l| l.loss == loss).count();
    const SHOWN: usize = 10;
    let more = format!("and {} more", lost.len().saturating_sub(SHOWN));
    let mut names: Vec<&str> = lost.iter().take(SHOWN).map(|l| l.path.as_str()).collect();
    if lost.len() > SHOWN {
        names.push(&more);
    }
    Some(format!(
        "ken exec: the command deleted {} and overwrote {} saved file(s) ({}); checkpoint {short} holds them: {undo}",
        count(FileLoss::Deleted),
        count(FileLoss::Overwritten),
        names.join(", ")
    ))
}

/// The checkpoint `ken exec --undo` goes back to: the one before the last command that ran,
/// skipping the commands undone already, so each `--undo` goes one command further back.
fn last_undoable(all: &[Checkpoint]) -> Option<&Checkpoint> {
    let mut undone_to: Option<&str> = None;
    for c in all.iter().rev() {
        if let Some(target) = undone_to {
            if c.commit.starts_with(target) {
                undone_to = None;
            }
            continue;
        }
        if let Some(target) = c.label.strip_prefix("rolled back to ") {
            undone_to = Some(target);
            continue;
        }
        if c.label.starts_with("before: ") {
            return Some(c);
        }
    }
    None
}

/// The shadow repository of a session's checkpoints of one workspace:
/// `<state dir>/kenning/exec/checkpoints/<session>-<hash of the workspace path>.git`.
fn checkpoint_dir(session: &str, workspace: &Path) -> Result<PathBuf> {
    let hash = blake3::hash(workspace.as_os_str().as_encoded_bytes()).to_hex();
    Ok(state_dir()
        .context("no state folder: set XDG_STATE_HOME or HOME")?
        .join("exec")
        .join("checkpoints")
        .join(format!("{}-{}.git", safe_name(session), &hash.as_str()[..12])))
}

/// `ken exec --undo [ID]`: the tree put back as the checkpoint saved it (by default the one
/// before the last command that may have written, one further back with each `--undo`); the
/// tree it replaces is saved too.
fn undo(a: &ExecArgs, workspace: &Path, which: &str) -> Result<ExitCode> {
    let session = a.session.as_str();
    let dir = checkpoint_dir(session, workspace)?;
    if !dir.join("HEAD").exists() {
        bail!(
            "nothing to undo: session `{session}` ran no command that could change files in {}",
            workspace.display()
        );
    }
    let store = CheckpointStore::open(&dir, workspace)?;
    let all = store.list()?;
    let target = match which {
        "last" => last_undoable(&all),
        id => all.iter().find(|c| c.commit.starts_with(id)),
    };
    let Some(target) = target else {
        let listed = all
            .iter()
            .map(|c| format!("{} {}", &c.commit[..12.min(c.commit.len())], c.label))
            .collect::<Vec<_>>()
            .join("; ");
        match which {
            "last" => bail!(
                "nothing more to undo: every command session `{session}` ran is undone; `--undo ID` goes to one of: {listed}"
            ),
            _ => bail!("no checkpoint `{which}` in session `{session}`; it has: {listed}"),
        }
    };
    let replaced = store.restore(&target.commit)?;
    // Recorded like the commands it undoes, in the session's audit log.
    AuditLog::open(&audit_path(a)?)?.append(&serde_json::json!({
        "kind": "undo",
        "session": session,
        "workspace": workspace,
        "restored": target.commit,
        "label": target.label,
        "replaced": replaced,
    }))?;
    println!(
        "restored {} to checkpoint {} (`{}`); the tree it replaced is checkpoint {}",
        workspace.display(),
        &target.commit[..12.min(target.commit.len())],
        target.label,
        &replaced[..12.min(replaced.len())]
    );
    Ok(ExitCode::SUCCESS)
}

/// `--audit`, else `<state dir>/kenning/audit/<session>.jsonl`, its folder made.
fn audit_path(a: &ExecArgs) -> Result<PathBuf> {
    let path = match &a.audit {
        Some(p) => p.clone(),
        None => state_dir()
            .context("no state folder: set XDG_STATE_HOME or HOME, or pass --audit FILE")?
            .join("audit")
            .join(format!("{}.jsonl", safe_name(&a.session))),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("making {}", dir.display()))?;
    }
    Ok(path)
}

/// Asks a person on the terminal, remembering "for the session" answers in the approvals file
/// beside the audit log.
struct TerminalAsker {
    approvals_path: PathBuf,
}

impl ApprovalAsker for TerminalAsker {
    fn ask(&mut self, text: &str, verdict: &CommandVerdict, reason: &str) -> Result<Approval, String> {
        let mut approvals = SessionApprovals::load(&self.approvals_path);
        if approvals.contains(text) {
            return Ok(Approval::allowed("approved earlier in this session"));
        }
        Ok(match ask(text, verdict, reason).map_err(|e| format!("{e:#}"))? {
            Answer::Once => Approval::allowed("a person, once"),
            Answer::Session => {
                approvals
                    .approve(text)
                    .map_err(|e| format!("writing {}: {e}", self.approvals_path.display()))?;
                Approval::allowed("a person, for the session")
            }
            Answer::Deny(why) => Approval {
                person_reason: Some(why.clone()),
                ..Approval::denied(why, "a person")
            },
            Answer::NotInteractive => Approval::denied(
                format!("{reason} (needs approval, and no terminal to ask on)"),
                "non-interactive: denied",
            ),
            Answer::Abort => Approval {
                aborted: true,
                ..Approval::denied("aborted".to_string(), "a person: aborted")
            },
        })
    }
}

/// The sandbox spec the flags and the rules file ask for.
fn sandbox_spec(
    a: &ExecArgs,
    mode: SandboxMode,
    workspace: &Path,
    cwd: PathBuf,
    network: bool,
    rules: &ExecRules,
) -> SandboxSpec {
    let env = rules.scrubber(&a.allow_env).scrub(std::env::vars());
    let mut spec = SandboxSpec::new(mode, workspace.to_path_buf(), a.command.clone());
    spec.cwd = cwd;
    spec.network = network;
    spec.env = env.vars;
    spec.env_removed = env.removed;
    spec.strict = a.sandbox_strict;
    spec.disabled = disabled_mechanisms();
    spec.read_only = rules.sandbox.read_only.clone();
    spec.limits = Limits {
        timeout_ms: Some((a.timeout * 1000.0) as u64),
        cpu_seconds: a.cpu_seconds,
        memory_bytes: Some(a.memory_mib << 20),
        file_size_bytes: Some(a.max_file_mib << 20),
        open_files: Some(4096),
        processes: Some(a.max_processes),
    };
    spec
}

enum Answer {
    Once,
    Session,
    Deny(String),
    Abort,
    NotInteractive,
}

/// Asks on the terminal: approve once, for the session, deny (with a reason), or abort.
fn ask(text: &str, verdict: &CommandVerdict, reason: &str) -> Result<Answer> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Ok(Answer::NotInteractive);
    }
    let Ok(tty) = std::fs::File::open("/dev/tty") else {
        return Ok(Answer::NotInteractive);
    };
    let mut input = std::io::BufReader::new(tty);
    let mut err = std::io::stderr().lock();
    writeln!(err, "ken exec wants to run: {text}")?;
    writeln!(err, "  class: {}; why it asks: {reason}", verdict.class.as_str())?;
    loop {
        write!(err, "  [y] once  [s] for this session  [n] deny  [a] abort > ")?;
        err.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(Answer::Deny("no answer (end of input)".to_string()));
        }
        match line.trim() {
            "y" | "yes" => return Ok(Answer::Once),
            "s" => return Ok(Answer::Session),
            "n" | "no" => {
                write!(err, "  reason (optional) > ")?;
                err.flush()?;
                let mut why = String::new();
                input.read_line(&mut why)?;
                let why = why.trim();
                return Ok(Answer::Deny(if why.is_empty() {
                    "denied by a person".to_string()
                } else {
                    why.to_string()
                }));
            }
            "a" => return Ok(Answer::Abort),
            _ => continue,
        }
    }
}

fn explain(v: &CommandVerdict, ruled: &crate::exec::RuledDecision, json: bool) -> Result<ExitCode> {
    if json {
        print_json(&serde_json::json!({ "verdict": v, "decision": ruled }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{}  [{}]{}",
        v.command,
        v.class.as_str(),
        if v.parsed { "" } else { " (does not parse)" }
    )?;
    for p in &v.parts {
        writeln!(out, "  {:<16} {}  ({})", p.class.as_str(), p.text, p.why)?;
    }
    let (word, reason) = match &ruled.decision {
        Decision::Allow => ("allow", String::new()),
        Decision::Ask { reason } => ("ask", format!(": {reason}")),
        Decision::Deny { reason } => ("deny", format!(": {reason}")),
    };
    writeln!(out, "decision: {word}{reason} (by {})", ruled.decided_by)?;
    Ok(ExitCode::SUCCESS)
}

fn warn_degraded(mechanisms: &[Mechanism]) {
    let degraded: Vec<String> = mechanisms
        .iter()
        .filter(|m| m.degraded())
        .map(|m| format!("{} ({})", m.name, m.detail))
        .collect();
    if !degraded.is_empty() {
        eprintln!("ken exec: sandbox degraded: {}", degraded.join("; "));
    }
}

fn summary(r: &RunReport) -> String {
    let end = match (&r.exit_code, &r.signal) {
        (Some(code), _) => format!("exit {code}"),
        (None, Some(sig)) => format!("killed by {sig}"),
        (None, None) if r.timed_out => "killed".to_string(),
        (None, None) => format!("status {}", r.status),
    };
    let mut s = format!(
        "ken exec: {end} · {:.2} s · peak {:.1} MiB · sandbox {}{}",
        r.duration_ms as f64 / 1000.0,
        r.peak_memory_bytes as f64 / (1 << 20) as f64,
        r.sandbox.as_str(),
        if r.network { " + network" } else { "" },
    );
    if let Some(k) = &r.killed_by {
        s.push_str(&format!(" · stopped by the {k} limit"));
    }
    let other: Vec<&String> = r
        .limits_hit
        .iter()
        .filter(|l| Some(*l) != r.killed_by.as_ref())
        .collect();
    if !other.is_empty() {
        s.push_str(&format!(
            " · hit: {}",
            other.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ));
    }
    if !r.degraded.is_empty() {
        s.push_str(&format!(" · degraded: {}", r.degraded.len()));
    }
    s
}

/// Runs `true` in a throwaway workspace with a `.git`, as `ken exec` would run a command, and
/// prints each mechanism's state.
fn doctor(json: bool) -> Result<ExitCode> {
    // Outside /tmp where possible, so the private /tmp is probed too.
    let base = state_dir()
        .filter(|d| std::fs::create_dir_all(d).is_ok())
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("doctor-{}", std::process::id()));
    std::fs::create_dir_all(dir.join(".git")).with_context(|| format!("making {}", dir.display()))?;
    let mut spec = SandboxSpec::new(SandboxMode::WorkspaceWrite, dir.clone(), vec!["true".to_string()]);
    spec.env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
    spec.limits.timeout_ms = Some(10_000);
    spec.disabled = disabled_mechanisms();
    let mut sandbox = Sandbox::new(std::env::current_exe().context("finding the ken binary")?);
    sandbox.stream = false;
    let report = sandbox.run(spec);
    let _ = std::fs::remove_dir_all(&dir);
    let report = report?;
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let uid = nix::unistd::getuid();
    if json {
        print_json(&serde_json::json!({
            "kernel": kernel.trim(),
            "uid": uid.as_raw(),
            "arch": std::env::consts::ARCH,
            "mechanisms": report.mechanisms,
            "degraded": report.degraded,
            "spawn_ms": report.duration_ms,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "ken exec --doctor: Linux {} ({}), uid {uid}",
        kernel.trim(),
        std::env::consts::ARCH
    )?;
    for m in &report.mechanisms {
        let state = match m.state {
            MechanismState::Enforced => "enforced",
            MechanismState::Partial => "partial",
            MechanismState::Unavailable => "UNAVAILABLE",
            MechanismState::Off => "off",
        };
        writeln!(out, "  {:<18} {:<12} {}", m.name, state, m.detail)?;
    }
    match report.degraded.is_empty() {
        true => writeln!(
            out,
            "every mechanism is in force (a confined `true` took {} ms)",
            report.duration_ms
        )?,
        false => writeln!(
            out,
            "degraded: {} mechanism(s) not in force; `ken exec` says so on every run, and --sandbox-strict refuses to run",
            report.degraded.len()
        )?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `KEN_SANDBOX_DISABLE=landlock,mount-namespace`: mechanisms treated as missing.
fn disabled_mechanisms() -> Vec<String> {
    std::env::var(SandboxSpec::DISABLE_ENV)
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

pub(super) fn sandbox_mode(a: SandboxArg) -> SandboxMode {
    match a {
        SandboxArg::ReadOnly => SandboxMode::ReadOnly,
        SandboxArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
        SandboxArg::FullAccess => SandboxMode::FullAccess,
    }
}

pub(super) fn approval_policy(a: ApprovalArg) -> ApprovalPolicy {
    match a {
        ApprovalArg::Untrusted => ApprovalPolicy::Untrusted,
        ApprovalArg::OnRequest => ApprovalPolicy::OnRequest,
        ApprovalArg::Never => ApprovalPolicy::Never,
    }
}

fn home_dir(var: &str, fallback: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(fallback)))
        .map(|d| d.join("kenning"))
}

pub(super) fn state_dir() -> Option<PathBuf> {
    home_dir("XDG_STATE_HOME", ".local/state")
}

/// Where the agent keeps its sessions: `<state dir>/agent/<session>/audit.jsonl`.
pub(super) fn agent_sessions_dir() -> Option<PathBuf> {
    state_dir().map(|d| d.join("agent"))
}

pub(super) fn config_dir() -> Option<PathBuf> {
    home_dir("XDG_CONFIG_HOME", ".config")
}

pub(super) fn cache_dir() -> Option<PathBuf> {
    home_dir("XDG_CACHE_HOME", ".cache")
}

/// A session name as a file name.
pub(super) fn safe_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}
