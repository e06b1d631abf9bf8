//! The index store and the incremental builder: equality with a full rebuild, determinism
//! across thread counts, atomic commits under a real kill, the build lock, format checks,
//! and skip accounting.

mod support;

use std::path::Path;
use std::time::Duration;

use kenning::index::{IndexBuilder, IndexConfig, IndexSnapshot, IndexStore, NoProgress};
use support::{build, index_dir, ken, logical_dump, materialize, stderr, write_tree};

const REPO: &str = r#"
//- pkg/__init__.py
from .core import run
//- pkg/core.py
import os

class Engine:
    def run(self, job):
        """Runs a job."""
        return helper(job)

def helper(job):
    return os.path.join("a", job)
//- scripts/tool.py
from pkg.core import Engine
Engine().run("x")
//- Cargo.toml
[package]
name = "demo-crate"
version = "0.1.0"
//- src/lib.rs
pub mod store;
pub fn open() -> store::Store { store::Store::new() }
//- src/store/mod.rs
pub struct Store;
impl Store {
    pub fn new() -> Self { Store }
}
//- README.md
not code
"#;

fn cfg() -> IndexConfig {
    IndexConfig::default()
}

#[test]
fn no_change_rebuild_parses_nothing() {
    let repo = materialize(REPO);
    let first = build(repo.path(), &cfg()).manifest;
    assert!(first.stats.full);
    // Five source files, and Cargo.toml and README.md read as text.
    assert_eq!(first.stats.parsed, 7);
    let second = build(repo.path(), &cfg()).manifest;
    assert!(!second.stats.full);
    assert_eq!(
        (second.stats.parsed, second.stats.reused, second.stats.removed),
        (0, 7, 0)
    );
    assert_eq!(second.generation, first.generation + 1);
    assert_eq!(second.summary, first.summary);
}

#[test]
fn incremental_rebuild_equals_full_rebuild() {
    let repo = materialize(REPO);
    build(repo.path(), &cfg());
    // Edit one file, delete one, add one, and add a package marker that renames a module.
    std::thread::sleep(Duration::from_millis(20));
    write_tree(
        repo.path(),
        "//- pkg/core.py\nclass Engine:\n    def stop(self):\n        pass\n//- src/extra.rs\npub fn extra() {}\n//- scripts/__init__.py\n",
    );
    std::fs::remove_file(repo.path().join("src/store/mod.rs")).unwrap();
    let inc = build(repo.path(), &cfg()).manifest;
    assert_eq!(
        inc.stats.parsed, 3,
        "only the edited and added files are parsed: {:?}",
        inc.stats
    );
    assert_eq!(inc.stats.removed, 1);
    let incremental = logical_dump(&index_dir(repo.path(), &cfg()));
    assert!(
        incremental.contains("scripts/tool.py lang=python module=scripts.tool"),
        "{incremental}"
    );

    let full_dir = tempfile::tempdir().unwrap();
    let full_cfg = IndexConfig {
        index_dir: Some(full_dir.path().join("idx")),
        ..cfg()
    };
    build(repo.path(), &full_cfg);
    assert_eq!(incremental, logical_dump(&full_dir.path().join("idx")));
}

#[test]
fn many_incremental_builds_compact_and_stay_equal_to_full() {
    let repo = materialize(REPO);
    for i in 0..20 {
        write_tree(
            repo.path(),
            &format!("//- gen/m{}.py\ndef f{i}():\n    return {i}\n", i % 7),
        );
        build(repo.path(), &cfg());
    }
    let snap = IndexSnapshot::open(&index_dir(repo.path(), &cfg())).unwrap();
    assert!(snap.manifest.segments.len() <= 16, "segments are compacted");
    let full_dir = tempfile::tempdir().unwrap();
    let full_cfg = IndexConfig {
        index_dir: Some(full_dir.path().join("idx")),
        full: true,
        ..cfg()
    };
    build(repo.path(), &full_cfg);
    assert_eq!(
        logical_dump(&index_dir(repo.path(), &cfg())),
        logical_dump(&full_dir.path().join("idx"))
    );
}

