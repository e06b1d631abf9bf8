//! `ken agent` end to end, offline: a scripted model behind a loopback server speaking the
//! real OpenAI and Anthropic streaming formats drives the real tools, index, sandbox, policy,
//! checkpoints and audit log on a fixture repository. Each run must end in the state the
//! script calls for, with the repository and the log showing exactly what happened. A model
//! endpoint that never answers holds neither `ken agent` nor `ken ask` past their deadline or
//! a Ctrl-C.

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::fake_model::{FakeModel, Turn, Wire, call, http_error, raw_call, results_answer_calls, say};
use support::mock_server::SilentServer;
use support::{git, materialize};

const REPO: &str = r#"
//- calc/__init__.py
//- calc/ops.py
def add(a, b):
    """The sum of a and b."""
    return a - b


def scale(values, factor):
    return [v * factor for v in values]
//- tests/__init__.py
//- tests/test_ops.py
import unittest

from calc.ops import add, scale


class OpsTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_scale(self):
        self.assertEqual(scale([1, 2], 3), [3, 6])
"#;

const FIX: &str = "*** Begin Patch\n*** Update File: calc/ops.py\n@@ def add(a, b):\n-    return a - b\n+    return a + b\n*** End Patch\n";

struct Run {
    out: Output,
    events: Vec<Value>,
    state: tempfile::TempDir,
}

fn repo() -> tempfile::TempDir {
    let r = materialize(REPO);
    git(r.path(), &["init", "-q", "-b", "work"]);
    support::commit_all(r.path(), "base");
    r
}

fn agent(repo: &Path, model: &FakeModel, wire: Wire, extra: &[&str]) -> Run {
    let state = tempfile::tempdir().unwrap();
    let spec = match wire {
        Wire::OpenAi => "local:scripted",
        Wire::Anthropic => "anthropic:claude-scripted",
        Wire::Responses => "openai-responses:scripted",
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ken"));
    cmd.args([
        "agent",
        "the add test fails: add(2, 3) returns -1; fix it",
        "--json",
        "--model",
        spec,
    ])
    .args(["--test-cmd", "python3 -m unittest -q", "--session", "t"])
    .arg("--repo")
    .arg(repo)
    .args(extra)
    .env("XDG_STATE_HOME", state.path())
    .env("OPENAI_BASE_URL", format!("{}/v1", model.url))
    .env("ANTHROPIC_BASE_URL", &model.url)
    .env_remove("OPENAI_API_KEY")
    .env_remove("ANTHROPIC_API_KEY")
    .env_remove("KEN_SANDBOX_DISABLE");
    let out = cmd.output().unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    Run { out, events, state }
}

impl Run {
    fn finished(&self) -> &Value {
        self.events
            .iter()
            .find(|e| e["kind"] == "finished")
            .unwrap_or_else(|| {
                panic!(
                    "no finished event; stderr:\n{}",
                    String::from_utf8_lossy(&self.out.stderr)
                )
            })
    }

    fn audit(&self) -> std::path::PathBuf {
        self.state.path().join("kenning/agent/t/audit.jsonl")
    }

    fn tool_results(&self, name: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["kind"] == "tool-call" && e["name"] == name)
            .collect()
    }

    fn states(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["kind"] == "transition")
            .map(|e| e["to"].as_str().unwrap().to_string())
            .collect()
    }
}

