//! Resolution cost per file on code shapes that once made it super-linear, with divan.
//! `cargo bench --bench resolve_shapes`.
//!
//! Each case writes a synthetic tree in two sizes and builds its graph (no lexical part, no
//! vectors, no history). Throughput (files per second) must stay about the same from the small
//! size to the large one: when it falls with size, resolving one reference costs more as the
//! repository grows. The Java case is jackson-databind's shape: large packages whose files
//! import each other's package with `import pkg.*`; a resolver that walked every file of a
//! glob-imported package (and their glob imports) per reference spent 560 s on it.

use kenning::{IndexBuilder, IndexConfig, NoProgress};

fn main() {
    divan::main();
}

/// `n` Java classes in four packages; every file glob-imports all four and names JDK types
/// and classes of the other packages.
fn java_tree(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    for i in 0..n {
        let pkg = i % 4;
        let folder = dir.path().join(format!("src/main/java/org/shape/p{pkg}"));
        std::fs::create_dir_all(&folder).unwrap_or_else(|e| panic!("{e}"));
        let mut body = format!("package org.shape.p{pkg};\n\n");
        for q in 0..4 {
            body.push_str(&format!("import org.shape.p{q}.*;\n"));
        }
        body.push_str("import java.util.*;\n\n");
        body.push_str(&format!("public class C{i} extends Base{pkg} {{\n"));
        for k in 0..20 {
            let other = (i * 7 + k * 13) % n;
            body.push_str(&format!(
                "    public String m{k}(List<String> xs, Map<String, Integer> m, C{other} c) {{\n        StringBuilder b = new StringBuilder();\n        Optional<String> o = Optional.empty();\n        return c.m{k}(xs, m, null) + b.toString() + o.orElse(\"\");\n    }}\n"
            ));
        }
        body.push_str("}\n");
        std::fs::write(folder.join(format!("C{i}.java")), body).unwrap_or_else(|e| panic!("{e}"));
    }
    for pkg in 0..4 {
        let folder = dir.path().join(format!("src/main/java/org/shape/p{pkg}"));
        std::fs::write(
            folder.join(format!("Base{pkg}.java")),
            format!("package org.shape.p{pkg};\n\npublic class Base{pkg} {{ }}\n"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    dir
}

#[divan::bench(args = [100, 800], sample_count = 3, sample_size = 1)]
fn java_glob_packages(bencher: divan::Bencher, files: usize) {
    let tree = java_tree(files);
    let config = IndexConfig {
        full: true,
        lexical: false,
        vectors: false,
        history: false,
        index_dir: Some(tree.path().join(".kenning")),
        ..IndexConfig::default()
    };
    bencher
        .counter(divan::counter::ItemsCount::new(files))
        .bench_local(|| {
            IndexBuilder::new(tree.path(), &config, &NoProgress)
                .and_then(|b| b.build())
                .unwrap_or_else(|e| panic!("build: {e}"))
        });
}
