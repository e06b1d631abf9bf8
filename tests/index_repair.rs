//! Damage to every kind of index file is detected by `ken index verify` (naming the file)
//! and repaired by the next `ken index build` (with a warning naming it): the repaired index
//! verifies clean and holds what a build from the source files holds.

mod support;

use std::path::{Path, PathBuf};

use support::{index_dir, ken, logical_dump, materialize, stderr, stdout};

const REPO: &str = r#"
//- shop/cart.py
from shop.pricing import apply_discount


class Cart:
    """Items a customer is about to buy."""

    def total(self):
        return apply_discount(sum(self.items), self.discount)
//- shop/pricing.py
def apply_discount(amount, percent):
    """Reduce an amount by a percentage discount code."""
    return amount * (100 - percent) / 100
//- src/lib.rs
pub fn parse_config(text: &str) -> Option<u32> {
    text.trim().parse().ok()
}
"#;

fn current_gen(dir: &Path) -> PathBuf {
    let name = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    dir.join(name.trim())
}

/// Edits the current generation's manifest with `edit` and writes it back as an older ken
/// wrote it: without the manifest's own digest (an edit with the digest kept is damage,
/// tested in tests/index_damage.rs). Returns what `edit` returns.
fn as_older_ken_wrote_it<T>(dir: &Path, edit: impl FnOnce(&mut serde_json::Value) -> T) -> T {
    let manifest_path = current_gen(dir).join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    let out = edit(&mut manifest);
    manifest.as_object_mut().unwrap().remove("digest");
    std::fs::write(&manifest_path, serde_json::to_vec_pretty(&manifest).unwrap()).unwrap();
    out
}

fn overwrite_middle(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let mid = bytes.len() / 2;
    for b in bytes.iter_mut().skip(mid).take(16) {
        *b = !*b;
    }
    std::fs::write(path, bytes).unwrap();
}

fn truncate_half(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    std::fs::write(path, &bytes[..bytes.len() / 2]).unwrap();
}

fn first_segment(index_dir: &Path) -> PathBuf {
    std::fs::read_dir(index_dir.join("segments"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
}

/// The largest file of the lexical part: its postings or store.
fn lexical_file(generation: &Path) -> PathBuf {
    let mut files: Vec<PathBuf> = std::fs::read_dir(generation.join("lexical"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x != "json" && x != "lock"))
        .collect();
    files.sort_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0));
    files.pop().unwrap()
}

#[test]
fn every_kind_of_damage_is_found_named_and_repaired() {
    type Damage = (&'static str, fn(&Path) -> PathBuf);
    let kinds: Vec<Damage> = vec![
        ("a truncated segment", |d| {
            let p = first_segment(d);
            truncate_half(&p);
            p
        }),
        ("overwritten segment bytes", |d| {
            let p = first_segment(d);
            overwrite_middle(&p);
            p
        }),
        ("a garbage CURRENT", |d| {
            std::fs::write(d.join("CURRENT"), "not a generation\n").unwrap();
            d.join("CURRENT")
        }),
        ("a garbage files.bin", |d| {
            let p = current_gen(d).join("files.bin");
            std::fs::write(&p, b"\xff\xfe garbage").unwrap();
            p
        }),
        ("a garbage manifest", |d| {
            let p = current_gen(d).join("manifest.json");
            std::fs::write(&p, "{ not json").unwrap();
            p
        }),
        ("overwritten lexical bytes", |d| {
            let p = lexical_file(&current_gen(d));
            overwrite_middle(&p);
            p
        }),
        ("a truncated graph", |d| {
            let p = current_gen(d).join("graph.bin");
            truncate_half(&p);
            p
        }),
        ("overwritten vectors", |d| {
            let p = current_gen(d).join("vectors.bin");
            overwrite_middle(&p);
            p
        }),
        ("overwritten vector rows", |d| {
            let p = std::fs::read_dir(current_gen(d))
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("rows-"))
                .unwrap();
            overwrite_middle(&p);
            p
        }),
    ];
    for (what, damage) in kinds {
        let repo = materialize(REPO);
        assert!(ken(&["index", "build", "."], repo.path()).status.success());
        let dir = index_dir(repo.path(), &Default::default());
        let before = logical_dump(&dir);
        let damaged = damage(&dir);
        let name = damaged.file_name().unwrap().to_string_lossy().to_string();

        let v = ken(&["index", "verify"], repo.path());
        assert_eq!(
            v.status.code(),
            Some(1),
            "{what}: verify should fail: {}",
            stdout(&v)
        );
        assert!(
            stdout(&v).contains(&name),
            "{what}: verify should name {name}: {}",
            stdout(&v)
        );

        let b = ken(&["index", "build", "."], repo.path());
        assert!(
            b.status.success(),
            "{what}: the build should repair: {}",
            stderr(&b)
        );
        assert!(
            stderr(&b).contains("was damaged") && stderr(&b).contains(&name),
            "{what}: the build should say what it repaired: {}",
            stderr(&b)
        );
        let v = ken(&["index", "verify"], repo.path());
        assert!(
            v.status.success(),
            "{what}: still damaged after the build: {}",
            stdout(&v)
        );
        assert_eq!(logical_dump(&dir), before, "{what}: the repaired index differs");
        let s = ken(&["search", "--lexical", "apply_discount", "--json"], repo.path());
        let hits: serde_json::Value = serde_json::from_str(&stdout(&s)).unwrap();
        assert_eq!(hits["hits"][0]["path"], "shop/pricing.py", "{what}: {hits}");
    }
}

