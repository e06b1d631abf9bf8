//! `search`: lexical, semantic, hybrid (the default with a semantic part), files, symbols, and
//! literal or regex line search, in one request type. One answer shape for every mode: the
//! lists a mode does not fill are empty.

use serde::{Deserialize, Serialize};

use super::page::{PageInfo, Paging, cap_query};
use super::{Analysis, ApiError};
use crate::index::{CodeSearch, Coverage, FusedFile, SearchHit, SearchTarget, SemanticHit, fuse_files};
use crate::lexical::{LexicalQuery, LineMatch, LineSearchMode, PathEvidence, PathFilter};
use crate::search::{RankerKind, SearchQuery, Signals};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    /// Files ranked by fusing the lexical and the semantic rankings (the default when the
    /// index has a semantic part).
    Hybrid,
    /// BM25 over definitions and files, best first (the default without a semantic part).
    Lexical,
    /// Code chunks nearest to the query in meaning.
    Semantic,
    /// Files ranked by their best lexical hits.
    Files,
    /// Definitions only.
    Symbols,
    /// Every line containing the query text exactly (like `rg -F`).
    Literal,
    /// Every line matching the query as a regular expression (like `rg`).
    Regex,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    /// Free text (identifiers, an error message, a whole issue), with `"phrases"` and the
    /// filters `lang:`, `kind:`, `path:` (each negatable with `-`); a pattern for literal/regex.
    pub query: String,
    /// Default: hybrid when the index has a semantic part, else lexical.
    #[serde(default)]
    pub mode: Option<SearchMode>,
    /// Case-insensitive literal/regex matching.
    #[serde(default)]
    pub ignore_case: bool,
    /// Results per page (default 20; lines: 1000).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Token budget (cl100k) for the results of this page.
    #[serde(default)]
    pub max_tokens: Option<usize>,
    /// From a previous answer's `page.next_cursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// With `files`: plain whole-file BM25 without priors (the evaluation's baseline).
    #[serde(default)]
    pub plain_bm25: bool,
    /// Hybrid: the spans worth reading listed under each ranked file (default 3; 0 lists
    /// files only).
    #[serde(default)]
    pub chunks_per_file: Option<usize>,
    /// Hybrid: how files are ordered: `learned` (the default: `search::SearchRanker`'s
    /// candidates ordered by the shipped model, the ranking `context` uses) or `fused` (the
    /// earlier reciprocal rank fusion of the lexical and semantic lists, kept as the fallback).
    #[serde(default)]
    pub ranker: Option<String>,
    /// Signals left out (the evaluation's ablation; not part of the served request).
    #[serde(skip)]
    #[schemars(skip)]
    pub without: Vec<SearchSignal>,
}

/// A signal of the hybrid ranking that an ablation can leave out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchSignal {
    /// The semantic ranking (the fusion keeps the lexical one alone).
    Semantic,
    /// Everything paths say: name matches, copy priors, tests and examples last.
    PathEvidence,
    /// Only the listing of unasked tests and examples last.
    SetAside,
    /// The files defining exactly the identifier the query is, first.
    ExactDefinitions,
}

impl std::str::FromStr for SearchSignal {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "semantic" => SearchSignal::Semantic,
            "path-evidence" => SearchSignal::PathEvidence,
            "set-aside" => SearchSignal::SetAside,
            "exact-definitions" => SearchSignal::ExactDefinitions,
            other => {
                return Err(format!(
                    "unknown signal `{other}` (semantic, path-evidence, set-aside, exact-definitions)"
                ));
            }
        })
    }
}

/// One span of a ranked file worth reading: a definition, or a cohesive block of one.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct FileChunk {
    pub start_line: u32,
    pub end_line: u32,
    /// The definition it is, or lies in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// What found it.
    pub by: ChunkSource,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChunkSource {
    /// The definition of exactly the identifier the query is.
    Definition,
    /// A definition the lexical ranking matched.
    Lexical,
    /// A chunk near the query in meaning.
    Semantic,
}

/// A semantic chunk hit with the definition that owns it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ChunkHit {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<String>,
    pub score: f32,
}

