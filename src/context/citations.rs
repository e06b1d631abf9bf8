//! `path:line` citations in a model's answer, checked against the index: the file must be
//! indexed and the lines must exist in it.

use serde::Serialize;

use crate::index::IndexSnapshot;

#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Citation {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    /// Indexed, and the lines exist.
    pub valid: bool,
}

/// Every `path:line` or `path:start-end` in `text` whose path has a file extension.
pub fn find_citations(text: &str, snapshot: &IndexSnapshot) -> Vec<Citation> {
    let Ok(re) = regex::Regex::new(r"([A-Za-z0-9_][A-Za-z0-9_./\-]*\.[A-Za-z0-9]+):(\d+)(?:-(\d+))?") else {
        return Vec::new();
    };
    let mut out: Vec<Citation> = Vec::new();
    for c in re.captures_iter(text) {
        let path = c.get(1).map_or("", |m| m.as_str()).trim_start_matches("./");
        let start: u32 = c.get(2).and_then(|m| m.as_str().parse().ok()).unwrap_or(0);
        let end: u32 = c.get(3).and_then(|m| m.as_str().parse().ok()).unwrap_or(start);
        let lines = snapshot
            .file_id(path)
            .and_then(|id| snapshot.table.files.get(id.index()))
            .map(|r| r.lines);
        let valid = lines.is_some_and(|n| start >= 1 && start <= end && end <= n);
        let cite = Citation {
            path: path.to_string(),
            start_line: start,
            end_line: end,
            valid,
        };
        if !out.contains(&cite) {
            out.push(cite);
        }
    }
    out
}

/// `text` with every citation that does not check out marked `[unverified]`.
pub fn mark_unverified(text: &str, citations: &[Citation]) -> String {
    let mut out = text.to_string();
    for c in citations.iter().filter(|c| !c.valid) {
        let written = match c.start_line == c.end_line {
            true => format!("{}:{}", c.path, c.start_line),
            false => format!("{}:{}-{}", c.path, c.start_line, c.end_line),
        };
        out = out.replace(&written, &format!("{written} [unverified]"));
    }
    out
}
