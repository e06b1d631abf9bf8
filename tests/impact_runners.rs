//! Every command `ken impact` suggests really runs tests: on a small project per runner
//! (pytest, cargo, go, mocha and jest), a change in the working tree, then each suggested
//! command is run with the real runner and must pass having run at least one test.
//!
//! The runners come from `.ci/install_test_runners.sh` (`KEN_RUNNER_PATH` before `PATH`,
//! `KEN_RUNNER_NODE_MODULES` for mocha and jest). With `KEN_TEST_RUNNERS=1` (CI) a missing
//! runner fails the test; otherwise its project is skipped with a message.

mod support;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use support::{ken, materialize, stderr, stdout};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.email=t@t", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
}

fn path_env() -> String {
    let extra = std::env::var("KEN_RUNNER_PATH").unwrap_or_default();
    let path = std::env::var("PATH").unwrap_or_default();
    if extra.is_empty() {
        path
    } else {
        format!("{extra}:{path}")
    }
}

/// Whether `program` can be run; in CI a missing runner is a failure.
fn have(program: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .env("PATH", path_env())
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("KEN_TEST_RUNNERS").is_err(),
            "{program} is not installed (.ci/install_test_runners.sh installs it)"
        );
        eprintln!("skipped: {program} is not installed (.ci/install_test_runners.sh)");
    }
    found
}