fn verify(log: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args(["audit", "verify"])
        .arg(log)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

fn fixing_script() -> Vec<Turn> {
    vec![
        call(
            "update_plan",
            json!({"steps": [{"step": "find add", "status": "in_progress"}, {"step": "fix it", "status": "pending"}]}),
        ),
        call("search_code", json!({"query": "def add"})),
        call("read_file", json!({"path": "calc/ops.py"})),
        call("apply_patch", json!({"patch": FIX})),
        call("run_tests", json!({})),
        call(
            "finish",
            json!({"summary": "add returned a - b; it returns a + b now"}),
        ),
    ]
}

#[test]
fn a_scripted_run_fixes_the_bug_through_the_real_tools_on_every_wire_format() {
    for wire in [Wire::OpenAi, Wire::Anthropic, Wire::Responses] {
        let r = repo();
        let model = FakeModel::start(wire, fixing_script());
        let run = agent(r.path(), &model, wire, &[]);
        let f = run.finished();
        assert_eq!(
            f["state"],
            "completed",
            "{f}\n{}",
            String::from_utf8_lossy(&run.out.stderr)
        );
        assert!(run.out.status.success());
        let text = std::fs::read_to_string(r.path().join("calc/ops.py")).unwrap();
        assert!(text.contains("return a + b"), "{text}");
        assert_eq!(f["files_changed"], json!(["calc/ops.py"]));
        // The index tools answered from the index, and the tests ran in the sandbox.
        assert!(
            run.tool_results("search_code")[0]["result"]
                .as_str()
                .unwrap()
                .contains("calc/ops.py")
        );
        assert_eq!(run.tool_results("run_tests")[0]["ok"], true);
        let states = run.states();
        assert!(states.starts_with(&["executing".to_string()]), "{states:?}");
        assert!(
            states.ends_with(&["evaluating".to_string(), "completed".to_string()]),
            "{states:?}"
        );
        assert_eq!(
            run.events
                .iter()
                .filter(|e| e["kind"] == "evaluation" && e["passed"] == true)
                .count(),
            1
        );
        verify(&run.audit());
        // Every request: each tool result answers an earlier call with the same id.
        let requests = model.requests();
        assert_eq!(requests.len(), 6);
        for req in &requests {
            results_answer_calls(wire, req).unwrap();
        }
        // The first prompt holds the perception: the task and the code it names.
        let first = requests[0].to_string();
        assert!(first.contains("fix it") && first.contains("def add"), "{first}");
        // Written for the model: the packed code and a coverage line, not the answers' JSON
        // (which would show in the request as escaped quotes).
        assert!(first.contains("coverage: generation "), "{first}");
        assert!(!first.contains(r#"\"coverage\":{"#), "{first}");
        // The user's own git history is untouched.
        let log = Command::new("git")
            .args(["log", "--oneline"])
            .current_dir(r.path())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 1);
    }
}

#[test]
fn a_failed_evaluation_goes_back_to_the_model_and_a_rollback_restores_every_byte() {
    let r = repo();
    let before = std::fs::read(r.path().join("calc/ops.py")).unwrap();
    let script = vec![
        // A wrong fix first: the harness's evaluation fails and says so.
        call(
            "str_replace",
            json!({"path": "calc/ops.py", "old": "return a - b", "new": "return a * b"}),
        ),
        call("finish", json!({"summary": "fixed"})),
        call(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: calc/ops.py\n-    return a * b\n+    return a + b\n*** Add File: calc/extra.py\n+X = 1\n*** Delete File: calc/__init__.py\n*** End Patch"}),
        ),
        call("run_command", json!({"command": "chmod 755 tests/test_ops.py"})),
        call("finish", json!({"summary": "fixed for real"})),
    ];
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let test_file = r.path().join("tests/test_ops.py");
    let mode_before = mode(&test_file);
    let model = FakeModel::start(Wire::OpenAi, script);
    let run = agent(r.path(), &model, Wire::OpenAi, &[]);
    assert_eq!(
        run.finished()["state"],
        "completed",
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    let evals: Vec<bool> = run
        .events
        .iter()
        .filter(|e| e["kind"] == "evaluation")
        .map(|e| e["passed"].as_bool().unwrap())
        .collect();
    assert_eq!(
        evals,
        [false, true],
        "{:#?}",
        run.events
            .iter()
            .filter(|e| e["kind"] != "model-call")
            .map(|e| e.to_string().chars().take(300).collect::<String>())
            .collect::<Vec<_>>()
    );
    assert!(run.states().contains(&"fixing".to_string()));
    // The evaluation's failure reached the model.
    let third = model.requests()[2].to_string();
    assert!(
        third.contains("The evaluation") && third.contains("FAIL"),
        "{third}"
    );
    assert!(!r.path().join("calc/__init__.py").exists());
    assert_eq!(mode(&test_file), 0o755);
    // Rollback to the start: every byte back, the added file gone, the deleted one restored.
    let out = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args(["agent", "rollback", "t"])
        .env("XDG_STATE_HOME", run.state.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read(r.path().join("calc/ops.py")).unwrap(), before);
    assert_eq!(mode(&test_file), mode_before, "the mode was not restored");
    assert!(r.path().join("calc/__init__.py").exists());
    assert!(!r.path().join("calc/extra.py").exists());
    // Rolling back to step 3 (before the second edit) puts the wrong fix back.
    let out = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args(["agent", "rollback", "t", "3"])
        .env("XDG_STATE_HOME", run.state.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        std::fs::read_to_string(r.path().join("calc/ops.py"))
            .unwrap()
            .contains("a * b")
    );
}

#[test]
fn failure_paths_are_contained_and_reported() {
    let r = repo();
    git(r.path(), &["checkout", "-q", "-b", "main"]);
    let outside = tempfile::tempdir().unwrap();
    let escape = outside.path().join("escaped.txt");
    // A success after every few failures keeps the consecutive-error limit from ending it.
    let ok = || call("list_dir", json!({}));
    let script = vec![
        raw_call("read_file", "{\"path\": \"calc/ops.py\""),
        call("no_such_tool", json!({})),
        ok(),
        call("write_file", json!({"path": "../escaped.txt", "contents": "x"})),
        call(
            "write_file",
            json!({"path": escape.display().to_string(), "contents": "x"}),
        ),
        call("write_file", json!({"path": ".git/config", "contents": "x"})),
        ok(),
        call("run_command", json!({"command": "rm -rf calc"})),
        call("run_command", json!({"command": "git push origin work"})),
        call("run_command", json!({"command": "git commit -am wip"})),
        call(
            "run_command",
            json!({"command": format!("echo hi > {}", escape.display())}),
        ),
        ok(),
        call(
            "run_command",
            json!({"command": "no-such-program-kenning --version"}),
        ),
        ok(),
        say("I am not sure what to do."),
        http_error(429),
        call("apply_patch", json!({"patch": FIX})),
        call("finish", json!({"summary": "done"})),
    ];
    let model = FakeModel::start(Wire::OpenAi, script);
    let run = agent(r.path(), &model, Wire::OpenAi, &["--approval", "on-request"]);
    assert_eq!(
        run.finished()["state"],
        "completed",
        "{}",
        String::from_utf8_lossy(&run.out.stderr)
    );
    let results: Vec<(String, bool, String)> = run
        .events
        .iter()
        .filter(|e| e["kind"] == "tool-call")
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                e["ok"].as_bool().unwrap(),
                e["result"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let results: Vec<&(String, bool, String)> = results.iter().filter(|r| r.0 != "list_dir").collect();
    let find = |i: usize| results[i];
    assert!(
        !find(0).1 && find(0).2.contains("not valid JSON"),
        "{:?}",
        find(0)
    );
    assert!(
        !find(1).1 && find(1).2.contains("there is no tool"),
        "{:?}",
        find(1)
    );
    for i in [2, 3, 4] {
        assert!(!find(i).1, "{:?}", find(i));
    }
    assert!(find(5).2.contains("denied [destructive]"), "{:?}", find(5));
    assert!(find(6).2.contains("denied [protected]"), "{:?}", find(6));
    // On `main`, a commit is protected too.
    assert!(
        find(7).2.contains("denied [protected]") && find(7).2.contains("main"),
        "{:?}",
        find(7)
    );
    // Allowed by the policy (a write in the workspace sandbox), stopped by the sandbox.
    assert!(!find(8).1, "{:?}", find(8));
    assert!(!escape.exists(), "a write escaped the workspace");
    // A missing program comes back with the facts that explain it.
    assert!(
        find(9).2.contains("environment facts") && find(9).2.contains("not installed here"),
        "{:?}",
        find(9)
    );
    assert!(find(9).2.contains("python3: Python 3"), "{:?}", find(9));
    assert!(r.path().join("calc/ops.py").exists());
    assert!(
        std::fs::read_to_string(r.path().join(".git/config"))
            .unwrap()
            .contains("[core]")
    );
    // The 429 was retried (its request and the retry both reached the server).
    assert_eq!(model.requests().len(), 18);
    verify(&run.audit());
}

#[test]
fn a_looping_model_is_stopped_and_limits_end_the_run() {
    let r = repo();
    let script: Vec<Turn> = (0..10)
        .map(|_| call("read_file", json!({"path": "calc/ops.py"})))
        .collect();
    let model = FakeModel::start(Wire::OpenAi, script);
    let run = agent(r.path(), &model, Wire::OpenAi, &[]);
    let f = run.finished();
    assert_eq!(f["state"], "failed");
    assert!(f["reason"].as_str().unwrap().contains("stuck"), "{f}");
    assert_eq!(run.out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.out.stderr).contains("ken agent rollback t"));
    let r2 = repo();
    let script: Vec<Turn> = (0..10)
        .map(|i| call("read_file", json!({"path": "calc/ops.py", "start_line": i + 1})))
        .collect();
    let model = FakeModel::start(Wire::OpenAi, script);
    let run = agent(r2.path(), &model, Wire::OpenAi, &["--max-steps", "3"]);
    let f = run.finished();
    assert_eq!(f["state"], "failed");
    assert!(f["reason"].as_str().unwrap().contains("step limit"), "{f}");
    assert_eq!(f["steps"], 3);
}

#[test]
fn stats_count_sessions() {
    let r = repo();
    let model = FakeModel::start(Wire::OpenAi, fixing_script());
    let run = agent(r.path(), &model, Wire::OpenAi, &[]);
    let out = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args(["agent", "stats", "--json"])
        .env("XDG_STATE_HOME", run.state.path())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["sessions"], 1);
    assert_eq!(v["success_rate"], 1.0);
    assert_eq!(v["average_model_calls"], 6.0);
    // The fake model reports usage on every call: the counts survive the audit log's
    // redaction (`input_tokens` is a count, not a secret).
    assert!(v["input_tokens"].as_u64().unwrap_or(0) > 0, "{v}");
    assert!(v["output_tokens"].as_u64().unwrap_or(0) > 0, "{v}");
    let text = |o: &std::process::Output| String::from_utf8_lossy(&o.stdout).into_owned();
    let human = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args(["agent", "stats"])
        .env("XDG_STATE_HOME", run.state.path())
        .output()
        .unwrap();
    assert!(!text(&human).contains("0 + 0 tokens"), "{}", text(&human));

    // A tampered log is left out, with a warning naming it and its bad line.
    let log = run.audit();
    let tampered = std::fs::read_to_string(&log).unwrap().replacen(
        "\"state\":\"completed\"",
        "\"state\":\"completed\" ",
        1,
    );
    std::fs::write(&log, tampered).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args(["agent", "stats", "--json"])
        .env("XDG_STATE_HOME", run.state.path())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["sessions"], 0, "{v}");
    assert_eq!(v["skipped"].as_array().map(Vec::len), Some(1), "{v}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning") && err.contains("audit.jsonl") && err.contains("fails verification at line"),
        "{err}"
    );
}

