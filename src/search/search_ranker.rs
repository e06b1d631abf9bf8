//! `SearchRanker`: files and symbols relevant to a task, from every signal the index has.
//!
//! Signals, each a ranked list:
//! - `lexical`: the lexical file ranking of the task text (BM25 over files and definitions,
//!   fused, tests and docs demoted) and the definitions it hit;
//! - `semantic`: chunks nearest to the task in the embedding space, files by best chunk,
//!   definitions by the chunks they own;
//! - `mentions`: files whose paths the task names (stack-trace frames included) and the
//!   definitions of identifiers it names, weighted by how they were written and how specific
//!   the name is (a name defined in one place says more than one defined in forty);
//! - `graph`: personalized PageRank over the code graph restarted at the strongest seeds of
//!   the first three (their definitions), which lifts what those call, use and live in;
//! - `prior`: the global PageRank of each file (central code matters more, a little);
//! - `history` (a git checkout only): files whose past commit messages read like the task,
//!   then the co-change neighbours of the strongest files so far (see [`HistorySignal`]).
//!
//! Fusion is weighted reciprocal rank fusion, `w / (k + rank)` summed over the lists, with
//! the path prior of the lexical layer (tests, docs, examples and benches count half). The
//! weights are [`Weights::default`]; how they were chosen is in README.md.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::rank_features::QueryFacts;
use super::rank_features::{FileFacts, FileSignals, RankFeatures, path_overlap};
use super::{HistorySignal, LearnedRanker, MentionKind, SearchQuery, TaskMentions};
use crate::graph::{CodeGraph, Family, Node, SymbolGraph, SymbolId};
use crate::index::{
    CodeSearch, HistoryPart, IndexError, IndexSnapshot, SearchResults, SearchTarget, SemanticHit,
    SemanticIndex,
};
use crate::lang::PathKind;
use crate::lexical::{LexicalIndex, path_prior};
use crate::symbols::SymbolKind;

/// Which signals to use (all by default; the evaluation turns them off one at a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Signals {
    pub lexical: bool,
    pub semantic: bool,
    pub mentions: bool,
    pub graph: bool,
    pub prior: bool,
    pub history: bool,
    /// Files defining exactly the identifier the query is.
    pub definitions: bool,
    /// What paths say: files named by the query's words, copy priors, and the tests and
    /// examples not asked for listed after every other file.
    pub paths: bool,
    /// Folders many candidates lie in, and their entry files.
    pub modules: bool,
}

impl Default for Signals {
    fn default() -> Self {
        Signals {
            lexical: true,
            semantic: true,
            mentions: true,
            graph: true,
            prior: true,
            history: true,
            definitions: true,
            paths: true,
            modules: true,
        }
    }
}

impl Signals {
    /// `lexical,semantic,...` (a subset); unknown names are an error naming them.
    pub fn parse(list: &str) -> Result<Signals, String> {
        let mut s = Signals {
            lexical: false,
            semantic: false,
            mentions: false,
            graph: false,
            prior: false,
            history: false,
            definitions: false,
            paths: false,
            modules: false,
        };
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "lexical" => s.lexical = true,
                "semantic" => s.semantic = true,
                "mentions" => s.mentions = true,
                "graph" => s.graph = true,
                "prior" => s.prior = true,
                "history" => s.history = true,
                "definitions" => s.definitions = true,
                "paths" => s.paths = true,
                "modules" => s.modules = true,
                other => {
                    return Err(format!(
                        "unknown signal {other:?}: use lexical, semantic, mentions, graph, prior, history, \
                         definitions, paths, modules"
                    ));
                }
            }
        }
        Ok(s)
    }
}

/// Weights of the fused lists (see README.md for how they were chosen on the dev set).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Weights {
    pub k: f32,
    pub lexical: f32,
    pub semantic: f32,
    pub mentions: f32,
    pub graph: f32,
    pub prior: f32,
    /// A file's best definition's fused score, added to the file's.
    pub symbols: f32,
    /// Share of a named definition's mention weight its file gets.
    pub mention_files: f32,
    /// Strength of an identifier written in prose (backticks and code 0.7, frames 1).
    pub prose: f32,
    /// Files by the commit messages that changed them.
    pub history: f32,
    /// Co-change neighbours of the strongest files.
    pub cochange: f32,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            k: 10.0,
            lexical: 1.0,
            semantic: 0.8,
            mentions: 1.0,
            graph: 0.0,
            prior: 0.0,
            symbols: 0.0,
            mention_files: 0.5,
            prose: 0.4,
            history: 0.5,
            cochange: 0.3,
        }
    }
}

impl Weights {
    /// Overrides from `KEN_CONTEXT_WEIGHTS="lexical=1,semantic=0.4,k=20"` (for tuning runs).
    pub fn with_overrides(mut self, spec: &str) -> Weights {
        for pair in spec.split(',') {
            let Some((k, v)) = pair.split_once('=') else {
                continue;
            };
            let Ok(v) = v.trim().parse::<f32>() else { continue };
            match k.trim() {
                "k" => self.k = v,
                "lexical" => self.lexical = v,
                "semantic" => self.semantic = v,
                "mentions" => self.mentions = v,
                "graph" => self.graph = v,
                "prior" => self.prior = v,
                "symbols" => self.symbols = v,
                "mention_files" => self.mention_files = v,
                "prose" => self.prose = v,
                "history" => self.history = v,
                "cochange" => self.cochange = v,
                _ => {}
            }
        }
        self
    }
}

/// Why something was chosen: its rank in each list it appeared in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Why {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lexical: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic: Option<usize>,
    /// How the task named it (`path`, `frame`, `code`, `prose`), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mention: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub centrality: Option<usize>,
    /// Rank among the files whose past commit messages read like the task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<usize>,
    /// Rank among the co-change neighbours of the strongest files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cochange: Option<usize>,
    /// The file defines exactly the identifier the query is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defines_query: bool,
    /// The entry file (`mod.rs`, `__init__.py`, `index.ts`...) of a folder several candidates
    /// lie in.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub module_entry: bool,
}

