//! `ken exec` tested by its effects: real commands run confined, and the test checks what
//! happened on the host (a file not written, a listener never reached, a grandchild gone),
//! not which flags were set. Each layer is also tested alone, by disabling the others with
//! `KEN_SANDBOX_DISABLE`. Where this kernel lacks a mechanism, the test says so and checks
//! that the run reports it as degraded instead.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

fn ken() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ken"))
}

struct Ws {
    _dir: tempfile::TempDir,
    root: PathBuf,
    state: PathBuf,
}

/// A workspace with a `.git` folder and a rules file that allows every command, so the
/// sandbox, not the approval policy, is what these tests meet.
fn workspace() -> Ws {
    workspace_in(tempfile::tempdir().unwrap())
}

fn workspace_in(dir: tempfile::TempDir) -> Ws {
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(root.join(".kenning")).unwrap();
    std::fs::write(
        root.join(".kenning/rules.toml"),
        "[[rule]]\nmatch = \"*\"\ndecision = \"allow\"\nreason = \"sandbox tests\"\n",
    )
    .unwrap();
    let state = dir.path().join("state");
    Ws {
        _dir: dir,
        root,
        state,
    }
}

impl Ws {
    fn exec(&self, flags: &[&str], script: &str, env: &[(&str, &str)]) -> (Output, Value) {
        let mut cmd = ken();
        cmd.current_dir(&self.root)
            .env("XDG_STATE_HOME", &self.state)
            .env("XDG_CONFIG_HOME", self.state.join("config"))
            .env_remove("KEN_SANDBOX_DISABLE")
            .args(["exec", "--json"])
            .args(flags)
            .args(["--", "sh", "-c", script]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let json: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (out, json)
    }

    fn run(&self, script: &str) -> Value {
        self.exec(&[], script, &[]).1
    }

    fn run_without(&self, disabled: &str, script: &str) -> Value {
        self.exec(&[], script, &[("KEN_SANDBOX_DISABLE", disabled)]).1
    }
}

fn stdout(v: &Value) -> String {
    v["report"]["stdout"]["text"].as_str().unwrap_or("").to_string()
}

fn mechanism<'a>(v: &'a Value, name: &str) -> &'a str {
    v["report"]["mechanisms"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["name"] == name))
        .and_then(|m| m["state"].as_str())
        .unwrap_or("missing")
}