#[test]
fn a_long_conversation_is_elided_then_compacted_without_splitting_calls() {
    let r = repo();
    // A big file read many times over fills a small window.
    let big: String = (0..400)
        .map(|i| format!("# filler line {i} of a long module\n"))
        .collect();
    std::fs::write(r.path().join("calc/big.py"), big).unwrap();
    git(r.path(), &["add", "-A"]);
    git(
        r.path(),
        &[
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "big",
        ],
    );
    // Each turn also thinks aloud at length, which elision cannot shorten: compaction must.
    let musing = "Reading on to understand the module before changing anything. ".repeat(25);
    let mut script: Vec<Turn> = (0..12)
        .map(|i| {
            let mut t = call(
                "read_file",
                json!({"path": "calc/big.py", "start_line": 1 + (i % 8) * 50, "end_line": 50 + (i % 8) * 50}),
            );
            t.text = musing.clone();
            t
        })
        .collect();
    script.extend(fixing_script().into_iter().skip(3));
    let model = FakeModel::start(Wire::OpenAi, script);
    let run = agent(r.path(), &model, Wire::OpenAi, &["--window-tokens", "6000"]);
    assert_eq!(run.finished()["state"], "completed", "{}", run.finished());
    let compactions = run.events.iter().filter(|e| e["kind"] == "compaction").count();
    assert!(compactions >= 1, "no compaction happened");
    let mut after_compaction = 0;
    for req in model.requests() {
        results_answer_calls(Wire::OpenAi, &req).unwrap();
        let text = req.to_string();
        if req["tools"].as_array().is_some_and(|t| !t.is_empty())
            && text.contains("Summary of the work so far")
        {
            // After a compaction the first prompt is still there, whole.
            assert!(text.contains("Repository overview"));
            after_compaction += 1;
        }
    }
    assert!(
        after_compaction > 0,
        "no request carried the compaction's summary"
    );
    assert!(
        model
            .requests()
            .iter()
            .any(|r| r.to_string().contains("elided by the harness"))
    );
}

