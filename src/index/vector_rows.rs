//! `Rows`: a vector part's packed rows (four bits a dimension, [`crate::vector::quantize`]),
//! in id order, either its row files mapped in place or rows held in memory, with the sign bits of each row file where
//! the part has them. A build reads the previous generation's vectors through it, a query
//! scans them there.

use super::mapped_part::MappedPart;
use super::vector_store::{ChunkTable, RowFile, VectorStore};

/// What [`Rows::open`] reads of a vector part: the dimension, the row files, the center.
pub(super) struct RowsOf<'a> {
    pub dim: u32,
    pub rows: &'a [RowFile],
    pub center: &'a [f32],
}

impl<'a> From<&'a VectorStore> for RowsOf<'a> {
    fn from(s: &'a VectorStore) -> RowsOf<'a> {
        RowsOf {
            dim: s.dim,
            rows: &s.rows,
            center: &s.center,
        }
    }
}

impl<'a> From<&'a ChunkTable> for RowsOf<'a> {
    fn from(s: &'a ChunkTable) -> RowsOf<'a> {
        RowsOf {
            dim: s.dim,
            rows: &s.rows,
            center: &s.center,
        }
    }
}
use super::{IndexError, IndexStore};
use crate::vector::{CodeBlock, code_len, row_len};

/// A store's vectors: its row files mapped in place (a scan reads them there: no copy, and
/// nothing but the pages it reads), or rows held in memory.
pub struct Rows {
    dim: usize,
    /// The first id of each block.
    starts: Vec<usize>,
    blocks: Vec<RowBlock>,
    /// Each block's sign bits ([`crate::vector::encode_codes`]), when every block has them.
    codes: Option<Vec<MappedPart>>,
}

enum RowBlock {
    Owned(Vec<u8>),
    Mapped(MappedPart),
}

impl RowBlock {
    fn as_slice(&self) -> &[u8] {
        match self {
            RowBlock::Owned(v) => v,
            RowBlock::Mapped(m) => m,
        }
    }
}

impl Rows {
    pub fn owned(dim: usize, vectors: Vec<u8>) -> Rows {
        Rows {
            dim,
            starts: vec![0],
            blocks: vec![RowBlock::Owned(vectors)],
            codes: None,
        }
    }

    /// The row files of `store` in the committed generation `generation`, mapped, with their
    /// codes' files; each is checked against its size and, where `hash` says so (of its name),
    /// its blake3. A build trusts the files its stamp check passed; a reader hashes those its
    /// stamps do not vouch for.
    pub(super) fn open(
        index: &IndexStore,
        generation: u64,
        part: RowsOf<'_>,
        hash: impl Fn(&str) -> bool,
    ) -> Result<Rows, IndexError> {
        let RowsOf {
            dim,
            rows: files,
            center,
        } = part;
        let dim = dim as usize;
        let mut rows = Rows {
            dim,
            starts: Vec::with_capacity(files.len()),
            blocks: Vec::with_capacity(files.len()),
            codes: None,
        };
        let mut codes = Vec::with_capacity(files.len());
        let map = |file: &str, blake3: &str, len: usize, what: &str| {
            let map = match hash(file) {
                true => index.map_part_hashed(generation, file, Some(blake3))?,
                false => index.map_part(generation, file)?,
            };
            match map.len() == len {
                true => Ok(map),
                false => Err(IndexError::Corrupt {
                    path: index.generation_dir(generation).join(file),
                    detail: format!("{} bytes, {what}", map.len()),
                }),
            }
        };
        let mut next = 0usize;
        for r in files {
            let n = r.points as usize;
            let points = format!("the vector part says {n} points of {dim}");
            rows.blocks.push(RowBlock::Mapped(map(
                &r.file,
                &r.blake3,
                n * row_len(dim),
                &points,
            )?));
            codes.push(map(&r.codes_file(), &r.codes, n * code_len(dim), &points)?);
            rows.starts.push(next);
            next += n;
        }
        rows.codes = (center.len() == dim).then_some(codes);
        Ok(rows)
    }

