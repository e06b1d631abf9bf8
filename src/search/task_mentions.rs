//! `TaskMentions`: what a task text names exactly — file paths (with lines from stack-trace
//! frames), identifiers in backticks or code blocks, and identifier-shaped words
//! (`snake_case`, `CamelCase`, `a.b.c`, `a::b`) — each with how strongly it was written.
//!
//! Pure text analysis; the context builder looks the mentions up in the index.

use std::collections::HashMap;

/// How an identifier was written (stronger first).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum MentionKind {
    /// A stack-trace frame's function.
    Frame,
    /// Inside backticks or a fenced code block.
    Code,
    /// A word shaped like an identifier in prose (`snake_case`, `CamelCase`, dotted).
    Prose,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct PathMention {
    /// As written, with `\` turned into `/` and leading `./` removed.
    pub path: String,
    pub line: Option<u32>,
}

#[derive(Debug, Clone, Default)]
pub struct TaskMentions {
    pub paths: Vec<PathMention>,
    /// Identifier -> its strongest kind, in order of first mention.
    pub identifiers: Vec<(String, MentionKind)>,
}

/// Source file extensions a path mention must end with.
const EXTENSIONS: &[&str] = &[
    "py", "pyi", "rs", "ts", "tsx", "js", "jsx", "mjs", "cjs", "go", "java", "c", "h", "cc", "cpp", "cxx",
    "hpp", "hh", "toml", "cfg", "ini", "json", "yaml", "yml",
];
/// At most this many identifiers are kept (the rarest are found by the index, not here).
const MAX_IDENTIFIERS: usize = 64;

/// Words that look like identifiers but say nothing about code.
const STOP: &[&str] = &[
    "e.g",
    "i.e",
    "etc",
    "self",
    "this",
    "None",
    "True",
    "False",
    "null",
    "true",
    "false",
    "Traceback",
    "TypeError",
    "ValueError",
    "KeyError",
    "AttributeError",
    "IndexError",
    "RuntimeError",
    "Exception",
    "README",
    "TODO",
    "http",
    "https",
    "github.com",
    "www",
];

impl TaskMentions {
    pub fn parse(text: &str) -> TaskMentions {
        let mut m = TaskMentions::default();
        let mut ids = Seen::new();
        note_frames(text, &mut ids, &mut m.paths);
        note_code(text, &mut ids);
        // Paths anywhere: words ending in a source extension, with `:line` after them.
        for w in text.split(|c: char| c.is_whitespace() || "\"'`()[]<>,;".contains(c)) {
            let (path, line) = split_line_suffix(w);
            let path = path.trim_end_matches('.');
            let Some((_, ext)) = path.rsplit_once('.') else {
                continue;
            };
            if EXTENSIONS.contains(&ext) && path.len() > ext.len() + 1 && !path.contains("://") {
                push_path(&mut m.paths, path, line);
            }
        }
        m.identifiers = identifiers(ids);
        m
    }
}

/// Identifiers noted so far: name -> (order of first mention, strongest kind).
type Seen = HashMap<String, (usize, MentionKind)>;

/// Notes `name` (trimmed of punctuation) as mentioned as `kind`, unless it is too short, a
/// stop word or a number.
fn note(ids: &mut Seen, name: &str, kind: MentionKind) {
    let name = name.trim_matches(|c: char| c == '.' || c == ':' || c == '(' || c == ')');
    if name.len() < 3 || STOP.contains(&name) || name.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return;
    }
    let n = ids.len();
    let e = ids.entry(name.to_string()).or_insert((n, kind));
    e.1 = e.1.min(kind);
}

/// Python frames: File "x/y.py", line 12, in func
fn note_frames(text: &str, ids: &mut Seen, paths: &mut Vec<PathMention>) {
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("File \"")
            && let Some((path, tail)) = rest.split_once('"')
        {
            let lineno = tail
                .split("line ")
                .nth(1)
                .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|s| s.parse().ok());
            if let Some(func) = tail.split(", in ").nth(1) {
                note(ids, func.trim(), MentionKind::Frame);
            }
            push_path(paths, path, lineno);
        }
    }
}

/// Code spans: `...` and fenced blocks; identifier-like words of the prose around them.
fn note_code(text: &str, ids: &mut Seen) {
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            for w in words(line) {
                if looks_like_identifier(w) || w.contains(['.', ':']) {
                    note(ids, w, MentionKind::Code);
                }
            }
            continue;
        }
        for (i, span) in line.split('`').enumerate() {
            if i % 2 == 1 {
                for w in words(span) {
                    note(ids, w, MentionKind::Code);
                }
            } else {
                for w in words(span) {
                    if looks_like_identifier(w) {
                        note(ids, w, MentionKind::Prose);
                    }
                }
            }
        }
    }
}

