//! `Analysis`: one committed generation, opened for queries. Its parts (lexical, graph,
//! semantic) are opened on first use and kept, so a resident server pays for them once per
//! generation and every request after that reads them in place. An `Analysis` never changes:
//! a new generation is a new `Analysis`, swapped in by the [`super::Workspace`].

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::watch_state::Staleness;
use super::{ApiError, BuildActivity};
use crate::graph::{CodeGraph, GraphQuery, SymbolGraph};
use crate::index::{Coverage, HistoryPart, IndexError, IndexSnapshot, SemanticIndex, WorkingTreeDiff};
use crate::lexical::LexicalIndex;

pub struct Analysis {
    root: PathBuf,
    snapshot: IndexSnapshot,
    staleness: Staleness,
    lexical: OnceLock<Result<LexicalIndex, PartError>>,
    /// Every lexical file's checksum, checked once by a resident process ([`Analysis::warm`]);
    /// a one-shot query relies on the check at open (small indexes) and the panic boundary.
    lexical_checked: OnceLock<Result<(), PartError>>,
    graph: OnceLock<Result<CodeGraph, PartError>>,
    /// The graph's heads only, for readers of names, spans and rank (`context`).
    graph_heads: OnceLock<Result<CodeGraph, PartError>>,
    symbol_graph: OnceLock<SymbolGraph>,
    semantic: OnceLock<Result<SemanticIndex, PartError>>,
    history: OnceLock<Result<HistoryPart, PartError>>,
    /// The build this process runs for the workspace: a part this generation deferred is
    /// reported as being built, with how far that is.
    activity: Arc<BuildActivity>,
}

/// For a one-shot query: makes what a ranking reads that comes from no index (the built-in
/// embedding model, the learned ranker, the language registry) in threads of their own, while
/// the process opens the index on one core.
pub fn prepare_for_a_query() {
    crate::vector::StaticEmbedder::prepare_builtin();
    std::thread::spawn(|| {
        let _ = crate::search::LearnedRanker::embedded();
        let _ = crate::lang::LanguageRegistry::builtin();
    });
}

impl Analysis {
    pub(super) fn new(
        root: PathBuf,
        snapshot: IndexSnapshot,
        staleness: Staleness,
        activity: Arc<BuildActivity>,
    ) -> Analysis {
        Analysis {
            root,
            snapshot,
            staleness,
            lexical: OnceLock::new(),
            lexical_checked: OnceLock::new(),
            graph: OnceLock::new(),
            graph_heads: OnceLock::new(),
            symbol_graph: OnceLock::new(),
            semantic: OnceLock::new(),
            history: OnceLock::new(),
            activity,
        }
    }

