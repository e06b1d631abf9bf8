//! The vector part's on-disk format: every indexed file cut into chunks, each embedded with
//! the built-in model (IDF-weighted) and stored as packed rows, four bits a dimension, plus
//! the HNSW graph over them.
//!
//! `vectors.bin` holds the model id, the IDF table, per file its chunks (lines, owning
//! definition, content hash, point id) and the list of row files; the vectors themselves are
//! in `rows-<first id>-<digest>.q4` files beside it, a packed row a point in id order
//! ([`crate::vector::quantize`]: rotated, then four bits a dimension). A row file is
//! never written again: an update hard-links the previous generation's row files and writes
//! one with only its new points (past 8 files, the small ones are concatenated into one;
//! ids never move), so a one-file change writes kilobytes, not the 25 MB of every vector.
//! Beside each row file, `rows-<first id>-<digest>.b1` holds one bit a dimension a point: the
//! sign of the unit (rotated) vector less the part's `center` (the mean unit vector when the
//! rows were first written). A query scores every point by those bits against its float
//! vector (a 32-byte read a point, not 128) and re-scores the best few thousand on their
//! packed rows: [`crate::vector::two_stage_top_k`].
//! `vectors/` holds the HNSW graph where one is kept. The build is
//! [`super::vector_build::VectorBuild`], the query side [`super::semantic_index::SemanticIndex`].
//!
//! `vectors.bin` is postcard, laid out so that a query reads it in place ([`ChunkTable`]): the
//! header (model, IDF, row files, dead ids, center), then per file its path, content hash and
//! chunks (one byte string, decoded when a hit lands in the file), then each point's file
//! (u32 LE, `u32::MAX` for a dead point). A build decodes it whole ([`VectorStore::decode`]).
//! The field order of these types is their encoding: never reorder or rename them without a
//! new [`VECTOR_VERSION`].

use serde::{Deserialize, Serialize};

use super::IndexError;
use crate::graph::StoredBytes;
use crate::util::ByteString;
use crate::vector::VectorError;

pub const VECTORS_FILE: &str = "vectors.bin";
pub const VECTORS_DIR: &str = "vectors";
/// 3: vectors quantized each on its own scale. 4: the vectors in row files of their own.
/// 5: a file of sign bits beside each row file, and the center they are taken about.
/// 6: each file's chunks one byte string, and each point's file, for reads in place.
/// 7: rows rotated and packed four bits a dimension (`crate::vector::quantize`), in `.q4`
/// files.
pub const VECTOR_VERSION: u32 = 7;

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
    /// first holds ids `0..points`, the next the ids after, each a packed row a point.
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
    /// The row file of `points` points from id `start`, whose rows have the blake3 `rows`
    /// (hex), with their sign bits `codes`: named by its first id and content, so names never
    /// repeat within a part and a file of a name is always the same bytes.
    pub fn new(start: u32, points: u32, rows: String, codes: &[u8]) -> RowFile {
        RowFile {
            file: format!("rows-{start:08}-{}.q4", &rows[..16.min(rows.len())]),
            points,
            blake3: rows,
            codes: blake3::Hasher::new()
                .update_rayon(codes)
                .finalize()
                .to_hex()
                .to_string(),
        }
    }

    /// The file of the rows' sign bits: the row file's name, `.b1` for `.q4` (`.i8` before
    /// `VECTOR_VERSION` 7).
    pub fn codes_file(&self) -> String {
        let stem = self
            .file
            .strip_suffix(".q4")
            .or_else(|| self.file.strip_suffix(".i8"))
            .unwrap_or(&self.file);
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

    /// The stored form (`vectors.bin`), each file's chunks encoded on every core.
    pub fn encode(&self) -> Result<Vec<u8>, postcard::Error> {
        use rayon::prelude::*;
        let chunks: Vec<Vec<u8>> = self
            .files
            .par_iter()
            .map(|f| postcard::to_stdvec(&f.chunks))
            .collect::<Result<_, _>>()?;
        let mut owners = vec![u32::MAX; self.points()];
        for (fi, f) in self.files.iter().enumerate() {
            for c in &f.chunks {
                if let Some(o) = owners.get_mut(c.id as usize) {
                    *o = fi as u32;
                }
            }
        }
        let owners: Vec<u8> = owners.iter().flat_map(|o| o.to_le_bytes()).collect();
        postcard::to_stdvec(&StoredRef {
            version: self.version,
            model: &self.model,
            dim: self.dim,
            idf: &self.idf,
            rows: &self.rows,
            dead: &self.dead,
            center: &self.center,
            files: self
                .files
                .iter()
                .zip(&chunks)
                .map(|(f, c)| StoredFileRef {
                    path: &f.path,
                    content: &f.content,
                    chunks: ByteString(c),
                })
                .collect(),
            owners: ByteString(&owners),
        })
    }

    /// A rebuilt part: `header` with `files`, every one's chunks numbered by the build.
    pub fn rebuilt(header: StoredHeader, files: Vec<FileOut>) -> VectorStore {
        let files = files
            .into_iter()
            .map(|f| FileChunks {
                path: f.path,
                content: f.content,
                chunks: match f.chunks {
                    ChunksOut::New(c) => c,
                    // A rebuild keeps no file as stored; none is made so.
                    ChunksOut::Kept(_) => Vec::new(),
                },
            })
            .collect();
        let StoredHeader {
            version,
            model,
            dim,
            idf,
            rows,
            dead,
            center,
        } = header;
        VectorStore {
            version,
            model,
            dim,
            idf,
            files,
            rows,
            dead,
            center,
        }
    }

    /// The stored form decoded whole, each file's chunks on every core.
    pub fn decode(bytes: &[u8]) -> Result<VectorStore, postcard::Error> {
        use rayon::prelude::*;
        let w: StoredWire = postcard::from_bytes(bytes)?;
        let files = w
            .files
            .into_par_iter()
            .map(|f| {
                Ok(FileChunks {
                    path: f.path,
                    content: f.content,
                    chunks: postcard::from_bytes(f.chunks)?,
                })
            })
            .collect::<Result<_, postcard::Error>>()?;
        Ok(VectorStore {
            version: w.version,
            model: w.model,
            dim: w.dim,
            idf: w.idf,
            files,
            rows: w.rows,
            dead: w.dead,
            center: w.center,
        })
    }
}

