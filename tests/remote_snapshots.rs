//! Shared snapshots (`ken index push`, `ken index pull`): a generation published to object
//! storage installs into another clone and answers exactly as the index it came from; a
//! checkout ahead of the snapshot pulls the nearest ancestor and parses only what changed;
//! pushing again sends nothing; a tampered, truncated or missing object is refused by name
//! and the index keeps its generation; and the same holds through a real S3 server (moto),
//! run in a network namespace that has only loopback.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use support::{commit_all, git, ken, stderr, stdout, write_tree};

const NAME: &str = "team/shop";

/// A small shop in Python and Rust, committed.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    write_tree(
        d,
        r#"
//- shop/cart.py
from shop.pricing import apply_discount

class Cart:
    def __init__(self):
        self.items = []

    def add_item(self, item, price):
        """Adds an item at its price."""
        self.items.append((item, price))

    def total(self, code=None):
        return apply_discount(sum(p for _, p in self.items), code)
//- shop/pricing.py
DISCOUNTS = {"SPRING": 0.1}

def apply_discount(amount, code):
    """Takes the discount a code gives off the amount."""
    return amount * (1 - DISCOUNTS.get(code, 0.0))
//- tests/test_cart.py
from shop.cart import Cart

def test_total_applies_the_spring_discount():
    c = Cart()
    c.add_item("pen", 10.0)
    assert c.total("SPRING") == 9.0
//- engine/src/lib.rs
/// Parses an inventory line `name,count`.
pub fn parse_inventory_line(line: &str) -> Option<(String, u32)> {
    let (name, count) = line.split_once(',')?;
    Some((name.to_string(), count.trim().parse().ok()?))
}
"#,
    );
    commit_all(d, "a shop");
    dir
}

fn clone(from: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["clone", "-q", from.to_str().unwrap(), "."]);
    dir
}

fn ok(o: &std::process::Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}{}", stdout(o), stderr(o));
    stdout(o)
}

fn json(o: &std::process::Output, what: &str) -> Value {
    serde_json::from_str(&ok(o, what)).unwrap_or_else(|e| panic!("{what}: {e}: {}", stdout(o)))
}

