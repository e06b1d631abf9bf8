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
fn eighty_bad_inputs_get_clear_errors_and_exit_codes() {
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
    let state = tempfile::tempdir().unwrap();
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
        // Unbounded inputs are read through a bound, and the bound is named.
        case(
            &["search", "--query-file", "/dev/zero", "--lexical"],
            1,
            "the query: contains a NUL byte",
        ),
        case(
            &["context", "--query-file", "/dev/zero"],
            1,
            "the query: contains a NUL byte",
        ),
        case(&["ask", "--query-file", "/dev/urandom"], 1, "the query"),
        case(
            &["impact", "--patch", "/dev/zero"],
            1,
            "larger than the 64 MiB bound on a patch",
        ),
        case(
            &["index", "build", ".", "-j", "99999999999999"],
            2,
            "is not in 0..=1024",
        ),
        case(
            &["index", "build", ".", "--max-file-size", "0"],
            2,
            "0 is not in 1..=268435456",
        ),
        case(
            &["index", "build", ".", "--max-file-size", "999999999999"],
            2,
            "999999999999 is not in 1..=268435456",
        ),
        case(
            &["index", "build", ".", "--max-parse-ms", "0"],
            2,
            "0 is not in 1..=3600000",
        ),
        case(
            &["index", "build", ".", "--max-tree-nodes", "0"],
            2,
            "0 is not in 1..=1000000000",
        ),
        case(
            &["index", "build", ".", "--embedder", "openai"],
            1,
            "--embedder openai needs --embed-model NAME",
        ),
        case(
            &["index", "build", ".", "--embedder", "word2vec"],
            2,
            "invalid value 'word2vec'",
        ),
        case(&["index", "verify", &no_index], 1, "no index found at"),
        // Queries.
        case(
            &["search", "x", "--regex", "a{99999999}"],
            1,
            "compiled regex exceeds size limit",
        ),
        case(&["search", "x", "--limit", "-1"], 2, "unexpected argument '-1'"),
        case(
            &["search", "x", "--files", "--limit", "99999"],
            1,
            "--limit: must be between 1 and 1000",
        ),
        case(
            &["overview", "--budget", "99999999999"],
            1,
            "--budget: 99999999999 is above the maximum",
        ),
        case(&["overview", "--budget", "abc"], 2, "invalid value 'abc'"),
        case(&["refs", ""], 1, "the symbol: is empty"),
        case(&["deps", ""], 1, "the file: is empty"),
        case(&["ask", ""], 1, "empty query"),
        case(
            &["callers", "shop.cart.Cart.add", "--min-confidence", "nan"],
            1,
            "--min-confidence: must be between 0 and 1, not NaN",
        ),
        case(&["read-span", ""], 1, "the span: is empty"),
        case(
            &["read-span", "shop/cart.py:1-99999999999999999999"],
            1,
            "expected path:START-END",
        ),
        case(
            &["impact", "--range", "HEAD..HEAD~1"],
            1,
            "unknown revision or path not in the working tree",
        ),
        // Shared snapshots.
        case(&["index", "pull"], 2, "--remote <URL>"),
        case(
            &["index", "push", "--remote", "nonsense://x", "--name", "shop"],
            1,
            "unsupported scheme \"nonsense\": use s3:// or file://",
        ),
        case(
            &["index", "push", "--remote", "file:///tmp/x"],
            1,
            "has no origin remote to name it by: pass --name",
        ),
        case(
            &["index", "pull", "--remote", "s3://", "--name", "shop"],
            1,
            "remote s3://",
        ),
        // The fleet: a dead server or a bad URL is named, never waited on.
        case(&["fleet", "status"], 2, "--nats <URL>"),
        case(
            &["fleet", "status", "--nats", "nats://127.0.0.1:1"],
            1,
            "nats nats://127.0.0.1:1",
        ),
        case(
            &["fleet", "search", "--nats", "nats://127.0.0.1:1", "x"],
            2,
            "--groups <LIST>",
        ),
        case(&["worker"], 2, "--nats <URL>"),
        case(
            &["worker", "--nats", "not a url", "--remote", "file:///tmp/x"],
            1,
            "NATS server URL is invalid",
        ),
        case(
            &[
                "worker",
                "--nats",
                "nats://127.0.0.1:1",
                "--remote",
                "nonsense://x",
            ],
            1,
            "unsupported scheme \"nonsense\"",
        ),
        case(&["serve", "--fleet"], 2, "--nats <URL>"),
        case(
            &[
                "serve",
                "--fleet",
                "--nats",
                "nats://127.0.0.1:1",
                "--group",
                "g",
                "--groups",
                "0",
            ],
            1,
            "--fleet needs --remote",
        ),
        // The server's own settings.
        case(
            &["serve", "--mcp", "--max-body", "10"],
            1,
            "--max-body must be at least 1024 bytes, not 10",
        ),
        case(
            &["serve", "--http", "127.0.0.1:99999"],
            1,
            "--http 127.0.0.1:99999: not HOST:PORT",
        ),
        case(
            &["serve", "--mcp", "--deadline", "nan"],
            1,
            "--deadline must be between 0 and 3600 seconds, not NaN",
        ),
        case(
            &["serve", "--mcp", "--debounce-ms", "abc"],
            2,
            "invalid value 'abc' for '--debounce-ms <MS>'",
        ),
        // The execution layer and the agent.
        case(&["exec"], 1, "no command given; put it after `--`"),
        case(
            &["exec", "--approval", "sometimes", "--", "ls"],
            2,
            "invalid value 'sometimes'",
        ),
        case(
            &["exec", "--timeout", "0", "--", "ls"],
            1,
            "--timeout: 0 is not a positive number of seconds",
        ),
        case(
            &["exec", "--memory-mib", "0", "--", "ls"],
            1,
            "--memory-mib: 0 MiB is below the 16 MiB",
        ),
        case(
            &["exec", "--max-processes", "0", "--", "ls"],
            1,
            "--max-processes: must be at least 1",
        ),
        case(
            &["exec", "--cpu-seconds", "0", "--", "ls"],
            1,
            "--cpu-seconds: must be at least 1",
        ),
        case(&["agent"], 1, "give the task"),
        case(
            &["agent", "fix it", "--max-steps", "0"],
            2,
            "0 is not in 1..=10000",
        ),
        case(
            &["agent", "fix it", "--max-cost", "nan"],
            2,
            "NaN is not a positive number",
        ),
        case(
            &["agent", "fix it", "--model", "nonsense:x"],
            1,
            "unknown provider `nonsense`",
        ),
        case(
            &["agent", "resume", "no-such-session"],
            1,
            "no session `no-such-session`",
        ),
        case(
            &["agent", "rollback", "no-such-session"],
            1,
            "no session `no-such-session`",
        ),
        case(
            &["audit", "verify", "/nonexistent.jsonl"],
            1,
            "/nonexistent.jsonl: No such file or directory",
        ),
        case(
            &["audit", "show", "/nonexistent.jsonl"],
            1,
            "/nonexistent.jsonl: No such file or directory",
        ),
        case(
            &["audit", "verify", "/dev/zero"],
            1,
            "/dev/zero: not a regular file, so not an audit log",
        ),
        case(
            &["audit", "show", "/dev/urandom"],
            1,
            "/dev/urandom: not a regular file",
        ),
        case(&["read-span", ".git/config"], 1, ".git/config"),
        case(
            &["agent", "fix it", "--model", "local:llama"],
            1,
            "OPENAI_BASE_URL",
        ),
    ];
    assert!(cases.len() >= 80, "{} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let out = Command::new(ken_bin())
            .args(&c.args)
            .current_dir(r)
            .env_remove("KEN_SERVE_TOKEN")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OLLAMA_HOST")
            .env("XDG_STATE_HOME", state.path())
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
            stdout(&out).contains("no supported source files: no code was indexed"),
            "{}",
            stdout(&out)
        );
    }
    // Text it can read is read, and said to be the only thing read.
    let dir = support::materialize("//- notes.txt\nhello\n//- data.csv\na,b\n");
    let out = support::ken(&["index", "build", "."], dir.path());
    assert!(
        stdout(&out).contains("1 files read as text only"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("read as text: text 1"), "{}", stdout(&out));
}

