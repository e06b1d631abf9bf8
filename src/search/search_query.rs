//! `SearchQuery`: a query parsed once, for every stage of the ranking: the text without
//! pasted environment listings, its filters (`lang:`, `kind:`, `path:`), the words it uses,
//! what its words say of paths, the identifiers and paths it names, and its kind.

use std::collections::HashSet;

use serde::Serialize;

use super::{EnvironmentDump, TaskMentions};
use crate::lexical::{LexicalQuery, PathEvidence, PathFilter};

/// What shape of question a query is; the ranker weighs its evidence by it (an identifier
/// is answered by its definition, a sentence by meaning and words, an issue by what it names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum QueryKind {
    /// One identifier, or a few words at least one of which is shaped like one
    /// (`parse_args`, `Router.compose`, `HashMap new`).
    Symbol,
    /// A sentence or phrase in plain words.
    Natural,
    /// A long text: an issue's title and body, several paragraphs.
    Issue,
    /// A stack trace or panic: frames with paths and lines.
    Trace,
}

impl QueryKind {
    pub const ALL: [QueryKind; 4] = [
        QueryKind::Symbol,
        QueryKind::Natural,
        QueryKind::Issue,
        QueryKind::Trace,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            QueryKind::Symbol => "symbol",
            QueryKind::Natural => "natural",
            QueryKind::Issue => "issue",
            QueryKind::Trace => "trace",
        }
    }
}

#[derive(Debug, Clone)]
pub struct SearchQuery {
    /// As given.
    pub raw: String,
    /// Without pasted environment listings (version tables, `pip freeze`...).
    pub text: String,
    /// The lexical query language's parse of `text`: free words, phrases, filters.
    pub lexical: LexicalQuery,
    /// The paths and identifiers the text names.
    pub mentions: TaskMentions,
    /// Distinct lowercased words of three letters or more, split as identifiers.
    pub words: HashSet<String>,
    /// What the words say of paths (a stem or folder named, copies asked for).
    pub evidence: PathEvidence,
    pub kind: QueryKind,
    /// The identifier the whole query is (filters aside), if it is one.
    pub identifier: Option<String>,
    /// The `path:` and `-path:` filters compiled (a pattern that does not compile is left
    /// out here; `api::search` refuses it before ranking).
    include: Vec<PathFilter>,
    exclude: Vec<PathFilter>,
}

impl SearchQuery {
    pub fn parse(raw: &str) -> SearchQuery {
        let text = EnvironmentDump::strip(raw).into_owned();
        let lexical = LexicalQuery::parse(&text);
        let plain = plain_text(&lexical, &text);
        let mentions = TaskMentions::parse(&text);
        let mut tokens = Vec::new();
        crate::lexical::tokenize(&plain, &mut tokens);
        let words: HashSet<String> = tokens
            .into_iter()
            .map(|t| t.text)
            .filter(|t| t.len() > 2)
            .collect();
        let evidence = PathEvidence::of_query(&plain);
        let identifier = is_identifier(&plain).then(|| plain.clone());
        let kind = kind_of(&plain, &text, &mentions, identifier.is_some());
        let (include, exclude) = lexical.path_filters().unwrap_or_default();
        SearchQuery {
            raw: raw.to_string(),
            text,
            lexical,
            mentions,
            words,
            evidence,
            kind,
            identifier,
            include,
            exclude,
        }
    }

    /// Whether the query filters by language or path.
    pub fn has_filters(&self) -> bool {
        let q = &self.lexical;
        !(q.langs.is_empty() && q.not_langs.is_empty() && q.paths.is_empty() && q.not_paths.is_empty())
    }

    /// Whether a file of `language` at `path` passes the query's `lang:` and `path:` filters
    /// (a pattern that does not compile passes everything; `api::search` refuses it first).
    pub fn keeps_file(&self, path: &str, language: &str) -> bool {
        let q = &self.lexical;
        let has = |list: &[String], v: &str| list.iter().any(|x| x.eq_ignore_ascii_case(v));
        (q.langs.is_empty() || has(&q.langs, language))
            && !has(&q.not_langs, language)
            && (self.include.is_empty() || self.include.iter().any(|f| f.matches(path)))
            && !self.exclude.iter().any(|f| f.matches(path))
    }

