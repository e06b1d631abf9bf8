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

    // A writer refuses to chain onto damage.
    assert!(AuditLog::open(&path).is_err());
    // The human form says the same, with exit code 1.
    let out = ken(&["audit", "verify", path.to_str().unwrap()], Path::new("."));
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("line 2 is bad"), "{}", stdout(&out));
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
    // The next writer drops the torn tail and continues the chain from line 3.
    let mut log = AuditLog::open(&path).unwrap();
    assert_eq!(
        log.append(&serde_json::json!({"kind": "session", "resumed": true}))
            .unwrap(),
        3
    );
    let (ok, v) = verify(&path);
    assert!(ok && v["lines"] == 4 && v["torn"] == false, "{v}");
}