impl Why {
    /// `lexical #1, semantic #4, named in the task (code)`.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = self.lexical {
            parts.push(format!("lexical #{r}"));
        }
        if let Some(r) = self.semantic {
            parts.push(format!("semantic #{r}"));
        }
        if let Some(m) = &self.mention {
            parts.push(format!("named in the task ({m})"));
        }
        if let Some(r) = self.graph {
            parts.push(format!("graph #{r}"));
        }
        if let Some(r) = self.history {
            parts.push(format!("commit messages #{r}"));
        }
        if let Some(r) = self.cochange {
            parts.push(format!("changes with a top file #{r}"));
        }
        if self.defines_query {
            parts.push("defines the query's identifier".into());
        }
        if self.module_entry {
            parts.push("entry of a module the task is about".into());
        }
        parts.join(", ")
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RankedFile {
    pub path: String,
    pub score: f32,
    pub why: Why,
    /// The learned ranker's columns (`FEATURE_NAMES`), when asked for (training data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub features: Option<Vec<f32>>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RankedSymbol {
    pub qualified_name: String,
    /// Containers and name without the module (`Dataset.to_netcdf`).
    pub local_name: String,
    pub kind: SymbolKind,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub score: f32,
    pub why: Why,
    #[serde(skip)]
    pub id: Option<SymbolId>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Ranking {
    pub files: Vec<RankedFile>,
    pub symbols: Vec<RankedSymbol>,
    /// Signals asked for and present in the index.
    pub signals_used: Vec<&'static str>,
    /// Signals asked for but missing from the index, with why.
    pub signals_missing: Vec<String>,
    /// `learned` when the model reordered the head of the list, else `fused`.
    pub ranker: &'static str,
    /// What the candidate stages found, for the spans a search answer lists under each file.
    #[serde(skip)]
    #[schemars(skip)]
    pub found: Found,
}

/// The lists behind a ranking: the lexical hits (files and definitions) and terms, the
/// semantic chunks, and the exact definitions of the identifier the query is.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub terms: Vec<String>,
    pub lexical: Vec<crate::index::SearchHit>,
    /// Each lexical file's best hit.
    pub lexical_best: Vec<(String, crate::index::SearchHit)>,
    pub semantic: Vec<crate::index::SemanticHit>,
    pub definitions: Vec<crate::index::SymbolHit>,
}

/// Files and symbols kept per ranking.
const MAX_FILES: usize = 50;
const MAX_SYMBOLS: usize = 100;
/// Lists fetched per signal.
const LEXICAL_FILES: usize = 100;
const SEMANTIC_CHUNKS: usize = 300;
/// Candidates given features when no model says how many.
const LEARNED_CANDIDATES: usize = 50;
/// Files whose definitions seed the graph walk.
const GRAPH_SEED_FILES: usize = 8;
/// Lexical and semantic ranks within which files count toward their folder.
const MODULE_WINDOW: usize = 20;
/// Folders whose entry files are brought in.
const MODULE_ENTRIES: usize = 3;
/// An entry file's fused score, as a share of a lexical first place.
const MODULE_WEIGHT: f32 = 0.3;
/// A name defined in more places than this says nothing specific.
const MAX_DEFINITIONS_PER_NAME: usize = 12;

pub struct SearchRanker<'s> {
    snapshot: &'s IndexSnapshot,
    search: Option<CodeSearch<'s>>,
    semantic: Option<&'s SemanticIndex>,
    graph: Option<&'s CodeGraph>,
    history: Option<&'s HistoryPart>,
    missing: Vec<String>,
    signals: Signals,
    weights: Weights,
    learned: Option<&'static LearnedRanker>,
    /// Attach each candidate's feature vector to the ranking.
    pub with_features: bool,
    /// Files kept in the ranking (at least 50; a search's page may ask for more).
    pub max_files: usize,
    /// Rank definitions too (context packs them; a search lists files and their spans).
    pub with_symbols: bool,
    /// Stages' searches made beforehand ([`SearchRanker::with_ahead`]).
    ahead: std::sync::Mutex<Ahead>,
}

/// The searches of a ranking's query that a caller made beforehand, beside the loading of
/// the parts the rest of the ranking reads.
#[derive(Default)]
pub struct Ahead {
    /// [`SearchRanker::lexical_ahead`].
    pub lexical: Option<SearchResults>,
    /// [`SearchRanker::semantic_ahead`].
    pub semantic: Option<Vec<SemanticHit>>,
}

/// What the signal stages collect: per file and per definition the fused score so far
/// with why, and the signals that ran.
#[derive(Default)]
struct Candidates {
    files: HashMap<String, Acc>,
    found: Found,
    /// (path, definition or line) -> accumulated score, with why.
    symbols: HashMap<SymbolKey, Acc>,
    used: Vec<&'static str>,
}

/// Per-file accumulation.
#[derive(Default)]
struct Acc {
    score: f32,
    why: Why,
    sig: FileSignals,
}

/// How the fused list's head is finally ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RankerKind {
    /// The learned model when it loads, else fused.
    #[default]
    Learned,
    /// Weighted reciprocal rank fusion only.
    Fused,
}

impl RankerKind {
    pub fn parse(s: &str) -> Result<RankerKind, String> {
        match s {
            "learned" => Ok(RankerKind::Learned),
            "fused" => Ok(RankerKind::Fused),
            other => Err(format!("unknown ranker {other:?}: use learned or fused")),
        }
    }
}

/// The lexical search a ranking makes: without snippets (a ranking shows none).
fn lexical_search<'s>(
    snapshot: &'s IndexSnapshot,
    root: &std::path::Path,
    lexical: LexicalIndex,
) -> CodeSearch<'s> {
    CodeSearch::with_lexical(snapshot, root, lexical).without_snippets()
}

/// The opened parts a ranking reads, each one present or why not (a resident server opens
/// them once and lends them to every request).
pub struct RankerParts<'s> {
    pub lexical: Result<LexicalIndex, String>,
    pub semantic: Option<Result<&'s SemanticIndex, String>>,
    pub graph: Result<&'s CodeGraph, String>,
    /// `None`: not asked for.
    pub history: Option<Result<&'s HistoryPart, String>>,
}

