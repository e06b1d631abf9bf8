//! `ken search`: ranking, query syntax, line search against a naive oracle, and the lexical
//! index following incremental builds.

mod support;

use serde_json::Value;
use support::{ken, materialize, stderr, stdout};

const REPO: &str = r#"
//- requests/__init__.py
from .models import Request
//- requests/models.py
class RequestHooksMixin:
    def register_hook(self, event, hook):
        """Properly register a hook."""
        if isinstance(hook, list):
            self.hooks[event].extend(hook)
        else:
            self.hooks[event].append(hook)

class Request(RequestHooksMixin):
    def __init__(self, hooks=None):
        for (k, v) in list(hooks.items()):
            self.register_hook(event=k, hook=v)
//- requests/sessions.py
class Session:
    def send(self, request, timeout=None):
        """Send a given PreparedRequest."""
        raise ConnectionError("connection aborted by peer")
//- src/atomic.rs
/// Writes a file atomically.
pub fn write_atomic(path: &str) -> std::io::Result<()> {
    let tmp = format!("{path}.tmp");
    std::fs::rename(tmp, path)
}
pub enum Op { Write, Read }
//- tests/test_models.py
from requests.models import Request
def test_register_hook():
    Request().register_hook("response", print)
"#;

fn indexed(spec: &str) -> tempfile::TempDir {
    let repo = materialize(spec);
    let out = ken(&["index", "build", "."], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    repo
}

fn search_json(repo: &std::path::Path, args: &[&str]) -> Value {
    let mut all = vec!["search", "--lexical", "--json"];
    all.extend_from_slice(args);
    let out = ken(&all, repo);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn first(v: &Value) -> (&str, &str) {
    let h = &v["hits"][0];
    (
        h["path"].as_str().unwrap(),
        h["qualified_name"].as_str().unwrap_or("file"),
    )
}

#[test]
fn an_identifier_finds_its_definition_first() {
    let repo = indexed(REPO);
    let v = search_json(repo.path(), &["register_hook"]);
    assert_eq!(
        first(&v),
        (
            "requests/models.py",
            "requests.models.RequestHooksMixin.register_hook"
        )
    );
    let h = &v["hits"][0];
    assert_eq!(h["line"], 2);
    assert_eq!(h["kind"], "method");
    assert!(
        h["snippet"]["text"]
            .as_str()
            .unwrap()
            .contains("**register_hook**"),
        "{h}"
    );
    let v = search_json(repo.path(), &["write", "atomic"]);
    assert_eq!(first(&v), ("src/atomic.rs", "crate::atomic::write_atomic"));
}

#[test]
fn filters_restrict_and_exclude() {
    let repo = indexed(REPO);
    let v = search_json(repo.path(), &["register_hook", "-path:tests/", "kind:method"]);
    for h in v["hits"].as_array().unwrap() {
        assert!(!h["path"].as_str().unwrap().starts_with("tests/"));
        assert_eq!(h["kind"], "method");
    }
    let v = search_json(repo.path(), &["lang:rust", "write"]);
    assert!(
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["language"] == "rust")
    );
    let v = search_json(repo.path(), &["path:tests/*.py", "register"]);
    assert!(
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["path"] == "tests/test_models.py")
    );
}

#[test]
fn phrases_must_match_in_order() {
    let repo = indexed(REPO);
    let v = search_json(repo.path(), &["\"connection aborted\""]);
    assert_eq!(v["hits"][0]["path"], "requests/sessions.py");
    let out = ken(&["search", "--lexical", "\"aborted connection\""], repo.path());
    assert_eq!(
        out.status.code(),
        Some(1),
        "the reversed phrase is nowhere: {}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("no match (5 files indexed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_whole_issue_text_ranks_the_right_file() {
    let repo = indexed(REPO);
    let issue = "Allow lists in the dict values of the hooks argument\n\nCurrently the Request class has a \
                 .register_hook() method but it parses the dictionary it expects from it's hooks argument \
                 weirdly: the argument can only specify one hook function per hook. If you pass in a list \
                 of hook functions per hook the code in Request.__init__() will wrap the list in a list \
                 which then fails when the hooks are consumed (since a list is not callable).";
    let f = repo.path().join("issue.txt");
    std::fs::write(&f, issue).unwrap();
    let v = search_json(repo.path(), &["--files", "--query-file", f.to_str().unwrap()]);
    assert_eq!(v["files"][0]["path"], "requests/models.py", "{v}");
    let terms = v["terms"].as_array().unwrap();
    assert!(
        terms.len() <= 32 && terms.iter().any(|t| t == "register_hook"),
        "{terms:?}"
    );
}

/// The line search must return exactly what a naive scan of the indexed files returns.
#[test]
fn literal_and_regex_modes_agree_with_a_naive_scan() {
    let repo = indexed(REPO);
    for literal in ["hook", "self.hooks[event]", "def ", "(", "Request"] {
        let v = search_json(repo.path(), &["--literal", literal]);
        let got: Vec<(String, u64)> = v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["path"].as_str().unwrap().to_string(),
                    m["line"].as_u64().unwrap(),
                )
            })
            .collect();
        let mut expected = Vec::new();
        let mut files: Vec<_> = [
            "requests/__init__.py",
            "requests/models.py",
            "requests/sessions.py",
            "src/atomic.rs",
            "tests/test_models.py",
        ]
        .to_vec();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(repo.path().join(f)).unwrap();
            for (i, l) in text.lines().enumerate() {
                if l.contains(literal) {
                    expected.push((f.to_string(), i as u64 + 1));
                }
            }
        }
        assert_eq!(got, expected, "literal {literal:?}");
    }
    let v = search_json(repo.path(), &["--regex", r"def \w+_hook"]);
    assert_eq!(v["matches"].as_array().unwrap().len(), 2);
    let v = search_json(repo.path(), &["--literal", "-i", "REQUEST().register"]);
    assert_eq!(v["matches"][0]["path"], "tests/test_models.py");
    let v = search_json(repo.path(), &["--literal", "self.hooks[event].append(hook)"]);
    assert!(
        v["files_skipped_by_index"].as_u64().unwrap() >= 3,
        "the index narrows the scan: {v}"
    );
    let bad = ken(&["search", "--regex", "("], repo.path());
    assert!(stderr(&bad).contains("invalid regex \"(\""), "{}", stderr(&bad));
}

