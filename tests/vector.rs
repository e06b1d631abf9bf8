//! The vector layer: chunking along the syntax tree, the embedded model, and the HNSW index
//! against brute force (property test on random data, and on real code: this repository's own
//! sources embedded with the built-in model).

use kenning::LanguageRegistry;
use kenning::parse::FileParser;
use kenning::vector::{ChunkConfig, Chunker, Embedder, StaticEmbedder, VectorIndex, quantize};
use proptest::prelude::*;

fn chunks_of(path: &str, lang: &str, src: &str, config: ChunkConfig) -> Vec<kenning::vector::Chunk> {
    let registry = LanguageRegistry::builtin().unwrap();
    let spec = registry.by_name(lang).unwrap();
    let symbols = FileParser::new().parse(spec, src.as_bytes());
    Chunker::new(config).chunk(path, src.as_bytes(), &symbols)
}

#[test]
fn chunks_follow_definitions_with_headers() {
    let src = r#"import os
import sys

class Session:
    """Keeps settings."""
    timeout = 30

    def send(self, request):
        prepared = self.prepare(request)
        return prepared

    def close(self):
        pass

def helper():
    return 1

def other():
    return 2
"#;
    let chunks = chunks_of("pkg/sessions.py", "python", src, ChunkConfig::default());
    let heads: Vec<(u32, u32, &str)> = chunks
        .iter()
        .map(|c| (c.start_line, c.end_line, c.text.lines().next().unwrap()))
        .collect();
    assert_eq!(
        heads,
        vec![
            (1, 3, "pkg/sessions.py · module"),
            (4, 7, "pkg/sessions.py · class Session"),
            (8, 10, "pkg/sessions.py · Session · def send(self, request)"),
            (12, 13, "pkg/sessions.py · Session · def close(self)"),
            (15, 19, "pkg/sessions.py · def helper()"),
        ],
        "{chunks:#?}"
    );
    // The class chunk holds its header, doc and fields, not its methods' bodies.
    assert!(chunks[1].text.contains("timeout = 30") && !chunks[1].text.contains("prepared"));
    // Small neighbours are merged.
    assert!(chunks[4].text.contains("def other()"));
    // Ids are content hashes: the same text, the same id.
    let again = chunks_of("pkg/sessions.py", "python", src, ChunkConfig::default());
    assert_eq!(chunks, again);
}

#[test]
fn long_bodies_are_split_into_overlapping_windows() {
    let mut src = String::from("fn long() {\n");
    for i in 0..200 {
        src.push_str(&format!("    let x{i} = {i};\n"));
    }
    src.push_str("}\n");
    let config = ChunkConfig::default();
    let chunks = chunks_of("src/lib.rs", "rust", &src, config.clone());
    assert!(chunks.len() >= 4, "{}", chunks.len());
    for w in chunks.windows(2) {
        assert!(
            w[1].start_line <= w[0].end_line,
            "windows overlap: {:?} {:?}",
            (w[0].start_line, w[0].end_line),
            (w[1].start_line, w[1].end_line)
        );
        assert!(w[0].end_line - w[0].start_line < config.max_lines);
    }
    assert_eq!(chunks.first().unwrap().start_line, 1);
    assert_eq!(chunks.last().unwrap().end_line, 202);
    assert!(
        chunks
            .iter()
            .all(|c| c.text.starts_with("src/lib.rs · fn long()"))
    );
}

fn unit(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-9);
    v.iter_mut().for_each(|x| *x /= n);
}

fn random_vectors(seed: u64, n: usize, dim: usize) -> Vec<Vec<f32>> {
    let mut s = seed | 1;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f32 / (1u64 << 53) as f32 - 0.5
    };
    (0..n)
        .map(|_| {
            let mut v: Vec<f32> = (0..dim).map(|_| next()).collect();
            unit(&mut v);
            v
        })
        .collect()
}

/// Mean share of the exact top-10 that the index returns.
fn recall_at_10(index: &VectorIndex, queries: &[Vec<f32>]) -> f64 {
    let mut hit = 0usize;
    for q in queries {
        let exact: Vec<usize> = index.brute_force(q, 10).into_iter().map(|(i, _)| i).collect();
        let approx: Vec<usize> = index.search(q, 10).into_iter().map(|(i, _)| i).collect();
        hit += exact.iter().filter(|i| approx.contains(i)).count();
    }
    hit as f64 / (queries.len() * 10) as f64
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3, ..ProptestConfig::default() })]

    #[test]
    fn hnsw_top10_agrees_with_brute_force_on_random_vectors(seed in any::<u64>()) {
        let dim = 64;
        let data = random_vectors(seed, 2000, dim);
        let flat: Vec<u8> = data.iter().flat_map(|v| quantize(v)).collect();
        let index = VectorIndex::build(dim, flat).unwrap();
        let queries = random_vectors(seed.wrapping_add(1), 50, dim);
        let r = recall_at_10(&index, &queries);
        prop_assert!(r >= 0.95, "recall@10 {r}");
    }

    #[test]
    fn inserted_points_are_found_and_tombstones_are_never_returned(seed in any::<u64>()) {
        let dim = 64;
        let data = random_vectors(seed, 2000, dim);
        let flat: Vec<u8> = data.iter().flat_map(|v| quantize(v)).collect();
        let width = kenning::vector::row_len(dim);
        let mut index = VectorIndex::build(dim, flat[..1500 * width].to_vec()).unwrap();
        index.insert(&flat[1500 * width..]).unwrap();
        let dead: Vec<usize> = (0..2000).filter(|i| i % 7 == 0).collect();
        index.set_dead(dead.clone());
        let queries = random_vectors(seed.wrapping_add(1), 50, dim);
        for q in &queries {
            prop_assert!(index.search(q, 10).iter().all(|(i, _)| i % 7 != 0));
        }
        // Inserted points are reachable: each finds itself.
        for i in (1500..2000).filter(|i| i % 7 != 0).step_by(25) {
            prop_assert_eq!(index.search(&data[i], 1)[0].0, i);
        }
        let r = recall_at_10(&index, &queries);
        prop_assert!(r >= 0.95, "recall@10 after inserts and deletes {r}");
    }
}