/// Whether this kernel enforces `name`, from `ken exec --doctor --json`.
fn enforced_here(name: &str) -> bool {
    let out = ken().args(["exec", "--doctor", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let state = v["mechanisms"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["name"] == name))
        .map(|m| m["state"].clone());
    let on = state.as_ref().and_then(|s| s.as_str()) == Some("enforced");
    if !on {
        eprintln!("{name} is not enforced on this machine ({state:?}): checking the degraded report instead");
    }
    on
}

/// The lines the script printed for each probe: `NAME ok` or `NAME denied`.
fn probe(v: &Value, name: &str) -> bool {
    let text = stdout(v);
    match text.lines().find(|l| l.starts_with(&format!("{name} "))) {
        Some(l) => l.ends_with(" ok"),
        None => panic!(
            "probe {name} printed nothing; output:\n{text}\nstderr:\n{}",
            v["report"]["stderr"]["text"]
        ),
    }
}

/// Shell that prints `NAME ok` when `cmd` succeeds, else `NAME denied`.
fn check(name: &str, cmd: &str) -> String {
    format!("if {cmd} 2>/dev/null; then echo '{name} ok'; else echo '{name} denied'; fi\n")
}

fn outside_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(
        std::env::var("CARGO_TARGET_TMPDIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_string()),
    )
    .unwrap()
}

fn write_probes(ws: &Ws, outside: &Path) -> String {
    let _ = ws;
    [
        check("workspace", "touch src/new.txt"),
        check("etc", "touch /etc/kenning-sandbox-probe"),
        check("outside", &format!("touch {}/escaped", outside.display())),
        check("git", "touch .git/hook"),
        check("git-config", "echo x >> .git/config"),
        check("git-symlink", "ln -s .git gl && touch gl/through-link"),
        check("devnull", "echo x > /dev/null"),
        check("tmp", "touch \"$TMPDIR/kenning-private\""),
        check("slash-tmp", "touch /tmp/kenning-private-slash"),
    ]
    .concat()
}

fn assert_host_untouched(ws: &Ws, outside: &Path) {
    assert!(!Path::new("/etc/kenning-sandbox-probe").exists());
    assert!(!outside.join("escaped").exists());
    assert!(!ws.root.join(".git/hook").exists());
    assert!(!ws.root.join(".git/through-link").exists());
    assert_eq!(
        std::fs::read_to_string(ws.root.join(".git/config")).unwrap(),
        "[core]\n"
    );
}

#[test]
fn writes_are_confined_to_the_workspace_and_git_stays_read_only() {
    let ws = workspace();
    let outside = outside_dir();
    let v = ws.run(&write_probes(&ws, outside.path()));
    assert_eq!(v["report"]["status"], 0, "{v}");
    assert!(probe(&v, "workspace"));
    assert!(ws.root.join("src/new.txt").exists());
    assert!(probe(&v, "devnull"));
    assert!(probe(&v, "tmp"));
    if enforced_here("mount-namespace") {
        // This workspace lives under /tmp, so the host's /tmp stays, read-only.
        assert!(!probe(&v, "slash-tmp"), "the host's /tmp was writable");
    }
    let confined = enforced_here("mount-namespace") || enforced_here("landlock");
    if confined {
        for p in ["etc", "outside", "git", "git-config", "git-symlink"] {
            assert!(!probe(&v, p), "{p} was writable: {}", stdout(&v));
        }
        assert_host_untouched(&ws, outside.path());
    } else {
        assert!(!v["report"]["degraded"].as_array().unwrap().is_empty());
    }
    // The private /tmp is gone after the run.
    assert!(!Path::new("/tmp/kenning-private-slash").exists());
}

#[test]
fn each_filesystem_layer_holds_alone() {
    for (disabled, layer) in [("mount-namespace", "landlock"), ("landlock", "mount-namespace")] {
        let ws = workspace();
        let outside = outside_dir();
        let v = ws.run_without(disabled, &write_probes(&ws, outside.path()));
        assert_eq!(mechanism(&v, disabled), "unavailable", "{v}");
        assert!(v["report"]["degraded"].to_string().contains(disabled));
        if !enforced_here(layer) {
            continue;
        }
        assert!(probe(&v, "workspace"), "{layer} alone: {}", stdout(&v));
        for p in ["etc", "outside", "git", "git-config", "git-symlink"] {
            assert!(!probe(&v, p), "{layer} alone let {p} be written: {}", stdout(&v));
        }
        assert_host_untouched(&ws, outside.path());
    }
}

#[test]
fn read_only_mode_writes_nothing_but_its_temp_dir() {
    let ws = workspace();
    let script = [
        check("workspace", "touch src/ro.txt"),
        check("tmp", "touch \"$TMPDIR/x\""),
    ]
    .concat();
    let (_, v) = ws.exec(&["--sandbox", "read-only"], &script, &[]);
    assert!(probe(&v, "tmp"));
    if enforced_here("mount-namespace") || enforced_here("landlock") {
        assert!(!probe(&v, "workspace"));
        assert!(!ws.root.join("src/ro.txt").exists());
    }
}

#[test]
fn no_new_privs_is_set_and_ptrace_fails() {
    let ws = workspace();
    let v = ws.run("grep NoNewPrivs /proc/self/status");
    assert!(stdout(&v).contains("NoNewPrivs:\t1"), "{}", stdout(&v));
    let ptrace = r#"python3 -c '
import ctypes, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
child = subprocess.Popen(["sleep", "5"])
r = libc.ptrace(16, child.pid, 0, 0)
print("ptrace", r, ctypes.get_errno())
child.kill()
'"#;
    let v = ws.run(ptrace);
    let line = stdout(&v);
    if enforced_here("seccomp") {
        assert!(
            line.contains("ptrace -1 1"),
            "ptrace attach was not refused with EPERM: {line}"
        );
    }
}

#[test]
fn the_network_is_unreachable_even_on_loopback() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let ws = workspace();
    let mut script = check(
        "devtcp",
        &format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'"),
    );
    if which("curl") {
        script += &check("curl", &format!("curl -sS -m 2 http://127.0.0.1:{port}/"));
    }
    if which("nc") {
        script += &check("nc", &format!("echo hi | nc -w 2 127.0.0.1 {port}"));
    }
    script += &check(
        "python",
        &format!("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'"),
    );
    for disabled in ["", "network-namespace"] {
        let v = ws.run_without(disabled, &script);
        let enforced = if disabled.is_empty() {
            "network-namespace"
        } else {
            "seccomp"
        };
        if !enforced_here(enforced) {
            continue;
        }
        for p in ["devtcp", "curl", "nc", "python"] {
            if stdout(&v).contains(&format!("{p} ")) {
                assert!(
                    !probe(&v, p),
                    "{p} reached the host's loopback (without {disabled:?}): {}",
                    stdout(&v)
                );
            }
        }
        assert!(listener.accept().is_err(), "a connection reached the listener");
    }
    // --network gives the host's network back.
    let (_, v) = ws.exec(
        &["--network"],
        &check(
            "python",
            &format!("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)'"),
        ),
        &[],
    );
    assert!(probe(&v, "python"), "{}", stdout(&v));
}