    /// The words to embed and to read path evidence from: the text without its filters
    /// (all of it when it is only filters).
    pub fn plain(&self) -> String {
        plain_text(&self.lexical, &self.text)
    }
}

/// The query's words without its filters: its free text and phrases, or all of `whole` when
/// it is only filters.
pub(crate) fn plain_text(q: &LexicalQuery, whole: &str) -> String {
    let mut t = q.text.clone();
    for p in &q.phrases {
        t.push(' ');
        t.push_str(p);
    }
    match t.trim().is_empty() {
        true => whole.to_string(),
        false => t.trim().to_string(),
    }
}

/// One identifier: letters, digits and `_ . : $`, not starting with a digit.
pub(crate) fn is_identifier(word: &str) -> bool {
    !word.is_empty()
        && word.chars().all(|c| c.is_alphanumeric() || "_.:$".contains(c))
        && word
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
}

/// Shaped like code rather than a word: `snake_case`, `camelCase`/`CamelCase` (a capital
/// after the first letter), dotted or `::` paths.
fn code_shaped(word: &str) -> bool {
    let w = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
    is_identifier(w)
        && (w.contains('_')
            || w.contains('.')
            || w.contains("::")
            || w.chars().skip(1).any(|c| c.is_uppercase()))
}

fn kind_of(plain: &str, text: &str, mentions: &TaskMentions, identifier: bool) -> QueryKind {
    let framed = mentions.paths.iter().filter(|p| p.line.is_some()).count();
    let trace_words = [
        "Traceback (most recent call last)",
        "panicked at",
        "stack backtrace",
        "Exception in thread",
    ];
    if framed >= 2 || trace_words.iter().any(|w| text.contains(w)) {
        return QueryKind::Trace;
    }
    let words: Vec<&str> = plain.split_whitespace().collect();
    if identifier || (words.len() <= 4 && words.iter().any(|w| code_shaped(w))) {
        return QueryKind::Symbol;
    }
    if words.len() > 40 || text.lines().filter(|l| !l.trim().is_empty()).count() > 3 {
        return QueryKind::Issue;
    }
    QueryKind::Natural
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_of_queries() {
        assert_eq!(SearchQuery::parse("parse_args").kind, QueryKind::Symbol);
        assert_eq!(
            SearchQuery::parse("Router.compose lang:ts").kind,
            QueryKind::Symbol
        );
        assert_eq!(SearchQuery::parse("HashMap insert").kind, QueryKind::Symbol);
        assert_eq!(
            SearchQuery::parse("how are spawned tasks scheduled onto threads").kind,
            QueryKind::Natural
        );
        let issue = "Crash when saving\n\nSteps:\n1. open a file\n2. save it\n\nExpected it to save.";
        assert_eq!(SearchQuery::parse(issue).kind, QueryKind::Issue);
        let trace = "Traceback (most recent call last):\n  File \"app/models.py\", line 12, in save\n    x()\nKeyError: 'a'";
        assert_eq!(SearchQuery::parse(trace).kind, QueryKind::Trace);
    }

    #[test]
    fn parsed_once_with_filters_apart() {
        let q = SearchQuery::parse("compose middleware path:src/ -lang:md");
        assert_eq!(q.plain(), "compose middleware");
        assert_eq!(q.lexical.paths, vec!["src/".to_string()]);
        assert!(q.words.contains("middleware"));
        assert!(q.identifier.is_none());
        assert_eq!(SearchQuery::parse("Base#halt").identifier, None);
        assert_eq!(
            SearchQuery::parse("fmt.Println").identifier.as_deref(),
            Some("fmt.Println")
        );
    }
}
