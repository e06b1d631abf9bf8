//! `UnifiedDiff`: the files and line ranges a unified diff (`git diff`, `diff -u`) changes.
//!
//! Kept per file: the old and new paths (renames and copies from git's extended headers or
//! the `---`/`+++` lines), whether it was added or deleted, and per hunk the old lines it
//! removes and the new lines it adds (1-based), plus where pure insertions land in the old
//! file.

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDiff {
    /// `None` for an added file.
    pub old_path: Option<String>,
    /// `None` for a deleted file.
    pub new_path: Option<String>,
    /// Old-side lines removed or replaced.
    pub removed: Vec<u32>,
    /// New-side lines added.
    pub added: Vec<u32>,
    /// Old-side lines after which lines were inserted without removing any.
    pub inserted_after: Vec<u32>,
    pub binary: bool,
}

impl FileDiff {
    /// The path the change is about (new, else old).
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("")
    }

    pub fn renamed(&self) -> bool {
        matches!((&self.old_path, &self.new_path), (Some(a), Some(b)) if a != b)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnifiedDiff {
    pub files: Vec<FileDiff>,
}

/// `a/src/x.rs` -> `src/x.rs`; `/dev/null` -> None.
fn strip(p: &str) -> Option<String> {
    let p = p.split('\t').next().unwrap_or(p).trim();
    if p == "/dev/null" {
        return None;
    }
    let p = p.strip_prefix("a/").or_else(|| p.strip_prefix("b/")).unwrap_or(p);
    Some(p.trim_matches('"').to_string())
}

/// `-12,3` -> (12, 3); `+7` -> (7, 1).
fn range(s: &str) -> Option<(u32, u32)> {
    let s = s.get(1..)?;
    match s.split_once(',') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => Some((s.parse().ok()?, 1)),
    }
}

impl UnifiedDiff {
    /// Parses `text`; an error names the line that is not a diff.
    pub fn parse(text: &str) -> Result<UnifiedDiff, String> {
        let mut files: Vec<FileDiff> = Vec::new();
        let mut cur: Option<FileDiff> = None;
        let mut hunk = HunkCursor::default();
        for (n, line) in text.lines().enumerate() {
            if hunk.open() {
                let Some(f) = cur.as_mut() else { break };
                hunk.take(f, line);
                continue;
            }
            if let Some(h) = line.strip_prefix("@@ ") {
                hunk = HunkCursor::start(h, n, line, cur.is_some())?;
            } else {
                header_line(line, &mut files, &mut cur);
            }
        }
        if let Some(f) = cur.take() {
            files.push(f);
        }
        if files.is_empty() && !text.trim().is_empty() {
            return Err("no file headers (`diff --git`, `---`/`+++`) found: is this a unified diff?".into());
        }
        Ok(UnifiedDiff { files })
    }
}

/// A line outside any hunk: a new file's header (`diff --git`, or `---` in a plain `diff -u`),
/// or a header line of the current file.
fn header_line(line: &str, files: &mut Vec<FileDiff>, cur: &mut Option<FileDiff>) {
    if let Some(rest) = line.strip_prefix("diff --git ") {
        files.extend(cur.take());
        let mut parts = rest.split(' ');
        *cur = Some(FileDiff {
            old_path: parts.next().and_then(strip),
            new_path: parts.next().and_then(strip),
            ..FileDiff::default()
        });
    } else if let Some(p) = line.strip_prefix("--- ") {
        // A plain `diff -u` has no `diff --git` line: a new file starts here.
        let starts = cur
            .as_ref()
            .is_none_or(|f| !f.removed.is_empty() || !f.added.is_empty());
        if starts {
            files.extend(cur.take());
            *cur = Some(FileDiff::default());
        }
        if let Some(f) = cur.as_mut() {
            f.old_path = strip(p);
        }
    } else if let Some(f) = cur.as_mut() {
        f.header_line(line);
    }
}

impl FileDiff {
    /// `+++` and git's extended headers: renames, copies, added and deleted files, binaries.
    fn header_line(&mut self, line: &str) {
        if let Some(p) = line.strip_prefix("+++ ") {
            self.new_path = strip(p);
        } else if let Some(p) = line
            .strip_prefix("rename from ")
            .or_else(|| line.strip_prefix("copy from "))
        {
            self.old_path = Some(p.to_string());
        } else if let Some(p) = line
            .strip_prefix("rename to ")
            .or_else(|| line.strip_prefix("copy to "))
        {
            self.new_path = Some(p.to_string());
        } else if line.starts_with("new file mode") {
            self.old_path = None;
        } else if line.starts_with("deleted file mode") {
            self.new_path = None;
        } else if line.starts_with("Binary files ") || line.starts_with("GIT binary patch") {
            self.binary = true;
        }
    }
}

