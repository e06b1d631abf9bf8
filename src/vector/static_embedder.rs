//! `StaticEmbedder`: a Model2Vec static model — one vector per token, averaged and
//! normalized — compiled into the binary (potion-base-8M, int8 rows with per-row scales; see
//! `models/potion-base-8M-int8/`). Tokens are weighted by a corpus IDF when one is given, which
//! keeps common words (`self`, `return`, `the`) from dominating a code chunk's vector.
//!
//! Identifiers are split at case changes before tokenizing (`registerHook` reads as `register
//! hook`); the BERT pre-tokenizer already splits at `_` and punctuation.

use safetensors::SafeTensors;
use tokenizers::Tokenizer;

use super::{Embedder, VectorError};

const MODEL: &[u8] = include_bytes!("../../models/potion-base-8M-int8/model.safetensors");
const TOKENIZER: &[u8] = include_bytes!("../../models/potion-base-8M-int8/tokenizer.json");
pub const BUILTIN_MODEL_ID: &str = "potion-base-8M-int8";
/// Tokens read per text; a chunk is a few hundred at most, a pasted issue may be more.
const MAX_TOKENS: usize = 4096;

pub struct StaticEmbedder {
    id: String,
    tokenizer: Tokenizer,
    rows: Vec<i8>,
    scales: Vec<f32>,
    dim: usize,
    /// Per-token weights (corpus IDF); `None` weighs every token 1.
    weights: Option<Vec<f32>>,
    unk: Option<u32>,
}

impl StaticEmbedder {
    /// The model compiled into the binary.
    pub fn builtin() -> Result<StaticEmbedder, VectorError> {
        Self::from_bytes(BUILTIN_MODEL_ID, MODEL, TOKENIZER)
    }

    pub fn from_bytes(id: &str, model: &[u8], tokenizer: &[u8]) -> Result<StaticEmbedder, VectorError> {
        let err = |detail: String| VectorError::Model {
            model: id.to_string(),
            detail,
        };
        let tokenizer = Tokenizer::from_bytes(tokenizer).map_err(|e| err(format!("tokenizer.json: {e}")))?;
        let st = SafeTensors::deserialize(model).map_err(|e| err(e.to_string()))?;
        let emb = st.tensor("embeddings").map_err(|e| err(e.to_string()))?;
        let shape = emb.shape().to_vec();
        let (n, dim) = match shape.as_slice() {
            [n, d] => (*n, *d),
            _ => return Err(err(format!("embeddings have shape {shape:?}"))),
        };
        let rows: Vec<i8> = match emb.dtype() {
            safetensors::Dtype::I8 => emb.data().iter().map(|b| *b as i8).collect(),
            other => return Err(err(format!("embeddings are {other:?}, expected I8"))),
        };
        let scales: Vec<f32> = match st.tensor("weights") {
            Ok(w) if w.dtype() == safetensors::Dtype::F32 => w
                .data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            _ => return Err(err("no f32 `weights` (row scales) tensor".into())),
        };
        if rows.len() != n * dim || scales.len() != n {
            return Err(err(format!(
                "{} values and {} scales for {n} x {dim}",
                rows.len(),
                scales.len()
            )));
        }
        let unk = tokenizer.token_to_id("[UNK]");
        Ok(StaticEmbedder {
            id: id.to_string(),
            tokenizer,
            rows,
            scales,
            dim,
            weights: None,
            unk,
        })
    }

    /// Weighs tokens by `weights[token id]` (a corpus IDF).
    pub fn with_weights(mut self, weights: Vec<f32>) -> StaticEmbedder {
        self.weights = (weights.len() == self.scales.len()).then_some(weights);
        self
    }

    pub fn vocab_size(&self) -> usize {
        self.scales.len()
    }

