//! Inference cost of the learned file ranker: the shipped model scoring candidate feature
//! vectors, against the baseline of summing the same vectors (what any per-candidate pass
//! costs), in one process. Vectors are drawn from a fixed pseudo-random sequence over the
//! columns' ranges.
//!
//! Usage: `cargo bench --bench ranker_inference -- [CANDIDATES]` (default 200,000).

use std::time::Instant;

use kenning::search::{FEATURE_NAMES, LearnedRanker};

fn main() -> anyhow::Result<()> {
    let n: usize = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let model = LearnedRanker::embedded()?;
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let rows: Vec<Vec<f32>> = (0..4096)
        .map(|_| (0..FEATURE_NAMES.len()).map(|_| next() * 3.0 - 0.5).collect())
        .collect();
    let t = Instant::now();
    let mut sum = 0f32;
    for i in 0..n {
        sum += rows[i % rows.len()].iter().sum::<f32>();
    }
    let base = t.elapsed();
    let t = Instant::now();
    let mut score = 0f32;
    for i in 0..n {
        score += model.score(&rows[i % rows.len()]);
    }
    let scored = t.elapsed();
    println!(
        "{} trees: {:.3} us per candidate scored, {:.3} us per candidate summed (baseline), ratio {:.1}x  [{sum:.1} {score:.1}]",
        model.trees(),
        scored.as_secs_f64() * 1e6 / n as f64,
        base.as_secs_f64() * 1e6 / n as f64,
        scored.as_secs_f64() / base.as_secs_f64().max(1e-12)
    );
    Ok(())
}