/// A committed project with one file then edited in the working tree; the impact of that.
fn project(spec: &str, path: &str, from: &str, to: &str) -> (tempfile::TempDir, Value) {
    let r = materialize(spec);
    git(r.path(), &["init", "-q"]);
    git(r.path(), &["add", "-A"]);
    git(r.path(), &["commit", "-qm", "base"]);
    let out = ken(&["index", "build", "."], r.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let file = r.path().join(path);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(from), "{from:?} not in {path}");
    std::fs::write(&file, text.replace(from, to)).unwrap();
    let out = ken(&["impact", "--json"], r.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    (r, v["impact"].clone())
}

/// Every suggested command: per test and the combined ones.
fn suggested(impact: &Value) -> Vec<String> {
    let mut all: Vec<String> = impact["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["command"].as_str().map(str::to_string))
        .collect();
    for c in impact["test_commands"].as_array().unwrap() {
        all.push(c.as_str().unwrap().to_string());
    }
    all.dedup();
    assert!(!all.is_empty(), "no command suggested: {impact:#}");
    all
}

fn test_names(impact: &Value) -> Vec<String> {
    impact["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// The numbers written before `word` (`3 passed`, `1 passing`).
fn counts_before(out: &str, word: &str) -> u64 {
    let re = regex::Regex::new(&format!(r"(\d+) {word}")).unwrap();
    re.captures_iter(out)
        .filter_map(|c| c[1].parse::<u64>().ok())
        .sum()
}

/// Runs `command` in `dir` as a user would paste it; it must pass and run at least one test.
fn runs_tests(dir: &Path, command: &str) {
    let out = Command::new("sh")
        .args(["-c", command])
        .current_dir(dir)
        .env("PATH", path_env())
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env("CARGO_NET_OFFLINE", "true")
        .env("GOPROXY", "off")
        .env("GOFLAGS", "-mod=mod")
        .env("CI", "true")
        .output()
        .expect("sh");
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "`{command}` failed:\n{text}");
    let runner = command
        .rsplit("&& ")
        .next()
        .unwrap_or(command)
        .trim_start_matches("npx ");
    let ran = match runner.split_whitespace().next() {
        Some("pytest") => counts_before(&text, "passed"),
        Some("cargo") => counts_before(&text, "passed;"),
        Some("go") => u64::from(
            !text.contains("[no tests to run]") && !text.contains("[no test files]") && text.contains("ok "),
        ),
        Some("mocha") => counts_before(&text, "passing"),
        Some("jest") => {
            let re = regex::Regex::new(r"Tests:\s+(\d+) passed").unwrap();
            re.captures(&text).and_then(|c| c[1].parse().ok()).unwrap_or(0)
        }
        other => panic!("unexpected runner {other:?} in `{command}`"),
    };
    assert!(ran >= 1, "`{command}` ran no test:\n{text}");
}

const PYTHON: &str = r#"
//- pyproject.toml
[tool.pytest.ini_options]
pythonpath = ["."]
//- shop/__init__.py
//- shop/pricing.py
def apply_discount(amount, percent):
    hundred = 100
    return amount * (hundred - percent) / hundred
//- tests/test_pricing.py
from shop.pricing import apply_discount


def test_discount():
    def half(x):
        return apply_discount(x, 50)

    assert half(100) == 50


class TestPricing:
    def _check(self, amount, percent, want):
        assert apply_discount(amount, percent) == want

    def test_ten(self):
        self._check(100, 10, 90)


def helper_not_a_test():
    return apply_discount(1, 0)
"#;

const PYTHON_CASES: &str = r#"
//- pyproject.toml
[tool.pytest.ini_options]
pythonpath = ["."]
//- fmt/__init__.py
//- fmt/rules.py
def strip_trailing_comma(text):
    return text.rstrip().rstrip(",")


def keep_blank_lines(text):
    return text
//- tests/test_format.py
import pathlib

import pytest

from fmt.rules import keep_blank_lines, strip_trailing_comma

CASES = pathlib.Path(__file__).parent / "data" / "cases"


def all_cases(folder):
    return sorted(p.stem for p in (pathlib.Path(__file__).parent / "data" / folder).glob("*.py"))


@pytest.mark.parametrize("name", all_cases("cases"))
def test_case(name):
    source = (CASES / f"{name}.py").read_text()
    out = keep_blank_lines(strip_trailing_comma(source))
    assert out == out.strip()
//- tests/test_other.py
def test_unrelated():
    assert "cases" != "other"
//- tests/data/cases/trailing_comma_strip.py
x = [1, 2, 3],
//- tests/data/cases/blank_lines.py
x = 1
"#;

#[test]
fn pytest_runs_data_cases_through_their_driver() {
    if !have("pytest") {
        return;
    }
    let (r, v) = project(
        PYTHON_CASES,
        "fmt/rules.py",
        "return text.rstrip().rstrip(\",\")",
        "return text.rstrip().rstrip(\",\").rstrip()",
    );
    // The case named after the changed function is listed with the driver that runs it.
    let case = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["path"] == "tests/data/cases/trailing_comma_strip.py")
        .unwrap_or_else(|| panic!("{:#}", v["tests"]));
    assert_eq!(case["driver"], "tests/test_format.py", "{case:#}");
    assert_eq!(case["name"], "trailing_comma_strip", "{case:#}");
    assert_eq!(
        case["command"], "pytest tests/test_format.py -k trailing_comma_strip",
        "{case:#}"
    );
    // A case is never handed to pytest as a file of its own.
    let commands = suggested(&v);
    assert!(
        !commands
            .iter()
            .any(|c| c.contains("pytest tests/data/") || c.contains(" tests/data/cases/")),
        "{commands:?}"
    );
    for c in commands {
        runs_tests(r.path(), &c);
    }
}

#[test]
fn pytest_runs_every_suggested_node_id() {
    if !have("pytest") {
        return;
    }
    let (r, v) = project(
        PYTHON,
        "shop/pricing.py",
        "(hundred - percent) / hundred",
        "(hundred - percent) / float(hundred)",
    );
    let names = test_names(&v);
    // A nested helper's test is its enclosing test; a helper method's is its test class.
    assert!(
        names.contains(&"test_pricing.test_discount".to_string()),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.ends_with(".half") || n.ends_with("._check")),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.ends_with("helper_not_a_test")),
        "{names:?}"
    );
    for c in suggested(&v) {
        runs_tests(r.path(), &c);
    }
}

const RUST: &str = r#"
//- Cargo.toml
[workspace]
members = ["crates/shop"]
resolver = "2"
//- crates/shop/Cargo.toml
[package]
name = "shop"
version = "0.1.0"
edition = "2021"
//- crates/shop/src/lib.rs
pub mod cart;
pub mod pricing;
//- crates/shop/src/pricing.rs
pub fn apply_discount(amount: u32, percent: u32) -> u32 {
    const HUNDRED: u32 = 100;
    amount * (HUNDRED - percent) / HUNDRED
}

