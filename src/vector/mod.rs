//! Semantic search: code cut into chunks along the syntax tree, embedded by a model that ships
//! inside the binary (no network, no setup), searched through an approximate nearest-neighbour
//! index.
//!
//! Invariants:
//! - Nothing here touches the network or the disk; `index` stores what this layer produces.
//! - Vectors are L2-normalized; scores are cosine similarities.

mod binary_codes;
mod chunker;
mod embedder;
mod embedder_settings;
#[cfg(feature = "minilm")]
mod minilm_embedder;
mod packed_rows;
mod static_embedder;
mod vector_error;
mod vector_index;

pub use binary_codes::{
    CenterSum, CodeBlock, CodeQuery, ReadRows, center_of, code_len, encode_codes, rows_in, two_stage_top_k,
};
pub use chunker::{Chunk, ChunkConfig, Chunker};
pub use embedder::Embedder;
pub use embedder_settings::{EmbedApi, EmbedderSettings, StoredEmbedder};
#[cfg(feature = "minilm")]
pub use minilm_embedder::{MINILM_MODEL, MINILM_TOKENS, MiniLmEmbedder};
pub use packed_rows::{quantize, row_len};
pub use static_embedder::{BUILTIN_MODEL_ID, StaticEmbedder, idf_weights};
pub use vector_error::VectorError;
pub use vector_index::{DistPacked, IntQuery, VectorIndex, exact_top_k, exact_top_k_in, score};
