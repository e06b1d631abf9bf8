//! The `ken` command line end to end: output formats, exit codes, and coverage notes.

mod support;

use support::{ken, materialize, stderr, stdout};

const REPO: &str = r#"
//- src/requests/__init__.py
from .api import get
//- src/requests/api.py
def get(url, params=None):
    """Sends a GET request."""
    return request("get", url, params=params)

def request(method, url, **kwargs):
    return Session().request(method, url, **kwargs)
//- src/requests/sessions.py
class Session:
    def request(self, method, url):
        return self.send(method)

    def send(self, r):
        return r

class SessionRedirectMixin:
    pass
"#;

fn indexed() -> tempfile::TempDir {
    let repo = materialize(REPO);
    let out = ken(&["index", "build", "."], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    repo
}

#[test]
fn symbol_lookup_prefers_exact_then_case_insensitive_then_prefix() {
    let repo = indexed();
    let exact = ken(&["symbol", "Session"], repo.path());
    insta::assert_snapshot!("symbol_exact", stdout(&exact));
    let qualified = ken(&["symbol", "requests.sessions.Session.send"], repo.path());
    assert!(
        stdout(&qualified)
            .starts_with("method    requests.sessions.Session.send  src/requests/sessions.py:5")
    );
    let local = ken(&["symbol", "Session.request"], repo.path());
    assert_eq!(stdout(&local).lines().count(), 2, "{}", stdout(&local));
    let insensitive = ken(&["symbol", "session"], repo.path());
    assert!(
        stdout(&insensitive).starts_with("class     requests.sessions.Session "),
        "{}",
        stdout(&insensitive)
    );
    let prefix = ken(&["symbol", "SessionRe"], repo.path());
    assert!(stdout(&prefix).contains("requests.sessions.SessionRedirectMixin"));
}

#[test]
fn symbol_json_carries_hits_and_coverage() {
    let repo = indexed();
    let out = ken(&["symbol", "get", "--json"], repo.path());
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let hit = &v["hits"][0];
    assert_eq!(hit["qualified_name"], "requests.api.get");
    assert_eq!(hit["path"], "src/requests/api.py");
    assert_eq!(hit["line"], 1);
    assert_eq!(hit["kind"], "function");
    assert_eq!(hit["doc"], "Sends a GET request.");
    assert_eq!(v["coverage"]["files_indexed"], 3);
    assert_eq!(v["coverage"]["stale"], 0, "{v}");
}

#[test]
fn missing_symbol_exits_1_and_says_what_was_searched() {
    let repo = indexed();
    let out = ken(&["symbol", "does_not_exist"], repo.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).is_empty());
    assert!(
        stderr(&out).contains("no definition matches \"does_not_exist\" (3 files indexed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn status_reports_changes_in_the_working_tree() {
    let repo = indexed();
    std::fs::write(repo.path().join("src/requests/api.py"), "def get():\n    pass\n").unwrap();
    std::fs::write(repo.path().join("src/requests/new.py"), "x = 1\n").unwrap();
    std::fs::remove_file(repo.path().join("src/requests/sessions.py")).unwrap();
    let out = ken(&["index", "status", "--json"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        v["working_tree"]["changed"],
        serde_json::json!(["src/requests/api.py"])
    );
    assert_eq!(
        v["working_tree"]["added"],
        serde_json::json!(["src/requests/new.py"])
    );
    assert_eq!(
        v["working_tree"]["removed"],
        serde_json::json!(["src/requests/sessions.py"])
    );
    assert_eq!(v["summary"]["by_language"]["python"]["files"], 3);
    assert_eq!(v["summary"]["symbols_by_kind"]["method"], 2);
    let human = stdout(&ken(&["index", "status"], repo.path()));
    assert!(
        human.contains("working tree: 1 changed, 1 added, 1 removed since the build"),
        "{human}"
    );
    // A stale answer says so (answers check indexed files only: the edit and the deletion).
    let sym = ken(&["symbol", "get"], repo.path());
    assert!(
        stderr(&sym).contains("2 files changed since the build"),
        "{}",
        stderr(&sym)
    );
}

#[test]
fn commands_find_the_index_from_a_subfolder_and_fail_clearly_without_one() {
    let repo = indexed();
    let out = ken(&["symbol", "request"], &repo.path().join("src/requests"));
    assert!(out.status.success(), "{}", stderr(&out));
    let empty = tempfile::tempdir().unwrap();
    let out = ken(&["index", "status"], empty.path());
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no index found at"), "{}", stderr(&out));
    let out = ken(&["index", "build", "does/not/exist"], empty.path());
    assert!(
        stderr(&out).contains("cannot index does/not/exist"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn build_json_report_has_stats_and_summary() {
    let repo = materialize(REPO);
    let out = ken(&["index", "build", ".", "--json", "-j", "2"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["manifest"]["stats"]["parsed"], 3);
    assert_eq!(v["manifest"]["stats"]["threads"], 2);
    assert_eq!(v["manifest"]["summary"]["files"], 3);
    assert_eq!(v["manifest"]["format"], "kenning-index");
    assert!(
        repo.path().join(".kenning/.gitignore").exists(),
        "the index ignores itself"
    );
}
