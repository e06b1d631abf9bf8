//! `LearnedRanker`: gradient-boosted trees (LambdaMART, trained offline by
//! `benches/ranker/train.py` on pseudo-tasks mined from the history of public repositories)
//! that rescore the fused ranking's top candidates from their [`RankFeatures`].
//!
//! The model is a small JSON file in the repository (`models/file-ranker/model.json`, with
//! its provenance beside it), embedded in the binary. Inference walks each tree: a few
//! comparisons per tree, microseconds per candidate. A model whose feature columns differ
//! from [`FEATURE_NAMES`] is refused, and the ranking falls back to the fused scores.

use serde::Deserialize;

use super::FEATURE_NAMES;

const EMBEDDED: &str = include_str!("../../models/file-ranker/model.json");
pub const MODEL_FORMAT: &str = "kenning-gbdt-1";

/// One node: an internal node sends `x[feature] <= threshold` left, else right; a leaf
/// (`feature < 0`) holds its value in `threshold`.
#[derive(Debug, Clone, Copy, Deserialize)]
struct TreeNode(i32, f32, u32, u32);

#[derive(Debug, Clone, Deserialize)]
pub struct LearnedRanker {
    format: String,
    pub features: Vec<String>,
    trees: Vec<Vec<TreeNode>>,
    /// Candidates rescored (the fused list's head).
    pub candidates: usize,
    /// What it was trained on, for reports.
    #[serde(default)]
    pub trained_on: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RankerModelError {
    #[error("the ranking model is not valid JSON: {0}")]
    Parse(String),
    #[error("the ranking model has format {0:?}, not {MODEL_FORMAT}")]
    Format(String),
    #[error("the ranking model's features differ from this ken's ({0})")]
    Features(String),
    #[error("the ranking model's tree {0} is malformed")]
    Tree(usize),
}

impl LearnedRanker {
    /// The model shipped in the binary, read once per process (a server ranks many queries).
    pub fn embedded() -> Result<&'static LearnedRanker, &'static RankerModelError> {
        static MODEL: std::sync::OnceLock<Result<LearnedRanker, RankerModelError>> =
            std::sync::OnceLock::new();
        MODEL.get_or_init(|| Self::from_json(EMBEDDED)).as_ref()
    }

    pub fn from_json(text: &str) -> Result<LearnedRanker, RankerModelError> {
        let m: LearnedRanker =
            serde_json::from_str(text).map_err(|e| RankerModelError::Parse(e.to_string()))?;
        if m.format != MODEL_FORMAT {
            return Err(RankerModelError::Format(m.format));
        }
        if m.features.len() != FEATURE_NAMES.len()
            || m.features.iter().zip(FEATURE_NAMES).any(|(a, b)| a != b)
        {
            return Err(RankerModelError::Features(m.features.join(",")));
        }
        for (i, t) in m.trees.iter().enumerate() {
            let ok = !t.is_empty()
                && t.iter().all(|n| {
                    n.0 < 0
                        || (n.0 as usize) < FEATURE_NAMES.len()
                            && (n.2 as usize) < t.len()
                            && (n.3 as usize) < t.len()
                });
            if !ok {
                return Err(RankerModelError::Tree(i));
            }
        }
        Ok(m)
    }

    /// Trees in the model.
    pub fn trees(&self) -> usize {
        self.trees.len()
    }

    /// The model's score of one candidate (higher is more relevant).
    pub fn score(&self, x: &[f32]) -> f32 {
        let mut total = 0f32;
        for t in &self.trees {
            let mut i = 0usize;
            // A valid tree reaches a leaf in at most its size in steps.
            for _ in 0..t.len() {
                let TreeNode(f, v, l, r) = t[i];
                if f < 0 {
                    total += v;
                    break;
                }
                let xv = x.get(f as usize).copied().unwrap_or(0.0);
                i = if xv <= v { l as usize } else { r as usize };
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(trees: &str) -> String {
        let names: Vec<String> = FEATURE_NAMES.iter().map(|n| format!("{n:?}")).collect();
        format!(
            r#"{{"format":"{MODEL_FORMAT}","features":[{}],"trees":{trees},"candidates":30}}"#,
            names.join(",")
        )
    }

    #[test]
    fn walks_trees_and_sums_leaves() {
        // Tree 1: lexical (column 2) <= 0.5 ? 1 : 3; tree 2: a single leaf 0.25.
        let m = LearnedRanker::from_json(&model(
            "[[[2,0.5,1,2],[-1,1.0,0,0],[-1,3.0,0,0]],[[-1,0.25,0,0]]]",
        ))
        .unwrap();
        let mut x = vec![0f32; FEATURE_NAMES.len()];
        assert_eq!(m.score(&x), 1.25);
        x[2] = 0.9;
        assert_eq!(m.score(&x), 3.25);
    }

    #[test]
    fn refuses_models_it_cannot_read() {
        assert!(matches!(
            LearnedRanker::from_json("{"),
            Err(RankerModelError::Parse(_))
        ));
        let bad_child = model("[[[2,0.5,1,9],[-1,1.0,0,0]]]");
        assert!(matches!(
            LearnedRanker::from_json(&bad_child),
            Err(RankerModelError::Tree(0))
        ));
        let other = model("[]").replace("\"fused\"", "\"something_else\"");
        assert!(matches!(
            LearnedRanker::from_json(&other),
            Err(RankerModelError::Features(_))
        ));
    }

    #[test]
    fn the_shipped_model_loads() {
        let m = LearnedRanker::embedded().unwrap();
        assert!(!m.trees.is_empty());
    }
}
