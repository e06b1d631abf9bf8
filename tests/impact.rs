//! `ken impact` on a small git repository: every input mode (working tree, --staged,
//! --range, --patch, --symbol), change kinds, dependents with their paths, tests to run with
//! commands, and the risk level.

mod support;

use std::path::Path;

use serde_json::Value;
use support::{git, ken, materialize, stderr, stdout};

const REPO: &str = r#"
//- shop/__init__.py
//- shop/pricing.py
def apply_discount(amount, coupon):
    """Takes the coupon's percentage off the amount."""
    if coupon is None:
        return amount
    return amount - amount * coupon.percent / 100


def _round(x):
    return round(x, 2)
//- shop/cart.py
from shop.pricing import apply_discount


class Cart:
    def __init__(self):
        self.items = {}

    def total(self, prices, coupon=None):
        subtotal = sum(prices[s] * q for s, q in self.items.items())
        return apply_discount(subtotal, coupon)
//- shop/checkout.py
from shop.cart import Cart


def checkout(items, prices):
    cart = Cart()
    cart.items = items
    return cart.total(prices)
//- tests/test_cart.py
from shop.cart import Cart


def test_total():
    cart = Cart()
    assert cart.total({}) == 0
//- tests/test_pricing.py
def test_nothing():
    assert True
"#;

fn repo() -> tempfile::TempDir {
    let r = materialize(REPO);
    git(r.path(), &["init", "-q"]);
    git(
        r.path(),
        &["-c", "user.email=t@t", "-c", "user.name=t", "add", "-A"],
    );
    git(
        r.path(),
        &[
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "base",
        ],
    );
    let out = ken(&["index", "build", "."], r.path());
    assert!(out.status.success(), "{}", stderr(&out));
    r
}

fn impact(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["impact", "--json"];
    all.extend_from_slice(args);
    let out = ken(&all, dir);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str::<Value>(&stdout(&out)).unwrap()["impact"].clone()
}

fn edit(dir: &Path, path: &str, from: &str, to: &str) {
    let p = dir.join(path);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(from));
    std::fs::write(p, text.replace(from, to)).unwrap();
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["qualified_name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_signature_change_reaches_callers_transitively_and_their_tests() {
    let r = repo();
    edit(
        r.path(),
        "shop/pricing.py",
        "def apply_discount(amount, coupon):",
        "def apply_discount(amount, coupon, places):",
    );
    let v = impact(r.path(), &[]);
    assert_eq!(v["changed"][0]["qualified_name"], "shop.pricing.apply_discount");
    assert_eq!(v["changed"][0]["change"], "signature");
    assert_eq!(v["changed"][0]["public"], true);
    let affected = names(&v, "affected");
    assert_eq!(affected[0], "shop.cart.Cart.total", "{affected:?}");
    assert!(
        affected.contains(&"shop.checkout.checkout".to_string()),
        "{affected:?}"
    );
    assert!(
        affected.contains(&"test_cart.test_total".to_string()),
        "{affected:?}"
    );
    let checkout = v["affected"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["qualified_name"] == "shop.checkout.checkout")
        .unwrap();
    assert_eq!(checkout["direct"], false);
    let via: Vec<&str> = checkout["via"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["from"].as_str().unwrap())
        .collect();
    assert_eq!(via, ["shop.cart.Cart.total", "shop.checkout.checkout"]);
    let tests: Vec<&str> = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["command"].as_str().unwrap())
        .collect();
    assert_eq!(tests[0], "pytest tests/test_cart.py::test_total", "{tests:?}");
    // Named after the changed file, though nothing in it reaches the change.
    assert!(tests.contains(&"pytest tests/test_pricing.py"), "{tests:?}");
    assert_eq!(v["tests"][1]["found_by"], "naming");
    // The test that reaches the change through the graph must run; the one found by its name
    // is likely.
    assert_eq!(v["tests"][0]["must_run"], true);
    assert_eq!(v["tests"][1]["must_run"], false);
    assert!(
        v["test_commands"][0]
            .as_str()
            .unwrap()
            .starts_with("pytest tests/test_cart.py")
    );
    assert_ne!(v["risk"]["level"], "low", "{}", v["risk"]);
}

