//! `VectorIndex`: approximate nearest neighbours (HNSW, `hnsw_rs`) over packed rows (four bits
//! a dimension, [`super::packed_rows`]), with the top candidates re-scored exactly against the
//! float query.
//!
//! The graph searches by the cosine of packed rows, then `RESCORE` times more candidates than
//! asked are re-scored with the float query and cut to `k`. Ids are positions in the vector
//! list.

use std::path::Path;

use hnsw_rs::api::AnnT;
use hnsw_rs::hnswio::HnswIo;
use hnsw_rs::prelude::{Distance, Hnsw};

use super::VectorError;
use super::packed_rows::{pair, quantize, rotate, row_len, unpack};

/// Candidates fetched per result for exact re-scoring.
const RESCORE: usize = 4;
const MAX_CONNECTIONS: usize = 16;
const EF_CONSTRUCTION: usize = 64;
const MAX_LAYERS: usize = 16;
const BASENAME: &str = "vectors";
/// Candidates explored per query (more than returned: the graph is built with a small ef).
const EF_SEARCH: usize = 320;

/// Distance between packed rows ([`super::packed_rows`]): 1 - cosine, from integer dot
/// products.
#[derive(Debug, Default, Clone, Copy)]
pub struct DistPacked;

impl Distance<u8> for DistPacked {
    fn eval(&self, a: &[u8], b: &[u8]) -> f32 {
        let (mut dot, mut na, mut nb) = (0i32, 0i32, 0i32);
        for (&x, &y) in a.iter().zip(b) {
            let ((x0, x1), (y0, y1)) = (pair(x), pair(y));
            let (x0, x1, y0, y1) = (i32::from(x0), i32::from(x1), i32::from(y0), i32::from(y1));
            dot += x0 * y0 + x1 * y1;
            na += x0 * x0 + x1 * x1;
            nb += y0 * y0 + y1 * y1;
        }
        if na == 0 || nb == 0 {
            return 1.0;
        }
        (1.0 - dot as f32 / ((na as f32).sqrt() * (nb as f32).sqrt())).max(0.0)
    }
}

/// Cosine of a float unit query and a packed row.
pub fn score(query: &[f32], row: &[u8]) -> f32 {
    let q = rotate(query);
    let (mut d, mut n) = (0f32, 0f32);
    for (k, v) in unpack(row, q.len()).into_iter().enumerate() {
        let v = f32::from(v);
        d += q[k] * v;
        n += v * v;
    }
    if n == 0.0 { 0.0 } else { d / n.sqrt() }
}

/// A unit query rotated as rows are and made integer once for a scan: each packed row is then
/// scored with integer multiply-adds, the query's even and odd dimensions against a byte's
/// low and high values. The query keeps up to 15 bits: scores differ from the float ones by
/// about 1e-5.
pub struct IntQuery {
    /// The query's values of dimensions 0, 2, 4... and 1, 3, 5... (0 past the end).
    even: Vec<i16>,
    odd: Vec<i16>,
    /// 1 / the scale the query was multiplied by.
    unscale: f64,
}

impl IntQuery {
    pub fn new(query: &[f32]) -> IntQuery {
        let query = rotate(query);
        let max = query.iter().fold(0f32, |m, v| m.max(v.abs()));
        // A dot product sums len products of at most 8 * top: keep it in an i32.
        let top = (f64::from(i32::MAX) / (8.0 * query.len().max(1) as f64))
            .min(f64::from(i16::MAX))
            .floor();
        let scale = if max > 0.0 { top / f64::from(max) } else { 0.0 };
        let int = |v: f32| (f64::from(v) * scale).round() as i16;
        let even = query.iter().step_by(2).map(|&v| int(v)).collect();
        let odd = query
            .iter()
            .skip(1)
            .step_by(2)
            .map(|&v| int(v))
            .chain([0])
            .take(row_len(query.len()))
            .collect();
        IntQuery {
            even,
            odd,
            unscale: if scale > 0.0 { 1.0 / scale } else { 0.0 },
        }
    }

    /// Cosine of the query and a packed row.
    pub fn score(&self, row: &[u8]) -> f32 {
        let (mut dot, mut norm) = (0i32, 0i32);
        for ((&e, &o), &b) in self.even.iter().zip(&self.odd).zip(row) {
            let (lo, hi) = pair(b);
            let (lo, hi) = (i32::from(lo), i32::from(hi));
            dot += i32::from(e) * lo + i32::from(o) * hi;
            norm += lo * lo + hi * hi;
        }
        if norm == 0 {
            0.0
        } else {
            (f64::from(dot) * self.unscale / f64::from(norm).sqrt()) as f32
        }
    }
}

