//! Model access: chat and embedding providers behind traits (OpenAI-compatible chat, the
//! OpenAI-compatible and Ollama embedding APIs, the local MiniLM weights), with one retrying
//! HTTP client. `embedder_from_settings` makes the semantic index's model again from the
//! settings stored in the index, so later builds and queries use the model a build chose.
//!
//! Invariants:
//! - This is the lowest layer that touches the network; layers below receive what it makes
//!   through traits (`vector::Embedder`).
//! - Secrets are read from environment variables named in settings, never stored.
//! - Nothing is sent to a remote endpoint unless it was asked for by name: a missing key or
//!   endpoint is refused before the first request, naming the variable to set.
//! - Every request is bounded (connect and read timeouts, a limit on the whole call, the
//!   run's deadline) and cancellable (`RunBounds`): a call in flight ends within a fraction
//!   of a second of Ctrl-C or the deadline, with `ProviderError::Cancelled` or `Deadline`.

mod anthropic_messages;
mod chat_model;
mod http_client;
mod http_embedder;
mod loopback;
mod openai_responses;
mod openai_tools;
mod provider_error;
mod run_bounds;
mod tool_model;

pub use anthropic_messages::AnthropicMessages;
pub use chat_model::{ChatMessage, ChatModel, OpenAiChat};
pub use http_embedder::{EmbedApi, EmbedderSettings, HttpEmbedder};
pub use loopback::is_loopback_url;
pub use openai_responses::OpenAiResponses;
pub use openai_tools::OpenAiTools;
pub use provider_error::ProviderError;
pub use run_bounds::{Deadline, RunBounds};
pub use tool_model::{Message, ModelReply, Role, ToolCall, ToolModel, ToolSpec, Usage};

use std::sync::Arc;

use crate::vector::{Embedder, StoredEmbedder};

/// The local transformer model's folder name under [`models_dir`].
pub const MINILM_DIR: &str = "all-MiniLM-L6-v2";

/// Where fetched model weights live: `$KEN_MODELS_DIR`, else `~/.cache/kenning/models`.
pub fn models_dir() -> std::path::PathBuf {
    if let Some(d) = std::env::var_os("KEN_MODELS_DIR") {
        return d.into();
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache")))
        .unwrap_or_else(|| std::path::PathBuf::from(".cache"));
    cache.join("kenning").join("models")
}

/// all-MiniLM-L6-v2 from the weights `models/all-MiniLM-L6-v2/fetch.sh` put in [`models_dir`].
#[cfg(feature = "minilm")]
pub fn minilm() -> Result<Arc<dyn Embedder>, ProviderError> {
    let dir = models_dir().join(MINILM_DIR);
    let read = |name: &str| {
        let p = dir.join(name);
        std::fs::read(&p).map_err(|e| {
            ProviderError::Settings(format!(
                "cannot read {}: {e}; fetch the weights once with models/all-MiniLM-L6-v2/fetch.sh",
                p.display()
            ))
        })
    };
    let (config, weights, tokenizer) = (
        read("config.json")?,
        read("model.safetensors")?,
        read("tokenizer.json")?,
    );
    let e = crate::vector::MiniLmEmbedder::from_bytes(&config, weights, &tokenizer)
        .map_err(|e| ProviderError::Settings(format!("{}: {e}", dir.display())))?;
    Ok(Arc::new(e))
}

#[cfg(not(feature = "minilm"))]
pub fn minilm() -> Result<Arc<dyn Embedder>, ProviderError> {
    Err(ProviderError::Settings(
        "this ken was built without the local transformer model; build it with \
         `cargo build --release --features minilm`"
            .into(),
    ))
}

/// The embedder described by stored settings.
pub fn embedder_from_settings(settings: &StoredEmbedder) -> Result<Arc<dyn Embedder>, ProviderError> {
    match settings {
        StoredEmbedder::Local { local } if local == MINILM_DIR => minilm(),
        StoredEmbedder::Local { local } => Err(ProviderError::Settings(format!(
            "unknown local model {local} in the index settings"
        ))),
        StoredEmbedder::Served(s) => Ok(Arc::new(HttpEmbedder::connect(s.clone())?)),
    }
}
