//! `ken context`: ranking from every signal with reasons, packing within the token budget
//! (whole definitions, elisions, neighbours, what was left out), both formats, and errors.

mod support;

use kenning::context::count_tokens;
use serde_json::Value;
use support::{ken, materialize, stderr, stdout};

const REPO: &str = r#"
//- shop/__init__.py
"""The shop."""
//- shop/cart.py
from shop.pricing import apply_discount, TaxTable


class Cart:
    """A shopping cart: items and their quantities."""

    def __init__(self):
        self.items = {}
        self.coupon = None

    def add(self, sku, quantity=1):
        self.items[sku] = self.items.get(sku, 0) + quantity

    def total(self, prices):
        subtotal = sum(prices[s] * q for s, q in self.items.items())
        return apply_discount(subtotal, self.coupon)
//- shop/pricing.py
class TaxTable:
    rates = {}


def apply_discount(amount, coupon):
    """Takes the coupon's percentage off the amount."""
    if coupon is None:
        return amount
    return amount - amount * coupon.percent / 100
//- shop/shipping.py
def shipping_cost(weight, country):
    """Flat rate per kilogram, doubled abroad."""
    rate = 2.0 if country == "home" else 4.0
    return weight * rate
//- shop/users.py
class User:
    def __init__(self, name, email):
        self.name = name
        self.email = email

    def greeting(self):
        return "Hello " + self.name
//- tests/test_cart.py
from shop.cart import Cart


def test_total_with_coupon():
    cart = Cart()
    cart.add("apple", 2)
    assert cart.total({"apple": 1.0}) == 2.0
"#;

