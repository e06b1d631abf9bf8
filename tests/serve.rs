//! `ken serve`: the CLI and the JSON API answer the same request with the same response; bad
//! input is refused by name over a real loopback socket (and a bounded fuzz never crashes the
//! server or reads outside the repository); remote binding needs a token; saved files become
//! queryable; MCP over stdio speaks the session-based protocol revisions. With
//! `KEN_MCP_E2E=1`, MCP clients no one here wrote drive both transports
//! (`tests/e2e/mcp_clients.py`, installed by `.ci/install_mcp_clients.sh`).

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::serve::{post, request, shop_repo, start};
use support::{ken_bin, stderr, stdout};

/// Drops what legitimately differs between two answers a second apart.
fn normalized(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("index_age_secs");
                m.remove("age_secs");
                m.values_mut().for_each(walk);
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    v
}

const PATCH: &str = "--- a/shop/pricing.py\n+++ b/shop/pricing.py\n@@ -6,3 +6,3 @@\n def apply_discount(amount, percent):\n     \"\"\"Reduce an amount by a percentage discount code.\"\"\"\n-    if percent < 0 or percent > 100:\n+    if percent < 0 or percent >= 100:\n";

#[test]
fn cli_json_is_the_servers_response_for_every_operation() {
    let repo = shop_repo();
    std::fs::write(repo.path().join("fix.diff"), PATCH).unwrap();
    let server = start(repo.path(), &["--no-watch"], &[]);
    let cases: Vec<(Vec<&str>, &str, Value)> = vec![
        (
            vec!["search", "discount", "--json"],
            "search",
            json!({"query": "discount"}),
        ),
        (
            vec!["search", "--lexical", "discount", "--json"],
            "search",
            json!({"query": "discount", "mode": "lexical"}),
        ),
        (
            vec![
                "search",
                "--semantic",
                "charge the card again when the connection drops",
                "--json",
            ],
            "search",
            json!({"query": "charge the card again when the connection drops", "mode": "semantic"}),
        ),
        (
            vec!["search", "--lexical", "--files", "discount tax", "--json"],
            "search",
            json!({"query": "discount tax", "mode": "files"}),
        ),
        (
            vec!["search", "--symbols", "Cart", "--json"],
            "search",
            json!({"query": "Cart", "mode": "symbols"}),
        ),
        (
            vec!["search", "--literal", "apply_discount(", "--json"],
            "search",
            json!({"query": "apply_discount(", "mode": "literal"}),
        ),
        (
            vec!["search", "--regex", "def (add|total)", "-i", "--json"],
            "search",
            json!({"query": "def (add|total)", "mode": "regex", "ignore_case": true}),
        ),
        (
            vec!["symbol", "Cart", "--json"],
            "symbol",
            json!({"name": "Cart"}),
        ),
        (
            vec!["callers", "apply_discount", "--json"],
            "callers",
            json!({"symbol": "apply_discount"}),
        ),
        (
            vec!["callees", "shop.cart.Cart.total", "--depth", "2", "--json"],
            "callees",
            json!({"symbol": "shop.cart.Cart.total", "depth": 2}),
        ),
        (vec!["refs", "Cart", "--json"], "refs", json!({"symbol": "Cart"})),
        (
            vec!["deps", "shop/cart.py", "--json"],
            "deps",
            json!({"file": "shop/cart.py"}),
        ),
        (vec!["graph", "stats", "--json"], "graph_stats", json!({})),
        (
            vec![
                "context",
                "the cart total is wrong when a discount code is applied",
                "--format",
                "json",
            ],
            "context",
            json!({"task": "the cart total is wrong when a discount code is applied"}),
        ),
        (
            vec!["ask", "where is the card charged?", "--format", "json"],
            "ask",
            json!({"question": "where is the card charged?"}),
        ),
        (vec!["overview", "--format", "json"], "overview", json!({})),
        (
            vec!["impact", "--patch", "fix.diff", "--json"],
            "impact",
            json!({"patch": PATCH}),
        ),
        (
            vec!["impact", "--symbol", "apply_discount", "--json"],
            "impact",
            json!({"symbols": ["apply_discount"]}),
        ),
        (vec!["index", "status", "--json"], "index_status", json!({})),
        (
            vec!["read-span", "shop/cart.py:5-12", "--json"],
            "read_span",
            json!({"span": "shop/cart.py:5-12"}),
        ),
    ];
    for (args, op, body) in cases {
        let out = Command::new(ken_bin())
            .args(&args)
            .current_dir(repo.path())
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .output()
            .unwrap();
        assert!(!out.stdout.is_empty(), "ken {args:?}: {}", stderr(&out));
        let cli: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let reply = post(server.addr, op, &body);
        assert_eq!(reply.status, 200, "{op} {body}: {}", reply.body);
        let served = reply.json();
        assert_eq!(
            normalized(cli),
            normalized(served.clone()),
            "ken {args:?} differs from POST /v1/{op}"
        );
        assert!(
            served["generation"].as_u64().is_some_and(|g| g > 0),
            "{op}: {served}"
        );
        assert!(
            served["coverage"]["files_indexed"]
                .as_u64()
                .is_some_and(|n| n >= 6),
            "{op}"
        );
    }
}

