//! `PatchApplier`: the context-anchored `*** Begin Patch` edit format (as codex's
//! `apply_patch` has it), parsed and checked against the files whole before any file is
//! written: a patch applies entirely or not at all.
//!
//! ```text
//! *** Begin Patch
//! *** Update File: src/lib.rs
//! @@ fn total
//!  context line
//! -old line
//! +new line
//! *** Add File: src/new.rs
//! +contents
//! *** Delete File: src/old.rs
//! *** End Patch
//! ```
//!
//! A hunk's old lines (context and `-` lines) are found after the previous hunk's end, first
//! exactly, then ignoring trailing whitespace, then ignoring surrounding whitespace; an `@@`
//! line's text (a function's first line, say) moves the search past the line that holds it.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    Add {
        path: String,
        contents: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hunk {
    pub anchor: Option<String>,
    pub old: Vec<String>,
    pub new: Vec<String>,
    /// `*** End of File`: the old lines end the file.
    pub at_end: bool,
}

/// A file the patch changed, and how.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileChange {
    pub path: String,
    /// `added`, `deleted`, `updated`, `moved`.
    pub change: &'static str,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PatchError {
    #[error("line {line}: {message}")]
    Syntax { line: usize, message: String },
    #[error("{path}: {message}")]
    File { path: String, message: String },
}

pub struct PatchApplier;

impl PatchApplier {
    pub fn parse(text: &str) -> Result<Vec<FileOp>, PatchError> {
        let lines: Vec<&str> = text.lines().collect();
        let start = lines
            .iter()
            .position(|l| l.trim() == "*** Begin Patch")
            .ok_or_else(|| syntax(0, "the patch must start with `*** Begin Patch`"))?;
        let mut ops = Vec::new();
        let mut i = start + 1;
        let mut ended = false;
        while i < lines.len() {
            let line = lines[i];
            if line.trim() == "*** End Patch" {
                ended = true;
                break;
            }
            let (op, next) = if let Some(path) = line.strip_prefix("*** Add File: ") {
                parse_add(&lines, i, path)?
            } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
                let op = FileOp::Delete {
                    path: path.trim().to_string(),
                };
                (op, i + 1)
            } else if let Some(path) = line.strip_prefix("*** Update File: ") {
                parse_update(&lines, i, path)?
            } else if line.trim().is_empty() {
                i += 1;
                continue;
            } else {
                return Err(syntax(
                    i,
                    &format!("expected a `*** Add/Update/Delete File:` line, found {line:?}"),
                ));
            };
            ops.push(op);
            i = next;
        }
        if !ended {
            return Err(syntax(lines.len(), "the patch must end with `*** End Patch`"));
        }
        if ops.is_empty() {
            return Err(syntax(start, "the patch changes no file"));
        }
        Ok(ops)
    }

    /// Checks every operation against the files under `root`, then writes them all. `resolve`
    /// turns a patch path into the file to write (refusing paths outside the workspace).
    pub fn apply(
        ops: &[FileOp],
        root: &Path,
        resolve: &dyn Fn(&str) -> Result<PathBuf, String>,
    ) -> Result<Vec<FileChange>, PatchError> {
        let _ = root;
        let file_err = |path: &str, message: String| PatchError::File {
            path: path.to_string(),
            message,
        };
        // (target, new contents or None for delete)
        let mut writes: Vec<(PathBuf, Option<String>)> = Vec::new();
        let mut changes = Vec::new();
        for op in ops {
            match op {
                FileOp::Add { path, contents } => {
                    let target = resolve(path).map_err(|m| file_err(path, m))?;
                    if target.exists() {
                        return Err(file_err(
                            path,
                            "already exists; use `*** Update File:`".to_string(),
                        ));
                    }
                    writes.push((target, Some(contents.clone())));
                    changes.push(FileChange {
                        path: path.clone(),
                        change: "added",
                    });
                }
                FileOp::Delete { path } => {
                    let target = resolve(path).map_err(|m| file_err(path, m))?;
                    if !target.is_file() {
                        return Err(file_err(path, "no such file to delete".to_string()));
                    }
                    writes.push((target, None));
                    changes.push(FileChange {
                        path: path.clone(),
                        change: "deleted",
                    });
                }
                FileOp::Update { path, move_to, hunks } => {
                    let target = resolve(path).map_err(|m| file_err(path, m))?;
                    let text = std::fs::read_to_string(&target)
                        .map_err(|e| file_err(path, format!("cannot read: {e}")))?;
                    let updated = apply_hunks(&text, hunks).map_err(|m| file_err(path, m))?;
                    match move_to {
                        Some(to) => {
                            let dest = resolve(to).map_err(|m| file_err(to, m))?;
                            writes.push((target, None));
                            writes.push((dest, Some(updated)));
                            changes.push(FileChange {
                                path: to.clone(),
                                change: "moved",
                            });
                        }
                        None => {
                            writes.push((target, Some(updated)));
                            changes.push(FileChange {
                                path: path.clone(),
                                change: "updated",
                            });
                        }
                    }
                }
            }
        }
        for (target, contents) in writes {
            let shown = target.display().to_string();
            match contents {
                Some(c) => {
                    if let Some(dir) = target.parent() {
                        std::fs::create_dir_all(dir).map_err(|e| file_err(&shown, e.to_string()))?;
                    }
                    std::fs::write(&target, c).map_err(|e| file_err(&shown, e.to_string()))?;
                }
                None => std::fs::remove_file(&target).map_err(|e| file_err(&shown, e.to_string()))?,
            }
        }
        Ok(changes)
    }
}

