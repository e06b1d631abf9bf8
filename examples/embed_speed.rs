//! Embedding throughput of the built-in model on a source tree's chunks:
//! `cargo run --release --example embed_speed -- DIR [THREADS]`.

use std::time::Instant;

use kenning::LanguageRegistry;
use kenning::parse::FileParser;
use kenning::vector::{ChunkConfig, Chunker, Embedder, StaticEmbedder, VectorIndex, quantize};
use rayon::prelude::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args.get(1).cloned().unwrap_or_else(|| ".".into());
    let threads: usize = args.get(2).and_then(|t| t.parse().ok()).unwrap_or(2);
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .ok();
    let registry = LanguageRegistry::builtin().unwrap();
    let files: Vec<_> = ignore::Walk::new(&dir)
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            registry
                .for_file_name(&e.file_name().to_string_lossy())
                .map(|(i, _)| (e.into_path(), i))
        })
        .collect();
    let t0 = Instant::now();
    let texts: Vec<String> = files
        .par_iter()
        .map_init(FileParser::new, |p, (path, li)| {
            let src = std::fs::read(path).unwrap_or_default();
            let spec = &registry.languages()[*li];
            let s = p.parse(spec, &src);
            Chunker::new(ChunkConfig::default())
                .chunk(&path.to_string_lossy(), &src, &s)
                .into_iter()
                .map(|c| c.text)
                .collect::<Vec<_>>()
        })
        .flatten()
        .collect();
    let t_chunk = t0.elapsed();
    let model = StaticEmbedder::builtin().unwrap();
    let t1 = Instant::now();
    let vectors: Vec<Vec<f32>> = texts
        .par_iter()
        .map(|t| model.embed(&[t.as_str()]).unwrap().remove(0))
        .collect();
    let t_embed = t1.elapsed();
    let flat: Vec<u8> = vectors.iter().flat_map(|v| quantize(v)).collect();
    let t2 = Instant::now();
    let index = VectorIndex::build(model.dim(), flat).unwrap();
    let t_hnsw = t2.elapsed();
    // Recall@10 against brute force, queries: every 200th chunk's own vector, and latency.
    let queries: Vec<&Vec<f32>> = vectors.iter().step_by((vectors.len() / 200).max(1)).collect();
    // Two counts: the exact top-10 ids found, and results scoring at least the exact 10th
    // (vendored trees hold identical chunks, whose ties make id overlap understate recall).
    let (mut hit, mut hit_ties, mut lat) = (0usize, 0usize, Vec::new());
    for q in &queries {
        let t = Instant::now();
        let approx = index.search(q, 10);
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        let exact = index.brute_force(q, 10);
        let tenth = exact.last().map_or(f32::MIN, |e| e.1);
        hit += exact.iter().filter(|e| approx.iter().any(|a| a.0 == e.0)).count();
        hit_ties += approx.iter().filter(|a| a.1 >= tenth - 1e-6).count().min(10);
    }
    lat.sort_by(f64::total_cmp);
    println!(
        "recall@10 {:.3} (ties counted: {:.3}) over {} queries; search p50 {:.2} ms, p95 {:.2} ms",
        hit as f64 / (queries.len() * 10) as f64,
        hit_ties as f64 / (queries.len() * 10) as f64,
        queries.len(),
        lat[lat.len() / 2],
        lat[lat.len() * 95 / 100]
    );
    println!(
        "{} files, {} chunks: parse+chunk {:.2}s, embed {:.2}s ({:.0} chunks/s on {threads} threads), hnsw {:.2}s, {} vectors",
        files.len(),
        texts.len(),
        t_chunk.as_secs_f64(),
        t_embed.as_secs_f64(),
        texts.len() as f64 / t_embed.as_secs_f64(),
        t_hnsw.as_secs_f64(),
        index.len()
    );
}
