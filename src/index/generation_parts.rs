//! `GenerationParts`: the closed set of parts a generation stores beside its symbol segments
//! (lexical, graph, vectors, history), the way tantivy names a segment's components. Each
//! entry is a struct with its version, the file its bytes are in and their blake3, and the
//! figures of the build that wrote it; the manifest carries them as JSON a person can read.
//!
//! Each part has one writer that reuses the previous generation's part or writes a new one
//! (`IndexBuilder::commit_lexical`, [`super::graph_part::GraphPartWriter`],
//! `VectorBuild` and `reuse_unchanged` in [`super::vector_build`], [`super::history_part`]),
//! is checked by [`super::IndexVerifier`] through [`PartEntry::stored`], and is described
//! by [`PartEntry::describe`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::history_part::{HISTORY_FILE, HISTORY_VERSION};
use super::index_store::{GRAPH_FILE, LEXICAL_DIR};
use super::vector_store::{RowFile, VECTOR_VERSION, VECTORS_DIR, VECTORS_FILE};
use crate::graph::{GRAPH_VERSION, GraphUpdate};
use crate::lexical::LEXICAL_VERSION;
use crate::vector::StoredEmbedder;

/// The parts of one generation; a part not built is absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GenerationParts {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphPartEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<HistoryPartEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical: Option<LexicalPartEntry>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<VectorPartEntry>,
}

impl GenerationParts {
    /// How many parts are stored.
    pub fn len(&self) -> usize {
        self.names().len()
    }

    pub fn is_empty(&self) -> bool {
        self.names().is_empty()
    }

    /// The names of the stored parts, as the manifest spells them.
    pub fn names(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.graph.is_some() {
            out.push(GraphPartEntry::NAME);
        }
        if self.history.is_some() {
            out.push(HistoryPartEntry::NAME);
        }
        if self.lexical.is_some() {
            out.push(LexicalPartEntry::NAME);
        }
        if self.vectors.is_some() {
            out.push(VectorPartEntry::NAME);
        }
        out
    }

    /// One line per part for `ken index status`, parts not built included.
    pub fn describe(&self) -> Vec<String> {
        let mut out = Vec::new();
        out.extend(self.lexical.as_ref().map(PartEntry::describe));
        out.extend(self.graph.as_ref().map(PartEntry::describe));
        out.push(match &self.history {
            Some(h) => h.describe(),
            None => "history    not built".to_string(),
        });
        out.push(match &self.vectors {
            Some(v) => v.describe(),
            None => "semantic   not built (`ken index build --semantic` adds it)".to_string(),
        });
        out
    }
}

/// What every part entry says about itself.
pub trait PartEntry {
    /// The part's name in the manifest and in damage reports.
    const NAME: &'static str;
    /// The one file holding the part's bytes and their blake3, where it has one.
    fn stored(&self) -> Option<(&str, Option<&str>)>;
    /// One line saying what the part holds.
    fn describe(&self) -> String;
}

/// The tantivy index: a folder of files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct LexicalPartEntry {
    pub version: u32,
    #[serde(default = "lexical_dir")]
    pub dir: String,
    /// Documents committed.
    pub docs: u64,
    /// Every file of the folder and its size, checked when the part is opened.
    pub files: BTreeMap<String, u64>,
}

impl LexicalPartEntry {
    /// The tantivy segments of the part (one `.idx` file each).
    pub fn segments(&self) -> usize {
        self.files.keys().filter(|f| f.ends_with(".idx")).count()
    }

    pub fn new(docs: u64, files: BTreeMap<String, u64>) -> LexicalPartEntry {
        LexicalPartEntry {
            version: LEXICAL_VERSION,
            dir: LEXICAL_DIR.to_string(),
            docs,
            files,
        }
    }
}

impl PartEntry for LexicalPartEntry {
    const NAME: &'static str = "lexical";

    fn stored(&self) -> Option<(&str, Option<&str>)> {
        None
    }

