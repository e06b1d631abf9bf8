//! Errors of the vector layer. Messages are lowercase and name what they concern.

#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error("embedding model {model}: {detail}")]
    Model { model: String, detail: String },
    #[error("tokenizing for {model}: {detail}")]
    Tokenizer { model: String, detail: String },
    #[error("vector index: {0}")]
    Index(String),
}
