//! The fleet on one machine, through real servers no one here wrote: NATS with JetStream
//! (nats-server) for the work queue, the pointers and the shard queries, and an S3 server
//! (moto) for the snapshots, all inside a network namespace that has only loopback. Two
//! workers build a dozen small repositories while faults are injected: a duplicate request
//! (merged), a source that is missing on the first attempt (redelivered, then built), a
//! worker killed mid-build (another finishes the item), NATS restarted mid-queue (the queue
//! survives), a source that never appears (dead-lettered), a repeated upload (nothing sent
//! again) and a stale compare-and-swap of a pointer (rejected). Then three shard servers in
//! two groups answer exactly as one server over every repository, still do with a replica
//! killed, and answer promptly and partially, naming the group, once a group's last replica
//! is gone.

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{commit_all, git, ken_bin};

const NATS_PORT: u16 = 4222;
const S3_PORT: u16 = 45125;

/// A process this test started: killed when dropped.
struct Proc {
    child: Child,
    log: PathBuf,
}

impl Proc {
    fn start(cmd: &mut Command, log: PathBuf) -> Proc {
        let out = fs::File::create(&log).unwrap();
        let err = out.try_clone().unwrap();
        let child = cmd.stdout(out).stderr(err).spawn().unwrap();
        Proc { child, log }
    }

    fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

fn wait_for(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(
            t0.elapsed() < limit,
            "timed out after {limit:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn port_open(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

fn nats_url() -> String {
    format!("nats://127.0.0.1:{NATS_PORT}")
}

/// The moto server's endpoint and test credentials, for object_store's S3 client.
fn aws(cmd: &mut Command) -> &mut Command {
    cmd.env("AWS_ENDPOINT", format!("http://127.0.0.1:{S3_PORT}"))
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_REGION", "us-east-1")
        .env("KEN_NATS", nats_url())
}

fn ken(args: &[&str]) -> std::process::Output {
    aws(Command::new(ken_bin()).args(args)).output().unwrap()
}

fn ken_json(args: &[&str]) -> Value {
    let o = ken(args);
    assert!(
        o.status.success(),
        "ken {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("ken {args:?}: {e}"))
}

fn status() -> Value {
    ken_json(&["fleet", "status", "--json"])
}

/// Repository `i`: a fixture language's sample plus a module of its own, committed.
fn small_repo(root: &Path, i: usize) -> PathBuf {
    let langs = [
        "python",
        "rust",
        "go",
        "java",
        "javascript",
        "typescript",
        "tsx",
        "c",
        "cpp",
    ];
    let dir = root.join(format!("repo{i:02}"));
    fs::create_dir_all(&dir).unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let from = match i {
        0..=8 => fixtures.join("lang").join(langs[i]),
        _ => fixtures.join("serve/shop"),
    };
    copy_tree(&from, &dir);
    fs::write(
        dir.join(format!("ledger_{i}.py")),
        format!(
            "\"\"\"Ledger {i}.\"\"\"\n\n\ndef reconcile_ledger_{i}(entries):\n    \"\"\"Sums the entries of ledger {i}.\"\"\"\n    return sum(e.amount for e in entries)\n\n\nclass Ledger{i}:\n    def post(self, entry):\n        return reconcile_ledger_{i}([entry])\n"
        ),
    )
    .unwrap();
    init(&dir);
    dir
}

fn init(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    commit_all(dir, "first");
}

fn copy_tree(from: &Path, to: &Path) {
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_tree(&e.path(), &target);
        } else {
            fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A repository big enough that its build is still running when the test kills its worker.
fn big_repo(root: &Path) -> PathBuf {
    let dir = root.join("big");
    for m in 0..40 {
        let pkg = dir.join(format!("pkg{m}"));
        fs::create_dir_all(&pkg).unwrap();
        for f in 0..60 {
            let mut s = String::new();
            for k in 0..8 {
                s.push_str(&format!(
                    "def step_{m}_{f}_{k}(value):\n    \"\"\"Step {k} of stage {f}.\"\"\"\n    return helper_{m}_{f}(value) + {k}\n\n\n"
                ));
            }
            s.push_str(&format!("def helper_{m}_{f}(value):\n    return value * 2\n"));
            fs::write(pkg.join(format!("mod{f}.py")), s).unwrap();
        }
    }
    init(&dir);
    dir
}

fn head(dir: &Path) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn worker(id: &str, out: &Path, remote: &str) -> Proc {
    Proc::start(
        aws(&mut Command::new(ken_bin()))
            .args([
                "worker",
                "--json",
                "--ack-wait",
                "3",
                "--max-attempts",
                "3",
                "--retry-delay",
                "2",
            ])
            .args(["--id", id, "--metrics", "127.0.0.1:0"])
            .args(["--remote", remote])
            .arg("--workdir")
            .arg(out.join(format!("work-{id}"))),
        out.join(format!("{id}.log")),
    )
}

fn shard(name: &str, group: &str, groups: &str, out: &Path, remote: &str) -> Proc {
    let p = Proc::start(
        aws(&mut Command::new(ken_bin()))
            .args([
                "serve",
                "--fleet",
                "--group",
                group,
                "--groups",
                groups,
                "--replica",
                name,
            ])
            .args(["--remote", remote, "--http", "127.0.0.1:0"])
            .arg("--cache")
            .arg(out.join(format!("cache-{name}"))),
        out.join(format!("{name}.log")),
    );
    wait_for(&format!("shard {name}"), Duration::from_secs(120), || {
        p.log().contains("serving shard group")
    });
    p
}

/// Worker events of every log in `logs`, as JSON lines.
fn events(logs: &[&Proc]) -> Vec<Value> {
    logs.iter()
        .flat_map(|p| {
            p.log()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|v| v.get("event").is_some())
                .collect::<Vec<_>>()
        })
        .collect()
}

fn count(events: &[Value], event: &str, repo: &str) -> usize {
    events
        .iter()
        .filter(|e| e["event"] == event && e["repo"] == repo)
        .count()
}

fn nats(bin: &str, out: &Path) -> Proc {
    let p = Proc::start(
        Command::new(bin)
            .args(["-a", "127.0.0.1", "-p", &NATS_PORT.to_string(), "-js", "-sd"])
            .arg(out.join("jetstream")),
        out.join("nats.log"),
    );
    wait_for("nats", Duration::from_secs(30), || port_open(NATS_PORT));
    p
}

fn search(groups: &str, query: &str) -> Value {
    ken_json(&[
        "fleet",
        "search",
        query,
        "--groups",
        groups,
        "--json",
        "--limit",
        "15",
        "--deadline-ms",
        "8000",
    ])
}

/// What must not depend on how the repositories are spread over servers.
fn comparable(answer: &Value) -> Value {
    let mut repos = answer["repos"].clone();
    for r in repos.as_array_mut().unwrap() {
        r.as_object_mut().unwrap().remove("group");
        // When the server loaded the snapshot, not what it holds.
        if let Some(c) = r.pointer_mut("/answer/coverage").and_then(Value::as_object_mut) {
            c.remove("index_age_secs");
        }
    }
    serde_json::json!({"merged": answer["merged"], "repos": repos})
}

/// Equal answers, or the first repository whose answers differ.
fn same(a: &Value, b: &Value, query: &str) {
    if a == b {
        return;
    }
    assert_eq!(a["merged"], b["merged"], "{query}: merged rankings differ");
    let (ra, rb) = (a["repos"].as_array().unwrap(), b["repos"].as_array().unwrap());
    assert_eq!(ra.len(), rb.len(), "{query}: repositories answered");
    for (x, y) in ra.iter().zip(rb) {
        assert_eq!(x, y, "{query}: {} answers differently", x["repo"]);
    }
}

/// Whether the calling test runs inside its own network namespace whose only interface is
/// loopback (every server binds 127.0.0.1 there and nothing leaves the machine). Outside one,
/// it runs the test `name` again inside a new one, asserts that it passed there, and says no.
fn in_loopback_namespace(name: &str) -> bool {
    if std::env::var("KEN_FLEET_NETNS").is_err() {
        let exe = std::env::current_exe().unwrap();
        let run = Command::new("unshare")
            .args(["--user", "--map-root-user", "--net"])
            .arg(exe)
            .args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env("KEN_FLEET_NETNS", "1")
            .status()
            .unwrap();
        assert!(run.success(), "{name} failed inside its namespace");
        return false;
    }
    let lo = Command::new("sh")
        .args(["-c", "PATH=\"$PATH:/usr/sbin:/sbin\" ip link set lo up"])
        .status()
        .unwrap();
    assert!(lo.success());
    true
}

#[test]
fn credentials_guard_nats_and_the_fleet_http_endpoints() {
    let Some(nats_bin) = support::server_bin("KEN_NATS_SERVER", "nats-server", "KEN_FLEET_E2E") else {
        return;
    };
    if !in_loopback_namespace("credentials_guard_nats_and_the_fleet_http_endpoints") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let _nats = Proc::start(
        Command::new(&nats_bin)
            .args([
                "-a",
                "127.0.0.1",
                "-p",
                "4223",
                "-js",
                "--user",
                "ken",
                "--pass",
                "s3cret-pw",
            ])
            .arg("-sd")
            .arg(tmp.path().join("js")),
        tmp.path().join("nats.log"),
    );
    wait_for("nats", Duration::from_secs(30), || port_open(4223));
    let status_with = |extra: &[&str]| {
        let o = Command::new(ken_bin())
            .args(["fleet", "status", "--json"])
            .args(extra)
            .env_remove("KEN_NATS")
            .env_remove("KEN_NATS_CREDS")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        (
            o.status.success(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            text,
        )
    };

    // The password in the URL opens the server, and no output holds it.
    let (ok, stdout, text) = status_with(&["--nats", "nats://ken:s3cret-pw@127.0.0.1:4223"]);
    assert!(ok, "{text}");
    assert!(!text.contains("s3cret-pw"), "{text}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["nats"], "nats://***@127.0.0.1:4223", "{v}");

    // A wrong password and none are refused, clearly and without the secret.
    for url in ["nats://ken:wrong-pw@127.0.0.1:4223", "nats://127.0.0.1:4223"] {
        let (ok, _, text) = status_with(&["--nats", url]);
        assert!(!ok, "{url}: {text}");
        assert!(text.contains("127.0.0.1:4223"), "{text}");
        assert!(text.to_lowercase().contains("auth"), "{text}");
        assert!(!text.contains("wrong-pw"), "{text}");
    }

    // Several servers: a dead one first, the client moves on to the live one.
    let (ok, _, text) = status_with(&["--nats", "nats://127.0.0.1:1,nats://ken:s3cret-pw@127.0.0.1:4223"]);
    assert!(ok, "{text}");

    // A credentials file that is not there is named.
    let (ok, _, text) = status_with(&[
        "--nats",
        "nats://127.0.0.1:4223",
        "--nats-creds",
        "/nonexistent/ken.creds",
    ]);
    assert!(!ok && text.contains("/nonexistent/ken.creds"), "{text}");

    // A shard server's HTTP endpoints sit behind the same guard as `ken serve`'s.
    let remote = format!("file://{}", tmp.path().join("remote").display());
    let shard_cmd = |http: &str, extra: &[&str], token: Option<&str>| {
        let mut c = Command::new(ken_bin());
        c.args(["serve", "--fleet", "--group", "g0", "--groups", "g0"])
            .args([
                "--nats",
                "nats://ken:s3cret-pw@127.0.0.1:4223",
                "--remote",
                &remote,
            ])
            .args(["--http", http])
            .args(extra)
            .arg("--cache")
            .arg(tmp.path().join("cache"))
            .env_remove("KEN_NATS_CREDS")
            .env_remove("KEN_SERVE_TOKEN");
        if let Some(t) = token {
            c.env("KEN_SERVE_TOKEN", t);
        }
        c
    };
    // Beyond loopback without a token: refused before it listens.
    let o = shard_cmd("0.0.0.0:0", &["--allow-remote"], None)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("KEN_SERVE_TOKEN"), "{err}");
    let token = "fleet-token-0123456789";
    let shard = Proc::start(
        &mut shard_cmd("127.0.0.1:0", &[], Some(token)),
        tmp.path().join("shard.log"),
    );
    wait_for("the shard server", Duration::from_secs(60), || {
        shard.log().contains("serving shard group")
    });
    let log = shard.log();
    let at = log.find("http://").unwrap() + "http://".len();
    let addr = log[at..].split('/').next().unwrap().to_string();
    let call = |path: &str, headers: &[&str]| -> String {
        let mut c = Command::new("curl");
        c.args(["-s", "-o", "/dev/null", "-w", "%{http_code}"]);
        for h in headers {
            c.args(["-H", h]);
        }
        if path.starts_with("/v1/") {
            c.args(["-H", "content-type: application/json", "-d", r#"{"query": "x"}"#]);
        }
        let o = c.arg(format!("http://{addr}{path}")).output().unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let bearer = format!("Authorization: Bearer {token}");
    assert_eq!(call("/v1/fleet/search", &[]), "401");
    assert_eq!(
        call(
            "/v1/fleet/search",
            &["Authorization: Bearer wrong-token-0123456789"]
        ),
        "401"
    );
    assert_eq!(call("/metrics", &[]), "401");
    assert_eq!(call("/healthz", &[]), "200");
    assert_eq!(call("/v1/fleet/search", &[&bearer]), "200");
    assert_eq!(call("/metrics", &[&bearer]), "200");
    // A page on another name (DNS rebinding) is refused even with the token.
    assert_eq!(call("/v1/fleet/search", &[&bearer, "Host: evil.example"]), "403");
}

#[test]
fn a_fleet_builds_and_serves_through_real_nats_and_s3_and_survives_its_faults() {
    let Some(nats_bin) = support::server_bin("KEN_NATS_SERVER", "nats-server", "KEN_FLEET_E2E") else {
        return;
    };
    let Some(moto) = support::server_bin("KEN_S3_SERVER", "moto_server", "KEN_FLEET_E2E") else {
        return;
    };
    if !in_loopback_namespace("a_fleet_builds_and_serves_through_real_nats_and_s3_and_survives_its_faults") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path();
    let src = out.join("src");
    fs::create_dir_all(&src).unwrap();

    let _moto = Proc::start(
        Command::new(&moto).args(["-H", "127.0.0.1", "-p", &S3_PORT.to_string()]),
        out.join("moto.log"),
    );
    wait_for("moto", Duration::from_secs(60), || port_open(S3_PORT));
    let bucket = Command::new("curl")
        .args([
            "-sf",
            "-X",
            "PUT",
            &format!("http://127.0.0.1:{S3_PORT}/snapshots"),
        ])
        .status()
        .unwrap();
    assert!(bucket.success());
    let remote = "s3://snapshots/fleet";
    let mut nats = nats(&nats_bin, out);

    // The work: the big repository first, eleven small ones, one whose source is missing
    // on the first attempt, and one whose source never appears.
    let big = big_repo(&src);
    let small: Vec<PathBuf> = (0..11).map(|i| small_repo(&src, i)).collect();
    let late_built = small_repo(&out.join("staging"), 11);
    let late = src.join("late");
    let enqueue = |path: &Path, name: &str, extra: &[&str]| -> Value {
        let mut args = vec![
            "fleet",
            "enqueue",
            path.to_str().unwrap(),
            "--name",
            name,
            "--json",
        ];
        args.extend_from_slice(extra);
        ken_json(&args)[0].clone()
    };
    enqueue(&big, "fleet/big", &[]);
    for (i, p) in small.iter().enumerate() {
        enqueue(p, &format!("fleet/repo{i:02}"), &[]);
    }
    // The same request again merges into the queued one.
    let again = enqueue(&small[3], "fleet/repo03", &[]);
    assert_eq!(again["duplicate"], true, "{again}");
    let late_commit = head(&late_built);
    enqueue(
        &late_built,
        "fleet/late",
        &["--source", late.to_str().unwrap(), "--commit", &late_commit],
    );
    let never = src.join("never");
    enqueue(&late_built, "fleet/never", &["--source", never.to_str().unwrap()]);
    let queued = status();
    assert_eq!(queued["queue"]["items"], 14, "{queued}");

    let mut workers = vec![worker("w1", out, remote), worker("w2", out, remote)];
    // Kill whichever worker takes the big repository while it builds.
    wait_for("a worker building fleet/big", Duration::from_secs(60), || {
        workers
            .iter()
            .any(|w| count(&events(&[w]), "building", "fleet/big") > 0)
    });
    let taker = workers
        .iter()
        .position(|w| count(&events(&[w]), "building", "fleet/big") > 0)
        .unwrap();
    let mut victim = workers.remove(taker);
    let survivor = workers.remove(0);
    victim.kill();
    let killed_events = events(&[&victim]);
    assert_eq!(
        count(&killed_events, "done", "fleet/big"),
        0,
        "the worker finished before it was killed: make the big repository bigger"
    );
    let w3 = worker("w3", out, remote);
    // The first attempt at `late` fails: its source is not there yet. Then it appears.
    wait_for(
        "the first attempt at fleet/late",
        Duration::from_secs(120),
        || count(&events(&[&survivor, &w3]), "failed", "fleet/late") > 0,
    );
    fs::rename(&late_built, &late).unwrap();

    // NATS restarted while items are still queued: the queue is on disk and survives.
    wait_for("a few items done", Duration::from_secs(120), || {
        events(&[&survivor, &w3])
            .iter()
            .filter(|e| e["event"] == "done")
            .count()
            >= 3
    });
    let before = status();
    assert!(
        before["queue"]["items"].as_u64().unwrap() > 0,
        "not mid-queue: {before}"
    );
    nats.kill();
    std::thread::sleep(Duration::from_millis(500));
    nats = nats_restart(&nats_bin, out);
    let after = status();
    assert!(
        after["queue"]["items"].as_u64().unwrap() <= before["queue"]["items"].as_u64().unwrap(),
        "{before}\n{after}"
    );

    // Every repository ends at its commit; `never` ends as a dead letter.
    let repos: Vec<String> = std::iter::once("fleet/big".to_string())
        .chain((0..11).map(|i| format!("fleet/repo{i:02}")))
        .chain(std::iter::once("fleet/late".to_string()))
        .collect();
    let mut last = Value::Null;
    wait_for(
        "every repository built and the dead letter",
        Duration::from_secs(300),
        || {
            last = status();
            let built = last["pointers"].as_array().map_or(0, |p| p.len());
            built == repos.len()
                && last["dead"].as_array().is_some_and(|d| d.len() == 1)
                && last["queue"]["items"] == 0
        },
    );
    let pointers = last["pointers"].as_array().unwrap();
    for p in pointers {
        let name = p["repo"].as_str().unwrap();
        let dir = match name {
            "fleet/big" => big.clone(),
            "fleet/late" => late.clone(),
            n => src.join(n.trim_start_matches("fleet/")),
        };
        assert_eq!(p["commit"].as_str().unwrap(), head(&dir), "{name}");
    }
    assert_eq!(last["dead"][0]["item"]["repo"], "fleet/never", "{last}");
    assert_eq!(last["dead"][0]["attempts"], 3, "{last}");
    let all = events(&[&survivor, &w3]);
    assert!(
        count(&all, "done", "fleet/big") >= 1,
        "another worker finished the killed item"
    );
    assert!(count(&all, "done", "fleet/late") == 1 && count(&all, "failed", "fleet/late") >= 1);
    let late_done = all
        .iter()
        .find(|e| e["event"] == "done" && e["repo"] == "fleet/late")
        .unwrap();
    assert!(late_done["attempt"].as_i64().unwrap() >= 2, "{late_done}");
    // Workers count what they did.
    let metrics_url = |p: &Proc| -> String {
        let log = p.log();
        let at = log.find("metrics at ").unwrap() + "metrics at ".len();
        log[at..].lines().next().unwrap().to_string()
    };
    let scraped = curl(&metrics_url(&w3)) + &curl(&metrics_url(&survivor));
    assert!(
        scraped.contains("ken_fleet_tasks_total{outcome=\"done\"}"),
        "{scraped}"
    );
    assert!(scraped.contains("ken_fleet_retries_total"), "{scraped}");

    // A repeated upload sends nothing: the generation a worker published, pushed again
    // (with its sources, as the worker pushed it).
    let (dir, name) = worker_checkout(out, "fleet/repo05");
    let push = aws(&mut Command::new(ken_bin()))
        .args([
            "index",
            "push",
            dir.to_str().unwrap(),
            "--remote",
            remote,
            "--name",
            &name,
            "--with-source",
            "--json",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(push.status.success(), "{}", String::from_utf8_lossy(&push.stderr));
    let push: Value = serde_json::from_slice(&push.stdout).unwrap();
    assert_eq!(push["uploaded"], 0, "{push}");
    assert!(push["sources"].as_u64().unwrap() > 1, "{push}");

    // Three servers in two groups answer as one server over every repository.
    let s0a = shard("s0a", "g0", "g0,g1", out, remote);
    let mut s0b = shard("s0b", "g0", "g0,g1", out, remote);
    let _s1 = shard("s1", "g1", "g0,g1", out, remote);
    let _one = shard("one", "all", "all", out, remote);
    let queries = [
        "reconcile ledger entries",
        "step helper value",
        "Ledger post entry",
    ];
    for q in queries {
        let sharded = search("g0,g1", q);
        let single = search("all", q);
        assert_eq!(sharded["partial"], false, "{sharded}");
        assert_eq!(sharded["repos_answered"], repos.len(), "{sharded}");
        assert!(
            !sharded["merged"].as_array().unwrap().is_empty(),
            "{q}: {sharded}"
        );
        same(&comparable(&sharded), &comparable(&single), q);
    }
    // Shard servers have no checkout: code comes from the sources published with each
    // snapshot. Every repository reads its own ledger module's lines back exactly.
    let spans = ken_json(&[
        "fleet",
        "call",
        "read_span",
        r#"{"span": "ledger_5.py:4-6"}"#,
        "--groups",
        "g0,g1",
        "--json",
    ]);
    let repo05 = spans["repos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["repo"] == "fleet/repo05")
        .unwrap_or_else(|| panic!("{spans}"));
    let text = repo05["answer"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{repo05}"));
    let file = fs::read_to_string(dir.join("ledger_5.py")).unwrap();
    let lines: Vec<&str> = file.lines().collect();
    assert_eq!(text.trim_end(), lines[3..6].join("\n"), "{repo05}");
    // A literal search reads the sources too.
    let literal = ken_json(&[
        "fleet",
        "search",
        "reconcile_ledger_5(",
        "--mode",
        "literal",
        "--groups",
        "g0,g1",
        "--json",
    ]);
    let hits = literal["merged"].as_array().unwrap();
    assert!(hits.iter().any(|h| h["repo"] == "fleet/repo05"), "{literal}");
    let reference: Vec<Value> = queries.iter().map(|q| comparable(&search("all", q))).collect();
    // One replica of g0 gone: the other answers for the group.
    let mut s0a = s0a;
    s0a.kill();
    for (q, want) in queries.iter().zip(&reference) {
        let a = search("g0,g1", q);
        assert_eq!(a["partial"], false, "{a}");
        same(&comparable(&a), want, q);
    }
    // The group's last replica gone: a prompt partial answer that names it.
    s0b.kill();
    let a = search("g0,g1", queries[0]);
    assert_eq!(a["partial"], true);
    assert_eq!(a["missing_groups"], serde_json::json!(["g0"]), "{a}");
    assert!(
        a["ms"].as_u64().unwrap() < a["deadline_ms"].as_u64().unwrap(),
        "{a}"
    );
    let g1_repos = a["repos"].as_array().unwrap();
    assert!(
        !g1_repos.is_empty() && g1_repos.iter().all(|r| r["group"] == "g1"),
        "{a}"
    );

    // A stale compare-and-swap of a pointer is rejected.
    stale_swap_is_rejected();
    drop(nats);
}

fn nats_restart(bin: &str, out: &Path) -> Proc {
    let p = nats(bin, out);
    // The workers reconnect on their own; give JetStream a moment to recover its streams.
    wait_for(
        "the work queue after the restart",
        Duration::from_secs(30),
        || ken(&["fleet", "status", "--json"]).status.success(),
    );
    p
}

fn curl(url: &str) -> String {
    let o = Command::new("curl").args(["-sf", url]).output().unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The checkout a worker built `repo` in.
fn worker_checkout(out: &Path, repo: &str) -> (PathBuf, String) {
    let token = kenning::fleet::subject_token(repo);
    for w in ["w1", "w2", "w3"] {
        let d = out.join(format!("work-{w}")).join(&token);
        if d.join(".kenning/CURRENT").exists() {
            return (d, repo.to_string());
        }
    }
    panic!("no worker checkout of {repo}");
}

fn stale_swap_is_rejected() {
    use kenning::fleet::{FleetBus, PointerMove, RepoPointer};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let bus = FleetBus::connect(&kenning::fleet::NatsTarget::new(&nats_url(), None), "test")
            .await
            .unwrap();
        let p = RepoPointer {
            repo: "fleet/cas-probe".into(),
            commit: "1111111111111111111111111111111111111111".into(),
            snapshot: "snapshots/probe/1".into(),
            files: 1,
            lines: 1,
            worker: "test".into(),
            unix_ms: 0,
            revision: None,
        };
        let PointerMove::Moved { revision, .. } = bus.move_pointer(&p, |_, _| false).await.unwrap() else {
            panic!("the first move creates the pointer");
        };
        let newer = RepoPointer {
            commit: "2222222222222222222222222222222222222222".into(),
            ..p.clone()
        };
        bus.swap_pointer(&newer, revision).await.unwrap();
        // A writer still holding the first revision loses.
        let stale = RepoPointer {
            commit: "3333333333333333333333333333333333333333".into(),
            ..p.clone()
        };
        let err = bus.swap_pointer(&stale, revision).await.unwrap_err().to_string();
        assert!(err.contains("rejected"), "{err}");
        assert_eq!(bus.pointer(&p.repo).await.unwrap().unwrap().commit, newer.commit);
        // A move to an ancestor of the current commit leaves the pointer where it is.
        let back = bus
            .move_pointer(&p, |a, b| a == p.commit && b == newer.commit)
            .await
            .unwrap();
        assert!(matches!(back, PointerMove::Superseded { .. }), "{back:?}");
    });
}
