//! `HttpEmbedder`: embeddings from a served model, over the OpenAI-compatible
//! `POST {url}/embeddings` (OpenAI, vLLM, llama.cpp, LM Studio, TEI...) or Ollama's
//! `POST {url}/api/embed`.
//!
//! Texts go in batches (`batch` per request, a few requests in flight), each request retried
//! and bounded as [`super::http_client::HttpClient`] does. The key, if any, comes from the environment
//! variable the settings name; a named variable that is unset or empty is refused before any
//! request. The dimension is learned from one probe request when
//! connecting, which also checks the URL, model and key before a build starts.

use std::time::Duration;

use rayon::prelude::*;
use serde::Deserialize;

use super::ProviderError;
use super::http_client::{CallLimits, HttpClient, truncate};
pub use crate::vector::{EmbedApi, EmbedderSettings};
use crate::vector::{Embedder, StoredEmbedder, VectorError};

/// Longest text sent, in characters (code is about 3-4 characters a token; this keeps a chunk
/// under the usual 8k-token limit).
const MAX_CHARS: usize = 8000;
/// Requests in flight at once.
const IN_FLIGHT: usize = 4;

pub struct HttpEmbedder {
    settings: EmbedderSettings,
    endpoint: String,
    key: Option<String>,
    dim: usize,
    http: HttpClient,
}

#[derive(Deserialize)]
struct OpenaiResponse {
    data: Vec<OpenaiItem>,
}

#[derive(Deserialize)]
struct OpenaiItem {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

#[derive(Deserialize)]
struct OllamaResponse {
    embeddings: Vec<Vec<f32>>,
}

impl HttpEmbedder {
    /// Reads the key and sends one probe request to learn the dimension.
    pub fn connect(settings: EmbedderSettings) -> Result<HttpEmbedder, ProviderError> {
        if settings.model.is_empty() {
            return Err(ProviderError::Settings(
                "an embedding provider needs --embed-model".into(),
            ));
        }
        let key = match &settings.key_env {
            // An empty value is refused like a missing one: sending `Bearer ` would only buy
            // a round of retries against a service that will not answer.
            Some(var) => match std::env::var(var) {
                Ok(k) if !k.is_empty() => Some(k),
                _ => return Err(ProviderError::MissingKey(var.clone())),
            },
            None => None,
        };
        let wait = Duration::from_secs(settings.timeout_secs.max(1));
        let http = HttpClient::new(CallLimits {
            what: "embedding request",
            connect: wait.min(Duration::from_secs(20)),
            read: wait,
            total: wait * 4,
        });
        let mut e = HttpEmbedder {
            endpoint: settings.endpoint(),
            settings,
            key,
            dim: 0,
            http,
        };
        let probe = e.request(&["fn probe() {}"])?;
        e.dim = probe.first().map_or(0, Vec::len);
        if e.dim == 0 {
            return Err(ProviderError::Response {
                url: e.endpoint.clone(),
                detail: "the probe request returned no vector".into(),
            });
        }
        Ok(e)
    }

    pub fn settings(&self) -> &EmbedderSettings {
        &self.settings
    }

    /// One batch, retried.
    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, ProviderError> {
        let input: Vec<&str> = texts.iter().map(|t| truncate(t, MAX_CHARS)).collect();
        let body = serde_json::json!({ "model": self.settings.model, "input": input });
        let text = self.http.post_json(&self.endpoint, self.key.as_deref(), &body)?;
        self.parse(&text, texts.len())
            .map_err(|detail| ProviderError::Response {
                url: self.endpoint.clone(),
                detail,
            })
    }

    /// The vectors of a response, in input order, L2-normalized.
    fn parse(&self, text: &str, n: usize) -> Result<Vec<Vec<f32>>, String> {
        let mut vectors = match self.settings.api {
            EmbedApi::Openai => {
                let r: OpenaiResponse = serde_json::from_str(text).map_err(|e| e.to_string())?;
                let mut items: Vec<(usize, Vec<f32>)> = r
                    .data
                    .into_iter()
                    .enumerate()
                    .map(|(i, d)| (d.index.unwrap_or(i), d.embedding))
                    .collect();
                items.sort_by_key(|(i, _)| *i);
                items.into_iter().map(|(_, v)| v).collect::<Vec<_>>()
            }
            EmbedApi::Ollama => {
                let r: OllamaResponse = serde_json::from_str(text).map_err(|e| e.to_string())?;
                r.embeddings
            }
        };
        if vectors.len() != n {
            return Err(format!("{} vectors for {n} texts", vectors.len()));
        }
        let dim = vectors.first().map_or(0, Vec::len);
        if vectors
            .iter()
            .any(|v| v.len() != dim || (self.dim != 0 && v.len() != self.dim))
        {
            return Err(format!(
                "vectors of differing dimensions (expected {})",
                self.dim.max(dim)
            ));
        }
        for v in &mut vectors {
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 && norm.is_finite() {
                v.iter_mut().for_each(|x| *x /= norm);
            }
        }
        Ok(vectors)
    }
}

impl Embedder for HttpEmbedder {
    /// The model, not the host: the same model served elsewhere gives the same vectors.
    fn id(&self) -> String {
        let api = match self.settings.api {
            EmbedApi::Openai => "openai",
            EmbedApi::Ollama => "ollama",
        };
        format!("{api}:{}", self.settings.model)
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, VectorError> {
        let batches: Vec<&[&str]> = texts.chunks(self.settings.batch.max(1)).collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(IN_FLIGHT.min(batches.len()).max(1))
            .build()
            .map_err(|e| VectorError::Model {
                model: self.id(),
                detail: e.to_string(),
            })?;
        let results: Vec<Result<Vec<Vec<f32>>, ProviderError>> =
            pool.install(|| batches.par_iter().map(|b| self.request(b)).collect());
        let mut out = Vec::with_capacity(texts.len());
        for r in results {
            out.extend(r.map_err(|e| VectorError::Model {
                model: self.id(),
                detail: e.to_string(),
            })?);
        }
        Ok(out)
    }

    fn settings(&self) -> Option<StoredEmbedder> {
        Some(StoredEmbedder::Served(self.settings.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_follow_the_api() {
        let s = EmbedderSettings::new(EmbedApi::Openai, "http://h:1/v1/", "m");
        assert_eq!(s.endpoint(), "http://h:1/v1/embeddings");
        let s = EmbedderSettings::new(EmbedApi::Openai, "http://h:1/v1/embeddings", "m");
        assert_eq!(s.endpoint(), "http://h:1/v1/embeddings");
        let s = EmbedderSettings::new(EmbedApi::Ollama, "http://localhost:11434", "m");
        assert_eq!(s.endpoint(), "http://localhost:11434/api/embed");
    }

    #[test]
    fn truncation_keeps_characters_whole() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("héllo", 3), "hé");
        assert_eq!(truncate("abc", 10), "abc");
    }
}