#[test]
fn an_intact_index_verifies_clean_and_says_what_it_checked() {
    let repo = materialize(REPO);
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let v = ken(&["index", "verify", "--json"], repo.path());
    assert!(v.status.success(), "{}", stdout(&v));
    let r: serde_json::Value = serde_json::from_str(&stdout(&v)).unwrap();
    assert_eq!(r["damage"], serde_json::json!([]));
    assert_eq!(r["checked"]["files"], 3);
}

/// Readers check what they read: a query that decodes a few records of a large segment
/// checks those records' own digests, and opening the lexical part checks its files' sizes,
/// so damage is refused with the file named instead of answered from.
#[test]
fn readers_refuse_damage_in_what_they_read() {
    // Enough files in one segment that a lookup of one file's symbols reads it sparsely.
    let mut spec = String::new();
    for i in 0..40 {
        spec.push_str(&format!(
            "//- pkg/mod_{i:02}.py\ndef function_number_{i:02}(x):\n    \"\"\"Returns x plus {i}.\"\"\"\n    return x + {i}\n\n"
        ));
    }
    let r = materialize(&spec);
    let dir = index_dir(r.path(), &kenning::IndexConfig::default());
    assert!(ken(&["index", "build", "."], r.path()).status.success());
    // A symbol lookup reads the one record of the file defining it.
    let ok = ken(&["symbol", "function_number_07", "--json"], r.path());
    assert!(ok.status.success(), "{}", stderr(&ok));
    let seg = first_segment(&dir);
    let text = std::fs::read(&seg).unwrap();
    // Flip bytes inside that record's name: a decodable but wrong record.
    let at = text
        .windows(b"function_number_07".len())
        .position(|w| w == b"function_number_07")
        .unwrap();
    let mut damaged = text.clone();
    damaged[at + 16] = b'9';
    damaged[at + 17] = b'9';
    std::fs::write(&seg, &damaged).unwrap();
    let out = ken(&["symbol", "function_number_07", "--json"], r.path());
    let said = format!("{}{}", stdout(&out), stderr(&out));
    assert!(
        !said.contains("function_number_99"),
        "a damaged record was answered from: {said}"
    );
    assert!(
        !out.status.success() && said.contains("seg-") && said.contains("checksum"),
        "{said}"
    );
    std::fs::write(&seg, &text).unwrap();
    // A truncated lexical file.
    let lex = lexical_file(&current_gen(&dir));
    truncate_half(&lex);
    let out = ken(&["search", "function_number_07", "--lexical"], r.path());
    let said = stderr(&out);
    let name = lex.file_name().unwrap().to_string_lossy().into_owned();
    assert!(!out.status.success() && said.contains(&name), "{said}");
    // The next build repairs both.
    let out = ken(&["index", "build", "."], r.path());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        ken(&["search", "function_number_07", "--lexical"], r.path())
            .status
            .success()
    );
}

/// A graph part written by an older `ken` is not called damage: readers say which part is
/// old and what rebuilds it, and the next build resolves the graph again while reusing the
/// parsed records.
#[test]
fn a_graph_part_of_an_older_layout_is_named_as_such_and_rebuilt() {
    let repo = materialize(REPO);
    let dir = index_dir(repo.path(), &kenning::IndexConfig::default());
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let callers = |repo: &Path| -> serde_json::Value {
        let out = ken(&["callers", "apply_discount", "--json"], repo);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        v["reached"].clone()
    };
    let before = callers(repo.path());
    let reads = as_older_ken_wrote_it(&dir, |manifest| {
        let reads = manifest["parts"]["graph"]["version"].as_u64().unwrap();
        manifest["parts"]["graph"]["version"] = serde_json::json!(reads - 1);
        reads
    });
    let out = ken(&["callers", "apply_discount", "--json"], repo.path());
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!("graph part of the index at {}", dir.display()))
            && err.contains(&format!("layout version {}, this ken reads {reads}", reads - 1))
            && err.contains("ken index build")
            && !err.contains("damaged"),
        "{err}"
    );
    let b = ken(&["index", "build", ".", "--json"], repo.path());
    assert!(b.status.success(), "{}", stderr(&b));
    let report: serde_json::Value = serde_json::from_str(&stdout(&b)).unwrap();
    assert_eq!(report["manifest"]["stats"]["parsed"], 0, "{report}");
    assert_eq!(
        report["manifest"]["parts"]["graph"]["update"]["full"], true,
        "{report}"
    );
    assert_eq!(callers(repo.path()), before);
}