    /// Each block's first id and sign bits; `None` when the rows have no codes.
    pub(super) fn coded(&self) -> Option<Vec<CodeBlock<'_>>> {
        let codes = self.codes.as_ref()?;
        Some(self.starts.iter().zip(codes).map(|(&s, c)| (s, &c[..])).collect())
    }

    /// Reads the rows of `ids` (ascending) and hands each to `visit`: rows held in memory
    /// from there, mapped ones with positioned reads of the file, runs of nearby rows in one
    /// read, so that the pages around each row are not mapped into the process (a scattered
    /// read of 4,000 rows through the map held 47 MB of a 50 MB file).
    pub(super) fn read_rows(&self, ids: &[usize], visit: &mut dyn FnMut(usize, &[u8])) {
        /// A run of rows read at once spans at most this many bytes.
        const RUN: usize = 16 * 1024;
        let d = row_len(self.dim).max(1);
        let mut at = 0;
        while let Some(&id) = ids.get(at) {
            let k = self.starts.partition_point(|&s| s <= id).saturating_sub(1);
            let (Some(&start), Some(block)) = (self.starts.get(k), self.blocks.get(k)) else {
                at += 1;
                continue;
            };
            let end = self.starts.get(k + 1).copied().unwrap_or(usize::MAX);
            // The ids of this block that fit in one run from `id`.
            let run = ids[at..]
                .iter()
                .take_while(|&&i| i < end && (i - id + 1) * d <= RUN.max(d))
                .count()
                .max(1);
            let last = ids[at + run - 1];
            match block {
                RowBlock::Owned(v) => {
                    for &i in &ids[at..at + run] {
                        if let Some(row) = v.get((i - start) * d..(i - start + 1) * d) {
                            visit(i, row);
                        }
                    }
                }
                RowBlock::Mapped(m) => {
                    let mut buf = vec![0u8; (last - id + 1) * d];
                    if m.read_at(((id - start) * d) as u64, &mut buf).is_ok() {
                        let rows: &[u8] = &buf;
                        for &i in &ids[at..at + run] {
                            if let Some(row) = rows.get((i - id) * d..(i - id + 1) * d) {
                                visit(i, row);
                            }
                        }
                    }
                }
            }
            at += run;
        }
    }

    pub fn points(&self) -> usize {
        self.blocks.iter().map(|b| b.as_slice().len()).sum::<usize>() / row_len(self.dim).max(1)
    }

    /// Each block's first id and rows.
    pub(super) fn slices(&self) -> Vec<(usize, &[u8])> {
        self.starts
            .iter()
            .zip(&self.blocks)
            .map(|(&s, b)| (s, b.as_slice()))
            .collect()
    }

    /// Block `k`'s rows (a row file's, when mapped).
    pub(super) fn block(&self, k: usize) -> &[u8] {
        self.blocks.get(k).map_or(&[], RowBlock::as_slice)
    }

    pub fn vector(&self, id: u32) -> &[u8] {
        let id = id as usize;
        let k = self.starts.partition_point(|&s| s <= id).saturating_sub(1);
        let (Some(&start), Some(block)) = (self.starts.get(k), self.blocks.get(k)) else {
            return &[];
        };
        let d = row_len(self.dim);
        block
            .as_slice()
            .get((id - start) * d..(id - start + 1) * d)
            .unwrap_or(&[])
    }

    /// Every row in one owned buffer, for the HNSW graph (which keeps its vectors itself).
    pub(super) fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.points() * row_len(self.dim));
        for b in &self.blocks {
            out.extend_from_slice(b.as_slice());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scattered_reads_give_the_rows_the_map_holds() {
        let dim = 16;
        // Two blocks: one mapped from a file (read with positioned reads), one in memory.
        let width = row_len(dim);
        let first: Vec<u8> = (0..3000 * width).map(|i| (i % 251) as u8).collect();
        let second: Vec<u8> = (0..500 * width).map(|i| (i % 13) as u8).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.q4");
        std::fs::write(&path, &first).unwrap();
        let rows = Rows {
            dim,
            starts: vec![0, 3000],
            blocks: vec![
                RowBlock::Mapped(MappedPart::open(&path).unwrap()),
                RowBlock::Owned(second),
            ],
            codes: None,
        };
        // Runs of near ids, far ones, both blocks, the ends of each, and one past the end.
        let ids = [0, 1, 2, 3, 900, 901, 1500, 2999, 3000, 3001, 3400, 3499, 3500];
        let mut seen = Vec::new();
        rows.read_rows(&ids, &mut |id, row| {
            assert_eq!(row, rows.vector(id as u32), "row {id}");
            seen.push(id);
        });
        assert_eq!(seen, ids[..ids.len() - 1]);
    }
}