#[test]
fn a_private_body_change_is_low_risk_and_reaches_little() {
    let r = repo();
    edit(
        r.path(),
        "shop/pricing.py",
        "return round(x, 2)",
        "return round(x, 3)",
    );
    let v = impact(r.path(), &[]);
    assert_eq!(v["changed"][0]["qualified_name"], "shop.pricing._round");
    assert_eq!(v["changed"][0]["change"], "body");
    assert_eq!(v["changed"][0]["public"], false);
    // No definition depends on it; only modules importing its module, weakly.
    for a in v["affected"].as_array().unwrap() {
        assert!(a["kind"].is_null() && a["score"].as_f64().unwrap() < 0.15, "{a}");
    }
    assert_eq!(v["risk"]["level"], "low", "{}", v["risk"]);
}

#[test]
fn staged_range_patch_and_symbol_inputs() {
    let r = repo();
    edit(
        r.path(),
        "shop/cart.py",
        "    def total(self, prices, coupon=None):",
        "    def total(self, prices, coupon=None, tax=0):",
    );
    // Nothing staged yet.
    let v = impact(r.path(), &["--staged"]);
    assert_eq!(v["changed"].as_array().unwrap().len(), 0);
    git(r.path(), &["add", "shop/cart.py"]);
    let v = impact(r.path(), &["--staged"]);
    assert_eq!(names(&v, "changed"), ["shop.cart.Cart.total"]);
    // A committed range.
    git(
        r.path(),
        &[
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "tax",
        ],
    );
    let v = impact(r.path(), &["--range", "HEAD~1..HEAD"]);
    assert_eq!(names(&v, "changed"), ["shop.cart.Cart.total"]);
    assert!(names(&v, "affected").contains(&"shop.checkout.checkout".to_string()));
    // The same change as a patch file against the indexed tree.
    let patch = git(r.path(), &["diff", "HEAD~1..HEAD"]);
    let pf = r.path().join("change.patch");
    std::fs::write(&pf, patch).unwrap();
    let v = impact(r.path(), &["--patch", pf.to_str().unwrap()]);
    assert_eq!(names(&v, "changed"), ["shop.cart.Cart.total"]);
    assert_eq!(v["changed"][0]["change"], "signature");
    // Symbols directly; an ambiguous or unknown one is an error naming it.
    let v = impact(r.path(), &["--symbol", "apply_discount"]);
    assert_eq!(names(&v, "changed"), ["shop.pricing.apply_discount"]);
    let out = ken(&["impact", "--symbol", "no_such_thing"], r.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--symbol: no_such_thing"),
        "{}",
        stderr(&out)
    );
    let out = ken(
        &[
            "impact",
            "--patch",
            pf.with_extension("missing").to_str().unwrap(),
        ],
        r.path(),
    );
    assert!(stderr(&out).contains("cannot read --patch"), "{}", stderr(&out));
}

#[test]
fn deleting_a_definition_is_a_breaking_change() {
    let r = repo();
    edit(
        r.path(),
        "shop/pricing.py",
        "def _round(x):\n    return round(x, 2)\n",
        "",
    );
    edit(
        r.path(),
        "shop/cart.py",
        "        return apply_discount(subtotal, coupon)",
        "        return subtotal",
    );
    let v = impact(r.path(), &[]);
    let kinds: Vec<(String, String)> = v["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["qualified_name"].as_str().unwrap().into(),
                c["change"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        kinds.contains(&("shop.pricing._round".into(), "deleted".into())),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("shop.cart.Cart.total".into(), "body".into())),
        "{kinds:?}"
    );
}

