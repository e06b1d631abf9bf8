//! Bad input, table-driven: every argument, file, query and patch below is refused (or
//! answered with a note) with a clear message that names it, says the reason once, and the
//! expected exit code; none crashes the process.

mod support;

use std::process::Command;

use support::serve::shop_repo;
use support::{ken_bin, stderr, stdout};

struct Case {
    args: Vec<String>,
    code: i32,
    /// Must appear in stderr.
    says: &'static str,
}

fn case(args: &[&str], code: i32, says: &'static str) -> Case {
    Case {
        args: args.iter().map(|s| s.to_string()).collect(),
        code,
        says,
    }
}

#[test]
fn forty_bad_inputs_get_clear_errors_and_exit_codes() {
    let repo = shop_repo();
    let r = repo.path();
    std::fs::write(r.join("garbage.diff"), "this is not a diff\n").unwrap();
    std::fs::write(
        r.join("new_only.diff"),
        "--- /dev/null\n+++ b/docs/notes.txt\n@@ -0,0 +1 @@\n+hello\n",
    )
    .unwrap();
    std::fs::write(r.join("big_query.txt"), "discount ".repeat(150_000)).unwrap();
    let empty = tempfile::tempdir().unwrap();
    let no_index = empty.path().to_str().unwrap().to_string();
    let cases = vec![
        case(
            &["search", "x", "--limit", "0"],
            1,
            "--limit: must be between 1 and 1000, not 0",
        ),
        case(
            &["search", "x", "--limit", "10000000"],
            1,
            "--limit: must be between 1 and 1000, not 10000000",
        ),
        case(
            &["search", "x", "--literal", "--limit", "0"],
            1,
            "--limit: must be between 1 and 100000",
        ),
        case(
            &["search", "--query-file", "/nonexistent/q.txt"],
            1,
            "cannot read query file /nonexistent/q.txt",
        ),
        case(&["search", ""], 1, "empty query"),
        case(&["search", "x", "--files", "--symbols"], 2, "cannot be used with"),
        case(&["search", "(", "--regex"], 1, "invalid regex"),
        case(&["search", "x", "--limit", "abc"], 2, "invalid value 'abc'"),
        case(&["symbol", ""], 1, "the name: is empty"),
        case(
            &["symbol", "Cart", "--limit", "0"],
            1,
            "--limit: must be between 1 and 1000",
        ),
        case(
            &["context", "x", "--budget", "0"],
            1,
            "--budget: 0 is below the minimum of 50",
        ),
        case(
            &["context", "x", "--budget", "999999999"],
            1,
            "--budget: 999999999 is above the maximum",
        ),
        case(
            &["context", "x", "--files", "0"],
            1,
            "--files: must be between 1 and 500",
        ),
        case(
            &["context", "x", "--symbols", "0"],
            1,
            "--symbols: must be between 1 and 500",
        ),
        case(
            &["context", "x", "--signals", "lexical,telepathy"],
            1,
            "--signals: unknown signal \"telepathy\"",
        ),
        case(&["context", "  "], 1, "empty query"),
        case(
            &["ask", "x", "--budget", "0"],
            1,
            "--budget: 0 is below the minimum",
        ),
        case(
            &["overview", "--budget", "0"],
            1,
            "--budget: 0 is below the minimum",
        ),
        case(
            &["callers", "shop.cart.Cart.add", "--depth", "0"],
            1,
            "--depth: must be between 1 and 10, not 0",
        ),
        case(
            &["callers", "shop.cart.Cart.add", "--depth", "11"],
            1,
            "--depth: must be between 1 and 10, not 11",
        ),
        case(
            &["callees", "shop.cart.Cart.total", "--min-confidence", "2"],
            1,
            "--min-confidence: must be between 0 and 1",
        ),
        case(
            &["callers", "nothing_here"],
            1,
            "no definition matches \"nothing_here\"",
        ),
        case(
            &["refs", "Cart", "--limit", "0"],
            1,
            "--limit: must be between 1 and 5000",
        ),
        case(
            &["deps", "../outside.py"],
            1,
            "../outside.py: `..` would leave the repository",
        ),
        case(
            &["deps", "shop/nothing.py"],
            1,
            "shop/nothing.py is not an indexed file",
        ),
        case(
            &["read-span", "../etc/passwd"],
            1,
            "../etc/passwd: `..` would leave the repository",
        ),
        case(
            &["read-span", "/etc/passwd"],
            1,
            "/etc/passwd: absolute paths outside the repository",
        ),
        case(&["read-span", "shop/cart.py:0-3"], 1, "lines start at 1"),
        case(
            &["read-span", "shop/cart.py:9-3"],
            1,
            "the end line is before the start line",
        ),
        case(&["read-span", "shop/cart.py:999"], 1, "line 999 is past its end"),
        case(
            &["read-span", ".kenning/CURRENT"],
            1,
            ".kenning/CURRENT: the index's own files may not be read",
        ),
        case(
            &["read-span", "shop/nothing.py"],
            1,
            "shop/nothing.py: no such file in the repository",
        ),
        case(
            &["impact", "--patch", "/nonexistent/fix.diff"],
            1,
            "cannot read --patch /nonexistent/fix.diff",
        ),
        case(
            &["impact", "--patch", "garbage.diff"],
            1,
            "--patch: the change is not a unified diff",
        ),
        case(
            &["impact", "--range=--output=/tmp/x..HEAD"],
            1,
            "--range: \"--output=/tmp/x\" is not a revision",
        ),
        case(
            &["impact", "--range", "nodots"],
            1,
            "--range: nodots: expected A..B",
        ),
        case(&["impact", "--range", "HEAD~99..HEAD"], 1, "git diff failed"),
        case(
            &["impact", "--symbol", "no_such_thing"],
            1,
            "--symbol: no_such_thing: no such definition in the index",
        ),
        case(&["impact", "--patch", "new_only.diff"], 0, "not in the index"),
        case(
            &["impact", "--staged", "--range", "a..b"],
            2,
            "cannot be used with",
        ),
        case(
            &["search", "x", "--repo", "/nonexistent"],
            1,
            "--repo: /nonexistent: No such file or directory",
        ),
        case(&["search", "x", "--repo", &no_index], 1, "no index found at"),
        case(&["index", "status", &no_index], 1, "no index found at"),
        case(
            &["index", "build", "/nonexistent"],
            1,
            "cannot index /nonexistent: No such file or directory",
        ),
        case(
            &["index", "build", ".", "--max-file-size", "abc"],
            2,
            "invalid value 'abc'",
        ),
        case(&["serve"], 1, "give --mcp"),
        case(
            &["serve", "--http", "0.0.0.0:0", "--no-watch"],
            1,
            "--allow-remote",
        ),
        case(
            &["serve", "--http", "nonsense"],
            1,
            "--http nonsense: not HOST:PORT",
        ),
        case(
            &["serve", "--mcp", "--deadline", "0"],
            1,
            "--deadline must be between 0 and 3600 seconds",
        ),
        case(
            &["search", "--query-file", "big_query.txt", "--lexical"],
            0,
            "only its first 65536 bytes were used",
        ),
        case(&["nonsense-command"], 2, "unrecognized subcommand"),
    ];
    assert!(cases.len() >= 40);
    let mut failures = Vec::new();
    for c in &cases {
        let out = Command::new(ken_bin())
            .args(&c.args)
            .current_dir(r)
            .env_remove("KEN_SERVE_TOKEN")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .output()
            .unwrap();
        let err = stderr(&out);
        let code = out.status.code().unwrap_or(-1);
        if code != c.code || !err.contains(c.says) {
            failures.push(format!(
                "ken {:?}: exit {code} (want {}), stderr {err:?} (want {:?})",
                c.args, c.code, c.says
            ));
        }
        // The reason is said once: no cause repeated after itself.
        for line in err.lines().filter(|l| l.starts_with("error: ")) {
            let parts: Vec<&str> = line.split(": ").collect();
            if parts.windows(2).any(|w| w[0] == w[1]) {
                failures.push(format!("ken {:?}: a reason said twice: {line}", c.args));
            }
        }
        assert!(
            out.status.code().is_some(),
            "ken {:?} was killed: {}",
            c.args,
            stdout(&out)
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn an_empty_tree_and_a_tree_without_supported_files_say_so() {
    for spec in ["", "//- notes.txt\nhello\n//- data.csv\na,b\n"] {
        let dir = support::materialize(spec);
        let out = support::ken(&["index", "build", "."], dir.path());
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(
            stdout(&out).contains("no supported source files: nothing was indexed"),
            "{}",
            stdout(&out)
        );
    }
}