/// A lexical part of an older schema (`LEXICAL_VERSION` 7 made grain, path, language, kind
/// and lines columns; tantivy reads an older part's missing column as an invalid argument) is
/// named as old by readers, not as damage, and the next build makes it again.
#[test]
fn a_lexical_part_of_an_older_schema_is_named_as_such_and_rebuilt() {
    let repo = materialize(REPO);
    let dir = index_dir(repo.path(), &kenning::IndexConfig::default());
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let search = |repo: &Path| ken(&["search", "--lexical", "apply_discount", "--json"], repo);
    let before = search(repo.path());
    assert!(before.status.success(), "{}", stderr(&before));
    let paths = |out: &std::process::Output| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(&stdout(out)).unwrap();
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["path"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!paths(&before).is_empty());
    let reads = as_older_ken_wrote_it(&dir, |manifest| {
        let reads = manifest["parts"]["lexical"]["version"].as_u64().unwrap();
        manifest["parts"]["lexical"]["version"] = serde_json::json!(reads - 1);
        // The older ken's extractor named its own schema.
        let extractor = manifest["extractor"].as_str().unwrap().to_string();
        manifest["extractor"] = serde_json::json!(
            extractor.replace(&format!("lexical{reads}"), &format!("lexical{}", reads - 1))
        );
        reads
    });
    let out = search(repo.path());
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&format!("lexical part of the index at {}", dir.display()))
            && err.contains(&format!("layout version {}, this ken reads {reads}", reads - 1))
            && err.contains("ken index build")
            && !err.contains("damaged"),
        "{err}"
    );
    let b = ken(&["index", "build", "."], repo.path());
    assert!(b.status.success(), "{}", stderr(&b));
    let after = search(repo.path());
    assert!(after.status.success(), "{}", stderr(&after));
    assert_eq!(paths(&after), paths(&before));
}

/// A build trusts the files of the generation it reuses whose size, mtime and inode are as
/// committed (a `stat` each, not a read of the whole index), and reads and hashes any other:
/// bytes changed behind a restored mtime pass the build's check (only `ken index verify`,
/// which hashes everything, finds them), while the same change with its new mtime is repaired.
#[test]
fn a_build_reads_only_the_index_files_written_since_their_commit() {
    let edit = |root: &Path| {
        std::fs::write(
            root.join("src/lib.rs"),
            "pub fn parse_config(text: &str) -> Option<u32> { None }\n",
        )
        .unwrap()
    };
    let repo = materialize(REPO);
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let dir = index_dir(repo.path(), &Default::default());
    // The segment holding every record: the next build keeps it, reading only what changed.
    let segment = first_segment(&dir);
    let mtime = std::fs::metadata(&segment).unwrap().modified().unwrap();
    // Let the filesystem's clock move past the commit, so the write below gets a new mtime.
    std::thread::sleep(std::time::Duration::from_millis(30));
    overwrite_middle(&segment);
    assert_ne!(std::fs::metadata(&segment).unwrap().modified().unwrap(), mtime);
    std::fs::File::options()
        .write(true)
        .open(&segment)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    edit(repo.path());
    let b = ken(&["index", "build", "."], repo.path());
    assert!(b.status.success(), "{}", stderr(&b));
    assert!(
        !stderr(&b).contains("was damaged"),
        "the stamp matched: the build should not have read the segment: {}",
        stderr(&b)
    );
    let v = ken(&["index", "verify"], repo.path());
    assert_eq!(
        v.status.code(),
        Some(1),
        "verify hashes everything: {}",
        stdout(&v)
    );

    // Written again, mtime left as the write set it: the build reads, finds and repairs it.
    let repo = materialize(REPO);
    assert!(ken(&["index", "build", "."], repo.path()).status.success());
    let dir = index_dir(repo.path(), &Default::default());
    std::thread::sleep(std::time::Duration::from_millis(30));
    overwrite_middle(&first_segment(&dir));
    edit(repo.path());
    let b = ken(&["index", "build", "."], repo.path());
    assert!(
        stderr(&b).contains("was damaged") && stderr(&b).contains("seg-"),
        "{}",
        stderr(&b)
    );
    assert!(ken(&["index", "verify"], repo.path()).status.success());
}
