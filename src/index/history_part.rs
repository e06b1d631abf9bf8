//! `HistoryPart`: what the repository's history says of each file — how often and how lately
//! it changed, which files changed with it, and the words of the commit messages that
//! touched it — read with the git CLI, bounded, and updated with only the commits since the
//! last build.
//!
//! Bounds: the newest [`MAX_COMMITS`] commits reachable from `HEAD` (merges skipped: their
//! changes are the commits they merge), and only commits touching at most
//! [`MAX_FILES_PER_COMMIT`] files (a mass rename or reformat says nothing about which files
//! belong together). Paths are those of each commit (renames are not followed); a path that
//! no longer exists is kept, and readers ask only about the files that do.
//!
//! Ages are measured from the newest commit read, not from the clock, so an old checkout
//! ranks as it would have on its day.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::lexical::is_stop_word;

/// Commits read at most (newest first).
pub const MAX_COMMITS: usize = 20_000;
/// Commits touching more files than this are skipped.
pub const MAX_FILES_PER_COMMIT: usize = 50;
/// Co-change neighbours kept per file (the most frequent).
const MAX_NEIGHBOURS: usize = 48;
/// Message words kept per file (the most frequent).
const MAX_TERMS: usize = 256;
/// Bytes of a commit message read for its words (the subject and the gist of the body).
const MAX_MESSAGE: usize = 4096;
pub const HISTORY_FILE: &str = "history.bin";
pub const HISTORY_VERSION: u32 = 1;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FileHistory {
    pub path: String,
    /// Commits that changed it.
    pub changes: u32,
    /// Commit time (unix seconds) of its newest and oldest change.
    pub last_unix: i64,
    pub first_unix: i64,
    /// Files changed in the same commits (index into `files`, commits shared), most first.
    pub neighbours: Vec<(u32, u32)>,
    /// Words of the messages of the commits that changed it, with counts, most first.
    pub terms: Vec<(String, u32)>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HistoryPart {
    /// The commit read up to.
    pub head: String,
    /// Commit time of `head`.
    pub head_unix: i64,
    /// Commits read (within the bounds) and those skipped as too large.
    pub commits: u32,
    pub skipped_large: u32,
    /// The history went further back than [`MAX_COMMITS`], or the clone is shallow.
    pub truncated: bool,
    /// Sorted by path.
    pub files: Vec<FileHistory>,
    /// Summed length of every file's term counts (for BM25's average).
    pub term_total: u64,
}

/// How a build read the history.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryRead {
    /// Commits read this time (all of them on a full read).
    pub new_commits: u32,
    pub incremental: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("not a git repository")]
    NotGit,
    #[error("git is not installed")]
    NoGit,
    #[error("git {0}: {1}")]
    Git(String, String),
}

/// One commit as read from `git log`.
struct Commit {
    unix: i64,
    message: String,
    files: Vec<String>,
}

/// The history while it is counted: paths and words interned, neighbour and term counts
/// in maps keyed by those ids (a commit of 50 files adds 2,450 neighbour counts).
#[derive(Default)]
struct Tally {
    path_ids: HashMap<String, u32>,
    paths: Vec<String>,
    files: Vec<FileTally>,
    word_ids: HashMap<String, u32>,
    words: Vec<String>,
}

#[derive(Default)]
struct FileTally {
    changes: u32,
    last_unix: i64,
    first_unix: i64,
    neighbours: HashMap<u32, u32>,
    terms: HashMap<u32, u32>,
}

