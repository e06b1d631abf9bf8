//! Spawn overhead of the sandbox: one command run confined (every mechanism this kernel
//! offers) against the same command spawned plainly, in one process and one session, so the
//! figure is a difference of medians measured side by side. Also the whole `ken exec` command
//! (policy, rules, audit line) against the bare program, as a user pays it.
//!
//! Usage: `cargo bench --bench exec_spawn -- [RUNS]` (default 200; pairs are interleaved).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use kenning::exec::{Sandbox, SandboxMode, SandboxSpec};

fn main() -> anyhow::Result<()> {
    let runs: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let ken = PathBuf::from(env!("CARGO_BIN_EXE_ken"));
    let dir = tempfile::tempdir()?;
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".git"))?;
    std::fs::create_dir_all(ws.join(".kenning"))?;
    std::fs::write(
        ws.join(".kenning/rules.toml"),
        "[[rule]]\nmatch = \"true\"\ndecision = \"allow\"\n",
    )?;
    let mut sandbox = Sandbox::new(ken.clone());
    sandbox.stream = false;
    let spec = |mode| {
        let mut s = SandboxSpec::new(mode, ws.clone(), vec!["true".to_string()]);
        s.env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        s
    };
    let first = sandbox.run(spec(SandboxMode::WorkspaceWrite))?;
    println!(
        "mechanisms: {}",
        first
            .mechanisms
            .iter()
            .map(|m| format!("{}={:?}", m.name, m.state))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let time = |f: &mut dyn FnMut() -> anyhow::Result<()>| -> anyhow::Result<f64> {
        let t = Instant::now();
        f()?;
        Ok(t.elapsed().as_secs_f64() * 1000.0)
    };
    let (mut plain, mut confined, mut full, mut cli, mut bare) = (vec![], vec![], vec![], vec![], vec![]);
    let state = dir.path().join("state");
    let ken_exec = |audit: &std::path::Path| {
        Command::new(&ken)
            .current_dir(&ws)
            .env("XDG_STATE_HOME", &state)
            .arg("exec")
            .arg("--audit")
            .arg(audit)
            .args(["--", "true"])
            .output()
            .map(|_| ())
            .map_err(anyhow::Error::from)
    };
    for i in 0..runs {
        plain.push(time(&mut || {
            Command::new("true").status().map(|_| ()).map_err(Into::into)
        })?);
        confined.push(time(&mut || {
            sandbox
                .run(spec(SandboxMode::WorkspaceWrite))
                .map(|_| ())
                .map_err(Into::into)
        })?);
        full.push(time(&mut || {
            sandbox
                .run(spec(SandboxMode::FullAccess))
                .map(|_| ())
                .map_err(Into::into)
        })?);
        bare.push(time(&mut || {
            Command::new("sh")
                .args(["-c", "true"])
                .status()
                .map(|_| ())
                .map_err(Into::into)
        })?);
        // A fresh log each time: the cost of a session's first command.
        let audit = dir.path().join(format!("audit-{i}.jsonl"));
        cli.push(time(&mut || ken_exec(&audit))?);
    }
    // A long session: every `ken exec` verifies the whole log before appending.
    let long = dir.path().join("long.jsonl");
    for _ in 0..1000 {
        ken_exec(&long)?;
    }
    let mut cli_long: Vec<f64> = Vec::new();
    for _ in 0..runs.min(50) {
        cli_long.push(time(&mut || ken_exec(&long))?);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let p90 = |v: &Vec<f64>| v[(v.len() * 9) / 10];
    let (mp, mc, mf, mb, ml) = (
        median(&mut plain),
        median(&mut confined),
        median(&mut full),
        median(&mut bare),
        median(&mut cli),
    );
    println!("runs: {runs} (interleaved)");
    println!(
        "plain spawn of `true`:              median {mp:.2} ms  p90 {:.2} ms",
        p90(&plain)
    );
    println!(
        "Sandbox::run workspace-write:       median {mc:.2} ms  p90 {:.2} ms  added {:.2} ms",
        p90(&confined),
        mc - mp
    );
    println!(
        "Sandbox::run full-access:           median {mf:.2} ms  p90 {:.2} ms  added {:.2} ms",
        p90(&full),
        mf - mp
    );
    println!("`sh -c true`:                       median {mb:.2} ms");
    println!(
        "`ken exec -- true` (policy, audit): median {ml:.2} ms  p90 {:.2} ms  added {:.2} ms",
        p90(&cli),
        ml - mp
    );
    let mll = median(&mut cli_long);
    println!(
        "the same, log of 1000+ lines:       median {mll:.2} ms  added {:.2} ms",
        mll - mp
    );
    Ok(())
}
