//! Binary codes: one bit a dimension a point, for a first pass over every point that reads a
//! quarter of the packed rows' bytes, then an exact pass over the few thousand it keeps.
//!
//! A point's bit `k` is whether its unit vector's component `k` lies above `center[k]` (the
//! mean unit vector of the part: about a mean of zero, the signs split evenly and carry the
//! most). The first pass scores each point as the float query's dot product with the point's
//! signs (+1 above the center, -1 below), by lookup tables of 256 sums a byte of code; the
//! second scores the candidates it kept exactly on their packed rows ([`IntQuery`]). Codes,
//! center and rows are all in the rotated space of [`super::packed_rows`]; the query is
//! rotated where it comes in.
//!
//! Measured on the 2.8M-line tree of `benches/scale_curve.sh` (194,587 chunks of the built-in
//! model, 256 dimensions) with 200 comment lines of that tree as queries: keeping 4,000
//! candidates, 98 % of the exact top 100 and 99.8 % of the exact top 10 came back. Hamming
//! distances between the query's sign bits and the points' kept 83 % of the top 100 with signs
//! taken about zero, 84 % about the center.

use super::IntQuery;
use super::packed_rows::{rotate, row_len, unpack_into};

/// Bytes of code a point of `dim` dimensions.
pub fn code_len(dim: usize) -> usize {
    dim.div_ceil(8)
}

/// The mean of the unit vectors of `rows` (packed rows of `dim` dimensions; a zero row is
/// left out).
pub fn center_of(rows: &[u8], dim: usize) -> Vec<f32> {
    let mut c = CenterSum::new(dim);
    c.add(rows);
    c.center()
}

/// [`center_of`] made a block of rows at a time (a build that writes its rows as they are
/// embedded): the same sums in the same order, so the same center to the bit.
pub struct CenterSum {
    sum: Vec<f64>,
    n: usize,
}

impl CenterSum {
    pub fn new(dim: usize) -> CenterSum {
        CenterSum {
            sum: vec![0f64; dim],
            n: 0,
        }
    }

    /// Adds the rows of `rows` (whole packed rows of the dimension given to
    /// [`CenterSum::new`]).
    pub fn add(&mut self, rows: &[u8]) {
        let dim = self.sum.len();
        if dim == 0 {
            return;
        }
        let mut values = Vec::with_capacity(dim);
        for row in rows.chunks_exact(row_len(dim)) {
            unpack_into(row, dim, &mut values);
            let norm = values
                .iter()
                .map(|&v| f64::from(v) * f64::from(v))
                .sum::<f64>()
                .sqrt();
            if norm == 0.0 {
                continue;
            }
            for (s, &v) in self.sum.iter_mut().zip(&values) {
                *s += f64::from(v) / norm;
            }
            self.n += 1;
        }
    }

    /// The mean of the unit rows added so far.
    pub fn center(&self) -> Vec<f32> {
        let n = self.n;
        self.sum
            .iter()
            .map(|&s| if n == 0 { 0.0 } else { (s / n as f64) as f32 })
            .collect()
    }
}

/// The sign bits of each row of `rows` about `center`: [`code_len`] bytes a point, dimension
/// `8 * j + b` in bit `b` of byte `j`.
pub fn encode_codes(rows: &[u8], dim: usize, center: &[f32]) -> Vec<u8> {
    let len = code_len(dim);
    if dim == 0 {
        return Vec::new();
    }
    let width = row_len(dim);
    let mut out = vec![0u8; rows.len() / width * len];
    let mut values = Vec::with_capacity(dim);
    for (row, code) in rows.chunks_exact(width).zip(out.chunks_exact_mut(len)) {
        unpack_into(row, dim, &mut values);
        let norm = values
            .iter()
            .map(|&v| f32::from(v) * f32::from(v))
            .sum::<f32>()
            .sqrt();
        for (k, &v) in values.iter().enumerate() {
            // v / norm > c  <=>  v > c * norm
            let c = center.get(k).copied().unwrap_or(0.0);
            if f32::from(v) > c * norm {
                code[k / 8] |= 1 << (k % 8);
            }
        }
    }
    out
}

/// A float query made into lookup tables: for each byte of code, the query's dot product with
/// the 256 sign patterns that byte can hold.
pub struct CodeQuery {
    tables: Vec<[f32; 256]>,
}

