//! Index damage, fuzzed deterministically: bytes flipped at many offsets of every kind of
//! index file in turn, and the queries an agent runs (search, context, symbol, callers) and a
//! server run against each. The rule held: no byte of any index file makes a query panic,
//! abort or hang; the answer is the undamaged one, or the damage is named (the file) with the
//! command that repairs it; a server stays up; and the next build repairs the index.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::serve::{post, shop_repo, start};
use support::{ken_bin, stderr, stdout};

/// The queries run against every damaged index.
const QUERIES: &[&[&str]] = &[
    &["search", "--lexical", "discount"],
    &["search", "cart total"],
    &["context", "apply a discount to the cart", "--budget", "400"],
    &["symbol", "Cart"],
    &["callers", "shop.cart.Cart.add"],
];

/// Runs `ken ARGS` in `dir` under a wall-clock bound (coreutils `timeout`: exit 124 on a hang).
fn ken_bounded(dir: &Path, args: &[&str]) -> Output {
    Command::new("timeout")
        .args(["-s", "KILL", "60", ken_bin()])
        .args(args)
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .expect("run ken under timeout")
}

/// Every file of the index, relative to `.kenning/`, but the build lock, the folder's own
/// `.gitignore` and the readers' leases (none is read by queries).
fn index_files(index: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() && p.file_name().is_some_and(|n| n == "readers") {
                continue;
            }
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                let rel = p.strip_prefix(base).unwrap().to_path_buf();
                let name = rel.file_name().unwrap().to_string_lossy().to_string();
                if name != "lock" && name != ".gitignore" && !name.ends_with(".lock") {
                    out.push(rel);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(index, index, &mut out);
    out
}

/// Deterministic offsets: the first bytes (headers, magic), byte 14, the middle, the last
/// bytes (tantivy's footer and checksum), and a few from a fixed linear congruential walk.
fn offsets(len: usize, seed: u64) -> Vec<usize> {
    if len == 0 {
        return Vec::new();
    }
    let mut v = vec![0, 1, 14, len / 2, len - 1, len.saturating_sub(9)];
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    for _ in 0..4 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.push((x >> 33) as usize % len);
    }
    v.retain(|&o| o < len);
    v.sort_unstable();
    v.dedup();
    v
}

/// What the damage may be called: the file's name, or for a tantivy file the lexical part
/// (the file named by tantivy's checksum).
fn names_damage(text: &str, rel: &Path) -> bool {
    let name = rel.file_name().unwrap().to_string_lossy();
    let lexical = rel.components().any(|c| c.as_os_str() == "lexical");
    text.contains(name.as_ref()) || (lexical && text.contains("lexical") && text.contains("damaged"))
}

