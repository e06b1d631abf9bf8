//! Shared helpers for integration tests: fixture repositories written from one string with
//! `//- path` markers, the `ken` binary, and a deterministic rendering of extraction results.
#![allow(dead_code)]

pub mod fake_model;
pub mod mock_server;
pub mod serve;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use kenning::IndexBuilder;
use kenning::index::{IndexConfig, IndexSnapshot, NoProgress};
use kenning::symbols::FileSymbols;

/// Writes a repository described as `//- path` sections into a new temporary folder.
pub fn materialize(spec: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write_tree(dir.path(), spec);
    dir
}

pub fn write_tree(root: &Path, spec: &str) {
    let mut current: Option<(PathBuf, String)> = None;
    let flush = |cur: &mut Option<(PathBuf, String)>| {
        if let Some((p, text)) = cur.take() {
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, text).expect("write");
        }
    };
    for line in spec.lines() {
        if let Some(path) = line.strip_prefix("//- ") {
            flush(&mut current);
            current = Some((root.join(path.trim()), String::new()));
        } else if let Some((_, text)) = current.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    flush(&mut current);
}

pub fn ken_bin() -> &'static str {
    env!("CARGO_BIN_EXE_ken")
}

pub fn ken(args: &[&str], cwd: &Path) -> Output {
    Command::new(ken_bin())
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run ken")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Builds the index of `root` with `config` (index inside the repo unless configured).
pub fn build(root: &Path, config: &IndexConfig) -> kenning::BuildReport {
    IndexBuilder::new(root, config, &NoProgress)
        .expect("builder")
        .build()
        .expect("build")
}

pub fn index_dir(root: &Path, config: &IndexConfig) -> PathBuf {
    config.index_dir_for(&root.canonicalize().expect("canonicalize"))
}

/// The logical content of an index: every file's facts and symbols, independent of segment
/// layout, mtimes and timings. Two indexes of the same tree must render identically.
pub fn logical_dump(index_dir: &Path) -> String {
    let snap = IndexSnapshot::open(index_dir).expect("open index");
    let symbols = snap.load_symbols().expect("load symbols");
    let mut out = String::new();
    for (r, s) in snap.table.files.iter().zip(&symbols) {
        writeln!(
            out,
            "== {} lang={} module={} lines={} hash={} package={:?} diags={:?}",
            r.path,
            r.language,
            r.module,
            r.lines,
            &r.hash_hex()[..12],
            r.package,
            r.diagnostics
        )
        .unwrap();
        out.push_str(&render_symbols(s, &r.module, separator(&r.language)));
    }
    for s in &snap.table.skipped {
        writeln!(out, "skipped {} {}", s.reason.as_str(), s.path).unwrap();
    }
    writeln!(out, "unsupported {:?}", snap.table.unsupported_by_extension).unwrap();
    out
}

pub fn separator(lang: &str) -> &'static str {
    match lang {
        "rust" | "c" | "cpp" => "::",
        _ => ".",
    }
}

/// One line per definition, reference and import, in file order.
pub fn render_symbols(s: &FileSymbols, module: &str, sep: &str) -> String {
    s.render(module, sep)
}

/// Runs git in `dir`; panics with its stderr when it fails; its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Stages everything in `dir` and commits it as a fixed author.
pub fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(
        dir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            message,
        ],
    );
}

/// An external server's executable: from `var`, else `name` on PATH. With `require` set in the
/// environment (CI), its absence fails the test instead of skipping it.
pub fn server_bin(var: &str, name: &str, require: &str) -> Option<String> {
    let found = std::env::var(var).ok().or_else(|| {
        Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    });
    if found.is_none() {
        assert!(
            std::env::var(require).is_err(),
            "{require} is set but no {name} was found"
        );
        eprintln!("skipped: no {name} (set {var})");
    }
    found
}