    /// Why `part` (as the manifest's deferred list names it) cannot answer: being built by
    /// this process's second stage (and how far), left for the next build, or `e` itself.
    fn unavailable(&self, what: &str, part: &str, e: &PartError) -> ApiError {
        let deferred = self.snapshot.manifest.stats.deferred.iter().any(|d| d == part);
        if !deferred {
            return ApiError::Unavailable(format!("{what}: {e}"));
        }
        ApiError::Unavailable(match self.activity.describe() {
            Some(progress) => format!(
                "{what} is being built (the second stage of the first build, {progress}); \
                 search, symbol and context answer from the first stage meanwhile: ask again shortly"
            ),
            None => format!(
                "{what} was left for the next build (this generation is a first stage); \
                 `ken index build` adds it"
            ),
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn snapshot(&self) -> &IndexSnapshot {
        &self.snapshot
    }

    pub fn generation(&self) -> u64 {
        self.snapshot.generation()
    }

    /// What an answer from this generation covers, with the working tree's staleness: from
    /// the watcher when one runs, else a quick metadata check of the indexed files.
    pub fn coverage(&self) -> Coverage {
        self.coverage_from(None)
    }

    /// `work` with the working tree's quick check run beside it (a cold query's parts load
    /// meanwhile: the stats of every indexed file are off its path), and the coverage of its
    /// answer, made after `work` so that it names every part `work` found damaged.
    pub(super) fn with_coverage<T>(&self, work: impl FnOnce() -> T) -> (T, Coverage) {
        std::thread::scope(|s| {
            let scan = match &self.staleness {
                Staleness::Scan => Some(s.spawn(|| {
                    super::timed("staleness scan", || {
                        WorkingTreeDiff::quick(&self.root, &self.snapshot)
                    })
                })),
                Staleness::Watched(_) => None,
            };
            let out = work();
            let diff = scan.and_then(|h| h.join().ok());
            (out, self.coverage_from(diff))
        })
    }

    /// [`Analysis::coverage`] with the quick check's result when it was made already.
    fn coverage_from(&self, scanned: Option<WorkingTreeDiff>) -> Coverage {
        let mut c = match &self.staleness {
            Staleness::Scan => {
                let diff = scanned.unwrap_or_else(|| WorkingTreeDiff::quick(&self.root, &self.snapshot));
                Coverage::of(&self.snapshot, Some(&diff))
            }
            Staleness::Watched(w) => {
                let mut c = Coverage::of(&self.snapshot, None);
                c.stale = Some(w.pending());
                c
            }
        };
        c.damaged = self.damaged_parts();
        c
    }

    /// The parts that were opened and found damaged (not those merely absent, like a history
    /// part on a plain tree), each as the error that names the file.
    pub fn damaged_parts(&self) -> Vec<String> {
        // The heads are only read when the whole graph was not.
        let graph = self.graph.get().or(self.graph_heads.get());
        let mut out: Vec<String> = [
            ("lexical", self.lexical.get().and_then(damage)),
            ("lexical", self.lexical_checked.get().and_then(damage)),
            ("graph", graph.and_then(damage)),
            ("semantic", self.semantic.get().and_then(damage)),
            ("history", self.history.get().and_then(damage)),
        ]
        .into_iter()
        .filter_map(|(part, why)| why.map(|w| format!("{part}: {w}")))
        .collect();
        out.dedup();
        out
    }

    pub fn lexical(&self) -> Result<&LexicalIndex, ApiError> {
        if let Some(Err(e)) = self.lexical_checked.get() {
            return Err(ApiError::Unavailable(format!("the lexical part: {e}")));
        }
        self.lexical
            .get_or_init(|| self.snapshot.lexical().map_err(PartError::of))
            .as_ref()
            .map_err(|e| ApiError::Unavailable(format!("the lexical part: {e}")))
    }

    pub fn graph(&self) -> Result<&CodeGraph, ApiError> {
        self.graph
            .get_or_init(|| self.snapshot.graph().map_err(PartError::of))
            .as_ref()
            .map_err(|e| self.unavailable("the code graph", "graph", e))
    }

    /// The graph for a reader of every file's names, spans and rank that needs the
    /// references of only a few files ([`CodeGraph::file_body`]): the whole graph when it is
    /// loaded already, else its heads (a third of the decoding on 2.8M lines).
    pub fn graph_heads(&self) -> Result<&CodeGraph, ApiError> {
        if let Some(Ok(g)) = self.graph.get() {
            return Ok(g);
        }
        self.graph_heads
            .get_or_init(|| self.snapshot.graph_heads().map_err(PartError::of))
            .as_ref()
            .map_err(|e| self.unavailable("the code graph", "graph", e))
    }

    /// The history part (missing on a plain tree, with the reason).
    pub fn history(&self) -> Result<&HistoryPart, ApiError> {
        self.history
            .get_or_init(|| self.snapshot.history().map_err(PartError::of))
            .as_ref()
            .map_err(|e| self.unavailable("the history part", "history", e))
    }

    /// The code graph as petgraph, built once per generation.
    pub fn symbol_graph(&self) -> Result<&SymbolGraph, ApiError> {
        let g = self.graph()?;
        Ok(self.symbol_graph.get_or_init(|| SymbolGraph::new(g)))
    }

    /// Graph queries over the kept graphs.
    pub fn graph_query(&self) -> Result<GraphQuery<'_>, ApiError> {
        Ok(GraphQuery::with_symbol_graph(self.graph()?, self.symbol_graph()?))
    }

    /// The semantic part with the model it was built with.
    pub fn semantic(&self) -> Result<&SemanticIndex, ApiError> {
        self.semantic
            .get_or_init(|| {
                let embedder =
                    super::build_plan::stored_embedder(&self.snapshot.manifest).map_err(PartError::of)?;
                self.snapshot.semantic_with(embedder).map_err(PartError::of)
            })
            .as_ref()
            .map_err(|e| self.unavailable("the semantic part", "semantic", e))
    }

    pub fn has_semantic(&self) -> bool {
        self.snapshot.manifest.parts.vectors.is_some()
    }

    /// Opens the graph and the semantic part side by side (the two big loads of a cold
    /// context query).
    pub fn warm(&self, semantic: bool) {
        std::thread::scope(|s| {
            if semantic && self.has_semantic() {
                s.spawn(|| {
                    let _ = self.semantic();
                });
            }
            let _ = self.symbol_graph();
            if let Ok(lexical) = self.lexical() {
                let _ = self
                    .lexical_checked
                    .set(lexical.verify().map_err(|e| PartError::of(e.into())));
            }
        });
    }
}

/// Why a part could not be opened, kept with the generation: damage (a file of the index is
/// not what was written) is reported on every answer; a part that is absent or made with
/// another model is not.
#[derive(Debug)]
struct PartError {
    message: String,
    damaged: bool,
}

impl PartError {
    fn of(e: IndexError) -> PartError {
        PartError {
            damaged: matches!(
                e,
                IndexError::Corrupt { .. } | IndexError::Lexical(_) | IndexError::Io { .. }
            ),
            message: e.to_string(),
        }
    }
}

impl std::fmt::Display for PartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The message of a part that failed to open because it is damaged.
fn damage<T>(r: &Result<T, PartError>) -> Option<&str> {
    r.as_ref().err().filter(|e| e.damaged).map(|e| e.message.as_str())
}
