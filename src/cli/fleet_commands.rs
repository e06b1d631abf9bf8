//! `ken worker`, `ken fleet enqueue|status|search|call` and `ken serve --fleet`: the fleet
//! over NATS JetStream.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::args::{
    EnqueueArgs, FleetCallArgs, FleetSearchArgs, FleetStatusArgs, ServeArgs, ShardGroupsArgs, WorkerArgs,
};
use super::exec_commands::{agent_sessions_dir, cache_dir};
use super::shared::print_json;
use crate::fleet::{
    FleetAnswer, FleetBus, FleetMetrics, FleetStatus, IndexingWorker, NatsTarget, ShardConfig, ShardRequest,
    ShardServer, WorkItem, WorkerConfig, parse_groups, scatter,
};
use crate::remote::RepoIdentity;
use crate::server::HttpGuard;

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

fn seconds(flag: &str, v: f64) -> Result<Duration> {
    if !(v.is_finite() && v > 0.0 && v <= 86_400.0) {
        bail!("{flag} must be between 0 and 86400 seconds, not {v}");
    }
    Ok(Duration::from_secs_f64(v))
}

fn process_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "host".to_string());
    format!("{host}-{}", std::process::id())
}

/// A fleet process's listening address and the guard in front of its HTTP endpoints:
/// loopback names only unless --allow-remote, and the bearer token of `KEN_SERVE_TOKEN` when
/// it is set. A server that answers queries (`token_required`: a shard server; a worker
/// serves only counters) and listens beyond loopback must have one.
fn listen_guarded(
    flag: &str,
    given: &str,
    allow_remote: bool,
    token_required: bool,
) -> Result<(std::net::SocketAddr, HttpGuard)> {
    let addr = crate::server::parse_addr(given)?;
    let guard = HttpGuard {
        allow_remote,
        token: std::env::var("KEN_SERVE_TOKEN").ok().filter(|t| !t.is_empty()),
    };
    guard.check(flag, Some(addr), token_required)?;
    Ok((addr, guard))
}

pub fn worker(a: WorkerArgs) -> Result<ExitCode> {
    let id = a.id.clone().unwrap_or_else(process_name);
    let workdir = match &a.workdir {
        Some(d) => d.clone(),
        None => cache_dir()
            .context("no cache folder: set XDG_CACHE_HOME or HOME, or pass --workdir")?
            .join("worker"),
    };
    let config = WorkerConfig {
        id: id.clone(),
        workdir,
        remote: a.remote.clone(),
        ack_wait: seconds("--ack-wait", a.ack_wait)?,
        max_attempts: a.max_attempts,
        retry_delay: seconds("--retry-delay", a.retry_delay)?,
        exit_when_idle: a
            .exit_when_idle
            .map(|s| seconds("--exit-when-idle", s))
            .transpose()?,
    };
    if a.max_attempts < 1 || a.max_attempts > 100 {
        bail!("--max-attempts must be between 1 and 100, not {}", a.max_attempts);
    }
    crate::remote::SnapshotRemote::open(&a.remote)?;
    let metrics_at = a
        .metrics
        .as_deref()
        .map(|m| listen_guarded("--metrics", m, a.allow_remote, false))
        .transpose()?;
    let json = a.json;
    runtime()?.block_on(async move {
        let bus = FleetBus::connect(&a.nats.target(), &format!("ken worker {id}")).await?;
        let metrics = FleetMetrics::new();
        if let Some(dir) = agent_sessions_dir() {
            metrics.collect_agent_logs(dir);
        }
        if let Some((addr, guard)) = metrics_at {
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            eprintln!(
                "worker {id}: metrics at http://{}/metrics",
                listener.local_addr()?
            );
            let router = guard.protect(metrics.router());
            tokio::spawn(async move { axum::serve(listener, router).await });
        }
        eprintln!("worker {id}: taking work from {}", bus.url());
        let worker = IndexingWorker::new(bus, config, metrics);
        worker
            .run(|e| {
                let mut out = std::io::stdout().lock();
                let line = match json {
                    true => serde_json::to_string(e).unwrap_or_default(),
                    false => {
                        let mut l = format!(
                            "{} {} {}@{} attempt {} in {} ms",
                            e.worker,
                            e.event,
                            e.repo,
                            &e.commit[..12.min(e.commit.len())],
                            e.attempt,
                            e.ms
                        );
                        if let (Some(p), Some(u)) = (e.files_parsed, e.uploaded) {
                            l.push_str(&format!(", {p} files parsed, {u} objects uploaded"));
                        }
                        if let Some(k) = &e.pulled {
                            l.push_str(&format!(", started from {k}"));
                        }
                        if let Some(err) = &e.error {
                            l.push_str(&format!(": {err}"));
                        }
                        l
                    }
                };
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            })
            .await?;
        Ok(ExitCode::SUCCESS)
    })
}