/// The third pass, as a new user met it: special files where files or folders are expected,
/// an index folder that is a file or another repository's, names written with every
/// language's separators, and bounds on the new flags. Each is refused (or answered) by name,
/// with its exit code, within a bounded time: none waits forever on a pipe nobody writes to.
#[test]
fn special_files_foreign_indexes_and_odd_names_are_refused_by_name() {
    let repo = shop_repo();
    let r = repo.path();
    let odd = tempfile::tempdir().unwrap();
    let o = odd.path();
    let path = |n: &str| o.join(n).to_str().unwrap().to_string();
    let mkfifo = |n: &str| {
        assert!(Command::new("mkfifo").arg(o.join(n)).status().unwrap().success());
    };
    mkfifo("pipe");
    let _socket = std::os::unix::net::UnixListener::bind(o.join("sock")).unwrap();
    std::fs::create_dir(o.join("dir")).unwrap();
    std::fs::write(o.join("file"), "hello\n").unwrap();
    // Another repository's index, in a folder of its own.
    let other = support::materialize("//- other.py\ndef other():\n    pass\n");
    let other_index = path("other-index");
    let built = support::ken(&["index", "build", "--index-dir", &other_index], other.path());
    assert!(built.status.success(), "{}", stderr(&built));
    let (pipe, sock, dir, file) = (path("pipe"), path("sock"), path("dir"), path("file"));
    let state = tempfile::tempdir().unwrap();
    let cases = vec![
        case(
            &["search", "--query-file", &pipe],
            1,
            "a named pipe no program writes to",
        ),
        case(
            &["search", "--query-file", &pipe, "--literal"],
            1,
            "a named pipe no program writes to",
        ),
        case(
            &["context", "--query-file", &pipe],
            1,
            "a named pipe no program writes to",
        ),
        case(
            &["ask", "--query-file", &pipe],
            1,
            "a named pipe no program writes to",
        ),
        case(
            &["impact", "--patch", &pipe],
            1,
            "a named pipe no program writes to",
        ),
        case(&["search", "--query-file", &sock], 1, "a socket, not a file"),
        case(&["context", "--query-file", &sock], 1, "a socket, not a file"),
        case(&["impact", "--patch", &sock], 1, "a socket, not a file"),
        case(&["search", "--query-file", &dir], 1, "a folder, not a file"),
        case(&["impact", "--patch", &dir], 1, "a folder, not a file"),
        case(
            &["index", "build", "--index-dir", &file],
            1,
            "it is a file, not a folder",
        ),
        case(
            &["index", "build", "--index-dir", &pipe],
            1,
            "it is a named pipe, not a folder",
        ),
        case(
            &["index", "build", "--index-dir", &sock],
            1,
            "it is a socket, not a folder",
        ),
        case(
            &["search", "x", "--index-dir", &file],
            1,
            "it is a file, not a folder",
        ),
        case(
            &["search", "x", "--index-dir", &pipe],
            1,
            "it is a named pipe, not a folder",
        ),
        case(
            &["symbol", "Cart", "--index-dir", &file],
            1,
            "it is a file, not a folder",
        ),
        case(
            &["callers", "Cart", "--index-dir", &sock],
            1,
            "it is a socket, not a folder",
        ),
        case(
            &["context", "x", "--index-dir", &file],
            1,
            "it is a file, not a folder",
        ),
        case(
            &["index", "status", "--index-dir", &pipe],
            1,
            "it is a named pipe, not a folder",
        ),
        case(
            &["index", "verify", "--index-dir", &file],
            1,
            "it is a file, not a folder",
        ),
        case(
            &["index", "build", "--index-dir", &other_index],
            1,
            "holds the index of",
        ),
        case(
            &["index", "build", "--index-dir", &other_index, "--full"],
            1,
            "pass another --index-dir",
        ),
        case(&["index", "build", &pipe], 1, "is not a directory"),
        case(&["index", "build", &file], 1, "is not a directory"),
        case(&["serve", "--mcp", "--repo", &file], 1, "--repo"),
        case(
            &["serve", "--mcp", "--repo", &pipe],
            1,
            "a named pipe, not a folder",
        ),
        case(
            &["serve", "--mcp", "--repo", "/nonexistent/repo"],
            1,
            "/nonexistent/repo",
        ),
        case(&["audit", "show", &pipe], 1, "not a regular file"),
        case(&["audit", "verify", &sock], 1, "not a regular file"),
        case(&["read-span", &pipe], 1, "absolute paths outside the repository"),
        case(
            &["install", "--scope", "user", "--repo", "."],
            1,
            "--repo does not go with --scope user",
        ),
        case(&["symbol", "::"], 1, "no definition matches"),
        case(&["symbol", "\\"], 1, "no definition matches"),
        case(&["symbol", "#"], 1, "no definition matches"),
        case(&["callers", "::"], 1, "no definition matches"),
        case(&["callers", "\\\\Shop\\\\Nothing"], 1, "no definition matches"),
        case(&["refs", "Cart->nothing"], 1, "no definition matches"),
        case(&["deps", "::"], 1, "is not an indexed file"),
        case(
            &["read-span", "shop/cart.py:3-2"],
            1,
            "the end line is before the start line",
        ),
        case(&["read-span", "shop/cart.py:-3"], 1, "expected path:START-END"),
        case(&["impact", "--range", "garbage"], 1, "expected A..B"),
        case(&["ask", "x", "--max-time", "0"], 2, "0 is not in 1..="),
        case(&["agent", "x", "--max-time", "0"], 2, "0 is not in 1..="),
        case(&["index", "build", "--max-memory", "0"], 2, "is not in 64..="),
        case(
            &["index", "build", "--threads", "100000"],
            2,
            "is not in 0..=1024",
        ),
        case(&["exec", "--"], 1, "no command given"),
    ];
    assert!(cases.len() >= 40, "{} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let mut child = Command::new(ken_bin())
            .args(&c.args)
            .current_dir(r)
            .env_remove("KEN_SERVE_TOKEN")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("ANTHROPIC_API_KEY")
            .env("XDG_STATE_HOME", state.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let t = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() && t.elapsed() < std::time::Duration::from_secs(60) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        if child.try_wait().unwrap().is_none() {
            let _ = child.kill();
            failures.push(format!("ken {:?}: still running after 60 s", c.args));
            continue;
        }
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        let code = out.status.code().unwrap_or(-1);
        if code != c.code || !err.contains(c.says) {
            failures.push(format!(
                "ken {:?}: exit {code} (want {}), stderr {err:?} (want {:?})",
                c.args, c.code, c.says
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {}:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    // The refused build left the other repository's index as it was.
    let still = support::ken(&["symbol", "other", "--index-dir", &other_index], other.path());
    assert!(stdout(&still).contains("other.py"), "{}", stderr(&still));
}