#[test]
fn stored_result_is_identical_at_any_thread_count() {
    let repo = materialize(REPO);
    // Folders walked on one thread or four: skips of every kind and nested ignore rules too.
    let mut tree = String::from(
        "//- .gitignore\nbuild/\n//- build/out.py\nx = 1\n//- many/.gitignore\nscratch_*.py\n\
         //- many/scratch_1.py\ny = 2\n//- node_modules/left/index.js\nmodule.exports = 1;\n\
         //- web/app.min.js\nvar a=1;\n//- notes/data.xyz\nwhat\n//- notes/deep/more.xyz\nwhat\n",
    );
    for i in 0..60 {
        tree.push_str(&format!(
            "//- many/m{i}.py\nclass C{i}:\n    def m(self):\n        return f{i}()\n"
        ));
    }
    write_tree(repo.path(), &tree);
    let dirs: Vec<_> = [1usize, 4]
        .iter()
        .map(|&threads| {
            let d = tempfile::tempdir().unwrap();
            let c = IndexConfig {
                index_dir: Some(d.path().join("idx")),
                threads,
                ..cfg()
            };
            build(repo.path(), &c);
            d
        })
        .collect();
    let read = |d: &Path, rel: &str| std::fs::read(d.join("idx").join(rel)).unwrap();
    let table = "gen-00000001/files.bin";
    assert_eq!(
        read(dirs[0].path(), table),
        read(dirs[1].path(), table),
        "file tables differ"
    );
    let seg = "segments/seg-00000001.bin";
    assert_eq!(
        read(dirs[0].path(), seg),
        read(dirs[1].path(), seg),
        "segments differ"
    );
}

#[test]
fn module_paths_follow_each_ecosystem() {
    let repo = materialize(REPO);
    build(repo.path(), &cfg());
    let dump = logical_dump(&index_dir(repo.path(), &cfg()));
    for expected in [
        "pkg/core.py lang=python module=pkg.core",
        "pkg/__init__.py lang=python module=pkg ",
        "scripts/tool.py lang=python module=tool ",
        "src/store/mod.rs lang=rust module=demo_crate::store ",
        "def method    pkg.core.Engine.run",
        "def method    demo_crate::store::Store::new",
    ] {
        assert!(dump.contains(expected), "missing {expected:?} in\n{dump}");
    }
}

#[test]
fn skipped_files_are_counted_by_reason() {
    let repo = materialize(
        "//- .gitignore\nignored.py\n//- .kenignore\nsecret/\n//- ignored.py\nx = 1\n//- secret/a.py\nx = 1\n\
         //- node_modules/lib/index.js\nmodule.exports = 1\n//- app.min.js\nvar a=1\n//- ok.py\nx = 1\n//- notes.txt\nhello\n//- photo.xyz\nhello\n//- big.py\n",
    );
    let root = repo.path();
    std::fs::write(root.join("big.py"), "x = 1\n".repeat(100)).unwrap();
    std::fs::write(root.join("blob.py"), b"\x00\x01binary").unwrap();
    std::fs::write(
        root.join("packed.js"),
        format!("var a={};\n", "1+".repeat(120) + "1"),
    )
    .unwrap();
    std::os::unix::fs::symlink(root.join("ok.py"), root.join("link.py")).unwrap();
    let config = IndexConfig {
        walk: kenning::WalkConfig {
            max_file_size: 300,
            max_line_length: 200,
            ..Default::default()
        },
        ..cfg()
    };
    let m = build(root, &config).manifest;
    let by = |r: &str| m.summary.skipped_by_reason.get(r).copied().unwrap_or(0);
    assert_eq!(
        m.summary.files, 2,
        "ok.py, and notes.txt as text: {:?}",
        m.summary
    );
    assert_eq!(m.summary.by_language.get("text").map(|l| l.files), Some(1));
    assert_eq!(by("too-large"), 1);
    assert_eq!(by("binary"), 1);
    assert_eq!(
        by("minified"),
        2,
        "app.min.js by name, packed.js by its line length"
    );
    assert_eq!(by("vendored-dir"), 1);
    assert_eq!(by("symlink"), 1);
    assert_eq!(
        by("unsupported-language"),
        1,
        "photo.xyz; hidden files are not visited at all"
    );
    assert_eq!(snap_unsupported(root, &config), vec![("xyz".to_string(), 1)]);
    let snap = IndexSnapshot::open(&index_dir(root, &config)).unwrap();
    assert!(snap.table.skipped.iter().any(|s| s.path == "node_modules"));
    assert!(snap.table.find("ignored.py").is_none() && snap.table.find("secret/a.py").is_none());
}

fn snap_unsupported(root: &Path, config: &IndexConfig) -> Vec<(String, u64)> {
    let snap = IndexSnapshot::open(&index_dir(root, config)).unwrap();
    snap.table.unsupported_by_extension.into_iter().collect()
}

#[test]
fn symlink_loops_are_reported_not_followed_forever() {
    let repo = materialize("//- a/x.py\nx = 1\n");
    std::os::unix::fs::symlink(repo.path().join("a"), repo.path().join("a/loop")).unwrap();
    let config = IndexConfig {
        walk: kenning::WalkConfig {
            follow_symlinks: true,
            ..Default::default()
        },
        ..cfg()
    };
    let m = build(repo.path(), &config).manifest;
    assert_eq!(
        m.summary.skipped_by_reason.get("symlink-loop"),
        Some(&1),
        "{:?}",
        m.summary
    );
    assert_eq!(m.summary.files, 1);
}