/// Graphs smaller than this are built by inserting one point at a time.
const SEQUENTIAL_BELOW: usize = 10_000;

pub struct VectorIndex {
    dim: usize,
    /// Packed rows, [`row_len`] bytes each.
    vectors: Vec<u8>,
    hnsw: Hnsw<'static, u8, DistPacked>,
    /// Tombstoned ids (sorted): still in the graph, never returned.
    dead: Vec<usize>,
}

impl VectorIndex {
    /// Builds the graph over `vectors` (packed rows of `dim` dimensions), inserting in
    /// parallel.
    pub fn build(dim: usize, vectors: Vec<u8>) -> Result<VectorIndex, VectorError> {
        let width = row_len(dim);
        if dim == 0 || !vectors.len().is_multiple_of(width) {
            return Err(VectorError::Index(format!(
                "{} bytes are not packed rows of {dim} dimensions",
                vectors.len()
            )));
        }
        let n = vectors.len() / width;
        // Room to grow: incremental builds insert into this graph.
        let hnsw = Hnsw::<u8, DistPacked>::new(
            MAX_CONNECTIONS,
            (n * 2).max(1024),
            MAX_LAYERS,
            EF_CONSTRUCTION,
            DistPacked,
        );
        let items: Vec<(&[u8], usize)> = vectors
            .chunks_exact(width)
            .enumerate()
            .map(|(i, v)| (v, i))
            .collect();
        // Parallel insertion can leave a small graph badly linked (a point none of the others
        // reaches); one at a time costs nothing at that size.
        match n < SEQUENTIAL_BELOW {
            true => items.iter().for_each(|&item| hnsw.insert_slice(item)),
            false => hnsw.parallel_insert_slice(&items),
        }
        let mut hnsw = hnsw;
        hnsw.set_searching_mode(true);
        Ok(VectorIndex {
            dim,
            vectors,
            hnsw,
            dead: Vec::new(),
        })
    }

    /// Adds vectors after the existing ones (their ids continue the numbering).
    pub fn insert(&mut self, more: &[u8]) -> Result<(), VectorError> {
        let width = row_len(self.dim);
        if !more.len().is_multiple_of(width) {
            return Err(VectorError::Index(format!(
                "{} bytes are not packed rows of {} dimensions",
                more.len(),
                self.dim
            )));
        }
        let first = self.len();
        self.vectors.extend_from_slice(more);
        self.hnsw.set_searching_mode(false);
        let items: Vec<(&[u8], usize)> = more
            .chunks_exact(width)
            .enumerate()
            .map(|(i, v)| (v, first + i))
            .collect();
        self.hnsw.parallel_insert_slice(&items);
        self.hnsw.set_searching_mode(true);
        Ok(())
    }

    /// Ids that searches must skip (deleted chunks, until the next rebuild).
    pub fn set_dead(&mut self, mut dead: Vec<usize>) {
        dead.sort_unstable();
        dead.dedup();
        self.dead = dead;
    }

    /// Writes the graph into `dir` (`vectors.hnsw.graph`, `vectors.hnsw.data`).
    pub fn dump(&self, dir: &Path) -> Result<(), VectorError> {
        if self.is_empty() {
            return Ok(()); // nothing to write; `load` of no vectors makes an empty graph
        }
        self.hnsw
            .file_dump(dir, BASENAME)
            .map(|_| ())
            .map_err(|e| VectorError::Index(format!("writing the graph to {}: {e}", dir.display())))
    }

