//! `RowSpill`: a first build's vector rows written as they are embedded, numbered in the
//! order they come (file by file, as a rebuild numbers them), instead of every chunk's vector
//! held until the last file is embedded and then copied into one buffer (about 110 MiB of a
//! capped first build's peak on the 2.8M-line tree: 195k vectors of 256 bytes, each its own
//! allocation, then the 47.5 MiB buffer beside them).
//!
//! Invariant: the row file, its sign bits and the center are those `write_rows` makes of the
//! same vectors in memory (the same bytes, the same sums in the same order).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::vector_store::{ChunkMeta, RowFile};
use super::{IndexError, IndexStore};
use crate::vector::{CenterSum, Chunk, encode_codes, row_len};

/// A chunk with its vector, by the index of its file.
type Embedded = (Chunk, Vec<u8>);

/// Beside the row file, in the generation being built, until the rows' digest names it.
const SPILL: &str = "rows.spill.tmp";
/// Rows read back at a time to encode their sign bits.
const READ_ROWS: usize = 4096;

pub(super) struct RowSpill {
    path: PathBuf,
    out: BufWriter<File>,
    hasher: blake3::Hasher,
    center: CenterSum,
    dim: usize,
    next: u32,
    /// Each file's chunks with their ids, by file index.
    chunks: HashMap<usize, Vec<ChunkMeta>>,
}

/// What the rows spilled came to.
pub(super) struct SpilledRows {
    /// The row file (none when no point was embedded).
    pub row: Option<RowFile>,
    pub center: Vec<f32>,
    pub chunks: HashMap<usize, Vec<ChunkMeta>>,
    /// Bytes of rows written.
    pub bytes: usize,
}

impl RowSpill {
    /// An empty spill in `gen_dir` for vectors of `dim` values.
    pub fn create(gen_dir: &Path, dim: usize) -> Result<RowSpill, IndexError> {
        let path = gen_dir.join(SPILL);
        let f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(IndexError::io(&path))?;
        Ok(RowSpill {
            out: BufWriter::with_capacity(1 << 20, f),
            path,
            hasher: blake3::Hasher::new(),
            center: CenterSum::new(dim),
            dim,
            next: 0,
            chunks: HashMap::new(),
        })
    }

    /// Points embedded so far.
    pub fn points(&self) -> usize {
        self.next as usize
    }

    /// A batch of files' chunks with their vectors, numbered after the points before them.
    pub fn add(&mut self, batch: Vec<(usize, Vec<Embedded>)>) -> Result<(), IndexError> {
        for (file, embedded) in batch {
            let mut metas = Vec::with_capacity(embedded.len());
            for (c, v) in embedded {
                if v.len() != row_len(self.dim) {
                    return Err(IndexError::Vector(format!(
                        "a packed row of {} bytes where the model's {} dimensions take {}",
                        v.len(),
                        self.dim,
                        row_len(self.dim)
                    )));
                }
                let bytes: &[u8] = &v;
                self.out.write_all(bytes).map_err(IndexError::io(&self.path))?;
                self.hasher.update(bytes);
                self.center.add(&v);
                metas.push(ChunkMeta {
                    start_line: c.start_line,
                    end_line: c.end_line,
                    symbol: c.symbol,
                    hash: c.hash,
                    id: self.next,
                });
                self.next += 1;
            }
            self.chunks.insert(file, metas);
        }
        Ok(())
    }

    /// The rows synced and named by their digest, their sign bits about the center written
    /// beside them (read back a block at a time: the rows are never held whole).
    pub fn finish(self, store: &IndexStore, gen_dir: &Path) -> Result<SpilledRows, IndexError> {
        let RowSpill {
            path,
            out,
            hasher,
            center,
            dim,
            next,
            chunks,
        } = self;
        let f = out
            .into_inner()
            .map_err(|e| IndexError::io(&path)(e.into_error()))?;
        f.sync_all().map_err(IndexError::io(&path))?;
        drop(f);
        let center = center.center();
        let bytes = next as usize * row_len(dim);
        if next == 0 {
            std::fs::remove_file(&path).map_err(IndexError::io(&path))?;
            return Ok(SpilledRows {
                row: None,
                center,
                chunks,
                bytes,
            });
        }
        let codes = codes_of(&path, dim, &center)?;
        let row = RowFile::new(0, next, hasher.finalize().to_hex().to_string(), &codes);
        let dest = gen_dir.join(&row.file);
        std::fs::rename(&path, &dest).map_err(IndexError::io(&dest))?;
        store.write_new_part(gen_dir, &row.codes_file(), &codes)?;
        Ok(SpilledRows {
            row: Some(row),
            center,
            chunks,
            bytes,
        })
    }
}

