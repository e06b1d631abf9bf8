//! One index, many processes, and the states a killed or failed build leaves: a server keeps
//! answering while full builds run beside it, special files never hang a build, leftovers of
//! an interrupted build are removed by the next one, a server starts on any such repository,
//! and an index folder belongs to its tree.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use support::serve::{post, shop_repo, start};
use support::{ken_bin, stderr, stdout};

/// Runs `ken ARGS` in `dir`, killed after 120 s: a hang fails the test instead of stalling it.
fn ken_bounded(dir: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(ken_bin())
        .args(args)
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("ken {args:?} hung for 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn index_entries(index: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(index)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn segments(index: &Path) -> usize {
    std::fs::read_dir(index.join("segments")).unwrap().count()
}

#[test]
fn a_server_answers_every_request_while_full_builds_run_beside_it() {
    let repo = shop_repo();
    // Watching: the server follows the builds beside it to each new generation.
    let server = start(repo.path(), &["--debounce-ms", "100"], &[]);
    let addr = server.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..8)
        .map(|i| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let (mut ok, mut failed) = (0u32, Vec::new());
                let ops = [
                    ("search", json!({"query": "discount"})),
                    ("symbol", json!({"name": "Cart"})),
                    ("callers", json!({"symbol": "shop.payment.charge"})),
                    (
                        "context",
                        json!({"task": "how is a refund charged", "max_tokens": 400}),
                    ),
                ];
                let mut n = i;
                while !stop.load(Ordering::Relaxed) {
                    let (op, body) = &ops[n % ops.len()];
                    n += 1;
                    let r = post(addr, op, body);
                    match r.status {
                        200 => ok += 1,
                        s => failed.push(format!("{op} -> {s}: {}", r.body)),
                    }
                }
                (ok, failed)
            })
        })
        .collect();
    let mut generations = Vec::new();
    for _ in 0..4 {
        let out = ken_bounded(repo.path(), &["index", "build", "--full", "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        generations.push(v["manifest"]["generation"].as_u64().unwrap_or(0));
    }
    // The clients go on until the server has switched to the last generation.
    let last = *generations.last().unwrap();
    let t = Instant::now();
    while post(addr, "index_status", &json!({})).json()["generation"].as_u64() != Some(last) {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the server never moved to generation {last}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::Relaxed);
    let (mut answered, mut failed) = (0, Vec::new());
    for c in clients {
        let (ok, f) = c.join().unwrap();
        answered += ok;
        failed.extend(f);
    }
    assert!(
        failed.is_empty(),
        "{} of {} failed: {:?}",
        failed.len(),
        answered as usize + failed.len(),
        &failed[..failed.len().min(5)]
    );
    assert!(answered >= 40, "only {answered} answers");
    // What no reader holds any more is collected by the next build.
    drop(server);
    let out = ken_bounded(repo.path(), &["index", "build", "--full"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let gens = index_entries(&repo.path().join(".kenning"))
        .into_iter()
        .filter(|n| n.starts_with("gen-"))
        .count();
    assert!(gens <= 2, "old generations piled up: {gens}");
}

#[test]
fn a_named_pipe_socket_or_pipe_named_gitignore_is_skipped_not_waited_on() {
    let repo = tempfile::tempdir().unwrap();
    let r = repo.path();
    support::write_tree(
        r,
        "//- app/main.py\ndef main():\n    return 1\n//- lib/util.py\ndef helper():\n    pass\n//- quiet/ok.py\ndef hidden_by_pipe():\n    pass\n",
    );
    let fifo = |p: PathBuf| {
        let ok = Command::new("mkfifo").arg(&p).status().unwrap();
        assert!(ok.success());
    };
    fifo(r.join("app/pipe.py"));
    fifo(r.join("Cargo.toml"));
    fifo(r.join("quiet/.gitignore"));
    let _socket = std::os::unix::net::UnixListener::bind(r.join("lib/sock.py")).unwrap();
    let out = ken_bounded(r, &["index", "build"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let status = ken_bounded(r, &["index", "status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
    let text = v["skipped"].to_string();
    for (path, kind) in [
        ("app/pipe.py", "named pipe"),
        ("Cargo.toml", "named pipe"),
        ("lib/sock.py", "socket"),
        ("quiet/.gitignore", "its folder was not read"),
    ] {
        assert!(text.contains(path), "{path} not reported: {text}");
        assert!(text.contains(kind), "{kind} not said: {text}");
    }
    assert!(text.contains("special-file"), "{text}");
    let found = ken_bounded(r, &["symbol", "helper"]);
    assert!(stdout(&found).contains("lib/util.py"), "{}", stdout(&found));
    assert!(
        !r.join(".kenning")
            .read_dir()
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".tmp")),
        "a temporary was left"
    );
    // A pipe at the root's .gitignore turns those rules off for the run and says so.
    fifo(r.join(".gitignore"));
    let out = ken_bounded(r, &["index", "build"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let status = ken_bounded(r, &["index", "status", "--json"]);
    assert!(
        stdout(&status).contains("its rules were not applied"),
        "{}",
        stdout(&status)
    );
}

/// A first build killed before its commit leaves `FORMAT`, segments and `gen-N.tmp` but no
/// `CURRENT`; with `FORMAT` damaged too. The next build repairs both, and a server starts.
fn killed_first_build(r: &Path, damage_format: bool) {
    let out = ken_bounded(r, &["index", "build"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let index = r.join(".kenning");
    std::fs::remove_file(index.join("CURRENT")).unwrap();
    for name in index_entries(&index) {
        if let Some(n) = name.strip_prefix("gen-") {
            std::fs::rename(index.join(&name), index.join(format!("gen-{n}.tmp"))).unwrap();
        }
    }
    std::fs::write(index.join("segments/seg-00000099.bin"), vec![7u8; 4096]).unwrap();
    std::fs::write(index.join("lock"), "pid 999999").unwrap();
    if damage_format {
        std::fs::write(index.join("FORMAT"), "\0\0garbage").unwrap();
    }
}

#[test]
fn the_build_after_a_killed_first_build_repairs_it_and_removes_its_leftovers() {
    for damage_format in [false, true] {
        let repo = shop_repo();
        let r = repo.path();
        killed_first_build(r, damage_format);
        let index = r.join(".kenning");
        let q = ken_bounded(r, &["symbol", "Cart"]);
        assert_eq!(q.status.code(), Some(1), "{}", stdout(&q));
        assert!(stderr(&q).contains("ken index build"), "{}", stderr(&q));
        let out = ken_bounded(r, &["index", "build"]);
        assert!(
            out.status.success(),
            "damaged FORMAT {damage_format}: {}",
            stderr(&out)
        );
        let names = index_entries(&index);
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
        assert!(!index.join("segments/seg-00000099.bin").exists());
        assert_eq!(
            std::fs::read_to_string(index.join("lock")).unwrap(),
            "",
            "a stale pid stayed"
        );
        let q = ken_bounded(r, &["symbol", "Cart"]);
        assert!(
            q.status.success() && stdout(&q).contains("Cart"),
            "{}",
            stderr(&q)
        );
    }
}

#[test]
fn a_server_starts_on_a_killed_first_build_and_rebuilds_behind_the_handshake() {
    for damage_format in [false, true] {
        let repo = shop_repo();
        killed_first_build(repo.path(), damage_format);
        let server = start(repo.path(), &["--no-watch"], &[]);
        let t = Instant::now();
        loop {
            let r = post(server.addr, "symbol", &json!({"name": "Cart"}));
            if r.status == 200 && r.body.contains("shop/cart.py") {
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "never answered: {} {}",
                r.status,
                r.body
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Retries of a build on a full disk free what each failed try wrote: the disk does not stay
/// full, and the build succeeds once there is room.
#[test]
fn failed_builds_on_a_full_disk_leave_nothing_behind() {
    let repo = shop_repo();
    let r = repo.path().to_str().unwrap().to_string();
    let script = format!(
        r#"set -e
mnt=$(mktemp -d)
mount -t tmpfs -o size=128k tmpfs "$mnt"
cd {r}
used() {{ du -sk "$mnt" | cut -f1; }}
for i in 1 2 3 4; do
  if {ken} index build --index-dir "$mnt/idx" >/dev/null 2>"$mnt/../err"; then echo "built on try $i"; exit 3; fi
  echo "used $(used)"
done
grep -qi "no space" "$mnt/../err" || {{ cat "$mnt/../err"; exit 4; }}
ls "$mnt/idx"
"#,
        ken = ken_bin()
    );
    let out = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "sh", "-c", &script])
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    let used: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("used ")?.trim().parse().ok())
        .collect();
    assert_eq!(used.len(), 4, "{text}");
    assert!(
        used.windows(2).all(|w| w[1] <= w[0]),
        "each retry left more behind: {used:?}"
    );
    assert!(!text.contains(".tmp"), "a temporary stayed: {text}");
}

#[test]
fn an_index_dir_of_another_repository_is_refused_naming_both() {
    let a = shop_repo();
    let b = tempfile::tempdir().unwrap();
    support::write_tree(b.path(), "//- other.py\ndef other():\n    pass\n");
    let shared = tempfile::tempdir().unwrap();
    let dir = shared.path().join("idx");
    let dir_s = dir.to_str().unwrap();
    let out = ken_bounded(a.path(), &["index", "build", "--index-dir", dir_s]);
    assert!(out.status.success(), "{}", stderr(&out));
    let before = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    let out = ken_bounded(b.path(), &["index", "build", "--index-dir", dir_s]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    let a_root = a.path().canonicalize().unwrap();
    let b_root = b.path().canonicalize().unwrap();
    assert!(
        err.contains(a_root.to_str().unwrap()) && err.contains(b_root.to_str().unwrap()),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(dir.join("CURRENT")).unwrap(), before);
    // The owner still builds there, and an in-tree index of a copied tree is the copy's.
    let out = ken_bounded(a.path(), &["index", "build", "--index-dir", dir_s]);
    assert!(out.status.success(), "{}", stderr(&out));
    let copy = tempfile::tempdir().unwrap();
    let ok = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", a.path().display()))
        .arg(copy.path())
        .status()
        .unwrap();
    assert!(ok.success());
    let out = ken_bounded(copy.path(), &["index", "build"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A tree big enough that a build takes a while: `n` Python modules calling each other.
fn generated_tree(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..n {
        let body: String = (0..20)
            .map(|j| format!("def f{i}_{j}(x):\n    return f{}_{j}(x) + {j}\n\n\n", (i + 1) % n))
            .collect();
        let p = dir.path().join(format!("pkg{}/m{i}.py", i % 10));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("class Widget{i}:\n    pass\n\n\n{body}")).unwrap();
    }
    dir
}

/// Builds killed at several moments leave the previous index answering, and the next build
/// finishes with nothing of theirs left behind.
#[test]
fn builds_killed_at_several_moments_leave_the_index_answering() {
    let repo = generated_tree(300);
    let r = repo.path();
    let out = ken_bounded(r, &["index", "build"]);
    assert!(out.status.success(), "{}", stderr(&out));
    for ms in [5u64, 30, 80, 200, 500, 1200] {
        let mut child = Command::new(ken_bin())
            .args(["index", "build", "--full"])
            .current_dir(r)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(ms));
        let _ = child.kill();
        let _ = child.wait();
        let q = ken_bounded(r, &["symbol", "Widget7"]);
        assert!(
            q.status.success() && stdout(&q).contains("pkg7/m7.py"),
            "after a kill at {ms} ms: {}",
            stderr(&q)
        );
    }
    let out = ken_bounded(r, &["index", "build"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let index = r.join(".kenning");
    let names = index_entries(&index);
    assert!(!names.iter().any(|n| n.contains(".tmp")), "{names:?}");
    let verify = ken_bounded(r, &["index", "verify"]);
    assert!(verify.status.success(), "{}{}", stdout(&verify), stderr(&verify));
    // Segments are only those committed generations name.
    assert!(segments(&index) <= 4, "{} segments", segments(&index));
}

/// Two builds at once: one waits its turn or is told another runs; the index stays whole.
#[test]
fn concurrent_builds_never_damage_the_index() {
    let repo = generated_tree(150);
    let r = repo.path().to_path_buf();
    let runs: Vec<_> = (0..3)
        .map(|_| {
            let r = r.clone();
            std::thread::spawn(move || ken_bounded(&r, &["index", "build", "--full"]))
        })
        .collect();
    let outs: Vec<Output> = runs.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(outs.iter().any(|o| o.status.success()), "no build succeeded");
    for o in &outs {
        if !o.status.success() {
            assert!(
                stderr(o).contains("another `ken index build` is running"),
                "{}",
                stderr(o)
            );
        }
    }
    let verify = ken_bounded(&r, &["index", "verify"]);
    assert!(verify.status.success(), "{}{}", stdout(&verify), stderr(&verify));
}