/// A ranked file: from the lexical file ranking (`best` set) or the hybrid fusion (ranks set).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct SearchFile {
    pub path: String,
    pub score: f32,
    /// The best-scoring lexical hit inside the file.
    pub best: Option<SearchHit>,
    /// 1-based ranks in the lexical and semantic lists (hybrid).
    pub lexical_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
    /// The best semantic chunk's lines (hybrid).
    pub lines: Option<(u32, u32)>,
    /// The definition that put the file here: the best lexical hit's, else the best chunk's.
    pub symbol: Option<String>,
    /// The file defines exactly the identifier the query is (ranked first).
    pub defines_query: bool,
    /// Hybrid: the best spans to read in this file, best first (a few lines each, not the
    /// whole file).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<FileChunk>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SearchResponse {
    pub query: String,
    pub mode: SearchMode,
    /// Query terms the lexical ranking used (long queries are pruned to the rarest).
    pub terms: Vec<String>,
    /// Lexical hits (modes lexical, symbols).
    pub hits: Vec<SearchHit>,
    /// Ranked files (modes files, hybrid).
    pub files: Vec<SearchFile>,
    /// Semantic chunks (mode semantic).
    pub chunks: Vec<ChunkHit>,
    /// Matching lines (modes literal, regex).
    pub matches: Vec<LineMatch>,
    /// Literal/regex: files read, and files the index ruled out unread.
    pub files_searched: Option<usize>,
    pub files_skipped_by_index: Option<usize>,
    /// Semantic/hybrid: chunks in the semantic part.
    pub chunks_searched: Option<usize>,
    /// Hybrid: the reciprocal rank fusion constant (the fused ranker).
    pub rrf_k: Option<f32>,
    /// Hybrid: `learned` when the model ordered the files, `fused` when fusion did (asked
    /// for, or the model could not be read: `notes` says why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranker: Option<&'static str>,
    pub page: PageInfo,
    /// What could not be done as asked (a query cut to its first 64 KiB, say).
    pub notes: Vec<String>,
    pub generation: u64,
    pub coverage: Coverage,
}

/// The query's `lang:`, `kind:` and `path:` filters, applied to what the lexical index did
/// not rank itself (semantic chunks), so every mode honours them.
struct Filters {
    query: LexicalQuery,
    include: Vec<PathFilter>,
    exclude: Vec<PathFilter>,
}

impl Filters {
    fn parse(text: &str) -> Result<Filters, ApiError> {
        let query = LexicalQuery::parse(text);
        let (include, exclude) = query
            .path_filters()
            .map_err(|e| ApiError::invalid("query", e.to_string()))?;
        Ok(Filters {
            query,
            include,
            exclude,
        })
    }

    fn any(&self) -> bool {
        let q = &self.query;
        !(q.langs.is_empty()
            && q.not_langs.is_empty()
            && q.kinds.is_empty()
            && q.not_kinds.is_empty()
            && self.include.is_empty()
            && self.exclude.is_empty())
    }

    /// The words to embed: the query without its filters (all of it when only filters).
    fn semantic_text(&self, whole: &str) -> String {
        crate::search::plain_text(&self.query, whole)
    }

    fn keeps(&self, path: &str, language: &str, kind: Option<&str>) -> bool {
        let q = &self.query;
        let has = |list: &[String], v: &str| list.iter().any(|x| x.eq_ignore_ascii_case(v));
        (q.langs.is_empty() || has(&q.langs, language))
            && !has(&q.not_langs, language)
            && (q.kinds.is_empty() || kind.is_some_and(|k| has(&q.kinds, k)))
            && !kind.is_some_and(|k| has(&q.not_kinds, k))
            && (self.include.is_empty() || self.include.iter().any(|f| f.matches(path)))
            && !self.exclude.iter().any(|f| f.matches(path))
    }
}

/// The best raw lexical score of the top few ranked files' best hits.
fn best_raw(files: &[crate::index::FileHit]) -> Option<f32> {
    files.iter().take(5).map(|f| f.best.score).reduce(f32::max)
}

/// Hybrid's note when no word of the query is in the index: semantic ranking always returns
/// its nearest chunks, and with no word matched they are guesses.
const NO_WORDS_MATCHED: &str = "nothing matched these words; these are by meaning only";
/// Reciprocal rank fusion constant for hybrid (the usual 60: neither list dominates).
const HYBRID_RRF_K: f32 = 60.0;
/// Spans listed per file by default, and at most.
const CHUNKS_PER_FILE: usize = 3;
const MAX_CHUNKS_PER_FILE: usize = 10;
/// A definition longer than this is listed by its first lines (a class's chunks, found by
/// meaning, point inside it).
const MAX_CHUNK_LINES: u32 = 60;
const MAX_LIMIT: usize = 1000;
/// Lines read to tell whether a query's identifier occurs only in docs, and documents then
/// shown first.
const TEXT_ONLY_LINES: usize = 200;
const TEXT_ONLY_FILES: usize = 3;
const MAX_LINES: usize = 100_000;

/// A request checked and resolved: its mode, paging, ranker and what the ranking leaves out.
struct SearchPlan<'r> {
    r: &'r SearchRequest,
    query: String,
    mode: SearchMode,
    /// Hybrid: spans listed per file.
    per_file: usize,
    paging: Paging,
    ranker: RankerKind,
    paths: crate::index::PathWeighing,
}