#[test]
fn a_sub_agent_gets_a_fresh_context_and_the_parent_sees_only_its_summary() {
    let r = repo();
    let script = vec![
        call(
            "delegate",
            json!({"task": "find the add function and fix its sign", "max_steps": 5}),
        ),
        // The sub-agent's turns.
        call("search_code", json!({"query": "def add"})),
        call("apply_patch", json!({"patch": FIX})),
        call(
            "finish",
            json!({"summary": "add in calc/ops.py subtracted; fixed"}),
        ),
        // Back in the parent.
        call("finish", json!({"summary": "the sub-agent fixed add"})),
    ];
    let model = FakeModel::start(Wire::OpenAi, script);
    let run = agent(r.path(), &model, Wire::OpenAi, &[]);
    assert_eq!(run.finished()["state"], "completed", "{}", run.finished());
    let done = run
        .events
        .iter()
        .find(|e| e["kind"] == "delegation-done")
        .expect("no delegation");
    assert_eq!(done["files_changed"], json!(["calc/ops.py"]));
    let requests = model.requests();
    // The sub-agent's first request: one user message (its task), no parent history, and no
    // `delegate` tool.
    let sub = &requests[1];
    let msgs = sub["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2, "{sub}");
    assert!(
        msgs[1]["content"]
            .as_str()
            .unwrap()
            .contains("find the add function")
    );
    assert!(!sub["tools"].to_string().contains("\"delegate\""));
    // The parent's next request holds the summary, not the sub-agent's calls.
    let parent = requests[4].to_string();
    assert!(
        parent.contains("sub-agent summary: add in calc/ops.py subtracted; fixed"),
        "{parent}"
    );
    let calls: Vec<&str> = requests[4]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .map(|c| c["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(calls, ["delegate"], "the parent saw the sub-agent's calls");
    assert!(
        std::fs::read_to_string(r.path().join("calc/ops.py"))
            .unwrap()
            .contains("a + b")
    );
}

#[test]
fn a_private_repository_only_goes_to_loopback_endpoints() {
    let r = repo();
    std::fs::create_dir_all(r.path().join(".kenning")).unwrap();
    std::fs::write(r.path().join(".kenning/agent.toml"), "private = true\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args(["agent", "anything", "--model", "openai:gpt-4o-mini", "--repo"])
        .arg(r.path())
        .env("XDG_STATE_HOME", state.path())
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("marked private") && err.contains("api.openai.com"),
        "{err}"
    );
}

#[test]
fn local_models_without_a_loopback_endpoint_are_refused_before_any_request() {
    let r = repo();
    let state = tempfile::tempdir().unwrap();
    let run = |base: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ken"));
        cmd.args(["agent", "anything", "--json", "--model", "local:x", "--repo"])
            .arg(r.path())
            .env("XDG_STATE_HOME", state.path())
            // A key in the environment must not turn `local:` into the public endpoint.
            .env("OPENAI_API_KEY", "sk-test-not-a-real-key")
            .env_remove("KEN_LOCAL_BASE_URL")
            .env_remove("OPENAI_BASE_URL");
        if let Some(b) = base {
            cmd.env("OPENAI_BASE_URL", b);
        }
        cmd.output().unwrap()
    };
    let out = run(None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("OPENAI_BASE_URL") && err.contains("nothing is sent"),
        "{err}"
    );
    assert!(
        !err.contains("api.openai.com") && !err.contains("step limit"),
        "{err}"
    );
    // No model call was started: the run is refused before its first event.
    assert!(!String::from_utf8_lossy(&out.stdout).contains("model-call"));

    // 192.0.2.0/24 is reserved for documentation: never reachable, never loopback.
    let out = run(Some("http://192.0.2.7:8080/v1"));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("KEN_LOCAL_BASE_URL") && err.contains("192.0.2.7"),
        "{err}"
    );
}

#[test]
fn a_refused_model_call_ends_the_run_at_once_with_the_status() {
    let r = repo();
    let model = FakeModel::start(Wire::OpenAi, vec![http_error(401), say("never reached")]);
    let run = agent(r.path(), &model, Wire::OpenAi, &["--max-steps", "2"]);
    let f = run.finished();
    assert_eq!(f["state"], "failed", "{f}");
    let reason = f["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("refused") && reason.contains("401"), "{f}");
    assert!(!reason.contains("step limit"), "{f}");
    assert_eq!(f["steps"], 1, "{f}");

    // A failure worth retrying that outlasts the steps: the limit says what it cut short.
    let model = FakeModel::start(Wire::OpenAi, vec![http_error(500); 4]);
    let run = agent(r.path(), &model, Wire::OpenAi, &["--max-steps", "1"]);
    let f = run.finished();
    let reason = f["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("step limit")
            && reason.contains("the last model call failed")
            && reason.contains("500"),
        "{f}"
    );
}

#[test]
fn a_session_resumes_from_its_audit_log() {
    let r = repo();
    let first = vec![
        call("search_code", json!({"query": "def add"})),
        call("read_file", json!({"path": "calc/ops.py"})),
    ];
    let model = FakeModel::start(Wire::OpenAi, first);
    let run = agent(r.path(), &model, Wire::OpenAi, &["--max-steps", "2"]);
    assert_eq!(run.finished()["state"], "failed");
    // Resumed with the rest of the work; the conversation so far comes back from the log.
    let rest = FakeModel::start(Wire::OpenAi, fixing_script().into_iter().skip(3).collect());
    let out = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args([
            "agent",
            "resume",
            "t",
            "--json",
            "--model",
            "local:scripted",
            "--test-cmd",
            "python3 -m unittest -q",
        ])
        .env("XDG_STATE_HOME", run.state.path())
        .env("OPENAI_BASE_URL", format!("{}/v1", rest.url))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let req = &rest.requests()[0];
    results_answer_calls(Wire::OpenAi, req).unwrap();
    let msgs = req["messages"].as_array().unwrap();
    assert!(
        msgs.iter()
            .any(|m| m["role"] == "tool" && m["content"].as_str().unwrap().contains("return a - b")),
        "{req}"
    );
    assert!(
        std::fs::read_to_string(r.path().join("calc/ops.py"))
            .unwrap()
            .contains("a + b")
    );
}

#[test]
fn ctrl_c_cancels_after_the_step_in_flight() {
    use std::io::{BufRead, BufReader};
    let r = repo();
    let script = vec![
        call("run_command", json!({"command": "sleep 2"})),
        call("read_file", json!({"path": "calc/ops.py"})),
    ];
    let model = FakeModel::start(Wire::OpenAi, script);
    let state = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args([
            "agent",
            "wait a little",
            "--json",
            "--model",
            "local:scripted",
            "--session",
            "t",
            "--repo",
        ])
        .arg(r.path())
        .env("XDG_STATE_HOME", state.path())
        .env("OPENAI_BASE_URL", format!("{}/v1", model.url))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut events = Vec::new();
    // Once the model has asked for the slow command, interrupt ken itself.
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let asked = v["kind"] == "model-call";
        events.push(v);
        if asked {
            nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(child.id() as i32),
                nix::sys::signal::Signal::SIGINT,
            )
            .unwrap();
            break;
        }
    }
    events.extend(lines.map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap()));
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let f = events.iter().find(|e| e["kind"] == "finished").unwrap();
    assert_eq!(f["state"], "cancelled", "{f}");
    // The step in flight finished and was recorded; no further model call was made.
    assert_eq!(events.iter().filter(|e| e["kind"] == "tool-call").count(), 1);
    assert_eq!(model.requests().len(), 1);
    verify(&state.path().join("kenning/agent/t/audit.jsonl"));
}