#[cfg(test)]
mod tests {
    use super::*;

    fn half(x: u32) -> u32 {
        apply_discount(x, 50)
    }

    #[test]
    fn halves() {
        assert_eq!(half(100), 50);
    }
}
//- crates/shop/src/cart/mod.rs
use crate::pricing::apply_discount;

pub fn total(prices: &[u32], percent: u32) -> u32 {
    apply_discount(prices.iter().sum(), percent)
}

#[cfg(test)]
mod tests;
//- crates/shop/src/cart/tests/mod.rs
mod totals;
//- crates/shop/src/cart/tests/totals.rs
use crate::cart::total;

#[test]
fn sums_then_discounts() {
    assert_eq!(total(&[50, 50], 10), 90);
}
//- crates/shop/tests/discounts.rs
macro_rules! check_discount {
    ($amount:expr, $percent:expr, $want:expr) => {
        assert_eq!(shop::pricing::apply_discount($amount, $percent), $want)
    };
}

#[test]
fn through_a_macro() {
    check_discount!(100, 10, 90);
}
//- crates/shop/tests/checkout.rs
use shop::cart::total;

#[test]
fn end_to_end() {
    assert_eq!(total(&[100], 0), 100);
}
"#;

#[test]
fn cargo_runs_every_suggested_target_and_filter() {
    if !have("cargo") {
        return;
    }
    // The change is on the line of a constant declared inside the function.
    let (r, v) = project(
        RUST,
        "crates/shop/src/pricing.rs",
        "const HUNDRED: u32 = 100;",
        "const HUNDRED: u32 = 10 * 10;",
    );
    let changed: Vec<&str> = v["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["qualified_name"].as_str().unwrap())
        .collect();
    assert!(changed.contains(&"shop::pricing::apply_discount"), "{changed:?}");
    assert!(!changed.iter().any(|c| c.ends_with("HUNDRED")), "{changed:?}");
    let commands = suggested(&v);
    // A unit-test module in a `tests` folder under src/ is not an integration target.
    assert!(
        !commands
            .iter()
            .any(|c| c.contains("--test totals") || c.contains("--test mod")),
        "{commands:?}"
    );
    assert!(
        commands
            .iter()
            .any(|c| c.contains("-p shop") && c.contains("cart::tests::totals")),
        "{commands:?}"
    );
    // A test that calls the change through a `macro_rules!` macro is reached as a test item.
    assert!(
        commands
            .iter()
            .any(|c| c.contains("--test discounts") && c.contains("through_a_macro")),
        "{commands:?}"
    );
    assert!(
        !test_names(&v).iter().any(|n| n.ends_with("::half")),
        "{:?}",
        test_names(&v)
    );
    for c in commands {
        runs_tests(r.path(), &c);
    }
}

const GO: &str = r#"
//- svc/go.mod
module example.com/shop

go 1.19
//- svc/pricing/pricing.go
package pricing

func ApplyDiscount(amount, percent int) int {
	const hundred = 100
	return amount * (hundred - percent) / hundred
}
//- svc/pricing/pricing_test.go
package pricing

import "testing"

func check(t *testing.T, got, want int) {
	if got != want {
		t.Fatalf("got %d, want %d", got, want)
	}
}

func TestApplyDiscount(t *testing.T) {
	check(t, ApplyDiscount(100, 10), 90)
}
//- svc/cart/cart.go
package cart

import "example.com/shop/pricing"

func Total(prices []int, percent int) int {
	sum := 0
	for _, p := range prices {
		sum += p
	}
	return pricing.ApplyDiscount(sum, percent)
}
//- svc/cart/cart_test.go
package cart

import "testing"

func TestTotal(t *testing.T) {
	if Total([]int{50, 50}, 10) != 90 {
		t.Fatal("wrong total")
	}
}
"#;

#[test]
fn go_test_runs_every_suggested_package_and_pattern() {
    if !have("go") {
        return;
    }
    let (r, v) = project(
        GO,
        "svc/pricing/pricing.go",
        "return amount *",
        "return 1 * amount *",
    );
    let names = test_names(&v);
    assert!(
        names.iter().any(|n| n.ends_with("TestApplyDiscount")),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.ends_with(".check")), "{names:?}");
    for c in suggested(&v) {
        runs_tests(r.path(), &c);
    }
}