impl CodeQuery {
    /// The tables of `query`, rotated as the rows are.
    pub fn new(query: &[f32]) -> CodeQuery {
        let tables = rotate(query)
            .chunks(8)
            .map(|q| {
                let mut t = [0f32; 256];
                for (byte, slot) in t.iter_mut().enumerate() {
                    *slot = q
                        .iter()
                        .enumerate()
                        .map(|(b, &v)| if byte & (1 << b) != 0 { v } else { -v })
                        .sum();
                }
                t
            })
            .collect();
        CodeQuery { tables }
    }

    /// The query's dot product with a point's signs.
    pub fn score(&self, code: &[u8]) -> f32 {
        // Four sums: lookups that do not wait on one another.
        let mut s = [0f32; 4];
        for (i, (t, &b)) in self.tables.iter().zip(code).enumerate() {
            s[i % 4] += t[usize::from(b)];
        }
        s.iter().sum()
    }
}

/// One block of points' codes: its first id and their bytes.
pub type CodeBlock<'a> = (usize, &'a [u8]);

/// Reads the packed rows of some points (`ids`, ascending), handing each to `visit`; a point
/// it cannot read is left out.
pub type ReadRows<'a> = dyn Fn(&[usize], &mut dyn FnMut(usize, &[u8])) + 'a;

