//! Paths a request names, confined to the repository: relative and `/`-separated, no `..`,
//! no NUL, nothing under the index folder or a version-control folder, and no symbolic link
//! that resolves outside the root. A file read must also not be secrets-shaped
//! ([`PrivatePath`]), and a file the ignore rules keep out of the index is read only when
//! asked for on purpose (`ignored`). `read_span` reads a line range of such a file; every
//! other front end that reads a file a request names (the agent's `read_file`) goes through
//! [`confined_file`] too.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::private_path::PrivatePath;
use super::{Analysis, ApiError};
use crate::context::count_tokens;
use crate::index::Coverage;

/// The repository path `given` names, checked lexically (the file need not exist).
pub fn repo_path(root: &Path, argument: &str, given: &str) -> Result<String, ApiError> {
    if given.contains('\0') {
        return Err(ApiError::denied(
            given.replace('\0', "\\0"),
            "a path may not contain NUL bytes",
        ));
    }
    if given.trim().is_empty() {
        return Err(ApiError::invalid(argument, "is empty"));
    }
    let p = Path::new(given);
    let p = match p.is_absolute() {
        true => match root
            .canonicalize()
            .ok()
            .and_then(|r| p.strip_prefix(&r).ok().map(Path::to_path_buf))
        {
            Some(rel) => rel,
            None => {
                return Err(ApiError::denied(
                    given,
                    "absolute paths outside the repository may not be read; give a path relative to the repository root",
                ));
            }
        },
        false => p.to_path_buf(),
    };
    let mut parts: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(ApiError::denied(given, "`..` would leave the repository"));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(ApiError::denied(
                    given,
                    "not a path relative to the repository root",
                ));
            }
        }
    }
    if parts.first().is_some_and(|f| f == ".kenning") {
        return Err(ApiError::denied(given, "the index's own files may not be read"));
    }
    if PrivatePath::of(&parts.join("/")) == Some(PrivatePath::VcsInternals) {
        return Err(ApiError::denied(given, PrivatePath::VcsInternals.reason()));
    }
    if parts.is_empty() {
        return Err(ApiError::invalid(
            argument,
            format!("{given:?} names the repository root, not a file"),
        ));
    }
    Ok(parts.join("/"))
}

/// An existing file inside the repository that may be read: the checked repository path and
/// the real path. The private-path rules are applied to the path as given and to where its
/// symbolic links lead, so `notes.txt -> .git/config` is refused like `.git/config`. An
/// ignored file is refused unless `ignored` says the caller asked for it on purpose.
pub fn confined_file(
    root: &Path,
    index_dir: &Path,
    argument: &str,
    given: &str,
    ignored: bool,
) -> Result<(String, PathBuf), ApiError> {
    let rel = repo_path(root, argument, given)?;
    if let Some(p) = PrivatePath::of(&rel) {
        return Err(ApiError::denied(&rel, p.reason()));
    }
    let real_root = root
        .canonicalize()
        .map_err(|e| ApiError::Internal(format!("{}: {e}", root.display())))?;
    let real = root.join(&rel).canonicalize().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ApiError::NotFound(format!("{rel}: no such file in the repository")),
        _ => ApiError::denied(&rel, e.to_string()),
    })?;
    let Ok(real_rel) = real.strip_prefix(&real_root) else {
        return Err(ApiError::denied(
            &rel,
            "a symbolic link that points outside the repository",
        ));
    };
    if let Ok(ix) = index_dir.canonicalize()
        && real.starts_with(&ix)
    {
        return Err(ApiError::denied(&rel, "the index's own files may not be read"));
    }
    let real_rel = real_rel.to_string_lossy().into_owned();
    if let Some(p) = PrivatePath::of(&real_rel) {
        return Err(ApiError::denied(
            &rel,
            format!("a symbolic link to {real_rel}: {}", p.reason()),
        ));
    }
    if !real.is_file() {
        return Err(ApiError::invalid(argument, format!("{rel} is not a file")));
    }
    if !ignored && is_ignored(&real_root, &real_rel) {
        return Err(ApiError::denied(
            &rel,
            "the ignore rules keep it out of the index; ask for it on purpose to read it \
             (`ignored: true`, `ken read-span --ignored`)",
        ));
    }
    Ok((rel, real))
}