impl<'s> SearchRanker<'s> {
    /// A missing part drops its signal (and says so).
    pub fn new(
        snapshot: &'s IndexSnapshot,
        root: &std::path::Path,
        parts: RankerParts<'s>,
        signals: Signals,
        weights: Weights,
    ) -> SearchRanker<'s> {
        let mut missing = Vec::new();
        let search = match (signals.lexical, parts.lexical) {
            (true, Ok(l)) => Some(lexical_search(snapshot, root, l)),
            (true, Err(e)) => {
                missing.push(format!("lexical: {e}"));
                None
            }
            (false, _) => None,
        };
        let semantic = match (signals.semantic, parts.semantic) {
            (true, Some(Ok(s))) => Some(s),
            (true, Some(Err(e))) => {
                missing.push(format!("semantic: {e}"));
                None
            }
            (true, None) => {
                missing.push("semantic: not opened".into());
                None
            }
            (false, _) => None,
        };
        // Read whatever the signals: it also names and places the definitions found.
        let graph = match parts.graph {
            Ok(g) => Some(g),
            Err(e) => {
                if signals.graph || signals.mentions || signals.prior {
                    missing.push(format!("graph: {e}"));
                }
                None
            }
        };
        let history = match (signals.history, parts.history) {
            (true, Some(Ok(h))) => Some(h),
            (true, Some(Err(e))) => {
                missing.push(format!("history: {e}"));
                None
            }
            (true, None) => {
                missing.push("history: not opened".into());
                None
            }
            (false, _) => None,
        };
        SearchRanker {
            snapshot,
            search,
            semantic,
            graph,
            history,
            missing,
            signals,
            weights,
            learned: None,
            with_features: false,
            max_files: MAX_FILES,
            with_symbols: true,
            ahead: std::sync::Mutex::new(Ahead::default()),
        }
    }

    /// Orders the fused list's head with the learned model, when `kind` asks for it and the
    /// model loads (a model that does not is reported among the missing signals).
    pub fn with_ranker(mut self, kind: RankerKind) -> Self {
        self.learned = match kind {
            RankerKind::Fused => None,
            RankerKind::Learned => match LearnedRanker::embedded() {
                Ok(m) => Some(m),
                Err(e) => {
                    self.missing.push(format!("learned ranker: {e}"));
                    None
                }
            },
        };
        self
    }

    pub fn graph(&self) -> Option<&'s CodeGraph> {
        self.graph
    }

    /// The lexical stage's search of `q`, which reads the lexical part alone: a caller that
    /// opens the other parts first runs it beside them and hands it to the ranking of the same
    /// query ([`SearchRanker::with_ahead`]).
    pub fn lexical_ahead(
        snapshot: &IndexSnapshot,
        root: &std::path::Path,
        lexical: LexicalIndex,
        q: &SearchQuery,
    ) -> Result<SearchResults, IndexError> {
        lexical_search(snapshot, root, lexical).search_parsed(&q.lexical, SearchTarget::Files, LEXICAL_FILES)
    }

    /// The semantic stage's search of `q`, which reads the semantic part alone.
    pub fn semantic_ahead(semantic: &SemanticIndex, q: &SearchQuery) -> Result<Vec<SemanticHit>, IndexError> {
        semantic.search(&q.plain(), SEMANTIC_CHUNKS)
    }

    /// Ranks with searches made beforehand for the same query.
    pub fn with_ahead(self, ahead: Ahead) -> Self {
        if let Ok(mut a) = self.ahead.lock() {
            *a = ahead;
        }
        self
    }

    /// The stages in order: candidates per signal, the fused file order (with the learned
    /// stage over its head), then the definitions, each with its file's standing.
    pub fn rank(&self, q: &SearchQuery) -> Result<Ranking, IndexError> {
        let mut c = Candidates::default();
        let named: Vec<&str> = match self.signals.mentions {
            true => q
                .mentions
                .identifiers
                .iter()
                .filter_map(|(n, _)| last_segment(n))
                .collect(),
            false => Vec::new(),
        };
        let index = self.graph.map(|g| GraphIndex::new(g, &named));
        // Each stage's time at debug level (`KEN_LOG=kenning::search=debug`).
        let mut clock = std::time::Instant::now();
        let mut lap = |stage: &str| {
            tracing::debug!(
                stage,
                ms = clock.elapsed().as_secs_f64() * 1000.0,
                "ranking stage"
            );
            clock = std::time::Instant::now();
        };
        self.lexical_stage(q, &mut c)?;
        lap("lexical");
        self.semantic_stage(q, &mut c)?;
        lap("semantic");
        self.mention_stage(&q.mentions, &mut c, index.as_ref());
        self.definition_stage(q, &mut c)?;
        self.path_stage(q, &mut c);
        lap("mentions, definitions, paths");
        self.history_stage(&q.text, &mut c);
        self.graph_stage(&mut c, index.as_ref());
        self.prior_stage(&mut c, index.as_ref());
        self.cochange_stage(&mut c);
        lap("history, graph, co-change");
        self.module_stage(&mut c);
        // Docs and config (read as text) enter through history and co-change; a ranking is of
        // code, so they stay out unless the query names them or asks for them.
        let wants_text = q.lexical.wants_text();
        c.files
            .retain(|path, a| wants_text || a.why.mention.is_some() || !crate::lang::is_text_path(path));
        if q.has_filters() {
            c.files.retain(|path, _| {
                let language = self
                    .snapshot
                    .file_id(path)
                    .and_then(|id| self.snapshot.table.files.get(id.index()))
                    .map_or("", |r| r.language.as_str());
                q.keeps_file(path, language)
            });
        }
        let (ranked_files, reranked) = self.order_files(q, &mut c, index.as_ref());
        lap("modules, order (features, model)");
        let symbols = match self.with_symbols {
            true => self.order_symbols(std::mem::take(&mut c.symbols), &ranked_files, index.as_ref())?,
            false => Vec::new(),
        };
        lap("definitions ordered");
        Ok(Ranking {
            files: ranked_files,
            symbols,
            signals_used: c.used,
            signals_missing: self.missing.clone(),
            ranker: if reranked { "learned" } else { "fused" },
            found: c.found,
        })
    }
    /// Lexical: the lexical file ranking of the task and the definitions it hit.
    fn lexical_stage(&self, q: &SearchQuery, c: &mut Candidates) -> Result<(), IndexError> {
        let w = self.weights;
        let rrf = |weight: f32, rank: usize| weight / (w.k + rank as f32);
        if let Some(search) = &self.search {
            c.used.push("lexical");
            let ahead = self.ahead.lock().ok().and_then(|mut a| a.lexical.take());
            let r = match ahead {
                Some(r) => r,
                None => search.search_parsed(&q.lexical, SearchTarget::Files, LEXICAL_FILES)?,
            };
            let list = r.files.unwrap_or_default();
            c.found.terms = r.terms.clone();
            c.found.lexical_best = list.iter().map(|f| (f.path.clone(), f.best.clone())).collect();
            let top = list.first().map_or(1.0, |f| f.score).max(f32::MIN_POSITIVE);
            for (i, f) in list.iter().enumerate() {
                let a = c.files.entry(f.path.clone()).or_default();
                a.score += rrf(w.lexical, i + 1);
                a.why.lexical = Some(i + 1);
                a.sig.lexical = f.score / top;
                a.sig.lexical_rank = i + 1;
            }
            let mut seen = HashSet::new();
            let defs = r
                .hits
                .iter()
                .filter(|h| h.local_name.is_some() && h.kind.is_some());
            for (i, h) in defs.filter(|h| seen.insert((h.path.clone(), h.line))).enumerate() {
                if let Some(a) = c.files.get_mut(&h.path) {
                    a.sig.lexical_defs += 1;
                }
                let a = c
                    .symbols
                    .entry(SymbolKey::Line(h.path.clone(), h.line))
                    .or_default();
                a.score += rrf(w.lexical, i + 1);
                a.why.lexical.get_or_insert(i + 1);
            }
            c.found.lexical = r.hits;
        }
        Ok(())
    }
    /// Semantic: files by their best chunk, definitions by the chunks they own.
    fn semantic_stage(&self, q: &SearchQuery, c: &mut Candidates) -> Result<(), IndexError> {
        let w = self.weights;
        let rrf = |weight: f32, rank: usize| weight / (w.k + rank as f32);
        if let Some(sem) = self.semantic {
            c.used.push("semantic");
            let ahead = self.ahead.lock().ok().and_then(|mut a| a.semantic.take());
            let hits = match ahead {
                Some(hits) => hits,
                None => Self::semantic_ahead(sem, q)?,
            };
            let mut file_rank = 0;
            let mut sym_rank = 0;
            let mut seen_files = HashSet::new();
            let mut seen_syms = HashSet::new();
            for h in &hits {
                // Several chunks of one file count together: how many, and the best three.
                let a = c.files.entry(h.path.clone()).or_default();
                if a.sig.semantic_chunks < 3 {
                    a.sig.semantic_sum += h.score;
                }
                a.sig.semantic_chunks += 1;
                if seen_files.insert(h.path.clone()) {
                    file_rank += 1;
                    let a = c.files.entry(h.path.clone()).or_default();
                    a.score += rrf(w.semantic, file_rank);
                    a.why.semantic = Some(file_rank);
                    a.sig.semantic = h.score;
                    a.sig.semantic_rank = file_rank;
                }
                if let Some(def) = h.symbol
                    && seen_syms.insert((h.path.clone(), def))
                {
                    sym_rank += 1;
                    let a = c.symbols.entry(SymbolKey::Def(h.path.clone(), def)).or_default();
                    a.score += rrf(w.semantic, sym_rank);
                    a.why.semantic.get_or_insert(sym_rank);
                }
            }
            c.found.semantic = hits;
        }
        Ok(())
    }
    /// Mentions: files whose paths the task names and the definitions of the identifiers it names.
    fn mention_stage(&self, m: &TaskMentions, c: &mut Candidates, index: Option<&GraphIndex>) {
        let w = self.weights;
        let rrf = |weight: f32, rank: usize| weight / (w.k + rank as f32);
        if self.signals.mentions
            && let (Some(g), Some(gi)) = (&self.graph, &index)
        {
            c.used.push("mentions");
            let top = rrf(w.mentions, 1);
            for p in &m.paths {
                for fi in gi.files_matching(&p.path) {
                    let path = g.files[fi].path.to_string();
                    let a = c.files.entry(path.clone()).or_default();
                    a.score += top;
                    a.why.mention = Some("path".into());
                    a.sig.mention += top;
                    a.sig.mention_path = true;
                    if let Some(line) = p.line
                        && let Some(def) = innermost(g, fi, line)
                    {
                        let a = c.symbols.entry(SymbolKey::Def(path, def)).or_default();
                        a.score += top;
                        a.why.mention = Some("frame".into());
                    }
                }
            }
            for (name, kind) in &m.identifiers {
                let defs = gi.definitions_of(g, name);
                if defs.is_empty() || defs.len() > MAX_DEFINITIONS_PER_NAME {
                    continue;
                }
                let strength = match kind {
                    MentionKind::Frame => 1.0,
                    MentionKind::Code => 0.7,
                    MentionKind::Prose => w.prose,
                } / (defs.len() as f32).sqrt();
                let label = match kind {
                    MentionKind::Frame => "frame",
                    MentionKind::Code => "code",
                    MentionKind::Prose => "prose",
                };
                let mut files_hit = HashSet::new();
                for s in defs {
                    let path = g.files[s.file.index()].path.to_string();
                    let a = c.symbols.entry(SymbolKey::Def(path.clone(), s.def)).or_default();
                    a.score += top * strength;
                    a.why.mention.get_or_insert_with(|| label.into());
                    if files_hit.insert(path.clone()) {
                        let a = c.files.entry(path).or_default();
                        a.score += top * strength * w.mention_files;
                        a.why.mention.get_or_insert_with(|| label.into());
                        a.sig.mention += top * strength * w.mention_files;
                    }
                }
            }
        }
    }
    /// Exact definitions: a query that is one identifier brings the files defining exactly that
    /// name (a definition beats every file that merely mentions it).
    fn definition_stage(&self, q: &SearchQuery, c: &mut Candidates) -> Result<(), IndexError> {
        let w = self.weights;
        let Some(word) = q.identifier.as_deref().filter(|_| self.signals.definitions) else {
            return Ok(());
        };
        let defs = crate::index::SymbolLookup::new(self.snapshot)?.find(word)?;
        let top = w.mentions / (w.k + 1.0);
        let mut files = 0;
        for d in defs
            .iter()
            .filter(|d| d.quality == crate::index::MatchQuality::Exact)
        {
            let a = c.files.entry(d.path.clone()).or_default();
            if a.sig.exact_def {
                continue;
            }
            a.sig.exact_def = true;
            a.why.defines_query = true;
            a.score += top;
            a.sig.mention += top;
            let s = c
                .symbols
                .entry(SymbolKey::Line(d.path.clone(), d.line))
                .or_default();
            s.score += top;
            s.why.mention.get_or_insert_with(|| "definition".into());
            c.found.definitions.push(d.clone());
            files += 1;
            if files == MAX_DEFINITIONS_PER_NAME {
                break;
            }
        }
        if files > 0 {
            c.used.push("definitions");
        }
        Ok(())
    }

    /// Paths: the indexed files named exactly as a word of the query (`router` names
    /// `router.go`) that no list found.
    fn path_stage(&self, q: &SearchQuery, c: &mut Candidates) {
        if !self.signals.paths || !q.evidence.has_names() {
            return;
        }
        let mut added = false;
        for record in &self.snapshot.table.files {
            let path = record.path.as_str();
            if !c.files.contains_key(path) && q.evidence.names_exactly(path) {
                let a = c.files.entry(path.to_string()).or_default();
                a.score += q.evidence.weigh(path, 0.0, self.weights.k);
                a.why.mention = Some("path name".into());
                added = true;
            }
        }
        if added {
            c.used.push("paths");
        }
    }

    /// Modules: the folders several lexical or semantic candidates lie in, each file's share of
    /// them, and each such folder's entry file brought in (an architecture question is about a
    /// module: its entry and its central types, not only the file repeating its words).
    fn module_stage(&self, c: &mut Candidates) {
        if !self.signals.modules {
            return;
        }
        let w = self.weights;
        let folder = |p: &str| p.rsplit_once('/').map_or("", |(d, _)| d).to_string();
        let mut lexical: HashMap<String, f32> = HashMap::new();
        let mut semantic: HashMap<String, f32> = HashMap::new();
        for (p, a) in &c.files {
            if (1..=MODULE_WINDOW).contains(&a.sig.lexical_rank) {
                *lexical.entry(folder(p)).or_default() += 1.0;
            }
            if (1..=MODULE_WINDOW).contains(&a.sig.semantic_rank) {
                *semantic.entry(folder(p)).or_default() += 1.0;
            }
        }
        for (p, a) in c.files.iter_mut() {
            let f = folder(p);
            a.sig.folder_lexical = lexical.get(&f).copied().unwrap_or(0.0);
            a.sig.folder_semantic = semantic.get(&f).copied().unwrap_or(0.0);
        }
        let count = |f: &String| {
            (
                lexical.get(f).copied().unwrap_or(0.0),
                semantic.get(f).copied().unwrap_or(0.0),
            )
        };
        let mut busy: Vec<(&String, f32)> = lexical
            .keys()
            .chain(semantic.keys())
            .map(|f| (f, count(f).0 + count(f).1))
            .filter(|(_, n)| *n >= 3.0)
            .collect();
        busy.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
        busy.dedup_by(|a, b| a.0 == b.0);
        let mut entries = Vec::new();
        for (f, _) in busy.into_iter().take(MODULE_ENTRIES) {
            let found = crate::lang::MODULE_ENTRY_FILES.iter().find_map(|name| {
                let path = match f.is_empty() {
                    true => (*name).to_string(),
                    false => format!("{f}/{name}"),
                };
                self.snapshot.file_id(&path).map(|_| path)
            });
            if let Some(path) = found {
                entries.push((path, count(f)));
            }
        }
        if !entries.is_empty() {
            c.used.push("modules");
        }
        for (i, (path, (lex, sem))) in entries.into_iter().enumerate() {
            let a = c.files.entry(path).or_default();
            a.why.module_entry = true;
            a.sig.module_entry = true;
            a.sig.folder_lexical = lex;
            a.sig.folder_semantic = sem;
            a.score += MODULE_WEIGHT * w.lexical / (w.k + i as f32 + 1.0);
        }
    }

    /// History: files whose past commit messages read like the task.
    fn history_stage(&self, task: &str, c: &mut Candidates) {
        let w = self.weights;
        let rrf = |weight: f32, rank: usize| weight / (w.k + rank as f32);
        let exists = |p: &str| self.snapshot.file_id(p).is_some();
        if let Some(h) = self.history.filter(|_| w.history > 0.0) {
            c.used.push("history");
            let signal = HistorySignal { history: h };
            let list = signal.messages(task, exists, LEXICAL_FILES);
            let top = list.first().map_or(1.0, |f| f.1).max(f32::MIN_POSITIVE);
            for (i, (path, s)) in list.into_iter().enumerate() {
                let a = c.files.entry(path).or_default();
                a.score += rrf(w.history, i + 1);
                a.why.history = Some(i + 1);
                a.sig.history = s / top;
                a.sig.history_rank = i + 1;
            }
        }
    }
    /// Graph: personalized PageRank from the strongest files' definitions.
    fn graph_stage(&self, c: &mut Candidates, index: Option<&GraphIndex>) {
        let w = self.weights;
        let rrf = |weight: f32, rank: usize| weight / (w.k + rank as f32);
        // The walk reads every reference: a graph decoded heads-only has none to walk.
        let whole = self.graph.is_some_and(|g| !g.heads_only());
        if let (true, Some(g), Some(gi)) = (self.signals.graph && w.graph > 0.0 && whole, &self.graph, &index)
        {
            c.used.push("graph");
            let sg = SymbolGraph::new(g);
            let mut ranked: Vec<(&String, &Acc)> = c.files.iter().collect();
            ranked.sort_by(|a, b| b.1.score.total_cmp(&a.1.score).then(a.0.cmp(b.0)));
            let mut seeds: Vec<(Node, f32)> = Vec::new();
            for (path, acc) in ranked.iter().take(GRAPH_SEED_FILES) {
                let Some(fi) = gi.file(path) else { continue };
                let own: Vec<(u32, f32)> = c
                    .symbols
                    .iter()
                    .filter_map(|(k, a)| match k {
                        SymbolKey::Def(p, d) if p == *path => Some((*d, a.score)),
                        SymbolKey::Line(p, l) if p == *path => gi.def_at(g, fi, *l).map(|d| (d, a.score)),
                        _ => None,
                    })
                    .collect();
                if own.is_empty() {
                    seeds.push((Node::File(crate::symbols::FileId(fi as u32)), acc.score));
                }
                for (d, s) in own {
                    seeds.push((Node::Symbol(SymbolId::new(fi as u32, d)), acc.score * s));
                }
            }
            if !seeds.is_empty() {
                let pr = sg.personalized_rank(&seeds);
                let mut per_file: Vec<(usize, f32)> = Vec::new();
                let mut per_sym: Vec<(SymbolId, f32)> = Vec::new();
                for fi in 0..g.files.len() {
                    // The file's own node plus its best definition (a sum would favour big
                    // c.files for their size).
                    let own = pr
                        .get(sg.file_node(crate::symbols::FileId(fi as u32)).index())
                        .copied()
                        .unwrap_or(0.0);
                    let mut best = 0f32;
                    for d in 0..g.defs(fi).len() {
                        let id = SymbolId::new(fi as u32, d as u32);
                        let s = pr.get(sg.symbol_node(id).index()).copied().unwrap_or(0.0);
                        best = best.max(s);
                        if s > 0.0 {
                            per_sym.push((id, s));
                        }
                    }
                    if own + best > 0.0 {
                        per_file.push((fi, own + best));
                    }
                }
                per_file.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                for (i, (fi, _)) in per_file.iter().take(MAX_FILES).enumerate() {
                    let a = c.files.entry(g.files[*fi].path.to_string()).or_default();
                    a.score += rrf(w.graph, i + 1);
                    a.why.graph = Some(i + 1);
                    a.sig.graph_rank = i + 1;
                }
                per_sym.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                for (i, (id, _)) in per_sym.iter().take(MAX_SYMBOLS).enumerate() {
                    let path = g.files[id.file.index()].path.to_string();
                    let a = c.symbols.entry(SymbolKey::Def(path, id.def)).or_default();
                    a.score += rrf(w.graph, i + 1);
                    a.why.graph.get_or_insert(i + 1);
                }
            }
        }
    }
    /// Prior: global centrality of the files already in play.
    fn prior_stage(&self, c: &mut Candidates, index: Option<&GraphIndex>) {
        let w = self.weights;
        let rrf = |weight: f32, rank: usize| weight / (w.k + rank as f32);
        if let (true, Some(g), Some(gi)) = (self.signals.prior && w.prior > 0.0, &self.graph, &index) {
            c.used.push("prior");
            let mut central: Vec<(&String, f32)> = c
                .files
                .keys()
                .filter_map(|p| {
                    gi.file(p)
                        .map(|fi| (p, g.rank.get(fi).map_or(0.0, |r| r.iter().sum())))
                })
                .collect();
            central.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
            let bonus: Vec<(String, usize)> = central
                .iter()
                .enumerate()
                .map(|(i, (p, _))| ((*p).clone(), i + 1))
                .collect();
            for (p, r) in bonus {
                if let Some(a) = c.files.get_mut(&p) {
                    a.score += rrf(w.prior, r);
                    a.why.centrality = Some(r);
                }
            }
        }
    }
    /// Co-change: neighbours of the strongest files so far.
    fn cochange_stage(&self, c: &mut Candidates) {
        let w = self.weights;
        let rrf = |weight: f32, rank: usize| weight / (w.k + rank as f32);
        let exists = |p: &str| self.snapshot.file_id(p).is_some();
        if let Some(h) = self.history.filter(|_| w.cochange > 0.0) {
            let mut ranked: Vec<(String, f32)> = c
                .files
                .iter()
                .map(|(p, a)| (p.clone(), a.score * path_prior(p)))
                .collect();
            ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            let signal = HistorySignal { history: h };
            for (i, (path, s)) in signal.cochange(&ranked, exists).into_iter().enumerate() {
                let a = c.files.entry(path).or_default();
                a.score += rrf(w.cochange, i + 1);
                a.why.cochange = Some(i + 1);
                a.sig.cochange = s;
                a.sig.cochange_rank = i + 1;
            }
        }
    }

    /// Files: the fused scores (plus a share of their best definition's) times the path
    /// prior, best first, then the learned stage over the head.
    fn order_files(
        &self,
        q: &SearchQuery,
        c: &mut Candidates,
        index: Option<&GraphIndex>,
    ) -> (Vec<RankedFile>, bool) {
        let w = self.weights;
        let mut best: HashMap<String, f32> = HashMap::new();
        for (k, a) in &c.symbols {
            let (SymbolKey::Def(p, _) | SymbolKey::Line(p, _)) = k;
            let b = best.entry(p.clone()).or_default();
            *b = b.max(a.score);
        }
        if w.symbols > 0.0 {
            for (p, b) in &best {
                if let Some(a) = c.files.get_mut(p) {
                    a.score += w.symbols * b;
                }
            }
        }
        let mut sigs: HashMap<String, FileSignals> = HashMap::new();
        let mut ranked_files: Vec<RankedFile> = std::mem::take(&mut c.files)
            .into_iter()
            .map(|(path, a)| {
                sigs.insert(path.clone(), a.sig);
                let score = match self.signals.paths {
                    true => q.evidence.weigh(&path, a.score * path_prior(&path), w.k),
                    false => a.score * path_prior(&path),
                };
                RankedFile {
                    score,
                    path,
                    why: a.why,
                    features: None,
                }
            })
            .collect();
        ranked_files.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
        let reranked = self.rerank(q, &mut ranked_files, &sigs, &best, index);
        if self.signals.paths {
            // Stable: the tests and examples the query does not ask for go after every other
            // file, each group keeping its order (they mention what the code does, so they
            // match well, but are rarely what was asked for).
            ranked_files.sort_by_cached_key(|f| q.evidence.set_aside(&f.path));
        }
        ranked_files.truncate(self.max_files.max(MAX_FILES));
        (ranked_files, reranked)
    }

    /// Definitions: their own lists plus their file's score, times the path prior.
    fn order_symbols(
        &self,
        symbols: HashMap<SymbolKey, Acc>,
        ranked_files: &[RankedFile],
        index: Option<&GraphIndex>,
    ) -> Result<Vec<RankedSymbol>, IndexError> {
        let file_score: HashMap<&str, f32> =
            ranked_files.iter().map(|f| (f.path.as_str(), f.score)).collect();
        let mut merged: HashMap<(String, u32), (Acc, Option<SymbolId>)> = HashMap::new();
        // Without the graph (a first stage), a lexical hit's line finds its definition in the
        // file's record instead of the skeleton.
        let record_lines = match self.graph {
            Some(_) => HashMap::new(),
            None => self.definition_lines(symbols.keys().filter_map(|k| match k {
                SymbolKey::Line(p, _) => Some(p.as_str()),
                SymbolKey::Def(..) => None,
            }))?,
        };
        for (key, acc) in symbols {
            let (path, def, id) = match (&key, &self.graph, &index) {
                (SymbolKey::Def(p, d), Some(_), Some(gi)) => (
                    p.clone(),
                    Some(*d),
                    gi.file(p).map(|fi| SymbolId::new(fi as u32, *d)),
                ),
                (SymbolKey::Line(p, l), Some(g), Some(gi)) => {
                    let fi = gi.file(p);
                    let d = fi.and_then(|fi| gi.def_at(g, fi, *l));
                    (p.clone(), d, fi.zip(d).map(|(fi, d)| SymbolId::new(fi as u32, d)))
                }
                (SymbolKey::Def(p, d), _, _) => (p.clone(), Some(*d), None),
                (SymbolKey::Line(p, l), _, _) => {
                    let d = record_lines
                        .get(p.as_str())
                        .and_then(|lines| lines.iter().position(|s| s == l));
                    (p.clone(), d.map(|d| d as u32), None)
                }
            };
            let Some(def) = def else { continue };
            let e = merged.entry((path, def)).or_insert_with(|| (Acc::default(), id));
            e.0.score += acc.score;
            merge_why(&mut e.0.why, &acc.why);
        }
        let mut out_symbols: Vec<RankedSymbol> = Vec::new();
        let mut by_file: HashMap<String, Vec<Candidate>> = HashMap::new();
        for ((path, def), (acc, id)) in merged {
            let fs = file_score.get(path.as_str()).copied().unwrap_or(0.0);
            let score = (acc.score + fs) * path_prior(&path);
            by_file.entry(path).or_default().push((def, score, acc.why, id));
        }
        // Names and spans come from the graph's skeletons, or the file's record.
        for (path, defs) in by_file {
            let described = self.describe(&path, &defs.iter().map(|d| d.0).collect::<Vec<_>>(), index)?;
            for ((_, score, why, id), d) in defs.into_iter().zip(described) {
                let Some(d) = d else { continue };
                out_symbols.push(RankedSymbol {
                    qualified_name: d.qualified,
                    local_name: d.local,
                    kind: d.kind,
                    path: path.clone(),
                    start_line: d.start,
                    end_line: d.end,
                    score,
                    why,
                    id,
                });
            }
        }
        out_symbols.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.path.cmp(&b.path))
                .then(a.start_line.cmp(&b.start_line))
        });
        out_symbols.truncate(MAX_SYMBOLS);
        Ok(out_symbols)
    }

    /// The learned stage: each of the fused list's first candidates gets its feature
    /// vector, and the model (when there is one) reorders them. The fused scores are kept
    /// as a scale and handed out again in the new order, so what reads file scores later
    /// (the definitions' ranking) sees the same range. Returns whether it reordered.
    fn rerank(
        &self,
        q: &SearchQuery,
        files: &mut [RankedFile],
        sigs: &HashMap<String, FileSignals>,
        best: &HashMap<String, f32>,
        index: Option<&GraphIndex>,
    ) -> bool {
        if self.learned.is_none() && !self.with_features {
            return false;
        }
        let n = files.len().min(
            self.learned
                .as_ref()
                .map_or(LEARNED_CANDIDATES, |m| m.candidates.max(1)),
        );
        let history = self.history.map(|h| HistorySignal { history: h });
        let evidence = &q.evidence;
        let query = QueryFacts::of(q);
        for (i, f) in files.iter_mut().take(n).enumerate() {
            let graph_file = self
                .graph
                .zip(index)
                .and_then(|(g, gi)| gi.file(&f.path).map(|fi| (g, fi)));
            let facts = FileFacts {
                lines: self
                    .snapshot
                    .file_id(&f.path)
                    .and_then(|id| self.snapshot.table.files.get(id.index()))
                    .map_or(0, |r| r.lines),
                defs: graph_file.map_or(0, |(g, fi)| g.def_names(fi).len()),
                centrality: graph_file.map_or(0.0, |(g, fi)| g.rank.get(fi).map_or(0.0, |r| r.iter().sum())),
                path_prior: path_prior(&f.path),
                kind: PathKind::of(&f.path),
                depth: f.path.matches('/').count() as u32,
                path_overlap: path_overlap(&q.words, &f.path),
                name_match: evidence.name_evidence(&f.path),
                copy_prior: evidence.prior(&f.path),
                history: history.as_ref().map(|h| h.facts(&f.path)),
            };
            let sig = sigs.get(&f.path).copied().unwrap_or_default();
            let b = best.get(&f.path).copied().unwrap_or(0.0);
            f.features = Some(RankFeatures::new(f.score, i + 1, b, &sig, &facts, &query).0);
        }
        let Some(model) = &self.learned else {
            return false;
        };
        let head = &mut files[..n];
        let scale: Vec<f32> = head.iter().map(|f| f.score).collect();
        let mut scored: Vec<(f32, usize)> = head
            .iter()
            .enumerate()
            .map(|(i, f)| (f.features.as_deref().map_or(f32::MIN, |x| model.score(x)), i))
            .collect();
        // Ties keep the fused order.
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let order: Vec<usize> = scored.iter().map(|s| s.1).collect();
        let mut reordered: Vec<RankedFile> = order.iter().map(|&i| head[i].clone()).collect();
        for (f, s) in reordered.iter_mut().zip(scale) {
            f.score = s;
            if !self.with_features {
                f.features = None;
            }
        }
        head.clone_from_slice(&reordered);
        true
    }

    /// The first line of every definition of each of `paths`, from their records.
    fn definition_lines<'p>(
        &self,
        paths: impl Iterator<Item = &'p str>,
    ) -> Result<HashMap<String, Vec<u32>>, IndexError> {
        let mut paths: Vec<&str> = paths.collect();
        paths.sort_unstable();
        paths.dedup();
        let ids: Vec<_> = paths.iter().filter_map(|p| self.snapshot.file_id(p)).collect();
        let records = self.snapshot.load_symbols_of(&ids)?;
        Ok(ids
            .iter()
            .zip(records)
            .filter_map(|(id, s)| {
                let r = self.snapshot.table.files.get(id.index())?;
                let lines = s.definitions.iter().map(|d| d.span.start_line).collect();
                Some((r.path.as_str().to_string(), lines))
            })
            .collect())
    }

    /// Names, kinds and spans of definitions of a file.
    fn describe(
        &self,
        path: &str,
        defs: &[u32],
        index: Option<&GraphIndex>,
    ) -> Result<Vec<Option<Described>>, IndexError> {
        if let (Some(g), Some(fi)) = (&self.graph, index.and_then(|gi| gi.file(path))) {
            let file_defs = g.defs(fi);
            return Ok(defs
                .iter()
                .map(|&d| {
                    file_defs.get(d as usize).map(|n| Described {
                        qualified: g.qualified(fi, d),
                        local: g.local_name(fi, d),
                        kind: n.kind,
                        start: n.line,
                        end: n.end_line,
                    })
                })
                .collect());
        }
        let Some(id) = self.snapshot.file_id(path) else {
            return Ok(vec![None; defs.len()]);
        };
        let record = self.snapshot.table.files.get(id.index());
        let symbols = self.snapshot.load_symbols_of(&[id])?;
        let Some((s, r)) = symbols.first().zip(record) else {
            return Ok(vec![None; defs.len()]);
        };
        let sep = Family::of(&r.language).separator();
        Ok(defs
            .iter()
            .map(|&d| {
                s.definitions.get(d as usize).map(|n| Described {
                    qualified: n.qualified_name(&r.module, sep),
                    local: n.local_name(sep),
                    kind: n.kind,
                    start: n.span.start_line,
                    end: n.span.end_line,
                })
            })
            .collect())
    }
}

