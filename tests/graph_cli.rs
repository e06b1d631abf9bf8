//! The graph commands end to end: `ken callers`, `callees`, `refs`, `deps`, `graph stats`,
//! their addressing (qualified name, `path:line`, ambiguous plain names), JSON and exit codes.

mod support;

use support::{ken, materialize, stderr, stdout};

const REPO: &str = r#"
//- src/requests/__init__.py
from .api import get
//- src/requests/api.py
from .sessions import Session

def get(url, params=None):
    """Sends a GET request."""
    return request("get", url, params=params)

def request(method, url, **kwargs):
    with Session() as session:
        return session.request(method, url, **kwargs)
//- src/requests/sessions.py
class Session:
    def request(self, method, url):
        return self.send(method)

    def send(self, r):
        return r

    def __enter__(self):
        return self
//- tests/test_api.py
import requests

def test_get():
    requests.get("http://x")
"#;

fn indexed() -> tempfile::TempDir {
    let repo = materialize(REPO);
    let out = ken(&["index", "build", "."], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    repo
}

#[test]
fn callers_follow_resolved_calls_to_a_depth() {
    let repo = indexed();
    let out = ken(&["callers", "Session.send", "--depth", "4"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!("callers_depth_4", stdout(&out));
}

#[test]
fn callees_and_refs_and_deps() {
    let repo = indexed();
    let callees = ken(&["callees", "requests.api.request"], repo.path());
    insta::assert_snapshot!("callees_request", stdout(&callees));
    let refs = ken(&["refs", "src/requests/sessions.py:1"], repo.path());
    insta::assert_snapshot!("refs_session", stdout(&refs));
    let deps = ken(&["deps", "src/requests/api.py"], repo.path());
    insta::assert_snapshot!("deps_api", stdout(&deps));
}

#[test]
fn json_output_carries_edges_provenance_and_coverage() {
    let repo = indexed();
    let out = ken(&["callers", "requests.api.get", "--json"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["status"], "ok");
    assert_eq!(v["target"]["qualified"], "requests.api.get");
    let callers = v["reached"].as_array().unwrap();
    assert_eq!(callers.len(), 1, "{v}");
    assert_eq!(callers[0]["symbol"]["qualified"], "test_api.test_get");
    assert_eq!(callers[0]["sites"][0]["provenance"], "import");
    assert_eq!(callers[0]["sites"][0]["line"], 4);
    assert_eq!(v["coverage"]["files_indexed"], 4);

    let stats = ken(&["graph", "stats", "--json"], repo.path());
    let s: serde_json::Value = serde_json::from_str(&stdout(&stats)).unwrap();
    assert_eq!(s["stats"]["files"], 4);
    assert!(s["stats"]["edges_by_kind"]["calls"].as_u64().unwrap() >= 5, "{s}");
    assert!(
        s["stats"]["references_by_language"]["python"]["references"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn ambiguous_names_list_candidates_and_exit_2() {
    let repo = indexed();
    let out = ken(&["callers", "request"], repo.path());
    assert_eq!(out.status.code(), Some(2));
    let text = stdout(&out);
    assert!(
        text.contains("requests.api.request  src/requests/api.py:7"),
        "{text}"
    );
    assert!(
        text.contains("requests.sessions.Session.request  src/requests/sessions.py:2"),
        "{text}"
    );
    let json = ken(&["refs", "request", "--json"], repo.path());
    assert_eq!(json.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(v["status"], "ambiguous");
    assert_eq!(v["candidates"].as_array().unwrap().len(), 2);
}

#[test]
fn bad_input_gets_clear_errors() {
    let repo = indexed();
    let missing = ken(&["callers", "nothing_here"], repo.path());
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("no definition matches \"nothing_here\""),
        "{}",
        stderr(&missing)
    );
    let depth = ken(&["callees", "get", "--depth", "0"], repo.path());
    assert!(!depth.status.success());
    assert!(
        stderr(&depth).contains("--depth: must be between 1 and 10"),
        "{}",
        stderr(&depth)
    );
    let file = ken(&["deps", "no/such.py"], repo.path());
    assert!(!file.status.success());
    assert!(
        stderr(&file).contains("no/such.py is not an indexed file"),
        "{}",
        stderr(&file)
    );
}

#[test]
fn typescript_private_members_are_indexed_and_their_calls_resolve() {
    let repo = support::materialize(
        "//- src/client.ts\nexport class Client {\n  #retries = 3;\n  #send(url: string): string {\n    return url;\n  }\n  get(url: string): string {\n    return this.#send(url);\n  }\n}\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let out = ken(&["symbol", "#send", "--json"], repo.path());
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["hits"][0]["kind"], "method", "{v}");
    assert!(
        v["hits"][0]["qualified_name"]
            .as_str()
            .unwrap()
            .ends_with("Client.#send"),
        "{v}"
    );
    let out = ken(&["symbol", "#retries", "--json"], repo.path());
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["hits"][0]["kind"], "field", "{v}");
    let q = ken(&["callers", "Client.#send", "--json"], repo.path());
    let v: serde_json::Value = serde_json::from_str(&stdout(&q)).unwrap();
    let names: Vec<&str> = v["reached"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["symbol"]["name"].as_str())
        .collect();
    assert_eq!(names, ["get"], "{v}");
}

#[test]
fn commonjs_members_and_this_calls_resolve_to_their_object() {
    let repo = support::materialize(
        "//- lib/response.js\nvar res = Object.create(null);\nmodule.exports = res;\n\
res.status = function status(code) {\n  this.statusCode = code;\n  return this;\n};\n\
res.send = function send(body) {\n  this.status(200);\n  return body;\n};\n\
res.json = function json(obj) {\n  return this.send(JSON.stringify(obj));\n};\n\
exports.helper = function () { return res.send('x'); };\n\
//- lib/router.js\nfunction Router() {}\nRouter.prototype.handle = function handle(req) {\n  return this.route(req);\n};\n\
Router.prototype.route = function route(req) { return req; };\nmodule.exports = Router;\n\
//- lib/other.js\nfunction send(x) { return x; }\nfunction route() { return 0; }\nmodule.exports = { send, route };\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let callers = |q: &str| callers_of(repo.path(), q);
    // `this.send(..)` in `res.json` and `res.send(..)` in the same file are the object's
    // member, by rule, not the other file's `send`.
    let send = callers("res.send");
    assert_eq!(
        send,
        [
            ("lib/response.helper".to_string(), "scope".to_string()),
            ("lib/response.res.json".to_string(), "receiver".to_string())
        ],
        "{send:?}"
    );
    assert_eq!(
        callers("Router.route"),
        [("lib/router.Router.handle".to_string(), "receiver".to_string())]
    );
    assert!(callers("lib/other.send").is_empty());
    assert!(callers("lib/other.route").is_empty());
}

#[test]
fn go_recursive_calls_through_receiver_chains_resolve() {
    let repo = support::materialize(
        "//- go.mod\nmodule example.com/tree\n\ngo 1.19\n//- tree.go\npackage tree\n\ntype Node struct {\n\tchildren []*Node\n\tparent   *Node\n\tcfg      *Config\n}\n\ntype Config struct{ name string }\n\nfunc (c *Config) Name() string { return c.name }\n\nfunc (n *Node) Walk(f func(*Node)) {\n\tf(n)\n\tfor _, c := range n.children {\n\t\tc.Walk(f)\n\t}\n}\n\nfunc (n *Node) Root() *Node {\n\tif n.parent == nil {\n\t\treturn n\n\t}\n\treturn n.parent.Root()\n}\n\nfunc (n *Node) Parent() *Node { return n.parent }\n\nfunc (n *Node) Top() *Node {\n\treturn n.Parent().Top()\n}\n\nfunc (n *Node) ConfigName() string {\n\treturn n.cfg.Name()\n}\n\nfunc (n *Node) Depth() int {\n\td := 0\n\tfor p := n.parent; p != nil; p = p.parent {\n\t\td++\n\t}\n\treturn d + n.Root().Depth()\n}\n//- other.go\npackage tree\n\ntype Other struct{}\n\nfunc (o *Other) Walk(f func(*Node)) {}\nfunc (o *Other) Root() *Node { return nil }\nfunc (o *Other) Top() *Node { return nil }\nfunc (o *Other) Name() string { return \"\" }\nfunc (o *Other) Depth() int { return 0 }\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let callees = |q: &str| callees_of(repo.path(), q);
    let t = |s: &str, p: &str| (format!("example.com/tree.{s}"), p.to_string());
    // Over a range of a slice field, a field of the receiver, a method's result.
    assert_eq!(callees("Node.Walk"), [t("Node.Walk", "receiver")]);
    assert_eq!(callees("Node.Root"), [t("Node.Root", "receiver")]);
    assert_eq!(
        callees("Node.Top"),
        [t("Node.Parent", "receiver"), t("Node.Top", "receiver")]
    );
    assert_eq!(
        callees("Node.Depth"),
        [t("Node.Depth", "receiver"), t("Node.Root", "receiver")]
    );
}

/// Callees of `q` as (qualified name, provenance of the first site), sorted.
fn callees_of(repo: &std::path::Path, q: &str) -> Vec<(String, String)> {
    calls_of(repo, "callees", q)
}

fn callers_of(repo: &std::path::Path, q: &str) -> Vec<(String, String)> {
    calls_of(repo, "callers", q)
}

fn calls_of(repo: &std::path::Path, direction: &str, q: &str) -> Vec<(String, String)> {
    let out = ken(&[direction, q, "--json"], repo);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let mut r: Vec<(String, String)> = v["reached"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["symbol"]["qualified"].as_str().unwrap().to_string(),
                r["sites"][0]["provenance"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    r.sort();
    r
}

#[test]
fn javascript_call_chains_follow_jsdoc_result_types_through_the_package_root() {
    let repo = support::materialize(
        "//- lib/command.js\nimport { Option } from './option.js';\nexport class Command {\n\
  /**\n   * Adds an option.\n   * @return {Command} `this` for chaining\n   */\n\n  option(flags) { return this; }\n\
  /** @returns {Option} */\n  createOption(flags) { return new Option(flags); }\n  opts() { return {}; }\n}\n\
//- lib/option.js\nexport class Option {\n  mandatory() { return this; }\n  opts() { return 1; }\n}\n\
//- index.js\nexport { Command } from './lib/command.js';\n\
//- tests/helpers.js\nimport { Command } from '../index.js';\n/**\n * @returns Command\n */\nexport function makeProgram() {\n  return new Command();\n}\n\
//- tests/chain.test.js\nimport * as commander from '../index.js';\nimport { makeProgram } from './helpers.js';\n\
function chained() {\n  const program = new commander.Command();\n  program\n    .option('-a')\n    .option('-b')\n    .opts();\n}\n\
function helper() {\n  makeProgram().createOption('-c').mandatory();\n}\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let r = |s: &str| (s.to_string(), "receiver".to_string());
    assert_eq!(
        callees_of(repo.path(), "chained"),
        [
            ("lib/command.Command".to_string(), "import".to_string()),
            r("lib/command.Command.option"),
            r("lib/command.Command.opts")
        ]
    );
    let got = callees_of(repo.path(), "helper");
    assert!(got.contains(&r("lib/command.Command.createOption")), "{got:?}");
    assert!(got.contains(&r("lib/option.Option.mandatory")), "{got:?}");
}

#[test]
fn java_call_chains_follow_return_types_and_casts() {
    let repo = support::materialize(
        "//- src/main/java/org/x/Node.java\npackage org.x;\n\npublic class Node {\n    public Element parent() { return null; }\n    public String text() { return \"\"; }\n}\n\
//- src/main/java/org/x/Element.java\npackage org.x;\n\npublic class Element extends Node {\n    public Element head() { return this; }\n    public String html() { return \"\"; }\n}\n\
//- src/main/java/org/x/Other.java\npackage org.x;\n\npublic class Other {\n    public String html() { return \"\"; }\n    public Other head() { return this; }\n}\n\
//- src/main/java/org/x/Use.java\npackage org.x;\n\npublic class Use {\n    String chain(Node n) {\n        return n.parent().head().html();\n    }\n    String cast(Object o) {\n        return ((Element) o).html();\n    }\n    String fresh() {\n        return new Element().head().text();\n    }\n}\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let r = |s: &str| (format!("org.x.{s}"), "receiver".to_string());
    assert_eq!(
        callees_of(repo.path(), "Use.chain"),
        [r("Element.head"), r("Element.html"), r("Node.parent")]
    );
    assert_eq!(callees_of(repo.path(), "Use.cast"), [r("Element.html")]);
    let fresh = callees_of(repo.path(), "Use.fresh");
    assert!(
        fresh.contains(&r("Element.head")) && fresh.contains(&r("Node.text")),
        "{fresh:?}"
    );
}

#[test]
fn bare_imports_naming_the_repository_resolve_through_package_exports_and_tsconfig_paths() {
    let repo = support::materialize(
        "//- .gitignore\npackage.json\n\
//- package.json\n{\"name\": \"shop\", \"main\": \"./dist/index.js\", \"exports\": {\".\": {\"source\": \"./src/index.ts\", \"import\": \"./dist/index.js\"}, \"./util\": {\"source\": \"./src/util.ts\"}}}\n\
//- tsconfig.json\n{\n  // the tests import by alias\n  \"compilerOptions\": {\"baseUrl\": \".\", \"paths\": {\"@app/*\": [\"src/*\"],},},\n}\n\
//- src/index.ts\nexport function total(xs: number[]): number { return xs.length; }\n\
//- src/util.ts\nexport function round(x: number): number { return x; }\n\
//- src/cart.ts\nexport function cart(): number { return 1; }\n\
//- test/all.test.ts\nimport { total } from 'shop';\nimport { round } from 'shop/util';\nimport { cart } from '@app/cart';\nimport { expect } from 'vitest';\n\
export function check() {\n  return total([round(1), cart()]);\n}\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let out = ken(&["deps", "test/all.test.ts"], repo.path());
    let text = stdout(&out);
    for (import, target) in [
        ("shop ", "src/index.ts"),
        ("shop/util", "src/util.ts"),
        ("@app/cart", "src/cart.ts"),
    ] {
        assert!(
            text.lines()
                .any(|l| l.contains(import) && l.contains(&format!("-> {target}"))),
            "{import} -> {target}:\n{text}"
        );
    }
    assert!(
        text.lines()
            .any(|l| l.contains("vitest") && l.contains("external")),
        "{text}"
    );
    let r = |s: &str| (s.to_string(), "import".to_string());
    assert_eq!(
        callees_of(repo.path(), "check"),
        [r("src.total"), r("src/cart.cart"), r("src/util.round")]
    );
}

#[test]
fn rust_suites_reach_their_shared_test_modules() {
    let repo = support::materialize(
        "//- Cargo.toml\n[package]\nname = \"tool\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
//- src/lib.rs\npub fn run() {}\n\
//- tests/common/mod.rs\npub struct Env;\n\nimpl Env {\n    pub fn new() -> Env {\n        Env\n    }\n\n    pub fn run(&self) {}\n}\n\
//- tests/cli.rs\nmod common;\n\nuse crate::common::Env;\n\n#[test]\nfn runs() {\n    let env = Env::new();\n    env.run();\n}\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    assert_eq!(
        callees_of(repo.path(), "cli::runs"),
        [
            ("common::Env::new".to_string(), "import".to_string()),
            ("common::Env::run".to_string(), "receiver".to_string())
        ]
    );
}

#[test]
fn typescript_members_come_through_generic_interface_bases() {
    let repo = support::materialize(
        "//- a.ts\nexport interface ZodType<O = unknown> {\n  parse(data: unknown): O;\n}\n\
export interface _ZodString<T> extends ZodType<T> {\n  min(n: number): this;\n}\n\
export interface ZodString extends _ZodString<string> {}\nexport function string(): ZodString { return null as any; }\n\
//- c.ts\nexport class Other {\n  parse(x: unknown) { return x; }\n  min() { return this; }\n}\n\
//- b.ts\nimport * as z from './a.js';\nexport function use() {\n  const s = z.string();\n  s.parse(1);\n  return z.string().min(2).parse(3);\n}\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let r = |s: &str| (s.to_string(), "receiver".to_string());
    let got = callees_of(repo.path(), "b.use");
    assert!(
        got.contains(&r("a.ZodType.parse")) && got.contains(&r("a._ZodString.min")),
        "{got:?}"
    );
    assert!(!got.iter().any(|(q, _)| q.starts_with("c.")), "{got:?}");
}

#[test]
fn cpp_classes_behind_export_macros_are_indexed() {
    let repo = support::materialize(
        "//- include/api.h\n#define YAML_API\nnamespace YAML {\nclass YAML_API Node : public Base {\n public:\n  int size() const;\n};\nstruct YAML_API Mark {\n  int line;\n};\n}\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    for (q, kind) in [("Node", "class"), ("Mark", "struct")] {
        let out = ken(&["symbol", q, "--json"], repo.path());
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let hit = &v["hits"][0];
        assert_eq!(hit["name"], q, "{v}");
        assert_eq!(hit["kind"], kind, "{v}");
    }
}

#[test]
fn cpp_out_of_line_members_see_their_class_and_declarations_pair_with_definitions() {
    let repo = support::materialize(
        "//- include/emitter.h\nnamespace YAML {\nclass State {\n public:\n  int depth() const;\n};\nclass Emitter {\n public:\n  void write();\n  void flush();\n private:\n  State* m_state;\n};\n}\n\
//- src/state.cpp\n#include \"emitter.h\"\nnamespace YAML {\nint State::depth() const { return 0; }\n}\n\
//- src/emitter.cpp\n#include \"emitter.h\"\nnamespace YAML {\nvoid Emitter::flush() {}\nvoid Emitter::write() {\n  flush();\n  m_state->depth();\n}\n}\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let got = callees_of(repo.path(), "src/emitter.cpp:4");
    // `flush()` is the class's member, by scope; `m_state->depth()` through the field's type.
    assert!(
        got.contains(&("YAML::Emitter::flush".to_string(), "scope".to_string())),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|(q, p)| q == "YAML::State::depth" && p != "name-ambiguous"),
        "{got:?}"
    );
}

/// `ken refs` lists every use, not only calls: a constant read as a default argument, a
/// namespace member passed on by `export * as`, the import lines; never a string, a comment,
/// another object's member of the same name, a keyword label or a shadowing parameter.
#[test]
fn refs_list_reads_member_accesses_and_imports_not_lookalikes() {
    let repo = support::materialize(
        "//- pkg/__init__.py\n//- pkg/config.py\nDEFAULT_TIMEOUT = 5.0\n\
//- pkg/client.py\nfrom pkg.config import DEFAULT_TIMEOUT\n\n\ndef get(url, timeout=DEFAULT_TIMEOUT):\n    # DEFAULT_TIMEOUT is used when none is given\n    label = \"DEFAULT_TIMEOUT\"\n    return other.DEFAULT_TIMEOUT, timeout\n\n\ndef put(url, DEFAULT_TIMEOUT=1):\n    return DEFAULT_TIMEOUT\n\n\ndef post(url):\n    return send(url, DEFAULT_TIMEOUT=2, t=DEFAULT_TIMEOUT)\n\
//- core/regexes.ts\nexport const email: RegExp = /@/;\n\
//- core/index.ts\nexport * as regexes from \"./regexes\";\n\
//- app.ts\nimport * as core from \"./core/index\";\n\nexport function check(s: string): boolean {\n  return core.regexes.email.test(s) && other.email;\n}\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let lines = |q: &str| -> Vec<(String, u64, String)> {
        let out = ken(&["refs", q, "--json"], repo.path());
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let mut found: Vec<(String, u64, String)> = v["refs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["site"]["path"].as_str().unwrap().to_string(),
                    r["site"]["line"].as_u64().unwrap(),
                    r["site"]["kind"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        found.sort();
        found
    };
    let u = |p: &str, l: u64| (p.to_string(), l, "uses".to_string());
    // The import, the default argument and the keyword argument's value; not the comment,
    // the string, `other.DEFAULT_TIMEOUT`, `put`'s parameter or the keyword's label.
    assert_eq!(
        lines("pkg.config.DEFAULT_TIMEOUT"),
        [
            u("pkg/client.py", 1),
            u("pkg/client.py", 4),
            u("pkg/client.py", 15)
        ]
    );
    // Through `export * as regexes`, two files away; not `other.email`.
    assert_eq!(lines("core/regexes.email"), [u("app.ts", 4)]);
}