#[test]
fn flipped_bytes_in_every_index_file_are_named_or_answered_right() {
    let repo = shop_repo();
    let r = repo.path();
    let index = r.join(".kenning");
    let baseline: Vec<String> = QUERIES
        .iter()
        .map(|q| {
            let out = ken_bounded(r, q);
            assert!(out.status.success(), "ken {q:?}: {}", stderr(&out));
            stdout(&out)
        })
        .collect();
    let files = index_files(&index);
    let kinds: Vec<String> = files.iter().map(|f| f.to_string_lossy().to_string()).collect();
    for want in [
        "CURRENT",
        "FORMAT",
        "manifest.json",
        "files.bin",
        "graph.bin",
        "vectors.bin",
        "rows-",
        ".b1",
        ".fast",
        ".store",
        ".term",
        ".idx",
        "meta.json",
        "seg-",
    ] {
        assert!(
            kinds.iter().any(|k| k.contains(want)),
            "no {want} among {kinds:?}"
        );
    }
    let mut failures = Vec::new();
    let mut runs = 0;
    for (i, rel) in files.iter().enumerate() {
        let path = index.join(rel);
        let pristine = std::fs::read(&path).unwrap();
        for off in offsets(pristine.len(), i as u64) {
            let mut bytes = pristine.clone();
            bytes[off] ^= 0x5A;
            std::fs::write(&path, &bytes).unwrap();
            for (q, want) in QUERIES.iter().zip(&baseline) {
                runs += 1;
                let out = ken_bounded(r, q);
                let (o, e) = (stdout(&out), stderr(&out));
                let code = out.status.code().unwrap_or(-1);
                let what = format!("{} byte {off}: ken {q:?}: exit {code}", rel.display());
                if !(0..=100).contains(&code) {
                    failures.push(format!("{what} (killed or crashed)\n{e}"));
                } else if e.contains("panicked") {
                    failures.push(format!("{what} panicked\n{e}"));
                } else if code == 0 && o != *want && !names_damage(&format!("{o}{e}"), rel) {
                    failures.push(format!("{what}: a different answer that names no damage\n{o}"));
                } else if code != 0 && !names_damage(&e, rel) {
                    failures.push(format!("{what}: the error does not name the file\n{e}"));
                } else if code != 0 && !e.contains("ken index build") {
                    failures.push(format!("{what}: the error gives no repair\n{e}"));
                }
            }
        }
        std::fs::write(&path, &pristine).unwrap();
    }
    assert!(runs > 500, "only {runs} runs");
    assert!(
        failures.is_empty(),
        "{} of {runs} runs:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn a_server_stays_up_on_a_damaged_part_and_reports_it() {
    let repo = shop_repo();
    let r = repo.path();
    let index = r.join(".kenning");
    let largest_fast = index_files(&index)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "fast"))
        .max_by_key(|p| std::fs::metadata(index.join(p)).unwrap().len())
        .expect("a .fast file");
    let path = index.join(&largest_fast);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[14] ^= 0x5A;
    std::fs::write(&path, &bytes).unwrap();
    let server = start(r, &["--no-watch"], &[]);
    let status = post(server.addr, "index_status", &serde_json::json!({}));
    assert_eq!(status.status, 200, "{}", status.body);
    let name = largest_fast.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        status.body.contains("damaged") && status.body.contains(&name),
        "{}",
        status.body
    );
    // The lexical search names the damage; the graph keeps answering.
    let search = post(
        server.addr,
        "search",
        &serde_json::json!({"query": "discount", "mode": "lexical"}),
    );
    assert!(
        search.body.contains(&name) && search.body.contains("ken index build"),
        "{}",
        search.body
    );
    let callers = post(
        server.addr,
        "callers",
        &serde_json::json!({"symbol": "shop.cart.Cart.add"}),
    );
    assert_eq!(callers.status, 200, "{}", callers.body);
    drop(server);
    // The next build repairs it.
    let out = support::ken(&["index", "build", "."], r);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = ken_bounded(r, &["search", "--lexical", "discount"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("discount"), "{}", stdout(&out));
}

#[test]
fn a_missing_or_garbage_current_says_what_is_wrong_and_how_to_repair() {
    let repo = shop_repo();
    let r = repo.path();
    let current = r.join(".kenning/CURRENT");
    let damage: [(&str, &dyn Fn()); 2] = [
        ("garbage", &|| {
            std::fs::write(&current, "not a generation\n").unwrap()
        }),
        ("missing", &|| std::fs::remove_file(&current).unwrap()),
    ];
    for (what, damage) in damage {
        damage();
        let out = ken_bounded(r, &["search", "--lexical", "discount"]);
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{what} CURRENT: {e}");
        assert!(
            e.contains("CURRENT") && e.contains("ken index build"),
            "{what} CURRENT: {e}"
        );
        let out = ken_bounded(r, &["index", "build", "."]);
        assert!(
            out.status.success(),
            "{what} CURRENT is repaired by a build: {}",
            stderr(&out)
        );
        let out = ken_bounded(r, &["search", "--lexical", "discount"]);
        assert!(
            out.status.success(),
            "{what} CURRENT, after the build: {}",
            stderr(&out)
        );
    }
}