#[test]
fn bad_input_is_refused_by_name_and_nothing_outside_the_repository_is_read() {
    let repo = shop_repo();
    std::os::unix::fs::symlink("/etc/passwd", repo.path().join("leak.py")).unwrap();
    let server = start(repo.path(), &["--no-watch"], &[]);
    let a = server.addr;
    let refused = |op: &str, body: Value, status: u16, needle: &str| {
        let r = post(a, op, &body);
        assert_eq!(r.status, status, "{op} {body}: {}", r.body);
        let v = r.json();
        let msg = v["error"]["message"].as_str().unwrap_or_default().to_string();
        assert!(
            msg.contains(needle),
            "{op} {body}: {msg:?} should name {needle:?}"
        );
        assert!(
            !r.body.contains("root:x:0:0"),
            "read outside the repository: {}",
            r.body
        );
    };
    refused(
        "read_span",
        json!({"span": "../etc/passwd"}),
        403,
        "../etc/passwd",
    );
    refused(
        "read_span",
        json!({"span": "/etc/passwd:1-3"}),
        403,
        "/etc/passwd",
    );
    refused("read_span", json!({"span": "leak.py"}), 403, "leak.py");
    refused(
        "read_span",
        json!({"span": ".git/config"}),
        403,
        ".git/config: version-control internals",
    );
    refused("read_span", json!({"span": "shop/cart.py\u{0}"}), 403, "NUL");
    refused(
        "read_span",
        json!({"span": ".kenning/CURRENT"}),
        403,
        ".kenning/CURRENT",
    );
    refused(
        "read_span",
        json!({"span": "shop/../../x.py"}),
        403,
        "shop/../../x.py",
    );
    refused(
        "read_span",
        json!({"span": "shop/cart.py:900-901"}),
        400,
        "past its end",
    );
    refused("deps", json!({"file": "../outside.py"}), 403, "../outside.py");
    refused("search", json!({"query": "x", "limit": 0}), 400, "limit");
    refused("search", json!({"query": "x", "limit": 10_000_000}), 400, "limit");
    refused(
        "context",
        json!({"task": "x", "max_tokens": 0}),
        400,
        "max_tokens",
    );
    refused("search", json!({"query": "x", "colour": "red"}), 400, "colour");
    refused(
        "search",
        json!({"query": "x", "cursor": "nonsense"}),
        400,
        "cursor",
    );
    refused(
        "callers",
        json!({"symbol": "Cart.add", "depth": 99}),
        400,
        "depth",
    );
    refused("impact", json!({"range": "--output=/tmp/x..HEAD"}), 400, "range");
    refused("nonsense", json!({}), 404, "nonsense");
    let r = request(a, "POST", "/v1/search", &[], b"{not json");
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not JSON")
    );
    let r = request(a, "POST", "/v1/search", &[], b"[1, 2]");
    assert_eq!(r.status, 400, "{}", r.body);
    let big = vec![b' '; 3 << 20];
    assert_eq!(request(a, "POST", "/v1/search", &[], &big).status, 413);
    // A query larger than the cap is cut, with a note, and answered.
    let long = "discount ".repeat(200_000);
    let r = post(a, "search", &json!({"query": long, "mode": "lexical"}));
    assert_eq!(r.status, 200, "{}", &r.body[..r.body.len().min(300)]);
    assert!(
        r.json()["notes"][0].as_str().unwrap().contains("only its first"),
        "{}",
        &r.body[..300]
    );
    // DNS rebinding: a foreign Host or Origin is refused before any operation runs.
    let evil_host = request(a, "GET", "/v1/status", &[("Host", "evil.example:80")], b"");
    assert_eq!(evil_host.status, 403, "{}", evil_host.body);
    let evil_origin = request(
        a,
        "POST",
        "/v1/symbol",
        &[("Origin", "http://evil.example")],
        b"{\"name\":\"Cart\"}",
    );
    assert_eq!(evil_origin.status, 403, "{}", evil_origin.body);
    let ok_origin = request(
        a,
        "POST",
        "/v1/symbol",
        &[("Origin", "http://localhost:3000")],
        b"{\"name\":\"Cart\"}",
    );
    assert_eq!(ok_origin.status, 200, "{}", ok_origin.body);
    // A token budget cuts the status's lists, never its counts.
    let r = post(a, "index_status", &json!({"max_tokens": 50})).json();
    assert!(r["summary"]["files"].as_u64().unwrap() > 0, "{r}");
    let r = post(a, "impact", &json!({"symbols": vec!["Cart"; 101]}));
    assert_eq!(r.status, 400, "{}", r.body);
    // What is allowed works: a span, and pages that walk a list.
    let r = post(a, "read_span", &json!({"span": "shop/cart.py:5-7"})).json();
    assert_eq!(r["text"].as_str().unwrap().lines().count(), 3, "{r}");
    assert!(r["text"].as_str().unwrap().contains("class Cart"), "{r}");
    let first = post(
        a,
        "search",
        &json!({"query": "cart", "mode": "lexical", "limit": 1}),
    )
    .json();
    let cursor = first["page"]["next_cursor"]
        .as_str()
        .expect("a next page")
        .to_string();
    let second = post(
        a,
        "search",
        &json!({"query": "cart", "mode": "lexical", "limit": 1, "cursor": cursor}),
    )
    .json();
    assert_eq!(second["page"]["offset"], 1);
    assert_ne!(first["hits"][0], second["hits"][0]);
    assert_eq!(request(a, "GET", "/healthz", &[], b"").status, 200);
    assert_eq!(
        request(a, "GET", "/v1/status", &[], b"").json()["generation"],
        first["generation"]
    );
}

