//! The agent task suite (`benches/agent_tasks/`): each task's script is served by a loopback
//! model speaking the OpenAI streaming format, `ken agent` runs it through the real tools,
//! index, sandbox, policy and audit log, and then the task's hidden check (files the agent
//! never saw) must pass. Every task must reach `completed` with a log that verifies.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::fake_model::{FakeModel, Turn, Wire, call};
use support::write_tree;

struct Task {
    name: String,
    task: String,
    test_cmd: String,
    check: String,
    approve_edits: bool,
    repo: String,
    hidden: String,
    turns: Vec<Turn>,
}

fn tasks() -> Vec<Task> {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/agent_tasks");
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("task.toml").exists())
        .collect();
    dirs.sort();
    for dir in dirs {
        let t: toml::Table =
            toml::from_str(&std::fs::read_to_string(dir.join("task.toml")).unwrap()).unwrap();
        let s = |k: &str| t.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_string();
        let turns = t["turn"]
            .as_array()
            .unwrap()
            .iter()
            .map(|turn| {
                let args = turn
                    .get("args")
                    .cloned()
                    .unwrap_or(toml::Value::Table(Default::default()));
                call(
                    turn["tool"].as_str().unwrap(),
                    serde_json::to_value(args).unwrap(),
                )
            })
            .collect();
        out.push(Task {
            name: dir.file_name().unwrap().to_string_lossy().into_owned(),
            task: s("task"),
            test_cmd: s("test_cmd"),
            check: s("check"),
            approve_edits: t.get("approve_edits").and_then(|v| v.as_bool()).unwrap_or(false),
            repo: s("repo"),
            hidden: s("hidden"),
            turns,
        });
    }
    out
}

fn sh(dir: &Path, script: &str) -> std::process::Output {
    Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap()
}

fn run(t: &Task) -> Result<u64, String> {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join(&t.name);
    std::fs::create_dir_all(&root).unwrap();
    write_tree(&root, &t.repo);
    let setup = sh(
        &root,
        "git init -q -b work && git add -A && git -c user.email=t@t -c user.name=t commit -qm base",
    );
    assert!(setup.status.success());
    let model = FakeModel::start(Wire::OpenAi, t.turns.clone());
    let state = work.path().join("state");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ken"));
    cmd.args([
        "agent",
        &t.task,
        "--json",
        "--model",
        "local:scripted",
        "--session",
        &t.name,
        "--test-cmd",
        &t.test_cmd,
    ])
    .arg("--repo")
    .arg(&root)
    .env("XDG_STATE_HOME", &state)
    .env("OPENAI_BASE_URL", format!("{}/v1", model.url))
    .env_remove("OPENAI_API_KEY")
    .env_remove("ANTHROPIC_API_KEY")
    .env_remove("CARGO_TARGET_DIR")
    .env_remove("KEN_SANDBOX_DISABLE");
    if t.approve_edits {
        cmd.arg("--approve-edits");
    }
    let out = cmd.output().unwrap();
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let finished = events
        .iter()
        .find(|e| e["kind"] == "finished")
        .ok_or_else(|| format!("no finished event: {}", String::from_utf8_lossy(&out.stderr)))?;
    if finished["state"] != "completed" {
        let tools: Vec<String> = events
            .iter()
            .filter(|e| e["kind"] == "tool-call" || e["kind"] == "evaluation")
            .map(|e| e.to_string().chars().take(400).collect())
            .collect();
        return Err(format!(
            "ended {}: {}\n{}",
            finished["state"],
            finished["reason"],
            tools.join("\n")
        ));
    }
    write_tree(&root, &t.hidden);
    let check = sh(&root, &t.check);
    if !check.status.success() {
        return Err(format!(
            "hidden check failed:\n{}{}",
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        ));
    }
    let log = state.join("kenning/agent").join(&t.name).join("audit.jsonl");
    let verify = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args(["audit", "verify"])
        .arg(&log)
        .output()
        .unwrap();
    if !verify.status.success() {
        return Err(format!("audit log: {}", String::from_utf8_lossy(&verify.stdout)));
    }
    Ok(finished["steps"].as_u64().unwrap_or(0))
}

#[test]
fn every_task_completes_and_passes_its_hidden_check() {
    let tasks = tasks();
    assert!(tasks.len() >= 12, "{} tasks", tasks.len());
    let mut failed = Vec::new();
    for t in &tasks {
        match run(t) {
            Ok(steps) => eprintln!(
                "{:<24} completed in {steps} model calls, hidden check passed",
                t.name
            ),
            Err(e) => {
                eprintln!("{:<24} FAILED: {e}", t.name);
                failed.push(t.name.clone());
            }
        }
    }
    assert!(failed.is_empty(), "tasks failed: {failed:?}");
}