/// Past the size where opening checks every checksum, damage meets tantivy itself: every
/// read goes through the panic boundary, so a flipped byte is an error or an answer, never a
/// panic that escapes. (Without the checksums some flips give a different answer: that is
/// what `LexicalIndex::verify`, run once by a server and by every build, is for.)
#[test]
fn unverified_lexical_reads_turn_damage_into_errors_not_panics() {
    use kenning::lexical::{LexicalIndex, LexicalQuery, SearchOptions};
    kenning::util::install_quiet_panic_hook();
    let repo = shop_repo();
    let index = repo.path().join(".kenning");
    let lexical_dir = std::fs::read_dir(&index)
        .unwrap()
        .flatten()
        .map(|e| e.path().join("lexical"))
        .find(|p| p.is_dir())
        .expect("a lexical folder");
    let query = LexicalQuery::parse("discount cart");
    let run = |dir: &Path| -> Result<String, String> {
        let l = LexicalIndex::open_unverified(dir).map_err(|e| e.to_string())?;
        let hits = l
            .search(&query, &SearchOptions::default())
            .map_err(|e| e.to_string())?;
        let defining = l.files_defining("cart").map_err(|e| e.to_string())?;
        let with = l
            .files_with_words(&["discount".to_string()])
            .map_err(|e| e.to_string())?;
        Ok(format!(
            "{:?} {defining:?} {with:?}",
            hits.hits.iter().map(|h| &h.path).collect::<Vec<_>>()
        ))
    };
    let baseline = run(&lexical_dir).expect("the undamaged index answers");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&lexical_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    let (mut errors, mut runs, mut different) = (0, 0, 0);
    for (i, path) in files.iter().enumerate() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.ends_with(".lock") {
            continue;
        }
        let pristine = std::fs::read(path).unwrap();
        for off in offsets(pristine.len(), 1000 + i as u64) {
            let mut bytes = pristine.clone();
            bytes[off] ^= 0x5A;
            std::fs::write(path, &bytes).unwrap();
            runs += 1;
            // A panic escaping `run` fails the test here.
            match run(&lexical_dir) {
                Err(e) => {
                    errors += 1;
                    assert!(
                        e.contains("is damaged") && e.contains("ken index build"),
                        "{name} byte {off}: {e}"
                    );
                }
                Ok(answer) => different += usize::from(answer != baseline),
            }
        }
        std::fs::write(path, &pristine).unwrap();
    }
    eprintln!(
        "unverified lexical reads: {errors} errors and {different} different answers in {runs} runs, no panic escaped"
    );
    assert!(runs > 100 && errors > runs / 4, "{errors} errors in {runs} runs");
}