fn which(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_timeout_kills_setsid_grandchildren_too() {
    for disabled in ["", "pid-namespace"] {
        let ws = workspace();
        let marker = ws.root.join("survivor");
        let script = format!("setsid sh -c 'sleep 3; touch {}' & sleep 30", marker.display());
        let started = Instant::now();
        let (out, v) = ws.exec(&["--timeout", "1"], &script, &[("KEN_SANDBOX_DISABLE", disabled)]);
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(out.status.code(), Some(124), "{v}");
        assert_eq!(v["report"]["timed_out"], true);
        assert_eq!(v["report"]["killed_by"], "timeout");
        std::thread::sleep(Duration::from_millis(3500));
        assert!(
            !marker.exists(),
            "a setsid grandchild outlived the timeout (disabled: {disabled:?})"
        );
    }
}

fn process_count() -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .count()
}

#[test]
fn a_fork_bomb_is_contained_and_reported() {
    let ws = workspace();
    let root = nix::unistd::getuid().is_root();
    if root && !enforced_here("cgroup") {
        // Without a pids cgroup nothing bounds root's processes: check that the run says so
        // instead of setting off a bomb on the machine.
        let v = ws.run("true");
        assert!(
            v["report"]["degraded"]
                .to_string()
                .contains("processes not bounded"),
            "{v}"
        );
        return;
    }
    let before = process_count();
    let (out, v) = ws.exec(
        &["--timeout", "3", "--max-processes", "64"],
        "bomb() { bomb | bomb & }; bomb; sleep 10",
        &[],
    );
    assert_eq!(out.status.code(), Some(124), "{v}");
    if enforced_here("cgroup") {
        assert!(v["report"]["limits_hit"].to_string().contains("processes"), "{v}");
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        process_count() < before + 50,
        "processes left behind: {} -> {}",
        before,
        process_count()
    );
}

#[test]
fn a_memory_hog_is_contained_and_reported() {
    let ws = workspace();
    let (out, v) = ws.exec(
        &["--memory-mib", "128"],
        "python3 -c 'x = bytearray(1 << 30); print(\"allocated\", len(x))'",
        &[],
    );
    assert_ne!(out.status.code(), Some(0), "{v}");
    assert!(!stdout(&v).contains("allocated"));
    let peak = v["report"]["peak_memory_bytes"].as_u64().unwrap();
    assert!(peak < 512 << 20, "peak {peak}");
    if enforced_here("cgroup") {
        assert_eq!(v["report"]["killed_by"], "memory", "{v}");
    }
}