/// xorshift: a fixed sequence, so a failure reproduces.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

#[test]
fn a_bounded_fuzz_of_malformed_bodies_never_crashes_the_server() {
    let repo = shop_repo();
    let server = start(repo.path(), &["--no-watch"], &[]);
    let ops = [
        "search",
        "symbol",
        "callers",
        "callees",
        "refs",
        "deps",
        "graph_stats",
        "context",
        "overview",
        "impact",
        "index_status",
        "read_span",
    ];
    let keys = [
        "query",
        "name",
        "symbol",
        "file",
        "task",
        "span",
        "limit",
        "max_tokens",
        "cursor",
        "mode",
        "depth",
        "patch",
        "symbols",
        "range",
    ];
    let values = [
        "null",
        "0",
        "-1",
        "1e308",
        "18446744073709551616",
        "\"\"",
        "\"../../etc/passwd\"",
        "\"/etc/shadow\"",
        "true",
        "[]",
        "{}",
        "\"\\u0000\"",
        "\"shop/cart.py:1-99999999\"",
        "\"lexical\"",
        "\"hybrid\"",
        "\"p-1\"",
        "[\"Cart\"]",
        "\"--- a/x\\n+++ b/x\\n@@ -1 +1 @@\\n-a\\n+b\\n\"",
        "\"HEAD~999..HEAD\"",
        "0.5",
        "\"Cart\"",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..300 {
        let op = rng.pick(&ops);
        let body: Vec<u8> = match i % 4 {
            0 => (0..(rng.next() % 64)).map(|_| rng.next() as u8).collect(),
            1 => {
                let mut s = String::from("{");
                for j in 0..(rng.next() % 4) {
                    if j > 0 {
                        s.push(',');
                    }
                    s.push_str(&format!("\"{}\":{}", rng.pick(&keys), rng.pick(&values)));
                }
                s.push('}');
                s.into_bytes()
            }
            2 => {
                let s = format!("{{\"{}\":{}}}", rng.pick(&keys), rng.pick(&values));
                let cut = (rng.next() as usize) % s.len();
                s.as_bytes()[..cut].to_vec()
            }
            _ => "[".repeat((rng.next() % 2000) as usize).into_bytes(),
        };
        let r = request(server.addr, "POST", &format!("/v1/{op}"), &[], &body);
        assert!(
            [200, 400, 403, 404, 413].contains(&r.status),
            "POST /v1/{op} {:?} -> {} {}",
            String::from_utf8_lossy(&body),
            r.status,
            r.body
        );
        assert!(
            serde_json::from_str::<Value>(&r.body).is_ok(),
            "{op}: not JSON: {}",
            r.body
        );
        assert!(
            !r.body.contains("root:x:0:0") && !r.body.contains("root:*:"),
            "{op} read outside: {}",
            r.body
        );
    }
    assert_eq!(request(server.addr, "GET", "/healthz", &[], b"").status, 200);
}

#[test]
fn remote_addresses_need_allow_remote_and_a_token_and_the_token_is_checked() {
    let repo = shop_repo();
    let run = |args: &[&str], token: Option<&str>| {
        let mut c = Command::new(ken_bin());
        c.args(["serve", "--no-watch", "--repo"])
            .arg(repo.path())
            .args(args)
            .env_remove("KEN_SERVE_TOKEN");
        if let Some(t) = token {
            c.env("KEN_SERVE_TOKEN", t);
        }
        c.stdin(Stdio::null()).output().unwrap()
    };
    let out = run(&["--http", "0.0.0.0:0"], None);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--allow-remote") && stderr(&out).contains("KEN_SERVE_TOKEN"),
        "{}",
        stderr(&out)
    );
    let out = run(&["--http", "0.0.0.0:0", "--allow-remote"], None);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("KEN_SERVE_TOKEN"), "{}", stderr(&out));
    let out = run(&[], None);
    assert!(stderr(&out).contains("--mcp"), "{}", stderr(&out));
    let token = "s3cret-token-for-the-test-0123";
    let server = start(repo.path(), &["--no-watch"], &[("KEN_SERVE_TOKEN", token)]);
    let body = br#"{"name":"Cart"}"#;
    assert_eq!(request(server.addr, "POST", "/v1/symbol", &[], body).status, 401);
    let wrong = request(
        server.addr,
        "POST",
        "/v1/symbol",
        &[("Authorization", "Bearer nope")],
        body,
    );
    assert_eq!(wrong.status, 401);
    let auth = format!("Bearer {token}");
    let right = request(
        server.addr,
        "POST",
        "/v1/symbol",
        &[("Authorization", &auth)],
        body,
    );
    assert_eq!(right.status, 200, "{}", right.body);
    assert_eq!(request(server.addr, "GET", "/healthz", &[], b"").status, 200);
    let mcp = request(server.addr, "POST", "/mcp", &[], b"{}");
    assert_eq!(mcp.status, 401, "the MCP endpoint is behind the token too");
}