#[derive(Serialize)]
struct StoredRef<'a> {
    version: u32,
    model: &'a str,
    dim: u32,
    idf: &'a [f32],
    rows: &'a [RowFile],
    dead: &'a [u32],
    center: &'a [f32],
    files: Vec<StoredFileRef<'a>>,
    owners: ByteString<'a>,
}

#[derive(Serialize)]
struct StoredFileRef<'a> {
    path: &'a str,
    content: &'a [u8; 32],
    chunks: ByteString<'a>,
}

#[derive(Deserialize)]
struct StoredWire<'a> {
    version: u32,
    model: String,
    dim: u32,
    idf: Vec<f32>,
    rows: Vec<RowFile>,
    dead: Vec<u32>,
    center: Vec<f32>,
    #[serde(borrow)]
    files: Vec<StoredFileWire<'a>>,
    #[serde(borrow)]
    owners: &'a [u8],
}

#[derive(Deserialize)]
struct StoredFileWire<'a> {
    path: String,
    content: [u8; 32],
    #[serde(borrow)]
    chunks: &'a [u8],
}

/// The chunk table as a query reads it: the header and the files' paths decoded, each file's
/// chunks decoded when a hit first lands in it, each point's file read in place.
pub struct ChunkTable {
    /// The stored table: bytes held in memory, or the committed file mapped (a cold query
    /// decodes it there, without copying it first).
    bytes: Box<dyn StoredBytes>,
    pub version: u32,
    pub model: String,
    pub dim: u32,
    pub idf: Vec<f32>,
    pub rows: Vec<RowFile>,
    pub dead: Vec<u32>,
    pub center: Vec<f32>,
    paths: Vec<String>,
    /// Each file's content hash when it was chunked.
    contents: Vec<[u8; 32]>,
    /// Where each file's chunks and the owners lie in `bytes`.
    chunks: Vec<std::ops::Range<usize>>,
    owners: std::ops::Range<usize>,
    decoded: Vec<std::sync::OnceLock<Vec<ChunkMeta>>>,
}

impl ChunkTable {
    /// `bytes`, a stored chunk table (already checked against its blake3).
    pub fn open(bytes: Vec<u8>) -> Result<ChunkTable, postcard::Error> {
        Self::open_bytes(Box::new(bytes))
    }

