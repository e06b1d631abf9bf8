//! `SnapshotManifest`: one published generation — which repository and commit it indexes, and
//! every object it is made of, with the path each lands at in an index folder.

use serde::{Deserialize, Serialize};

use crate::symbols::RepoPath;

pub const SNAPSHOT_FORMAT: &str = "kenning-snapshot";
/// Bumped when the manifest's layout changes.
pub const SNAPSHOT_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SnapshotObject {
    /// Where it lands: `gen/<file>` inside the generation folder, or `segments/seg-<id>.bin`.
    pub path: String,
    /// blake3 of the bytes, hex; the object's key is `objects/<blake3>`.
    pub blake3: String,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SnapshotManifest {
    pub format: String,
    pub version: u32,
    /// The repository key (`github.com/psf/requests`, or the name given).
    pub repo: String,
    /// The commit the working tree was at.
    pub commit: String,
    /// For a tree with uncommitted changes: the blake3 of its indexed paths and contents.
    pub tree: Option<String>,
    /// The index format of the generation (`FORMAT_VERSION` of the `ken` that built it).
    pub index_format: u32,
    pub ken_version: String,
    /// The generation number where it was built.
    pub generation: u64,
    pub created_unix_ms: u64,
    pub files: u64,
    pub lines: u64,
    pub objects: Vec<SnapshotObject>,
    /// The indexed files' contents, for readers without a checkout (the fleet's shard
    /// servers): each file's repository path, the blake3 of its bytes (its object is
    /// `objects/<blake3>`, like the index's) and its size. Empty when pushed without them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SnapshotObject>,
}

impl SnapshotManifest {
    /// The manifest's key under a repository: `snapshots/<repo>/<commit>.json`, or
    /// `snapshots/<repo>/<commit>+<tree>.json` for a tree with uncommitted changes.
    pub fn key(repo: &str, commit: &str, tree: Option<&str>) -> String {
        match tree {
            Some(t) => format!("snapshots/{repo}/{commit}+{t}.json"),
            None => format!("snapshots/{repo}/{commit}.json"),
        }
    }

    pub fn object_key(blake3: &str) -> String {
        format!("objects/{blake3}")
    }

    pub fn total_bytes(&self) -> u64 {
        self.objects.iter().map(|o| o.bytes).sum()
    }

    pub fn source_bytes(&self) -> u64 {
        self.sources.iter().map(|o| o.bytes).sum()
    }

    /// Checks what a reader relies on before downloading anything: the format, and paths
    /// that stay inside the index folder.
    pub fn validate(&self) -> Result<(), String> {
        if self.format != SNAPSHOT_FORMAT {
            return Err(format!("format {:?} is not {SNAPSHOT_FORMAT}", self.format));
        }
        if self.version > SNAPSHOT_VERSION {
            return Err(format!(
                "snapshot version {} is newer than this ken reads ({SNAPSHOT_VERSION})",
                self.version
            ));
        }
        for o in &self.objects {
            let inside = o.path.split('/').all(|c| !c.is_empty() && c != "." && c != "..");
            let known = o.path.starts_with("gen/") || o.path.starts_with("segments/seg-");
            if !inside || !known || o.path.contains('\\') {
                return Err(format!("object path {:?} is outside the index", o.path));
            }
            if o.blake3.len() != 64 || !o.blake3.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("object {:?} has no blake3 digest", o.path));
            }
        }
        for o in &self.sources {
            let exact = RepoPath::parse(&o.path).is_ok_and(|p| p.as_str() == o.path);
            if !exact || o.path.split('/').any(|c| c.is_empty() || c == ".." || c == ".") {
                return Err(format!(
                    "source path {:?} is not a path inside a repository",
                    o.path
                ));
            }
            if o.blake3.len() != 64 || !o.blake3.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!("source {:?} has no blake3 digest", o.path));
            }
        }
        if !self.objects.iter().any(|o| o.path == "gen/manifest.json") {
            return Err("no generation manifest among its objects".to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(paths: &[&str]) -> SnapshotManifest {
        SnapshotManifest {
            format: SNAPSHOT_FORMAT.to_string(),
            version: SNAPSHOT_VERSION,
            repo: "example.com/a/b".to_string(),
            commit: "c".repeat(40),
            tree: None,
            index_format: 3,
            ken_version: "0".to_string(),
            generation: 1,
            created_unix_ms: 0,
            files: 1,
            lines: 1,
            objects: paths
                .iter()
                .map(|p| SnapshotObject {
                    path: p.to_string(),
                    blake3: "ab".repeat(32),
                    bytes: 1,
                })
                .collect(),
            sources: Vec::new(),
        }
    }

    #[test]
    fn source_paths_must_stay_inside_the_repository() {
        let source = |p: &str| SnapshotObject {
            path: p.to_string(),
            blake3: "cd".repeat(32),
            bytes: 1,
        };
        let mut m = manifest(&["gen/manifest.json"]);
        m.sources = vec![source("src/lib.rs"), source("README.md")];
        assert!(m.validate().is_ok());
        for bad in [
            "../etc/passwd",
            "/etc/passwd",
            "a//b",
            "./a",
            "a/./b",
            "a/../../b",
            "",
        ] {
            m.sources = vec![source(bad)];
            let err = m.validate().unwrap_err();
            assert!(err.contains("inside a repository"), "{bad}: {err}");
        }
    }

    #[test]
    fn paths_must_stay_inside_the_index() {
        assert!(
            manifest(&[
                "gen/manifest.json",
                "gen/lexical/meta.json",
                "segments/seg-00000001.bin"
            ])
            .validate()
            .is_ok()
        );
        for bad in [
            "gen/../../etc/passwd",
            "/etc/passwd",
            "gen//x",
            "other/x",
            "gen/./x",
            "gen\\x",
        ] {
            let err = manifest(&["gen/manifest.json", bad]).validate().unwrap_err();
            assert!(err.contains("outside the index"), "{bad}: {err}");
        }
        assert!(
            manifest(&["gen/files.bin"])
                .validate()
                .unwrap_err()
                .contains("no generation manifest")
        );
    }

    #[test]
    fn dirty_trees_get_their_own_key() {
        assert_eq!(SnapshotManifest::key("r", "abc", None), "snapshots/r/abc.json");
        assert_eq!(
            SnapshotManifest::key("r", "abc", Some("t1")),
            "snapshots/r/abc+t1.json"
        );
    }
}
