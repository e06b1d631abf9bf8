//! `RepoWalker`: the files of a repository worth indexing, with every skip counted.
//!
//! Honours `.gitignore` (also outside a git checkout), `.ignore` and `.kenignore`; skips hidden
//! files, the index folder itself, and the configured vendored/build folders. Only metadata is
//! read here; content checks (binary, minified) happen when the builder reads a file. Only
//! regular files are candidates: named pipes, sockets and devices are skipped by type before
//! any open, and so is a folder whose ignore file is one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use ignore::WalkBuilder;

use super::{SkipReason, SkippedFile, WalkConfig};
use crate::lang::{LanguageRegistry, TextFormats};
use crate::parse::LayoutFile;
use crate::symbols::RepoPath;
use crate::util::{open_regular, read_regular, special_kind};

/// How a candidate is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// By the grammar of this language (an index into the registry's languages).
    Grammar(usize),
    /// As text of this format (an index into [`TextFormats::formats`]), when no grammar reads
    /// it.
    Text(usize),
}

/// A file to index: a grammar or a text format reads it, and it passed the metadata checks.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub path: RepoPath,
    pub abs: PathBuf,
    pub language: Reader,
    pub size: u64,
    pub mtime_ns: i64,
}

#[derive(Debug, Default)]
pub struct WalkOutcome {
    /// Sorted by path.
    pub candidates: Vec<Candidate>,
    pub skipped: Vec<SkippedFile>,
    pub unsupported_by_extension: BTreeMap<String, u64>,
    /// `Cargo.toml`/`go.mod` files, read during the walk.
    pub layout: Vec<LayoutFile>,
}

impl WalkOutcome {
    /// Adds another thread's outcome to this one (the lists are sorted once all are in).
    fn absorb(&mut self, other: WalkOutcome) {
        self.candidates.extend(other.candidates);
        self.skipped.extend(other.skipped);
        for (ext, n) in other.unsupported_by_extension {
            *self.unsupported_by_extension.entry(ext).or_default() += n;
        }
        self.layout.extend(other.layout);
    }
}

/// The visitors of a parallel walk: one per thread, each with its own outcome.
struct Visitors<'w, 'a> {
    walker: &'w RepoWalker<'a>,
    parts: &'w Mutex<Vec<WalkOutcome>>,
}

impl<'w, 'a: 'w> ignore::ParallelVisitorBuilder<'w> for Visitors<'w, 'a> {
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 'w> {
        Box::new(Visitor {
            walker: self.walker,
            parts: self.parts,
            out: WalkOutcome::default(),
        })
    }
}

struct Visitor<'w, 'a> {
    walker: &'w RepoWalker<'a>,
    parts: &'w Mutex<Vec<WalkOutcome>>,
    out: WalkOutcome,
}

impl ignore::ParallelVisitor for Visitor<'_, '_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> ignore::WalkState {
        self.walker.take(entry, &mut self.out);
        ignore::WalkState::Continue
    }
}

impl Drop for Visitor<'_, '_> {
    fn drop(&mut self) {
        let out = std::mem::take(&mut self.out);
        let mut parts = self
            .parts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        parts.push(out);
    }
}

pub struct RepoWalker<'a> {
    root: PathBuf,
    config: &'a WalkConfig,
    registry: &'a LanguageRegistry,
    exclude: Option<PathBuf>,
    /// Ignore files that are not regular files, found while the walker is being set up or
    /// while it filters folders.
    special_ignore_files: Arc<Mutex<Vec<SkippedFile>>>,
    /// Threads that read folders at once (1: one after another).
    threads: usize,
}

impl<'a> RepoWalker<'a> {
    /// `exclude` is a folder never to enter (the index folder, wherever it is).
    pub fn new(
        root: &Path,
        config: &'a WalkConfig,
        registry: &'a LanguageRegistry,
        exclude: Option<PathBuf>,
    ) -> Self {
        RepoWalker {
            root: root.to_path_buf(),
            config,
            registry,
            exclude,
            special_ignore_files: Arc::default(),
            threads: 1,
        }
    }

