//! Packed rows: how a vector is stored, four bits a dimension.
//!
//! A vector is first turned by a fixed random rotation (signs flipped by a seeded sequence,
//! then a Walsh-Hadamard transform over each power-of-two block of the dimensions): cosines
//! are unchanged, and the weight of a few large components is spread over all of them, so
//! that each component is as good a bet as any other. Then it is scaled (the largest
//! component at 7 or a little past it, whichever rounds closest: [`quantize`]) and rounded
//! to -7..=7, two values a byte (dimension `2j` in the low four bits of byte `j`, `2j + 1`
//! in the high four, two's complement).
//!
//! Why: the rows were int8 (a byte a dimension), half of a semantic part and a quarter of the
//! index. On the 402 queries of `benches/search_set` (8 languages, 24 repositories), four bits
//! without the rotation lost 0.012 of the semantic ranking's NDCG@10 against int8; with it,
//! 0.001 to 0.008 by the scaling, and the default ranking's NDCG@10 0.836 became 0.836 to
//! 0.834 (`BENCHMARKS.md`, speed targets, 2026-12-07 night).
//!
//! A query is turned by the same rotation ([`rotate`]) and kept in floats or in 15 bits
//! ([`IntQuery`](super::IntQuery)); every scan rotates the query it is given.

/// Bytes of a packed row of `dim` dimensions.
pub fn row_len(dim: usize) -> usize {
    dim.div_ceil(2)
}

/// The largest magnitude a packed value takes.
const LEVELS: f32 = 7.0;

/// The seed of the rotation's signs: fixed, since rows and queries must be turned alike.
const SIGN_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// `v` turned by the rotation every row and query shares: an orthogonal map, so dot products
/// and norms are those of `v`.
pub fn rotate(v: &[f32]) -> Vec<f32> {
    let mut out: Vec<f32> = v.iter().zip(signs()).map(|(&x, s)| x * s).collect();
    let mut rest = out.as_mut_slice();
    while !rest.is_empty() {
        // The largest power of two that fits: 384 dimensions are blocks of 256 and 128.
        let block = 1usize << (usize::BITS - 1 - rest.len().leading_zeros());
        let (head, tail) = rest.split_at_mut(block);
        walsh_hadamard(head);
        rest = tail;
    }
    out
}

/// +1 or -1, a dimension, from a xorshift sequence.
fn signs() -> impl Iterator<Item = f32> {
    let mut state = SIGN_SEED;
    std::iter::repeat_with(move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if state & 1 == 0 { 1.0 } else { -1.0 }
    })
}

/// The orthonormal Walsh-Hadamard transform of `x` (its length a power of two), in place.
fn walsh_hadamard(x: &mut [f32]) {
    let n = x.len();
    let mut h = 1;
    while h < n {
        for i in (0..n).step_by(2 * h) {
            for j in i..i + h {
                let (a, b) = (x[j], x[j + h]);
                x[j] = a + b;
                x[j + h] = a - b;
            }
        }
        h *= 2;
    }
    let scale = 1.0 / (n as f32).sqrt();
    for v in x.iter_mut() {
        *v *= scale;
    }
}

/// The scales tried for a row, as shares of the one that maps its largest component to 7:
/// rounding more of the middle components finely can be worth clipping the largest few.
const SCALES: [f32; 10] = [1.0, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55];

/// A vector as it is stored: rotated, scaled, rounded to -7..=7 and packed ([`row_len`]
/// bytes; a zero or non-finite vector packs to zeros). Of the [`SCALES`], the one whose
/// rounded row lies closest in direction to the rotated vector is kept (on 256 Gaussian
/// components, a mean cosine of 0.9939 to the vector against 0.9920 for the largest
/// component at 7 alone; int8 rows had 0.99998).
pub fn quantize(v: &[f32]) -> Vec<u8> {
    let r = rotate(v);
    let max = r.iter().fold(0f32, |m, x| m.max(x.abs()));
    let mut out = vec![0u8; row_len(v.len())];
    if max == 0.0 || !max.is_finite() {
        return out;
    }
    // Rounded half away from zero, as `f32::round`, by a truncating cast: `round` is a call
    // into libm on x86-64's baseline, and this runs ten times a dimension a chunk.
    let level = |x: f32, s: f32| {
        let y = (x * s).clamp(-LEVELS, LEVELS);
        ((y.abs() + 0.5) as i32 as f32).copysign(y)
    };
    // The cosine of the rounded row and the vector, but for the vector's norm (the same for
    // every scale). Eight sums side by side, so the compiler keeps them in vector registers
    // (one running sum is added in order and stays scalar; this runs ten times a chunk).
    let fit = |s: f32| {
        const LANES: usize = 8;
        let (mut dot, mut norm) = ([0f32; LANES], [0f32; LANES]);
        let mut chunks = r.chunks_exact(LANES);
        for c in &mut chunks {
            for i in 0..LANES {
                let l = level(c[i], s);
                dot[i] += l * c[i];
                norm[i] += l * l;
            }
        }
        let (mut d, mut n) = (dot.iter().sum::<f32>(), norm.iter().sum::<f32>());
        for &x in chunks.remainder() {
            let l = level(x, s);
            d += l * x;
            n += l * l;
        }
        if n > 0.0 { d / n.sqrt() } else { f32::MIN }
    };
    let s = SCALES
        .iter()
        .map(|f| LEVELS / (max * f))
        .map(|s| (s, fit(s)))
        .fold(
            (LEVELS / max, f32::MIN),
            |best, c| if c.1 > best.1 { c } else { best },
        )
        .0;
    for (k, &x) in r.iter().enumerate() {
        let l = level(x, s) as i8;
        out[k / 2] |= ((l as u8) & 0x0f) << (4 * (k % 2));
    }
    out
}