/// `ken serve` against one flipped byte in each index file: it listens and keeps answering
/// (status and a search, each 200 or an error answer naming the file), or refuses to start
/// with an exit code and a message naming the file; never a crash.
#[test]
fn a_server_on_each_damaged_file_answers_or_refuses_by_name() {
    use std::io::{BufRead, BufReader};
    let repo = shop_repo();
    let r = repo.path();
    let index = r.join(".kenning");
    // A server repairs what a build repairs (a damaged manifest, `FORMAT`, `CURRENT`) behind
    // its handshake, so each case starts from the whole index as built.
    let kept = tempfile::tempdir().unwrap();
    let copy = |from: &Path, to: &Path| {
        let _ = std::fs::remove_dir_all(to);
        let ok = Command::new("cp").arg("-a").arg(from).arg(to).status().unwrap();
        assert!(ok.success());
    };
    let pristine_index = kept.path().join("index");
    copy(&index, &pristine_index);
    let mut failures = Vec::new();
    for rel in index_files(&index) {
        copy(&pristine_index, &index);
        let path = index.join(&rel);
        let pristine = std::fs::read(&path).unwrap();
        let mut bytes = pristine.clone();
        let off = 14.min(bytes.len() - 1);
        bytes[off] ^= 0x5A;
        std::fs::write(&path, &bytes).unwrap();
        let mut child = Command::new(ken_bin())
            .args(["serve", "--no-watch", "--http", "127.0.0.1:0", "--repo"])
            .arg(r)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .env_remove("KEN_SERVE_TOKEN")
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let mut seen = String::new();
        let addr = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    seen.push_str(&line);
                    seen.push('\n');
                    if let Some(a) = line.strip_prefix("listening on http://") {
                        break Some(a.trim().parse::<std::net::SocketAddr>().unwrap());
                    }
                }
                _ => break None,
            }
        };
        let what = format!("{} byte {off}", rel.display());
        match addr {
            Some(addr) => {
                std::thread::spawn(move || for _ in lines {});
                for (op, body) in [
                    ("index_status", serde_json::json!({})),
                    (
                        "search",
                        serde_json::json!({"query": "discount", "mode": "lexical"}),
                    ),
                    ("callers", serde_json::json!({"symbol": "shop.cart.Cart.add"})),
                ] {
                    let reply = post(addr, op, &body);
                    // Or it is rebuilding what was damaged, and says the part is being built.
                    let named = names_damage(&reply.body, &rel) || reply.body.contains("is being built");
                    if reply.status >= 500 && !named {
                        failures.push(format!(
                            "{what}: {op} {} names no damage: {}",
                            reply.status, reply.body
                        ));
                    }
                    if reply.body.contains("panicked") {
                        failures.push(format!("{what}: {op} panicked: {}", reply.body));
                    }
                }
                if let Ok(Some(status)) = child.try_wait() {
                    failures.push(format!("{what}: the server died: {status}"));
                }
                let _ = child.kill();
                let _ = child.wait();
            }
            None => {
                let status = child.wait().unwrap();
                let code = status.code().unwrap_or(-1);
                if !(1..=100).contains(&code) || seen.contains("panicked") || !names_damage(&seen, &rel) {
                    failures.push(format!(
                        "{what}: serve exited {code} without naming the file:\n{seen}"
                    ));
                }
            }
        }
        std::fs::write(&path, &pristine).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Inputs the user controls are read through a bound: an endless query file is cut (and the
/// process stays small), a file past a parse bound is skipped with the bound named, and the
/// thread count is refused past its bound.
#[test]
fn endless_inputs_and_parse_bounds_are_bounded_and_named() {
    let repo = shop_repo();
    let r = repo.path();
    for endless in ["/dev/zero", "/dev/urandom"] {
        let out = ken_bounded(r, &["search", "--query-file", endless, "--lexical"]);
        let code = out.status.code().unwrap_or(-1);
        assert!(
            (0..=2).contains(&code),
            "{endless}: exit {code}: {}",
            stderr(&out)
        );
    }
    let out = ken_bounded(r, &["index", "build", ".", "-j", "99999999999999"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not in 0..=1024"), "{}", stderr(&out));
    // A large generated file: over the node bound it is skipped, the rest indexed.
    let mut big = String::new();
    for i in 0..5000 {
        big.push_str(&format!("def generated_{i}(a, b):\n    return a + b * {i}\n"));
    }
    std::fs::write(r.join("generated.py"), big).unwrap();
    let out = ken_bounded(r, &["index", "build", ".", "--max-tree-nodes", "20000", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        report["manifest"]["summary"]["skipped_by_reason"]["parse-limit"], 1,
        "{report}"
    );
    let status = ken_bounded(r, &["index", "status", "--json"]);
    let s = stdout(&status);
    assert!(
        s.contains("generated.py") && s.contains("over the 20000 bound (--max-tree-nodes)"),
        "{s}"
    );
    let out = ken_bounded(r, &["symbol", "Cart"]);
    assert!(
        out.status.success() && stdout(&out).contains("shop/cart.py"),
        "{}",
        stderr(&out)
    );
    // Within the bound it is indexed.
    let out = ken_bounded(r, &["index", "build", "."]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = ken_bounded(r, &["symbol", "generated_4999"]);
    assert!(
        out.status.success() && stdout(&out).contains("generated.py"),
        "{}",
        stdout(&out)
    );
}

/// Readers need no write access: on a read-only mount of the checkout (index included) every
/// query answers as it does on the writable one.
#[test]
fn a_read_only_checkout_answers_every_query() {
    let repo = shop_repo();
    let r = repo.path();
    let root = r.to_str().unwrap();
    for q in QUERIES {
        let writable = ken_bounded(r, q);
        assert!(writable.status.success(), "{}", stderr(&writable));
        let args: Vec<String> = q.iter().map(|a| format!("'{a}'")).collect();
        let script = format!(
            "mount --bind {root} {root} && mount -o remount,ro,bind {root} {root} && cd {root} \
             && ! touch probe 2>/dev/null && exec {} {}",
            ken_bin(),
            args.join(" ")
        );
        let out = Command::new("unshare")
            .args(["--user", "--map-root-user", "--mount", "sh", "-c", &script])
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap();
        assert!(out.status.success(), "read-only ken {q:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), stdout(&writable), "read-only ken {q:?}");
    }
}
