//! The history part through the CLI: a git checkout's index reads its commits (incrementally
//! on the next build), `ken context` uses the commit messages and co-changes and says so, a
//! plain tree reports the history signals as missing, and `ken impact` ranks the tests that
//! changed together with a file first.

mod support;

use std::path::Path;

use serde_json::Value;
use support::{git, ken, stdout, write_tree};

fn commit(dir: &Path, message: &str) {
    support::commit_all(dir, message);
}

/// A shop whose history ties `billing/ledger.py` to `tests/test_invoices.py` and whose
/// messages speak of rounding where the code does not.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write_tree(
        d,
        r#"
//- shop/cart.py
def add_item(cart, item):
    cart.append(item)
    return cart
//- billing/ledger.py
def post_entry(book, amount):
    book.append(round(amount, 2))
    return book
//- billing/report.py
def summary(book):
    return sum(book)
//- tests/test_invoices.py
from billing.ledger import post_entry

def test_post_entry():
    assert post_entry([], 1.005) == [1.0]
//- tests/test_cart.py
from shop.cart import add_item

def test_add_item():
    assert add_item([], 1) == [1]
"#,
    );
    commit(d, "initial layout");
    for (i, msg) in [
        "Fix half-cent rounding of ledger entries",
        "Rounding: use banker's rounding for totals",
        "Keep rounding stable across currencies",
    ]
    .iter()
    .enumerate()
    {
        let ledger = d.join("billing/ledger.py");
        let text = std::fs::read_to_string(&ledger).unwrap() + &format!("\n# revision {i}\n");
        std::fs::write(&ledger, text).unwrap();
        let t = d.join("tests/test_invoices.py");
        let text = std::fs::read_to_string(&t).unwrap() + &format!("\n# revision {i}\n");
        std::fs::write(&t, text).unwrap();
        commit(d, msg);
    }
    dir
}

fn manifest(dir: &Path) -> Value {
    let index = dir.join(".kenning");
    let generation = std::fs::read_to_string(index.join("CURRENT")).unwrap();
    let m = std::fs::read_to_string(index.join(generation.trim()).join("manifest.json")).unwrap();
    serde_json::from_str(&m).unwrap()
}

fn context(dir: &Path, task: &str, extra: &[&str]) -> Value {
    let mut args = vec!["context", "--format", "json", "-q"];
    args.extend_from_slice(extra);
    args.extend(["--", task]);
    let out = ken(&args, dir);
    assert!(out.status.success(), "{}", support::stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn a_checkout_reads_its_history_and_the_next_build_only_the_new_commits() {
    let r = repo();
    let d = r.path();
    assert!(ken(&["index", "build", "-q", "."], d).status.success());
    let h = manifest(d)["parts"]["history"].clone();
    assert_eq!(h["commits"], 4, "{h}");
    assert_eq!(h["incremental"], false);
    let status = stdout(&ken(&["index", "status"], d));
    assert!(status.contains("history    4 commits over 5 files"), "{status}");

    std::fs::write(
        d.join("billing/report.py"),
        "def summary(book):\n    return round(sum(book), 2)\n",
    )
    .unwrap();
    commit(d, "report: round the summary");
    assert!(ken(&["index", "build", "-q", "."], d).status.success());
    let h = manifest(d)["parts"]["history"].clone();
    assert_eq!(
        (h["commits"].as_u64(), h["new_commits"].as_u64()),
        (Some(5), Some(1)),
        "{h}"
    );
    assert_eq!(h["incremental"], true);
}

#[test]
fn commit_messages_point_at_the_file_their_fixes_touched() {
    let r = repo();
    let d = r.path();
    assert!(
        ken(&["index", "build", "-q", "--no-semantic", "."], d)
            .status
            .success()
    );
    // The task's words are in the ledger's history, not in its code.
    let v = context(
        d,
        "amounts are off by a cent because of rounding",
        &["--ranker", "fused"],
    );
    let used: Vec<&str> = v["signals"]["used"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(used.contains(&"history"), "{used:?}");
    let top = &v["files"][0];
    assert_eq!(top["path"], "billing/ledger.py", "{}", v["files"]);
    assert!(top["why"]["history"].is_number(), "{top}");
    // Without the history signal nothing speaks of rounding: an empty answer, said so.
    let out = ken(
        &[
            "context",
            "--format",
            "json",
            "-q",
            "--signals",
            "lexical,mentions",
            "--",
            "amounts are off by a cent because of rounding",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(support::stderr(&out).contains("nothing relevant found"));
    // The learned ranker orders the same candidates, and says it did.
    let v = context(d, "amounts are off by a cent because of rounding", &[]);
    assert_eq!(v["ranker"], "learned");
    assert_eq!(v["files"][0]["path"], "billing/ledger.py", "{}", v["files"]);
}

#[test]
fn a_plain_tree_reports_the_history_signals_missing() {
    let r = repo();
    let d = r.path();
    std::fs::remove_dir_all(d.join(".git")).unwrap();
    assert!(
        ken(&["index", "build", "-q", "--no-semantic", "."], d)
            .status
            .success()
    );
    let status = stdout(&ken(&["index", "status"], d));
    assert!(
        status.contains("history    missing: not a git repository"),
        "{status}"
    );
    let v = context(d, "rounding of ledger entries", &[]);
    let missing = v["signals"]["missing"].to_string();
    assert!(
        missing.contains("history") && missing.contains("not a git repository"),
        "{missing}"
    );
    assert!(!v["files"].as_array().unwrap().is_empty());
}

#[test]
fn impact_ranks_the_tests_that_changed_with_the_file_first() {
    let r = repo();
    let d = r.path();
    assert!(
        ken(&["index", "build", "-q", "--no-semantic", "."], d)
            .status
            .success()
    );
    // A body change the graph also follows: the co-changed test is lifted to the top.
    std::fs::write(
        d.join("billing/ledger.py"),
        std::fs::read_to_string(d.join("billing/ledger.py"))
            .unwrap()
            .replace("round(amount, 2)", "round(amount, 3)"),
    )
    .unwrap();
    let out = ken(&["impact", "--json", "-q"], d);
    assert!(out.status.success(), "{}", support::stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let tests = v["impact"]["tests"].as_array().unwrap();
    assert_eq!(tests[0]["path"], "tests/test_invoices.py", "{tests:?}");
    assert!(tests[0]["score"].as_f64().unwrap() > 1.0, "{tests:?}");
    assert!(
        !tests
            .iter()
            .any(|t| t["path"] == "tests/test_cart.py" && t["found_by"] == "history")
    );

    // The report's summary changed with nothing: no history evidence for any test.
    git(d, &["checkout", "-q", "--", "."]);
    std::fs::write(
        d.join("billing/report.py"),
        "def summary(book):\n    return sum(book) or 0\n",
    )
    .unwrap();
    let v: Value = serde_json::from_str(&stdout(&ken(&["impact", "--json", "-q"], d))).unwrap();
    let tests = v["impact"]["tests"].as_array().unwrap();
    assert!(tests.iter().all(|t| t["found_by"] != "history"), "{tests:?}");
}