#[test]
fn syntax_errors_and_invalid_utf8_are_recorded_not_fatal() {
    let repo = materialize(
        "//- broken.py\ndef ok():\n    pass\n\ndef broken(:\n    return (\n\nclass After:\n    pass\n",
    );
    let mut bytes = b"/// caf".to_vec();
    bytes.extend_from_slice(&[0xE9, 0xFF]);
    bytes.extend_from_slice(b"\npub fn still_found() {}\n");
    std::fs::write(repo.path().join("latin1.rs"), bytes).unwrap();
    let m = build(repo.path(), &cfg()).manifest;
    assert_eq!(m.summary.files, 2);
    assert_eq!(m.summary.files_with_diagnostics, 2);
    assert_eq!(m.summary.diagnostics_by_kind.get("syntax-error"), Some(&1));
    assert_eq!(m.summary.diagnostics_by_kind.get("invalid-utf8"), Some(&1));
    let dump = logical_dump(&index_dir(repo.path(), &cfg()));
    assert!(dump.contains("def function  broken.ok"), "{dump}");
    assert!(
        dump.contains("def class     broken.After"),
        "recovery continues after the error: {dump}"
    );
    assert!(dump.contains("still_found"), "{dump}");
}

#[test]
fn second_builder_is_refused_and_readers_are_not_blocked() {
    let repo = materialize(REPO);
    build(repo.path(), &cfg());
    let store = IndexStore::new(index_dir(repo.path(), &cfg()));
    let _held = store.lock().expect("lock");
    let out = ken(&["index", "build", "."], repo.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("another `ken index build` is running"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains(&format!("pid {}", std::process::id())),
        "{}",
        stderr(&out)
    );
    let read = ken(&["symbol", "Engine"], repo.path());
    assert!(read.status.success(), "{}", stderr(&read));
}

#[test]
fn a_lock_held_for_an_instant_by_no_named_holder_is_waited_for() {
    // What a child forked by another thread holds between its fork and its exec: the lock,
    // with no pid in the file. A build waits for it; one held on is refused, said plainly.
    let repo = materialize(REPO);
    build(repo.path(), &cfg());
    let path = index_dir(repo.path(), &cfg()).join("lock");
    let hold = |ms: u64| {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        f.try_lock().unwrap();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(ms));
            drop(f);
        })
    };
    let brief = hold(60);
    let t0 = std::time::Instant::now();
    build(repo.path(), &cfg());
    assert!(
        t0.elapsed() >= Duration::from_millis(40),
        "the build did not wait"
    );
    brief.join().unwrap();
    let long = hold(2000);
    let err = IndexBuilder::new(repo.path(), &cfg(), &NoProgress)
        .unwrap()
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("lock file held"), "{err}");
    long.join().unwrap();
}

