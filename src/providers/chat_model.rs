//! `ChatModel`: a chat completion behind a small trait (the bundled agent extends it to other
//! providers), and `OpenAiChat`, any OpenAI-compatible `POST {base}/chat/completions`.
//!
//! Configured from the environment: `OPENAI_BASE_URL` (default `https://api.openai.com/v1`)
//! and `OPENAI_API_KEY`; either one being set means a model is configured. The model name is
//! `KEN_MODEL` (default `gpt-4o-mini`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ProviderError;
use super::http_client::{CallLimits, HttpClient};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: "system".into(),
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: "user".into(),
            content: content.into(),
        }
    }
}

pub trait ChatModel: Send + Sync {
    /// `provider:model`, for reports.
    fn id(&self) -> String;
    /// The assistant's reply to `messages`.
    fn complete(&self, messages: &[ChatMessage]) -> Result<String, ProviderError>;
}

pub struct OpenAiChat {
    endpoint: String,
    key: Option<String>,
    model: String,
    http: HttpClient,
}

#[derive(Deserialize)]
struct Completion {
    choices: Vec<Choice>,
}

#[derive(Deserialize)]
struct Choice {
    message: ChatMessage,
}

const DEFAULT_BASE: &str = "https://api.openai.com/v1";
const DEFAULT_MODEL: &str = "gpt-4o-mini";

impl OpenAiChat {
    pub fn new(base_url: &str, key: Option<String>, model: &str) -> OpenAiChat {
        let base = base_url.trim_end_matches('/');
        let endpoint = match base.ends_with("/chat/completions") {
            true => base.to_string(),
            false => format!("{base}/chat/completions"),
        };
        OpenAiChat {
            endpoint,
            key,
            model: model.to_string(),
            http: HttpClient::new(CallLimits {
                total: Duration::from_secs(300),
                ..CallLimits::model()
            }),
        }
    }

    /// The model the environment configures, if any.
    pub fn from_env() -> Option<OpenAiChat> {
        let base = std::env::var("OPENAI_BASE_URL").ok().filter(|s| !s.is_empty());
        let key = std::env::var("OPENAI_API_KEY").ok().filter(|s| !s.is_empty());
        if base.is_none() && key.is_none() {
            return None;
        }
        let model = std::env::var("KEN_MODEL").unwrap_or_else(|_| DEFAULT_MODEL.to_string());
        Some(OpenAiChat::new(
            base.as_deref().unwrap_or(DEFAULT_BASE),
            key,
            &model,
        ))
    }
}

impl ChatModel for OpenAiChat {
    fn id(&self) -> String {
        format!("openai:{}", self.model)
    }

    fn complete(&self, messages: &[ChatMessage]) -> Result<String, ProviderError> {
        let body = serde_json::json!({ "model": self.model, "messages": messages, "temperature": 0 });
        let text = self.http.post_json(&self.endpoint, self.key.as_deref(), &body)?;
        let c: Completion = serde_json::from_str(&text).map_err(|e| ProviderError::Response {
            url: self.endpoint.clone(),
            detail: e.to_string(),
        })?;
        c.choices
            .into_iter()
            .next()
            .map(|c| c.message.content)
            .ok_or_else(|| ProviderError::Response {
                url: self.endpoint.clone(),
                detail: "no choices in the completion".into(),
            })
    }
}