/// A syntax error on `line` (0-based) of the patch.
fn syntax(line: usize, message: &str) -> PatchError {
    PatchError::Syntax {
        line: line + 1,
        message: message.to_string(),
    }
}

/// The `*** Add File:` section whose header is line `i`, and the line after it.
fn parse_add(lines: &[&str], mut i: usize, path: &str) -> Result<(FileOp, usize), PatchError> {
    let mut contents = String::new();
    i += 1;
    while i < lines.len() && !lines[i].starts_with("*** ") {
        let body = lines[i]
            .strip_prefix('+')
            .ok_or_else(|| syntax(i, "a line of an added file must start with `+`"))?;
        contents.push_str(body);
        contents.push('\n');
        i += 1;
    }
    let op = FileOp::Add {
        path: path.trim().to_string(),
        contents,
    };
    Ok((op, i))
}

/// The `*** Update File:` section whose header is line `i` (with its `*** Move to:` and its
/// hunks), and the line after it.
fn parse_update(lines: &[&str], mut i: usize, path: &str) -> Result<(FileOp, usize), PatchError> {
    i += 1;
    let mut move_to = None;
    if let Some(to) = lines.get(i).and_then(|l| l.strip_prefix("*** Move to: ")) {
        move_to = Some(to.trim().to_string());
        i += 1;
    }
    let mut hunks: Vec<Hunk> = Vec::new();
    while i < lines.len() && (!lines[i].starts_with("*** ") || lines[i] == "*** End of File") {
        let l = lines[i];
        if l == "*** End of File" {
            if let Some(h) = hunks.last_mut() {
                h.at_end = true;
            }
        } else if let Some(anchor) = l.strip_prefix("@@") {
            let anchor = anchor.trim();
            hunks.push(Hunk {
                anchor: (!anchor.is_empty()).then(|| anchor.to_string()),
                ..Hunk::default()
            });
        } else {
            hunk_line(&mut hunks, l, i)?;
        }
        i += 1;
    }
    if hunks.iter().all(|h| h.old.is_empty() && h.new.is_empty()) && move_to.is_none() {
        return Err(syntax(
            i.saturating_sub(1),
            &format!("`*** Update File: {}` has no hunk", path.trim()),
        ));
    }
    let op = FileOp::Update {
        path: path.trim().to_string(),
        move_to,
        hunks,
    };
    Ok((op, i))
}

/// A context, `-` or `+` line `l` (line `i` of the patch), added to the last hunk (the first,
/// when no `@@` opened one).
fn hunk_line(hunks: &mut Vec<Hunk>, l: &str, i: usize) -> Result<(), PatchError> {
    if hunks.is_empty() {
        hunks.push(Hunk::default());
    }
    let h = hunks.last_mut().ok_or_else(|| syntax(i, "no hunk"))?;
    match l.chars().next() {
        Some('+') => h.new.push(l[1..].to_string()),
        Some('-') => h.old.push(l[1..].to_string()),
        Some(' ') => {
            h.old.push(l[1..].to_string());
            h.new.push(l[1..].to_string());
        }
        // An empty line inside a hunk is an empty context line.
        None => {
            h.old.push(String::new());
            h.new.push(String::new());
        }
        Some(_) => return Err(syntax(i, "a hunk line must start with ' ', '-' or '+'")),
    }
    Ok(())
}

