//! `LexicalQuery`: the query language of `ken search`.
//!
//! Free text, `"exact phrases"`, and filters `lang:`, `kind:`, `path:` (a glob; without glob
//! characters, a substring of the path), each negatable with `-` or `!` (`-path:tests/`).

use globset::{Glob, GlobMatcher};

use super::LexicalError;

#[derive(Debug, Clone, Default)]
pub struct LexicalQuery {
    /// Everything that is not a filter or a phrase, in order.
    pub text: String,
    pub phrases: Vec<String>,
    pub langs: Vec<String>,
    pub not_langs: Vec<String>,
    pub kinds: Vec<String>,
    pub not_kinds: Vec<String>,
    pub paths: Vec<String>,
    pub not_paths: Vec<String>,
}

/// A compiled `path:` filter.
#[derive(Debug, Clone)]
pub enum PathFilter {
    Glob(GlobMatcher),
    Substring(String),
}

impl PathFilter {
    pub fn new(pattern: &str) -> Result<PathFilter, LexicalError> {
        if pattern.contains(['*', '?', '[', '{']) {
            let glob = Glob::new(pattern).map_err(|e| LexicalError::Pattern {
                what: "path glob",
                pattern: pattern.to_string(),
                message: e.to_string(),
            })?;
            Ok(PathFilter::Glob(glob.compile_matcher()))
        } else {
            Ok(PathFilter::Substring(pattern.to_string()))
        }
    }

    pub fn matches(&self, path: &str) -> bool {
        match self {
            PathFilter::Glob(g) => g.is_match(path),
            PathFilter::Substring(s) => path.contains(s.as_str()),
        }
    }
}

impl LexicalQuery {
    pub fn parse(input: &str) -> LexicalQuery {
        let mut q = LexicalQuery::default();
        let mut words: Vec<&str> = Vec::new();
        let mut rest = input;
        // Balanced double quotes are phrases; an odd one out is plain text.
        while let Some(open) = rest.find('"') {
            let Some(len) = rest[open + 1..].find('"') else {
                break;
            };
            words.extend(rest[..open].split_whitespace());
            let phrase = rest[open + 1..open + 1 + len].trim();
            if !phrase.is_empty() {
                q.phrases.push(phrase.to_string());
            }
            rest = &rest[open + len + 2..];
        }
        words.extend(rest.split_whitespace());
        let mut text: Vec<&str> = Vec::new();
        for w in words {
            let (negated, body) = match w.strip_prefix(['-', '!']) {
                Some(b) => (true, b),
                None => (false, w),
            };
            let filter = ["lang:", "kind:", "path:"]
                .iter()
                .find_map(|p| body.strip_prefix(p).filter(|v| !v.is_empty()).map(|v| (*p, v)));
            match (filter, negated) {
                (Some(("lang:", v)), false) => q.langs.push(v.to_lowercase()),
                (Some(("lang:", v)), true) => q.not_langs.push(v.to_lowercase()),
                (Some(("kind:", v)), false) => q.kinds.push(v.to_lowercase()),
                (Some(("kind:", v)), true) => q.not_kinds.push(v.to_lowercase()),
                (Some((_, v)), false) => q.paths.push(v.to_string()),
                (Some((_, v)), true) => q.not_paths.push(v.to_string()),
                (None, _) => text.push(w),
            }
        }
        q.text = text.join(" ");
        q
    }

    pub fn path_filters(&self) -> Result<(Vec<PathFilter>, Vec<PathFilter>), LexicalError> {
        let inc = self
            .paths
            .iter()
            .map(|p| PathFilter::new(p))
            .collect::<Result<_, _>>()?;
        let exc = self
            .not_paths
            .iter()
            .map(|p| PathFilter::new(p))
            .collect::<Result<_, _>>()?;
        Ok((inc, exc))
    }

    /// Whether the query asks for docs or config, which code answers otherwise leave out:
    /// `kind:doc`, `kind:config`, `lang:` naming a text format, or a word about them
    /// (`readme`, `docs`, `changelog`, `yaml`, `dockerfile`...).
    pub fn wants_text(&self) -> bool {
        const ABOUT_TEXT: [&str; 22] = [
            "readme",
            "docs",
            "documentation",
            "changelog",
            "markdown",
            "md",
            "rst",
            "yaml",
            "yml",
            "toml",
            "json",
            "dockerfile",
            "makefile",
            "cmake",
            "sql",
            "proto",
            "protobuf",
            "ci",
            "workflow",
            "guide",
            "tutorial",
            "manual",
        ];
        let text_kind = |k: &String| k == "doc" || k == "config";
        self.kinds.iter().any(text_kind)
            || self.langs.iter().any(|l| crate::lang::text_kind(l).is_some())
            || self
                .text
                .split(|c: char| !c.is_alphanumeric())
                .chain(
                    self.phrases
                        .iter()
                        .flat_map(|p| p.split(|c: char| !c.is_alphanumeric())),
                )
                .any(|w| ABOUT_TEXT.contains(&w.to_ascii_lowercase().as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.phrases.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_filters_phrases_and_text() {
        let q = LexicalQuery::parse(r#"lang:rust "parse error" -path:tests/ kind:function Searcher new"#);
        assert_eq!(q.text, "Searcher new");
        assert_eq!(q.phrases, ["parse error"]);
        assert_eq!(q.langs, ["rust"]);
        assert_eq!(q.kinds, ["function"]);
        assert_eq!(q.not_paths, ["tests/"]);
        assert_eq!(LexicalQuery::parse("x !lang:go").not_langs, ["go"]);
    }

    #[test]
    fn docs_and_config_are_wanted_only_when_asked() {
        assert!(!LexicalQuery::parse("where is the retry policy configured").wants_text());
        assert!(!LexicalQuery::parse("lang:python session").wants_text());
        assert!(LexicalQuery::parse("kind:doc install").wants_text());
        assert!(LexicalQuery::parse("lang:yaml jobs").wants_text());
        assert!(LexicalQuery::parse("what does the README say about plugins").wants_text());
        assert!(LexicalQuery::parse("CI workflow for releases").wants_text());
    }

    #[test]
    fn unbalanced_quotes_and_empty_filters_are_text() {
        let q = LexicalQuery::parse(r#"it's a "broken quote and path: here"#);
        assert!(q.phrases.is_empty());
        assert_eq!(q.text, r#"it's a "broken quote and path: here"#);
    }

    #[test]
    fn path_filters_are_globs_or_substrings() {
        assert!(PathFilter::new("*.py").unwrap().matches("a/b.py"));
        assert!(
            PathFilter::new("src/**/mod.rs")
                .unwrap()
                .matches("src/a/b/mod.rs")
        );
        assert!(PathFilter::new("tests/").unwrap().matches("crates/x/tests/it.rs"));
        assert!(!PathFilter::new("tests/").unwrap().matches("src/lib.rs"));
        assert!(PathFilter::new("[").is_err());
    }
}
