//! Model providers. `embedder_from_settings` makes the semantic index's model again from the
//! settings stored in the index, so later builds and queries use the model a build chose.

mod http_embedder;
mod provider_error;

pub use http_embedder::{EmbedApi, EmbedderSettings, HttpEmbedder};
pub use provider_error::ProviderError;

use std::sync::Arc;

use crate::vector::Embedder;

/// The embedder described by stored settings (`None`: the built-in model).
pub fn embedder_from_settings(
    settings: &serde_json::Value,
) -> Result<Option<Arc<dyn Embedder>>, ProviderError> {
    if settings.is_null() {
        return Ok(None);
    }
    let s: EmbedderSettings = serde_json::from_value(settings.clone())
        .map_err(|e| ProviderError::Settings(format!("stored embedder settings: {e}")))?;
    Ok(Some(Arc::new(HttpEmbedder::connect(s)?)))
}
