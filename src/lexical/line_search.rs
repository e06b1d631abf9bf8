//! `LineSearch`: every matching line of the indexed files, the way ripgrep prints them, with
//! the ripgrep crates. For a literal, the words it fully contains must be tokens of a file,
//! so the index narrows the files to scan ([`LineSearch::required_words`]).

use std::path::Path;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::Lossy};
use rayon::prelude::*;
use serde::Serialize;

use super::{LexicalError, MAX_TOKEN_LEN, is_stop_word};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineSearchMode {
    Literal,
    Regex,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct LineMatch {
    pub path: String,
    pub line: u64,
    pub text: String,
}

pub struct LineSearch {
    matcher: RegexMatcher,
}

impl LineSearch {
    pub fn new(pattern: &str, mode: LineSearchMode, ignore_case: bool) -> Result<LineSearch, LexicalError> {
        let matcher = RegexMatcherBuilder::new()
            .fixed_strings(mode == LineSearchMode::Literal)
            .case_insensitive(ignore_case)
            .build(pattern)
            .map_err(|e| LexicalError::Pattern {
                what: if mode == LineSearchMode::Literal {
                    "literal"
                } else {
                    "regex"
                },
                pattern: pattern.to_string(),
                message: e.to_string(),
            })?;
        Ok(LineSearch { matcher })
    }

    /// Lowercased words that lie wholly inside `literal` (a non-word character on both
    /// sides): any file containing the literal has each of them as a token.
    pub fn required_words(literal: &str) -> Vec<String> {
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        let chars: Vec<(usize, char)> = literal.char_indices().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            if !is_word(chars[i].1) {
                i += 1;
                continue;
            }
            let start = i;
            while i < chars.len() && is_word(chars[i].1) {
                i += 1;
            }
            let bounded = start > 0 && i < chars.len();
            let end_byte = chars.get(i).map_or(literal.len(), |c| c.0);
            let word = literal[chars[start].0..end_byte].to_lowercase();
            if bounded && word.len() <= MAX_TOKEN_LEN && !is_stop_word(&word) {
                out.push(word);
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// Searches `paths` (repository-relative, under `root`) in parallel; results in path and
    /// line order, at most `limit`. Returns the matches and the number of files searched.
    pub fn run(&self, root: &Path, paths: &[String], limit: usize) -> (Vec<LineMatch>, usize) {
        let per_file: Vec<Vec<LineMatch>> = paths
            .par_iter()
            .map(|p| {
                let mut searcher = SearcherBuilder::new()
                    .line_number(true)
                    .binary_detection(BinaryDetection::quit(b'\x00'))
                    .build();
                let mut found = Vec::new();
                // An indexed path that became a symbolic link is not followed out of the tree.
                let Ok(file) = crate::util::open_no_follow(&root.join(p)) else {
                    return found;
                };
                let _ = searcher.search_file(
                    &self.matcher,
                    &file,
                    Lossy(|line, text| {
                        found.push(LineMatch {
                            path: p.clone(),
                            line,
                            text: text.trim_end_matches(['\n', '\r']).to_string(),
                        });
                        Ok(found.len() < limit)
                    }),
                );
                found
            })
            .collect();
        let mut out: Vec<LineMatch> = per_file.into_iter().flatten().collect();
        out.truncate(limit);
        (out, paths.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bounded_words_are_required() {
        assert_eq!(LineSearch::required_words("foo(bar, baz)"), ["bar", "baz"]);
        assert_eq!(LineSearch::required_words("foo(bar, baz"), ["bar"]);
        assert_eq!(LineSearch::required_words(" getValue("), ["getvalue"]);
        assert!(LineSearch::required_words("Reque").is_empty());
        assert_eq!(
            LineSearch::required_words(".register_hook(self."),
            ["register_hook"]
        );
    }

    #[test]
    fn finds_every_matching_line_in_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\nfoo(x)\nbar\nfoo(y)\n").unwrap();
        std::fs::write(dir.path().join("b.py"), "foo(z)\n").unwrap();
        let s = LineSearch::new("foo(", LineSearchMode::Literal, false).unwrap();
        let (m, n) = s.run(dir.path(), &["a.py".into(), "b.py".into()], 100);
        assert_eq!(n, 2);
        let got: Vec<(&str, u64)> = m.iter().map(|x| (x.path.as_str(), x.line)).collect();
        assert_eq!(got, [("a.py", 2), ("a.py", 4), ("b.py", 1)]);
        let r = LineSearch::new(r"fo+\(\w\)", LineSearchMode::Regex, false).unwrap();
        assert_eq!(r.run(dir.path(), &["a.py".into()], 1).0.len(), 1);
        assert!(LineSearch::new("(", LineSearchMode::Regex, false).is_err());
    }
}
