//! `Embedder`: text in, unit vectors out. Implementations: the embedded static model
//! ([`super::StaticEmbedder`]); others plug in behind the same trait.

use super::VectorError;

pub trait Embedder: Send + Sync {
    /// Identity stored in the index: a different id means the vectors are not comparable and
    /// everything is embedded again.
    fn id(&self) -> String;
    fn dim(&self) -> usize;
    /// One L2-normalized vector per text, in order.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, VectorError>;
    /// What a later process needs to make this model again (stored in the index; no
    /// secrets: a key is named by its environment variable). `None` for the built-in model.
    fn settings(&self) -> Option<super::StoredEmbedder> {
        None
    }
}
