//! The audit log is tamper-evident and crash-tolerant: `ken audit verify` names the first bad
//! line after a changed byte, a dropped line or two swapped lines; a final line cut short is
//! reported as torn (not tampering) and the next writer continues after the intact prefix;
//! secrets never reach the file.

mod support;

use std::path::Path;

use kenning::exec::{AuditLog, REDACTED};
use support::{ken, stdout};

fn write_log(path: &Path, n: usize) {
    let mut log = AuditLog::open(path).unwrap();
    log.append(&serde_json::json!({"kind": "session", "sandbox": "workspace-write"}))
        .unwrap();
    for i in 1..n {
        log.append(&serde_json::json!({
            "kind": "command",
            "argv": ["cargo", "test", format!("case_{i}")],
            "env": {"OPENAI_API_KEY": "sk-live-0123456789abcdefghij", "PATH": "/usr/bin"},
            "decision": "allow",
            "exit_code": 0
        }))
        .unwrap();
    }
}

fn verify(path: &Path) -> (bool, serde_json::Value) {
    let out = ken(
        &["audit", "verify", path.to_str().unwrap(), "--json"],
        Path::new("."),
    );
    (out.status.success(), serde_json::from_str(&stdout(&out)).unwrap())
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn rewrite(path: &Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn an_intact_log_verifies_and_holds_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    write_log(&path, 6);
    let (ok, v) = verify(&path);
    assert!(ok, "{v}");
    assert_eq!(v["lines"], 6);
    assert_eq!(v["torn"], false);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("sk-live"), "{text}");
    assert!(text.contains(REDACTED) && text.contains("/usr/bin"));
    // Appending later continues the chain.
    let mut log = AuditLog::open(&path).unwrap();
    assert_eq!(
        log.append(&serde_json::json!({"kind": "edit", "path": "src/lib.rs"}))
            .unwrap(),
        6
    );
    assert_eq!(verify(&path).1["lines"], 7);
    let shown = ken(&["audit", "show", path.to_str().unwrap()], Path::new("."));
    let s = stdout(&shown);
    assert!(
        s.contains("command") && s.contains("case_3") && s.contains("7 line(s), intact"),
        "{s}"
    );
}

#[test]
fn tampering_names_the_first_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    write_log(&path, 6);
    let original = lines(&path);

    // One byte changed in line 3 (a decision flipped).
    let mut changed = original.clone();
    changed[2] = changed[2].replace("\"allow\"", "\"alloW\"");
    rewrite(&path, &changed);
    let (ok, v) = verify(&path);
    assert!(!ok, "{v}");
    assert_eq!(v["first_bad"]["line"], 3, "{v}");
    assert!(v["first_bad"]["reason"].as_str().unwrap().contains("hash"), "{v}");

    // Line 4 dropped.
    let mut dropped = original.clone();
    dropped.remove(3);
    rewrite(&path, &dropped);
    let (ok, v) = verify(&path);
    assert!(!ok);
    assert_eq!(v["first_bad"]["line"], 4, "{v}");
    assert!(
        v["first_bad"]["reason"].as_str().unwrap().contains("sequence"),
        "{v}"
    );

    // Lines 2 and 3 swapped.
    let mut swapped = original.clone();
    swapped.swap(1, 2);
    rewrite(&path, &swapped);
    let (ok, v) = verify(&path);
    assert!(!ok);
    assert_eq!(v["first_bad"]["line"], 2, "{v}");

    // The human form says the same, with exit code 1.
    let out = ken(&["audit", "verify", path.to_str().unwrap()], Path::new("."));
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("line 2 is bad"), "{}", stdout(&out));

    // A writer never chains onto damage: it keeps the damaged log aside, byte for byte, and
    // starts a new one whose first event names it.
    let damaged = std::fs::read(&path).unwrap();
    let mut log = AuditLog::open(&path).unwrap();
    let r = log.recovered().unwrap().clone();
    assert!(r.damaged && r.line == 2, "{r:?}");
    assert_eq!(std::fs::read(&r.kept).unwrap(), damaged);
    assert_eq!(log.append(&serde_json::json!({"kind": "session"})).unwrap(), 1);
    drop(log);
    let (ok, v) = verify(&path);
    assert!(ok, "{v}");
    assert_eq!(v["lines"], 2);
    assert_eq!(v["predecessors"][0]["report"]["first_bad"]["line"], 2, "{v}");
    assert_eq!(v["predecessors"][0]["recorded"]["line"], 2, "{v}");
}

#[test]
fn a_torn_final_line_is_a_crash_not_tampering() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    write_log(&path, 4);
    let text = std::fs::read_to_string(&path).unwrap();
    // Cut the last line in the middle, as a crash mid-write would.
    let cut = text.len() - 40;
    std::fs::write(&path, &text[..cut]).unwrap();
    let (ok, v) = verify(&path);
    assert!(ok, "{v}");
    assert_eq!(v["torn"], true);
    assert_eq!(v["lines"], 3);
    // The next writer copies the whole file aside, cuts the torn tail, records the cut as
    // line 4 and continues the chain.
    let mut log = AuditLog::open(&path).unwrap();
    let r = log.recovered().unwrap().clone();
    assert!(!r.damaged && r.line == 4, "{r:?}");
    assert_eq!(std::fs::read(&r.kept).unwrap(), &text.as_bytes()[..cut]);
    assert_eq!(
        log.append(&serde_json::json!({"kind": "session", "resumed": true}))
            .unwrap(),
        4
    );
    let (ok, v) = verify(&path);
    assert!(ok && v["lines"] == 5 && v["torn"] == false, "{v}");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"kind\":\"audit-log-torn\""), "{text}");
}

#[test]
fn a_damaged_shared_log_is_kept_as_evidence_and_the_next_exec_runs() {
    let state = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let exec = |script: &str| {
        std::process::Command::new(support::ken_bin())
            .current_dir(work.path())
            .env("XDG_STATE_HOME", state.path())
            .args(["exec", "--workspace"])
            .arg(work.path())
            .args(["--", "sh", "-c", script])
            .output()
            .unwrap()
    };
    for i in 0..3 {
        let out = exec(&format!("echo run {i}"));
        assert!(out.status.success(), "{}", support::stderr(&out));
    }
    let audit_dir = state.path().join("kenning/audit");
    let log = audit_dir.join("exec.jsonl");
    let mut damaged = lines(&log);
    assert!(damaged.len() >= 3, "{damaged:?}");
    damaged[1] = damaged[1].replace("run 1", "run X");
    rewrite(&log, &damaged);
    let evidence = std::fs::read(&log).unwrap();

    let out = exec("echo after the damage");
    assert!(out.status.success(), "{}", support::stderr(&out));
    let err = support::stderr(&out);
    assert!(err.contains("damaged at line 2"), "{err}");
    assert!(stdout(&out).contains("after the damage"));

    // The damaged log is still there, byte for byte, under its new name.
    let kept: Vec<_> = std::fs::read_dir(&audit_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(".damaged-"))
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read(&kept[0]).unwrap(), evidence);

    // `ken audit verify` shows both: the new log intact, the old one bad at line 2.
    let out = ken(&["audit", "verify", log.to_str().unwrap()], Path::new("."));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("intact"), "{text}");
    let kept_name = kept[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        text.contains(&kept_name) && text.contains("line 2 is bad"),
        "{text}"
    );
    let new_log = std::fs::read_to_string(&log).unwrap();
    assert!(
        new_log.lines().next().unwrap().contains("audit-log-damaged"),
        "{new_log}"
    );
    assert!(new_log.contains(&kept_name), "{new_log}");
}