#[test]
fn javascript_suites_in_a_test_folder_are_found_and_run_with_mocha() {
    let r = support::materialize(
        "//- package.json\n{\"name\": \"shop\", \"scripts\": {\"test\": \"mocha\"}}\n\
//- lib/pricing.js\nfunction applyDiscount(amount, percent) {\n  return amount * (100 - percent) / 100;\n}\nmodule.exports = { applyDiscount };\n\
//- lib/cart.js\nconst { applyDiscount } = require('./pricing');\nfunction total(items, percent) {\n  return applyDiscount(items.reduce((a, b) => a + b, 0), percent);\n}\nmodule.exports = { total };\n\
//- test/cart.js\nconst { total } = require('../lib/cart');\ndescribe('cart', () => {\n  it('applies the discount', () => {\n    if (total([10, 10], 50) !== 10) throw new Error('wrong');\n  });\n});\n\
//- test/support/env.js\nprocess.env.NODE_ENV = 'test';\n",
    );
    assert!(ken(&["index", "build", "."], r.path()).status.success());
    let v = impact(r.path(), &["--symbol", "applyDiscount"]);
    let tests: Vec<&str> = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert!(tests.contains(&"test/cart.js"), "{v}");
    assert!(!tests.contains(&"test/support/env.js"), "{tests:?}");
    let commands: Vec<&str> = v["test_commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        commands
            .iter()
            .any(|c| c.starts_with("npx mocha") && c.contains("test/cart.js")),
        "{commands:?}"
    );
    assert!(!commands.iter().any(|c| c.contains("jest")), "{commands:?}");
}

#[test]
fn tests_tied_in_score_are_ordered_by_evidence_not_by_name() {
    let r = support::materialize(
        "//- shop/__init__.py\n//- shop/pricing.py\ndef apply_discount(amount, percent):\n    return amount * (100 - percent) / 100\n\
//- tests/test_a.py\nfrom shop.pricing import apply_discount\n\n\ndef test_once():\n    assert apply_discount(100, 0) == 100\n\
//- tests/test_z.py\nfrom shop.pricing import apply_discount\n\n\ndef test_twice():\n    def half(x):\n        return apply_discount(x, 50)\n\n    assert apply_discount(100, 0) == 100\n    assert half(100) == 50\n",
    );
    assert!(ken(&["index", "build", "."], r.path()).status.success());
    let v = impact(r.path(), &["--symbol", "apply_discount"]);
    let tests: Vec<(&str, f64)> = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap_or(""), t["score"].as_f64().unwrap()))
        .collect();
    assert_eq!(tests.len(), 2, "{tests:?}");
    assert_eq!(tests[0].1, tests[1].1, "the scores are tied: {tests:?}");
    // test_twice reaches the change twice (directly and through its nested helper).
    assert_eq!(tests[0].0, "test_z.test_twice", "{tests:?}");
    assert_eq!(tests[1].0, "test_a.test_once", "{tests:?}");
}