impl HistoryPart {
    /// Reads the history of the repository holding `root` (paths relative to `root`),
    /// adding to `previous` when its head is an ancestor of today's.
    pub fn read(
        root: &Path,
        previous: Option<HistoryPart>,
    ) -> Result<(HistoryPart, HistoryRead), HistoryError> {
        let head = match git(root, &["rev-parse", "--verify", "-q", "HEAD"]) {
            Ok(h) => h.trim().to_string(),
            Err(HistoryError::Git(_, e)) if e.contains("not a git repository") => {
                return Err(HistoryError::NotGit);
            }
            // An empty repository has no HEAD yet: no history, not an error.
            Err(_) if git(root, &["rev-parse", "--git-dir"]).is_ok() => {
                return Ok((
                    HistoryPart::default(),
                    HistoryRead {
                        new_commits: 0,
                        incremental: false,
                    },
                ));
            }
            Err(e) => return Err(e),
        };
        let previous = match previous {
            Some(p) if p.head == head => {
                return Ok((
                    p,
                    HistoryRead {
                        new_commits: 0,
                        incremental: true,
                    },
                ));
            }
            other => other,
        };
        let base = previous.filter(|p| {
            !p.head.is_empty() && git(root, &["merge-base", "--is-ancestor", &p.head, &head]).is_ok()
        });
        let range = match &base {
            Some(p) => format!("{}..{head}", p.head),
            None => head.clone(),
        };
        let limit = MAX_COMMITS.to_string();
        let out = git(
            root,
            &[
                "log",
                "--no-merges",
                "--no-renames",
                "--relative",
                "--name-only",
                "-z",
                "--format=%x1e%H%x1f%ct%x1f%B%x1f",
                "-n",
                &limit,
                &range,
                "--",
            ],
        )?;
        let commits = parse_log(&out);
        let shallow = git(root, &["rev-parse", "--is-shallow-repository"]).is_ok_and(|s| s.trim() == "true");
        let incremental = base.is_some();
        let mut tally = base.as_ref().map(Tally::from_part).unwrap_or_default();
        let mut part = HistoryPart {
            head: head.clone(),
            head_unix: commits.first().map_or(0, |c| c.unix),
            commits: base.as_ref().map_or(0, |p| p.commits),
            skipped_large: base.as_ref().map_or(0, |p| p.skipped_large),
            truncated: base.as_ref().is_some_and(|p| p.truncated) || shallow || commits.len() >= MAX_COMMITS,
            ..HistoryPart::default()
        };
        if let Some(p) = &base {
            part.head_unix = part.head_unix.max(p.head_unix);
        }
        let new_commits = commits.len() as u32;
        for c in commits {
            if c.files.len() > MAX_FILES_PER_COMMIT {
                part.skipped_large += 1;
                continue;
            }
            part.commits += 1;
            tally.add(&c);
        }
        part.files = tally.finish(&mut part.term_total);
        Ok((
            part,
            HistoryRead {
                new_commits,
                incremental,
            },
        ))
    }

    /// The history of a file, if it ever changed.
    pub fn file(&self, path: &str) -> Option<&FileHistory> {
        self.files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| &self.files[i])
    }

    pub fn path_of(&self, index: u32) -> Option<&str> {
        self.files.get(index as usize).map(|f| f.path.as_str())
    }

    /// Days between a file's newest change and the newest commit read.
    pub fn age_days(&self, f: &FileHistory) -> f32 {
        ((self.head_unix - f.last_unix).max(0) as f32) / 86_400.0
    }

    /// Files ranked by BM25 of `query` over the words of the messages that changed them:
    /// an issue that reads like the past fixes of a file points at it.
    pub fn message_ranking(&self, query: &str) -> Vec<(usize, f32)> {
        let terms = words(query);
        if terms.is_empty() || self.files.is_empty() {
            return Vec::new();
        }
        let n = self.files.len() as f32;
        let avg = (self.term_total as f32 / n).max(1.0);
        let mut df: HashMap<&str, u32> = HashMap::new();
        for f in &self.files {
            for (t, _) in &f.terms {
                if terms.contains(t) {
                    *df.entry(t.as_str()).or_default() += 1;
                }
            }
        }
        let (k1, b) = (1.2f32, 0.75f32);
        let mut out: Vec<(usize, f32)> = Vec::new();
        for (i, f) in self.files.iter().enumerate() {
            let len: u32 = f.terms.iter().map(|(_, c)| c).sum();
            let mut score = 0f32;
            for (t, tf) in &f.terms {
                let Some(&d) = df.get(t.as_str()) else { continue };
                let idf = ((n - d as f32 + 0.5) / (d as f32 + 0.5) + 1.0).ln();
                let tf = *tf as f32;
                score += idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * len as f32 / avg));
            }
            if score > 0.0 {
                out.push((i, score));
            }
        }
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out
    }
}

impl Tally {
    fn path_id(&mut self, path: &str) -> u32 {
        if let Some(&id) = self.path_ids.get(path) {
            return id;
        }
        let id = self.paths.len() as u32;
        self.path_ids.insert(path.to_string(), id);
        self.paths.push(path.to_string());
        self.files.push(FileTally::default());
        id
    }

    fn word_id(&mut self, word: &str) -> u32 {
        if let Some(&id) = self.word_ids.get(word) {
            return id;
        }
        let id = self.words.len() as u32;
        self.word_ids.insert(word.to_string(), id);
        self.words.push(word.to_string());
        id
    }