    /// A committed chunk table, mapped (and checked against its blake3 by the caller).
    pub(super) fn open_mapped(map: super::mapped_part::MappedPart) -> Result<ChunkTable, postcard::Error> {
        Self::open_bytes(Box::new(map))
    }

    fn open_bytes(bytes: Box<dyn StoredBytes>) -> Result<ChunkTable, postcard::Error> {
        let base = bytes.bytes().as_ptr() as usize;
        let place = |blob: &[u8]| {
            let at = (blob.as_ptr() as usize).saturating_sub(base);
            at..at + blob.len()
        };
        let w: StoredWire = postcard::from_bytes(bytes.bytes())?;
        let owners = place(w.owners);
        let (mut paths, mut contents, mut chunks) = (
            Vec::with_capacity(w.files.len()),
            Vec::with_capacity(w.files.len()),
            Vec::with_capacity(w.files.len()),
        );
        for f in w.files {
            chunks.push(place(f.chunks));
            paths.push(f.path);
            contents.push(f.content);
        }
        let version = w.version;
        let (model, dim, idf, rows, dead, center) = (w.model, w.dim, w.idf, w.rows, w.dead, w.center);
        let points: usize = rows.iter().map(|r| r.points as usize).sum();
        if owners.len() != points * 4 {
            return Err(postcard::Error::DeserializeBadEncoding);
        }
        Ok(ChunkTable {
            decoded: (0..paths.len()).map(|_| std::sync::OnceLock::new()).collect(),
            bytes,
            version,
            model,
            dim,
            idf,
            rows,
            dead,
            center,
            paths,
            contents,
            chunks,
            owners,
        })
    }

    /// The stored bytes, as opened.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.bytes()
    }

    /// The number of files.
    pub fn files(&self) -> usize {
        self.paths.len()
    }

    /// File `fi`'s path and its content hash when chunked.
    pub fn file(&self, fi: usize) -> Option<(&str, &[u8; 32])> {
        Some((self.paths.get(fi)?.as_str(), self.contents.get(fi)?))
    }

    /// File `fi`'s chunks as stored (postcard), never decoded.
    fn chunk_bytes(&self, fi: usize) -> Result<&[u8], postcard::Error> {
        self.chunks
            .get(fi)
            .and_then(|r| self.bytes.bytes().get(r.clone()))
            .ok_or(postcard::Error::DeserializeUnexpectedEnd)
    }

    /// File `fi`'s chunks, decoded (not kept).
    pub fn file_chunks(&self, fi: usize) -> Result<Vec<ChunkMeta>, postcard::Error> {
        postcard::from_bytes(self.chunk_bytes(fi)?)
    }

    /// The number of file `fi`'s chunks, read from their length alone.
    pub fn chunk_count(&self, fi: usize) -> Result<usize, postcard::Error> {
        let (n, _) = postcard::take_from_bytes::<u64>(self.chunk_bytes(fi)?)?;
        usize::try_from(n).map_err(|_| postcard::Error::DeserializeBadEncoding)
    }

    /// This part's stored form after an update that appended points: `files` in order, each
    /// with its chunks numbered by the update or kept as this part stored them (copied, not
    /// encoded again), each point's file mapped to its new index; the header as given. The
    /// bytes [`VectorStore::encode`] gives for the same store decoded whole.
    pub fn encode_appended(
        &self,
        files: &[FileOut],
        header: &StoredHeader,
    ) -> Result<Vec<u8>, postcard::Error> {
        use rayon::prelude::*;
        use std::borrow::Cow;
        let chunks: Vec<Cow<[u8]>> = files
            .par_iter()
            .map(|f| match &f.chunks {
                ChunksOut::New(c) => postcard::to_stdvec(c).map(Cow::Owned),
                ChunksOut::Kept(old) => self.chunk_bytes(*old).map(Cow::Borrowed),
            })
            .collect::<Result<_, _>>()?;
        let points: usize = header.rows.iter().map(|r| r.points as usize).sum();
        let mut now = vec![u32::MAX; self.paths.len()];
        for (fi, f) in files.iter().enumerate() {
            if let ChunksOut::Kept(old) = f.chunks
                && let Some(n) = now.get_mut(old)
            {
                *n = fi as u32;
            }
        }
        let mut owners: Vec<u32> = (0..points)
            .map(|id| {
                self.owner(id)
                    .and_then(|old| now.get(old).copied())
                    .unwrap_or(u32::MAX)
            })
            .collect();
        for (fi, f) in files.iter().enumerate() {
            if let ChunksOut::New(chunks) = &f.chunks {
                for c in chunks {
                    if let Some(o) = owners.get_mut(c.id as usize) {
                        *o = fi as u32;
                    }
                }
            }
        }
        let owners: Vec<u8> = owners.iter().flat_map(|o| o.to_le_bytes()).collect();
        let stored = files
            .iter()
            .zip(&chunks)
            .map(|(f, c)| StoredFileRef {
                path: &f.path,
                content: &f.content,
                chunks: ByteString(c),
            })
            .collect();
        postcard::to_stdvec(&StoredRef {
            version: header.version,
            model: &header.model,
            dim: header.dim,
            idf: &header.idf,
            rows: &header.rows,
            dead: &header.dead,
            center: &header.center,
            files: stored,
            owners: ByteString(&owners),
        })
    }

    pub fn points(&self) -> usize {
        self.owners.len() / 4
    }

    /// The file point `id` belongs to (`None` for a dead point or past the end).
    fn owner(&self, id: usize) -> Option<usize> {
        let at = self.owners.start.checked_add(id.checked_mul(4)?)?;
        let b: [u8; 4] = self.bytes.bytes().get(at..at + 4)?.try_into().ok()?;
        let fi = u32::from_le_bytes(b);
        (fi != u32::MAX).then_some(fi as usize)
    }

    /// Points that belong to a file.
    pub fn live(&self) -> usize {
        (0..self.points()).filter(|&id| self.owner(id).is_some()).count()
    }

    /// Point `id`'s file path and chunk.
    pub fn chunk(&self, id: usize) -> Option<(&str, &ChunkMeta)> {
        let fi = self.owner(id)?;
        let chunks = self.decoded.get(fi)?.get_or_init(|| {
            self.chunks
                .get(fi)
                .and_then(|r| self.bytes.bytes().get(r.clone()))
                .and_then(|b| postcard::from_bytes(b).ok())
                .unwrap_or_default()
        });
        let c = chunks.iter().find(|c| c.id as usize == id)?;
        Some((self.paths.get(fi)?.as_str(), c))
    }
}