#[test]
fn newer_or_foreign_index_fails_with_a_clear_error() {
    let repo = materialize(REPO);
    build(repo.path(), &cfg());
    let dir = index_dir(repo.path(), &cfg());
    std::fs::write(dir.join("FORMAT"), "kenning-index 99\n").unwrap();
    let out = ken(&["index", "status"], repo.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("format version 99, newer than this ken supports"),
        "{}",
        stderr(&out)
    );
    let out = ken(&["index", "build", "."], repo.path());
    assert!(
        stderr(&out).contains("newer than this ken supports"),
        "{}",
        stderr(&out)
    );

    let foreign = tempfile::tempdir().unwrap();
    std::fs::write(foreign.path().join("notes.txt"), "mine").unwrap();
    let arg = foreign.path().to_str().unwrap();
    let out = ken(&["index", "build", ".", "--index-dir", arg], repo.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("is not a kenning index"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_dir(foreign.path()).unwrap().count(),
        1,
        "nothing was written into it"
    );
}

#[test]
fn corrupt_segment_is_detected() {
    let repo = materialize(REPO);
    build(repo.path(), &cfg());
    let seg = index_dir(repo.path(), &cfg()).join("segments/seg-00000001.bin");
    let mut bytes = std::fs::read(&seg).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xFF;
    std::fs::write(&seg, bytes).unwrap();
    let out = ken(&["symbol", "Engine"], repo.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("is damaged (checksum mismatch)")
            && stderr(&out).contains("ken index build` repairs it"),
        "{}",
        stderr(&out)
    );
}

/// Kills a real `ken index build` at several moments; the previous generation must stay
/// readable and whole, and the next build must succeed.
#[test]
fn killed_build_leaves_previous_index_readable() {
    let repo = tempfile::tempdir().unwrap();
    let body: String = (0..150)
        .map(|i| format!("def f{i}(x):\n    return g(x) + {i}\n\n"))
        .collect();
    let write_all = |marker: &str| {
        for i in 0..400 {
            std::fs::create_dir_all(repo.path().join(format!("d{}", i % 20))).unwrap();
            let text = format!("{body}def {marker}_{i}():\n    pass\n");
            std::fs::write(repo.path().join(format!("d{}/m{i}.py", i % 20)), text).unwrap();
        }
    };
    write_all("old");
    build(repo.path(), &cfg());
    let dir = index_dir(repo.path(), &cfg());
    let count = |marker: &str| {
        let snap = IndexSnapshot::open(&dir).expect("index must stay readable");
        let syms = snap.load_symbols().expect("segments must be whole");
        syms.iter()
            .flat_map(|s| &s.definitions)
            .filter(|d| d.name.starts_with(marker))
            .count()
    };
    assert_eq!(count("old_"), 400);
    for (round, delay_ms) in [5u64, 40, 90, 160, 260, 400, 700].into_iter().enumerate() {
        write_all(&format!("new{round}"));
        let mut child = std::process::Command::new(support::ken_bin())
            .args(["index", "build", "-q", "."])
            .current_dir(repo.path())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        // Either the old content or the complete new content, never a mix or an error.
        let total: usize = (0..=round).map(|r| count(&format!("new{r}_"))).sum::<usize>() + count("old_");
        assert_eq!(
            total, 400,
            "round {round} (killed after {delay_ms} ms) left a partial index"
        );
    }
    write_all("final");
    let m = build(repo.path(), &cfg()).manifest;
    assert_eq!(m.summary.files, 400);
    assert_eq!(count("final_"), 400);
}

#[test]
fn two_first_builds_at_once_one_builds_and_the_other_is_told_why() {
    for round in 0..8 {
        let repo = materialize("//- a.py\ndef f():\n    return 1\n//- b.py\nfrom a import f\n");
        let spawn = || {
            std::process::Command::new(support::ken_bin())
                .args(["index", "build", ".", "--no-semantic"])
                .current_dir(repo.path())
                .output()
        };
        let (x, y) = std::thread::scope(|s| {
            let a = s.spawn(spawn);
            let b = s.spawn(spawn);
            (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
        });
        let mut built = 0;
        for o in [&x, &y] {
            if o.status.success() {
                built += 1;
            } else {
                assert!(
                    stderr(o).contains("another `ken index build` is running"),
                    "round {round}: {}",
                    stderr(o)
                );
            }
        }
        assert!(built >= 1, "round {round}: neither build succeeded");
        let status = ken(&["index", "status"], repo.path());
        assert!(status.status.success(), "{}", stderr(&status));
    }
}

#[test]
fn an_index_folder_caught_half_created_is_neither_foreign_nor_an_error() {
    // What a first build has written in the moment before its FORMAT file.
    let repo = materialize("//- a.py\ndef f():\n    return 1\n");
    std::fs::create_dir_all(repo.path().join(".kenning/segments")).unwrap();
    std::fs::write(repo.path().join(".kenning/.gitignore"), "*\n").unwrap();
    std::fs::write(repo.path().join(".kenning/lock"), "").unwrap();
    let status = ken(&["index", "status"], repo.path());
    assert!(
        !stderr(&status).contains("not a kenning index"),
        "{}",
        stderr(&status)
    );
    let out = ken(&["index", "build", ".", "--no-semantic"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    // Anything else in a folder without FORMAT is still refused, untouched.
    let foreign = materialize("//- a.py\nx = 1\n//- .kenning/notes.txt\nmine\n");
    let out = ken(&["index", "build", "."], foreign.path());
    assert!(stderr(&out).contains("not a kenning index"), "{}", stderr(&out));
}

#[test]
fn scripts_without_an_extension_are_read_by_their_shebang() {
    let repo = materialize(
        "//- bin/deploy\n#!/usr/bin/env bash\ndeploy() { echo hi; }\ndeploy\n//- bin/data\nplain words\n",
    );
    let m = build(repo.path(), &cfg()).manifest;
    assert_eq!(
        m.summary.by_language.get("bash").map(|l| l.files),
        Some(1),
        "{:?}",
        m.summary
    );
    assert_eq!(m.summary.files, 1, "bin/data has no #! line: not read");
    assert_eq!(m.summary.symbols_by_kind.get("function"), Some(&1));
}

/// `ken index build --quick` commits symbols and the lexical part only and says what it left;
/// search and symbol lookup answer from it, saying the rest is not built yet; the next build
/// parses nothing again and adds the deferred parts, ending up where a full build does.
#[test]
fn a_quick_first_stage_answers_at_once_and_the_next_build_completes_it() {
    let repo = materialize(REPO);
    let out = ken(&["index", "build", "--quick", "--json", "."], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let snap = IndexSnapshot::open(&index_dir(repo.path(), &cfg())).unwrap();
    let m = &snap.manifest;
    assert_eq!(m.stats.deferred, ["graph", "semantic", "history"]);
    assert_eq!(
        m.parts.names(),
        ["lexical"],
        "only the lexical part is built in the first stage"
    );
    let found = ken(&["symbol", "helper", "--json"], repo.path());
    assert!(found.status.success(), "{}", stderr(&found));
    let v: serde_json::Value = serde_json::from_slice(&found.stdout).unwrap();
    assert_eq!(v["hits"][0]["path"], "pkg/core.py", "{v}");
    assert_eq!(
        v["coverage"]["not_built_yet"],
        serde_json::json!(["graph", "semantic", "history"])
    );
    let searched = ken(&["search", "engine run job", "--files"], repo.path());
    assert!(searched.status.success(), "{}", stderr(&searched));
    assert!(String::from_utf8_lossy(&searched.stdout).contains("pkg/core.py"));
    assert!(
        stderr(&searched).contains("not built yet"),
        "{}",
        stderr(&searched)
    );

    let second = build(repo.path(), &cfg()).manifest;
    assert_eq!(
        second.stats.parsed, 0,
        "the second stage parses nothing: {:?}",
        second.stats
    );
    assert!(second.stats.deferred.is_empty());
    assert!(second.parts.graph.is_some() && second.parts.vectors.is_some());
    let staged = logical_dump(&index_dir(repo.path(), &cfg()));
    let full_dir = tempfile::tempdir().unwrap();
    let full_cfg = IndexConfig {
        index_dir: Some(full_dir.path().join("idx")),
        ..cfg()
    };
    build(repo.path(), &full_cfg);
    assert_eq!(staged, logical_dump(&full_dir.path().join("idx")));
    let g = IndexSnapshot::open(&index_dir(repo.path(), &cfg()))
        .unwrap()
        .graph()
        .unwrap();
    let full = IndexSnapshot::open(&full_dir.path().join("idx"))
        .unwrap()
        .graph()
        .unwrap();
    assert_eq!(
        g.resolved, full.resolved,
        "the deferred graph equals a full build's"
    );
}

/// A build where nothing changed carries the semantic part over as it is (linked, not
/// decoded and written again), and the new generation still verifies and answers.
#[test]
fn a_no_change_build_carries_the_vectors_over_unchanged() {
    let repo = materialize(REPO);
    let first = build(repo.path(), &cfg()).manifest;
    let second = build(repo.path(), &cfg()).manifest;
    let (a, b) = (first.parts.vectors.unwrap(), second.parts.vectors.unwrap());
    assert_eq!(a.blake3, b.blake3);
    assert_eq!(b.files_chunked, 0, "{b:?}");
    let dir = index_dir(repo.path(), &cfg());
    let read = |g: u64| std::fs::read(dir.join(format!("gen-{g:08}")).join("vectors.bin")).unwrap();
    assert_eq!(read(first.generation), read(second.generation));
    let verified = ken(&["index", "verify", "."], repo.path());
    assert!(verified.status.success(), "{}", stderr(&verified));
    let found = ken(
        &["search", "--semantic", "join a path for a job", "--files"],
        repo.path(),
    );
    assert!(found.status.success(), "{}", stderr(&found));
    assert!(String::from_utf8_lossy(&found.stdout).contains("pkg/core.py"));
}

#[test]
fn a_committed_generation_is_never_written_again() {
    // Readers map committed parts in place (the graph's heads and bodies, the vectors), which
    // is sound only while no ken process writes a committed generation's files again.
    let repo = materialize(REPO);
    let first = build(repo.path(), &cfg()).manifest;
    let dir = index_dir(repo.path(), &cfg());
    let gen_dir = dir.join(format!("gen-{:08}", first.generation));
    let files = |d: &Path| -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<(String, Vec<u8>)> = walkdir(d)
            .into_iter()
            .map(|p| {
                (
                    p.strip_prefix(d).unwrap().display().to_string(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect();
        out.sort();
        out
    };
    let before = files(&gen_dir);
    let snapshot = IndexSnapshot::open(&dir).unwrap();
    let heads = snapshot.graph_heads().unwrap();
    let core = heads
        .files
        .iter()
        .position(|f| f.path.as_str() == "pkg/core.py")
        .unwrap();
    let body = heads
        .file_body(core)
        .map(|(r, res)| (r.into_owned(), res.into_owned()));
    assert!(body.as_ref().is_some_and(|(refs, _)| !refs.is_empty()));

    // The store's own commit refuses to write over a committed generation.
    let err = IndexStore::new(&dir)
        .commit(&snapshot.manifest, &snapshot.table)
        .unwrap_err();
    assert!(err.to_string().contains("already committed"), "{err}");
    assert_eq!(files(&gen_dir), before);

    // Builds number past it, even a full one; the old generation is kept while the snapshot
    // that leased it lives, collected after, and what was mapped from it still reads the
    // bytes it mapped.
    std::thread::sleep(Duration::from_millis(20));
    write_tree(repo.path(), "//- pkg/core.py\ndef helper(job):\n    return job\n");
    let full = IndexConfig { full: true, ..cfg() };
    let second = build(repo.path(), &full).manifest;
    assert!(second.generation > first.generation);
    let third = build(repo.path(), &cfg()).manifest;
    assert!(third.generation > second.generation);
    assert!(gen_dir.exists(), "a generation a live reader holds is collected");
    drop(snapshot);
    let fourth = build(repo.path(), &cfg()).manifest;
    assert!(fourth.generation > third.generation);
    assert!(
        !gen_dir.exists(),
        "the first generation is collected once its reader is gone"
    );
    let again = heads
        .file_body(core)
        .map(|(r, res)| (r.into_owned(), res.into_owned()));
    assert_eq!(again, body);
}

fn walkdir(d: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(d).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walkdir(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_build_under_a_memory_cap_stores_what_an_uncapped_build_stores() {
    // More files than the semantic part decodes at a time, so the capped build's batches (and
    // its second tokenization for the IDF) are exercised.
    let mut tree = String::from(REPO);
    for i in 0..1100 {
        tree.push_str(&format!(
            "//- gen/mod{i}.py\nfrom pkg.core import helper\n\ndef task_{i}(job):\n    \"\"\"Runs task {i}.\"\"\"\n    return helper(job) + {i}\n"
        ));
    }
    let repo = materialize(&tree);
    let free = build(repo.path(), &cfg()).manifest;
    let capped_dir = tempfile::tempdir().unwrap();
    let capped_cfg = IndexConfig {
        index_dir: Some(capped_dir.path().join("idx")),
        max_memory_mib: Some(64),
        ..cfg()
    };
    let capped = build(repo.path(), &capped_cfg).manifest;
    assert_eq!(capped.stats.max_memory_mib, Some(64));
    let blake3 = |m: &kenning::index::Manifest| {
        let (g, v) = (m.parts.graph.as_ref().unwrap(), m.parts.vectors.as_ref().unwrap());
        (g.blake3.clone(), v.blake3.clone())
    };
    assert_eq!(blake3(&capped), blake3(&free), "graph and vectors");
    let free_dir = index_dir(repo.path(), &cfg());
    assert_eq!(
        logical_dump(&free_dir),
        logical_dump(&capped_dir.path().join("idx"))
    );
    if cfg!(target_os = "linux") {
        let peak = capped.stats.peak_mib.expect("a peak is read on Linux");
        assert!(peak > 0);
        for phase in ["walk", "parse", "graph", "vectors"] {
            assert!(
                capped.stats.phases_peak_mib.contains_key(phase),
                "{:?}",
                capped.stats
            );
        }
    }
    // An incremental build under the cap embeds as it goes, with the stored IDF.
    std::thread::sleep(Duration::from_millis(20));
    write_tree(
        repo.path(),
        "//- gen/mod7.py\ndef task_7(job):\n    return job * 7\n",
    );
    build(repo.path(), &capped_cfg);
    build(repo.path(), &cfg());
    assert_eq!(
        logical_dump(&free_dir),
        logical_dump(&capped_dir.path().join("idx"))
    );
}

#[test]
fn an_update_under_a_cap_too_small_for_the_decoded_graph_resolves_from_the_records() {
    // Enough files for a graph part over 64 KiB (about 80), which decoded is more than half a
    // MiB.
    let mut tree = String::from(REPO);
    for i in 0..500 {
        tree.push_str(&format!(
            "//- gen/mod{i}.py\nfrom pkg.core import helper\n\ndef task_{i}(job):\n    return helper(job) + {i}\n"
        ));
    }
    let repo = materialize(&tree);
    build(repo.path(), &cfg());
    let capped_dir = tempfile::tempdir().unwrap();
    // A library caller may name any cap.
    let capped_cfg = IndexConfig {
        index_dir: Some(capped_dir.path().join("idx")),
        max_memory_mib: Some(1),
        ..cfg()
    };
    build(repo.path(), &capped_cfg);
    std::thread::sleep(Duration::from_millis(20));
    write_tree(
        repo.path(),
        "//- gen/mod7.py\nfrom pkg.core import helper\n\ndef task_7(job):\n    return helper(job)\n\ndef extra_7():\n    return 7\n",
    );
    // A definition added: no update by difference, the previous graph is decoded or not.
    let free = build(repo.path(), &cfg()).manifest;
    let capped = build(repo.path(), &capped_cfg).manifest;
    let (fg, cg) = (free.parts.graph.unwrap(), capped.parts.graph.unwrap());
    // Uncapped, the previous graph is decoded and only the changed file resolved again; under
    // the cap every file is resolved, streamed from the records, to the same bytes.
    assert!(!fg.update.full, "{:?}", fg.update);
    assert!(fg.update.files_resolved < 10, "{:?}", fg.update);
    assert!(cg.update.full, "{:?}", cg.update);
    assert_eq!(
        cg.update.files_resolved,
        fg.update.files_resolved + fg.update.files_copied,
        "{:?}",
        cg.update
    );
    assert_eq!(cg.blake3, fg.blake3);
    assert_eq!(
        logical_dump(&index_dir(repo.path(), &cfg())),
        logical_dump(&capped_dir.path().join("idx"))
    );
}

#[test]
fn the_cli_reports_memory_against_the_cap_and_refuses_a_cap_too_small() {
    let repo = materialize(REPO);
    let out = ken(&["index", "build", "--max-memory", "4096", "."], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    if cfg!(target_os = "linux") {
        assert!(text.contains("memory peak"), "{text}");
        assert!(text.contains("memory: within the cap of 4096 MiB"), "{text}");
    }
    let small = ken(&["index", "build", "--max-memory", "8", "."], repo.path());
    assert!(!small.status.success());
    assert!(stderr(&small).contains("--max-memory"), "{}", stderr(&small));
    // With no cap given, the build takes three quarters of the memory available, and says so.
    if cfg!(target_os = "linux") && std::env::var_os("KEN_MAX_MEMORY_MIB").is_none() {
        let out = ken(&["index", "build", "--full", "--json", "."], repo.path());
        assert!(out.status.success(), "{}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let stats = &report["manifest"]["stats"];
        assert_eq!(stats["max_memory_from"], "available", "{stats}");
        let cap = stats["max_memory_mib"].as_u64().unwrap();
        let available = kenning::index::available_mib().unwrap();
        assert!(
            cap >= 128 && cap <= available.max(128),
            "{cap} of {available} MiB"
        );
        let text = ken(&["index", "build", "--full", "."], repo.path());
        let text = String::from_utf8_lossy(&text.stdout);
        assert!(
            text.contains("(three quarters of the memory available)"),
            "{text}"
        );
    }
}

/// A tree of `n` Python modules, each a few kilobytes.
fn python_tree(n: usize) -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    let body: String = (0..60)
        .map(|i| format!("def f{i}(x):\n    return g(x) + {i}\n\n"))
        .collect();
    for i in 0..n {
        let dir = repo.path().join(format!("d{:02}", i % 40));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("m{i}.py")),
            format!("{body}def mark_{i}():\n    pass\n"),
        )
        .unwrap();
    }
    repo
}

#[test]
fn a_first_build_in_checkpoints_equals_one_build() {
    let repo = python_tree(40);
    let one = tempfile::tempdir().unwrap();
    let one_cfg = IndexConfig {
        index_dir: Some(one.path().join("idx")),
        checkpoint_min_bytes: None,
        vectors: false,
        ..cfg()
    };
    let single = build(repo.path(), &one_cfg).manifest;
    assert_eq!(single.generation, 1);
    let staged_cfg = IndexConfig {
        checkpoint_min_bytes: Some(0),
        vectors: false,
        ..cfg()
    };
    let staged = build(repo.path(), &staged_cfg).manifest;
    // Eight checkpoints (the last the whole tree, first stage), then the graph and history,
    // with the checkpoints' lexical segments merged beside them.
    assert_eq!(staged.generation, 9);
    assert_eq!(staged.parts.lexical.as_ref().map(|l| l.segments()), Some(1));
    assert_eq!((staged.stats.pending, staged.stats.deferred.len()), (0, 0));
    // The report tells the whole build; the last generation itself read nothing again.
    assert_eq!(
        (staged.stats.parsed, staged.stats.reused, staged.stats.full),
        (40, 0, true)
    );
    let dir = index_dir(repo.path(), &staged_cfg);
    let on_disk = IndexStore::new(&dir).read_manifest(staged.generation).unwrap();
    assert_eq!((on_disk.stats.parsed, on_disk.stats.reused), (0, 40));
    assert!(staged.parts.graph.is_some());
    assert_eq!(
        logical_dump(&index_dir(repo.path(), &staged_cfg)),
        logical_dump(&one.path().join("idx"))
    );
    // A complete index is never replaced by checkpoints: the next build is one generation.
    let again = build(repo.path(), &staged_cfg).manifest;
    assert_eq!(again.generation, 10);
}

#[test]
fn a_killed_first_build_resumes_from_its_last_checkpoint_and_answers_meanwhile() {
    let repo = python_tree(1600);
    let dir = index_dir(repo.path(), &cfg());
    let store = IndexStore::new(&dir);
    let mut child = std::process::Command::new(support::ken_bin())
        .args([
            "index",
            "build",
            "-q",
            ".",
            "--no-semantic",
            "--checkpoint-min-bytes",
            "0",
        ])
        .current_dir(repo.path())
        .spawn()
        .unwrap();
    // Killed as soon as a checkpoint with files still to read is committed.
    let started = std::time::Instant::now();
    let committed = loop {
        let m = store
            .current()
            .ok()
            .flatten()
            .and_then(|g| store.read_manifest(g).ok());
        if let Some(m) = m.filter(|m| m.stats.pending > 0) {
            let _ = child.kill();
            break m;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the build ended before a checkpoint was seen"
        );
        assert!(started.elapsed() < Duration::from_secs(120));
        std::thread::sleep(Duration::from_millis(2));
    };
    let _ = child.wait();
    let read = committed.summary.files;
    assert!(read > 0 && read < 1600, "{read}");
    // Queries answer from the checkpoint and say what is not read yet.
    let out = ken(&["symbol", "mark_0", "--json"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pending = v["coverage"]["not_read_yet"].as_u64().unwrap_or(0);
    assert!(pending > 0, "{v}");
    assert_eq!(
        v["coverage"]["files_indexed"].as_u64().unwrap() + pending,
        1600,
        "{v}"
    );
    // The next build reads only what the checkpoint has not.
    let out = ken(&["index", "build", ".", "--no-semantic", "--json"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let m = IndexStore::new(&dir)
        .read_manifest(IndexStore::new(&dir).current().unwrap().unwrap())
        .unwrap();
    assert_eq!((m.summary.files, m.stats.pending), (1600, 0));
    assert!(
        m.stats.reused >= read,
        "{read} files were committed, {} reused",
        m.stats.reused
    );
    let resumed = logical_dump(&dir);
    let clean = tempfile::tempdir().unwrap();
    let clean_cfg = IndexConfig {
        index_dir: Some(clean.path().join("idx")),
        checkpoint_min_bytes: None,
        vectors: false,
        ..cfg()
    };
    build(repo.path(), &clean_cfg);
    assert_eq!(resumed, logical_dump(&clean.path().join("idx")));
    let verify = ken(&["index", "verify"], repo.path());
    assert!(verify.status.success(), "{}", stderr(&verify));
}

#[test]
fn a_large_file_whose_parse_would_pass_the_cap_is_indexed_as_text_and_parsed_again_later() {
    if !cfg!(target_os = "linux") {
        return; // the bound reads the resident set from /proc
    }
    // A 1 MiB cap is under what the process holds: a large file's parse reaches its bound
    // beside other parses, again alone, and the file is indexed as text; small files are
    // parsed as ever.
    let mut big = String::new();
    for i in 0..3000 {
        big.push_str(&format!(
            "function quillwort{i}(a, b) {{ return [a + {i}, b * {i}]; }}\n"
        ));
    }
    assert!(big.len() > 64 * 1024);
    let tree = format!("{REPO}//- web/bundle.js\n{big}");
    let repo = materialize(&tree);
    let capped = IndexConfig {
        max_memory_mib: Some(1),
        ..cfg()
    };
    build(repo.path(), &capped);
    let dir = index_dir(repo.path(), &cfg());
    let snap = IndexSnapshot::open(&dir).unwrap();
    let bundle = snap.table.find("web/bundle.js").expect("indexed, not skipped");
    assert!(bundle.symbol_counts.is_empty(), "{:?}", bundle.symbol_counts);
    let why = &bundle.diagnostics[0];
    assert!(why.message.contains("memory cap of 1 MiB"), "{}", why.message);
    let core = snap.table.find("pkg/core.py").unwrap();
    assert!(!core.symbol_counts.is_empty(), "small files are parsed");
    drop(snap);
    let found = ken(&["search", "--lexical", "quillwort2999", "--json"], repo.path());
    assert!(
        String::from_utf8_lossy(&found.stdout).contains("web/bundle.js"),
        "its text is searched: {}",
        stderr(&found)
    );
    // The file has not changed, but the next build, with no cap, parses it.
    let second = build(repo.path(), &cfg()).manifest;
    assert_eq!(second.stats.parsed, 1);
    let snap = IndexSnapshot::open(&dir).unwrap();
    let bundle = snap.table.find("web/bundle.js").unwrap();
    assert!(bundle.diagnostics.is_empty(), "{:?}", bundle.diagnostics);
    assert!(bundle.symbol_counts.values().sum::<u32>() >= 3000);
}
