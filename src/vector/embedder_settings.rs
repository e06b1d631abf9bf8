//! `EmbedderSettings`: how to make an embedding model again, as an index stores it (no
//! secrets: a key is named by its environment variable). Pure data; `providers` connects.

use serde::{Deserialize, Serialize};

/// The model a semantic part was built with, when it is not the built-in one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum StoredEmbedder {
    /// A model that ships with ken, by its folder name (`{"local": "all-MiniLM-L6-v2"}`).
    Local { local: String },
    /// A served model.
    Served(EmbedderSettings),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EmbedApi {
    /// `POST {url}/embeddings` with `{"model", "input": [..]}`.
    Openai,
    /// `POST {url}/api/embed` with `{"model", "input": [..]}`.
    Ollama,
}

/// How to reach a served embedding model. Stored in the index (no secrets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EmbedderSettings {
    pub api: EmbedApi,
    /// Base URL, e.g. `https://api.openai.com/v1` or `http://localhost:11434`.
    pub url: String,
    pub model: String,
    /// Environment variable holding the API key (sent as a bearer token).
    #[serde(default)]
    pub key_env: Option<String>,
    /// Texts per request.
    #[serde(default = "default_batch")]
    pub batch: usize,
    /// Seconds a request may wait in silence (the read timeout; not retried); a request,
    /// retries included, gets four times this, and never more than the run has left.
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
}

fn default_batch() -> usize {
    64
}

fn default_timeout() -> u64 {
    120
}

impl EmbedderSettings {
    pub fn new(api: EmbedApi, url: &str, model: &str) -> EmbedderSettings {
        EmbedderSettings {
            api,
            url: url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            key_env: None,
            batch: default_batch(),
            timeout_secs: default_timeout(),
        }
    }

    /// The endpoint requests go to.
    pub fn endpoint(&self) -> String {
        let base = self.url.trim_end_matches('/');
        match self.api {
            EmbedApi::Openai if base.ends_with("/embeddings") => base.to_string(),
            EmbedApi::Openai => format!("{base}/embeddings"),
            EmbedApi::Ollama if base.ends_with("/api/embed") => base.to_string(),
            EmbedApi::Ollama => format!("{base}/api/embed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_settings_read_back_as_the_same_variant() {
        let local: StoredEmbedder = serde_json::from_str(r#"{"local":"all-MiniLM-L6-v2"}"#).unwrap();
        assert_eq!(
            local,
            StoredEmbedder::Local {
                local: "all-MiniLM-L6-v2".into()
            }
        );
        let served = StoredEmbedder::Served(EmbedderSettings::new(
            EmbedApi::Ollama,
            "http://127.0.0.1:11434/",
            "nomic",
        ));
        let text = serde_json::to_string(&served).unwrap();
        assert!(text.contains(r#""api":"ollama""#), "{text}");
        assert_eq!(serde_json::from_str::<StoredEmbedder>(&text).unwrap(), served);
    }
}