#[test]
fn a_saved_file_becomes_queryable_and_answers_never_mix_generations() {
    let repo = shop_repo();
    let server = start(repo.path(), &["--debounce-ms", "100"], &[]);
    let before = post(server.addr, "symbol", &json!({"name": "refund_order"})).json();
    assert!(before["hits"].as_array().unwrap().is_empty());
    let g0 = before["generation"].as_u64().unwrap();
    std::fs::write(
        repo.path().join("shop/refunds.py"),
        "from shop.payment import charge\n\n\ndef refund_order(card, amount):\n    return charge(card, -amount)\n",
    )
    .unwrap();
    let saved = Instant::now();
    let found = loop {
        let r = post(server.addr, "symbol", &json!({"name": "refund_order"}));
        assert_eq!(r.status, 200, "{}", r.body);
        let v = r.json();
        if !v["hits"].as_array().unwrap().is_empty() {
            break v;
        }
        assert!(
            saved.elapsed() < Duration::from_secs(30),
            "the saved file never became queryable: {v}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(found["generation"].as_u64().unwrap() > g0, "{found}");
    assert_eq!(found["coverage"]["generation"], found["generation"]);
    // The new generation's graph sees the new caller, and the status reports the refresh.
    let callers = post(server.addr, "callers", &json!({"symbol": "shop.payment.charge"})).json();
    let names: Vec<&str> = callers["reached"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["symbol"]["name"].as_str())
        .collect();
    assert!(names.contains(&"refund_order"), "{names:?}");
    // The refresh is recorded once the build that made the generation returns, just after the
    // swap that made it queryable.
    let status = loop {
        let status = post(server.addr, "index_status", &json!({})).json();
        if status["last_refresh"]["save_to_queryable_ms"].as_u64().is_some() {
            break status;
        }
        assert!(
            saved.elapsed() < Duration::from_secs(30),
            "no refresh recorded: {}",
            status["last_refresh"]
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status["watching"], true);
    assert_eq!(status["coverage"]["stale"], 0);
}

fn send(stdin: &mut impl Write, v: Value) {
    writeln!(stdin, "{v}").unwrap();
    stdin.flush().unwrap();
}

/// `ken serve --mcp ARGS --repo REPO` on stdio, driven by raw JSON-RPC lines.
struct McpStdio {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl McpStdio {
    fn start(repo: &std::path::Path, args: &[&str]) -> McpStdio {
        let mut child = Command::new(ken_bin())
            .args(["serve", "--mcp"])
            .args(args)
            .arg("--repo")
            .arg(repo)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        McpStdio { child, stdin, lines }
    }

    fn send(&mut self, v: Value) {
        send(&mut self.stdin, v);
    }

    /// One line of raw bytes, as a client that writes anything might.
    fn send_raw(&mut self, line: &[u8]) {
        self.stdin.write_all(line).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Every message up to and including the reply to request `id`.
    fn until_reply(&mut self, id: u64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let v: Value = serde_json::from_str(&self.lines.next().expect("a reply").unwrap()).unwrap();
            let done = v["id"] == id;
            seen.push(v);
            if done {
                return seen;
            }
        }
    }

    /// The reply to request `id` (notifications and other replies skipped).
    fn reply(&mut self, id: u64) -> Value {
        self.reply_and_notifications(id).0
    }

    /// The reply to request `id`, and the notifications that came before it.
    fn reply_and_notifications(&mut self, id: u64) -> (Value, Vec<Value>) {
        let mut notes = Vec::new();
        loop {
            let v: Value = serde_json::from_str(&self.lines.next().expect("a reply").unwrap()).unwrap();
            if v["id"] == id {
                return (v, notes);
            }
            if v.get("id").is_none() {
                notes.push(v);
            }
        }
    }

    /// `initialize` at `version`, then `notifications/initialized`; the initialize reply.
    fn initialize(&mut self, version: &str) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}),
        );
        let init = self.reply(1);
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        init
    }

    /// One `tools/call`, answered.
    fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}));
        self.reply(id)
    }

    /// Closes the client's side; the server process, to wait for.
    fn close(self) -> std::process::Child {
        drop(self.stdin);
        self.child
    }
}