/// Where the parser is in a hunk: the next old and new line numbers, and how many lines of
/// each side are left (none: outside any hunk).
#[derive(Default)]
struct HunkCursor {
    old_line: u32,
    new_line: u32,
    old_left: u32,
    new_left: u32,
}

impl HunkCursor {
    /// The hunk whose header (after `@@ `) is `h`, on line `n` (0-based) of the diff.
    fn start(h: &str, n: usize, line: &str, in_file: bool) -> Result<HunkCursor, String> {
        let mut parts = h.split(' ');
        let (Some(o), Some(nw)) = (parts.next().and_then(range), parts.next().and_then(range)) else {
            return Err(format!("line {}: bad hunk header {line:?}", n + 1));
        };
        if !in_file {
            return Err(format!("line {}: a hunk before any file header", n + 1));
        }
        let mut hunk = HunkCursor {
            old_line: o.0.max(1),
            old_left: o.1,
            new_line: nw.0.max(1),
            new_left: nw.1,
        };
        if o.1 == 0 {
            // Pure insertion after line o.0.
            hunk.old_line = o.0 + 1;
        }
        Ok(hunk)
    }

    fn open(&self) -> bool {
        self.old_left > 0 || self.new_left > 0
    }

    /// One line of the hunk's body, recorded in `f`.
    fn take(&mut self, f: &mut FileDiff, line: &str) {
        match line.as_bytes().first() {
            Some(b'-') => {
                f.removed.push(self.old_line);
                self.old_line += 1;
                self.old_left = self.old_left.saturating_sub(1);
            }
            Some(b'+') => {
                f.added.push(self.new_line);
                let after = self.old_line.saturating_sub(1);
                let replaces = f.removed.last() == Some(&after) && after > 0;
                if !replaces && f.inserted_after.last() != Some(&after) {
                    f.inserted_after.push(after);
                }
                self.new_line += 1;
                self.new_left = self.new_left.saturating_sub(1);
            }
            Some(b'\\') => {}
            _ => {
                self.old_line += 1;
                self.new_line += 1;
                self.old_left = self.old_left.saturating_sub(1);
                self.new_left = self.new_left.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_diff_with_rename_add_delete_and_hunks() {
        let text = "diff --git a/src/a.py b/src/a.py
index 1..2 100644
--- a/src/a.py
+++ b/src/a.py
@@ -3,4 +3,5 @@ def f():
 ctx
-old
+new1
+new2
 ctx
 ctx
@@ -20,0 +22,2 @@
+ins1
+ins2
diff --git a/old.rs b/new.rs
similarity index 90%
rename from old.rs
rename to new.rs
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-x
-y
diff --git a/born.py b/born.py
new file mode 100644
--- /dev/null
+++ b/born.py
@@ -0,0 +1 @@
+z
";
        let d = UnifiedDiff::parse(text).unwrap();
        assert_eq!(d.files.len(), 4);
        let a = &d.files[0];
        assert_eq!(a.path(), "src/a.py");
        assert_eq!(a.removed, vec![4]);
        assert_eq!(a.added, vec![4, 5, 22, 23]);
        assert_eq!(a.inserted_after, vec![20]);
        assert!(d.files[1].renamed());
        assert_eq!(d.files[1].old_path.as_deref(), Some("old.rs"));
        assert_eq!(d.files[2].new_path, None);
        assert_eq!(d.files[2].removed, vec![1, 2]);
        assert_eq!(d.files[3].old_path, None);
        assert_eq!(d.files[3].added, vec![1]);
    }

    #[test]
    fn plain_diff_u_and_garbage() {
        let d = UnifiedDiff::parse("--- x.c\t2024\n+++ x.c\t2024\n@@ -1 +1 @@\n-a\n+b\n").unwrap();
        assert_eq!(d.files[0].path(), "x.c");
        assert_eq!(d.files[0].removed, vec![1]);
        assert!(UnifiedDiff::parse("hello\nworld\n").is_err());
    }
}