    fn from_part(p: &HistoryPart) -> Tally {
        let mut t = Tally::default();
        // Paths first, so a part's file index is its id here.
        for f in &p.files {
            t.path_id(&f.path);
        }
        for (i, f) in p.files.iter().enumerate() {
            let terms: HashMap<u32, u32> = f.terms.iter().map(|(w, c)| (t.word_id(w), *c)).collect();
            let ft = &mut t.files[i];
            ft.changes = f.changes;
            ft.last_unix = f.last_unix;
            ft.first_unix = f.first_unix;
            ft.neighbours = f.neighbours.iter().copied().collect();
            ft.terms = terms;
        }
        t
    }

    fn add(&mut self, c: &Commit) {
        let words: Vec<u32> = words(&c.message).iter().map(|w| self.word_id(w)).collect();
        let ids: Vec<u32> = c.files.iter().map(|p| self.path_id(p)).collect();
        for &id in &ids {
            let f = &mut self.files[id as usize];
            f.changes += 1;
            f.last_unix = f.last_unix.max(c.unix);
            f.first_unix = match f.first_unix {
                0 => c.unix,
                t => t.min(c.unix),
            };
            for &other in ids.iter().filter(|&&o| o != id) {
                *f.neighbours.entry(other).or_default() += 1;
            }
            for &w in &words {
                *f.terms.entry(w).or_default() += 1;
            }
        }
    }

    fn finish(self, term_total: &mut u64) -> Vec<FileHistory> {
        // Files sorted by path; neighbours renumbered to their place in that order.
        let mut order: Vec<u32> = (0..self.paths.len() as u32).collect();
        order.sort_by(|a, b| self.paths[*a as usize].cmp(&self.paths[*b as usize]));
        let mut place = vec![0u32; order.len()];
        for (i, &id) in order.iter().enumerate() {
            place[id as usize] = i as u32;
        }
        let mut out = Vec::with_capacity(order.len());
        for &id in &order {
            let f = &self.files[id as usize];
            let mut neighbours: Vec<(u32, u32)> = f
                .neighbours
                .iter()
                .map(|(n, c)| (place[*n as usize], *c))
                .collect();
            neighbours.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            neighbours.truncate(MAX_NEIGHBOURS);
            let mut terms: Vec<(&str, u32)> = f
                .terms
                .iter()
                .map(|(w, c)| (self.words[*w as usize].as_str(), *c))
                .collect();
            terms.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            terms.truncate(MAX_TERMS);
            *term_total += terms.iter().map(|(_, c)| *c as u64).sum::<u64>();
            out.push(FileHistory {
                path: self.paths[id as usize].clone(),
                changes: f.changes,
                last_unix: f.last_unix,
                first_unix: f.first_unix,
                neighbours,
                terms: terms.into_iter().map(|(w, c)| (w.to_string(), c)).collect(),
            });
        }
        out
    }
}

