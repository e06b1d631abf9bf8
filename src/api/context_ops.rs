//! `context`, `ask`, `overview`: what matters for a task, ranked from every signal and packed
//! into a token budget; an answer with checked citations (when a model is configured); and a
//! repository map.

use serde::{Deserialize, Serialize};

use super::page::{cap_query, check_limit, check_tokens};
use super::{Analysis, ApiError};
use crate::context::{
    Citation, ContextPack, ENTRY_MANIFESTS, ManifestText, Overview, count_tokens, find_citations,
    manifest_entry_points, mark_unverified, pack,
};
use crate::graph::CodeGraph;
use crate::index::Coverage;
use crate::providers::{ChatMessage, ChatModel, OpenAiChat};
use crate::search::{
    Ahead, QueryKind, RankedFile, RankedSymbol, RankerKind, RankerParts, Ranking, SearchQuery, SearchRanker,
    Signals, Weights,
};

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextRequest {
    /// The task: an issue text, a question, a stack trace.
    pub task: String,
    /// Tokens (cl100k) the whole answer may take (default 8000): the ranked lists are
    /// counted first and the packed code gets the rest (at least a third).
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// Ranked files listed (default 20).
    #[serde(default)]
    pub files: Option<usize>,
    /// Ranked definitions listed (default 20).
    #[serde(default)]
    pub symbols: Option<usize>,
    /// Signals to use, comma-separated: lexical, semantic, mentions, definitions, paths,
    /// modules, graph, prior, history (default: all).
    #[serde(default)]
    pub signals: Option<String>,
    /// How the head of the fused list is ordered: `learned` (the shipped model, when it
    /// loads; the default with the default signals) or `fused` (the default when `signals`
    /// is given).
    #[serde(default)]
    pub ranker: Option<String>,
    /// Each ranked candidate's feature vector, in `files[].features` (training data).
    #[serde(default)]
    pub features: Option<bool>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SignalsUsed {
    pub used: Vec<&'static str>,
    /// Signals asked for but unavailable, with why.
    pub missing: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ContextResponse {
    pub task: String,
    /// Ranked files, best first, each with its rank in every signal that found it.
    pub files: Vec<RankedFile>,
    pub symbols: Vec<RankedSymbol>,
    /// The packed code (`pack.text`, markdown with `path:start-end` headers).
    pub pack: ContextPack,
    pub truncated: bool,
    pub signals: SignalsUsed,
    /// `learned` when the shipped model ordered the head of the list, else `fused`.
    pub ranker: &'static str,
    pub notes: Vec<String>,
    pub generation: u64,
    pub coverage: Coverage,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskRequest {
    /// The question.
    pub question: String,
    /// Tokens of code given to the model (or shown without one; default 6000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AskResponse {
    pub question: String,
    /// The model's answer with unverified citations marked; absent without a model.
    pub answer: Option<String>,
    pub model: Option<String>,
    /// Every `path:line` the answer cites, checked against the index.
    pub citations: Vec<Citation>,
    pub files: Vec<RankedFile>,
    pub symbols: Vec<RankedSymbol>,
    pub pack: ContextPack,
    pub signals: SignalsUsed,
    pub overview: Overview,
    pub overview_markdown: String,
    pub notes: Vec<String>,
    pub generation: u64,
    pub coverage: Coverage,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverviewRequest {
    /// Tokens (cl100k) the markdown overview may take (default 2000).
    #[serde(default)]
    pub max_tokens: Option<usize>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct OverviewResponse {
    pub overview: Overview,
    pub markdown: String,
    pub notes: Vec<String>,
    pub generation: u64,
    pub coverage: Coverage,
}

/// Tokens of the overview given alongside an answer's context.
const ASK_OVERVIEW_BUDGET: usize = 700;
/// Files listed with an answer.
const ASK_FILES: usize = 20;

/// Tokens (cl100k) of an answer as serialized.
fn tokens_of<T: Serialize>(v: &T) -> usize {
    serde_json::to_string(v).map(|s| count_tokens(&s)).unwrap_or(0)
}

const ASK_SYSTEM: &str = "You answer questions about a code repository for a developer who is new to it. \
Use only the repository overview and code given. Cite the code you rely on as path:line or path:start-end, \
exactly as the headers of the code sections give them. If the code given does not answer the question, say so \
and name the files that look closest. Be concise.";

impl Analysis {
    /// The task's ranking, with the graph it read.
    pub(super) fn rank(
        &self,
        task: &SearchQuery,
        signals: Signals,
        kind: RankerKind,
        features: bool,
        packing: bool,
        files: usize,
    ) -> Result<(Ranking, Option<&CodeGraph>), ApiError> {
        let weights = match std::env::var("KEN_CONTEXT_WEIGHTS") {
            Ok(spec) => Weights::default().with_overrides(&spec),
            Err(_) => Weights::default(),
        };
        // Only the graph walk reads every reference; the rest of the ranking and the packing
        // read names, spans and rank, and the references of the files shown.
        let graph = || match signals.graph && weights.graph > 0.0 {
            true => self.graph(),
            false => self.graph_heads(),
        };
        let opened = std::time::Instant::now();
        // The two big loads side by side, the semantic part and the code graph, with the token
        // counter the packing needs; the lexical and semantic searches, which read no graph,
        // run as soon as their part is open (an error is left to the ranking to meet and
        // report).
        let ahead = std::thread::scope(|s| {
            if packing {
                s.spawn(|| super::timed("token counter", crate::context::warm_token_counter));
            }
            // The learned model is read from its JSON on first use.
            if kind == RankerKind::Learned {
                s.spawn(|| {
                    super::timed("learned model", || {
                        let _ = crate::search::LearnedRanker::embedded();
                    })
                });
            }
            let semantic = (signals.semantic && self.has_semantic()).then(|| {
                s.spawn(|| {
                    let sem = super::timed("semantic part", || self.semantic().ok())?;
                    super::timed("semantic search", || SearchRanker::semantic_ahead(sem, task).ok())
                })
            });
            let lexical = signals.lexical.then(|| {
                s.spawn(|| {
                    let index = super::timed("lexical part", || self.lexical().ok())?.clone();
                    super::timed("lexical search", || {
                        SearchRanker::lexical_ahead(self.snapshot(), self.root(), index, task).ok()
                    })
                })
            });
            let _ = super::timed("graph part", graph);
            Ahead {
                lexical: lexical.and_then(|h| h.join().ok()).flatten(),
                semantic: semantic.and_then(|h| h.join().ok()).flatten(),
            }
        });
        tracing::debug!(
            ms = opened.elapsed().as_secs_f64() * 1000.0,
            "ranking parts opened"
        );
        let parts = RankerParts {
            lexical: self.lexical().cloned().map_err(|e| e.to_string()),
            semantic: signals
                .semantic
                .then(|| self.semantic().map_err(|e| e.to_string())),
            graph: graph().map_err(|e| e.to_string()),
            history: signals.history.then(|| self.history().map_err(|e| e.to_string())),
        };
        let mut ranker =
            SearchRanker::new(self.snapshot(), self.root(), parts, signals, weights).with_ranker(kind);
        ranker.with_features = features;
        ranker.max_files = files;
        // Only a pack shows definitions.
        ranker.with_symbols = packing;
        ranker = ranker.with_ahead(ahead);
        let ranking = ranker.rank(task)?;
        Ok((ranking, ranker.graph()))
    }

    /// The fused ranking of `task`, each candidate of its head with its feature vector: the
    /// learned ranker's training rows (`ken rank-features`).
    pub fn ranking_features(&self, task: &str, history: bool) -> Result<(Ranking, QueryKind), ApiError> {
        let (task, _) = cap_query("task", task)?;
        let signals = Signals {
            history,
            ..Signals::default()
        };
        let query = SearchQuery::parse(&task);
        let (ranking, _) = self.rank(&query, signals, RankerKind::Fused, true, false, 0)?;
        Ok((ranking, query.kind))
    }

    pub fn context(&self, r: &ContextRequest) -> Result<ContextResponse, ApiError> {
        let (task, note) = cap_query("task", &r.task)?;
        let budget = check_tokens(r.max_tokens)?.unwrap_or(8000);
        let files = check_limit("files", r.files, 20, 500)?;
        let symbols = check_limit("symbols", r.symbols, 20, 500)?;
        let signals = match &r.signals {
            Some(list) => Signals::parse(list).map_err(|e| ApiError::invalid("signals", e))?,
            None => Signals::default(),
        };
        // The model was trained on every signal: a chosen subset is ranked by fusion unless
        // the learned ranker is asked for too.
        let kind = match (&r.ranker, &r.signals) {
            (Some(k), _) => RankerKind::parse(k).map_err(|e| ApiError::invalid("ranker", e))?,
            (None, Some(_)) => RankerKind::Fused,
            (None, None) => RankerKind::default(),
        };
        let query = SearchQuery::parse(&task);
        // The working tree's check runs beside the ranking; the coverage is whole before the
        // budget counts it.
        let (ranked, coverage) =
            self.with_coverage(|| self.rank(&query, signals, kind, r.features.unwrap_or(false), true, files));
        let (ranking, graph) = ranked?;
        let mut out = ContextResponse {
            task,
            files: ranking.files.iter().take(files).cloned().collect(),
            symbols: ranking.symbols.iter().take(symbols).cloned().collect(),
            truncated: false,
            pack: ContextPack::default(),
            signals: SignalsUsed {
                used: ranking.signals_used.clone(),
                missing: ranking.signals_missing.clone(),
            },
            ranker: ranking.ranker,
            notes: note.into_iter().collect(),
            generation: self.generation(),
            coverage,
        };
        // The code gets what the rest of the answer leaves; one repack if the pack's own
        // lists (shown, neighbours, left out) overflow.
        let floor = budget / 3;
        // Counted apart, the parts add up to a little more than the whole: a safe estimate.
        let lists = tokens_of(&out);
        let mut code = budget.saturating_sub(lists).max(floor);
        for _ in 0..2 {
            out.pack = pack(&ranking, self.snapshot(), self.root(), graph, code)?;
            let over = (lists + tokens_of(&out.pack)).saturating_sub(budget);
            if over == 0 || code == floor {
                break;
            }
            code = code.saturating_sub(over).max(floor);
        }
        if let Ok(lexical) = self.lexical() {
            let engine =
                crate::index::CodeSearch::with_lexical(self.snapshot(), self.root(), lexical.clone());
            // The task's identifier is in docs only: say where, whatever the code ranking.
            if let Ok(Some((note, _))) = Self::only_in_text(&engine, &query) {
                out.notes.push(note);
            } else if !ranking.files.iter().any(|f| f.why.lexical.is_some())
                && let Ok(Some(hint)) = Self::document_hint(&engine, &out.task, None)
            {
                // No code matched the task's words: a document that does is the answer to show.
                out.notes
                    .push(format!("no code matched the task's words; {hint}"));
            }
        }
        while tokens_of(&out) > budget && !out.symbols.is_empty() {
            out.symbols.truncate(out.symbols.len() / 2);
        }
        out.truncated = out.pack.truncated;
        Ok(out)
    }

    pub fn ask(&self, r: &AskRequest) -> Result<AskResponse, ApiError> {
        self.ask_with(
            r,
            OpenAiChat::from_env().map(|m| Box::new(m) as Box<dyn ChatModel>),
        )
    }

    /// `ask` with a given model (`None`: the context and the overview, without an answer).
    pub fn ask_with(
        &self,
        r: &AskRequest,
        model: Option<Box<dyn ChatModel>>,
    ) -> Result<AskResponse, ApiError> {
        let (question, note) = cap_query("question", &r.question)?;
        let budget = check_tokens(r.max_tokens)?.unwrap_or(6000);
        let (mut ranking, graph) = self.rank(
            &SearchQuery::parse(&question),
            Signals::default(),
            RankerKind::default(),
            false,
            true,
            0,
        )?;
        let packed = pack(&ranking, self.snapshot(), self.root(), graph, budget)?;
        ranking.files.truncate(ASK_FILES);
        let overview = Overview::build(self.snapshot(), self.graph().ok())
            .with_manifest_entry_points(manifest_entry_points(&self.manifests(), self.graph().ok()));
        let overview_markdown = overview.markdown(ASK_OVERVIEW_BUDGET);
        let mut notes: Vec<String> = note.into_iter().collect();
        let (answer, model_id, citations) = match model {
            None => {
                notes.push(
                    "no model configured (set OPENAI_API_KEY and/or OPENAI_BASE_URL, KEN_MODEL): the relevant code and an overview".into(),
                );
                (None, None, Vec::new())
            }
            Some(model) => {
                let prompt = format!(
                    "Question: {question}\n\n{overview_markdown}\n## Code\n\n{}",
                    packed.text
                );
                let answer = model
                    .complete(&[ChatMessage::system(ASK_SYSTEM), ChatMessage::user(prompt)])
                    .map_err(|e| ApiError::Unavailable(format!("asking {}: {e}", model.id())))?;
                let citations = find_citations(&answer, self.snapshot());
                let invalid = citations.iter().filter(|c| !c.valid).count();
                if invalid > 0 {
                    notes.push(format!(
                        "{invalid} citation(s) in the answer do not exist in the index; marked [unverified]"
                    ));
                }
                (
                    Some(mark_unverified(&answer, &citations)),
                    Some(model.id()),
                    citations,
                )
            }
        };
        Ok(AskResponse {
            question,
            answer,
            model: model_id,
            citations,
            files: ranking.files,
            symbols: ranking.symbols,
            pack: packed,
            signals: SignalsUsed {
                used: ranking.signals_used,
                missing: ranking.signals_missing,
            },
            overview,
            overview_markdown,
            notes,
            generation: self.generation(),
            coverage: self.coverage(),
        })
    }

    /// The root's manifests that declare entry points (each at most 1 MiB).
    fn manifests(&self) -> Vec<ManifestText> {
        ENTRY_MANIFESTS
            .iter()
            .filter_map(|name| {
                let p = self.root().join(name);
                let small = std::fs::metadata(&p).is_ok_and(|m| m.is_file() && m.len() < (1 << 20));
                small
                    .then(|| std::fs::read_to_string(&p).ok())
                    .flatten()
                    .map(|t| (name.to_string(), t))
            })
            .collect()
    }

    pub fn overview(&self, r: &OverviewRequest) -> Result<OverviewResponse, ApiError> {
        let budget = check_tokens(r.max_tokens)?.unwrap_or(2000);
        let mut notes = Vec::new();
        let graph = match self.graph() {
            Ok(g) => Some(g),
            Err(e) => {
                notes.push(format!(
                    "{e}: central modules, entry points and calls are left out"
                ));
                None
            }
        };
        let overview = Overview::build(self.snapshot(), graph)
            .with_manifest_entry_points(manifest_entry_points(&self.manifests(), graph));
        Ok(OverviewResponse {
            markdown: overview.markdown(budget),
            overview,
            notes,
            generation: self.generation(),
            coverage: self.coverage(),
        })
    }
}
