//! Hot path: extraction of one file per language (parse + tags + imports), with divan.
//! Run `cargo bench --bench extract`. End-to-end corpus figures come from
//! `benches/index_corpus.sh`.

use kenning::{FileParser, LanguageRegistry};

fn main() {
    divan::main();
}

fn fixture(lang: &str) -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/lang")
        .join(lang);
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    entries.sort();
    for p in entries {
        out.extend(std::fs::read(p).unwrap_or_default());
    }
    out
}

#[divan::bench(args = ["rust", "python", "typescript", "javascript", "go", "java", "c", "cpp"])]
fn extract(bencher: divan::Bencher, lang: &str) {
    let Ok(registry) = LanguageRegistry::builtin() else {
        return;
    };
    let Some(spec) = registry.by_name(lang) else {
        return;
    };
    let source = fixture(lang);
    let mut parser = FileParser::new();
    bencher
        .counter(divan::counter::BytesCount::new(source.len()))
        .bench_local(|| parser.parse(spec, divan::black_box(&source)));
}
