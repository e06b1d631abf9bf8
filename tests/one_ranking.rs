//! One ranking for `ken search` and `ken context` (`search::SearchRanker`): the same files in
//! the same order for the same query, the learned model shipped and used, the fused ranking
//! one flag away, modules answered by their entry files, and an identifier found only in a
//! design note named with where it is.

mod support;

use serde_json::Value;
use support::{ken, materialize, stderr, stdout};

const REPO: &str = r#"
//- router/__init__.py
"""The router: matches a request's path to a handler through the middleware stack."""
from .stack import MiddlewareStack
from .routes import Route
//- router/stack.py
class MiddlewareStack:
    """Composes middleware around a handler, outermost first."""
    def compose(self, handler):
        for layer in reversed(self.layers):
            handler = layer.wrap(handler)
        return handler
//- router/routes.py
class Route:
    """A path pattern and the handler it dispatches to."""
    def matches(self, path):
        return self.pattern.fullmatch(path) is not None
//- router/params.py
def parse_params(route, path):
    """Extracts the path parameters of a matched route."""
    return route.pattern.fullmatch(path).groupdict()
//- server/http.py
def serve_forever(app, port):
    """Accepts connections and hands each request to the router."""
    while True:
        conn = accept(port)
        app.handle(conn.read_request())
//- server/tls.py
def wrap_socket(sock, cert):
    """Wraps a socket in TLS with the given certificate."""
    return ssl_wrap(sock, cert)
//- cache/lru.py
class LruCache:
    """Keeps the most recently used entries and evicts the oldest."""
    def evict_oldest(self):
        self.entries.pop(0)
//- docs/design.md
# Shard placement

The ShardRebalancer moves replicas off a node before it drains; it is planned, not written.

The LruCache keeps the hot replicas; see the LruCache notes below. LruCache, LruCache, LruCache.
//- tests/test_router.py
from router.stack import MiddlewareStack
def test_compose_order():
    MiddlewareStack().compose(print)
"#;

fn indexed() -> tempfile::TempDir {
    let repo = materialize(REPO);
    let out = ken(&["index", "build", "."], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    repo
}

fn json(repo: &std::path::Path, args: &[&str]) -> Value {
    let out = ken(args, repo);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn paths(v: &Value) -> Vec<String> {
    v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn search_and_context_rank_the_same_files_in_the_same_order() {
    let dir = indexed();
    for q in [
        "how does the router compose middleware",
        "MiddlewareStack",
        "evict the least recently used entry",
        "Requests hang when TLS is on\n\nAfter wrapping the socket with a certificate the server \
         stops accepting connections; serve_forever never returns a response.",
    ] {
        let s = json(dir.path(), &["search", "--json", "--limit", "10", "--", q]);
        let c = json(
            dir.path(),
            &["context", "--format", "json", "--files", "10", "--", q],
        );
        assert_eq!(s["ranker"], "learned", "{q}: {s}");
        assert_eq!(c["ranker"], "learned", "{q}: {c}");
        assert!(!paths(&s).is_empty(), "{q}: {s}");
        assert_eq!(paths(&s), paths(&c), "{q}");
    }
}

#[test]
fn the_fused_ranking_is_one_flag_away_and_a_bad_ranker_is_named() {
    let dir = indexed();
    let v = json(
        dir.path(),
        &["search", "--json", "--ranker", "fused", "compose middleware"],
    );
    assert_eq!(v["ranker"], "fused", "{v}");
    assert!(v["rrf_k"].is_number(), "{v}");
    assert!(paths(&v).contains(&"router/stack.py".to_string()), "{v}");
    let out = ken(&["search", "--ranker", "best", "compose middleware"], dir.path());
    assert!(!out.status.success());
    assert!(stderr(&out).contains("ranker"), "{}", stderr(&out));
    let out = ken(
        &["search", "--lexical", "--ranker", "fused", "compose middleware"],
        dir.path(),
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("needs mode hybrid"), "{}", stderr(&out));
}

#[test]
fn an_identifier_defined_in_code_puts_its_definition_first() {
    let dir = indexed();
    let v = json(dir.path(), &["search", "--json", "MiddlewareStack"]);
    assert_eq!(paths(&v)[0], "router/stack.py", "{v}");
    assert_eq!(v["files"][0]["defines_query"], true, "{v}");
    assert_eq!(v["files"][0]["chunks"][0]["by"], "definition", "{v}");
}

#[test]
fn a_question_about_a_module_brings_its_entry_file() {
    let dir = indexed();
    let v = json(
        dir.path(),
        &[
            "context",
            "--format",
            "json",
            "--files",
            "10",
            "how is the router's middleware composed around a route's handler",
        ],
    );
    let files = v["files"].as_array().unwrap();
    let entry = files
        .iter()
        .find(|f| f["path"] == "router/__init__.py")
        .unwrap_or_else(|| panic!("no entry file: {v}"));
    assert!(
        v["signals"]["used"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "modules"),
        "{v}"
    );
    assert_eq!(entry["why"]["module_entry"], true, "{v}");
    // The tests not asked for come after every source file.
    let p = paths(&v);
    if let Some(t) = p.iter().position(|p| p.starts_with("tests/")) {
        assert!(p[t..].iter().all(|p| p.starts_with("tests/")), "{p:?}");
    }
}

#[test]
fn an_identifier_only_in_a_design_note_is_named_with_where_it_is() {
    let dir = indexed();
    let v = json(dir.path(), &["search", "--json", "ShardRebalancer"]);
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("`ShardRebalancer` occurs only in docs or config")
                && n.contains("docs/design.md:3")),
        "{notes:?}"
    );
    assert_eq!(paths(&v)[0], "docs/design.md", "{v}");
    assert_eq!(v["files"][0]["lines"], serde_json::json!([3, 3]), "{v}");
    let c = json(dir.path(), &["context", "--format", "json", "ShardRebalancer"]);
    assert!(
        c["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("docs/design.md:3")),
        "{c}"
    );
    // An identifier that code holds gets no such note, however often the docs name it.
    let v = json(dir.path(), &["search", "--json", "LruCache"]);
    assert!(!v["notes"].to_string().contains("occurs only in docs"), "{v}");
}
