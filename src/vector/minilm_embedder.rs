//! `MiniLmEmbedder`: all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0), a 6-layer BERT
//! run on the CPU with candle: masked mean pooling, L2-normalized, 384 dimensions.
//!
//! About 40x slower than the built-in static model, so it reads only the start of each chunk:
//! the first [`MINILM_TOKENS`] tokens, which hold the chunk's header (path, container,
//! signature) and its doc comment. Texts are sorted by length and run in small batches so
//! padding costs little. The weights are given as bytes (fetched once by
//! `models/all-MiniLM-L6-v2/fetch.sh`; this layer reads no files).

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config, DTYPE};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use super::{Embedder, VectorError};

/// Tokens read per text (special tokens included).
pub const MINILM_TOKENS: usize = 128;
pub const MINILM_MODEL: &str = "all-MiniLM-L6-v2";
/// Texts per forward pass.
const BATCH: usize = 16;

pub struct MiniLmEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    dim: usize,
}

fn err(detail: impl std::fmt::Display) -> VectorError {
    VectorError::Model {
        model: MINILM_MODEL.to_string(),
        detail: detail.to_string(),
    }
}

impl MiniLmEmbedder {
    /// From the checkpoint's `config.json`, `model.safetensors` and `tokenizer.json`.
    pub fn from_bytes(
        config: &[u8],
        weights: Vec<u8>,
        tokenizer: &[u8],
    ) -> Result<MiniLmEmbedder, VectorError> {
        let config: Config = serde_json::from_slice(config).map_err(|e| err(format!("config.json: {e}")))?;
        let vb = VarBuilder::from_buffered_safetensors(weights, DTYPE, &Device::Cpu)
            .map_err(|e| err(format!("model.safetensors: {e}")))?;
        let model = BertModel::load(vb, &config).map_err(|e| err(format!("model.safetensors: {e}")))?;
        let mut tokenizer =
            Tokenizer::from_bytes(tokenizer).map_err(|e| err(format!("tokenizer.json: {e}")))?;
        // The file ships fixed padding and truncation at 128: batch-longest padding instead.
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MINILM_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| err(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..Default::default()
        }));
        Ok(MiniLmEmbedder {
            model,
            tokenizer,
            dim: 384,
        })
    }

    fn forward(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, VectorError> {
        let enc = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| err(format!("tokenizing: {e}")))?;
        let (b, t) = (enc.len(), enc.first().map_or(0, |e| e.get_ids().len()));
        if b == 0 || t == 0 {
            return Ok(vec![vec![0.0; self.dim]; b]);
        }
        let ids: Vec<u32> = enc.iter().flat_map(|e| e.get_ids().iter().copied()).collect();
        let mask: Vec<u32> = enc
            .iter()
            .flat_map(|e| e.get_attention_mask().iter().copied())
            .collect();
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, (b, t), &Device::Cpu)?;
            let mask = Tensor::from_vec(mask, (b, t), &Device::Cpu)?;
            let hidden = self.model.forward(&ids, &ids.zeros_like()?, Some(&mask))?;
            let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let mean = hidden.broadcast_mul(&m)?.sum(1)?.broadcast_div(&m.sum(1)?)?;
            let unit = mean.broadcast_div(&mean.sqr()?.sum_keepdim(1)?.sqrt()?)?;
            unit.to_vec2::<f32>()
        };
        run().map_err(err)
    }
}

impl Embedder for MiniLmEmbedder {
    fn id(&self) -> String {
        format!("{MINILM_MODEL}@{MINILM_TOKENS}")
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, VectorError> {
        // Similar lengths together: a batch pads to its longest text.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for group in order.chunks(BATCH) {
            let batch: Vec<&str> = group.iter().map(|&i| texts[i]).collect();
            for (&i, v) in group.iter().zip(self.forward(&batch)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn settings(&self) -> Option<super::StoredEmbedder> {
        Some(super::StoredEmbedder::Local {
            local: MINILM_MODEL.to_string(),
        })
    }
}