impl SearchPlan<'_> {
    fn without(&self, s: SearchSignal) -> bool {
        self.r.without.contains(&s)
    }

    /// One more than the page needs: whether a next page exists.
    fn need(&self) -> usize {
        self.paging.needed() + 1
    }

    /// The learned ranking's signals, less those the request leaves out.
    fn learned_signals(&self) -> Signals {
        Signals {
            semantic: !self.without(SearchSignal::Semantic),
            paths: !self.without(SearchSignal::PathEvidence),
            definitions: !self.without(SearchSignal::ExactDefinitions),
            ..Signals::default()
        }
    }
}

impl Analysis {
    pub fn search(&self, r: &SearchRequest) -> Result<SearchResponse, ApiError> {
        let (out, coverage) = self.with_coverage(|| self.search_uncovered(r));
        out.map(|mut out| {
            out.coverage = coverage;
            out
        })
    }

    /// [`Analysis::search`] with the coverage of the index alone (the caller adds the
    /// working tree's).
    fn search_uncovered(&self, r: &SearchRequest) -> Result<SearchResponse, ApiError> {
        let (plan, note) = self.search_plan(r)?;
        let engine = CodeSearch::with_lexical(self.snapshot(), self.root(), self.lexical()?.clone())
            .weighing_paths(plan.paths);
        let filters = Filters::parse(&plan.query)?;
        // Parsed once for the ranker and the docs-only check.
        let parsed = SearchQuery::parse(&plan.query);
        let mut out = self.empty_response(&plan, note);
        // The best raw lexical score among the top code files, against which a document's is
        // weighed.
        let code_best = match plan.mode {
            SearchMode::Literal | SearchMode::Regex => {
                Self::search_lines(&engine, &plan, &mut out)?;
                None
            }
            SearchMode::Semantic => {
                self.search_semantic(&plan, &filters, &mut out)?;
                None
            }
            // `kind:` filters name what a definition is, which only the lexical index and the
            // chunks' owners know: such a query is ranked by the fused lists, filtered each.
            SearchMode::Hybrid
                if plan.ranker == RankerKind::Learned
                    && filters.query.kinds.is_empty()
                    && filters.query.not_kinds.is_empty() =>
            {
                let signals = plan.learned_signals();
                self.hybrid_learned(&engine, &parsed, signals, &plan.paging, plan.per_file, &mut out)?
            }
            SearchMode::Hybrid => self.hybrid_fused(&engine, &plan, &filters, &mut out)?,
            SearchMode::Lexical | SearchMode::Files | SearchMode::Symbols => {
                Self::search_lexical(&engine, &plan, &mut out)?
            }
        };
        Self::add_document_notes(&engine, &plan, &filters, &parsed, code_best, &mut out)?;
        Ok(out)
    }