/// `--approval`: the impact analysis raises an edit's risk. Changing a public function that
/// others call asks a person under `on-request` (and is refused under `never`); a private
/// body change runs; a CI file is protected whatever it reaches.
#[test]
fn the_blast_radius_decides_whether_an_edit_needs_approval() {
    let r = repo();
    let approval = |policy: &str| {
        let out = ken(&["impact", "--json", "--approval", policy], r.path());
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()["approval"].clone()
    };
    edit(
        r.path(),
        "shop/pricing.py",
        "return round(x, 2)",
        "return round(x, 3)",
    );
    let v = approval("on-request");
    assert_eq!(v["decision"], "allow", "{v}");
    assert_eq!(v["class"], "workspace-write");
    assert_eq!(approval("untrusted")["decision"], "ask");
    git(r.path(), &["checkout", "-q", "--", "."]);
    edit(
        r.path(),
        "shop/pricing.py",
        "def apply_discount(amount, coupon):",
        "def apply_discount(amount, coupon, places):",
    );
    let v = approval("on-request");
    assert_eq!(v["decision"], "ask", "{v}");
    assert!(v["reason"].as_str().unwrap().contains("public API"), "{v}");
    assert!(v["reason"].as_str().unwrap().contains("apply_discount"), "{v}");
    assert_eq!(approval("never")["decision"], "deny");
    git(r.path(), &["checkout", "-q", "--", "."]);
    let ci = r.path().join(".github/workflows");
    std::fs::create_dir_all(&ci).unwrap();
    std::fs::write(ci.join("ci.yml"), "on: push\n").unwrap();
    git(r.path(), &["add", "-A"]);
    let out = ken(
        &["impact", "--json", "--staged", "--approval", "on-request"],
        r.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v = serde_json::from_str::<Value>(&stdout(&out)).unwrap()["approval"].clone();
    assert_eq!(v["class"], "protected", "{v}");
    assert_eq!(v["decision"], "ask");
}

/// A test that calls the changed function itself comes first, above tests that only changed
/// together with the file in the past and above tests that reach it through other code; a
/// test file named after the changed definition, in a folder named after its file, is listed
/// though nothing imports it.
#[test]
fn a_test_that_calls_the_change_directly_comes_first() {
    let r = materialize(
        "//- shop/__init__.py\n//- shop/pricing.py\ndef apply_discount(amount, percent):\n    return amount * (100 - percent) / 100\n\
//- shop/cart.py\nfrom shop.pricing import apply_discount\n\n\ndef total(amount):\n    return apply_discount(amount, 0)\n\
//- tests/test_cart.py\nfrom shop.cart import total\n\n\ndef test_total():\n    assert total(10) == 10\n\
//- tests/test_history.py\ndef test_unrelated():\n    assert True\n",
    );
    let commit = |msg: &str| {
        git(r.path(), &["add", "-A"]);
        git(
            r.path(),
            &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", msg],
        );
    };
    git(r.path(), &["init", "-q"]);
    commit("base");
    // Two past commits change pricing.py together with test_history.py.
    for i in 0..2 {
        edit(
            r.path(),
            "shop/pricing.py",
            "/ 100\n",
            &format!("/ 100\n# v{i}\n"),
        );
        let h = r.path().join("tests/test_history.py");
        let text = std::fs::read_to_string(&h).unwrap();
        std::fs::write(&h, format!("{text}# v{i}\n")).unwrap();
        commit(&format!("tweak {i}"));
    }
    std::fs::write(
        r.path().join("tests/test_pricing_direct.py"),
        "from shop.pricing import apply_discount\n\n\ndef test_half():\n    assert apply_discount(100, 50) == 50\n",
    )
    .unwrap();
    std::fs::create_dir_all(r.path().join("tests/pricing")).unwrap();
    std::fs::write(
        r.path().join("tests/pricing/test_apply_discount.py"),
        "def test_named():\n    assert True\n",
    )
    .unwrap();
    commit("direct test");
    assert!(ken(&["index", "build", "."], r.path()).status.success());
    edit(
        r.path(),
        "shop/pricing.py",
        "(100 - percent)",
        "(100 - int(percent))",
    );
    let v = impact(r.path(), &[]);
    let tests: Vec<(&str, &str)> = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["path"].as_str().unwrap(), t["found_by"].as_str().unwrap()))
        .collect();
    assert_eq!(tests[0], ("tests/test_pricing_direct.py", "graph"), "{tests:?}");
    let at = |p: &str| tests.iter().position(|t| t.0 == p);
    assert!(at("tests/test_history.py").is_some(), "{tests:?}");
    assert!(at("tests/test_cart.py").is_some(), "{tests:?}");
    assert!(
        tests.contains(&("tests/pricing/test_apply_discount.py", "naming")),
        "{tests:?}"
    );
}

#[test]
fn a_change_no_test_reaches_widens_to_its_package_tests_and_says_so() {
    let r = repo();
    // No test calls `checkout` or imports its module: no path through the graph shows which
    // test could reach it (a dynamic call would look the same), so the tests of its package
    // must run.
    edit(
        r.path(),
        "shop/checkout.py",
        "cart.items = items",
        "cart.items = dict(items)",
    );
    let out = ken(&["impact", "--json"], r.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        v["impact"]["unreached"],
        serde_json::json!(["shop.checkout.checkout"]),
        "{v:#}"
    );
    let must: Vec<&str> = v["impact"]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["must_run"] == true)
        .map(|t| t["path"].as_str().unwrap())
        .collect();
    assert!(
        must.contains(&"tests/test_cart.py") && must.contains(&"tests/test_pricing.py"),
        "{must:?}"
    );
    assert!(
        v["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .starts_with("no test reaches 1 changed definition")),
        "{}",
        v["notes"]
    );
}