/// A file of a part an update writes ([`ChunkTable::encode_appended`]).
pub struct FileOut {
    pub path: String,
    pub content: [u8; 32],
    pub chunks: ChunksOut,
}

/// A file's chunks in a part an update writes.
pub enum ChunksOut {
    /// Numbered by the update.
    New(Vec<ChunkMeta>),
    /// As the previous part stored them: its file index there.
    Kept(usize),
}

/// Everything of a part but its files.
pub struct StoredHeader {
    pub version: u32,
    pub model: String,
    pub dim: u32,
    pub idf: Vec<f32>,
    pub rows: Vec<RowFile>,
    pub dead: Vec<u32>,
    pub center: Vec<f32>,
}

/// A model or graph error as the index reports it.
pub(super) fn model_error(e: VectorError) -> IndexError {
    IndexError::Vector(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: u32, line: u32) -> ChunkMeta {
        ChunkMeta {
            start_line: line,
            end_line: line + 3,
            symbol: Some(id % 2),
            hash: [id as u8; 16],
            id,
        }
    }

    /// Three files; point 2 was dropped by an update (dead), points 4 and 5 appended.
    fn store() -> VectorStore {
        let file = |path: &str, chunks: Vec<ChunkMeta>| FileChunks {
            path: path.into(),
            content: [path.len() as u8; 32],
            chunks,
        };
        VectorStore {
            version: VECTOR_VERSION,
            model: "m".into(),
            dim: 8,
            idf: vec![1.0, 0.5],
            files: vec![
                file("a.py", vec![chunk(0, 1), chunk(1, 9)]),
                file("b.py", vec![chunk(4, 2), chunk(5, 20)]),
                file("c.py", vec![chunk(3, 7)]),
            ],
            rows: vec![
                RowFile {
                    file: "rows-00000000-x.q4".into(),
                    points: 4,
                    blake3: "x".into(),
                    codes: "y".into(),
                },
                RowFile {
                    file: "rows-00000004-z.q4".into(),
                    points: 2,
                    blake3: "z".into(),
                    codes: "w".into(),
                },
            ],
            dead: vec![2],
            center: vec![0.25; 8],
        }
    }

    #[test]
    fn the_stored_form_decodes_whole_and_reads_in_place_alike() {
        let s = store();
        let bytes = s.encode().unwrap();
        assert_eq!(VectorStore::decode(&bytes).unwrap(), s);
        let t = ChunkTable::open(bytes.clone()).unwrap();
        assert_eq!((t.points(), t.live()), (6, 5));
        assert_eq!(
            (&t.model, t.dim, &t.idf, &t.rows, &t.dead, &t.center),
            (&s.model, s.dim, &s.idf, &s.rows, &s.dead, &s.center)
        );
        for f in &s.files {
            for c in &f.chunks {
                assert_eq!(t.chunk(c.id as usize), Some((f.path.as_str(), c)));
            }
        }
        // A dead point and one past the end belong to no file.
        assert_eq!((t.chunk(2), t.chunk(6)), (None, None));
        // Owners that do not cover the row files' points are damage, not a shorter table:
        // the last byte string (6 points, 24 bytes) cut to 5 points.
        let mut cut = bytes.clone();
        let at = cut.len() - 25;
        assert_eq!(cut[at], 24);
        cut[at] = 20;
        cut.truncate(cut.len() - 4);
        assert!(ChunkTable::open(cut).is_err());
        assert!(ChunkTable::open(bytes[..bytes.len() - 1].to_vec()).is_err());
    }

    #[test]
    fn an_appended_part_is_the_part_encoded_whole() {
        let before = store();
        let table = ChunkTable::open(before.encode().unwrap()).unwrap();
        assert_eq!(table.file(1), Some(("b.py", &[4u8; 32])));
        assert_eq!(table.chunk_count(1).unwrap(), 2);
        // An update: a.py kept, b.py changed (points 4 and 5 dead, 6 and 7 new), c.py
        // removed (point 3 dead), aa.py added before b.py (point 8): indices move.
        let header = |dead: Vec<u32>| StoredHeader {
            version: VECTOR_VERSION,
            model: "m".into(),
            dim: 8,
            idf: vec![1.0, 0.5],
            rows: vec![RowFile {
                file: "rows-00000000-n.q4".into(),
                points: 9,
                blake3: "n".into(),
                codes: "c".into(),
            }],
            dead,
            center: vec![0.25; 8],
        };
        let files = vec![
            FileOut {
                path: "a.py".into(),
                content: [4; 32],
                chunks: ChunksOut::Kept(0),
            },
            FileOut {
                path: "aa.py".into(),
                content: [5; 32],
                chunks: ChunksOut::New(vec![chunk(8, 1)]),
            },
            FileOut {
                path: "b.py".into(),
                content: [9; 32],
                chunks: ChunksOut::New(vec![chunk(6, 2), chunk(7, 30)]),
            },
        ];
        let dead = vec![2, 4, 5, 3];
        let appended = table.encode_appended(&files, &header(dead.clone())).unwrap();
        let mut whole = VectorStore::rebuilt(header(dead), Vec::new());
        whole.files = vec![
            FileChunks {
                path: "a.py".into(),
                content: [4; 32],
                chunks: before.files[0].chunks.clone(),
            },
            FileChunks {
                path: "aa.py".into(),
                content: [5; 32],
                chunks: vec![chunk(8, 1)],
            },
            FileChunks {
                path: "b.py".into(),
                content: [9; 32],
                chunks: vec![chunk(6, 2), chunk(7, 30)],
            },
        ];
        assert_eq!(appended, whole.encode().unwrap());
        let t = ChunkTable::open(appended).unwrap();
        assert_eq!(t.live(), 5);
        assert_eq!(t.chunk(1).map(|(p, _)| p), Some("a.py"));
        assert_eq!(t.chunk(8).map(|(p, _)| p), Some("aa.py"));
        assert_eq!(t.chunk(7).map(|(p, _)| p), Some("b.py"));
        assert_eq!(t.chunk(5), None);
    }
}
