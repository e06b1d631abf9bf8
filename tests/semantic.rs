//! The semantic part end to end: built by default, unchanged chunks never re-embedded,
//! `ken search --semantic`, `--hybrid` (the default) and `--lexical`, and a clear error
//! without the part.

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
//- src/render.py
def render_template(name, context):
    """Fills an HTML template with values."""
    return engine.render(name, context)
//- src/auth.py
def check_password(user, password):
    """Compares a password with the stored hash."""
    return verify(user.hash, password)
//- src/report.py
def export_csv(rows, path):
    """Writes rows to a CSV file."""
    write_rows(path, rows)
"#;

/// The build's vector part entry as the manifest writes it.
fn vectors_json(r: &kenning::BuildReport) -> serde_json::Value {
    serde_json::to_value(r.manifest.parts.vectors.as_ref().unwrap()).unwrap()
}

fn store_of(root: &std::path::Path) -> VectorStore {
    let snap = IndexSnapshot::open(&index_dir(root, &IndexConfig::default())).unwrap();
    let part = snap.manifest.parts.vectors.as_ref().unwrap();
    let bytes = std::fs::read(snap.generation_dir().join(&part.file)).unwrap();
    VectorStore::decode(&bytes).unwrap()
}

#[test]
fn semantic_part_is_kept_and_only_changed_files_are_embedded_again() {
    let repo = materialize(REPO);
    let r = build(repo.path(), &IndexConfig::default());
    assert_eq!(r.manifest.parts.vectors.as_ref().unwrap().files_chunked, 6);
    let before = store_of(repo.path());

    std::fs::write(
        repo.path().join("src/parse.py"),
        "def parse_config_file(path):\n    return load_yaml(path)\n",
    )
    .unwrap();
    // The next build embeds only the changed file.
    let r = build(repo.path(), &IndexConfig::default());
    assert_eq!(
        r.manifest.parts.vectors.as_ref().unwrap().files_chunked,
        1,
        "{:?}",
        r.manifest.parts.vectors
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
    assert_eq!(r.manifest.parts.vectors.as_ref().unwrap().files_chunked, 0);
    assert_eq!(store_of(repo.path()), after);
}

/// An update takes the vectors of the chunks a changed file had before instead of embedding
/// them again: with a line inserted on top, only the chunk that holds it is new text.
#[test]
fn unchanged_chunks_of_changed_files_are_taken_not_embedded() {
    let repo = materialize(REPO);
    let path = repo.path().join("src/parse.py");
    let text: String = ["load", "check", "merge", "report"]
        .iter()
        .map(|v| {
            let steps: String = (0..8).map(|i| format!("    step_{i} = {v}_part(path, {i})\n")).collect();
            format!("def {v}_config(path):\n    \"\"\"{v} the configuration.\"\"\"\n{steps}    return {v}(path)\n\n\n")
        })
        .collect();
    std::fs::write(&path, &text).unwrap();
    build(repo.path(), &IndexConfig::default());
    let own = store_of(repo.path())
        .files
        .iter()
        .find(|f| f.path == "src/parse.py")
        .unwrap()
        .chunks
        .len() as u64;
    assert!(own >= 4, "{own} chunks");
    std::fs::write(&path, format!("# a line on top\n{text}")).unwrap();
    let r = build(repo.path(), &IndexConfig::default());
    let v = r.manifest.parts.vectors.as_ref().unwrap();
    assert_eq!(v.files_chunked, 1);
    let embedded = v.chunks_embedded.unwrap();
    assert!(embedded <= 1, "{embedded} of {own} chunks embedded again");
}

#[test]
fn deleted_chunks_are_never_returned_and_many_deletions_rebuild_the_graph() {
    let repo = materialize(REPO);
    assert!(
        ken(&["index", "build", ".", "--semantic"], repo.path())
            .status
            .success()
    );
    std::fs::write(
        repo.path().join("src/network.py"),
        "def unrelated():\n    return 42\n",
    )
    .unwrap();
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let out = ken(
        &[
            "search",
            "--semantic",
            "send the request again when the connection drops",
            "--json",
        ],
        repo.path(),
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    for h in v["chunks"].as_array().unwrap() {
        assert!(
            !(h["path"] == "src/network.py" && h["end_line"].as_u64().unwrap() > 2),
            "a dead chunk came back: {h}"
        );
    }
    // Removing most files puts the share of dead points over the threshold: a rebuild.
    for f in ["src/cache.py", "src/parse.py", "src/render.py", "src/auth.py"] {
        std::fs::remove_file(repo.path().join(f)).unwrap();
    }
    let r = build(repo.path(), &IndexConfig::default());
    let part = &vectors_json(&r);
    assert_eq!(part["graph_rebuilt"], true, "{part}");
    assert_eq!(part["dead"], 0, "{part}");
    assert_eq!(part["graph_points"], part["chunks"], "{part}");
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
    assert_eq!(v["chunks"][0]["path"], "src/network.py", "{v}");
    assert_eq!(v["chunks"][0]["symbol"], "network.retry_request");

    let out = ken(
        &["search", "--hybrid", "evict the least recently used entry"],
        repo.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("src/cache.py"), "{}", stdout(&out));

    // Hybrid is the default ranking; --lexical is BM25 alone.
    let out = ken(
        &["search", "evict the least recently used entry", "--json"],
        repo.path(),
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["mode"], "hybrid", "{v}");
    assert_eq!(v["files"][0]["path"], "src/cache.py", "{v}");
    let out = ken(&["search", "--lexical", "evict", "--json"], repo.path());
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        v["mode"] == "lexical" && !v["hits"].as_array().unwrap().is_empty(),
        "{v}"
    );
}

#[test]
fn semantic_search_without_the_part_says_how_to_add_it() {
    let repo = materialize(REPO);
    assert!(
        ken(&["index", "build", ".", "--no-semantic"], repo.path())
            .status
            .success()
    );
    let out = ken(&["search", "--semantic", "anything"], repo.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("run `ken index build` without it"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn scanning_and_the_hnsw_graph_give_the_same_answer() {
    let repo = materialize(REPO);
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let run = |mode: &str| {
        let out = std::process::Command::new(support::ken_bin())
            .args([
                "search",
                "--semantic",
                "compare a password with its hash",
                "--json",
            ])
            .current_dir(repo.path())
            .env("KEN_VECTOR_SEARCH", mode)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        v["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["path"].as_str().unwrap().to_string(),
                    h["start_line"].as_u64().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let (scan, graph) = (run("scan"), run("graph"));
    assert_eq!(scan[0].0, "src/auth.py");
    assert_eq!(scan, graph, "an exact scan and the graph agree on a small index");
}

#[test]
fn query_filters_apply_in_the_semantic_and_hybrid_modes_too() {
    let repo = materialize(&format!(
        "{REPO}//- tests/test_network.py\ndef test_retry_request_again_when_the_connection_drops():\n    assert retry_request('x')\n//- web/retry.js\nfunction retryRequest(url) {{ return send(url); }}\n"
    ));
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let paths = |args: &[&str], key: &str| -> Vec<String> {
        let mut all = vec!["search"];
        all.extend_from_slice(args);
        all.push("--json");
        let out = ken(&all, repo.path());
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect()
    };
    let q = "send the request again when the connection drops";
    let unfiltered = paths(&[q], "files");
    assert!(
        unfiltered.iter().any(|p| p.starts_with("tests/")),
        "{unfiltered:?}"
    );
    for (args, key) in [(vec![], "files"), (vec!["--semantic"], "chunks")] {
        let mut a = args.clone();
        let negated = format!("{q} !path:tests/");
        a.push(&negated);
        let got = paths(&a, key);
        assert!(
            !got.is_empty() && got.iter().all(|p| !p.starts_with("tests/")),
            "{key}: {got:?}"
        );
        let mut a = args.clone();
        let lang = format!("{q} lang:javascript");
        a.push(&lang);
        let got = paths(&a, key);
        assert!(
            !got.is_empty() && got.iter().all(|p| p.ends_with(".js")),
            "{key}: {got:?}"
        );
        let mut a = args.clone();
        let nothing = format!("{q} lang:cobol");
        a.push(&nothing);
        assert!(paths(&a, key).is_empty(), "{key}: lang:cobol matched");
        let mut a = args.clone();
        let kind = format!("{q} kind:class");
        a.push(&kind);
        let got = paths(&a, key);
        assert!(got.iter().all(|p| p == "src/cache.py"), "{key}: {got:?}");
    }
}

#[test]
fn an_exact_identifier_ranks_its_definition_first_in_the_default_mode_and_names_it() {
    let repo = materialize(&format!(
        "{REPO}//- src/uses.py\nfrom network import retry_request\n\ndef _retry_request_twice(url):\n    retry_request(url)\n    return retry_request(url)\n"
    ));
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let out = ken(&["search", "retry_request", "--json"], repo.path());
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["mode"], "hybrid");
    assert_eq!(v["files"][0]["path"], "src/network.py", "{v}");
    assert_eq!(v["files"][0]["defines_query"], true);
    assert_eq!(v["files"][0]["symbol"], "network.retry_request");
    assert!(
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["symbol"].is_string() || f["path"] != "src/uses.py"),
        "{v}"
    );
    let human = stdout(&ken(&["search", "retry_request"], repo.path()));
    assert!(
        human.lines().next().unwrap().contains("network.retry_request"),
        "{human}"
    );
}

/// A file with several definitions: the answer names the spans to read, not the file.
const LONG_FILE: &str = r#"
//- src/storage.py
class BlobStore:
    """Stores blobs on disk under their content hash."""

    def put_blob(self, data):
        """Writes the blob under its hash and returns the hash."""
        digest = content_hash(data)
        write_file(self.root, digest, data)
        return digest

    def get_blob(self, digest):
        """Reads a blob back by its hash."""
        return read_file(self.root, digest)

    def compact_storage(self):
        """Merges small blob files into packs to save space."""
        for small in self.small_files():
            self.pack.append(small)


def content_hash(data):
    """The blake3 digest of the bytes."""
    return blake3(data).hexdigest()


def unrelated_helper():
    """Formats a log line with a timestamp."""
    return format_line(now())
//- src/network.py
def retry_request(url, attempts=3):
    """Sends an HTTP request again when the connection drops."""
    for _ in range(attempts):
        try:
            return send(url)
        except ConnectionError:
            continue
"#;

#[test]
fn the_default_answer_lists_the_spans_to_read_and_files_stay_one_flag_away() {
    let repo = materialize(LONG_FILE);
    let out = ken(&["index", "build", ".", "--semantic"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let out = ken(&["search", "write a blob under its hash", "--json"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let first = &v["files"][0];
    assert_eq!(first["path"], "src/storage.py", "{v}");
    let chunks = first["chunks"].as_array().unwrap();
    assert!(!chunks.is_empty() && chunks.len() <= 3, "{v}");
    // The spans are definitions inside the file, not the whole of it, and never overlap.
    let spans: Vec<(u64, u64)> = chunks
        .iter()
        .map(|c| (c["start_line"].as_u64().unwrap(), c["end_line"].as_u64().unwrap()))
        .collect();
    assert!(spans.iter().all(|(s, e)| s <= e && e - s < 20), "{spans:?}");
    for (i, a) in spans.iter().enumerate() {
        for b in &spans[i + 1..] {
            assert!(a.1 < b.0 || b.1 < a.0, "overlapping spans {spans:?}");
        }
    }
    // `put_blob` (lines 4-8) is among them.
    assert!(spans.iter().any(|(s, e)| *s <= 4 && *e >= 5), "{spans:?}");
    assert!(
        chunks
            .iter()
            .all(|c| ["lexical", "semantic", "definition"].contains(&c["by"].as_str().unwrap())),
        "{v}"
    );

    // The text lists each span under its file.
    let out = ken(&["search", "write a blob under its hash"], repo.path());
    let text = stdout(&out);
    assert!(text.starts_with("src/storage.py:"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("    :")), "{text}");

    // `--per-file 1` keeps one; `--files` none, with the same files in the same order.
    let out = ken(
        &[
            "search",
            "write a blob under its hash",
            "--json",
            "--per-file",
            "1",
        ],
        repo.path(),
    );
    let one: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(one["files"][0]["chunks"].as_array().unwrap().len(), 1, "{one}");
    let out = ken(
        &["search", "write a blob under its hash", "--json", "--files"],
        repo.path(),
    );
    let files: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(files["mode"], "hybrid", "{files}");
    let paths = |v: &serde_json::Value| -> Vec<String> {
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(paths(&files), paths(&v));
    assert!(
        files["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f.get("chunks").is_none()),
        "{files}"
    );
    // `--lexical --files` is the lexical file ranking.
    let out = ken(&["search", "blob", "--json", "--lexical", "--files"], repo.path());
    let lexical: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(lexical["mode"], "files", "{lexical}");
    // Out of range is refused naming the flag.
    let out = ken(&["search", "blob", "--per-file", "11"], repo.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--per-file"), "{}", stderr(&out));
}

/// The semantic answer of a query as the CLI gives it: (path, lines, score) of each chunk.
fn semantic_answer(root: &std::path::Path, query: &str) -> Vec<(String, u64, u64, String)> {
    let out = ken(&["search", "--semantic", query, "--json"], root);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    v["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap().to_string(),
                h["start_line"].as_u64().unwrap(),
                h["end_line"].as_u64().unwrap(),
                format!("{:.5}", h["score"].as_f64().unwrap()),
            )
        })
        .collect()
}

/// An update writes only the rows of its new points: the previous generation's row files
/// are hard-linked (the same inodes), past eight files the small ones are concatenated, and
/// after any number of updates each chunk scores as a full build of the same tree scores it.
#[test]
fn an_update_appends_its_rows_and_answers_as_a_full_build() {
    let repo = materialize(REPO);
    // Enough other files that eleven updates of one stay under the dead share that re-embeds.
    for i in 0..60 {
        std::fs::write(
            repo.path().join(format!("src/helper_{i}.py")),
            format!("def helper_{i}(value):\n    \"\"\"Scales value by {i}.\"\"\"\n    return value * {i}\n"),
        )
        .unwrap();
    }
    let r = build(repo.path(), &IndexConfig::default());
    let dir = index_dir(repo.path(), &IndexConfig::default());
    let gen_dir = |g: u64| dir.join(format!("gen-{g:08}"));
    let rows = |part: &serde_json::Value| -> Vec<String> {
        part["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["file"].as_str().unwrap().to_string())
            .collect()
    };
    let first = rows(&vectors_json(&r));
    assert_eq!(first.len(), 1, "{}", vectors_json(&r));
    let center = store_of(repo.path()).center;
    let dim = u64::from(r.manifest.parts.vectors.as_ref().unwrap().dim);
    let mut generation = r.manifest.generation;
    let queries = [
        "send the request again when the connection drops",
        "evict the least recently used cache entry",
        "read the configuration file",
    ];
    for round in 0..11u32 {
        std::fs::write(
            repo.path().join("src/network.py"),
            format!(
                "def retry_request_{v}(url, attempts={v}):\n    \"\"\"Sends again when the connection drops.\"\"\"\n    return send(url)\n",
                // Two versions in turn: the same rows appended again at other ids.
                v = round % 2
            ),
        )
        .unwrap();
        let r = build(repo.path(), &IndexConfig::default());
        let part = &vectors_json(&r);
        let now = rows(part);
        assert!(now.len() <= 8, "round {round}: {} row files: {part}", now.len());
        let distinct: std::collections::BTreeSet<_> = now.iter().collect();
        assert_eq!(
            distinct.len(),
            now.len(),
            "round {round}: a row file listed twice: {part}"
        );
        // Only the changed file's chunks were written, unless the small files were merged.
        let written = part["row_bytes_written"].as_u64().unwrap();
        if round == 0 {
            assert_eq!(now.len(), 2, "{part}");
            assert_eq!(now[0], first[0]);
            assert!(written > 0 && written <= 2 * dim, "round {round}: {part}");
            use std::os::unix::fs::MetadataExt;
            let ino = |g: u64| std::fs::metadata(gen_dir(g).join(&first[0])).unwrap().ino();
            assert_eq!(ino(generation), ino(r.manifest.generation), "linked, not copied");
        }
        generation = r.manifest.generation;
        assert_eq!(part["graph_rebuilt"], false, "round {round}: {part}");
    }
    let verified = ken(&["index", "verify", "."], repo.path());
    assert!(verified.status.success(), "{}", stdout(&verified));
    // Each row file's sign bits beside it, about the center of the first build, appended
    // and merged rows alike.
    let store = store_of(repo.path());
    assert_eq!(store.center, center);
    assert!(store.rows.len() > 1, "{:?}", store.rows);
    let d = store.dim as usize;
    for row in &store.rows {
        let read = |f: &str| std::fs::read(gen_dir(generation).join(f)).unwrap();
        let values = read(&row.file);
        let codes = read(&row.codes_file());
        assert_eq!(codes.len(), row.points as usize * d.div_ceil(8));
        assert_eq!(
            codes,
            kenning::vector::encode_codes(&values, d, &center),
            "{}",
            row.file
        );
    }
    let incremental: Vec<_> = queries.iter().map(|q| semantic_answer(repo.path(), q)).collect();
    assert!(
        ken(&["index", "build", ".", "--full"], repo.path())
            .status
            .success()
    );
    let full: Vec<_> = queries.iter().map(|q| semantic_answer(repo.path(), q)).collect();
    // The same chunks score alike: the update keeps the stored IDF, a full build refreshes
    // it, so scores move a little; a row read at the wrong place would move them a lot.
    for (inc, full) in incremental.iter().zip(&full) {
        assert!(!full.is_empty());
        assert_eq!(inc[0].0, full[0].0, "{inc:?}\n{full:?}");
        for (path, start, end, score) in inc {
            let score: f64 = score.parse().unwrap();
            if let Some(f) = full.iter().find(|f| (&f.0, f.1, f.2) == (path, *start, *end)) {
                let other: f64 = f.3.parse().unwrap();
                assert!((score - other).abs() < 0.02, "{path}:{start}: {score} vs {other}");
            }
        }
    }
}

/// A reader checks each row file by its stamp: one written since the commit (a new mtime) is
/// hashed, and a query names it instead of scoring from it; one whose bytes changed behind a
/// restored mtime is trusted (any bytes of the right length are vectors), and only `ken index
/// verify`, which hashes every file, finds it.
#[test]
fn a_row_file_written_since_its_commit_is_hashed_before_a_query_reads_it() {
    let repo = materialize(REPO);
    let r = build(repo.path(), &IndexConfig::default());
    let dir = index_dir(repo.path(), &IndexConfig::default());
    let file = r.manifest.parts.vectors.as_ref().unwrap().rows[0].file.clone();
    let path = dir.join(format!("gen-{:08}", r.manifest.generation)).join(&file);
    let query = [
        "search",
        "--semantic",
        "evict the least recently used cache entry",
        "--json",
    ];
    assert!(ken(&query, repo.path()).status.success());
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] = bytes[mid].wrapping_add(64);
    // Past the filesystem clock's tick, so the write gets an mtime of its own.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&path, &bytes).unwrap();
    let out = ken(&query, repo.path());
    assert!(!out.status.success(), "{}", stdout(&out));
    assert!(stderr(&out).contains(&file), "{}", stderr(&out));
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    let out = ken(&query, repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let verified = ken(&["index", "verify", "."], repo.path());
    assert_eq!(verified.status.code(), Some(1), "{}", stdout(&verified));
    assert!(stdout(&verified).contains(&file), "{}", stdout(&verified));
}
