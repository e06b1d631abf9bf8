//! `VectorIndex`: approximate nearest neighbours (HNSW, `hnsw_rs`) over int8 vectors, with
//! the top candidates re-scored exactly against the float query.
//!
//! Vectors are quantized each on its own scale, `round(x * 127 / max|x|)` (one byte per
//! dimension: the largest component uses the whole int8 range, whatever the model's
//! dimension); the graph searches by int8 cosine, then `RESCORE` times more candidates than asked
//! are re-scored with the float query and cut to `k`. Ids are positions in the vector list.

use std::path::Path;

use hnsw_rs::api::AnnT;
use hnsw_rs::hnswio::HnswIo;
use hnsw_rs::prelude::{Distance, Hnsw};

use super::VectorError;

/// Candidates fetched per result for exact re-scoring.
const RESCORE: usize = 4;
const MAX_CONNECTIONS: usize = 16;
const EF_CONSTRUCTION: usize = 64;
const MAX_LAYERS: usize = 16;
const BASENAME: &str = "vectors";
/// Candidates explored per query (more than returned: the graph is built with a small ef).
const EF_SEARCH: usize = 320;

/// Distance between int8 vectors: 1 - cosine, from integer dot products.
#[derive(Debug, Default, Clone, Copy)]
pub struct DistI8;

impl Distance<i8> for DistI8 {
    fn eval(&self, a: &[i8], b: &[i8]) -> f32 {
        let (mut dot, mut na, mut nb) = (0i32, 0i32, 0i32);
        for (x, y) in a.iter().zip(b) {
            let (x, y) = (i32::from(*x), i32::from(*y));
            dot += x * y;
            na += x * x;
            nb += y * y;
        }
        if na == 0 || nb == 0 {
            return 1.0;
        }
        (1.0 - dot as f32 / ((na as f32).sqrt() * (nb as f32).sqrt())).max(0.0)
    }
}

/// One byte per dimension, scaled so the largest component is +-127 (direction is what
/// cosine compares; the scale is not kept).
pub fn quantize(v: &[f32]) -> Vec<i8> {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        return vec![0; v.len()];
    }
    let s = 127.0 / max;
    v.iter()
        .map(|x| (x * s).round().clamp(-127.0, 127.0) as i8)
        .collect()
}

/// Cosine of a float unit query and a quantized vector.
pub fn score(query: &[f32], q: &[i8]) -> f32 {
    // Eight independent sums, so the compiler can keep them in one vector register (a single
    // running sum has to be added in order and stays scalar): the scan is this loop.
    const LANES: usize = 8;
    let (mut dot, mut norm) = ([0f32; LANES], [0f32; LANES]);
    let mut qa = query.chunks_exact(LANES);
    let mut qb = q.chunks_exact(LANES);
    for (a, b) in (&mut qa).zip(&mut qb) {
        for i in 0..LANES {
            let b = f32::from(b[i]);
            dot[i] += a[i] * b;
            norm[i] += b * b;
        }
    }
    let (mut d, mut n) = (dot.iter().sum::<f32>(), norm.iter().sum::<f32>());
    for (a, b) in qa.remainder().iter().zip(qb.remainder()) {
        let b = f32::from(*b);
        d += a * b;
        n += b * b;
    }
    if n == 0.0 { 0.0 } else { d / n.sqrt() }
}

/// A unit query made integer once for a scan: each int8 vector is then scored with integer
/// multiply-adds, which the compiler vectorizes on any x86-64 or ARM (integer sums may be
/// reordered; float lanes over widened int8 stayed scalar and were most of a cold semantic
/// query). The query keeps up to 15 bits: scores differ from the float ones by about 1e-5.
pub struct IntQuery {
    values: Vec<i16>,
    /// 1 / the scale the query was multiplied by.
    unscale: f64,
}