/// Whether the walker's ignore rules (`.gitignore`, `.ignore`, `.kenignore` in the root and
/// every folder down to the file, `.git/info/exclude`) exclude `rel`. The nearest folder with
/// a matching rule decides, as in git; within a folder `.kenignore` beats `.ignore` beats
/// `.gitignore`, as in the walker.
fn is_ignored(real_root: &Path, rel: &str) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    let mut dirs = vec![real_root.to_path_buf()];
    for p in parts.iter().take(parts.len().saturating_sub(1)) {
        let next = dirs.last().map(|d| d.join(p)).unwrap_or_default();
        dirs.push(next);
    }
    let file = real_root.join(rel);
    for (depth, dir) in dirs.iter().enumerate().rev() {
        let mut b = ignore::gitignore::GitignoreBuilder::new(dir);
        let mut any = false;
        let exclude = real_root.join(".git").join("info").join("exclude");
        let root_only = (depth == 0).then_some(exclude);
        for f in root_only
            .into_iter()
            .chain([".gitignore", ".ignore", ".kenignore"].map(|n| dir.join(n)))
        {
            if f.is_file() {
                any = true;
                // A rule file that does not parse whole still contributes its good lines.
                let _ = b.add(f);
            }
        }
        if !any {
            continue;
        }
        let Ok(rules) = b.build() else { continue };
        // `file` is under `dir` by construction, which this call requires.
        let m = rules.matched_path_or_any_parents(&file, false);
        if m.is_ignore() {
            return true;
        }
        if m.is_whitelist() {
            return false;
        }
    }
    false
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadSpanRequest {
    /// `path:START-END` (1-based, inclusive), `path:LINE`, or `path` (from line 1), relative
    /// to the repository root.
    pub span: String,
    /// Token budget for the text (the span is cut at a line boundary to fit).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// Read a file the ignore rules keep out of the index (never a secrets-shaped one).
    #[serde(default)]
    pub ignored: bool,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ReadSpanResponse {
    pub path: String,
    pub start_line: u32,
    /// The last line returned (after cuts).
    pub end_line: u32,
    pub total_lines: u32,
    /// The lines, as in the file (not numbered).
    pub text: String,
    /// Fewer lines than asked: the span ran past the end, or a limit cut it.
    pub truncated: bool,
    /// Whether the index holds this file, and whether it changed on disk since.
    pub indexed: bool,
    pub changed_since_index: bool,
    pub generation: u64,
    pub coverage: Coverage,
}

/// The most lines one read returns.
const MAX_SPAN_LINES: u32 = 2000;
/// Files larger than this are not read.
const MAX_SPAN_FILE: u64 = 16 << 20;

fn parse_span(span: &str) -> Result<(&str, u32, Option<u32>), ApiError> {
    let bad = |m: &str| ApiError::invalid("span", format!("{span:?}: {m}"));
    let Some((path, range)) = span.rsplit_once(':') else {
        return Ok((span, 1, None));
    };
    if range.is_empty() || !range.chars().all(|c| c.is_ascii_digit() || c == '-') {
        return Ok((span, 1, None)); // a colon in the file name
    }
    let num = |s: &str| s.parse::<u32>().map_err(|_| bad("expected path:START-END"));
    let (a, b) = match range.split_once('-') {
        Some((a, b)) => (num(a)?, Some(num(b)?)),
        None => (num(range)?, None),
    };
    if a == 0 {
        return Err(bad("lines start at 1"));
    }
    if b.is_some_and(|b| b < a) {
        return Err(bad("the end line is before the start line"));
    }
    Ok((path, a, b))
}

impl Analysis {
    pub fn read_span(&self, r: &ReadSpanRequest) -> Result<ReadSpanResponse, ApiError> {
        let (given, start, end) = parse_span(&r.span)?;
        let max_tokens = super::page::check_tokens(r.max_tokens)?;
        let (path, real) = confined_file(self.root(), self.snapshot().index_dir(), "span", given, r.ignored)?;
        let meta = std::fs::metadata(&real).map_err(|e| ApiError::denied(&path, e.to_string()))?;
        if meta.len() > MAX_SPAN_FILE {
            return Err(ApiError::invalid(
                "span",
                format!(
                    "{path} is {} bytes, more than read_span reads ({MAX_SPAN_FILE})",
                    meta.len()
                ),
            ));
        }
        let bytes = crate::util::read_regular(&real).map_err(|e| ApiError::denied(&path, e.to_string()))?;
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().collect();
        let total = lines.len() as u32;
        if start > total.max(1) {
            return Err(ApiError::invalid(
                "span",
                format!("{path} has {total} lines; line {start} is past its end"),
            ));
        }
        let asked_end = end.unwrap_or(start.saturating_add(MAX_SPAN_LINES - 1));
        let mut last = asked_end.min(total).min(start.saturating_add(MAX_SPAN_LINES - 1));
        let mut out = String::new();
        let mut used = 0usize;
        let mut cut = false;
        for (i, l) in lines
            .iter()
            .enumerate()
            .take(last as usize)
            .skip(start as usize - 1)
        {
            if let Some(budget) = max_tokens {
                let t = count_tokens(l) + 1;
                if used + t > budget && !out.is_empty() {
                    last = i as u32;
                    cut = true;
                    break;
                }
                used += t;
            }
            out.push_str(l);
            out.push('\n');
        }
        let record = self
            .snapshot()
            .file_id(&path)
            .and_then(|id| self.snapshot().table.files.get(id.index()));
        let changed =
            record.is_some_and(|rec| rec.size != meta.len() || rec.hash != *blake3::hash(&bytes).as_bytes());
        Ok(ReadSpanResponse {
            path,
            start_line: start,
            end_line: last,
            total_lines: total,
            text: out,
            truncated: cut || end.is_some_and(|e| e > last) || (end.is_none() && last < total),
            indexed: record.is_some(),
            changed_since_index: changed,
            generation: self.generation(),
            coverage: self.coverage(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_parse_with_and_without_ranges() {
        assert_eq!(parse_span("a/b.py:3-9").unwrap(), ("a/b.py", 3, Some(9)));
        assert_eq!(parse_span("a/b.py:7").unwrap(), ("a/b.py", 7, None));
        assert_eq!(parse_span("a/b.py").unwrap(), ("a/b.py", 1, None));
        assert!(parse_span("a.py:0-3").is_err());
        assert!(parse_span("a.py:9-3").is_err());
    }

    #[test]
    fn escaping_paths_are_denied_by_name() {
        let root = Path::new("/nonexistent-root");
        for bad in [
            "../etc/passwd",
            "a/../../x",
            "/etc/passwd",
            ".kenning/CURRENT",
            "a\0b",
            ".git/config",
            "sub/.Git/HEAD",
        ] {
            let e = repo_path(root, "span", bad).unwrap_err();
            assert!(matches!(e, ApiError::PathDenied { .. }), "{bad}: {e}");
        }
        assert_eq!(
            repo_path(Path::new("/nonexistent-root"), "f", "./src//a.rs").unwrap(),
            "src/a.rs"
        );
    }
}
