//! `RankFeatures`: one candidate file's evidence from every signal, as the fixed vector the
//! learned ranker reads. The names in [`FEATURE_NAMES`] are the columns of the training data
//! (`ken context --features`) and of the shipped model; a model whose columns differ is not
//! used.

use std::collections::HashSet;

use serde::Serialize;

use super::{HistoryFacts, QueryKind, SearchQuery};
use crate::lang::PathKind;

/// Column names, in order.
pub const FEATURE_NAMES: &[&str] = &[
    "fused",
    "fused_rank",
    "lexical",
    "lexical_rank",
    "semantic",
    "semantic_rank",
    "mention",
    "mention_path",
    "best_symbol",
    "graph_rank",
    "history",
    "history_rank",
    "cochange",
    "cochange_rank",
    "centrality",
    "path_prior",
    "is_test",
    "log_lines",
    "log_defs",
    "path_overlap",
    "has_history",
    "log_changes",
    "log_age_days",
    "log_span_days",
    "name_match",
    "copy_prior",
    "exact_def",
    "lexical_defs",
    "semantic_chunks",
    "semantic_sum",
    "folder_lexical",
    "folder_semantic",
    "module_entry",
    "path_role",
    "path_depth",
    "generated",
    "query_symbol",
    "query_natural",
    "query_issue",
    "query_trace",
    "query_words",
];

/// What each signal said of one file (zero where it said nothing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct FileSignals {
    /// Score over the list's best (1 for the top file).
    pub lexical: f32,
    pub lexical_rank: usize,
    /// Definitions of the file among the lexical ranking's hits.
    pub lexical_defs: u32,
    pub semantic: f32,
    pub semantic_rank: usize,
    /// The file's chunks among the semantic hits, and the sum of its best three's scores.
    pub semantic_chunks: u32,
    pub semantic_sum: f32,
    /// Fused score the task's mentions gave it.
    pub mention: f32,
    pub mention_path: bool,
    /// The file defines exactly the identifier the query is.
    pub exact_def: bool,
    pub graph_rank: usize,
    pub history: f32,
    pub history_rank: usize,
    pub cochange: f32,
    pub cochange_rank: usize,
    /// Lexical and semantic candidates (of the first 20 each) in the file's folder.
    pub folder_lexical: f32,
    pub folder_semantic: f32,
    /// Brought in as the entry file of a folder many candidates lie in.
    pub module_entry: bool,
}

/// The facts about a file that do not depend on the task.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FileFacts {
    pub lines: u32,
    pub defs: usize,
    /// Global centrality (summed PageRank).
    pub centrality: f32,
    pub path_prior: f32,
    /// What the file is for (source, test, example...), generated or not.
    pub kind: PathKind,
    /// Folders above the file.
    pub depth: u32,
    /// Share of the task's distinct words that appear in the path's words.
    pub path_overlap: f32,
    /// How strongly the task names the file ([`crate::lexical::PathEvidence::name_evidence`]).
    pub name_match: f32,
    /// The weight the file keeps for the kind of copy it is (tests, examples, generated,
    /// legacy, platform variants), unless the task asks for that kind.
    pub copy_prior: f32,
    /// `None`: no history part.
    pub history: Option<HistoryFacts>,
}

/// The facts about the query, the same for each of its candidates (the trees condition the
/// other columns on them: an identifier is answered differently from an issue).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryFacts {
    pub kind: QueryKind,
    pub words: usize,
}

impl QueryFacts {
    pub fn of(q: &SearchQuery) -> QueryFacts {
        QueryFacts {
            kind: q.kind,
            words: q.words.len(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankFeatures(pub Vec<f32>);

impl RankFeatures {
    /// The vector: `fused` is the file's fused score, `rank` its place in the fused list.
    pub fn new(
        fused: f32,
        rank: usize,
        best_symbol: f32,
        s: &FileSignals,
        f: &FileFacts,
        q: &QueryFacts,
    ) -> RankFeatures {
        let recip = |r: usize| if r == 0 { 0.0 } else { 1.0 / r as f32 };
        let flag = |b: bool| f32::from(u8::from(b));
        let h = f.history.unwrap_or_default();
        let v = vec![
            fused,
            recip(rank),
            s.lexical,
            recip(s.lexical_rank),
            s.semantic,
            recip(s.semantic_rank),
            s.mention,
            flag(s.mention_path),
            best_symbol,
            recip(s.graph_rank),
            s.history,
            recip(s.history_rank),
            s.cochange,
            recip(s.cochange_rank),
            f.centrality,
            f.path_prior,
            flag(f.kind.is_test()),
            (1.0 + f.lines as f32).ln(),
            (1.0 + f.defs as f32).ln(),
            f.path_overlap,
            flag(f.history.is_some()),
            (1.0 + h.changes as f32).ln(),
            if h.changes == 0 {
                -1.0
            } else {
                (1.0 + h.age_days).ln()
            },
            if h.changes == 0 {
                -1.0
            } else {
                (1.0 + h.span_days).ln()
            },
            f.name_match,
            f.copy_prior,
            flag(s.exact_def),
            (1.0 + s.lexical_defs as f32).ln(),
            (1.0 + s.semantic_chunks as f32).ln(),
            s.semantic_sum,
            s.folder_lexical,
            s.folder_semantic,
            flag(s.module_entry),
            f.kind.role_code(),
            f.depth as f32,
            flag(f.kind.generated || f.kind.vendored),
            flag(q.kind == QueryKind::Symbol),
            flag(q.kind == QueryKind::Natural),
            flag(q.kind == QueryKind::Issue),
            flag(q.kind == QueryKind::Trace),
            (1.0 + q.words as f32).ln(),
        ];
        debug_assert_eq!(v.len(), FEATURE_NAMES.len());
        RankFeatures(v)
    }
}

/// Share of the path's words (its folders and file name, split as identifiers; the
/// extension and words of two letters or fewer left out) that the task uses.
pub fn path_overlap(task_words: &HashSet<String>, path: &str) -> f32 {
    let stem = path.rsplit_once('.').map_or(path, |(s, _)| s);
    let mut words = Vec::new();
    crate::lexical::tokenize(stem, &mut words);
    let mut seen = HashSet::new();
    let (mut all, mut hit) = (0usize, 0usize);
    for t in words.iter().filter(|t| t.text.len() > 2) {
        if seen.insert(t.text.as_str()) {
            all += 1;
            hit += usize::from(task_words.contains(&t.text));
        }
    }
    if all == 0 { 0.0 } else { hit as f32 / all as f32 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_words_the_task_uses() {
        let task: HashSet<String> = ["cookie", "cookies", "expiry"].map(String::from).into();
        assert_eq!(path_overlap(&task, "requests/cookies.py"), 0.5);
        assert_eq!(path_overlap(&task, "src/py.rs"), 0.0);
        assert_eq!(path_overlap(&task, "cookies/expiry.rs"), 1.0);
    }

    #[test]
    fn the_vector_has_a_value_per_column() {
        let q = QueryFacts::of(&SearchQuery::parse("where are requests retried"));
        let f = RankFeatures::new(1.0, 1, 0.0, &FileSignals::default(), &FileFacts::default(), &q);
        assert_eq!(f.0.len(), FEATURE_NAMES.len());
    }
}
