//! `FusedFile`: the lexical and semantic file rankings fused by reciprocal rank, the semantic
//! one made from chunk hits with a file's strong chunks counted together.

use std::collections::HashMap;

use serde::Serialize;

use super::semantic_index::SemanticHit;

/// A file ranked by reciprocal rank fusion of the lexical and semantic file rankings.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FusedFile {
    pub path: String,
    pub score: f32,
    /// 1-based ranks in each list, when present.
    pub lexical_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
    /// The best semantic chunk's lines in this file.
    pub lines: Option<(u32, u32)>,
}

/// Files from semantic chunk hits, best chunk first, each file once.
pub fn semantic_files(hits: &[SemanticHit]) -> Vec<&SemanticHit> {
    let mut seen = std::collections::HashSet::new();
    hits.iter().filter(|h| seen.insert(h.path.as_str())).collect()
}

/// Weight of a file's next strong chunk relative to the one before (its best counts in full).
const MORE_CHUNKS_DECAY: f32 = 0.5;
/// Chunks of one file that count.
const CHUNKS_COUNTED: usize = 3;

/// Files from semantic chunk hits ranked by their strong chunks together: the best in full,
/// the next ones with diminishing weight (a file with three close chunks is more likely the
/// answer than one with a single lucky one). Each file once, with its best chunk.
pub fn semantic_files_together(hits: &[SemanticHit]) -> Vec<&SemanticHit> {
    let mut by: HashMap<&str, (f32, usize, &SemanticHit)> = HashMap::new();
    for h in hits {
        let e = by.entry(h.path.as_str()).or_insert((0.0, 0, h));
        if e.1 < CHUNKS_COUNTED {
            e.0 += h.score * MORE_CHUNKS_DECAY.powi(e.1 as i32);
            e.1 += 1;
        }
    }
    let mut files: Vec<(f32, &SemanticHit)> =
        by.into_values().map(|(score, _, best)| (score, best)).collect();
    files.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    files.into_iter().map(|(_, best)| best).collect()
}

/// Reciprocal rank fusion, `1 / (k + rank)` summed over the lists a file appears in.
pub fn fuse_files(lexical: &[String], semantic: &[SemanticHit], k: f32, limit: usize) -> Vec<FusedFile> {
    let mut by: HashMap<String, FusedFile> = HashMap::new();
    for (r, path) in lexical.iter().enumerate() {
        let e = by.entry(path.clone()).or_insert_with(|| FusedFile {
            path: path.clone(),
            score: 0.0,
            lexical_rank: None,
            semantic_rank: None,
            lines: None,
        });
        e.score += 1.0 / (k + r as f32 + 1.0);
        e.lexical_rank = Some(r + 1);
    }
    for (r, h) in semantic_files_together(semantic).into_iter().enumerate() {
        let e = by.entry(h.path.clone()).or_insert_with(|| FusedFile {
            path: h.path.clone(),
            score: 0.0,
            lexical_rank: None,
            semantic_rank: None,
            lines: None,
        });
        e.score += 1.0 / (k + r as f32 + 1.0);
        e.semantic_rank = Some(r + 1);
        e.lines = Some((h.start_line, h.end_line));
    }
    let mut out: Vec<FusedFile> = by.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    out.truncate(limit);
    out
}
