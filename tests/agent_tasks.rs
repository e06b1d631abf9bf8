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

/// A repository with work only a checkpoint can bring back: an uncommitted edit to a
/// tracked file and an untracked file, besides the committed ones.
fn repo_with_work(root: &Path) {
    std::fs::create_dir_all(root).unwrap();
    write_tree(
        root,
        "//- src/app.py\ndef main():\n    return 1\n//- src/util.py\nX = 1\n//- .gitignore\n/.state/\n",
    );
    let setup = sh(
        root,
        "git init -q -b work && git add -A && git -c user.email=t@t -c user.name=t commit -qm base",
    );
    assert!(setup.status.success());
    write_tree(
        root,
        "//- src/app.py\ndef main():\n    return 2  # an uncommitted edit\n//- src/notes.txt\nuntracked notes\n",
    );
}

/// Every file under `dir`, with its bytes.
fn files(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// `ken agent` on `root` with a scripted model and `true` as the evaluation; its output and
/// the events of its audit log.
fn agent(root: &Path, state: &Path, session: &str, turns: Vec<Turn>) -> (std::process::Output, Vec<Value>) {
    let model = FakeModel::start(Wire::OpenAi, turns);
    let out = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args([
            "agent",
            "tidy the sources",
            "--model",
            "local:scripted",
            "--session",
            session,
            "--test-cmd",
            "true",
        ])
        .arg("--repo")
        .arg(root)
        .env("XDG_STATE_HOME", state)
        .env("OPENAI_BASE_URL", format!("{}/v1", model.url))
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("KEN_SANDBOX_DISABLE")
        .output()
        .unwrap();
    let log = state.join("kenning/agent").join(session).join("audit.jsonl");
    let events = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| v["event"].clone())
        .collect();
    (out, events)
}

const RMTREE: &str = "python3 -c \"import shutil; shutil.rmtree('src')\"";

#[test]
fn a_run_whose_command_deleted_work_names_the_files_and_is_not_a_bare_completed() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("repo");
    repo_with_work(&root);
    let before = files(&root.join("src"));
    let state = work.path().join("state");
    let turns = vec![
        call("run_command", serde_json::json!({"command": RMTREE})),
        call("finish", serde_json::json!({"summary": "tidied"})),
    ];
    let (out, events) = agent(&root, &state, "rm", turns);
    assert!(!root.join("src").exists(), "the command did not run");
    let text = String::from_utf8_lossy(&out.stdout);
    let finished = events
        .iter()
        .find(|e| e["kind"] == "finished")
        .unwrap_or_else(|| panic!("no finished event: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(finished["state"], "completed", "{finished}");
    let reason = finished["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("completed with 3 file(s) deleted and 0 overwritten by commands")
            && reason.contains("src/notes.txt (deleted)")
            && reason.contains("ken agent rollback rm 1"),
        "{reason}"
    );
    let lost: Vec<&str> = finished["files_lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    assert_eq!(lost, ["src/app.py", "src/notes.txt", "src/util.py"]);
    // The person reads it in the summary, the model in the command's result.
    assert!(
        text.starts_with("completed after") && text.contains("completed with 3 file(s) deleted"),
        "{text}"
    );
    assert!(
        text.contains("deleted or overwritten by commands: src/app.py (deleted), src/notes.txt (deleted), src/util.py (deleted)"),
        "{text}"
    );
    let result = events
        .iter()
        .find(|e| e["kind"] == "tool-call" && e["name"] == "run_command")
        .unwrap();
    assert!(
        result["result"].as_str().unwrap().contains("took away 3 file(s)"),
        "{result}"
    );
    // The rollback the summary names puts the work back, byte for byte.
    let rollback = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args(["agent", "rollback", "rm", "1"])
        .env("XDG_STATE_HOME", &state)
        .output()
        .unwrap();
    assert!(
        rollback.status.success(),
        "{}",
        String::from_utf8_lossy(&rollback.stderr)
    );
    assert_eq!(files(&root.join("src")), before);
}

#[test]
fn an_agent_command_whose_checkpoint_cannot_be_saved_does_not_run() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("repo");
    repo_with_work(&root);
    let before = files(&root.join("src"));
    // The state lives inside the (ignored part of the) workspace here, so a first command
    // can put a file where the session's checkpoints go: the next save fails, even as root.
    let state = root.join(".state");
    let store = ".state/kenning/agent/broken/checkpoints.git";
    let break_store =
        format!("python3 -c \"import shutil; shutil.rmtree('{store}'); open('{store}', 'w').close()\"");
    let turns = vec![
        call("run_command", serde_json::json!({"command": break_store})),
        call("run_command", serde_json::json!({"command": RMTREE})),
        call("finish", serde_json::json!({"summary": "tidied"})),
    ];
    let (out, events) = agent(&root, &state, "broken", turns);
    assert!(
        root.join(store).is_file(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "tool-call" && e["name"] == "run_command")
        .collect();
    assert_eq!(results.len(), 2, "{events:?}");
    assert_eq!(results[1]["ok"], false);
    assert!(
        results[1]["result"]
            .as_str()
            .unwrap()
            .contains("not run: the checkpoint to undo it could not be saved"),
        "{}",
        results[1]
    );
    assert_eq!(files(&root.join("src")), before, "the command ran");
}