    /// Reads folders on `threads` threads at once (0: one per core, at most 8). The outcome
    /// is the same: every list is sorted when the walk ends.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()).min(8),
            n => n,
        };
        self
    }

    pub fn walk(&self) -> WalkOutcome {
        let mut out = WalkOutcome::default();
        let vendored: Arc<Mutex<Vec<String>>> = Arc::default();
        match self.threads {
            0 | 1 => {
                for entry in self.builder(vendored.clone()).build() {
                    self.take(entry, &mut out);
                }
            }
            n => {
                // Each thread gathers its own outcome, merged when the thread's visitor ends.
                let parts: Mutex<Vec<WalkOutcome>> = Mutex::default();
                let mut visitors = Visitors {
                    walker: self,
                    parts: &parts,
                };
                self.builder(vendored.clone())
                    .threads(n)
                    .build_parallel()
                    .visit(&mut visitors);
                // A visitor that panicked leaves its outcome all the same.
                let parts = parts
                    .into_inner()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                for part in parts {
                    out.absorb(part);
                }
            }
        }
        if let Ok(mut files) = self.special_ignore_files.lock() {
            out.skipped.append(&mut files);
        }
        if let Ok(dirs) = vendored.lock() {
            out.skipped.extend(dirs.iter().map(|d| SkippedFile {
                path: d.clone(),
                reason: SkipReason::VendoredDir,
                detail: None,
            }));
        }
        out.candidates.sort_by(|a, b| a.path.cmp(&b.path));
        out.skipped
            .sort_by(|a, b| (&a.path, a.reason).cmp(&(&b.path, b.reason)));
        out.skipped.dedup();
        out.layout.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
        out
    }

    /// One entry of the walk, visited, or the error that stopped it recorded.
    fn take(&self, entry: Result<ignore::DirEntry, ignore::Error>, out: &mut WalkOutcome) {
        match entry {
            Ok(e) => self.visit(e, out),
            Err(err) => out.skipped.push(self.walk_error(&err)),
        }
    }

    fn builder(&self, vendored: Arc<Mutex<Vec<String>>>) -> WalkBuilder {
        let mut b = WalkBuilder::new(&self.root);
        // An ignore file at the root that is not a regular file (a named pipe would block the
        // walk) is not read: its kind of rules is off for the whole tree, and the skip says so.
        let off = |name: &str| {
            let path = self.root.join(name);
            let kind = std::fs::metadata(&path).ok()?.file_type();
            (!kind.is_file()).then(|| {
                if let Ok(mut v) = self.special_ignore_files.lock() {
                    v.push(SkippedFile {
                        path: name.to_string(),
                        reason: SkipReason::SpecialFile,
                        detail: Some(format!("{}; its rules were not applied", special_kind(&kind))),
                    });
                }
            })
        };
        let git_ignore = off(".gitignore").is_none();
        let ignore = off(".ignore").is_none();
        let git_exclude = off(".git/info/exclude").is_none();
        let kenignore = off(".kenignore").is_none();
        b.hidden(true)
            .git_ignore(git_ignore)
            .git_exclude(git_exclude)
            .git_global(false)
            .ignore(ignore)
            .parents(false)
            .require_git(false)
            .follow_links(self.config.follow_symlinks);
        if kenignore {
            b.add_custom_ignore_filename(".kenignore");
        }
        let skip: Vec<String> = self.config.skip_dirs.clone();
        let exclude = self.exclude.clone();
        let root = self.root.clone();
        let special = self.special_ignore_files.clone();
        b.filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if !is_dir {
                return true;
            }
            if exclude.as_deref().is_some_and(|x| e.path() == x) {
                return false;
            }
            // The walker reads a folder's ignore files as it enters it, and would wait forever
            // on a named pipe there: such a folder is skipped, and the file says why.
            if e.depth() > 0
                && let Some(found) = special_ignore_file(e.path())
            {
                if let Ok(mut v) = special.lock() {
                    v.push(SkippedFile {
                        path: rel_lossy(&root, &found.0),
                        reason: SkipReason::SpecialFile,
                        detail: Some(format!("{}; its folder was not read", found.1)),
                    });
                }
                return false;
            }
            let name = e.file_name().to_string_lossy();
            let cargo_target = name == "target" && e.path().join("CACHEDIR.TAG").exists();
            if e.depth() > 0 && (cargo_target || skip.iter().any(|s| *s == name)) {
                if let Ok(mut v) = vendored.lock() {
                    v.push(rel_lossy(&root, e.path()));
                }
                return false;
            }
            true
        });
        b
    }

    fn visit(&self, e: ignore::DirEntry, out: &mut WalkOutcome) {
        let Some(ft) = e.file_type() else { return };
        if ft.is_dir() {
            self.visit_dir(&e, out);
            return;
        }
        let rel = rel_lossy(&self.root, e.path());
        if ft.is_symlink() {
            out.skipped.push(skipped(rel, SkipReason::Symlink, None));
            return;
        }
        // Told by type, before any open: a named pipe would block the read forever.
        if !ft.is_file() {
            let kind = special_kind(&ft).to_string();
            out.skipped
                .push(skipped(rel, SkipReason::SpecialFile, Some(kind)));
            return;
        }
        let name = e.file_name().to_string_lossy();
        if LayoutFile::BUILD_MANIFESTS.contains(&name.as_ref()) {
            self.read_layout(e.path(), &rel, &name, out);
        }
        let Some(language) = self.reader(e.path(), &name) else {
            let ext = name
                .rsplit_once('.')
                .map(|(_, x)| x.to_ascii_lowercase())
                .unwrap_or_default();
            *out.unsupported_by_extension.entry(ext).or_default() += 1;
            return;
        };
        let Ok(path) = RepoPath::from_fs(&self.root, e.path()) else {
            let detail = Some("path is not valid UTF-8".into());
            out.skipped.push(skipped(rel, SkipReason::Unreadable, detail));
            return;
        };
        let meta = match e.metadata() {
            Ok(m) => m,
            Err(err) => {
                out.skipped
                    .push(skipped(rel, SkipReason::Unreadable, Some(err.to_string())));
                return;
            }
        };
        if let Some((reason, detail)) = self.unwanted(&meta, &name) {
            out.skipped.push(skipped(rel, reason, Some(detail)));
            return;
        }
        out.candidates.push(Candidate {
            path,
            abs: e.path().to_path_buf(),
            language,
            size: meta.len(),
            mtime_ns: mtime_ns(&meta),
        });
    }

    /// A directory: its JavaScript manifests, which shape imports even where a project's
    /// ignore rules hide them (zod ignores its generated-looking but tracked `package.json`).
    fn visit_dir(&self, e: &ignore::DirEntry, out: &mut WalkOutcome) {
        for name in LayoutFile::JS_MANIFESTS {
            let p = e.path().join(name);
            if p.is_file() {
                let rel = rel_lossy(&self.root, &p);
                self.read_layout(&p, &rel, name, out);
            }
        }
    }

    /// How the file `name` at `abs` is read: by the grammar its name says, as a text format,
    /// or, for a script without an extension (`bin/deploy`, rbenv's `libexec/rbenv-init`), by
    /// the language its `#!` line names.
    fn reader(&self, abs: &Path, name: &str) -> Option<Reader> {
        let shebang = || {
            let lang = shebang_language(abs)?;
            self.registry
                .languages()
                .iter()
                .position(|l| l.name == lang)
                .map(Reader::Grammar)
        };
        self.registry
            .for_file_name(name)
            .map(|(i, _)| Reader::Grammar(i))
            .or_else(|| {
                let t = TextFormats::builtin().ok().filter(|_| self.config.text)?;
                t.for_file_name(name).map(|(i, _)| Reader::Text(i))
            })
            .or_else(|| (!name.contains('.')).then(shebang).flatten())
    }

    /// Why a readable file is not indexed: too large, or minified.
    fn unwanted(&self, meta: &std::fs::Metadata, name: &str) -> Option<(SkipReason, String)> {
        if meta.len() > self.config.max_file_size {
            let detail = format!("{} bytes > {}", meta.len(), self.config.max_file_size);
            return Some((SkipReason::TooLarge, detail));
        }
        if name.contains(".min.") {
            return Some((SkipReason::Minified, "file name".into()));
        }
        None
    }

    fn read_layout(&self, abs: &Path, rel: &str, name: &str, out: &mut WalkOutcome) {
        let Some(text) = read_regular(abs).ok().and_then(|b| String::from_utf8(b).ok()) else {
            return;
        };
        let dir = rel
            .rsplit_once('/')
            .map(|(d, _)| d.to_string())
            .unwrap_or_default();
        out.layout.push(match name {
            "Cargo.toml" => LayoutFile::Cargo { dir, text },
            "go.mod" => LayoutFile::GoMod { dir, text },
            _ => LayoutFile::Js {
                dir,
                name: name.to_string(),
                text,
            },
        });
    }

    fn walk_error(&self, err: &ignore::Error) -> SkippedFile {
        let (path, is_loop) = error_path(err);
        SkippedFile {
            path: path.map(|p| rel_lossy(&self.root, &p)).unwrap_or_default(),
            reason: if is_loop {
                SkipReason::SymlinkLoop
            } else {
                SkipReason::Unreadable
            },
            detail: Some(err.to_string()),
        }
    }
}