#[test]
fn mcp_over_stdio_speaks_the_session_protocol_revisions() {
    let repo = shop_repo();
    // The first session gets the default (core) tool list, the second the full one.
    for (version, set) in [("2025-06-18", "core"), ("2025-11-25", "full")] {
        let mut mcp = McpStdio::start(repo.path(), &["--no-watch", "--tools", set]);
        let init = mcp.initialize(version);
        assert_eq!(init["result"]["protocolVersion"], version, "{init}");
        assert_eq!(init["result"]["serverInfo"]["name"], "kenning");
        mcp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        let listed = mcp.reply(2);
        let listed_chars = listed["result"].to_string().len();
        let tools = listed["result"]["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        let core = [
            "search",
            "context",
            "symbol",
            "callers",
            "refs",
            "impact",
            "read_span",
            "overview",
        ];
        let full = ["callees", "deps", "index_status", "reindex"];
        match set {
            "core" => {
                assert_eq!(names, core, "{names:?}");
                // Paid by every session before it asks anything.
                assert!(
                    listed_chars <= 8000,
                    "core tools/list is {listed_chars} characters"
                );
                for t in tools {
                    assert!(t.get("outputSchema").is_none(), "{t}");
                    assert!(t["inputSchema"].get("$schema").is_none(), "{t}");
                    assert!(!t["description"].as_str().unwrap().is_empty());
                }
            }
            _ => {
                for n in core.iter().chain(&full) {
                    assert!(names.contains(n), "{n} missing from {names:?}");
                }
                assert!(listed_chars > 8000, "{listed_chars}");
                for t in tools {
                    assert_eq!(t["outputSchema"]["type"], "object");
                    assert!(t["description"].as_str().unwrap().len() > 40);
                }
            }
        }
        for t in tools {
            assert_eq!(t["annotations"]["readOnlyHint"], t["name"] != "reindex", "{t}");
            assert_eq!(t["annotations"]["openWorldHint"], false);
        }
        let r = mcp.call(3, "search", json!({"query": "discount", "max_tokens": 200}));
        let sc = &r["result"]["structuredContent"];
        assert!(sc["generation"].as_u64().is_some(), "{r}");
        // The model reads spans and a coverage line, not the JSON again.
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        assert!(text.len() < sc.to_string().len() / 2, "{text}");
        let first = &sc["files"][0];
        assert!(
            text.starts_with(&format!(
                "{}:{}-",
                first["path"].as_str().unwrap(),
                first["chunks"][0]["start_line"]
            )),
            "{text}\n{sc}"
        );
        assert!(text.contains("\ncoverage: generation "), "{text}");
        if set == "core" {
            // A tool not offered is not answered either.
            let r = mcp.call(9, "reindex", json!({}));
            assert!(r["error"].is_object(), "{r}");
        }
        let r = mcp.call(4, "read_span", json!({"span": "../etc/passwd"}));
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert!(
            r["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("../etc/passwd")
        );
        let mut child = mcp.close();
        let t0 = Instant::now();
        while child.try_wait().unwrap().is_none() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "ken serve --mcp outlived its client"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[test]
fn mcp_clients_no_one_here_wrote_drive_both_transports() {
    if std::env::var("KEN_MCP_E2E").as_deref() != Ok("1") {
        eprintln!("skipped: set KEN_MCP_E2E=1 after .ci/install_mcp_clients.sh (as .ci/run does)");
        return;
    }
    let python = std::env::var("E2E_PYTHON").expect("E2E_PYTHON from .ci/install_mcp_clients.sh");
    let node = std::env::var("E2E_NODE_BIN").expect("E2E_NODE_BIN from .ci/install_mcp_clients.sh");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(python)
        .arg(root.join("tests/e2e/mcp_clients.py"))
        .args(["--ken", ken_bin(), "--fixture"])
        .arg(root.join("fixtures/serve/shop"))
        .args(["--node-bin", &node])
        .output()
        .unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(out.status.success(), "{text}");
    assert!(text.contains(" 0 failed"), "{text}");
}

#[test]
fn serve_without_an_index_builds_one_first() {
    let repo = tempfile::tempdir().unwrap();
    support::write_tree(repo.path(), "//- a.py\ndef hello():\n    return 1\n");
    let server = start(repo.path(), &["--no-watch"], &[]);
    let v = post(server.addr, "symbol", &json!({"name": "hello"})).json();
    assert_eq!(v["hits"][0]["path"], "a.py", "{v}");
}

/// The value of one sample line of a Prometheus text exposition.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
}

#[test]
fn metrics_count_and_time_every_operation_by_outcome() {
    let repo = shop_repo();
    // Two finished agent sessions (one completed, after 4 model calls; one failed, after 2)
    // and one still running, in the state folder the server reports on.
    let state = tempfile::tempdir().unwrap();
    for (name, end) in [
        ("s1", Some(("completed", 4))),
        ("s2", Some(("failed", 2))),
        ("s3", None),
    ] {
        let d = state.path().join("kenning/agent").join(name);
        std::fs::create_dir_all(&d).unwrap();
        // Real, hash-chained logs: the figures count only logs that verify.
        let mut log = kenning::exec::AuditLog::open(&d.join("audit.jsonl")).unwrap();
        log.append(&json!({"kind": "started"})).unwrap();
        if let Some((st, steps)) = end {
            log.append(&json!({"kind": "finished", "state": st, "steps": steps}))
                .unwrap();
        }
    }
    let state_home = state.path().to_str().unwrap();
    let server = start(repo.path(), &["--no-watch"], &[("XDG_STATE_HOME", state_home)]);
    let a = server.addr;
    for _ in 0..2 {
        assert_eq!(post(a, "search", &json!({"query": "discount"})).status, 200);
    }
    assert_eq!(
        post(a, "search", &json!({"query": "discount", "limit": -3})).status,
        400
    );
    assert_eq!(request(a, "GET", "/v1/status", &[], b"").status, 200);
    let r = request(a, "GET", "/metrics", &[], b"");
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.headers
            .to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text"),
        "{}",
        r.headers
    );
    let m = &r.body;
    assert!(m.trim_end().ends_with("# EOF"), "{m}");
    assert_eq!(
        sample(m, r#"ken_requests_total{operation="search",outcome="ok"}"#),
        Some(2.0),
        "{m}"
    );
    assert_eq!(
        sample(
            m,
            r#"ken_requests_total{operation="search",outcome="invalid_argument"}"#
        ),
        Some(1.0),
        "{m}"
    );
    assert_eq!(
        sample(m, r#"ken_requests_total{operation="index_status",outcome="ok"}"#),
        Some(1.0),
        "{m}"
    );
    assert_eq!(
        sample(m, r#"ken_request_duration_seconds_count{operation="search"}"#),
        Some(3.0),
        "{m}"
    );
    let spent = sample(m, r#"ken_request_duration_seconds_sum{operation="search"}"#).unwrap_or(-1.0);
    assert!(spent > 0.0 && spent < 60.0, "{m}");
    assert!(m.contains("# TYPE ken_request_duration_seconds histogram"), "{m}");
    assert_eq!(sample(m, "ken_requests_in_flight"), Some(0.0), "{m}");
    assert_eq!(sample(m, "ken_index_generation"), Some(1.0), "{m}");
    assert!(sample(m, "ken_index_files").unwrap_or(0.0) >= 3.0, "{m}");
    // Task success rate and average iterations, from the agent's audit logs.
    assert_eq!(sample(m, "ken_agent_sessions"), Some(2.0), "{m}");
    assert_eq!(sample(m, "ken_agent_success_ratio"), Some(0.5), "{m}");
    assert_eq!(sample(m, "ken_agent_average_iterations"), Some(3.0), "{m}");
    // Counts only grow: a second scrape sees the first scrape's request nowhere and the
    // same operations again.
    let again = request(a, "GET", "/metrics", &[], b"").body;
    assert_eq!(
        sample(&again, r#"ken_requests_total{operation="search",outcome="ok"}"#),
        Some(2.0)
    );
}

/// Requests no client should send, each with what it must be answered: the id (`null` when
/// it cannot be read), the JSON-RPC error code, and a word of the message.
fn malformed_mcp_requests() -> Vec<(&'static str, Vec<u8>, Value, i64, &'static str)> {
    let call = |id: u64, params: &[u8]| {
        [
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":"#).as_bytes(),
            params,
            b"}",
        ]
        .concat()
    };
    let big = [
        br#"{"name":"search","arguments":{"query":""#.as_slice(),
        &vec![b'a'; 20 << 20],
        br#""}}"#,
    ]
    .concat();
    let deep = [b"[".repeat(100_000), b"]".repeat(100_000)].concat();
    vec![
        ("a 20 MB line", call(101, &big), json!(101), -32600, "limit"),
        (
            "100,000 nested arrays",
            call(102, &deep),
            json!(102),
            -32600,
            "nest",
        ),
        (
            "invalid UTF-8",
            call(
                103,
                b"{\"name\":\"search\",\"arguments\":{\"query\":\"\xff\xfe\"}}",
            ),
            json!(103),
            -32700,
            "UTF-8",
        ),
        (
            "params not an object",
            call(104, b"5"),
            json!(104),
            -32602,
            "tools/call",
        ),
        (
            "a name not a string",
            call(105, br#"{"name":5}"#),
            json!(105),
            -32602,
            "tools/call",
        ),
        (
            "tools/list params an array",
            br#"{"jsonrpc":"2.0","id":"s-106","method":"tools/list","params":[1]}"#.to_vec(),
            json!("s-106"),
            -32602,
            "tools/list",
        ),
        (
            "JSON cut short",
            br#"{"jsonrpc":"2.0","id":107,"#.to_vec(),
            json!(107),
            -32700,
            "parse",
        ),
        ("no JSON at all", b"hello".to_vec(), Value::Null, -32700, "parse"),
    ]
}

/// Each malformed line gets exactly one answer, with the request's id where it can be read,
/// and the server answers the next request as if nothing had happened.
#[test]
fn every_malformed_mcp_line_is_answered_once_and_the_server_goes_on() {
    let repo = shop_repo();
    let mut mcp = McpStdio::start(repo.path(), &["--no-watch"]);
    mcp.initialize("2025-06-18");
    for (i, (what, line, id, code, word)) in malformed_mcp_requests().into_iter().enumerate() {
        mcp.send_raw(&line);
        let ping = 1000 + i as u64;
        mcp.send(json!({"jsonrpc": "2.0", "id": ping, "method": "ping"}));
        let seen = mcp.until_reply(ping);
        assert_eq!(seen.len(), 2, "{what}: one answer, then the ping's: {seen:?}");
        let e = &seen[0];
        assert_eq!(e["id"], id, "{what}: {e}");
        assert_eq!(e["error"]["code"], code, "{what}: {e}");
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.contains(word), "{what}: {message}");
        assert_eq!(seen[1]["result"], json!({}), "{what}: {}", seen[1]);
    }
    // A real call still answers.
    let r = mcp.call(2000, "search", json!({"query": "discount"}));
    assert_ne!(r["result"]["isError"], true, "{r}");
    mcp.close().wait().unwrap();
}

/// Over streamable HTTP the same bodies get a JSON-RPC error with their id (413 over the
/// body limit, 400 otherwise), not rmcp's plain-text 415, and a good request still answers.
#[test]
fn malformed_mcp_bodies_over_http_get_a_json_rpc_error_with_their_id() {
    let repo = shop_repo();
    let server = start(repo.path(), &["--mcp", "--no-watch"], &[]);
    let headers = [("Accept", "application/json, text/event-stream")];
    for (what, body, id, code, word) in malformed_mcp_requests() {
        let r = request(server.addr, "POST", "/mcp", &headers, &body);
        let status = if what == "a 20 MB line" { 413 } else { 400 };
        assert_eq!(r.status, status, "{what}: {}", r.body);
        let e = r.json();
        assert_eq!(e["id"], id, "{what}: {e}");
        assert_eq!(e["error"]["code"], code, "{what}: {e}");
        assert!(
            e["error"]["message"].as_str().unwrap().contains(word),
            "{what}: {e}"
        );
    }
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let r = request(server.addr, "POST", "/mcp", &headers, init.to_string().as_bytes());
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains(r#""serverInfo""#), "{}", r.body);
}

/// The lines of an answer that are the answer: not its notes, next page or coverage.
fn answer_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| {
            !["note: ", "more: ", "coverage: "]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .collect()
}

/// At the smallest budgets every core tool still answers: the footer shrinks first, so the
/// text holds real answer lines, and never more tokens than asked.
#[test]
fn a_small_budget_still_answers_with_the_best_lines() {
    let repo = shop_repo();
    let mut mcp = McpStdio::start(repo.path(), &["--no-watch"]);
    mcp.initialize("2025-06-18");
    let calls = [
        ("search", json!({"query": "discount tax total"}), "shop/"),
        (
            "context",
            json!({"task": "the discount is applied twice when tax is added"}),
            "shop/",
        ),
        ("symbol", json!({"name": "Cart"}), "class shop.cart.Cart"),
        (
            "callers",
            json!({"symbol": "shop.cart.Cart.total"}),
            "shop.checkout.checkout",
        ),
        (
            "refs",
            json!({"symbol": "shop.cart.Cart.total"}),
            "shop/checkout.py:",
        ),
        ("impact", json!({"symbols": ["shop.cart.Cart.total"]}), "risk "),
        ("read_span", json!({"span": "shop/cart.py"}), "shop/cart.py:1-"),
        ("overview", json!({}), "## Overview"),
    ];
    let mut id = 10;
    for (tool, args, first) in &calls {
        for budget in [50, 60, 100] {
            let mut a = args.clone();
            a["max_tokens"] = json!(budget);
            id += 1;
            let r = mcp.call(id, tool, a);
            assert_ne!(r["result"]["isError"], true, "{tool} at {budget}: {r}");
            let text = r["result"]["content"][0]["text"].as_str().unwrap();
            let tokens = kenning::context::count_tokens(text);
            assert!(tokens <= budget, "{tool} at {budget}: {tokens} tokens\n{text}");
            let lines = answer_lines(text);
            assert!(
                lines.first().is_some_and(|l| l.contains(first)),
                "{tool} at {budget}: no answer line\n{text}"
            );
            assert!(!text.contains("the answer was cut here"), "{text}");
        }
    }
    // A budget under the minimum is refused by the number the client sent.
    let r = mcp.call(id + 1, "search", json!({"query": "discount", "max_tokens": 10}));
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("max_tokens: 10 is below the minimum of 50"), "{r}");
    mcp.close().wait().unwrap();
}

/// Every core tool, over MCP, at budgets from 60 to 8,000 tokens: the text the model reads
/// (every content block, counted with cl100k) stays within the budget, and a
/// call without a budget gets the server's default, never more than 4,000 tokens.
#[test]
fn every_core_tool_keeps_its_token_budget_as_the_model_reads_it() {
    let repo = shop_repo();
    let mut mcp = McpStdio::start(repo.path(), &["--no-watch"]);
    mcp.initialize("2025-06-18");
    let calls = [
        ("search", json!({"query": "discount tax total"})),
        (
            "context",
            json!({"task": "the discount is applied twice when tax is added"}),
        ),
        ("symbol", json!({"name": "Cart"})),
        ("callers", json!({"symbol": "shop.cart.Cart.total"})),
        ("refs", json!({"symbol": "shop.cart.Cart.total"})),
        ("impact", json!({"symbols": ["shop.cart.Cart.total"]})),
        ("read_span", json!({"span": "shop/cart.py"})),
        ("overview", json!({})),
    ];
    let mut id = 10;
    let mut over = Vec::new();
    for (tool, args) in &calls {
        for budget in [
            None,
            Some(60),
            Some(100),
            Some(300),
            Some(1000),
            Some(4000),
            Some(8000),
        ] {
            let mut a = args.clone();
            if let Some(b) = budget {
                a["max_tokens"] = json!(b);
            }
            id += 1;
            let r = mcp.call(id, tool, a);
            assert_ne!(r["result"]["isError"], true, "{tool} {budget:?}: {r}");
            let text: String = r["result"]["content"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["text"].as_str().unwrap_or(""))
                .collect();
            let tokens = kenning::context::count_tokens(&text);
            // What the answer cost, against the files it drew from, for the client.
            let meta = &r["result"]["_meta"]["kenning/tokens"];
            assert_eq!(meta["returned"], tokens, "{tool}: {r}");
            if *tool == "search" {
                assert!(meta["files_drawn_from"].as_u64().unwrap() > 0, "{r}");
            }
            let limit = budget.unwrap_or(4000);
            if tokens > limit {
                over.push(format!("{tool} at {budget:?}: {tokens} tokens\n{text}"));
            }
        }
    }
    // A tool not offered (the full set's) is refused, not answered.
    let status = mcp.call(id + 1, "index_status", json!({}));
    assert!(
        status["error"].is_object(),
        "index_status is not a core tool: {status}"
    );
    mcp.close().wait().unwrap();
    assert!(over.is_empty(), "{}", over.join("\n---\n"));
}

/// On a repository without an index, the handshake and the tool list come at once; a call
/// made while the first build runs waits for it up to the deadline and past it says the
/// build is under way; once built, the same call answers.
#[test]
fn a_server_without_an_index_answers_the_handshake_at_once_and_builds_meanwhile() {
    let repo = tempfile::tempdir().unwrap();
    // Enough code that the first build takes far longer than a handshake.
    let body: String = (0..40)
        .map(|i| format!("def helper_{i}(x):\n    return x * {i}\n\n"))
        .collect();
    for i in 0..2500 {
        let dir = repo.path().join(format!("pkg{}", i % 50));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("mod_{i}.py")), &body).unwrap();
    }
    std::fs::write(
        repo.path().join("target_module.py"),
        "def settle_the_invoice(total):\n    return total\n",
    )
    .unwrap();
    let mut mcp = McpStdio::start(repo.path(), &["--no-watch", "--deadline", "0.5"]);
    assert_eq!(
        mcp.initialize("2025-06-18")["result"]["serverInfo"]["name"],
        "kenning"
    );
    mcp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let tools = mcp.reply(2);
    // Listed before the first generation was committed.
    assert!(
        !repo.path().join(".kenning/CURRENT").exists(),
        "the tool list waited for the build"
    );
    assert_eq!(tools["result"]["tools"].as_array().unwrap().len(), 8);
    let mut id = 10;
    let mut building = 0;
    let mut progress: Vec<Value> = Vec::new();
    let mut status_while_building = None;
    let answer = loop {
        id += 1;
        assert!(id < 3000, "no answer after {id} calls");
        // The client asks for progress; while the call waits, the build's comes back.
        mcp.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "symbol", "arguments": {"name": "settle_the_invoice"},
                       "_meta": {"progressToken": format!("p{id}")}}}));
        let (r, notes) = mcp.reply_and_notifications(id);
        progress.extend(
            notes
                .into_iter()
                .filter(|n| n["method"] == "notifications/progress")
                // A call's last notification may come just after its answer, so among the next
                // call's; it is always one of the tokens sent.
                .inspect(|n| {
                    let t = n["params"]["progressToken"].as_str().unwrap_or_default();
                    let k: u64 = t
                        .strip_prefix('p')
                        .and_then(|k| k.parse().ok())
                        .unwrap_or(u64::MAX);
                    assert!(k <= id, "{n}");
                }),
        );
        if r["result"]["isError"] != true {
            break r;
        }
        let text = r["result"]["content"][0]["text"].as_str().unwrap();
        // Right after the build, the first query's cold open may pass the short deadline.
        if text.starts_with("deadline_exceeded") {
            continue;
        }
        assert!(
            text.contains("first index build of this repository is under way") && text.contains("phase"),
            "{text}"
        );
        building += 1;
        assert!(building < 3000, "the build never finished");
        if status_while_building.is_none() {
            id += 1;
            mcp.send(json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
                "params": {"uri": "kenning://index-status"}}));
            let r = mcp.reply(id);
            let text = r["result"]["contents"][0]["text"].as_str().unwrap_or("{}");
            let v: Value = serde_json::from_str(text).unwrap();
            if v["building"] == true {
                status_while_building = Some(v);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        building > 0,
        "the first call came after the build: nothing was tested"
    );
    // Progress notifications came for the waiting calls, each rising within its call.
    assert!(
        !progress.is_empty(),
        "no progress notification while the build ran"
    );
    for pair in progress.windows(2) {
        if pair[0]["params"]["progressToken"] == pair[1]["params"]["progressToken"] {
            assert!(pair[0]["params"]["progress"].as_f64() < pair[1]["params"]["progress"].as_f64());
        }
    }
    assert!(progress.iter().all(|n| {
        let p = n["params"]["progress"].as_f64().unwrap_or(-1.0);
        (0.0..=100.0).contains(&p)
    }));
    assert_eq!(progress[0]["params"]["total"], 100.0);
    assert!(
        progress[0]["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("first index build"),
        "{}",
        progress[0]
    );
    // The status resource said how far the build had got, counting the files to parse (it
    // was read after the first "under way"; a second one means the build still ran then).
    if building >= 2 {
        assert!(
            status_while_building.is_some(),
            "the status resource did not say the build runs"
        );
    }
    if let Some(s) = status_while_building {
        let total = s["files_total"].as_u64().unwrap();
        assert!(total == 0 || total == 2501, "{s}");
        assert!(s["files_parsed"].as_u64().unwrap() <= total, "{s}");
        assert!(s["elapsed_secs"].as_f64().is_some(), "{s}");
    }
    assert_eq!(
        answer["result"]["structuredContent"]["hits"][0]["path"], "target_module.py",
        "{answer}"
    );
    // The first answers come from the first stage (symbols, lexical); the server then builds
    // the graph, semantic and history parts and swaps them in: the coverage stops saying
    // they are not built yet.
    let mut completed = false;
    for _ in 0..600 {
        id += 1;
        mcp.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "symbol", "arguments": {"name": "settle_the_invoice"}}}));
        let r = mcp.reply(id);
        let later = &r["result"]["structuredContent"]["coverage"]["not_built_yet"];
        if later.is_null() || later.as_array().is_some_and(|a| a.is_empty()) {
            completed = true;
            break;
        }
        assert!(later.as_array().unwrap().iter().any(|p| p == "graph"), "{r}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(completed, "the second stage never swapped in");
    mcp.close().wait().unwrap();
}