/// The distinct words of a text (its first [`MAX_MESSAGE`] bytes), lowercased, `snake_case`
/// and `camelCase` words also split into their parts, stop words, numbers and single
/// letters dropped. Plainer than the code tokenizer: a build reads tens of thousands of
/// messages.
fn words(text: &str) -> Vec<String> {
    let mut end = text.len().min(MAX_MESSAGE);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut out: Vec<String> = Vec::new();
    let mut push = |w: &str| {
        if w.len() > 1 && w.len() <= 40 && !w.bytes().all(|b| b.is_ascii_digit()) {
            let lower = w.to_lowercase();
            if !is_stop_word(&lower) {
                out.push(lower);
            }
        }
    };
    for word in text[..end].split(|c: char| !c.is_alphanumeric() && c != '_') {
        push(word);
        let parts = word.split('_').filter(|p| !p.is_empty());
        let many = word.contains('_');
        for part in parts {
            if many {
                push(part);
            }
            // camelCase: a lowercase letter followed by an uppercase one starts a part.
            let b = part.as_bytes();
            let mut start = 0;
            let mut split = false;
            for i in 1..b.len() {
                if b[i].is_ascii_uppercase() && b[i - 1].is_ascii_lowercase() {
                    push(&part[start..i]);
                    start = i;
                    split = true;
                }
            }
            if split {
                push(&part[start..]);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `git log -z --format=%x1e%H%x1f%ct%x1f%B%x1f --name-only`: records start with 0x1e,
/// fields end with 0x1f, then the paths, each ended by a NUL.
fn parse_log(out: &str) -> Vec<Commit> {
    out.split('\u{1e}')
        .filter_map(|rec| {
            let mut fields = rec.splitn(4, '\u{1f}');
            let _hash = fields.next()?;
            let unix = fields.next()?.trim().parse().ok()?;
            let message = fields.next()?.to_string();
            let files = fields
                .next()
                .unwrap_or("")
                .split('\0')
                .map(|p| p.trim_matches('\n'))
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
            Some(Commit { unix, message, files })
        })
        .collect()
}

fn git(root: &Path, args: &[&str]) -> Result<String, HistoryError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => HistoryError::NoGit,
            _ => HistoryError::Git(args.join(" "), e.to_string()),
        })?;
    if !out.status.success() {
        return Err(HistoryError::Git(
            args.first().copied().unwrap_or("").to_string(),
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn commit(dir: &Path, files: &[(&str, &str)], message: &str, when: i64) {
        for (p, text) in files {
            let path = dir.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        run(dir, &["add", "-A"]);
        let date = format!("@{when} +0000");
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["commit", "-q", "-m", message])
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .status()
            .unwrap()
            .success();
        assert!(ok);
    }

    #[test]
    fn counts_changes_neighbours_and_words_and_adds_only_new_commits() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        run(d, &["init", "-q", "-b", "main"]);
        commit(
            d,
            &[("src/cookies.py", "a"), ("tests/test_cookies.py", "a")],
            "Fix cookie jar expiry",
            1_000_000,
        );
        commit(
            d,
            &[("src/cookies.py", "b"), ("tests/test_cookies.py", "b")],
            "cookies: handle max-age",
            1_086_400,
        );
        commit(d, &[("src/auth.py", "a")], "Add digest authentication", 1_172_800);
        let (part, read) = HistoryPart::read(d, None).unwrap();
        assert_eq!((part.commits, read.new_commits, read.incremental), (3, 3, false));
        let c = part.file("src/cookies.py").unwrap();
        assert_eq!(c.changes, 2);
        assert_eq!(part.age_days(c), 1.0);
        let (n, shared) = c.neighbours[0];
        assert_eq!((part.path_of(n), shared), (Some("tests/test_cookies.py"), 2));
        assert!(
            c.terms.iter().any(|(t, n)| t == "cookie" && *n == 1),
            "{:?}",
            c.terms
        );
        // Messages point at the files they changed.
        let top = part.message_ranking("authentication with digest fails");
        assert_eq!(part.files[top[0].0].path, "src/auth.py");
        let top = part.message_ranking("cookie expiry is wrong");
        assert_eq!(part.files[top[0].0].path, "src/cookies.py");

        // Only the new commit is read next time, and the counts equal a full read.
        commit(
            d,
            &[("src/auth.py", "b"), ("src/cookies.py", "c")],
            "auth sets cookies",
            1_259_200,
        );
        let (inc, read) = HistoryPart::read(d, Some(part.clone())).unwrap();
        assert_eq!((read.new_commits, read.incremental), (1, true));
        let (full, _) = HistoryPart::read(d, None).unwrap();
        assert_eq!(inc, full);
        // The same head again reads nothing.
        let (same, read) = HistoryPart::read(d, Some(full.clone())).unwrap();
        assert_eq!((read.new_commits, same == full), (0, true));

        // A rewritten history (the old head is no longer an ancestor) is read in full.
        run(d, &["reset", "-q", "--hard", "HEAD~2"]);
        let (after, read) = HistoryPart::read(d, Some(full)).unwrap();
        assert!(!read.incremental);
        assert_eq!(after.commits, 2);
        assert!(after.file("src/auth.py").is_none());
    }

    #[test]
    fn message_words_are_split_like_identifiers() {
        assert_eq!(
            words("Fix parseHeaderValue in read_chunked_body (#12)"),
            [
                "body",
                "chunked",
                "fix",
                "header",
                "parse",
                "parseheadervalue",
                "read",
                "read_chunked_body",
                "value"
            ]
        );
    }

    #[test]
    fn large_commits_are_skipped_and_a_plain_tree_has_no_history() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        run(d, &["init", "-q", "-b", "main"]);
        let names: Vec<String> = (0..=MAX_FILES_PER_COMMIT).map(|i| format!("f{i}.py")).collect();
        let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "x")).collect();
        commit(d, &files, "reformat everything", 1_000_000);
        commit(d, &[("f1.py", "y")], "fix f1", 1_000_100);
        let (part, _) = HistoryPart::read(d, None).unwrap();
        assert_eq!((part.commits, part.skipped_large), (1, 1));
        assert_eq!(part.file("f1.py").unwrap().changes, 1);
        assert!(part.file("f2.py").is_none());

        let plain = tempfile::tempdir().unwrap();
        assert!(matches!(
            HistoryPart::read(plain.path(), None),
            Err(HistoryError::NotGit)
        ));
    }
}