/// `ken` run on `repo` with its model (and `ken ask`'s) at an endpoint that takes every
/// request and never answers.
fn against_silence(args: &[&str], repo: &Path, state: &Path, silent: &SilentServer) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ken"));
    cmd.args(args)
        .current_dir(repo)
        .env("XDG_STATE_HOME", state)
        .env("OPENAI_BASE_URL", format!("{}/v1", silent.url))
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    cmd
}

/// Waits up to `limit` for `child` to exit: its output (what is left of its pipes, read as it
/// runs so a full pipe never blocks it) and how long it took, or `None` (and the child
/// killed) if it did not.
fn exits_within(mut child: std::process::Child, limit: Duration) -> Option<(Output, Duration)> {
    use std::io::Read;
    fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    }
    let (stdout, stderr) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            let took = started.elapsed();
            let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
            return Some((
                Output {
                    status,
                    stdout,
                    stderr,
                },
                took,
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

fn interrupt(child: &std::process::Child) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
}

fn events_of(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn a_model_that_never_answers_is_cut_at_the_run_deadline() {
    let r = repo();
    let state = tempfile::tempdir().unwrap();
    let silent = SilentServer::start();
    let args = [
        "agent",
        "fix add",
        "--json",
        "--model",
        "local:silent",
        "--session",
        "t",
        "--max-time",
        "3",
    ];
    let child = against_silence(&args, r.path(), state.path(), &silent)
        .spawn()
        .unwrap();
    // The deadline runs from the start of the run (after the index is built).
    assert!(
        silent.wait_for_request(Duration::from_secs(120)),
        "no model call was made"
    );
    let (out, took) =
        exits_within(child, Duration::from_secs(6)).expect("ken agent still runs 6 s into a 3 s run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(124), "{err}");
    assert!(
        err.contains("out of time: the run's deadline (--max-time 3) passed"),
        "{err}"
    );
    let events = events_of(&out);
    let f = events.iter().find(|e| e["kind"] == "finished").expect("finished");
    assert_eq!(f["state"], "failed");
    let reason = f["reason"].as_str().unwrap();
    assert!(
        reason.contains("the model call was cut at the run's deadline of 3 s"),
        "{reason}"
    );
    assert!(
        reason.contains(&format!("{}/v1/chat/completions", silent.url)),
        "{reason}"
    );
    // One call, not retried: the deadline ended it.
    assert_eq!(silent.requests.load(std::sync::atomic::Ordering::SeqCst), 1);
    verify(&state.path().join("kenning/agent/t/audit.jsonl"));
    eprintln!("cut {took:?} after the request arrived");
}

#[test]
fn ctrl_c_cuts_a_model_call_in_flight_and_the_log_records_it() {
    let r = repo();
    let state = tempfile::tempdir().unwrap();
    let silent = SilentServer::start();
    let args = [
        "agent",
        "fix add",
        "--json",
        "--model",
        "local:silent",
        "--session",
        "t",
    ];
    let child = against_silence(&args, r.path(), state.path(), &silent)
        .spawn()
        .unwrap();
    assert!(
        silent.wait_for_request(Duration::from_secs(120)),
        "no model call was made"
    );
    interrupt(&child);
    let (out, took) =
        exits_within(child, Duration::from_secs(2)).expect("ken agent still runs 2 s after Ctrl-C");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("ken agent: interrupted"), "{err}");
    assert!(err.contains("ken agent: cancelled"), "{err}");
    // The log says the run was cancelled during the model call, and still verifies.
    let log = state.path().join("kenning/agent/t/audit.jsonl");
    let logged: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["event"].clone())
        .collect();
    let cancelled = logged
        .iter()
        .find(|e| e["kind"] == "transition" && e["to"] == "cancelled")
        .expect("a transition to cancelled in the log");
    let why = cancelled["why"].as_str().unwrap();
    assert!(why.contains("during the model call of step 1"), "{why}");
    assert!(why.contains("the model call was cancelled"), "{why}");
    let finished = logged.last().unwrap();
    assert_eq!(finished["kind"], "finished");
    assert_eq!(finished["state"], "cancelled");
    verify(&log);
    eprintln!("exited {took:?} after SIGINT");
}

#[test]
fn a_second_ctrl_c_stops_at_once() {
    let r = repo();
    let state = tempfile::tempdir().unwrap();
    // A run stuck in a sandboxed command (the first Ctrl-C waits for it).
    let model = FakeModel::start(
        Wire::OpenAi,
        vec![call("run_command", json!({"command": "sleep 30"}))],
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args([
            "agent",
            "wait",
            "--json",
            "--model",
            "local:scripted",
            "--session",
            "t",
            "--repo",
        ])
        .arg(r.path())
        .env("XDG_STATE_HOME", state.path())
        .env("OPENAI_BASE_URL", format!("{}/v1", model.url))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::{BufRead, BufReader};
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["kind"] == "model-call" {
            break;
        }
    }
    // Kept reading: a closed pipe would end ken by itself.
    std::thread::spawn(move || lines.for_each(drop));
    std::thread::sleep(Duration::from_millis(300));
    interrupt(&child);
    std::thread::sleep(Duration::from_millis(500));
    // The first waits for the command in flight...
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run ended on the first Ctrl-C"
    );
    // ...the second does not.
    interrupt(&child);
    let (out, _) =
        exits_within(child, Duration::from_secs(2)).expect("ken agent still runs 2 s after a second Ctrl-C");
    assert_eq!(out.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stopped at once"));
}

#[test]
fn ken_ask_against_a_model_that_never_answers_ends_at_its_deadline_or_on_ctrl_c() {
    let r = repo();
    support::build(r.path(), &kenning::index::IndexConfig::default());
    let state = tempfile::tempdir().unwrap();
    let silent = SilentServer::start();
    let child = against_silence(
        &["ask", "what does add do", "--max-time", "3"],
        r.path(),
        state.path(),
        &silent,
    )
    .spawn()
    .unwrap();
    let (out, took) =
        exits_within(child, Duration::from_secs(10)).expect("ken ask still runs 10 s into a 3 s limit");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(124), "{err}");
    assert!(
        err.contains("the model call was cut at the run's deadline of 3 s"),
        "{err}"
    );
    assert!(
        err.contains(&format!("{}/v1/chat/completions", silent.url)),
        "{err}"
    );
    assert!(took >= Duration::from_secs(2), "{took:?}");
    // Without a limit, Ctrl-C ends the wait.
    let silent = SilentServer::start();
    let child = against_silence(&["ask", "what does add do"], r.path(), state.path(), &silent)
        .spawn()
        .unwrap();
    assert!(
        silent.wait_for_request(Duration::from_secs(60)),
        "no model call was made"
    );
    interrupt(&child);
    let (out, _) = exits_within(child, Duration::from_secs(2)).expect("ken ask still runs 2 s after Ctrl-C");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("ken ask: cancelled"), "{err}");
}

