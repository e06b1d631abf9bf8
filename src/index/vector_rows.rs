//! `Rows`: a vector part's int8 vectors, `dim` values a point in id order, either its row
//! files mapped in place or rows held in memory, with the sign bits of each row file where
//! the part has them. A build reads the previous generation's vectors through it, a query
//! scans them there.

use super::mapped_part::MappedPart;
use super::vector_store::VectorStore;
use super::{IndexError, IndexStore};
use crate::vector::{CodedBlock, code_len};

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
    Owned(Vec<i8>),
    Mapped(MappedPart),
}

impl RowBlock {
    fn as_slice(&self) -> &[i8] {
        match self {
            RowBlock::Owned(v) => v,
            RowBlock::Mapped(m) => bytemuck::cast_slice(m),
        }
    }
}

impl Rows {
    pub fn owned(dim: usize, vectors: Vec<i8>) -> Rows {
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
        store: &VectorStore,
        hash: impl Fn(&str) -> bool,
    ) -> Result<Rows, IndexError> {
        let dim = store.dim as usize;
        let mut rows = Rows {
            dim,
            starts: Vec::with_capacity(store.rows.len()),
            blocks: Vec::with_capacity(store.rows.len()),
            codes: None,
        };
        let mut codes = Vec::with_capacity(store.rows.len());
        let map = |file: &str, blake3: &str, len: usize, what: &str| {
            let map = match hash(file) {
                true => index.map_part_checked(generation, file, Some(blake3))?,
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
        for r in &store.rows {
            let n = r.points as usize;
            let points = format!("the vector part says {n} points of {dim}");
            rows.blocks
                .push(RowBlock::Mapped(map(&r.file, &r.blake3, n * dim, &points)?));
            codes.push(map(&r.codes_file(), &r.codes, n * code_len(dim), &points)?);
            rows.starts.push(next);
            next += n;
        }
        rows.codes = (store.center.len() == dim).then_some(codes);
        Ok(rows)
    }

    /// Rows about to be read at scattered places (a query's candidates): see
    /// [`MappedPart::advise_random`].
    pub(super) fn read_scattered(self) -> Rows {
        for b in &self.blocks {
            if let RowBlock::Mapped(m) = b {
                m.advise_random();
            }
        }
        self
    }

    /// Each block's first id, rows and sign bits; `None` when the rows have no codes.
    pub(super) fn coded(&self) -> Option<Vec<CodedBlock<'_>>> {
        let codes = self.codes.as_ref()?;
        Some(
            self.starts
                .iter()
                .zip(&self.blocks)
                .zip(codes)
                .map(|((&s, b), c)| (s, b.as_slice(), &c[..]))
                .collect(),
        )
    }

    pub fn points(&self) -> usize {
        self.blocks.iter().map(|b| b.as_slice().len()).sum::<usize>() / self.dim.max(1)
    }

    /// Each block's first id and rows.
    pub(super) fn slices(&self) -> Vec<(usize, &[i8])> {
        self.starts
            .iter()
            .zip(&self.blocks)
            .map(|(&s, b)| (s, b.as_slice()))
            .collect()
    }

    /// Block `k`'s rows (a row file's, when mapped).
    pub(super) fn block(&self, k: usize) -> &[i8] {
        self.blocks.get(k).map_or(&[], RowBlock::as_slice)
    }

    pub fn vector(&self, id: u32) -> &[i8] {
        let id = id as usize;
        let k = self.starts.partition_point(|&s| s <= id).saturating_sub(1);
        let (Some(&start), Some(block)) = (self.starts.get(k), self.blocks.get(k)) else {
            return &[];
        };
        let d = self.dim;
        block
            .as_slice()
            .get((id - start) * d..(id - start + 1) * d)
            .unwrap_or(&[])
    }

    /// Every row in one owned buffer, for the HNSW graph (which keeps its vectors itself).
    pub(super) fn to_vec(&self) -> Vec<i8> {
        let mut out = Vec::with_capacity(self.points() * self.dim);
        for b in &self.blocks {
            out.extend_from_slice(b.as_slice());
        }
        out
    }
}