#[test]
fn hnsw_top10_agrees_with_brute_force_on_real_code_and_survives_a_reload() {
    let registry = LanguageRegistry::builtin().unwrap();
    let model = StaticEmbedder::builtin().unwrap();
    let mut texts = Vec::new();
    for entry in ignore::Walk::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src")).flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "rs") {
            let src = std::fs::read(path).unwrap();
            let spec = registry.by_name("rust").unwrap();
            let symbols = FileParser::new().parse(spec, &src);
            let rel = path.to_string_lossy().to_string();
            texts.extend(
                Chunker::new(ChunkConfig::default())
                    .chunk(&rel, &src, &symbols)
                    .into_iter()
                    .map(|c| c.text),
            );
        }
    }
    assert!(texts.len() > 300, "{}", texts.len());
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = model.embed(&refs).unwrap();
    let flat: Vec<u8> = vectors.iter().flat_map(|v| quantize(v)).collect();
    let index = VectorIndex::build(model.dim(), flat.clone()).unwrap();
    let queries = model
        .embed(&[
            "write a file atomically",
            "resolve an import to a module",
            "parse command line arguments",
            "rank files by bm25",
            "lock the index for a build",
        ])
        .unwrap();
    let mut qs = queries.clone();
    qs.extend(vectors.iter().step_by(17).cloned());
    let r = recall_at_10(&index, &qs);
    assert!(r >= 0.95, "recall@10 on real code {r}");

    let dir = tempfile::tempdir().unwrap();
    index.dump(dir.path()).unwrap();
    let reloaded = VectorIndex::load(dir.path(), model.dim(), flat).unwrap();
    for q in &queries {
        // The reloaded graph is the same graph: the same answers.
        assert_eq!(index.search(q, 10), reloaded.search(q, 10));
        assert!(recall_at_10(&reloaded, std::slice::from_ref(q)) >= 0.9);
    }
}

#[test]
fn an_empty_graph_dumps_reloads_and_takes_inserts() {
    let dir = tempfile::tempdir().unwrap();
    let index = VectorIndex::build(8, Vec::new()).unwrap();
    assert!(index.search(&[0.5; 8], 10).is_empty());
    index.dump(dir.path()).unwrap();
    let mut index = VectorIndex::load(dir.path(), 8, Vec::new()).unwrap();
    let mut v = vec![0.1f32, 0.9, 0.0, 0.0, 0.3, 0.0, 0.0, 0.1];
    unit(&mut v);
    index.insert(&quantize(&v)).unwrap();
    assert_eq!(index.search(&v, 1)[0].0, 0);
}

#[test]
fn quantization_keeps_direction_for_high_dimensional_vectors() {
    // 1536 dimensions: components near 1/40, which a fixed scale would crush to a few
    // levels; each vector's own scale (after the rotation) keeps cosine within a small
    // error. Four bits (15 levels) leave a vector about 0.985 of the way to its own copy.
    let vs = random_vectors(7, 50, 1536);
    for pair in vs.windows(2) {
        let exact: f32 = pair[0].iter().zip(&pair[1]).map(|(a, b)| a * b).sum();
        let approx = kenning::vector::score(&pair[0], &quantize(&pair[1]));
        assert!((exact - approx).abs() < 0.02, "{exact} vs {approx}");
        let own = kenning::vector::score(&pair[0], &quantize(&pair[0]));
        assert!(own > 0.98, "a vector against its own quantized copy: {own}");
    }
}

#[test]
fn the_integer_scan_scores_as_the_float_cosine_does_at_every_dimension() {
    // The scan scores with the query made integer once; it must rank as the float cosine
    // does: scores within 1e-4, at the built-in model's 256, MiniLM's 384 and a provider's
    // 3072 dimensions (where the integer sums come closest to their bound).
    for dim in [256, 384, 3072] {
        let vs = random_vectors(dim as u64, 40, dim);
        let mut signs = vs.clone();
        // Vectors with extreme components too: every component of one size.
        for v in signs.iter_mut() {
            for x in v.iter_mut() {
                *x = if *x >= 0.0 { 1.0 } else { -1.0 };
            }
            unit(v);
        }
        for q in vs.iter().chain(&signs).take(20) {
            let int = kenning::vector::IntQuery::new(q);
            for v in vs.iter().chain(&signs) {
                let quantized = quantize(v);
                let float = kenning::vector::score(q, &quantized);
                let integer = int.score(&quantized);
                assert!((float - integer).abs() < 1e-4, "dim {dim}: {float} vs {integer}");
            }
        }
        assert_eq!(
            kenning::vector::IntQuery::new(&vec![0.0; dim]).score(&quantize(&vs[0])),
            0.0
        );
    }
}