/// A ranked definition before it is described: (index in the file, score, why, id).
type Candidate = (u32, f32, Why, Option<SymbolId>);

/// A definition's names, kind and span.
#[derive(Clone)]
struct Described {
    qualified: String,
    local: String,
    kind: SymbolKind,
    start: u32,
    end: u32,
}

fn merge_why(into: &mut Why, from: &Why) {
    into.lexical = into.lexical.or(from.lexical);
    into.semantic = into.semantic.or(from.semantic);
    if into.mention.is_none() {
        into.mention.clone_from(&from.mention);
    }
    into.graph = into.graph.or(from.graph);
    into.history = into.history.or(from.history);
    into.cochange = into.cochange.or(from.cochange);
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum SymbolKey {
    /// A definition by its index in the file's record.
    Def(String, u32),
    /// A definition by its first line (lexical hits).
    Line(String, u32),
}

/// The innermost definition of file `fi` spanning `line`.
fn innermost(g: &CodeGraph, fi: usize, line: u32) -> Option<u32> {
    g.defs(fi)
        .iter()
        .enumerate()
        .filter(|(_, d)| d.line <= line && line <= d.end_line)
        .min_by_key(|(_, d)| d.end_line - d.line)
        .map(|(i, _)| i as u32)
}

/// Lookups over the graph's skeletons: files by path, definitions by name.
/// The name a written `a.b.name` / `a::b::name` ends with, as `definitions_of` looks it up.
fn last_segment(written: &str) -> Option<&str> {
    written.split(['.', ':']).rfind(|p| !p.is_empty())
}

struct GraphIndex<'g> {
    by_path: HashMap<&'g str, usize>,
    /// Definitions by name, for the names the task mentions only: a table of every name
    /// costs a cold query more than the rest of the mention stage.
    by_name: HashMap<&'g str, Vec<SymbolId>>,
}