impl IntQuery {
    pub fn new(query: &[f32]) -> IntQuery {
        let max = query.iter().fold(0f32, |m, v| m.max(v.abs()));
        // A dot product sums len products of at most 128 * top: keep it in an i32.
        let top = (f64::from(i32::MAX) / (128.0 * query.len().max(1) as f64))
            .min(f64::from(i16::MAX))
            .floor();
        let scale = if max > 0.0 { top / f64::from(max) } else { 0.0 };
        IntQuery {
            values: query
                .iter()
                .map(|&v| (f64::from(v) * scale).round() as i16)
                .collect(),
            unscale: if scale > 0.0 { 1.0 / scale } else { 0.0 },
        }
    }

    /// Cosine of the query and a quantized vector.
    pub fn score(&self, v: &[i8]) -> f32 {
        let dot: i32 = self
            .values
            .iter()
            .zip(v)
            .map(|(&a, &b)| i32::from(a) * i32::from(b))
            .sum();
        // At most 127^2 per value: exact in an i32 up to 133k dimensions.
        let norm: i32 = v.iter().map(|&b| i32::from(b) * i32::from(b)).sum();
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
    vectors: Vec<i8>,
    hnsw: Hnsw<'static, i8, DistI8>,
    /// Tombstoned ids (sorted): still in the graph, never returned.
    dead: Vec<usize>,
}

impl VectorIndex {
    /// Builds the graph over `vectors` (`dim` values each), inserting in parallel.
    pub fn build(dim: usize, vectors: Vec<i8>) -> Result<VectorIndex, VectorError> {
        if dim == 0 || !vectors.len().is_multiple_of(dim) {
            return Err(VectorError::Index(format!(
                "{} values are not vectors of {dim}",
                vectors.len()
            )));
        }
        let n = vectors.len() / dim;
        // Room to grow: incremental builds insert into this graph.
        let hnsw = Hnsw::<i8, DistI8>::new(
            MAX_CONNECTIONS,
            (n * 2).max(1024),
            MAX_LAYERS,
            EF_CONSTRUCTION,
            DistI8,
        );
        let items: Vec<(&[i8], usize)> = vectors
            .chunks_exact(dim)
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
    pub fn insert(&mut self, more: &[i8]) -> Result<(), VectorError> {
        if !more.len().is_multiple_of(self.dim) {
            return Err(VectorError::Index(format!(
                "{} values are not vectors of {}",
                more.len(),
                self.dim
            )));
        }
        let first = self.len();
        self.vectors.extend_from_slice(more);
        self.hnsw.set_searching_mode(false);
        let items: Vec<(&[i8], usize)> = more
            .chunks_exact(self.dim)
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
    pub fn load(dir: &Path, dim: usize, vectors: Vec<i8>) -> Result<VectorIndex, VectorError> {
        if vectors.is_empty() {
            return VectorIndex::build(dim, vectors);
        }
        // The reload descriptor must outlive the graph it loads: it is small and leaked once
        // per load (a query process loads one index).
        let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, BASENAME)));
        let mut hnsw: Hnsw<'static, i8, DistI8> = io
            .load_hnsw()
            .map_err(|e| VectorError::Index(format!("reading the graph in {}: {e}", dir.display())))?;
        hnsw.set_searching_mode(true);
        if hnsw.get_nb_point() * dim != vectors.len() {
            return Err(VectorError::Index(format!(
                "the graph in {} has {} points, the store {} vectors",
                dir.display(),
                hnsw.get_nb_point(),
                vectors.len() / dim.max(1)
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
    pub fn into_vectors(self) -> Vec<i8> {
        self.vectors
    }

    pub fn len(&self) -> usize {
        self.vectors.len() / self.dim
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    pub fn vector(&self, id: usize) -> &[i8] {
        self.vectors
            .get(id * self.dim..(id + 1) * self.dim)
            .unwrap_or(&[])
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
pub fn exact_top_k(vectors: &[i8], dim: usize, dead: &[usize], query: &[f32], k: usize) -> Vec<(usize, f32)> {
    exact_top_k_in(&[(0, vectors)], dim, dead, query, k)
}

/// [`exact_top_k`] over vectors held in blocks, each with the id of its first row (the row
/// files of a vector part): the same answer as over the blocks concatenated.
pub fn exact_top_k_in(
    blocks: &[(usize, &[i8])],
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
    let mut best = best_in_spans(blocks, dim, dead, k, |v| int.score(v));
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