    fn describe(&self) -> String {
        format!("lexical    {} documents", self.docs)
    }
}

/// The resolved code graph.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct GraphPartEntry {
    pub version: u32,
    #[serde(default = "graph_file")]
    pub file: String,
    pub blake3: String,
    /// Digest of the JavaScript path aliases it was resolved with.
    pub aliases: String,
    pub bytes: u64,
    pub symbols: u64,
    /// What the build that wrote it did.
    pub update: GraphUpdate,
    pub references: ReferenceCounts,
    pub prepare_ms: u64,
    pub write_ms: u64,
    pub total_ms: u64,
}

impl GraphPartEntry {
    /// Whether this ken reads it.
    pub fn current(&self) -> bool {
        self.version == GRAPH_VERSION
    }
}

/// How the graph's references were resolved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ReferenceCounts {
    pub total: u64,
    /// Resolved by a language's rules.
    pub rules: u64,
    /// Matched by name only.
    pub name_matched: u64,
    /// To code outside the repository.
    pub external: u64,
    pub unresolved: u64,
}

impl ReferenceCounts {
    /// `n` as a percentage of all references.
    pub fn percent(&self, n: u64) -> f64 {
        100.0 * n as f64 / self.total.max(1) as f64
    }
}

impl PartEntry for GraphPartEntry {
    const NAME: &'static str = "graph";

    fn stored(&self) -> Option<(&str, Option<&str>)> {
        Some((&self.file, Some(&self.blake3)))
    }

    fn describe(&self) -> String {
        let r = &self.references;
        format!(
            "graph      {} symbols, {} references: {:.1}% resolved by rules, {:.1}% name-matched, {:.1}% external",
            self.symbols,
            r.total,
            r.percent(r.rules),
            r.percent(r.name_matched),
            r.percent(r.external)
        )
    }
}

/// The semantic part: chunk table, vector rows, maybe an HNSW graph.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct VectorPartEntry {
    pub version: u32,
    #[serde(default = "vectors_file")]
    pub file: String,
    #[serde(default = "vectors_dir")]
    pub dir: String,
    pub blake3: String,
    /// The model's identity; another model means everything is embedded again.
    pub model: String,
    pub dim: u32,
    pub chunks: u64,
    pub graph_points: u64,
    /// Points deleted but still in the graph.
    pub dead: u64,
    /// Whether the HNSW graph is kept (only above the exact-scan threshold).
    pub graph: bool,
    pub graph_rebuilt: bool,
    pub files_chunked: u64,
    pub chunks_embedded_or_cached: u64,
    pub bytes: u64,
    /// The row files, in id order.
    pub rows: Vec<RowFile>,
    pub row_bytes_written: u64,
    pub total_ms: u64,
    /// Chunks sent to the model (only when the build embedded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chunks_embedded: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embed_ms: Option<u64>,
    /// How to make the model again; absent for the built-in one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedder: Option<StoredEmbedder>,
}

impl VectorPartEntry {
    /// Whether this ken reads it (an older layout is named by readers and re-embedded).
    pub fn older(&self) -> bool {
        self.version < VECTOR_VERSION
    }
}

impl PartEntry for VectorPartEntry {
    const NAME: &'static str = "vectors";

    fn stored(&self) -> Option<(&str, Option<&str>)> {
        Some((&self.file, Some(&self.blake3)))
    }

    fn describe(&self) -> String {
        format!(
            "semantic   {} chunks embedded with {} ({} graph points, {} tombstoned)",
            self.chunks, self.model, self.graph_points, self.dead
        )
    }
}

/// The history part, or why the build could not read one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum HistoryPartEntry {
    Missing(HistoryMissing),
    Read(HistoryPartRead),
}

/// The tree is not a git repository, or git could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HistoryMissing {
    pub version: u32,
    pub missing: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct HistoryPartRead {
    pub version: u32,
    #[serde(default = "history_file")]
    pub file: String,
    pub blake3: String,
    /// The commit read up to.
    pub head: String,
    pub commits: u32,
    pub skipped_large: u32,
    pub truncated: bool,
    /// Files with a history.
    pub files: u64,
    pub new_commits: u32,
    pub incremental: bool,
    pub ms: u64,
}