fn git_commit(path: &Path, rev: &str) -> Result<String> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(path)
        .args([
            "rev-parse",
            "--verify",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ])
        .output()
        .context("cannot run git")?;
    if !out.status.success() {
        bail!(
            "--commit {rev}: not a commit of {}: {}",
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

pub fn enqueue(a: EnqueueArgs) -> Result<ExitCode> {
    if a.paths.len() > 1 && (a.name.is_some() || a.commit.is_some() || a.source.is_some()) {
        bail!("--name, --commit and --source name one repository: give one path with them");
    }
    let mut items = Vec::new();
    for p in &a.paths {
        let root = std::fs::canonicalize(p).with_context(|| format!("no repository at {}", p.display()))?;
        let id = RepoIdentity::of(&root, a.name.as_deref())?;
        let commit = match &a.commit {
            Some(c) => git_commit(&root, c)?,
            None => id.commit.clone(),
        };
        items.push(WorkItem {
            repo: id.repo,
            source: a
                .source
                .clone()
                .unwrap_or_else(|| root.to_string_lossy().to_string()),
            commit,
            enqueued_unix_ms: crate::fleet::now_ms(),
        });
    }
    runtime()?.block_on(async {
        let bus = FleetBus::connect(&a.nats.target(), "ken fleet enqueue").await?;
        let mut reports = Vec::new();
        for item in &items {
            reports.push(bus.enqueue(item).await?);
        }
        if a.json {
            print_json(&reports)?;
        } else {
            let mut out = std::io::stdout().lock();
            for r in &reports {
                let how = match (r.duplicate, r.replaced) {
                    (true, _) => " (already queued at this commit: merged)",
                    (false, true) => " (replaces the request queued before)",
                    _ => "",
                };
                writeln!(
                    out,
                    "queued {} at {} on {}{how}",
                    r.repo,
                    &r.commit[..12.min(r.commit.len())],
                    r.subject
                )?;
            }
        }
        Ok(ExitCode::SUCCESS)
    })
}

pub fn status(a: FleetStatusArgs) -> Result<ExitCode> {
    runtime()?.block_on(async {
        let bus = FleetBus::connect(&a.nats.target(), "ken fleet status").await?;
        let s = bus.status().await?;
        match a.json {
            true => print_json(&s)?,
            false => render_status(&s)?,
        }
        Ok(ExitCode::SUCCESS)
    })
}

fn render_status(s: &FleetStatus) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let q = &s.queue;
    writeln!(
        out,
        "queue at {}: {} item(s), {} waiting, {} in progress, {} redelivered (ack wait {:.0}s, {} deliveries at most)",
        s.nats, q.items, q.waiting, q.in_progress, q.redelivered, q.ack_wait_s, q.max_deliver
    )?;
    writeln!(out, "workers: {}", s.workers.len())?;
    for w in &s.workers {
        writeln!(
            out,
            "  {:<24} {:<9} {:<40} done {} failed {} dead {}",
            w.worker,
            w.state,
            w.repo.as_deref().unwrap_or("-"),
            w.done,
            w.failed,
            w.dead
        )?;
    }
    writeln!(out, "repositories: {}", s.pointers.len())?;
    for p in &s.pointers {
        writeln!(
            out,
            "  {:<48} {} {:>7} files {:>9} lines  by {}",
            p.repo,
            &p.commit[..12.min(p.commit.len())],
            p.files,
            p.lines,
            p.worker
        )?;
    }
    if !s.dead.is_empty() {
        writeln!(out, "dead letters: {}", s.dead.len())?;
        for d in &s.dead {
            writeln!(
                out,
                "  {} at {} after {} attempt(s): {}",
                d.item.repo, d.item.commit, d.attempts, d.error
            )?;
        }
    }
    Ok(())
}

fn fleet_query(shards: &ShardGroupsArgs, request: ShardRequest) -> Result<FleetAnswer> {
    let groups = parse_groups(&shards.groups)?;
    if shards.deadline_ms == 0 || shards.deadline_ms > 600_000 {
        bail!(
            "--deadline-ms must be between 1 and 600000, not {}",
            shards.deadline_ms
        );
    }
    runtime()?.block_on(async {
        let client = shards.nats.target().connect("ken fleet query").await?;
        let answer = scatter(
            &client,
            &groups,
            &request,
            Duration::from_millis(shards.deadline_ms),
        )
        .await?;
        Ok(answer)
    })
}

fn render_coverage(out: &mut impl Write, a: &FleetAnswer) -> Result<()> {
    let answered = a.groups.len() - a.missing_groups.len();
    writeln!(
        out,
        "{} repositories from {answered} of {} shard group(s) in {} ms",
        a.repos_answered,
        a.groups.len(),
        a.ms
    )?;
    for g in a.groups.iter().filter(|g| g.error.is_some()) {
        writeln!(
            out,
            "partial: group {} is missing ({})",
            g.group,
            g.error.as_deref().unwrap_or_default()
        )?;
    }
    if !a.loading.is_empty() {
        writeln!(out, "partial: still loading {}", a.loading.join(", "))?;
    }
    for r in a.repos.iter().filter(|r| r.error.is_some()) {
        writeln!(out, "{}: {}", r.repo, r.error.as_deref().unwrap_or_default())?;
    }
    Ok(())
}

pub fn search(a: FleetSearchArgs) -> Result<ExitCode> {
    let mut args = serde_json::json!({"query": a.query, "limit": a.limit});
    if let Some(m) = &a.mode {
        args["mode"] = serde_json::Value::String(m.clone());
    }
    let answer = fleet_query(
        &a.shards,
        ShardRequest {
            operation: "search".to_string(),
            args,
        },
    )?;
    if a.shards.json {
        print_json(&answer)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = std::io::stdout().lock();
    for h in &answer.merged {
        let line = h.line.map(|l| format!(":{l}")).unwrap_or_default();
        writeln!(
            out,
            "{:.4}  {} {}{line}  {}",
            h.score,
            h.repo,
            h.path,
            h.symbol.as_deref().unwrap_or("")
        )?;
    }
    render_coverage(&mut out, &answer)?;
    Ok(ExitCode::SUCCESS)
}

pub fn call(a: FleetCallArgs) -> Result<ExitCode> {
    let args: serde_json::Value =
        serde_json::from_str(&a.args).with_context(|| format!("the arguments are not JSON: {}", a.args))?;
    let answer = fleet_query(
        &a.shards,
        ShardRequest {
            operation: a.operation.clone(),
            args,
        },
    )?;
    if a.shards.json {
        print_json(&answer)?;
    } else {
        let mut out = std::io::stdout().lock();
        for r in &answer.repos {
            if let Some(v) = &r.answer {
                writeln!(out, "== {} at {}", r.repo, &r.commit[..12.min(r.commit.len())])?;
                serde_json::to_writer_pretty(&mut out, v)?;
                writeln!(out)?;
            }
        }
        render_coverage(&mut out, &answer)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `ken serve --fleet`.
pub fn serve_fleet(a: ServeArgs) -> Result<ExitCode> {
    let (Some(nats), Some(group), Some(groups)) = (a.nats.clone(), a.group.clone(), a.groups.clone()) else {
        bail!("--fleet needs --nats, --group and --groups");
    };
    let Some(remote) = a.remote.clone() else {
        bail!("--fleet needs --remote (or KEN_REMOTE): the object storage snapshots are read from");
    };
    if a.mcp {
        bail!("--fleet serves NATS and, with --http, /metrics and /v1/fleet/<operation>; not --mcp");
    }
    crate::remote::SnapshotRemote::open(&remote)?;
    let groups = parse_groups(&groups)?;
    let cache = match &a.cache {
        Some(c) => c.clone(),
        None => cache_dir()
            .context("no cache folder: set XDG_CACHE_HOME or HOME, or pass --cache")?
            .join(format!("shard-{group}")),
    };
    let (http, guard) = match a.http.as_deref() {
        Some(h) => {
            let (addr, guard) = listen_guarded("--http", h, a.allow_remote, true)?;
            (Some(addr), guard)
        }
        None => (None, HttpGuard::default()),
    };
    let config = ShardConfig {
        group: group.clone(),
        groups,
        replica: a.replica.clone().unwrap_or_else(process_name),
        remote,
        cache,
        deadline: seconds("--deadline", a.deadline)?,
    };
    runtime()?.block_on(async move {
        let bus = FleetBus::connect(
            &NatsTarget::new(&nats, a.nats_creds.clone()),
            &format!("ken serve --fleet {group}"),
        )
        .await?;
        let metrics = FleetMetrics::new();
        if let Some(dir) = agent_sessions_dir() {
            metrics.collect_agent_logs(dir);
        }
        let server = ShardServer::new(bus, config, metrics)?;
        server
            .run(
                http,
                |router| guard.protect(router),
                |repos, bound| {
                    let at = bound.map(|b| format!(", http://{b}/metrics")).unwrap_or_default();
                    eprintln!("serving shard group {group}: {repos} repositories{at}");
                },
            )
            .await?;
        Ok(ExitCode::SUCCESS)
    })
}