/// A live smoke test with a real (small) model, outside the default run: set
/// `KEN_LIVE_MODEL_URL` to an OpenAI-compatible server (`benches/agent_live_smoke.sh` starts
/// llama.cpp's with SmolLM2-135M). A model that weak rarely solves anything; what this checks
/// is that its real tool calls go through the harness, the sandbox and the audit log, and
/// that whatever it tries stays contained.
#[test]
fn live_smoke_with_a_real_model() {
    let Ok(url) = std::env::var("KEN_LIVE_MODEL_URL") else {
        eprintln!("KEN_LIVE_MODEL_URL is not set: the live smoke test does not run");
        return;
    };
    let r = repo();
    let outside = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args([
            "agent",
            "the add test fails: add(2, 3) returns -1; fix calc/ops.py",
            "--json",
        ])
        .args([
            "--model",
            "local:live",
            "--max-steps",
            "6",
            "--session",
            "t",
            "--test-cmd",
            "python3 -m unittest -q",
        ])
        .arg("--repo")
        .arg(r.path())
        .env("XDG_STATE_HOME", state.path())
        // The live server may be on another machine: named for `local:` on purpose.
        .env("KEN_LOCAL_BASE_URL", &url)
        .env(
            "KEN_MODEL_STREAM",
            std::env::var("KEN_MODEL_STREAM").unwrap_or_else(|_| "0".into()),
        )
        .env("HOME", outside.path())
        .output()
        .unwrap();
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let calls: Vec<&Value> = events.iter().filter(|e| e["kind"] == "model-call").collect();
    assert!(
        !calls.is_empty(),
        "no model call: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        calls.iter().any(|c| c["input_tokens"].as_u64().unwrap_or(0) > 0),
        "the server reported no usage"
    );
    let finished = events
        .iter()
        .find(|e| e["kind"] == "finished")
        .expect("the run did not end");
    eprintln!(
        "live model: {} after {} calls; {} tool calls: {:?}",
        finished["state"],
        finished["steps"],
        events.iter().filter(|e| e["kind"] == "tool-call").count(),
        events
            .iter()
            .filter(|e| e["kind"] == "tool-call")
            .map(|e| (
                e["name"].as_str().unwrap_or(""),
                e["ok"].as_bool().unwrap_or(false)
            ))
            .collect::<Vec<_>>()
    );
    verify(&state.path().join("kenning/agent/t/audit.jsonl"));
    // Contained: nothing written outside the workspace (its own HOME included), .git intact.
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    let log = Command::new("git")
        .args(["log", "--oneline"])
        .current_dir(r.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 1);
}