impl HistoryPartEntry {
    pub fn missing(why: String) -> HistoryPartEntry {
        HistoryPartEntry::Missing(HistoryMissing {
            version: HISTORY_VERSION,
            missing: why,
        })
    }

    /// The part as read, when there is one this ken can add to.
    pub fn current(&self) -> Option<&HistoryPartRead> {
        match self {
            HistoryPartEntry::Read(r) if r.version == HISTORY_VERSION => Some(r),
            _ => None,
        }
    }
}

impl PartEntry for HistoryPartEntry {
    const NAME: &'static str = "history";

    fn stored(&self) -> Option<(&str, Option<&str>)> {
        match self {
            HistoryPartEntry::Missing(_) => None,
            HistoryPartEntry::Read(r) => Some((&r.file, Some(&r.blake3))),
        }
    }

    fn describe(&self) -> String {
        match self {
            HistoryPartEntry::Missing(m) => format!("history    missing: {}", m.missing),
            HistoryPartEntry::Read(h) => format!(
                "history    {} commits over {} files to {} ({} skipped as too large{}; {} new this build, {} ms)",
                h.commits,
                h.files,
                h.head.get(..12).unwrap_or(&h.head),
                h.skipped_large,
                if h.truncated { ", truncated" } else { "" },
                h.new_commits,
                h.ms
            ),
        }
    }
}

fn lexical_dir() -> String {
    LEXICAL_DIR.to_string()
}

fn graph_file() -> String {
    GRAPH_FILE.to_string()
}

fn vectors_file() -> String {
    VECTORS_FILE.to_string()
}

fn vectors_dir() -> String {
    VECTORS_DIR.to_string()
}

fn history_file() -> String {
    HISTORY_FILE.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_history_reads_back_as_missing_and_a_read_one_as_read() {
        let missing = HistoryPartEntry::missing("not a git repository".into());
        let text = serde_json::to_string(&missing).unwrap();
        assert_eq!(serde_json::from_str::<HistoryPartEntry>(&text).unwrap(), missing);
        let read: HistoryPartEntry = serde_json::from_str(
            r#"{"version":1,"file":"history.bin","blake3":"ab","head":"c0ffee","commits":3}"#,
        )
        .unwrap();
        let r = read.current().expect("a current history part");
        assert_eq!((r.commits, r.head.as_str()), (3, "c0ffee"));
        assert_eq!(read.stored(), Some(("history.bin", Some("ab"))));
    }

    #[test]
    fn parts_written_by_json_read_back_typed() {
        let parts: GenerationParts = serde_json::from_str(
            r#"{"graph":{"version":5,"blake3":"x","references":{"total":4,"rules":3,"name_matched":1},
                "update":{"full":true,"files_resolved":2,"refs_resolved":4,"files_copied":0,"resolve_ms":1,"rank_ms":0}},
               "lexical":{"version":5,"dir":"lexical","docs":7,"files":{"meta.json":12}}}"#,
        )
        .unwrap();
        assert_eq!(parts.names(), ["graph", "lexical"]);
        let g = parts.graph.as_ref().unwrap();
        assert_eq!((g.file.as_str(), g.update.files_resolved), ("graph.bin", 2));
        assert!(
            g.describe().contains("75.0% resolved by rules"),
            "{}",
            g.describe()
        );
        let lines = parts.describe();
        assert_eq!(lines[0], "lexical    7 documents");
        assert_eq!(
            lines[3],
            "semantic   not built (`ken index build --semantic` adds it)"
        );
    }

    #[test]
    fn a_part_field_of_the_wrong_type_is_refused() {
        let r = serde_json::from_str::<GenerationParts>(r#"{"graph":{"version":"five"}}"#);
        assert!(r.is_err());
    }
}