/// The sign bits of the rows in `path` about `center`, read [`READ_ROWS`] at a time.
fn codes_of(path: &Path, dim: usize, center: &[f32]) -> Result<Vec<u8>, IndexError> {
    let mut f = File::open(path).map_err(IndexError::io(path))?;
    let mut codes = Vec::new();
    let width = row_len(dim).max(1);
    let mut block = vec![0u8; READ_ROWS * width];
    loop {
        let mut got = 0;
        while got < block.len() {
            match f.read(&mut block[got..]).map_err(IndexError::io(path))? {
                0 => break,
                n => got += n,
            }
        }
        let whole = got - got % width;
        codes.extend(encode_codes(&block[..whole], dim, center));
        if got < block.len() {
            return Ok(codes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(line: u32) -> Chunk {
        Chunk {
            start_line: line,
            end_line: line + 1,
            symbol: None,
            text: String::new(),
            hash: [line as u8; 16],
        }
    }

    #[test]
    fn spilled_rows_are_the_rows_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = IndexStore::new(dir.path().join("idx"));
        let dim = 24;
        // More rows than are read back at a time, a zero row (left out of the center), and
        // files with no chunks between others.
        let vector = |k: usize| -> Vec<u8> {
            (0..row_len(dim))
                .map(|j| match k {
                    7 => 0,
                    _ => ((k * 31 + j * 17) % 255) as u8,
                })
                .collect()
        };
        let mut spill = RowSpill::create(dir.path(), dim).unwrap();
        let mut all: Vec<u8> = Vec::new();
        let mut k = 0;
        for batch in 0..3 {
            let mut files = Vec::new();
            for f in 0..80 {
                let n = if f % 5 == 0 {
                    0
                } else {
                    1 + (f * (batch + 1)) % 150
                };
                let chunks: Vec<(Chunk, Vec<u8>)> = (0..n)
                    .map(|_| {
                        k += 1;
                        all.extend(vector(k));
                        (chunk(k as u32), vector(k))
                    })
                    .collect();
                files.push((batch * 80 + f, chunks));
            }
            spill.add(files).unwrap();
        }
        assert!(k > READ_ROWS, "{k} rows");
        let done = spill.finish(&store, dir.path()).unwrap();
        let row = done.row.unwrap();
        let bytes: &[u8] = &all;
        assert_eq!(std::fs::read(dir.path().join(&row.file)).unwrap(), bytes);
        assert_eq!(row.points as usize, k);
        assert_eq!(row.blake3, blake3::hash(bytes).to_hex().to_string());
        assert_eq!(done.center, crate::vector::center_of(&all, dim));
        let codes = encode_codes(&all, dim, &done.center);
        assert_eq!(std::fs::read(dir.path().join(row.codes_file())).unwrap(), codes);
        assert_eq!(row.codes, blake3::hash(&codes).to_hex().to_string());
        assert!(!dir.path().join(SPILL).exists());
        // Ids follow the files in the order they came.
        let mut ids: Vec<(usize, u32, u32)> = done
            .chunks
            .iter()
            .flat_map(|(&f, cs)| cs.iter().map(move |c| (f, c.start_line, c.id)))
            .collect();
        ids.sort();
        assert!(ids.iter().all(|&(_, line, id)| id + 1 == line));
        assert_eq!(done.bytes, all.len());
    }

    #[test]
    fn a_spill_with_no_rows_leaves_no_file_and_a_vector_of_another_size_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let store = IndexStore::new(dir.path().join("idx"));
        let mut spill = RowSpill::create(dir.path(), 8).unwrap();
        spill.add(vec![(0, Vec::new())]).unwrap();
        let done = spill.finish(&store, dir.path()).unwrap();
        assert!(done.row.is_none());
        assert_eq!(done.center, vec![0.0; 8]);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

        let mut spill = RowSpill::create(dir.path(), 8).unwrap();
        assert!(spill.add(vec![(0, vec![(chunk(1), vec![1u8; 5])])]).is_err());
    }
}