    /// Checks the request and resolves its defaults; the note says when the query was cut.
    fn search_plan<'r>(&self, r: &'r SearchRequest) -> Result<(SearchPlan<'r>, Option<String>), ApiError> {
        let (query, note) = cap_query("query", &r.query)?;
        let mode = match r.mode {
            Some(m) => m,
            None if self.has_semantic() => SearchMode::Hybrid,
            None => SearchMode::Lexical,
        };
        if r.plain_bm25 && mode != SearchMode::Files {
            return Err(ApiError::invalid("plain_bm25", "needs mode files"));
        }
        let per_file = r.chunks_per_file.unwrap_or(CHUNKS_PER_FILE);
        if per_file > MAX_CHUNKS_PER_FILE {
            return Err(ApiError::invalid(
                "chunks_per_file",
                format!("at most {MAX_CHUNKS_PER_FILE}, got {per_file}"),
            ));
        }
        let lines = matches!(mode, SearchMode::Literal | SearchMode::Regex);
        let (default, max) = if lines { (1000, MAX_LINES) } else { (20, MAX_LIMIT) };
        let paging = Paging::new(r.cursor.as_deref(), r.limit, default, max, r.max_tokens)?;
        let without = |s: SearchSignal| r.without.contains(&s);
        let ranker = match r.ranker.as_deref() {
            Some(k) => RankerKind::parse(k).map_err(|e| ApiError::invalid("ranker", e))?,
            None => RankerKind::default(),
        };
        if r.ranker.is_some() && mode != SearchMode::Hybrid {
            return Err(ApiError::invalid("ranker", "needs mode hybrid"));
        }
        let paths = crate::index::PathWeighing {
            weigh: !without(SearchSignal::PathEvidence),
            set_aside: !without(SearchSignal::PathEvidence) && !without(SearchSignal::SetAside),
        };
        let plan = SearchPlan {
            r,
            query,
            mode,
            per_file,
            paging,
            ranker,
            paths,
        };
        Ok((plan, note))
    }

    /// The answer before any mode fills it: every list empty, an empty page.
    fn empty_response(&self, plan: &SearchPlan, note: Option<String>) -> SearchResponse {
        SearchResponse {
            query: plan.query.clone(),
            mode: plan.mode,
            terms: Vec::new(),
            hits: Vec::new(),
            files: Vec::new(),
            chunks: Vec::new(),
            matches: Vec::new(),
            files_searched: None,
            files_skipped_by_index: None,
            chunks_searched: None,
            rrf_k: None,
            ranker: None,
            page: plan.paging.apply(Vec::<()>::new(), 0).1,
            notes: note.into_iter().collect(),
            generation: self.generation(),
            coverage: Coverage::of(self.snapshot(), None),
        }
    }

    /// Literal or regex: the matching lines, and how many files were read or ruled out.
    fn search_lines(
        engine: &CodeSearch,
        plan: &SearchPlan,
        out: &mut SearchResponse,
    ) -> Result<(), ApiError> {
        let m = match plan.mode {
            SearchMode::Literal => LineSearchMode::Literal,
            _ => LineSearchMode::Regex,
        };
        let res = engine
            .lines(&plan.query, m, plan.r.ignore_case, plan.need())
            .map_err(|e| ApiError::invalid("query", e.to_string()))?;
        out.files_searched = Some(res.files_searched);
        out.files_skipped_by_index = Some(res.files_skipped_by_index);
        let total = res.matches.len();
        (out.matches, out.page) = plan.paging.apply(res.matches, total);
        Ok(())
    }

    /// Semantic: the page's chunks nearest the query, with the definitions owning them.
    fn search_semantic(
        &self,
        plan: &SearchPlan,
        filters: &Filters,
        out: &mut SearchResponse,
    ) -> Result<(), ApiError> {
        let sem = self.semantic()?;
        let hits = self.semantic_hits(sem, filters, &plan.query, plan.need())?;
        out.chunks_searched = Some(sem.chunks());
        let total = hits.len();
        let (page, info) = plan.paging.apply(hits, total);
        out.chunks = self.chunk_hits(&page)?;
        out.page = info;
        Ok(())
    }

    /// Hybrid by reciprocal rank fusion of the lexical and semantic file lists, weighed by
    /// paths. Returns the best lexical score among the top code files.
    fn hybrid_fused(
        &self,
        engine: &CodeSearch,
        plan: &SearchPlan,
        filters: &Filters,
        out: &mut SearchResponse,
    ) -> Result<Option<f32>, ApiError> {
        let (query, need) = (&plan.query, plan.need());
        let sem = self.semantic()?;
        out.ranker = Some("fused");
        // The two rankings side by side: each is a few milliseconds of one core.
        let (hits, lexical) = rayon::join(
            || match plan.without(SearchSignal::Semantic) {
                true => Ok(Vec::new()),
                false => self.semantic_hits(sem, filters, query, (need * 4).max(50)),
            },
            || engine.search(query, SearchTarget::Files, need * 2),
        );
        let (hits, lexical) = (hits?, lexical?);
        out.terms = lexical.terms;
        let lexical_hits = lexical.hits;
        let lex = lexical.files.unwrap_or_default();
        let code_best = best_raw(&lex);
        let lex_files: Vec<String> = lex.iter().map(|f| f.path.clone()).collect();
        let best: std::collections::HashMap<String, SearchHit> =
            lex.into_iter().map(|f| (f.path, f.best)).collect();
        let fused = self.fused_files(plan, filters, &lex_files, &best, &hits)?;
        out.chunks_searched = Some(sem.chunks());
        out.rrf_k = Some(HYBRID_RRF_K);
        let total = fused.len();
        (out.files, out.page) = plan.paging.apply(fused, total);
        // Semantic ranking always returns its nearest chunks; with no word of the
        // query in the index they are guesses, and the answer says so.
        if lex_files.is_empty() && !out.files.is_empty() {
            out.notes.push(NO_WORDS_MATCHED.to_string());
        }
        if plan.per_file > 0 {
            self.chunk_files(&mut out.files, &lexical_hits, &hits, plan.per_file)?;
        }
        Ok(code_best)
    }

    /// The fused file list, weighed by paths, named, exact definitions first, cut to what the
    /// page needs.
    fn fused_files(
        &self,
        plan: &SearchPlan,
        filters: &Filters,
        lex_files: &[String],
        best: &std::collections::HashMap<String, SearchHit>,
        hits: &[SemanticHit],
    ) -> Result<Vec<SearchFile>, ApiError> {
        let (query, need) = (&plan.query, plan.need());
        // A wider window than the page: the path's evidence may lift a file from
        // below it.
        let mut fused: Vec<SearchFile> = fuse_files(lex_files, hits, HYBRID_RRF_K, need * 3)
            .into_iter()
            .map(SearchFile::fused)
            .collect();
        if plan.paths.weigh {
            self.weigh_paths(&mut fused, filters, query, plan.paths.set_aside);
        }
        self.name_fused(&mut fused, best, hits)?;
        if !plan.without(SearchSignal::ExactDefinitions) {
            self.exact_definitions_first(&mut fused, filters, query)?;
        }
        fused.truncate(need);
        Ok(fused)
    }

    /// Lexical, files or symbols: BM25 hits, or files ranked by their best hits. Returns the
    /// best lexical score among the top code files.
    fn search_lexical(
        engine: &CodeSearch,
        plan: &SearchPlan,
        out: &mut SearchResponse,
    ) -> Result<Option<f32>, ApiError> {
        let target = match plan.mode {
            SearchMode::Files => SearchTarget::Files,
            SearchMode::Symbols => SearchTarget::Symbols,
            _ => SearchTarget::Mixed,
        };
        let res = match plan.r.plain_bm25 {
            true => engine.search_files_plain(&plan.query, plan.need())?,
            false => engine.search(&plan.query, target, plan.need())?,
        };
        out.terms = res.terms;
        let code_best = res.files.as_deref().and_then(best_raw);
        match res.files {
            Some(files) => {
                // The best definitions behind the ranked files (not paged).
                out.hits = res.hits;
                let files: Vec<SearchFile> = files
                    .into_iter()
                    .map(|f| SearchFile {
                        path: f.path,
                        score: f.score,
                        symbol: f.best.qualified_name.clone(),
                        best: Some(f.best),
                        ..SearchFile::default()
                    })
                    .collect();
                let total = files.len();
                (out.files, out.page) = plan.paging.apply(files, total);
            }
            None => {
                let total = res.hits.len();
                (out.hits, out.page) = plan.paging.apply(res.hits, total);
            }
        }
        Ok(code_best)
    }

    /// A ranked first page: documents first when the query occurs only in them, else a note
    /// naming a document that matches better than any code.
    fn add_document_notes(
        engine: &CodeSearch,
        plan: &SearchPlan,
        filters: &Filters,
        parsed: &SearchQuery,
        code_best: Option<f32>,
        out: &mut SearchResponse,
    ) -> Result<(), ApiError> {
        let ranked = matches!(
            plan.mode,
            SearchMode::Hybrid | SearchMode::Lexical | SearchMode::Files
        );
        if !ranked || filters.query.wants_text() || plan.r.cursor.is_some() {
            return Ok(());
        }
        match Self::only_in_text(engine, parsed)? {
            Some((note, hits)) => {
                out.notes.push(note);
                documents_first(&mut out.files, hits, plan.paging.needed().max(1));
            }
            None => out
                .notes
                .extend(Self::document_hint(engine, &plan.query, code_best)?),
        }
        Ok(())
    }

    /// Hybrid through `search::SearchRanker` (the ranking `context` uses): the page's files with
    /// their spans, from the lists the ranking found. Returns the best lexical score among the
    /// top code files, against which a document's is weighed.
    fn hybrid_learned(
        &self,
        engine: &CodeSearch,
        q: &SearchQuery,
        signals: Signals,
        paging: &Paging,
        per_file: usize,
        out: &mut SearchResponse,
    ) -> Result<Option<f32>, ApiError> {
        let need = paging.needed() + 1;
        // The ranking opens the semantic part beside the graph; opened here first, the two
        // loads would run one after the other.
        let (ranking, _) = self.rank(q, signals, RankerKind::Learned, false, false, need)?;
        let sem = self.semantic()?;
        // A plain tree has no history: not worth a note on every search (context lists it).
        out.notes.extend(
            ranking
                .signals_missing
                .iter()
                .filter(|m| !m.starts_with("history:"))
                .map(|m| format!("not used: {m}")),
        );
        out.ranker = Some(ranking.ranker);
        let found = ranking.found;
        out.terms = found.terms.clone();
        let code_best = found
            .lexical_best
            .iter()
            .take(5)
            .map(|(_, h)| h.score)
            .reduce(f32::max);
        let no_words = found.lexical_best.is_empty();
        let best: std::collections::HashMap<String, SearchHit> = found.lexical_best.into_iter().collect();
        let mut files: Vec<SearchFile> = ranking
            .files
            .into_iter()
            .take(need)
            .map(|f| SearchFile {
                lexical_rank: f.why.lexical,
                semantic_rank: f.why.semantic,
                defines_query: f.why.defines_query,
                score: f.score,
                path: f.path,
                ..SearchFile::default()
            })
            .collect();
        self.name_fused(&mut files, &best, &found.semantic)?;
        // The ranker read no file for snippets: the page's files get theirs now.
        for f in files.iter_mut() {
            if let Some(b) = f.best.take() {
                f.best = Some(engine.with_snippet(b, &found.terms));
            }
        }
        for f in files.iter_mut().filter(|f| f.defines_query) {
            if let Some(d) = found.definitions.iter().find(|d| d.path == f.path) {
                f.symbol = Some(d.qualified_name.clone());
                f.lines = Some((d.line, d.end_line));
            }
        }
        out.chunks_searched = Some(sem.chunks());
        let total = files.len();
        (out.files, out.page) = paging.apply(files, total);
        if no_words && !out.files.is_empty() {
            out.notes.push(NO_WORDS_MATCHED.to_string());
        }
        if per_file > 0 {
            self.chunk_files(&mut out.files, &found.lexical, &found.semantic, per_file)?;
        }
        Ok(code_best)
    }

    /// When the query is one identifier or one quoted phrase that occurs in docs or config and
    /// in no code file, a note saying so with where, and those lines (the ranking alone would
    /// answer with code that merely shares its words).
    pub(super) fn only_in_text(
        engine: &CodeSearch,
        q: &SearchQuery,
    ) -> Result<Option<(String, Vec<LineMatch>)>, ApiError> {
        let phrase = match (&q.identifier, q.lexical.phrases.as_slice()) {
            (Some(word), _) => word.clone(),
            (None, [one]) if q.lexical.text.trim().is_empty() => one.clone(),
            _ => return Ok(None),
        };
        if phrase.len() < 3 {
            return Ok(None);
        }
        let invalid = |e: crate::index::IndexError| ApiError::invalid("query", e.to_string());
        let text = |p: &str| crate::lang::is_text_path(p);
        let in_code = engine
            .lines_in(&phrase, LineSearchMode::Literal, false, 1, |p| !text(p))
            .map_err(invalid)?;
        if !in_code.matches.is_empty() {
            return Ok(None);
        }
        let res = engine
            .lines_in(&phrase, LineSearchMode::Literal, false, TEXT_ONLY_LINES, text)
            .map_err(invalid)?;
        if res.matches.is_empty() {
            return Ok(None);
        }
        let mut files: Vec<&str> = res.matches.iter().map(|m| m.path.as_str()).collect();
        files.dedup();
        let at: Vec<String> = res
            .matches
            .iter()
            .take(3)
            .map(|m| format!("{}:{}", m.path, m.line))
            .collect();
        let more = match res.matches.len() > 3 {
            true => format!(" ({} lines in {} files)", res.matches.len(), files.len()),
            false => String::new(),
        };
        let note = format!(
            "`{phrase}` occurs only in docs or config, in no code file: {}{more}",
            at.join(", ")
        );
        Ok(Some((note, res.matches)))
    }

    /// A note naming the document (README, design doc...) that matches the query better than
    /// any code file does, lexically: architecture questions are often answered there. Docs
    /// stay out of the ranking itself unless asked for (`kind:doc`).
    pub(super) fn document_hint(
        engine: &CodeSearch,
        query: &str,
        code_best: Option<f32>,
    ) -> Result<Option<String>, ApiError> {
        let docs = engine.search(&format!("{query} kind:doc"), SearchTarget::Files, 1)?;
        let Some(best) = docs.files.and_then(|f| f.into_iter().next()) else {
            return Ok(None);
        };
        if code_best.is_some_and(|c| c >= best.best.score) {
            return Ok(None);
        }
        let at = match best.best.grain {
            crate::lexical::Grain::Symbol => {
                format!("{}:{}-{}", best.path, best.best.line, best.best.end_line)
            }
            crate::lexical::Grain::File => best.path.clone(),
        };
        Ok(Some(format!(
            "a document matches this better than any code: {at} (`kind:doc` searches docs, `kind:config` config)"
        )))
    }

    /// The `k` best chunks that pass the query's filters, embedding the query without them.
    fn semantic_hits(
        &self,
        sem: &crate::index::SemanticIndex,
        filters: &Filters,
        query: &str,
        k: usize,
    ) -> Result<Vec<SemanticHit>, ApiError> {
        let text = filters.semantic_text(query);
        if !filters.any() {
            return Ok(sem.search(&text, k)?);
        }
        // Filters drop candidates: look further, then keep the first k that pass.
        let snapshot = self.snapshot();
        let wide = sem.search(&text, (k * 8).max(400))?;
        let kinds = !(filters.query.kinds.is_empty() && filters.query.not_kinds.is_empty());
        let owners = match kinds {
            true => self.owners(&wide)?,
            false => vec![None; wide.len()],
        };
        Ok(wide
            .into_iter()
            .zip(owners)
            .filter(|(h, owner)| {
                let language = snapshot
                    .file_id(&h.path)
                    .and_then(|id| snapshot.table.files.get(id.index()))
                    .map_or("", |r| r.language.as_str());
                filters.keeps(&h.path, language, owner.as_ref().map(|o| o.1))
            })
            .map(|(h, _)| h)
            .take(k)
            .collect())
    }

    /// Weighs each fused file by what its path says of the query ([`PathEvidence`]), and adds
    /// the indexed files named exactly as a query word that neither ranking found.
    fn weigh_paths(&self, fused: &mut Vec<SearchFile>, filters: &Filters, query: &str, set_aside: bool) {
        let evidence = PathEvidence::of_query(&filters.semantic_text(query));
        for f in fused.iter_mut() {
            f.score = evidence.weigh(&f.path, f.score, HYBRID_RRF_K);
        }
        let known: std::collections::HashSet<String> = fused.iter().map(|f| f.path.clone()).collect();
        // A query that names nothing (a sentence of plain words) adds nothing: no scan.
        let records = match evidence.has_names() {
            true => self.snapshot().table.files.as_slice(),
            false => &[],
        };
        for record in records {
            let path = record.path.as_str();
            if !known.contains(path)
                && evidence.names_exactly(path)
                && filters.keeps(path, &record.language, None)
            {
                fused.push(SearchFile {
                    path: path.to_string(),
                    score: evidence.weigh(path, 0.0, HYBRID_RRF_K),
                    ..SearchFile::default()
                });
            }
        }
        fused.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.path.cmp(&b.path)));
        if set_aside {
            // Stable: the files set aside go last, each group keeping its order.
            fused.sort_by_cached_key(|f| evidence.set_aside(&f.path));
        }
    }

    /// Each fused file's best lexical hit, or the name of its best chunk's definition.
    fn name_fused(
        &self,
        fused: &mut [SearchFile],
        best: &std::collections::HashMap<String, SearchHit>,
        hits: &[SemanticHit],
    ) -> Result<(), ApiError> {
        let mut first_chunk: Vec<SemanticHit> = Vec::new();
        for f in fused.iter() {
            if !best.contains_key(&f.path)
                && let Some(h) = hits.iter().find(|h| h.path == f.path)
            {
                first_chunk.push(h.clone());
            }
        }
        let names = self.chunk_hits(&first_chunk)?;
        for f in fused.iter_mut() {
            match best.get(&f.path) {
                Some(b) => {
                    f.symbol = b.qualified_name.clone();
                    f.best = Some(b.clone());
                }
                None => {
                    f.symbol = names
                        .iter()
                        .find(|c| c.path == f.path)
                        .and_then(|c| c.symbol.clone())
                }
            }
        }
        Ok(())
    }

    /// A query that is one identifier puts the files defining exactly that name first (a
    /// definition beats every file that merely mentions it, however the fusion scored them).
    fn exact_definitions_first(
        &self,
        fused: &mut Vec<SearchFile>,
        filters: &Filters,
        query: &str,
    ) -> Result<(), ApiError> {
        let word = filters.semantic_text(query);
        if !crate::search::is_identifier(&word) {
            return Ok(());
        }
        let snapshot = self.snapshot();
        let defs = crate::index::SymbolLookup::new(snapshot)?.find(&word)?;
        let mut front: Vec<SearchFile> = Vec::new();
        for d in defs
            .iter()
            .filter(|d| d.quality == crate::index::MatchQuality::Exact)
            .take(3)
        {
            let language = d.language.as_str();
            if front.iter().any(|f| f.path == d.path)
                || !filters.keeps(&d.path, language, Some(d.kind.as_str()))
            {
                continue;
            }
            let mut f = match fused.iter().position(|f| f.path == d.path) {
                Some(i) => fused.remove(i),
                None => SearchFile {
                    path: d.path.clone(),
                    ..SearchFile::default()
                },
            };
            f.defines_query = true;
            f.symbol = Some(d.qualified_name.clone());
            f.lines = Some((d.line, d.end_line));
            front.push(f);
        }
        front.append(fused);
        *fused = front;
        Ok(())
    }

    /// Lists under each file the spans worth reading, at most `per_file`: the definition the
    /// query names, then the lexical ranking's definitions and the chunks nearest in meaning
    /// taken in turn, each span once (an overlapping one adds nothing).
    fn chunk_files(
        &self,
        files: &mut [SearchFile],
        lexical: &[SearchHit],
        semantic: &[SemanticHit],
        per_file: usize,
    ) -> Result<(), ApiError> {
        let on_page: std::collections::HashSet<&str> = files.iter().map(|f| f.path.as_str()).collect();
        let near: Vec<SemanticHit> = semantic
            .iter()
            .filter(|h| on_page.contains(h.path.as_str()))
            .cloned()
            .collect();
        let near = self.chunk_hits(&near)?;
        for f in files.iter_mut() {
            let mut picked: Vec<FileChunk> = Vec::new();
            if f.defines_query
                && let Some((start, end)) = f.lines
            {
                picked.push(FileChunk::new(
                    start,
                    end,
                    f.symbol.clone(),
                    ChunkSource::Definition,
                ));
            }
            let by_lexical: Vec<FileChunk> = lexical
                .iter()
                .filter(|h| h.path == f.path && h.grain == crate::lexical::Grain::Symbol)
                .map(|h| FileChunk::new(h.line, h.end_line, h.qualified_name.clone(), ChunkSource::Lexical))
                .collect();
            let by_meaning: Vec<FileChunk> = near
                .iter()
                .filter(|c| c.path == f.path)
                .map(|c| FileChunk::new(c.start_line, c.end_line, c.symbol.clone(), ChunkSource::Semantic))
                .collect();
            let mut sources = [by_lexical.into_iter(), by_meaning.into_iter()];
            let mut exhausted = [false, false];
            while picked.len() < per_file && !exhausted.iter().all(|e| *e) {
                for (source, done) in sources.iter_mut().zip(exhausted.iter_mut()) {
                    if picked.len() >= per_file || *done {
                        continue;
                    }
                    // The source's next span that overlaps none picked so far.
                    match source.find(|c| !picked.iter().any(|p| p.overlaps(c))) {
                        Some(c) => picked.push(c),
                        None => *done = true,
                    }
                }
            }
            f.chunks = picked;
        }
        Ok(())
    }

    /// The definition owning each hit's chunk: its qualified name and kind (decoding each
    /// hit file's records once; a damaged record is an error naming its segment, not a hit
    /// without a name).
    fn owners(&self, hits: &[SemanticHit]) -> Result<Vec<Option<(String, &'static str)>>, ApiError> {
        let snapshot = self.snapshot();
        let mut uniq: Vec<_> = hits.iter().filter_map(|h| snapshot.file_id(&h.path)).collect();
        uniq.sort();
        uniq.dedup();
        let loaded = snapshot.load_symbols_of(&uniq)?;
        let owner = |h: &SemanticHit| -> Option<(String, &'static str)> {
            let id = snapshot.file_id(&h.path)?;
            let pos = uniq.binary_search(&id).ok()?;
            let record = snapshot.table.files.get(id.index())?;
            let d = loaded.get(pos)?.definitions.get(h.symbol? as usize)?;
            let sep = crate::graph::Family::of(&record.language).separator();
            Some((d.qualified_name(&record.module, sep), d.kind.as_str()))
        };
        Ok(hits.iter().map(owner).collect())
    }

    /// The hits with the qualified names of the definitions owning their chunks.
    fn chunk_hits(&self, hits: &[SemanticHit]) -> Result<Vec<ChunkHit>, ApiError> {
        Ok(hits
            .iter()
            .zip(self.owners(hits)?)
            .map(|(h, owner)| ChunkHit {
                path: h.path.clone(),
                start_line: h.start_line,
                end_line: h.end_line,
                symbol: owner.map(|o| o.0),
                score: h.score,
            })
            .collect())
    }
}