/// The path an error concerns and whether it is a symlink loop.
fn error_path(err: &ignore::Error) -> (Option<PathBuf>, bool) {
    match err {
        ignore::Error::WithPath { path, err } => {
            let (inner, is_loop) = error_path(err);
            (inner.or_else(|| Some(path.clone())), is_loop)
        }
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => error_path(err),
        ignore::Error::Loop { child, .. } => (Some(child.clone()), true),
        ignore::Error::Partial(errs) => errs.first().map(error_path).unwrap_or((None, false)),
        _ => (None, false),
    }
}

/// The first ignore file of the folder `dir` the walker would read that is not a regular file,
/// with what it is.
fn special_ignore_file(dir: &Path) -> Option<(PathBuf, &'static str)> {
    [".gitignore", ".ignore", ".kenignore", ".git/info/exclude"]
        .iter()
        .map(|n| dir.join(n))
        .find_map(|p| {
            let kind = std::fs::metadata(&p).ok()?.file_type();
            (!kind.is_file() && !kind.is_dir()).then(|| (p, special_kind(&kind)))
        })
}

/// The language a `#!` line names (`#!/usr/bin/env bash`, `#!/bin/sh -e`), read from the
/// file's first 128 bytes.
fn shebang_language(path: &Path) -> Option<&'static str> {
    use std::io::Read;
    let mut head = [0u8; 128];
    let n = open_regular(path).ok()?.read(&mut head).ok()?;
    interpreter_language(&head[..n])
}