    /// Reloads a graph written by [`VectorIndex::dump`]; `vectors` are the same vectors.
    pub fn load(dir: &Path, dim: usize, vectors: Vec<u8>) -> Result<VectorIndex, VectorError> {
        if vectors.is_empty() {
            return VectorIndex::build(dim, vectors);
        }
        // The reload descriptor must outlive the graph it loads: it is small and leaked once
        // per load (a query process loads one index).
        let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, BASENAME)));
        let mut hnsw: Hnsw<'static, u8, DistPacked> = io
            .load_hnsw()
            .map_err(|e| VectorError::Index(format!("reading the graph in {}: {e}", dir.display())))?;
        hnsw.set_searching_mode(true);
        if hnsw.get_nb_point() * row_len(dim) != vectors.len() {
            return Err(VectorError::Index(format!(
                "the graph in {} has {} points, the store {} vectors",
                dir.display(),
                hnsw.get_nb_point(),
                vectors.len() / row_len(dim).max(1)
            )));
        }
        Ok(VectorIndex {
            dim,
            vectors,
            hnsw,
            dead: Vec::new(),
        })
    }

    /// Every vector, in id order.
    pub fn into_vectors(self) -> Vec<u8> {
        self.vectors
    }

    pub fn len(&self) -> usize {
        self.vectors.len() / row_len(self.dim).max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    pub fn vector(&self, id: usize) -> &[u8] {
        let width = row_len(self.dim);
        self.vectors.get(id * width..(id + 1) * width).unwrap_or(&[])
    }

    /// The `k` nearest ids to a unit `query`, best first, with cosine scores.
    pub fn search(&self, query: &[f32], k: usize) -> Vec<(usize, f32)> {
        if self.is_empty() || k == 0 {
            return Vec::new();
        }
        let fetch = (k * RESCORE).min(self.len());
        let q = quantize(query);
        // Tombstones (at most a quarter of the points, see the vector part) are dropped after
        // the graph search, which therefore fetches twice as many when there are any.
        let fetch = match self.dead.is_empty() {
            true => fetch,
            false => (fetch * 2).min(self.len()),
        };
        let found: Vec<_> = self
            .hnsw
            .search(&q, fetch, fetch.max(EF_SEARCH))
            .into_iter()
            .filter(|n| self.dead.binary_search(&n.d_id).is_err())
            .collect();
        let int = IntQuery::new(query);
        let mut scored: Vec<(usize, f32)> = found
            .into_iter()
            .map(|n| (n.d_id, int.score(self.vector(n.d_id))))
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(k);
        scored
    }

    /// Exact search over every vector (the oracle for tests and benchmarks).
    pub fn brute_force(&self, query: &[f32], k: usize) -> Vec<(usize, f32)> {
        exact_top_k(&self.vectors, self.dim, &self.dead, query, k)
    }
}

/// The `k` best live vectors for a unit `query` by exact cosine, best first (ties by id),
/// scanned in parallel. `dead` is sorted.
pub fn exact_top_k(vectors: &[u8], dim: usize, dead: &[usize], query: &[f32], k: usize) -> Vec<(usize, f32)> {
    exact_top_k_in(&[(0, vectors)], dim, dead, query, k)
}

/// [`exact_top_k`] over vectors held in blocks, each with the id of its first row (the row
/// files of a vector part): the same answer as over the blocks concatenated.
pub fn exact_top_k_in(
    blocks: &[(usize, &[u8])],
    dim: usize,
    dead: &[usize],
    query: &[f32],
    k: usize,
) -> Vec<(usize, f32)> {
    if dim == 0 || k == 0 {
        return Vec::new();
    }
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let int = IntQuery::new(query);
    let mut best = best_in_spans(blocks, row_len(dim), dead, k, |v| int.score(v));
    best.sort_by(order);
    best.truncate(k);
    best
}

/// The best `k` items of each span of `blocks` (each block its first id and its items,
/// `width` values each), scored by `score`, dead ids (`dead`, sorted) left out: spans of at
/// most 4,096 items scanned on every core. At most `k` a span, in no order.
pub(super) fn best_in_spans<T: Sync>(
    blocks: &[(usize, &[T])],
    width: usize,
    dead: &[usize],
    k: usize,
    score: impl Fn(&[T]) -> f32 + Sync,
) -> Vec<(usize, f32)> {
    use rayon::prelude::*;
    // Each span keeps its best `k`: spans several times `k` long, so that what is gathered
    // is a few times `k`, not every point (a first pass keeps 4,000 of 200,000).
    let span_len = k.saturating_mul(8).max(4096);
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if width == 0 {
        return Vec::new();
    }
    let spans: Vec<(usize, &[T])> = blocks
        .iter()
        .flat_map(|&(first, items)| {
            items
                .chunks(width * span_len)
                .enumerate()
                .map(move |(n, span)| (first + n * span_len, span))
        })
        .collect();
    spans
        .par_iter()
        .flat_map_iter(|&(first, span)| {
            let mut local: Vec<(usize, f32)> = span
                .chunks_exact(width)
                .enumerate()
                .map(|(i, v)| (first + i, score(v)))
                .filter(|(i, _)| dead.binary_search(i).is_err())
                .collect();
            if local.len() > k {
                local.select_nth_unstable_by(k, order);
                local.truncate(k);
            }
            local
        })
        .collect()
}