fn indexed() -> tempfile::TempDir {
    let repo = materialize(REPO);
    let out = ken(&["index", "build", "."], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    repo
}

fn context_json(repo: &std::path::Path, args: &[&str]) -> Value {
    let mut all = vec!["context", "--format", "json"];
    all.extend_from_slice(args);
    let out = ken(&all, repo);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

#[test]
fn a_traceback_puts_its_frames_first_with_reasons() {
    let repo = indexed();
    let task = r#"Cart total crashes when a coupon is set

Traceback (most recent call last):
  File "/home/me/app/shop/cart.py", line 16, in total
    return apply_discount(subtotal, self.coupon)
  File "/home/me/app/shop/pricing.py", line 9, in apply_discount
    return amount - amount * coupon.percent / 100
AttributeError: 'str' object has no attribute 'percent'
"#;
    let v = context_json(repo.path(), &[task]);
    let files: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(
        files[..2].contains(&"shop/cart.py") && files[..2].contains(&"shop/pricing.py"),
        "{files:?}"
    );
    let why = &v["files"][0]["why"];
    assert_eq!(why["mention"], "path", "{why}");
    let symbols: Vec<&str> = v["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .take(3)
        .map(|s| s["qualified_name"].as_str().unwrap())
        .collect();
    assert!(symbols.contains(&"shop.pricing.apply_discount"), "{symbols:?}");
    assert!(symbols.contains(&"shop.cart.Cart.total"), "{symbols:?}");
    // The pack shows the frames' code whole, cited by path and lines.
    let text = v["pack"]["text"].as_str().unwrap();
    assert!(
        text.contains("### shop/pricing.py:5-9 · shop.pricing.apply_discount"),
        "{text}"
    );
    assert!(text.contains("return amount - amount * coupon.percent / 100"));
    assert_eq!(v["coverage"]["files_indexed"], 6);
    assert!(
        v["signals"]["used"].as_array().unwrap().len() >= 3,
        "{}",
        v["signals"]
    );
}

#[test]
fn the_pack_stays_within_the_budget_and_says_what_it_left_out() {
    let repo = indexed();
    for budget in [120usize, 400, 8000] {
        let b = budget.to_string();
        let v = context_json(
            repo.path(),
            &[
                "cart total discount coupon shipping user greeting",
                "--budget",
                &b,
            ],
        );
        let pack = &v["pack"];
        let text = pack["text"].as_str().unwrap();
        let counted = count_tokens(text);
        assert!(counted <= budget, "budget {budget}: {counted} tokens");
        assert_eq!(
            pack["tokens"].as_u64().unwrap() as usize,
            counted,
            "the pack reports its own size"
        );
        if budget == 120 {
            assert_eq!(pack["truncated"], true);
            assert!(text.contains("### Left out"), "{text}");
            assert!(pack["left_out"]["symbols"].as_u64().unwrap() > 0);
        }
        if budget == 8000 {
            assert_eq!(pack["truncated"], false, "{text}");
        }
    }
}

#[test]
fn neighbours_are_signatures_of_callees_and_owning_types() {
    let repo = indexed();
    let v = context_json(repo.path(), &["`Cart.total`", "--budget", "900"]);
    let shown: Vec<(&str, &str)> = v["pack"]["shown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["qualified_name"].as_str().unwrap(), s["form"].as_str().unwrap()))
        .collect();
    assert_eq!(shown[0], ("shop.cart.Cart.total", "whole"), "{shown:?}");
    // The class after its method: an outline, not the method's text again.
    assert!(shown.contains(&("shop.cart.Cart", "members")), "{shown:?}");
    let n = v["pack"]["neighbours"].as_array().unwrap();
    let rel: Vec<String> = n
        .iter()
        .map(|x| {
            format!(
                "{} {}",
                x["signature"].as_str().unwrap(),
                x["relation"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        rel.iter()
            .any(|r| r.starts_with("def apply_discount(amount, coupon)") && r.contains("called by")),
        "{rel:?}"
    );
}

#[test]
fn markdown_lists_files_with_reasons_and_code_with_citations() {
    let repo = indexed();
    let out = ken(
        &["context", "how is the shipping cost computed abroad"],
        repo.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let md = stdout(&out);
    assert!(
        md.starts_with("# Context: how is the shipping cost computed abroad"),
        "{md}"
    );
    assert!(md.contains("Index: 6 files indexed"), "{md}");
    assert!(md.contains("1. `shop/shipping.py`"), "{md}");
    assert!(
        md.contains("### shop/shipping.py:1-4 · shop.shipping.shipping_cost"),
        "{md}"
    );
}

#[test]
fn signals_can_be_chosen_and_bad_ones_are_named() {
    let repo = indexed();
    let v = context_json(repo.path(), &["shipping cost", "--signals", "lexical"]);
    assert_eq!(v["signals"]["used"], serde_json::json!(["lexical"]));
    assert!(v["files"][0]["why"].get("semantic").is_none());
    let out = ken(&["context", "x", "--signals", "lexical,telepathy"], repo.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--signals") && stderr(&out).contains("telepathy"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn without_a_semantic_part_the_signal_is_reported_missing() {
    let repo = materialize(REPO);
    assert!(
        ken(&["index", "build", ".", "--no-semantic"], repo.path())
            .status
            .success()
    );
    let out = ken(&["context", "shipping cost", "--format", "json"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        !v["signals"]["used"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("semantic"))
    );
    assert_eq!(v["files"][0]["path"], "shop/shipping.py");
}

#[test]
fn overview_maps_layout_central_modules_and_entry_points() {
    let repo = materialize(&format!(
        "{REPO}\n//- shop/__main__.py\nimport argparse\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n    parser.add_argument(\"--sku\")\n\n\nmain()\n"
    ));
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let out = ken(&["overview"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let md = stdout(&out);
    assert!(md.contains("### Layout\n- `shop/` — 6 files"), "{md}");
    assert!(md.contains("### Central modules"), "{md}");
    assert!(
        md.contains("package-main: `shop.__main__` at `shop/__main__.py:1`"),
        "{md}"
    );
    assert!(md.contains("main: `main` at `shop/__main__.py:4`"), "{md}");
    assert!(
        md.contains("cli: `ArgumentParser` at `shop/__main__.py:5`"),
        "{md}"
    );
    assert!(md.contains("`tests` -> `shop`"), "{md}");
    // A small budget cuts it, never past the budget.
    let out = ken(&["overview", "--budget", "40"], repo.path());
    assert!(count_tokens(&stdout(&out)) <= 40, "{}", stdout(&out));
}

#[test]
fn ask_without_a_model_shows_the_context_and_an_overview() {
    let repo = indexed();
    let out = std::process::Command::new(support::ken_bin())
        .args(["ask", "where is the discount applied?"])
        .current_dir(repo.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("no model configured"), "{}", stderr(&out));
    let md = stdout(&out);
    assert!(md.contains("## Overview"), "{md}");
    assert!(md.contains("shop.pricing.apply_discount"), "{md}");
}

#[test]
fn ask_with_a_model_checks_its_citations() {
    let repo = indexed();
    let server = support::mock_server::serve(|_, path, body| {
        assert_eq!(path, "/v1/chat/completions");
        let prompt = body["messages"][1]["content"].as_str().unwrap_or("");
        // The model sees the question and the packed code.
        assert!(prompt.contains("where is the discount applied?"), "{prompt}");
        assert!(prompt.contains("def apply_discount"), "{prompt}");
        let answer = "The discount is applied in shop/pricing.py:5-9, called from shop/cart.py:16. \
                      See also shop/ghost.py:3 and shop/pricing.py:400.";
        (
            200,
            serde_json::json!({ "choices": [{ "message": { "role": "assistant", "content": answer } }] })
                .to_string(),
        )
    });
    let out = std::process::Command::new(support::ken_bin())
        .args(["ask", "where is the discount applied?", "--format", "json"])
        .current_dir(repo.path())
        .env("OPENAI_BASE_URL", format!("{}/v1", server.url))
        .env("OPENAI_API_KEY", "sk-test")
        .env("KEN_MODEL", "mock-chat")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["model"], "openai:mock-chat");
    let answer = v["answer"].as_str().unwrap();
    assert!(
        answer.contains("shop/pricing.py:5-9,"),
        "valid citations stay as written: {answer}"
    );
    assert!(answer.contains("shop/ghost.py:3 [unverified]"), "{answer}");
    assert!(answer.contains("shop/pricing.py:400 [unverified]"), "{answer}");
    let valid: Vec<(String, bool)> = v["citations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["valid"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        valid,
        vec![
            ("shop/pricing.py".into(), true),
            ("shop/cart.py".into(), true),
            ("shop/ghost.py".into(), false),
            ("shop/pricing.py".into(), false)
        ]
    );
    assert!(stderr(&out).contains("2 citation(s)"), "{}", stderr(&out));
    let seen = server.seen.lock().unwrap();
    assert_eq!(seen[0].authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(seen[0].body["model"], "mock-chat");
}

#[test]
fn the_whole_answer_fits_its_token_budget() {
    let repo = indexed();
    for budget in [600usize, 2000, 8000] {
        let b = budget.to_string();
        let v = context_json(
            repo.path(),
            &["the cart total is wrong when a coupon is applied", "--budget", &b],
        );
        let used = kenning::context::count_tokens(&serde_json::to_string(&v).unwrap());
        assert!(used <= budget, "{used} tokens for a budget of {budget}");
        assert!(
            !v["pack"]["text"].as_str().unwrap().is_empty(),
            "budget {budget}: no code at all"
        );
    }
}

#[test]
fn overview_entry_points_come_from_the_manifests_first() {
    let repo = support::materialize(
        "//- pyproject.toml\n[project]\nname = \"shop\"\n[project.scripts]\nshop = \"shop.cli:main\"\n\
//- shop/__init__.py\n\
//- shop/cli.py\nimport sys\n\n\ndef helper(command):\n    return command\n\n\ndef main():\n    return helper(sys.argv)\n\
//- tests/test_cli.py\nfrom shop.cli import main\n\n\ndef test_main():\n    assert main() is not None\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let out = ken(&["overview", "--format", "json"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let first = &v["overview"]["entry_points"][0];
    assert_eq!(first["kind"], "console-script", "{v}");
    assert_eq!(first["path"], "shop/cli.py");
    assert_eq!(first["line"], 8, "{first}");
    assert_eq!(first["name"], "shop");
    // No part of the library depends on its tests.
    for e in v["overview"]["area_edges"].as_array().unwrap() {
        assert!(!(e["to"] == "tests" && e["from"] != "tests"), "{e}");
    }
}

#[test]
fn overview_cli_entry_points_are_declarations_not_functions_taking_a_command() {
    let repo = support::materialize(
        "//- clilib/core.py\nclass Command:\n    def invoke(self, ctx):\n        return ctx\n\n\n\
def run(cmd: Command, ctx):\n    return cmd.invoke(ctx)\n\n\ndef make(name) -> Command:\n    return Command()\n\
//- clilib/decorators.py\nfrom clilib.core import Command\n\n\ndef command(f):\n    return Command()\n\
//- tool/main.py\nimport argparse\n\n\ndef build():\n    parser = argparse.ArgumentParser()\n    return parser\n\
//- web/cmds.py\nimport click\n\n\n@click.command()\ndef hello():\n    pass\n",
    );
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let out = ken(&["overview", "--format", "json"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let cli: Vec<&str> = v["overview"]["entry_points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "cli")
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(cli, ["tool/main.py", "web/cmds.py"], "{v}");
}

/// A name that occurs only in a design note: `context` and hybrid `search` say that it is in
/// no code file and name the note's line, instead of ten guesses without a word.
#[test]
fn a_name_only_a_document_holds_is_named_with_the_document() {
    let repo = support::materialize(
        "//- shop/pay.py\ndef charge(card, amount):\n    return card, amount\n\
         //- docs/design.md\n# Design\n\nThe RetryBudgetPolicy caps how often a charge is retried.\n",
    );
    let r = repo.path();
    let built = support::ken(&["index", "build"], r);
    assert!(built.status.success(), "{}", support::stderr(&built));
    let out = support::ken(&["context", "RetryBudgetPolicy", "--json"], r);
    let v: serde_json::Value = serde_json::from_str(&support::stdout(&out)).unwrap();
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("occurs only in docs or config, in no code file: docs/design.md:3"),
        "{v}"
    );
    let out = support::ken(&["search", "RetryBudgetPolicy", "--json"], r);
    let v: serde_json::Value = serde_json::from_str(&support::stdout(&out)).unwrap();
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("by meaning only") && notes.contains("docs/design.md:3"),
        "{v}"
    );
    assert_eq!(v["files"][0]["path"], "docs/design.md", "{v}");
}