    /// The token ids of a text, as embedding reads them (unknown tokens dropped).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, VectorError> {
        let prepared = split_case(text);
        let enc = self
            .tokenizer
            .encode(prepared.as_str(), false)
            .map_err(|e| VectorError::Tokenizer {
                model: self.id.clone(),
                detail: e.to_string(),
            })?;
        let mut ids: Vec<u32> = enc
            .get_ids()
            .iter()
            .copied()
            .filter(|&i| Some(i) != self.unk)
            .collect();
        ids.truncate(MAX_TOKENS);
        Ok(ids)
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>, VectorError> {
        let ids = self.token_ids(text)?;
        Ok(self.embed_ids(&ids))
    }

    /// The vector of already tokenized text (see [`StaticEmbedder::token_ids`]).
    pub fn embed_ids(&self, ids: &[u32]) -> Vec<f32> {
        let ids = ids.iter().copied();
        let mut acc = vec![0f32; self.dim];
        for id in ids {
            let i = id as usize;
            let Some(&scale) = self.scales.get(i) else {
                continue;
            };
            let w = self
                .weights
                .as_ref()
                .and_then(|w| w.get(i))
                .copied()
                .unwrap_or(1.0)
                * scale;
            let row = &self.rows[i * self.dim..(i + 1) * self.dim];
            for (a, &q) in acc.iter_mut().zip(row) {
                *a += w * f32::from(q);
            }
        }
        let norm = acc.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            acc.iter_mut().for_each(|x| *x /= norm);
        }
        acc
    }
}

/// Token weights from document frequencies over `docs` chunks: a smoothed IDF,
/// `ln((1 + docs) / (1 + df)) + 1`, so a token in every chunk still counts a little.
pub fn idf_weights(df: &[u32], docs: u32) -> Vec<f32> {
    let n = docs as f32;
    df.iter()
        .map(|&d| ((1.0 + n) / (1.0 + d as f32)).ln() + 1.0)
        .collect()
}

impl Embedder for StaticEmbedder {
    fn id(&self) -> String {
        match self.weights {
            Some(_) => format!("{}+idf", self.id),
            None => self.id.clone(),
        }
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, VectorError> {
        texts.iter().map(|t| self.embed_one(t)).collect()
    }
}

/// `registerHook` -> `register Hook`, `HTTPServer` -> `HTTP Server`: word pieces of code
/// identifiers become words for the tokenizer.
fn split_case(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(p) = prev {
            let lower_upper = p.is_lowercase() && c.is_uppercase();
            let acronym_end =
                p.is_uppercase() && c.is_uppercase() && chars.peek().is_some_and(|n| n.is_lowercase());
            if lower_upper || acronym_end {
                out.push(' ');
            }
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn builtin_model_loads_and_embeds_unit_vectors() {
        let m = StaticEmbedder::builtin().unwrap();
        assert_eq!(m.dim(), 256);
        assert_eq!(m.vocab_size(), 29528);
        let v = m.embed(&["parse the configuration file"]).unwrap();
        let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
    }

    #[test]
    fn related_texts_are_closer_than_unrelated_ones() {
        let m = StaticEmbedder::builtin().unwrap();
        let v = m
            .embed(&[
                "fn read_config_file(path: &Path) -> Config",
                "load the configuration from disk",
                "render a triangle with the GPU shader",
            ])
            .unwrap();
        assert!(
            cos(&v[0], &v[1]) > cos(&v[0], &v[2]),
            "{} vs {}",
            cos(&v[0], &v[1]),
            cos(&v[0], &v[2])
        );
    }

    #[test]
    fn identifiers_are_split_at_case_changes() {
        assert_eq!(
            split_case("registerHook HTTPServer x"),
            "register Hook HTTP Server x"
        );
        let m = StaticEmbedder::builtin().unwrap();
        assert_eq!(
            m.token_ids("registerHook").unwrap(),
            m.token_ids("register_hook")
                .unwrap()
                .into_iter()
                .filter(|&t| Some(t) != m.tokenizer.token_to_id("_"))
                .collect::<Vec<_>>()
        );
    }
}