#[test]
fn a_test_calling_the_change_on_a_fixture_must_run() {
    // The test gets its cart from a pytest fixture: nothing tells the graph what `cart` is,
    // so `cart.total` is a name it cannot resolve; the test may call the change.
    let spec = "//- shop/__init__.py\n//- shop/cart.py\nclass Cart:\n    def total(self, prices):\n        return sum(prices)\n\
//- tests/conftest.py\nimport pytest\nfrom shop.cart import Cart\n\n\n@pytest.fixture\ndef cart():\n    return Cart()\n\
//- tests/test_checkout.py\ndef test_pays_the_total(cart):\n    assert cart.total([1, 2]) == 3\n\
//- tests/test_other.py\ndef test_unrelated():\n    assert len([1]) == 1\n";
    let r = indexed(spec);
    edit(
        r.path(),
        "shop/cart.py",
        "return sum(prices)",
        "return sum(prices) + 0",
    );
    let v = impact(r.path(), &[]);
    let test = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "tests/test_checkout.py")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(test["must_run"], true, "{test}");
    assert!(
        !v["tests"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["path"] == "tests/test_other.py" && t["must_run"] == true),
        "{v:#}"
    );
}

/// `spec` materialized, committed in a fresh git repository and indexed.
fn indexed(spec: &str) -> tempfile::TempDir {
    let r = materialize(spec);
    git(r.path(), &["init", "-q"]);
    support::commit_all(r.path(), "base");
    assert!(ken(&["index", "build", "."], r.path()).status.success());
    r
}