#[test]
fn sub_agents_can_run_on_another_model() {
    let r = repo();
    let parent = FakeModel::start(
        Wire::OpenAi,
        vec![
            call("delegate", json!({"task": "fix the sign of add in calc/ops.py"})),
            call("finish", json!({"summary": "delegated and done"})),
        ],
    );
    let sub = FakeModel::start(
        Wire::Anthropic,
        vec![
            call("apply_patch", json!({"patch": FIX})),
            call("finish", json!({"summary": "fixed the sign"})),
        ],
    );
    let state = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ken"))
        .args([
            "agent",
            "fix add",
            "--json",
            "--model",
            "local:strong",
            "--delegate-model",
            "anthropic:cheap",
        ])
        .args(["--session", "t", "--test-cmd", "python3 -m unittest -q", "--repo"])
        .arg(r.path())
        .env("XDG_STATE_HOME", state.path())
        .env("OPENAI_BASE_URL", format!("{}/v1", parent.url))
        .env("ANTHROPIC_BASE_URL", &sub.url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The parent made two calls, the sub-agent two, each on its own model.
    assert_eq!(parent.requests().len(), 2);
    assert_eq!(sub.requests().len(), 2);
    for req in sub.requests() {
        results_answer_calls(Wire::Anthropic, &req).unwrap();
    }
    let events: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let models: Vec<&str> = events
        .iter()
        .filter(|e| e["kind"] == "model-call")
        .map(|e| e["model"].as_str().unwrap())
        .collect();
    assert_eq!(
        models,
        [
            "openai:strong",
            "anthropic:cheap",
            "anthropic:cheap",
            "openai:strong"
        ]
    );
}

#[test]
fn a_body_fix_with_a_wide_blast_radius_runs_without_a_terminal_and_a_public_signature_change_is_refused() {
    let r = repo();
    // Thirty public callers of `add` and thirty of theirs: a blast radius of 30 indirect
    // dependents, which asked (and without a terminal, refused) before a body fix.
    let callers: String = (0..30)
        .map(|i| {
            format!("def total_{i}(x):\n    return add(x, {i})\n\n\ndef report_{i}(x):\n    return total_{i}(x)\n\n\n")
        })
        .collect();
    std::fs::write(
        r.path().join("calc/users.py"),
        format!("from calc.ops import add\n\n\n{callers}"),
    )
    .unwrap();
    support::commit_all(r.path(), "callers");
    let signature = "*** Begin Patch\n*** Update File: calc/ops.py\n@@\n-def add(a, b):\n+def add(a, b, c):\n*** End Patch\n";
    let script = vec![
        call("apply_patch", json!({"patch": FIX})),
        call("apply_patch", json!({"patch": signature})),
        call("finish", json!({"summary": "fixed add"})),
    ];
    let model = FakeModel::start(Wire::OpenAi, script);
    let run = agent(r.path(), &model, Wire::OpenAi, &["--approval", "on-request"]);
    let patches = run.tool_results("apply_patch");
    assert_eq!(patches.len(), 2, "{}", String::from_utf8_lossy(&run.out.stderr));
    assert_eq!(patches[0]["ok"], true, "{}", patches[0]);
    assert!(
        patches[0]["result"]
            .as_str()
            .unwrap()
            .contains("blast radius of 30"),
        "the body fix records its blast radius: {}",
        patches[0]
    );
    let refused = patches[1]["result"].as_str().unwrap();
    assert_eq!(patches[1]["ok"], false, "{}", patches[1]);
    assert!(
        refused.contains("changes public API") && refused.contains("--approve-edits"),
        "{refused}"
    );
    let text = std::fs::read_to_string(r.path().join("calc/ops.py")).unwrap();
    assert!(
        text.contains("def add(a, b):") && text.contains("return a + b"),
        "the body fix stays and the signature change is undone:\n{text}"
    );
}