/// The `k` points nearest `query` (cosine, best first): every live point scored by its code,
/// the best `depth` of those re-scored on their rows, which `rows` reads. Ids in `dead`
/// (sorted) are never returned.
pub fn two_stage_top_k(
    codes: &[CodeBlock<'_>],
    dim: usize,
    dead: &[usize],
    query: &[f32],
    k: usize,
    depth: usize,
    rows: &ReadRows<'_>,
) -> Vec<(usize, f32)> {
    if dim == 0 || k == 0 {
        return Vec::new();
    }
    let depth = depth.max(k);
    let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let coarse = CodeQuery::new(query);
    let mut kept = super::vector_index::best_in_spans(codes, code_len(dim), dead, depth, |c| coarse.score(c));
    if kept.len() > depth {
        kept.select_nth_unstable_by(depth, order);
        kept.truncate(depth);
    }
    // In id order: rows read front to back.
    let mut ids: Vec<usize> = kept.into_iter().map(|p| p.0).collect();
    ids.sort_unstable();
    let exact = IntQuery::new(query);
    let mut best: Vec<(usize, f32)> = Vec::with_capacity(ids.len());
    rows(&ids, &mut |id, row| best.push((id, exact.score(row))));
    best.sort_by(order);
    best.truncate(k);
    best
}

/// [`ReadRows`] over rows in memory: blocks of (first id, rows).
pub fn rows_in(blocks: &[(usize, &[u8])], dim: usize, ids: &[usize], visit: &mut dyn FnMut(usize, &[u8])) {
    let width = row_len(dim);
    for &id in ids {
        let Some(b) = blocks.partition_point(|&(first, _)| first <= id).checked_sub(1) else {
            continue;
        };
        if let Some((first, rows)) = blocks.get(b)
            && let Some(row) = rows.get((id - first) * width..(id - first + 1) * width)
        {
            visit(id, row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::{exact_top_k_in, quantize};

    /// Values of -8..=7 packed two a byte, as [`quantize`] packs them.
    fn pack(values: &[i8]) -> Vec<u8> {
        values
            .chunks(2)
            .map(|p| (p[0] as u8 & 0x0f) | ((p.get(1).copied().unwrap_or(0) as u8) << 4))
            .collect()
    }

    /// A deterministic stream of numbers in -0.5..0.5.
    fn noise(seed: u64) -> impl FnMut() -> f32 {
        let mut state = seed;
        move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        }
    }

    /// `topics` directions, all on one side of the origin (as a model's vectors are: their
    /// mean is far from zero), and `per` points close to each, quantized as a build stores them.
    fn topics(topics: usize, per: usize, dim: usize, seed: u64) -> (Vec<Vec<f32>>, Vec<u8>) {
        let mut next = noise(seed);
        let centers: Vec<Vec<f32>> = (0..topics)
            .map(|_| (0..dim).map(|_| next() * 2.0 + 0.8).collect())
            .collect();
        let mut rows = Vec::with_capacity(topics * per * dim);
        for i in 0..topics * per {
            let c = &centers[i % topics];
            let v: Vec<f32> = c.iter().map(|x| x + next() * 0.6).collect();
            rows.extend(quantize(&v));
        }
        (centers, rows)
    }

    #[test]
    fn codes_are_the_signs_about_the_center() {
        let rows = pack(&[7, -7, 2, 0, /* */ 0, 0, 0, 0]);
        let center = [0.0, 0.0, 0.5, -0.1];
        // 7/|v| > 0, -7 < 0, 2/10.1 = 0.2 < 0.5, 0 > -0.1 * 10.1: bits 0 and 3; a zero row
        // lies on no side.
        let codes = encode_codes(&rows, 4, &center);
        assert_eq!(codes, vec![0b1001, 0]);
        // A zero row has no direction: it leaves the mean alone.
        let mean = center_of(&rows, 4);
        assert!((mean[0] - 7.0 / (102f32).sqrt()).abs() < 1e-6, "{mean:?}");
    }

    #[test]
    fn the_lookup_score_is_the_dot_product_with_the_signs() {
        let dim = 20;
        let q: Vec<f32> = (0..dim).map(|i| (i as f32 * 0.37).sin()).collect();
        let rows = pack(
            &(0..dim)
                .map(|i| if i % 3 == 0 { 5 } else { -5 })
                .collect::<Vec<i8>>(),
        );
        let code = encode_codes(&rows, dim, &vec![0.0; dim]);
        // The query is turned as the rows were.
        let signs: f32 = rotate(&q)
            .iter()
            .enumerate()
            .map(|(i, v)| if i % 3 == 0 { *v } else { -v })
            .sum();
        assert!((CodeQuery::new(&q).score(&code) - signs).abs() < 1e-4);
    }

    #[test]
    fn two_stages_find_what_the_exact_scan_finds() {
        let (dim, per) = (64, 30);
        let (centers, rows) = topics(200, per, dim, 7);
        let width = row_len(dim);
        let n = rows.len() / width;
        let center = center_of(&rows, dim);
        let codes = encode_codes(&rows, dim, &center);
        // Two blocks, as an updated part has; a dead point never comes back.
        let split = 2500;
        let blocks = [
            (0, &codes[..split * code_len(dim)]),
            (split, &codes[split * code_len(dim)..]),
        ];
        let exact_blocks = [(0, &rows[..split * width]), (split, &rows[split * width..])];
        let read =
            |ids: &[usize], visit: &mut dyn FnMut(usize, &[u8])| rows_in(&exact_blocks, dim, ids, visit);
        let mut next = noise(99);
        let (mut found, mut asked) = (0, 0);
        for t in (0..centers.len()).step_by(10) {
            let q: Vec<f32> = centers[t].iter().map(|x| x + next() * 0.6).collect();
            let norm = q.iter().map(|x| x * x).sum::<f32>().sqrt();
            let q: Vec<f32> = q.iter().map(|x| x / norm).collect();
            let exact = exact_top_k_in(&exact_blocks, dim, &[], &q, 10);
            let dead = [exact[0].0];
            // 300 candidates of 6,000 (5 %).
            let got = two_stage_top_k(&blocks, dim, &dead, &q, 10, 300, &read);
            assert_eq!(got.len(), 10);
            assert!(got.iter().all(|(id, _)| *id != dead[0] && *id < n));
            // Scores are the exact ones, best first.
            for (id, s) in &got {
                let row = &rows[id * width..(id + 1) * width];
                assert!((IntQuery::new(&q).score(row) - s).abs() < 1e-6);
            }
            assert!(got.windows(2).all(|w| w[0].1 >= w[1].1));
            found += exact[1..]
                .iter()
                .filter(|e| got.iter().any(|g| g.0 == e.0))
                .count();
            asked += 9;
        }
        assert!(found * 100 >= asked * 95, "{found} of {asked}");
    }

    #[test]
    fn signs_about_the_center_split_evenly() {
        // The points share a direction far from zero: about zero, a dimension's bit is the
        // same for most points (the sign of that direction there), which tells them apart
        // little; about the center, each dimension splits the points about evenly.
        let (dim, points) = (16, 200);
        let (_, rows) = topics(20, 10, dim, 3);
        let lean = |codes: &[u8]| {
            let set = |k: usize| {
                codes
                    .iter()
                    .skip(k / 8)
                    .step_by(2)
                    .filter(|&&b| b & (1 << (k % 8)) != 0)
                    .count()
            };
            (0..dim)
                .map(|k| (set(k) as f64 / points as f64 - 0.5).abs())
                .sum::<f64>()
                / dim as f64
        };
        let zero = lean(&encode_codes(&rows, dim, &[0.0; 16]));
        let centered = lean(&encode_codes(&rows, dim, &center_of(&rows, dim)));
        assert!(zero > 0.3, "{zero}");
        assert!(centered < 0.15, "{centered}");
    }
}