/// The two values of a packed byte: the low four bits, then the high four.
#[inline]
pub fn pair(b: u8) -> (i8, i8) {
    (((b << 4) as i8) >> 4, (b as i8) >> 4)
}

/// A packed row's `dim` values.
pub fn unpack(row: &[u8], dim: usize) -> Vec<i8> {
    let mut out = Vec::with_capacity(dim);
    unpack_into(row, dim, &mut out);
    out
}

/// [`unpack`] into `out` (cleared first), for a loop over many rows.
pub fn unpack_into(row: &[u8], dim: usize, out: &mut Vec<i8>) {
    out.clear();
    out.extend(
        row.iter()
            .flat_map(|&b| {
                let (lo, hi) = pair(b);
                [lo, hi]
            })
            .take(dim),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stream of numbers in -0.5..0.5.
    fn noise(seed: u64) -> impl FnMut() -> f32 {
        let mut s = seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 10_000) as f32 / 10_000.0 - 0.5
        }
    }

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn the_rotation_keeps_dot_products_for_any_dimension() {
        for dim in [1, 7, 64, 256, 384, 1536] {
            let mut n = noise(dim as u64);
            let a: Vec<f32> = (0..dim).map(|_| n()).collect();
            let b: Vec<f32> = (0..dim).map(|_| n()).collect();
            let (ra, rb) = (rotate(&a), rotate(&b));
            assert_eq!(ra.len(), dim);
            assert!((dot(&ra, &rb) - dot(&a, &b)).abs() < 1e-3, "dim {dim}");
            assert!((dot(&ra, &ra) - dot(&a, &a)).abs() < 1e-3, "dim {dim}");
        }
    }

    #[test]
    fn the_rotation_spreads_a_spike_over_every_dimension() {
        let mut spike = vec![0f32; 256];
        spike[3] = 1.0;
        let r = rotate(&spike);
        assert!(r.iter().all(|x| (x.abs() - 1.0 / 16.0).abs() < 1e-6), "{r:?}");
    }

    #[test]
    fn packed_values_round_trip_and_the_largest_is_seven() {
        for dim in [1, 2, 5, 256] {
            let mut n = noise(7 + dim as u64);
            let v: Vec<f32> = (0..dim).map(|_| n()).collect();
            let row = quantize(&v);
            assert_eq!(row.len(), row_len(dim));
            let values = unpack(&row, dim);
            assert_eq!(values.len(), dim);
            assert_eq!(values.iter().map(|x| x.abs()).max(), Some(7), "dim {dim}");
            // The values are the rotated vector's, scaled by one of the scales and rounded:
            // in the same order, the largest at 7.
            let r = rotate(&v);
            for (a, b) in (0..dim).flat_map(|a| (0..dim).map(move |b| (a, b))) {
                if r[a] < r[b] {
                    assert!(values[a] <= values[b], "dim {dim}: {a} {b}");
                }
            }
            let top = r.iter().map(|x| x.abs()).fold(0f32, f32::max);
            let at = r.iter().position(|x| x.abs() == top).unwrap();
            assert_eq!(values[at].abs(), 7);
        }
        for b in 0..=255u8 {
            let (lo, hi) = pair(b);
            assert!((-8..8).contains(&lo) && (-8..8).contains(&hi));
            assert_eq!(((lo as u8) & 0x0f) | ((hi as u8) << 4), b);
        }
        assert_eq!(quantize(&[0.0; 4]), vec![0, 0]);
        assert_eq!(quantize(&[f32::NAN, 1.0]), vec![0]);
    }

    #[test]
    fn four_bit_cosines_stay_close_to_the_float_ones() {
        let dim = 256;
        let mut n = noise(11);
        let unit = |v: Vec<f32>| {
            let norm = dot(&v, &v).sqrt();
            v.into_iter().map(|x| x / norm).collect::<Vec<f32>>()
        };
        let mut worst = 0f32;
        for _ in 0..50 {
            let a = unit((0..dim).map(|_| n()).collect());
            let b = unit(a.iter().map(|x| x + 0.5 * n() / 16.0).collect());
            let values: Vec<f32> = unpack(&quantize(&b), dim).into_iter().map(f32::from).collect();
            let ra = rotate(&a);
            let approx = dot(&ra, &values) / dot(&values, &values).sqrt();
            worst = worst.max((approx - dot(&a, &b)).abs());
        }
        assert!(worst < 0.02, "cosine off by {worst}");
    }
}