fn file_url(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

/// What a user reads from an index: ranked files of a search, and a context's files and code.
fn answers(repo: &Path) -> Vec<Value> {
    let r = repo.to_str().unwrap();
    let mut out = Vec::new();
    for q in [
        "apply the discount code to the cart total",
        "parse an inventory line",
    ] {
        let s = json(&ken(&["search", q, "--repo", r, "--json", "-q"], repo), "search");
        out.push(s["files"].clone());
        let c = json(
            &ken(&["context", q, "--repo", r, "--format", "json", "-q"], repo),
            "context",
        );
        out.push(c["files"].clone());
        out.push(c["pack"]["shown"].clone());
    }
    out
}

fn push(repo: &Path, remote: &str) -> Value {
    push_with(repo, remote, &[])
}

/// `ken index push` of `repo` to `remote` with `extra` flags, its JSON report.
fn push_with(repo: &Path, remote: &str, extra: &[&str]) -> Value {
    let r = repo.to_str().unwrap();
    let mut args = vec![
        "index", "push", r, "--remote", remote, "--name", NAME, "--json", "-q",
    ];
    args.extend_from_slice(extra);
    json(&ken(&args, repo), "push")
}

fn pull(repo: &Path, remote: &str) -> std::process::Output {
    let r = repo.to_str().unwrap();
    ken(
        &[
            "index", "pull", r, "--remote", remote, "--name", NAME, "--json", "-q",
        ],
        repo,
    )
}

fn current(repo: &Path) -> String {
    std::fs::read_to_string(repo.join(".kenning/CURRENT")).unwrap_or_default()
}

#[test]
fn a_pulled_snapshot_answers_like_its_source_and_an_ancestor_serves_a_newer_checkout() {
    let a = repo();
    let remote = tempfile::tempdir().unwrap();
    let url = file_url(remote.path());
    ok(
        &ken(&["-q", "index", "build", a.path().to_str().unwrap()], a.path()),
        "build",
    );
    let first = push(a.path(), &url);
    assert!(first["objects"].as_u64().unwrap() > 5, "{first}");
    // Files with equal bytes are one object, sent once.
    let stored = std::fs::read_dir(remote.path().join("objects")).unwrap().count();
    assert_eq!(first["uploaded"], stored as u64, "{first}");
    let head = git(a.path(), &["rev-parse", "HEAD"]).trim().to_string();
    assert_eq!(first["key"], format!("snapshots/{NAME}/{head}.json"));
    // Pushing the same generation again sends nothing: every object is already there.
    let again = push(a.path(), &url);
    assert_eq!(again["uploaded"], 0, "{again}");
    assert_eq!(again["uploaded_bytes"], 0);

    // Another clone: installed, verified, and up to date without parsing a file.
    let b = clone(a.path());
    let got = json(&pull(b.path(), &url), "pull");
    assert_eq!(got["pull"]["commit"], head.as_str());
    assert_eq!(got["pull"]["behind"], 0);
    assert_eq!(got["pull"]["objects"], first["objects"]);
    assert_eq!(
        got["update"]["manifest"]["stats"]["parsed"], 0,
        "{}",
        got["update"]
    );
    assert_eq!(answers(b.path()), answers(a.path()));
    let verify = ken(&["index", "verify", b.path().to_str().unwrap()], b.path());
    assert!(verify.status.success(), "{}", stdout(&verify));

    // A checkout one commit ahead finds the parent's snapshot and parses the one changed file.
    let c = clone(a.path());
    write_tree(
        c.path(),
        "//- shop/shipping.py\ndef shipping_cost_for_weight(kilos):\n    return 4.5 + 1.2 * kilos\n",
    );
    commit_all(c.path(), "shipping");
    let got = json(&pull(c.path(), &url), "pull ahead");
    assert_eq!(got["pull"]["commit"], head.as_str());
    assert_eq!(got["pull"]["behind"], 1);
    assert_eq!(
        got["update"]["manifest"]["stats"]["parsed"], 1,
        "{}",
        got["update"]
    );
    let found = json(
        &ken(
            &[
                "symbol",
                "shipping_cost_for_weight",
                "--repo",
                c.path().to_str().unwrap(),
                "--json",
            ],
            c.path(),
        ),
        "symbol",
    );
    assert!(found.to_string().contains("shop/shipping.py"), "{found}");
}

#[test]
fn a_tampered_truncated_or_missing_object_is_refused_by_name_and_the_index_keeps_its_generation() {
    let a = repo();
    let remote = tempfile::tempdir().unwrap();
    let url = file_url(remote.path());
    ok(
        &ken(&["-q", "index", "build", a.path().to_str().unwrap()], a.path()),
        "build",
    );
    push(a.path(), &url);
    let snapshot: Value = {
        let head = git(a.path(), &["rev-parse", "HEAD"]).trim().to_string();
        let p = remote.path().join(format!("snapshots/{NAME}/{head}.json"));
        serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
    };
    let object = |path: &str| -> (PathBuf, String) {
        let o = snapshot["objects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["path"] == path)
            .unwrap_or_else(|| panic!("no {path} in {snapshot}"));
        let hash = o["blake3"].as_str().unwrap().to_string();
        (remote.path().join("objects").join(&hash), hash)
    };
    let b = clone(a.path());
    ok(
        &ken(&["-q", "index", "build", b.path().to_str().unwrap()], b.path()),
        "build b",
    );
    let before = current(b.path());
    let answers_before = answers(b.path());
    let (graph, graph_hash) = object("gen/graph.bin");
    let original = std::fs::read(&graph).unwrap();

    // Same length, other bytes.
    let mut flipped = original.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x5a;
    std::fs::write(&graph, &flipped).unwrap();
    let o = pull(b.path(), &url);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains(&format!("objects/{graph_hash}")) && err.contains("gen/graph.bin"),
        "{err}"
    );
    assert!(err.contains("does not match its blake3"), "{err}");
    assert_eq!(current(b.path()), before);
    assert_eq!(answers(b.path()), answers_before);

    // Truncated.
    std::fs::write(&graph, &original[..original.len() - 7]).unwrap();
    let err = stderr(&pull(b.path(), &url));
    assert!(err.contains("the snapshot lists"), "{err}");
    assert_eq!(current(b.path()), before);

    // Missing.
    std::fs::remove_file(&graph).unwrap();
    let err = stderr(&pull(b.path(), &url));
    assert!(err.contains("missing from the remote"), "{err}");
    assert_eq!(current(b.path()), before);
    assert_eq!(answers(b.path()), answers_before);
    // No half-written segment or generation is left behind.
    let leftovers: Vec<String> = walk_names(&b.path().join(".kenning"))
        .into_iter()
        .filter(|n| n.contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Put back, the same pull succeeds.
    std::fs::write(&graph, &original).unwrap();
    let got = json(&pull(b.path(), &url), "pull restored");
    assert_ne!(current(b.path()), before);
    assert_eq!(got["pull"]["behind"], 0);
    assert_eq!(answers(b.path()), answers(a.path()));
}

fn walk_names(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        out.push(e.file_name().to_string_lossy().to_string());
        if e.path().is_dir() {
            out.extend(walk_names(&e.path()));
        }
    }
    out
}

#[test]
fn without_a_snapshot_a_pull_says_what_it_looked_for() {
    let a = repo();
    let remote = tempfile::tempdir().unwrap();
    let o = pull(a.path(), &file_url(remote.path()));
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(
        err.contains("no snapshot of team/shop is published") && err.contains("1 commit(s)"),
        "{err}"
    );
    for bad in ["ftp://x/y", "not a url", "s3:"] {
        let o = pull(a.path(), bad);
        assert!(!o.status.success());
        assert!(stderr(&o).contains("remote"), "{bad}: {}", stderr(&o));
    }
}

#[test]
fn a_tree_with_uncommitted_changes_is_published_under_its_tree_hash() {
    let a = repo();
    let remote = tempfile::tempdir().unwrap();
    let url = file_url(remote.path());
    let root = a.path().to_str().unwrap();
    ok(&ken(&["-q", "index", "build", root], a.path()), "build");
    let clean = push(a.path(), &url);
    write_tree(
        a.path(),
        "//- shop/wip.py\ndef unfinished_refund_flow():\n    pass\n",
    );
    ok(&ken(&["-q", "index", "build", root], a.path()), "rebuild");
    let dirty = push(a.path(), &url);
    let tree = dirty["tree"].as_str().unwrap();
    assert_eq!(tree.len(), 64);
    assert_eq!(
        dirty["key"],
        clean["key"]
            .as_str()
            .unwrap()
            .replace(".json", &format!("+{tree}.json"))
    );
    // Unchanged objects (the segments of untouched files among them) were not sent again.
    assert!(
        dirty["uploaded"].as_u64().unwrap() < dirty["objects"].as_u64().unwrap(),
        "{dirty}"
    );
    // A clean clone installs the committed snapshot, not the one with work in progress.
    let b = clone(a.path());
    let got = json(&pull(b.path(), &url), "pull");
    assert_eq!(got["pull"]["key"], clean["key"]);
    let wip = ken(
        &[
            "symbol",
            "unfinished_refund_flow",
            "--repo",
            b.path().to_str().unwrap(),
        ],
        b.path(),
    );
    assert!(!stdout(&wip).contains("shop/wip.py"), "{}", stdout(&wip));
}

/// The moto S3 server: `KEN_S3_SERVER`, else `moto_server` on PATH. `KEN_S3_E2E=1` (CI) makes
/// its absence a failure instead of a skip.
fn moto_server() -> Option<String> {
    support::server_bin("KEN_S3_SERVER", "moto_server", "KEN_S3_E2E")
}

/// The Python that runs the server (its boto3 tampers with an object).
fn python_beside(moto: &str) -> String {
    let beside = Path::new(moto).with_file_name("python3");
    match beside.exists() && !moto.contains("/shims/") {
        true => beside.display().to_string(),
        false => "python3".to_string(),
    }
}

#[test]
fn snapshots_move_through_a_real_s3_server_in_a_loopback_only_namespace() {
    let Some(moto) = moto_server() else { return };
    let a = repo();
    let b = clone(a.path());
    let c = clone(a.path());
    ok(
        &ken(&["-q", "index", "build", a.path().to_str().unwrap()], a.path()),
        "build",
    );
    let out = tempfile::tempdir().unwrap();
    let files_hash = blake3::hash(&std::fs::read(a.path().join(".kenning/gen-00000001/files.bin")).unwrap())
        .to_hex()
        .to_string();
    // Everything runs in a new network namespace whose only interface is loopback: the
    // server binds 127.0.0.1 there and nothing can leave the machine.
    let script = format!(
        r#"set -eu
PATH="$PATH:/usr/sbin:/sbin" ip link set lo up
"{moto}" -H 127.0.0.1 -p 45123 > "{out}/moto.log" 2>&1 &
M=$!
trap 'kill $M 2>/dev/null || true' EXIT
for i in $(seq 200); do curl -s -o /dev/null http://127.0.0.1:45123/ && break; sleep 0.1; done
curl -sf -X PUT http://127.0.0.1:45123/snapshots > /dev/null
export AWS_ENDPOINT=http://127.0.0.1:45123 AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
ken() {{ "{ken}" "$@"; }}
ken index push "{a}" --remote s3://snapshots/team --name {NAME} --json -q > "{out}/push1.json"
ken index push "{a}" --remote s3://snapshots/team --name {NAME} --json -q > "{out}/push2.json"
ken index pull "{b}" --remote s3://snapshots/team --name {NAME} --json -q > "{out}/pull.json"
# Another content under an object's key: the next pull must refuse it.
"{python}" -c 'import boto3,sys; boto3.client("s3", endpoint_url="http://127.0.0.1:45123", region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test").put_object(Bucket="snapshots", Key="team/objects/" + sys.argv[1], Body=b"not the file table")' {files_hash}
if ken index pull "{c}" --remote s3://snapshots/team --name {NAME} -q 2> "{out}/refused.txt"; then echo accepted > "{out}/refused.txt"; fi
"#,
        moto = moto,
        python = python_beside(&moto),
        files_hash = files_hash,
        out = out.path().display(),
        ken = support::ken_bin(),
        a = a.path().display(),
        b = b.path().display(),
        c = c.path().display(),
    );
    let run = Command::new("unshare")
        .args(["--user", "--map-root-user", "--net", "bash", "-c", &script])
        .output()
        .expect("unshare");
    let log = std::fs::read_to_string(out.path().join("moto.log")).unwrap_or_default();
    assert!(
        run.status.success(),
        "{}{}\nmoto: {log}",
        stdout(&run),
        stderr(&run)
    );
    let read = |f: &str| -> Value {
        serde_json::from_slice(&std::fs::read(out.path().join(f)).unwrap())
            .unwrap_or_else(|e| panic!("{f}: {e}"))
    };
    let (push1, push2, pulled) = (read("push1.json"), read("push2.json"), read("pull.json"));
    assert!(push1["uploaded"].as_u64().unwrap() > 5, "{push1}");
    assert_eq!(push2["uploaded"], 0, "{push2}");
    assert_eq!(pulled["pull"]["objects"], push1["objects"]);
    assert_eq!(pulled["pull"]["bytes"], push1["bytes"]);
    assert_eq!(pulled["update"]["manifest"]["stats"]["parsed"], 0);
    assert_eq!(answers(b.path()), answers(a.path()));
    let refused = std::fs::read_to_string(out.path().join("refused.txt")).unwrap();
    assert!(
        refused.contains(&format!("objects/{files_hash}")) && refused.contains("gen/files.bin"),
        "{refused}"
    );
    assert!(
        !c.path().join(".kenning/CURRENT").exists(),
        "a refused pull committed a generation"
    );
}

#[test]
fn sources_published_with_a_snapshot_unpack_verified_and_a_tampered_one_is_refused() {
    use kenning::remote::SnapshotRemote;
    let a = repo();
    let remote = tempfile::tempdir().unwrap();
    let url = file_url(remote.path());
    ok(
        &ken(&["-q", "index", "build", a.path().to_str().unwrap()], a.path()),
        "build",
    );
    let r = a.path().to_str().unwrap();
    let pushed = push_with(a.path(), &url, &["--with-source"]);
    assert!(pushed["sources"].as_u64().unwrap() >= 3, "{pushed}");
    let head = git(a.path(), &["rev-parse", "HEAD"]).trim().to_string();
    let store = SnapshotRemote::open(&url).unwrap();
    let (snapshot, _, _) = store.find(NAME, std::slice::from_ref(&head)).unwrap();
    assert_eq!(snapshot.sources.len() as u64, pushed["sources"].as_u64().unwrap());

    // Every source lands as it is in the repository.
    let out = tempfile::tempdir().unwrap();
    let tree = out.path().join("tree");
    assert_eq!(
        store.install_sources(&snapshot, &tree).unwrap(),
        snapshot.sources.len()
    );
    for s in &snapshot.sources {
        assert_eq!(
            std::fs::read(tree.join(&s.path)).unwrap(),
            std::fs::read(a.path().join(&s.path)).unwrap(),
            "{}",
            s.path
        );
    }

    // A source object changed in the store: refused by name, nothing lands.
    let cart = snapshot
        .sources
        .iter()
        .find(|s| s.path == "shop/cart.py")
        .unwrap();
    std::fs::write(
        remote.path().join("objects").join(&cart.blake3),
        b"class Cart: pass  # swapped\n",
    )
    .unwrap();
    let again = out.path().join("tree2");
    let err = store.install_sources(&snapshot, &again).unwrap_err().to_string();
    assert!(
        err.contains(&cart.blake3) && err.contains("shop/cart.py"),
        "{err}"
    );
    assert!(!again.exists() && !again.with_extension("part").exists());

    // A file edited after the build is not published under the hash the index recorded.
    std::fs::write(a.path().join("shop/cart.py"), "class Cart:\n    edited = True\n").unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let fresh_url = file_url(fresh.path());
    let o = ken(
        &[
            "index",
            "push",
            r,
            "--remote",
            &fresh_url,
            "--name",
            NAME,
            "--with-source",
            "-q",
        ],
        a.path(),
    );
    assert!(!o.status.success(), "{}", stdout(&o));
    assert!(stderr(&o).contains("shop/cart.py"), "{}", stderr(&o));
}