#[test]
fn search_follows_incremental_builds() {
    let repo = indexed(REPO);
    std::fs::write(
        repo.path().join("requests/sessions.py"),
        "def mount_adapter(prefix):\n    pass\n",
    )
    .unwrap();
    std::fs::remove_file(repo.path().join("src/atomic.rs")).unwrap();
    let out = ken(&["index", "build", "."], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v = search_json(repo.path(), &["mount_adapter"]);
    assert_eq!(
        first(&v),
        ("requests/sessions.py", "requests.sessions.mount_adapter")
    );
    for gone in ["write_atomic", "\"connection aborted\""] {
        let out = ken(&["search", "--lexical", gone], repo.path());
        assert_eq!(
            out.status.code(),
            Some(1),
            "{gone} should be gone: {}",
            stdout(&out)
        );
    }
    // The previous generation's lexical files were not touched: it still finds what was removed.
    let old =
        kenning::lexical::LexicalIndex::open(&repo.path().join(".kenning/gen-00000001/lexical")).unwrap();
    let hits = old
        .search(
            &kenning::lexical::LexicalQuery::parse("write_atomic"),
            &Default::default(),
        )
        .unwrap()
        .hits;
    assert_eq!(hits.first().map(|h| h.path.as_str()), Some("src/atomic.rs"));
}

/// Docs and config are read as text: sections in the lexical index, marked `kind:doc` and
/// `kind:config`, out of code answers unless asked, named in a note when a document answers
/// better than any code, and counted apart in the coverage.
#[test]
fn docs_and_config_are_searched_when_asked_and_named_when_they_answer_best() {
    let spec = format!(
        "{REPO}//- README.md\nIntro to requests.\n\n# Retry policy\n\nFailed connections are retried with exponential backoff, \
         three attempts, jitter between attempts.\n\n# License\n\nApache.\n//- deploy/app.yaml\nretry:\n  attempts: 3\n  backoff: exponential\n//- logo.png\nPNG\n"
    );
    let dir = indexed(&spec);
    let files = |v: &Value| -> Vec<String> {
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect()
    };
    // A code query: no doc or config among the files.
    let v = search_json(dir.path(), &["register a hook", "--files"]);
    assert!(
        files(&v).iter().all(|p| p.ends_with(".py") || p.ends_with(".rs")),
        "{v}"
    );
    // Asked for: the README's section, by its heading's lines.
    let v = search_json(dir.path(), &["kind:doc exponential backoff retried"]);
    let hits = v["hits"].as_array().unwrap();
    let section = hits
        .iter()
        .find(|h| h["path"] == "README.md" && h["kind"] == "doc")
        .expect("README section");
    assert_eq!(
        (section["line"].as_u64(), section["end_line"].as_u64()),
        (Some(3), Some(6)),
        "{v}"
    );
    assert!(hits.iter().all(|h| h["kind"] == "doc"), "{v}");
    let v = search_json(dir.path(), &["kind:config backoff attempts", "--files"]);
    assert_eq!(files(&v), ["deploy/app.yaml"], "{v}");
    // Not asked for, but a document answers better than any code: a note says so.
    let v = search_json(
        dir.path(),
        &["connection attempts exponential backoff jitter", "--files"],
    );
    assert_eq!(files(&v), ["requests/sessions.py"], "{v}");
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("a document matches this better than any code: README.md:3-6")),
        "{notes:?}"
    );
    // Coverage: code by language, text by format, the rest by extension.
    let c = &v["coverage"];
    assert_eq!(c["languages"]["python"], 4, "{c}");
    assert_eq!(c["read_as_text"]["markdown"], 1, "{c}");
    assert_eq!(c["read_as_text"]["yaml"], 1, "{c}");
    assert_eq!(c["not_read"]["png"], 1, "{c}");
}