fn interpreter_language(head: &[u8]) -> Option<&'static str> {
    let line = head.strip_prefix(b"#!")?;
    let line = line.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let mut program = words.next()?.rsplit('/').next()?;
    if program == "env" {
        program = words.find(|w| !w.starts_with('-'))?;
    }
    let program = program.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match program {
        "bash" | "sh" | "dash" | "ksh" | "zsh" => "bash",
        "python" => "python",
        "node" => "javascript",
        "ruby" => "ruby",
        "php" => "php",
        "lua" | "luajit" => "lua",
        "elixir" => "elixir",
        _ => return None,
    })
}

fn skipped(path: String, reason: SkipReason, detail: Option<String>) -> SkippedFile {
    SkippedFile { path, reason, detail }
}

pub(crate) fn rel_lossy(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

pub(crate) fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    match meta.modified().map(|t| t.duration_since(UNIX_EPOCH)) {
        Ok(Ok(d)) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Ok(Err(before)) => -i64::try_from(before.duration().as_nanos()).unwrap_or(i64::MAX),
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::interpreter_language;

    #[test]
    fn shebang_lines_name_the_language() {
        assert_eq!(
            interpreter_language(b"#!/usr/bin/env bash\nset -e\n"),
            Some("bash")
        );
        assert_eq!(interpreter_language(b"#!/bin/sh -e\n"), Some("bash"));
        assert_eq!(
            interpreter_language(b"#!/usr/bin/env -S python3 -u\n"),
            Some("python")
        );
        assert_eq!(interpreter_language(b"#!/usr/bin/python3.11\n"), Some("python"));
        assert_eq!(interpreter_language(b"#!/usr/bin/env perl\n"), None);
        assert_eq!(interpreter_language(b"echo hi\n"), None);
        assert_eq!(interpreter_language(b""), None);
    }
}
