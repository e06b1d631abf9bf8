//! Knobs of a build, with their defaults decided here and nowhere else.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What the walker visits. Stored in the manifest so `ken index status` compares the working
/// tree under the same rules the build used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WalkConfig {
    /// Files larger than this are skipped (`too-large`).
    pub max_file_size: u64,
    /// A file with a line longer than this is skipped as minified.
    pub max_line_length: usize,
    /// A file whose average line is longer than this (over 4 KiB) is skipped as minified.
    pub max_average_line_length: usize,
    pub follow_symlinks: bool,
    /// Folder names skipped anywhere in the tree (vendored code, caches, build output).
    pub skip_dirs: Vec<String>,
    /// A file whose parse (tree-sitter and the query pass) runs past this many milliseconds
    /// is skipped (`parse-limit`). A time bound: on an overloaded machine a file near it may
    /// be skipped in one build and not the next.
    #[serde(default = "default_max_parse_ms")]
    pub max_parse_ms: u64,
    /// A file whose syntax tree has more nodes than this is skipped (`parse-limit`): a tree
    /// costs memory per node, so this bounds a worker's memory for one file.
    #[serde(default = "default_max_tree_nodes")]
    pub max_tree_nodes: u64,
    /// Files no grammar reads but a text format does (`grammars/text.toml`: docs and config)
    /// are indexed as text; off, they are counted as not read.
    #[serde(default = "default_text")]
    pub text: bool,
}

fn default_text() -> bool {
    true
}

fn default_max_parse_ms() -> u64 {
    10_000
}

fn default_max_tree_nodes() -> u64 {
    10_000_000
}

impl WalkConfig {
    /// The parse bounds as the parser takes them.
    pub fn parse_limits(&self) -> crate::parse::ParseLimits {
        crate::parse::ParseLimits {
            max_time: std::time::Duration::from_millis(self.max_parse_ms),
            max_nodes: self.max_tree_nodes,
            max_resident_mib: None,
        }
    }
}

impl Default for WalkConfig {
    fn default() -> Self {
        WalkConfig {
            max_file_size: 1024 * 1024,
            max_line_length: 65_536,
            max_average_line_length: 400,
            follow_symlinks: false,
            skip_dirs: [
                "node_modules",
                "bower_components",
                "jspm_packages",
                "vendor",
                "__pycache__",
                "site-packages",
                ".tox",
                ".nox",
                ".venv",
                "venv",
                ".mypy_cache",
                ".pytest_cache",
            ]
            .map(String::from)
            .to_vec(),
            max_parse_ms: default_max_parse_ms(),
            max_tree_nodes: default_max_tree_nodes(),
            text: default_text(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct IndexConfig {
    pub walk: WalkConfig,
    /// Where the index lives; `None` is `<root>/.kenning`.
    pub index_dir: Option<PathBuf>,
    /// Worker threads; 0 is one per core.
    pub threads: usize,
    /// Ignore the previous generation and parse everything.
    pub full: bool,
    /// Build the lexical (tantivy) part; off only to measure what it costs.
    pub lexical: bool,
    /// Build the code graph part (resolved references, centrality).
    pub graph: bool,
    /// Build the semantic part (chunks embedded, HNSW).
    pub vectors: bool,
    /// Read the repository's history (change counts, co-changes, commit words) when it is
    /// a git repository.
    pub history: bool,
    /// The first stage of a two-stage build: symbols and the lexical part only, so search
    /// and symbol lookup answer within about the parse time; the graph, semantic and history
    /// parts asked for are recorded as deferred (`BuildStats::deferred`, and every answer's
    /// coverage) and built by the next build.
    pub first_stage: bool,
    /// A cap on the build's resident memory, in MiB (`None`: no cap). The build sizes its
    /// buffers to it (the lexical writer's heap, records decoded and chunked a batch at a
    /// time) and says in its report when a phase went over it anyway.
    pub max_memory_mib: Option<u64>,
    /// Where `max_memory_mib` came from: given, or derived from the memory available
    /// ([`IndexConfig::memory_cap`]).
    pub max_memory_from: super::CapSource,
    /// A first build of a tree with at least this many bytes to read commits checkpoints as
    /// it goes (a first-stage generation for each eighth of the tree's bytes), so a build
    /// that is killed resumes from the last one and queries answer from what is committed
    /// meanwhile. `None`: never.
    pub checkpoint_min_bytes: Option<u64>,
}

/// The smallest tree a first build commits checkpoints for: a smaller one builds in seconds.
pub const CHECKPOINT_MIN_BYTES: u64 = 32 << 20;

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            walk: WalkConfig::default(),
            index_dir: None,
            threads: 0,
            full: false,
            lexical: true,
            graph: true,
            vectors: true,
            history: true,
            first_stage: false,
            max_memory_mib: None,
            max_memory_from: super::CapSource::Given,
            checkpoint_min_bytes: Some(CHECKPOINT_MIN_BYTES),
        }
    }
}

impl IndexConfig {
    /// The environment variable `ken index build --max-memory` reads, and that builds started
    /// by `ken serve` and the agent follow.
    pub const MAX_MEMORY_ENV: &'static str = "KEN_MAX_MEMORY_MIB";

    /// The memory cap from `KEN_MAX_MEMORY_MIB` (a positive number of MiB), if set.
    pub fn max_memory_from_env() -> Option<u64> {
        std::env::var(Self::MAX_MEMORY_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&m| m > 0)
    }

    /// The cap a build runs under: `given` (the flag or the environment), else three
    /// quarters of the memory available now (`None` where the kernel does not say).
    pub fn memory_cap(given: Option<u64>) -> (Option<u64>, super::CapSource) {
        match given {
            Some(m) => (Some(m), super::CapSource::Given),
            None => (super::default_cap_mib(), super::CapSource::Available),
        }
    }

    /// Whether the cap is tight enough to trade time for memory where that costs time
    /// (embedding each batch as it is tokenized, which a full build then tokenizes twice): a
    /// cap given, or one derived below [`super::TIGHT_CAP_MIB`]. The other bounds (the
    /// lexical writer's heap, the graph decoded or streamed) follow the cap's size itself.
    pub fn cap_is_tight(&self) -> bool {
        match (self.max_memory_mib, self.max_memory_from) {
            (None, _) => false,
            (Some(_), super::CapSource::Given) => true,
            (Some(m), super::CapSource::Available) => m < super::TIGHT_CAP_MIB,
        }
    }

    /// The index folder for a repository root.
    pub fn index_dir_for(&self, root: &std::path::Path) -> PathBuf {
        self.index_dir.clone().unwrap_or_else(|| root.join(".kenning"))
    }
}