/// The file's text with every hunk applied in order, or why one does not fit.
fn apply_hunks(text: &str, hunks: &[Hunk]) -> Result<String, String> {
    let had_newline = text.ends_with('\n');
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut from = 0usize;
    for (n, h) in hunks.iter().enumerate() {
        if let Some(anchor) = &h.anchor {
            let found = (from..lines.len())
                .find(|&i| lines[i].trim() == anchor.trim() || lines[i].contains(anchor.trim()))
                .ok_or_else(|| format!("hunk {}: the `@@ {anchor}` line is not in the file", n + 1))?;
            from = found + usize::from(h.old.first().is_none_or(|o| o.trim() != anchor.trim()));
        }
        if h.old.is_empty() {
            // Pure insertion: after the anchor, or at the end of the file.
            let at = if h.anchor.is_some() { from } else { lines.len() };
            lines.splice(at..at, h.new.iter().cloned());
            from = at + h.new.len();
            continue;
        }
        let at = find(&lines, &h.old, from, h.at_end).ok_or_else(|| {
            format!(
                "hunk {}: these lines are not in the file{}:\n{}",
                n + 1,
                if from > 0 { " after the previous hunk" } else { "" },
                h.old.join("\n")
            )
        })?;
        lines.splice(at..at + h.old.len(), h.new.iter().cloned());
        from = at + h.new.len();
    }
    let mut out = lines.join("\n");
    if had_newline || !out.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

fn find(lines: &[String], old: &[String], from: usize, at_end: bool) -> Option<usize> {
    if old.len() > lines.len() {
        return None;
    }
    let candidates: Vec<usize> = match at_end {
        true => vec![lines.len() - old.len()],
        false => (from..=lines.len() - old.len()).collect(),
    };
    let exact = |a: &str, b: &str| a == b;
    let trailing = |a: &str, b: &str| a.trim_end() == b.trim_end();
    let trimmed = |a: &str, b: &str| a.trim() == b.trim();
    type LineEq<'f> = &'f dyn Fn(&str, &str) -> bool;
    let passes: [LineEq; 3] = [&exact, &trailing, &trimmed];
    passes.iter().find_map(|eq| {
        candidates
            .iter()
            .copied()
            .find(|&i| old.iter().enumerate().all(|(k, o)| eq(&lines[i + k], o)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply_to(text: &str, patch: &str) -> Result<String, String> {
        let ops = PatchApplier::parse(patch).map_err(|e| e.to_string())?;
        match &ops[0] {
            FileOp::Update { hunks, .. } => apply_hunks(text, hunks),
            _ => Err("not an update".into()),
        }
    }

    #[test]
    fn updates_with_context_and_anchors() {
        let text = "def a():\n    return 1\n\ndef b():\n    return 1\n";
        let patch = "*** Begin Patch\n*** Update File: m.py\n@@ def b():\n-    return 1\n+    return 2\n*** End Patch\n";
        assert_eq!(
            apply_to(text, patch).unwrap(),
            "def a():\n    return 1\n\ndef b():\n    return 2\n"
        );
    }

    #[test]
    fn tolerates_trailing_whitespace_but_not_wrong_lines() {
        let text = "x = 1   \ny = 2\n";
        let ok = "*** Begin Patch\n*** Update File: m.py\n-x = 1\n+x = 3\n y = 2\n*** End Patch";
        assert_eq!(apply_to(text, ok).unwrap(), "x = 3\ny = 2\n");
        let bad = "*** Begin Patch\n*** Update File: m.py\n-x = 9\n+x = 3\n*** End Patch";
        assert!(apply_to(text, bad).unwrap_err().contains("not in the file"));
    }

    #[test]
    fn rejects_malformed_patches_with_the_line() {
        assert!(matches!(
            PatchApplier::parse("*** Update File: a\n"),
            Err(PatchError::Syntax { .. })
        ));
        let e = PatchApplier::parse("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch").unwrap_err();
        assert_eq!(
            e,
            PatchError::Syntax {
                line: 3,
                message: "a line of an added file must start with `+`".into()
            }
        );
        assert!(PatchApplier::parse("*** Begin Patch\n*** Add File: a\n+x\n").is_err());
    }
}
