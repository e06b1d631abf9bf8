//! The semantic part end to end: built on request and kept by later builds, unchanged chunks
//! never re-embedded, `ken search --semantic` and `--hybrid`, and a clear error without it.

mod support;

use kenning::index::{IndexConfig, IndexSnapshot, VectorStore};
use support::{build, index_dir, ken, materialize, stderr, stdout};

const REPO: &str = r#"
//- src/cache.py
class LruCache:
    """Keeps the most recently used entries and evicts the oldest."""
    def evict_oldest(self):
        self.entries.pop(0)
//- src/network.py
def retry_request(url, attempts=3):
    """Sends an HTTP request again when the connection drops."""
    for _ in range(attempts):
        try:
            return send(url)
        except ConnectionError:
            continue
//- src/parse.py
def parse_config_file(path):
    """Reads the TOML configuration file."""
    return load_toml(path)
"#;

fn store_of(root: &std::path::Path) -> VectorStore {
    let snap = IndexSnapshot::open(&index_dir(root, &IndexConfig::default())).unwrap();
    let part = &snap.manifest.parts["vectors"];
    let bytes = std::fs::read(snap.generation_dir().join(part["file"].as_str().unwrap())).unwrap();
    postcard::from_bytes(&bytes).unwrap()
}

#[test]
fn semantic_part_is_kept_and_only_changed_files_are_embedded_again() {
    let repo = materialize(REPO);
    let config = IndexConfig {
        vectors: true,
        ..IndexConfig::default()
    };
    let r = build(repo.path(), &config);
    assert_eq!(r.manifest.parts["vectors"]["files_chunked"], 3);
    let before = store_of(repo.path());

    std::fs::write(
        repo.path().join("src/parse.py"),
        "def parse_config_file(path):\n    return load_yaml(path)\n",
    )
    .unwrap();
    // A plain build keeps the part and embeds only the changed file.
    let r = build(repo.path(), &IndexConfig::default());
    assert_eq!(
        r.manifest.parts["vectors"]["files_chunked"], 1,
        "{}",
        r.manifest.parts["vectors"]
    );
    let after = store_of(repo.path());
    assert_eq!(
        before.idf, after.idf,
        "an incremental build keeps the IDF of the full build"
    );
    for (a, b) in before.files.iter().zip(&after.files) {
        if a.path != "src/parse.py" {
            assert_eq!(
                a, b,
                "{} was not changed and keeps its chunks and vectors",
                a.path
            );
        }
    }
    // Nothing changed: the part is carried over as is.
    let r = build(repo.path(), &IndexConfig::default());
    assert_eq!(r.manifest.parts["vectors"]["files_chunked"], 0);
    assert_eq!(store_of(repo.path()), after);
}

#[test]
fn semantic_and_hybrid_search_find_code_by_meaning() {
    let repo = materialize(REPO);
    let out = ken(&["index", "build", ".", "--semantic"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let out = ken(
        &[
            "search",
            "--semantic",
            "try sending again after a dropped connection",
            "--json",
        ],
        repo.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["hits"][0]["path"], "src/network.py", "{v}");
    assert_eq!(v["hits"][0]["symbol"], "network.retry_request");

    let out = ken(
        &["search", "--hybrid", "evict the least recently used entry"],
        repo.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("src/cache.py"), "{}", stdout(&out));
}

#[test]
fn semantic_search_without_the_part_says_how_to_add_it() {
    let repo = materialize(REPO);
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let out = ken(&["search", "--semantic", "anything"], repo.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("run `ken index build --semantic`"),
        "{}",
        stderr(&out)
    );
}