/// The noted identifiers, strongest kinds first, then by first mention, at most
/// `MAX_IDENTIFIERS`; file names left out (they are paths).
fn identifiers(ids: Seen) -> Vec<(String, MentionKind)> {
    let mut ids: Vec<(String, (usize, MentionKind))> = ids.into_iter().collect();
    ids.sort_by_key(|(_, (i, _))| *i);
    // Dotted or `::` paths also name their last part (`xr.Dataset.to_netcdf` -> `to_netcdf`).
    let mut out: Vec<(String, MentionKind)> = Vec::new();
    for (name, (_, kind)) in ids {
        if EXTENSIONS.iter().any(|e| name.ends_with(&format!(".{e}"))) {
            continue; // a file name, kept as a path
        }
        let last = name
            .rsplit(['.', ':'])
            .find(|s| !s.is_empty())
            .unwrap_or(&name)
            .to_string();
        if last != name && last.len() >= 3 && !out.iter().any(|(n, _)| *n == last) {
            out.push((last, kind));
        }
        if !out.iter().any(|(n, _)| *n == name) {
            out.push((name, kind));
        }
    }
    out.sort_by_key(|(_, k)| *k); // stable: strongest kinds first, then first mention
    out.truncate(MAX_IDENTIFIERS);
    out
}

fn push_path(paths: &mut Vec<PathMention>, raw: &str, line: Option<u32>) {
    let p = raw.replace('\\', "/");
    let p = p.trim_start_matches("./").to_string();
    if p.is_empty() {
        return;
    }
    match paths.iter_mut().find(|x| x.path == p) {
        Some(x) => x.line = x.line.or(line),
        None => paths.push(PathMention { path: p, line }),
    }
}

/// `src/a.rs:12:5` -> (`src/a.rs`, 12).
fn split_line_suffix(w: &str) -> (&str, Option<u32>) {
    let mut parts = w.splitn(3, ':');
    let path = parts.next().unwrap_or(w);
    let line = parts.next().and_then(|l| l.parse().ok());
    match line {
        Some(l) => (path, Some(l)),
        None => (w.trim_end_matches(':'), None),
    }
}

/// Identifier-ish words: letters, digits, `_`, `.`, `:`.
fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == ':'))
        .map(|w| w.trim_matches(|c: char| c == '.' || c == ':'))
        .filter(|w| !w.is_empty())
}

/// `snake_case`, `CamelCase` / `camelCase` (a lower then an upper letter), or dotted /
/// `::` paths of such words — not plain English words.
fn looks_like_identifier(w: &str) -> bool {
    if !w.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') {
        return false;
    }
    if w.contains("::")
        || (w.contains('.') && w.split('.').all(|p| !p.is_empty()) && w.split('.').count() > 1)
    {
        return w
            .split(['.', ':'])
            .filter(|p| !p.is_empty())
            .all(|p| p.chars().all(|c| c.is_alphanumeric() || c == '_'));
    }
    let inner_underscore = w.trim_matches('_').contains('_');
    let chars: Vec<char> = w.chars().collect();
    let camel = chars
        .windows(2)
        .any(|p| p[0].is_lowercase() && p[1].is_uppercase());
    let pascal = chars.first().is_some_and(|c| c.is_uppercase())
        && chars.iter().skip(1).any(|c| c.is_lowercase())
        && chars.iter().skip(1).any(|c| c.is_uppercase());
    inner_underscore || camel || pascal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_paths_code_and_prose() {
        let text = r#"Calling `Dataset.to_netcdf()` with engine="h5netcdf" fails.

Traceback (most recent call last):
  File "/home/u/xarray/core/dataset.py", line 1524, in to_netcdf
    return to_netcdf(self, path)
  File "xarray/backends/api.py", line 1102, in to_netcdf

The SearchWorker in crates/core/search.rs:120:9 panics; see also src/main.rs.
We expected the merge_dims helper to be called. Also e.g. this is fine.
```python
ds.groupby_bins("x", bins).mean()
```
"#;
        let m = TaskMentions::parse(text);
        let paths: Vec<(&str, Option<u32>)> = m.paths.iter().map(|p| (p.path.as_str(), p.line)).collect();
        assert!(
            paths.contains(&("/home/u/xarray/core/dataset.py", Some(1524))),
            "{paths:?}"
        );
        assert!(
            paths.contains(&("xarray/backends/api.py", Some(1102))),
            "{paths:?}"
        );
        assert!(paths.contains(&("crates/core/search.rs", Some(120))), "{paths:?}");
        assert!(paths.contains(&("src/main.rs", None)), "{paths:?}");
        let kind = |n: &str| m.identifiers.iter().find(|(x, _)| x == n).map(|(_, k)| *k);
        assert_eq!(kind("to_netcdf"), Some(MentionKind::Frame));
        assert_eq!(kind("Dataset.to_netcdf"), Some(MentionKind::Code));
        assert_eq!(kind("SearchWorker"), Some(MentionKind::Prose));
        assert_eq!(kind("merge_dims"), Some(MentionKind::Prose));
        assert_eq!(kind("groupby_bins"), Some(MentionKind::Code));
        assert_eq!(kind("expected"), None, "plain words are not identifiers");
        assert_eq!(kind("e.g"), None);
        // Strongest first.
        assert_eq!(m.identifiers[0].1, MentionKind::Frame);
    }
}