fn must_run_paths(v: &Value) -> Vec<String> {
    v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["must_run"] == true)
        .map(|t| t["path"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn methods_called_without_their_name_reach_the_users_of_their_type() {
    // The test gets a `Store` from a fixture: `Store(..)` runs `__init__` and `store.size` runs
    // a property, neither named by a call; `app/engine/` has no `__init__.py` (a namespace
    // package reached by a `..` import). Each change must make the test run, and leave the
    // unrelated test out.
    let spec = "//- app/__init__.py\n\
//- app/engine/store.py\nfrom ..limits import cap\n\n\nclass Store:\n    def __init__(self, items):\n        self.items = cap(items)\n\n    @property\n    def size(self):\n        return len(self.items)\n\n    def report(self):\n        return 'size %d' % self.size\n\
//- app/limits.py\ndef cap(items):\n    return items[:10]\n\
//- tests/conftest.py\nimport pytest\nfrom app.engine.store import Store\n\n\n@pytest.fixture\ndef store():\n    return Store([1, 2])\n\
//- tests/test_store.py\ndef test_report(store):\n    assert store.report() == 'size 2'\n\
//- tests/test_other.py\ndef test_unrelated():\n    assert len([1]) == 1\n";
    let r = indexed(spec);
    for (path, from, to) in [
        ("app/limits.py", "items[:10]", "items[:9]"),
        (
            "app/engine/store.py",
            "return len(self.items)",
            "return len(self.items) + 1",
        ),
        (
            "app/engine/store.py",
            "self.items = cap(items)",
            "self.items = list(items)",
        ),
    ] {
        edit(r.path(), path, from, to);
        let v = impact(r.path(), &[]);
        let must = must_run_paths(&v);
        assert!(must.contains(&"tests/test_store.py".to_string()), "{path}: {v:#}");
        assert!(
            !must.contains(&"tests/test_other.py".to_string()),
            "{path}: {v:#}"
        );
        edit(r.path(), path, to, from);
    }
}

#[test]
fn a_go_handler_called_by_net_http_reaches_tests_that_serve_its_router() {
    let spec = "//- go.mod\nmodule example.com/mux\n\ngo 1.19\n\
//- router.go\npackage mux\n\nimport \"net/http\"\n\ntype Router struct{ routes []string }\n\nfunc NewRouter() *Router {\n\treturn &Router{}\n}\n\nfunc (r *Router) ServeHTTP(w http.ResponseWriter, req *http.Request) {\n\tif r.match(req.URL.Path) {\n\t\tw.WriteHeader(200)\n\t}\n}\n\nfunc (r *Router) match(path string) bool {\n\treturn len(path) > 0\n}\n\
//- server_test.go\npackage mux\n\nimport (\n\t\"net/http/httptest\"\n\t\"testing\"\n)\n\nfunc TestServe(t *testing.T) {\n\tsrv := httptest.NewServer(NewRouter())\n\tdefer srv.Close()\n}\n\
//- names_test.go\npackage mux\n\nimport \"testing\"\n\nfunc TestNames(t *testing.T) {\n\tif len(\"a\") != 1 {\n\t\tt.Fatal(\"len\")\n\t}\n}\n";
    let r = indexed(spec);
    edit(r.path(), "router.go", "len(path) > 0", "len(path) >= 0");
    let v = impact(r.path(), &[]);
    // Reached through the router, not by widening to the whole package.
    let must = must_run_paths(&v);
    assert!(must.contains(&"server_test.go".to_string()), "{v:#}");
    assert!(!must.contains(&"names_test.go".to_string()), "{v:#}");
}

#[test]
fn a_rust_test_naming_the_change_inside_a_macro_must_run() {
    // The integration test calls `parse_port` only through its own macro: the call is made
    // by the expansion, the source holds the name as a token.
    let spec = "//- Cargo.toml\n[package]\nname = \"ports\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
//- src/lib.rs\npub fn parse_port(s: &str) -> Option<u16> {\n    s.parse().ok()\n}\n\npub fn other() -> u8 {\n    1\n}\n\
//- tests/ports.rs\nmacro_rules! check {\n    ($f:ident, $input:expr, $want:expr) => {\n        assert_eq!(ports::$f($input), $want);\n    };\n}\n\n#[test]\nfn parses() {\n    check!(parse_port, \"80\", Some(80));\n}\n\
//- tests/other.rs\n#[test]\nfn other_is_one() {\n    assert_eq!(ports::other(), 1);\n}\n";
    let r = indexed(spec);
    edit(r.path(), "src/lib.rs", "s.parse().ok()", "s.trim().parse().ok()");
    let v = impact(r.path(), &[]);
    let must = must_run_paths(&v);
    assert!(must.contains(&"tests/ports.rs".to_string()), "{v:#}");
    assert!(!must.contains(&"tests/other.rs".to_string()), "{v:#}");
}

#[test]
fn a_test_running_a_fixture_program_in_a_child_process_must_run() {
    // The test spawns `node tests/fixtures/greet` (no extension, not indexed): what the program
    // calls is out of the graph's sight.
    let spec = "//- package.json\n{\"name\": \"greeter\", \"version\": \"1.0.0\"}\n\
//- lib/greet.js\nfunction greet(name) {\n  return 'hello ' + name;\n}\nmodule.exports = { greet };\n\
//- tests/fixtures/greet\n#!/usr/bin/env node\nconst { greet } = require('../../lib/greet');\nconsole.log(greet(process.argv[2]));\n\
//- tests/greet.test.js\nconst { execFileSync } = require('child_process');\nconst path = require('path');\nconst assert = require('assert');\nconst prog = path.join(__dirname, 'fixtures/greet');\ntest('greets', () => {\n  assert.strictEqual(execFileSync('node', [prog, 'x']).toString(), 'hello x\\n');\n});\n\
//- tests/math.test.js\nconst assert = require('assert');\ntest('adds', () => {\n  assert.strictEqual(1 + 1, 2);\n});\n";
    let r = indexed(spec);
    edit(r.path(), "lib/greet.js", "'hello ' + name", "'hi ' + name");
    let v = impact(r.path(), &[]);
    let must = must_run_paths(&v);
    assert!(must.contains(&"tests/greet.test.js".to_string()), "{v:#}");
    assert!(!must.contains(&"tests/math.test.js".to_string()), "{v:#}");
    let found_by = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "tests/greet.test.js")
        .map(|t| t["found_by"].clone());
    assert_eq!(found_by, Some(Value::from("process")), "{v:#}");
}
