//! The vector part's on-disk format: every indexed file cut into chunks, each embedded with
//! the built-in model (IDF-weighted) and stored as int8, plus the HNSW graph over them.
//!
//! `vectors.bin` holds the model id, the IDF table, per file its chunks (lines, owning
//! definition, content hash, point id) and the list of row files; the vectors themselves are
//! in `rows-<first id>-<digest>.i8` files beside it, `dim` int8 values a point in id order. A row file is
//! never written again: an update hard-links the previous generation's row files and writes
//! one with only its new points (past 8 files, the small ones are concatenated into one;
//! ids never move), so a one-file change writes kilobytes, not the 50 MB of every vector.
//! Beside each row file, `rows-<first id>-<digest>.b1` holds one bit a dimension a point: the
//! sign of the unit vector less the part's `center` (the mean unit vector when the rows were
//! first written). A query scores every point by those bits against its float vector
//! (a 32-byte read a point, not 256) and re-scores the best few thousand on their int8 rows:
//! [`crate::vector::BinaryCodes`].
//! `vectors/` holds the HNSW graph where one is kept. The build is
//! [`super::vector_build::VectorBuild`], the query side [`super::semantic_index::SemanticIndex`].
//!
//! The field order of these types is their postcard encoding: never reorder or rename them
//! without a new [`VECTOR_VERSION`].

use serde::{Deserialize, Serialize};

use super::IndexError;
use crate::vector::VectorError;

pub const VECTORS_FILE: &str = "vectors.bin";
pub const VECTORS_DIR: &str = "vectors";
/// 3: vectors quantized each on its own scale. 4: the vectors in row files of their own.
/// 5: a file of sign bits beside each row file, and the center they are taken about.
pub const VECTOR_VERSION: u32 = 5;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChunkMeta {
    pub start_line: u32,
    pub end_line: u32,
    /// Index of the owning definition in the file's symbols.
    pub symbol: Option<u32>,
    pub hash: [u8; 16],
    /// The chunk's point in the graph and its vector's position in `VectorStore::vectors`.
    pub id: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileChunks {
    pub path: String,
    /// The file's content hash when chunked.
    pub content: [u8; 32],
    pub chunks: Vec<ChunkMeta>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VectorStore {
    pub version: u32,
    pub model: String,
    pub dim: u32,
    /// Token weights the vectors were made with (a corpus IDF).
    pub idf: Vec<f32>,
    pub files: Vec<FileChunks>,
    /// The files holding every point of the graph, in id order (dead ones included): the
    /// first holds ids `0..points`, the next the ids after, each `dim` int8 values a point.
    pub rows: Vec<RowFile>,
    /// Ids of deleted chunks, still in the graph until the next rebuild.
    pub dead: Vec<u32>,
    /// The point the sign bits are taken about (`dim` values): the mean of the unit vectors
    /// when the part was last rebuilt; the points an update appends keep it.
    pub center: Vec<f32>,
}

/// One file of vector rows in a generation's folder, named by its first id and content. It is never
/// written again: the next generation hard-links it and appends its new points in a file of
/// its own, so an update writes the rows it added, not every row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RowFile {
    pub file: String,
    pub points: u32,
    pub blake3: String,
    /// The blake3 of the sign bits' file ([`RowFile::codes_file`]).
    pub codes: String,
}

impl RowFile {
    /// The file of the rows' sign bits: the row file's name, `.b1` for `.i8`.
    pub fn codes_file(&self) -> String {
        let stem = self.file.strip_suffix(".i8").unwrap_or(&self.file);
        format!("{stem}.b1")
    }

    /// The rows' file and their codes' file.
    pub fn files(&self) -> [String; 2] {
        [self.file.clone(), self.codes_file()]
    }
}

impl VectorStore {
    pub fn points(&self) -> usize {
        self.rows.iter().map(|r| r.points as usize).sum()
    }

    /// (file index, chunk index) of each live id, indexed by id (ids are dense: one per
    /// point); `None` for a dead point.
    pub fn locate(&self) -> Vec<Option<(u32, u32)>> {
        let mut at = vec![None; self.points()];
        for (fi, f) in self.files.iter().enumerate() {
            for (ci, c) in f.chunks.iter().enumerate() {
                if let Some(slot) = at.get_mut(c.id as usize) {
                    *slot = Some((fi as u32, ci as u32));
                }
            }
        }
        at
    }
}

/// A model or graph error as the index reports it.
pub(super) fn model_error(e: VectorError) -> IndexError {
    IndexError::Vector(e.to_string())
}
