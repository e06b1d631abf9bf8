//! The physical floor of this design, for `benches/index_corpus.sh`: walk a tree with the
//! same rules as the indexer, read every file with a grammar and parse it with tree-sitter in
//! parallel — no queries, no extraction, no storage.
//!
//! `cargo run --release --example parse_floor -- DIR [THREADS]`

use std::time::Instant;

use kenning::LanguageRegistry;
use kenning::index::{Reader, RepoWalker, WalkConfig};
use rayon::prelude::*;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: parse_floor DIR [THREADS]"))?;
    let threads: usize = args.next().map(|t| t.parse()).transpose()?.unwrap_or(0);
    let root = std::path::Path::new(&dir).canonicalize()?;
    let registry = LanguageRegistry::builtin()?;
    let t0 = Instant::now();
    let config = WalkConfig::default();
    let walked = RepoWalker::new(&root, &config, registry, None).walk();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let (files, lines) = pool.install(|| {
        walked
            .candidates
            .par_iter()
            .map_init(tree_sitter::Parser::new, |parser, c| {
                let Ok(bytes) = std::fs::read(&c.abs) else {
                    return (0u64, 0u64);
                };
                // The parse floor is code: files read as text are not parsed.
                let Reader::Grammar(language) = c.language else {
                    return (0, 0);
                };
                let Some(spec) = registry.languages().get(language) else {
                    return (0, 0);
                };
                if parser.set_language(&spec.grammar).is_err() {
                    return (0, 0);
                }
                let parsed = parser.parse(&bytes, None).is_some();
                (
                    u64::from(parsed),
                    bytes.iter().filter(|&&b| b == b'\n').count() as u64,
                )
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    });
    println!(
        "parsed {files} files, {lines} lines in {:.2}s",
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