#[test]
fn secrets_are_scrubbed_from_the_environment() {
    let ws = workspace();
    let env = [
        ("MY_SERVICE_TOKEN", "s3cr3t-value"),
        ("AWS_SECRET_ACCESS_KEY", "abc"),
        ("PLAIN_SETTING", "kept"),
    ];
    let (_, v) = ws.exec(&[], "env", &env);
    let text = stdout(&v);
    assert!(
        !text.contains("MY_SERVICE_TOKEN") && !text.contains("s3cr3t-value"),
        "{text}"
    );
    assert!(!text.contains("AWS_SECRET_ACCESS_KEY"));
    assert!(text.contains("PLAIN_SETTING=kept"));
    let (_, v) = ws.exec(&["--allow-env", "MY_SERVICE_TOKEN"], "env", &env);
    assert!(stdout(&v).contains("MY_SERVICE_TOKEN=s3cr3t-value"));
}

#[test]
fn strict_mode_refuses_when_a_mechanism_is_missing() {
    let ws = workspace();
    let marker = ws.root.join("ran");
    let (out, v) = ws.exec(
        &["--sandbox-strict"],
        &format!("touch {}", marker.display()),
        &[("KEN_SANDBOX_DISABLE", "landlock")],
    );
    assert_eq!(out.status.code(), Some(125), "{v}");
    assert!(v["report"]["refused"].as_str().unwrap().contains("landlock"));
    assert!(!marker.exists(), "the command ran under --sandbox-strict");
    // Without --sandbox-strict it runs and says it is degraded.
    let (out, v) = ws.exec(
        &[],
        &format!("touch {}", marker.display()),
        &[("KEN_SANDBOX_DISABLE", "landlock")],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(marker.exists());
    assert!(v["report"]["degraded"].to_string().contains("landlock"), "{v}");
}

#[test]
fn exit_codes_signals_and_capped_output_are_reported() {
    let ws = workspace();
    let (out, v) = ws.exec(&[], "echo out; echo err >&2; exit 7", &[]);
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(v["report"]["exit_code"], 7);
    assert_eq!(stdout(&v), "out\n");
    assert_eq!(v["report"]["stderr"]["text"], "err\n");
    let (out, v) = ws.exec(&[], "kill -TERM $$", &[]);
    assert_eq!(out.status.code(), Some(143));
    assert_eq!(v["report"]["signal"], "SIGTERM");
    let (_, v) = ws.exec(&["--capture-bytes", "1000"], "yes | head -c 1000000", &[]);
    let s = &v["report"]["stdout"];
    assert_eq!(s["total_bytes"], 1_000_000);
    assert_eq!(s["truncated"], true);
    assert!(s["text"].as_str().unwrap().contains("[... 999000 bytes cut ...]"));
    // A missing program: 127, as a shell says it, with the reason in the report.
    let out = ken()
        .current_dir(&ws.root)
        .env("XDG_STATE_HOME", &ws.state)
        .args(["exec", "--", "no-such-program-kenning"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`no-such-program-kenning`: command not found"));
    // Streaming (no --json): the output reaches ken's own stdout as it comes.
    let out = ken()
        .current_dir(&ws.root)
        .env("XDG_STATE_HOME", &ws.state)
        .args(["exec", "--", "sh", "-c", "echo streamed"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "streamed\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ken exec: exit 0"));
}

#[test]
fn policy_denials_are_enforced_and_audited() {
    let ws = workspace();
    std::fs::remove_file(ws.root.join(".kenning/rules.toml")).unwrap();
    let audit = ws.state.join("audit.jsonl");
    let run = |approval: &str, args: &[&str]| {
        ken()
            .current_dir(&ws.root)
            .env("XDG_STATE_HOME", &ws.state)
            .args(["exec", "--approval", approval, "--audit"])
            .arg(&audit)
            .arg("--")
            .args(args)
            .output()
            .unwrap()
    };
    // `never` denies what would need asking; a non-interactive `on-request` denies too.
    let out = run("never", &["git", "push", "origin", "main"]);
    assert_eq!(out.status.code(), Some(126));
    assert!(String::from_utf8_lossy(&out.stderr).contains("denied"));
    let out = run("on-request", &["rm", "-rf", "src"]);
    assert_eq!(out.status.code(), Some(126));
    assert!(ws.root.join("src").exists(), "a denied command ran");
    // A read runs under every policy.
    let out = run("untrusted", &["ls"]);
    assert_eq!(out.status.code(), Some(0));
    // A repository rule turns a denial into a run, and a deny rule beats an allow.
    std::fs::write(
        ws.root.join(".kenning/rules.toml"),
        "[[rule]]\nmatch = \"touch\"\ndecision = \"allow\"\n\n[[rule]]\nmatch = \"touch forbidden\"\ndecision = \"deny\"\nreason = \"no\"\n",
    )
    .unwrap();
    assert_eq!(run("untrusted", &["touch", "allowed"]).status.code(), Some(0));
    assert!(ws.root.join("allowed").exists());
    assert_eq!(run("untrusted", &["touch", "forbidden"]).status.code(), Some(126));
    assert!(!ws.root.join("forbidden").exists());
    // The log holds every decision, intact.
    let verify = ken()
        .args(["audit", "verify", "--json"])
        .arg(&audit)
        .output()
        .unwrap();
    assert_eq!(
        verify.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    let text = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[0]["event"]["allowed"], false);
    assert_eq!(lines[0]["event"]["class"], "protected");
    assert_eq!(lines[2]["event"]["result"]["exit_code"], 0);
    assert_eq!(
        lines[3]["event"]["result"]["files_changed"],
        Value::Null,
        "no git work tree here"
    );
    assert_eq!(lines[4]["event"]["allowed"], false);
    assert!(
        lines[4]["event"]["decided_by"]
            .as_str()
            .unwrap()
            .contains("rules.toml:2")
    );
}

#[test]
fn tmp_is_private_when_the_workspace_lives_elsewhere() {
    let ws = workspace_in(outside_dir());
    if ws.root.starts_with("/tmp") || !enforced_here("mount-namespace") {
        return;
    }
    let name = format!("kenning-private-{}", std::process::id());
    let v = ws.run(
        &[
            check("slash-tmp", &format!("touch /tmp/{name}")),
            check("seen", &format!("test -f $TMPDIR/{name}")),
        ]
        .concat(),
    );
    assert!(probe(&v, "slash-tmp") && probe(&v, "seen"), "{}", stdout(&v));
    assert!(
        !Path::new("/tmp").join(&name).exists(),
        "the command wrote the host's /tmp"
    );
}

#[test]
fn concurrent_runs_append_to_one_log_without_breaking_its_chain() {
    let ws = workspace();
    let audit = ws.state.join("shared.jsonl");
    let children: Vec<_> = (0..8)
        .map(|i| {
            ken()
                .current_dir(&ws.root)
                .env("XDG_STATE_HOME", &ws.state)
                .args(["exec", "--audit"])
                .arg(&audit)
                .args(["--", "sh", "-c", &format!("echo run {i}")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let verify = ken()
        .args(["audit", "verify", "--json"])
        .arg(&audit)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&verify.stdout).unwrap();
    assert_eq!(verify.status.code(), Some(0), "{v}");
    assert_eq!(v["lines"], 8);
}

#[test]
fn a_commit_on_main_is_protected_and_files_changed_are_audited() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(root.join("a.txt"), "a\n").unwrap();
    git(&["add", "-A"]);
    git(&[
        "-c",
        "user.email=t@t",
        "-c",
        "user.name=t",
        "commit",
        "-qm",
        "base",
    ]);
    let audit = root.join("audit.jsonl");
    let run = |args: &[&str]| {
        ken()
            .current_dir(root)
            .env("XDG_STATE_HOME", root.join("state"))
            .arg("exec")
            .arg("--audit")
            .arg(&audit)
            .arg("--")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["git", "commit", "-am", "x"]);
    assert_eq!(
        out.status.code(),
        Some(126),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("main"));
    let out = run(&["sh", "-c", "echo b >> a.txt; echo new > b.txt"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last: Value =
        serde_json::from_str(std::fs::read_to_string(&audit).unwrap().lines().last().unwrap()).unwrap();
    assert_eq!(
        last["event"]["result"]["files_changed"],
        serde_json::json!(["a.txt", "b.txt"])
    );
}

/// The approval prompt on a real terminal (a pty from util-linux `script`): deny with a
/// reason, approve for the session, and the session's approval reused without a terminal.
#[test]
fn a_person_approves_or_denies_on_the_terminal() {
    if !which("script") {
        eprintln!("util-linux `script` is missing: the terminal prompt is not exercised here");
        return;
    }
    let ws = workspace();
    std::fs::remove_file(ws.root.join(".kenning/rules.toml")).unwrap();
    std::fs::create_dir_all(ws.root.join("src/sub")).unwrap();
    let audit = ws.state.join("tty.jsonl");
    let on_tty = |answers: &str, args: &str| {
        let cmd = format!(
            "{} exec --session tty --audit {} -- {args}",
            env!("CARGO_BIN_EXE_ken"),
            audit.display()
        );
        let mut child = Command::new("script")
            .args(["-qec", &cmd, "/dev/null"])
            .current_dir(&ws.root)
            .env("XDG_STATE_HOME", &ws.state)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(answers.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = on_tty("n\nnot today\n", "rm -rf src");
    assert!(text.contains("ken exec wants to run: rm -rf src"), "{text}");
    assert!(text.contains("denied: not today"), "{text}");
    assert!(ws.root.join("src").exists());
    let text = on_tty("s\n", "rm -rf src/sub");
    assert!(text.contains("exit 0"), "{text}");
    assert!(!ws.root.join("src/sub").exists());
    std::fs::create_dir_all(ws.root.join("src/sub")).unwrap();
    // No terminal now: the same command, approved for the session, runs without asking.
    let out = ken()
        .current_dir(&ws.root)
        .env("XDG_STATE_HOME", &ws.state)
        .args(["exec", "--session", "tty", "--audit"])
        .arg(&audit)
        .args(["--", "rm", "-rf", "src/sub"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!ws.root.join("src/sub").exists());
    let lines: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["event"]["person_reason"], "not today");
    assert_eq!(lines[1]["event"]["decided_by"], "a person, for the session");
    assert_eq!(
        lines[2]["event"]["decided_by"],
        "approved earlier in this session"
    );
}

#[test]
fn cpu_and_file_size_limits_end_the_run_and_say_which() {
    let ws = workspace();
    let (_, v) = ws.exec(
        &["--cpu-seconds", "1", "--timeout", "20"],
        "while :; do :; done",
        &[],
    );
    assert_eq!(v["report"]["killed_by"], "cpu", "{v}");
    assert!(v["report"]["duration_ms"].as_u64().unwrap() < 15_000);
    let (_, v) = ws.exec(
        &["--max-file-mib", "1"],
        "head -c 4194304 /dev/zero > big.bin",
        &[],
    );
    assert_eq!(v["report"]["killed_by"], "file-size", "{v}");
    assert!(std::fs::metadata(ws.root.join("big.bin")).unwrap().len() <= 1 << 20);
}

/// A real git repository with work only a checkpoint can bring back: an uncommitted edit to a
/// tracked file, an untracked file, an executable script; a Makefile whose `clean` deletes
/// `src/`; and a rules file that allows `rm`, so a destructive command runs without a person.
struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    state: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("src/pkg")).unwrap();
        let write = |path: &str, text: &str| std::fs::write(root.join(path), text).unwrap();
        write("src/lib.py", "def answer():\n    return 42\n");
        write("src/pkg/run.sh", "#!/bin/sh\necho run\n");
        write("Makefile", "clean:\n\trm -rf src\n");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            root.join("src/pkg/run.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .current_dir(&root)
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}");
        };
        git(&["init", "-q", "-b", "work"]);
        git(&["add", "-A"]);
        git(&["commit", "-qm", "base"]);
        write(
            "src/lib.py",
            "def answer():\n    return 42\n\n# an uncommitted edit\n",
        );
        write("src/notes.txt", "untracked notes\n");
        std::fs::create_dir_all(root.join(".kenning")).unwrap();
        write(
            ".kenning/rules.toml",
            "[[rule]]\nmatch = \"rm\"\ndecision = \"allow\"\nreason = \"undo tests\"\n",
        );
        let state = dir.path().join("state");
        Repo {
            _dir: dir,
            root,
            state,
        }
    }

    fn ken(&self, args: &[&str]) -> Output {
        ken()
            .current_dir(&self.root)
            .env("XDG_STATE_HOME", &self.state)
            .env("XDG_CONFIG_HOME", self.state.join("config"))
            .env_remove("KEN_SANDBOX_DISABLE")
            .args(args)
            .output()
            .unwrap()
    }

    /// `ken exec [flags] -- command`.
    fn exec(&self, flags: &[&str], command: &[&str]) -> Output {
        let mut args = vec!["exec"];
        args.extend(flags);
        args.push("--");
        args.extend(command);
        self.ken(&args)
    }

    /// Every file of the work tree but `.git` and `.kenning`: its bytes and its mode.
    fn tree(&self) -> std::collections::BTreeMap<String, (Vec<u8>, u32)> {
        use std::os::unix::fs::PermissionsExt;
        let mut out = std::collections::BTreeMap::new();
        let mut dirs = vec![self.root.clone()];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).unwrap().flatten() {
                let p = e.path();
                let rel = p.strip_prefix(&self.root).unwrap().to_string_lossy().into_owned();
                if rel == ".git" || rel == ".kenning" {
                    continue;
                }
                if p.is_dir() {
                    dirs.push(p);
                } else {
                    let mode = std::fs::metadata(&p).unwrap().permissions().mode();
                    out.insert(rel, (std::fs::read(&p).unwrap(), mode));
                }
            }
        }
        out
    }

    fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.state.join("kenning/audit/exec.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn work_an_opaque_program_deletes_is_put_back_byte_for_byte_by_undo() {
    for program in [
        &["python3", "-c", "import shutil; shutil.rmtree('src')"][..],
        &["sh", "-c", "rm -rf src"],
        &["make", "clean"],
    ] {
        let repo = Repo::new();
        let before = repo.tree();
        assert!(before.contains_key("src/notes.txt") && before.contains_key("src/pkg/run.sh"));
        let run = repo.exec(&[], program);
        assert!(run.status.success(), "{program:?}: {}", err(&run));
        assert!(!repo.root.join("src").exists(), "{program:?} did not delete src/");
        let said = err(&run);
        assert!(
            said.contains("deleted 3 and overwrote 0 saved file(s)")
                && said.contains("src/notes.txt")
                && said.contains("ken exec --undo"),
            "{program:?}: {said}"
        );
        let undo = repo.ken(&["exec", "--undo"]);
        assert!(undo.status.success(), "{program:?}: {}", err(&undo));
        assert_eq!(repo.tree(), before, "{program:?}: not put back as it was");
        let audit = repo.audit();
        let lost = &audit[0]["event"]["result"]["files_lost"];
        assert_eq!(
            lost.as_array().map(Vec::len),
            Some(3),
            "{program:?}: the audit log names what was lost: {lost}"
        );
        assert_eq!(audit[1]["event"]["kind"], "undo");
    }
}

#[test]
fn a_read_only_command_leaves_no_checkpoint_and_nothing_to_undo() {
    let repo = Repo::new();
    for command in [
        &["ls", "-la", "src"][..],
        &["cat", "src/lib.py"],
        &["git", "status", "--short"],
        &["sh", "-c", "grep -rn answer src | wc -l"],
    ] {
        let run = repo.exec(&["--json"], command);
        assert!(run.status.success(), "{command:?}: {}", err(&run));
        let v: Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(v["checkpoint"], Value::Null, "{command:?}: {v}");
    }
    assert!(!repo.state.join("kenning/exec/checkpoints").exists());
    let undo = repo.ken(&["exec", "--undo"]);
    assert!(
        !undo.status.success() && err(&undo).contains("nothing to undo"),
        "{}",
        err(&undo)
    );
}

#[test]
fn a_checkpoint_that_cannot_be_saved_stops_the_command() {
    let repo = Repo::new();
    // A file where the checkpoints' folder goes: no store can be made, not even by root.
    std::fs::create_dir_all(repo.state.join("kenning/exec")).unwrap();
    std::fs::write(repo.state.join("kenning/exec/checkpoints"), "in the way\n").unwrap();
    let before = repo.tree();
    for program in [
        &["python3", "-c", "import shutil; shutil.rmtree('src')"][..],
        &["sh", "-c", "rm -rf src"],
        &["make", "clean"],
    ] {
        let run = repo.exec(&[], program);
        assert!(!run.status.success(), "{program:?} ran");
        assert!(
            err(&run).contains("not run: the checkpoint to undo it could not be saved"),
            "{program:?}: {}",
            err(&run)
        );
        assert_eq!(repo.tree(), before, "{program:?} changed the tree");
    }
    // Recorded as allowed but never run.
    let audit = repo.audit();
    assert_eq!(audit.len(), 3);
    assert!(
        audit
            .iter()
            .all(|l| l["event"]["allowed"] == true && l["event"]["result"].is_null()),
        "{audit:?}"
    );
    // A command known to write nothing needs no checkpoint, and still runs.
    let ls = repo.exec(&[], &["ls", "src"]);
    assert!(ls.status.success(), "{}", err(&ls));
}

#[test]
fn each_undo_goes_one_command_further_back() {
    let repo = Repo::new();
    let start = repo.tree();
    let run = repo.exec(&[], &["python3", "-c", "import shutil; shutil.rmtree('src')"]);
    assert!(run.status.success(), "{}", err(&run));
    let run = repo.exec(&[], &["sh", "-c", "echo later > later.txt"]);
    assert!(run.status.success(), "{}", err(&run));
    let undo = repo.ken(&["exec", "--undo"]);
    assert!(undo.status.success(), "{}", err(&undo));
    assert!(!repo.root.join("later.txt").exists() && !repo.root.join("src").exists());
    let undo = repo.ken(&["exec", "--undo"]);
    assert!(undo.status.success(), "{}", err(&undo));
    assert_eq!(repo.tree(), start);
    let undo = repo.ken(&["exec", "--undo"]);
    assert!(
        !undo.status.success() && err(&undo).contains("nothing more to undo"),
        "{}",
        err(&undo)
    );
    assert_eq!(repo.tree(), start);
}

#[test]
fn writing_runs_side_by_side_each_get_a_checkpoint() {
    const RUNS: usize = 8;
    let repo = Repo::new();
    // Enough files that saving a checkpoint takes a while, so the runs' saves overlap.
    std::fs::create_dir_all(repo.root.join("data")).unwrap();
    for i in 0..3000 {
        std::fs::write(repo.root.join(format!("data/{i}.txt")), format!("{i}\n")).unwrap();
    }
    let children: Vec<_> = (0..RUNS)
        .map(|i| {
            ken()
                .current_dir(&repo.root)
                .env("XDG_STATE_HOME", &repo.state)
                .env("XDG_CONFIG_HOME", repo.state.join("config"))
                // A log each: runs that share one wait on its lock; these share only the
                // session's checkpoints.
                .args(["exec", "--audit"])
                .arg(repo.state.join(format!("audit/{i}.jsonl")))
                .args(["--", "sh", "-c", &format!("echo {i} > out{i}.txt")])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", err(&out));
    }
    let mut commits: Vec<String> = (0..RUNS)
        .flat_map(|i| {
            let log = std::fs::read_to_string(repo.state.join(format!("audit/{i}.jsonl"))).unwrap();
            log.lines()
                .filter_map(|l| {
                    let v: Value = serde_json::from_str(l).unwrap();
                    v["event"]["checkpoint"].as_str().map(str::to_string)
                })
                .collect::<Vec<_>>()
        })
        .collect();
    commits.sort();
    commits.dedup();
    assert_eq!(commits.len(), RUNS, "{commits:?}");
}