const JS: &str = r#"
//- package.json
{"name": "shop", "private": true}
//- lib/pricing.js
function applyDiscount(amount, percent) {
  const hundred = 100;
  return amount * (hundred - percent) / hundred;
}
module.exports = { applyDiscount };
//- lib/pricing.test.js
const { applyDiscount } = require('./pricing');

function half(x) {
  return applyDiscount(x, 50);
}

test('halves', () => {
  expect(half(100)).toBe(50);
});
//- lib/cart.js
const { applyDiscount } = require('./pricing');

function total(items, percent) {
  return applyDiscount(items.reduce((a, b) => a + b, 0), percent);
}
module.exports = { total };
//- test/cart.js
const assert = require('assert');
const { total } = require('../lib/cart');

describe('cart', () => {
  it('applies the discount', () => {
    assert.strictEqual(total([50, 50], 10), 90);
  });
});
"#;

#[test]
fn mocha_and_jest_run_every_suggested_file() {
    let Ok(modules) = std::env::var("KEN_RUNNER_NODE_MODULES") else {
        assert!(
            std::env::var("KEN_TEST_RUNNERS").is_err(),
            "KEN_RUNNER_NODE_MODULES is not set (.ci/install_test_runners.sh)"
        );
        eprintln!("skipped: mocha and jest are not installed (.ci/install_test_runners.sh)");
        return;
    };
    let (r, v) = project(
        JS,
        "lib/pricing.js",
        "(hundred - percent) / hundred",
        "((hundred - percent) / hundred)",
    );
    std::os::unix::fs::symlink(&modules, r.path().join("node_modules")).unwrap();
    let commands = suggested(&v);
    assert!(
        commands
            .iter()
            .any(|c| c.starts_with("npx mocha") && c.contains("test/cart.js")),
        "{commands:?}"
    );
    assert!(
        commands
            .iter()
            .any(|c| c.starts_with("npx jest") && c.contains("lib/pricing.test.js")),
        "{commands:?}"
    );
    // Titles select jest and mocha tests, not function names.
    assert!(
        !commands
            .iter()
            .any(|c| c.contains(" -t ") || c.contains("--grep")),
        "{commands:?}"
    );
    for c in commands {
        runs_tests(r.path(), &c);
    }
}

/// `ken impact --run` on `dir`: its exit status and JSON answer.
fn impact_run(dir: &Path) -> (Option<i32>, Value) {
    let out = Command::new(support::ken_bin())
        .args(["impact", "--run", "--json"])
        .current_dir(dir)
        .env("PATH", path_env())
        .output()
        .expect("ken impact --run");
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    (out.status.code(), v)
}

#[test]
fn impact_run_reports_the_failing_test_and_passes_once_fixed() {
    if !have("pytest") {
        return;
    }
    // A change that breaks the discount: the test that reaches it fails.
    let (r, _) = project(
        PYTHON,
        "shop/pricing.py",
        "(hundred - percent) / hundred",
        "(hundred + percent) / hundred",
    );
    let (code, v) = impact_run(r.path());
    let run = &v["run"];
    assert_eq!(code, Some(1), "{v:#}");
    assert!(run["failed"].as_u64().unwrap() >= 1, "{run:#}");
    let failed = run["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["outcome"] == "failed")
        .unwrap();
    let tail = failed["output_tail"].as_str().unwrap();
    assert!(tail.contains("test_discount"), "{tail}");
    // The commands run are those of the tests that must run.
    assert_eq!(
        run["commands"].as_array().unwrap().len(),
        v["impact"]["must_run_commands"].as_array().unwrap().len()
    );
    // Fixed (a change the tests accept): every command passes.
    let file = r.path().join("shop/pricing.py");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace(
            "(hundred + percent) / hundred",
            "(hundred - percent) / float(hundred)",
        ),
    )
    .unwrap();
    let (code, v) = impact_run(r.path());
    assert_eq!(code, Some(0), "{v:#}");
    assert!(v["run"]["passed"].as_u64().unwrap() >= 1, "{v:#}");
    assert_eq!(v["run"]["failed"], 0);
}
