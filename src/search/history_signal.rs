//! `HistorySignal`: the ranking stage that reads the repository's history — files whose past
//! commit messages read like the task (BugLocator's insight: a bug report resembles the
//! fixes of the file it is about), and the co-change neighbours of the strongest files (a
//! fix of one often lands in the file that always changes with it).

use std::collections::HashMap;

use crate::index::HistoryPart;
use crate::lang::PathKind;

/// Files whose co-change neighbours are followed.
const COCHANGE_SEEDS: usize = 5;
/// Co-change neighbours kept per ranking.
const MAX_COCHANGE: usize = 30;

pub struct HistorySignal<'h> {
    pub history: &'h HistoryPart,
}

/// Per-file history facts for the learned ranker (all zero for a file that never changed).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct HistoryFacts {
    pub changes: u32,
    pub age_days: f32,
    /// Age of the file's first change (how long it has existed in the history read).
    pub span_days: f32,
}

impl<'h> HistorySignal<'h> {
    /// Files by BM25 of the task over the words of the messages that changed them, limited
    /// to the files `exists` accepts (the history remembers deleted ones).
    pub fn messages(&self, task: &str, exists: impl Fn(&str) -> bool, limit: usize) -> Vec<(String, f32)> {
        self.history
            .message_ranking(task)
            .into_iter()
            .filter_map(|(i, s)| {
                let p = self.history.path_of(i as u32)?;
                exists(p).then(|| (p.to_string(), s))
            })
            .take(limit)
            .collect()
    }

    /// Neighbours of the strongest files (`ranked`, best first with their scores): each
    /// neighbour scores the seed's share of the fused score times how often the two changed
    /// together, over how often the seed changed. Seeds themselves and tests are left out
    /// (tests are the impact analysis's business).
    pub fn cochange(&self, ranked: &[(String, f32)], exists: impl Fn(&str) -> bool) -> Vec<(String, f32)> {
        let seeds: Vec<&(String, f32)> = ranked.iter().take(COCHANGE_SEEDS).collect();
        let top = seeds.first().map_or(0.0, |s| s.1).max(f32::MIN_POSITIVE);
        let mut score: HashMap<&str, f32> = HashMap::new();
        for (path, s) in &seeds {
            let Some(f) = self.history.file(path) else {
                continue;
            };
            let changes = f.changes.max(1) as f32;
            for (n, shared) in &f.neighbours {
                let Some(p) = self.history.path_of(*n) else {
                    continue;
                };
                // One shared commit is chance, not coupling.
                if *shared < 2 || PathKind::of(p).is_test() || seeds.iter().any(|s| s.0 == p) || !exists(p) {
                    continue;
                }
                *score.entry(p).or_default() += (s / top) * (*shared as f32 / changes);
            }
        }
        let mut out: Vec<(String, f32)> = score.into_iter().map(|(p, s)| (p.to_string(), s)).collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(MAX_COCHANGE);
        out
    }

    pub fn facts(&self, path: &str) -> HistoryFacts {
        match self.history.file(path) {
            None => HistoryFacts::default(),
            Some(f) => HistoryFacts {
                changes: f.changes,
                age_days: self.history.age_days(f),
                span_days: ((self.history.head_unix - f.first_unix).max(0) as f32) / 86_400.0,
            },
        }
    }
}