impl<'g> GraphIndex<'g> {
    /// `named`: the (last segments of the) names definitions will be asked for.
    fn new(g: &'g CodeGraph, named: &[&str]) -> GraphIndex<'g> {
        let mut by_path = HashMap::with_capacity(g.files.len());
        let mut by_name: HashMap<&str, Vec<SymbolId>> = HashMap::new();
        // Lengths first: most definitions are passed over without hashing their names.
        let lengths: std::collections::HashSet<usize> = named.iter().map(|n| n.len()).collect();
        let named: std::collections::HashSet<&str> = named.iter().copied().collect();
        for (fi, f) in g.files.iter().enumerate() {
            by_path.insert(f.path.as_str(), fi);
            // A task that names nothing reads no definition name (a cold query's 5 ms).
            if named.is_empty() {
                continue;
            }
            // Names read in place: a heads-only graph decodes no definition here.
            for (d, name) in g.def_names(fi).into_iter().enumerate() {
                if lengths.contains(&name.len()) && named.contains(name) {
                    by_name
                        .entry(name)
                        .or_default()
                        .push(SymbolId::new(fi as u32, d as u32));
                }
            }
        }
        GraphIndex { by_path, by_name }
    }

    fn file(&self, path: &str) -> Option<usize> {
        self.by_path.get(path).copied()
    }

    /// Files a written path names: the same path, or one ending where it ends on a folder
    /// boundary (`/home/u/proj/src/a.py` names `src/a.py`; `a.py` names `src/a.py` when only
    /// one file has that name).
    fn files_matching(&self, written: &str) -> Vec<usize> {
        if let Some(&fi) = self.by_path.get(written) {
            return vec![fi];
        }
        let mut hits: Vec<(usize, usize)> = self
            .by_path
            .iter()
            .filter_map(|(p, &fi)| {
                let ok = written.ends_with(&format!("/{p}")) || p.ends_with(&format!("/{written}"));
                ok.then_some((fi, p.len()))
            })
            .collect();
        hits.sort();
        // A bare file name matching many files names none of them.
        if hits.len() > 3 {
            Vec::new()
        } else {
            hits.into_iter().map(|h| h.0).collect()
        }
    }

    /// Definitions named `name`, or `a.b.name` / `a::b::name` whose containers match (for
    /// the names the index was made for).
    fn definitions_of(&self, g: &CodeGraph, written: &str) -> Vec<SymbolId> {
        let parts: Vec<&str> = written.split(['.', ':']).filter(|p| !p.is_empty()).collect();
        let Some(last) = parts.last() else {
            return Vec::new();
        };
        let all = self.by_name.get(last).cloned().unwrap_or_default();
        if parts.len() == 1 {
            return all;
        }
        // Qualified: keep definitions whose container (or module) ends with the qualifier.
        let qual = &parts[..parts.len() - 1];
        let kept: Vec<SymbolId> = all
            .iter()
            .copied()
            .filter(|s| {
                let Some(f) = g.files.get(s.file.index()) else {
                    return false;
                };
                let Some(d) = g.def(*s) else {
                    return false;
                };
                let mut path: Vec<&str> = f.module.split(['.', ':']).filter(|p| !p.is_empty()).collect();
                path.extend(d.container.iter().map(crate::graph::Name::as_str));
                path.ends_with(qual) || qual.last().is_some_and(|q| path.last() == Some(q))
            })
            .collect();
        if kept.is_empty() { all } else { kept }
    }

    /// The definition of file `fi` starting at `line` (lexical hits name a line).
    fn def_at(&self, g: &CodeGraph, fi: usize, line: u32) -> Option<u32> {
        g.defs(fi).iter().position(|d| d.line == line).map(|i| i as u32)
    }
}