/// The documents holding a query found only in docs or config, first (at most
/// [`TEXT_ONLY_FILES`], each at its first matching line), then the ranked files, `keep` in all.
fn documents_first(files: &mut Vec<SearchFile>, hits: Vec<LineMatch>, keep: usize) {
    let mut front: Vec<SearchFile> = Vec::new();
    for m in hits {
        if front.len() < TEXT_ONLY_FILES && !front.iter().any(|f| f.path == m.path) {
            let line = u32::try_from(m.line).unwrap_or(u32::MAX);
            front.push(SearchFile {
                path: m.path,
                lines: Some((line, line)),
                chunks: vec![FileChunk::new(line, line, None, ChunkSource::Lexical)],
                ..SearchFile::default()
            });
        }
    }
    files.retain(|f| !front.iter().any(|d| d.path == f.path));
    front.append(files);
    front.truncate(keep);
    *files = front;
}

impl FileChunk {
    fn new(start_line: u32, end_line: u32, symbol: Option<String>, by: ChunkSource) -> FileChunk {
        let start_line = start_line.max(1);
        let end_line = end_line.max(start_line).min(start_line + MAX_CHUNK_LINES - 1);
        FileChunk {
            start_line,
            end_line,
            symbol,
            by,
        }
    }

    fn overlaps(&self, other: &FileChunk) -> bool {
        self.start_line <= other.end_line && other.start_line <= self.end_line
    }
}

impl SearchFile {
    fn fused(f: FusedFile) -> SearchFile {
        SearchFile {
            path: f.path,
            score: f.score,
            lexical_rank: f.lexical_rank,
            semantic_rank: f.semantic_rank,
            lines: f.lines,
            ..SearchFile::default()
        }
    }
}
