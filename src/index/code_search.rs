//! `CodeSearch`: `ken search` over one snapshot — ranked lexical hits enriched with qualified
//! names (module from the file table) and snippets read from the working tree, file ranking,
//! and ripgrep-style line search narrowed by the index.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{IndexError, IndexSnapshot};
use crate::lang::LanguageRegistry;
use crate::lexical::{
    Grain, LexicalError, LexicalHit, LexicalIndex, LexicalQuery, LineMatch, LineSearch, LineSearchMode,
    PathEvidence, SearchOptions, SearchOutcome, Snippet, rank_files,
};

/// Lines of snippet shown per hit.
const SNIPPET_LINES: usize = 2;
/// Hits fetched per requested file when ranking files.
const HITS_PER_FILE: usize = 8;
/// Query terms kept for the whole-file ranking of `--files`.
const FILE_GRAIN_TERMS: usize = 128;
/// The reciprocal rank fusion constant.
const RRF_K: f32 = 10.0;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SearchHit {
    pub grain: Grain,
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    pub language: String,
    pub kind: Option<String>,
    pub qualified_name: Option<String>,
    /// Containers and name without the module (`Request.register_hook`).
    pub local_name: Option<String>,
    pub signature: Option<String>,
    pub score: f32,
    pub snippet: Option<Snippet>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FileHit {
    pub path: String,
    pub score: f32,
    /// The best-scoring hit inside the file.
    pub best: SearchHit,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SearchResults {
    /// Query terms searched after pruning, rarest first.
    pub terms: Vec<String>,
    pub hits: Vec<SearchHit>,
    /// Present when files were asked for; `hits` then holds every hit they were ranked from.
    pub files: Option<Vec<FileHit>>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LineResults {
    pub matches: Vec<LineMatch>,
    pub files_searched: usize,
    /// Files the index ruled out without reading them.
    pub files_skipped_by_index: usize,
}

pub struct CodeSearch<'s> {
    snapshot: &'s IndexSnapshot,
    root: PathBuf,
    lexical: LexicalIndex,
    /// Files read for snippets and phrase checks, once per file for this engine's life (it
    /// is made per request; several hits of one file read it once).
    files: std::sync::Mutex<std::collections::HashMap<String, Option<std::sync::Arc<String>>>>,
    paths: PathWeighing,
    /// Each ranked file's best hit gets a snippet (the ranker, which shows none, reads no file).
    snippets: bool,
}

/// What the file ranking takes from paths ([`PathEvidence`]); both on but in an ablation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathWeighing {
    /// Name matches and the priors of copies (tests, examples, generated, legacy, platform).
    pub weigh: bool,
    /// Tests and examples the query does not ask for listed last.
    pub set_aside: bool,
}

impl Default for PathWeighing {
    fn default() -> Self {
        PathWeighing {
            weigh: true,
            set_aside: true,
        }
    }
}

/// What to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchTarget {
    /// Files and definitions as they rank.
    Mixed,
    Symbols,
    /// Files ranked by their best hits.
    Files,
}

impl<'s> CodeSearch<'s> {
    pub fn new(snapshot: &'s IndexSnapshot, root: &Path) -> Result<CodeSearch<'s>, IndexError> {
        Ok(CodeSearch {
            snapshot,
            root: root.to_path_buf(),
            lexical: snapshot.lexical()?,
            files: Default::default(),
            paths: PathWeighing::default(),
            snippets: true,
        })
    }

    /// Over an already opened lexical part (a resident server keeps one per generation).
    pub fn with_lexical(snapshot: &'s IndexSnapshot, root: &Path, lexical: LexicalIndex) -> CodeSearch<'s> {
        CodeSearch {
            snapshot,
            root: root.to_path_buf(),
            lexical,
            files: Default::default(),
            paths: PathWeighing::default(),
            snippets: true,
        }
    }

    /// The same engine giving no snippets: nothing read from the working tree for ranked
    /// files (a ranking of 100 files read 100 files for snippets no one saw).
    pub fn without_snippets(mut self) -> CodeSearch<'s> {
        self.snippets = false;
        self
    }

    /// `hit` with its snippet, when it has none (a hit from an engine without snippets).
    pub fn with_snippet(&self, mut hit: SearchHit, terms: &[String]) -> SearchHit {
        if hit.snippet.is_none()
            && let Some(text) = self.file_text(&hit.path)
        {
            hit.snippet = Snippet::build(&text, hit.line, hit.end_line, terms, SNIPPET_LINES);
        }
        hit
    }

    /// The same engine weighing paths as `paths` says (an ablation turns a part off).
    pub fn weighing_paths(mut self, paths: PathWeighing) -> CodeSearch<'s> {
        self.paths = paths;
        self
    }

    pub fn search(
        &self,
        query: &str,
        target: SearchTarget,
        limit: usize,
    ) -> Result<SearchResults, IndexError> {
        self.search_parsed(&LexicalQuery::parse(query), target, limit)
    }

    /// [`CodeSearch::search`] of a query already parsed (the ranker parses a query once).
    pub fn search_parsed(
        &self,
        q: &LexicalQuery,
        target: SearchTarget,
        limit: usize,
    ) -> Result<SearchResults, IndexError> {
        if target == SearchTarget::Files {
            return self.search_files(q, limit);
        }
        let opts = SearchOptions {
            grain: (target == SearchTarget::Symbols).then_some(Grain::Symbol),
            limit,
            ..SearchOptions::default()
        };
        let outcome = self.lexical.search(q, &opts)?;
        let mut kept = self.verified(&outcome)?;
        kept.truncate(limit);
        let hits = kept
            .iter()
            .map(|h| self.enrich(h, &outcome.terms, true))
            .collect();
        Ok(SearchResults {
            terms: outcome.terms,
            hits,
            files: None,
        })
    }

    /// The reference ranking the evaluation compares against: files by plain BM25 of their
    /// whole content over every query term, without priors or fusion.
    pub fn search_files_plain(&self, query: &str, limit: usize) -> Result<SearchResults, IndexError> {
        let q = LexicalQuery::parse(query);
        let opts = SearchOptions {
            grain: Some(Grain::File),
            limit,
            max_terms: usize::MAX,
        };
        let outcome = self.lexical.search(&q, &opts)?;
        let kept = self.verified(&outcome)?;
        let hits: Vec<SearchHit> = kept
            .iter()
            .map(|h| self.enrich(h, &outcome.terms, false))
            .collect();
        let files = hits
            .iter()
            .map(|h| FileHit {
                path: h.path.clone(),
                score: h.score,
                best: h.clone(),
            })
            .collect();
        Ok(SearchResults {
            terms: outcome.terms,
            hits,
            files: Some(files),
        })
    }

    /// Files ranked by reciprocal rank fusion of two rankings: whole-file BM25 over (almost)
    /// every query term, and files by their best definition and file hits under the pruned
    /// query. The first catches files that mention many of the task's words, the second files
    /// that define what it names; fusing them beat either alone on the dev set at every
    /// fusion constant tried (5 to 60), and 10 is in the flat middle of that range.
    fn search_files(&self, q: &LexicalQuery, limit: usize) -> Result<SearchResults, IndexError> {
        let whole = SearchOptions {
            grain: Some(Grain::File),
            limit: limit * HITS_PER_FILE,
            max_terms: FILE_GRAIN_TERMS,
        };
        let by_file = self.lexical.search(q, &whole)?;
        let mixed = SearchOptions {
            grain: None,
            limit: limit * HITS_PER_FILE,
            ..SearchOptions::default()
        };
        let by_hit = self.lexical.search(q, &mixed)?;
        let (file_kept, hit_kept) = (self.verified(&by_file)?, self.verified(&by_hit)?);
        let mut fused: HashMap<String, f32> = HashMap::new();
        for ranking in [rank_files(&file_kept), rank_files(&hit_kept)] {
            for (i, (path, _)) in ranking.into_iter().enumerate() {
                *fused.entry(path).or_default() += 1.0 / (RRF_K + i as f32);
            }
        }
        let evidence = PathEvidence::of_query(&q.text);
        let mut ranked: Vec<(String, f32)> = fused
            .into_iter()
            .map(|(path, score)| match self.paths.weigh {
                true => {
                    let score = evidence.weigh(&path, score, RRF_K);
                    (path, score)
                }
                false => (path, score),
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        if self.paths.set_aside {
            // Stable: tests and examples not asked for go last, each group keeping its order.
            ranked.sort_by_cached_key(|(path, _)| evidence.set_aside(path));
        }
        // Every hit is listed (without a snippet); each ranked file's best hit gets one.
        let hits: Vec<SearchHit> = hit_kept
            .iter()
            .map(|h| self.enrich(h, &by_hit.terms, false))
            .collect();
        let files = ranked
            .into_iter()
            .take(limit)
            .filter_map(|(path, score)| {
                let (best, terms) = match hit_kept.iter().find(|h| h.path == path) {
                    Some(h) => (h, &by_hit.terms),
                    None => (file_kept.iter().find(|h| h.path == path)?, &by_file.terms),
                };
                Some(FileHit {
                    path,
                    score,
                    best: self.enrich(best, terms, self.snippets),
                })
            })
            .collect();
        Ok(SearchResults {
            terms: by_hit.terms,
            hits,
            files: Some(files),
        })
    }

    /// The hits whose lines match every required phrase (all of them when there is none).
    fn verified(&self, outcome: &SearchOutcome) -> Result<Vec<LexicalHit>, IndexError> {
        let patterns: Vec<regex::Regex> = outcome
            .phrase_patterns
            .iter()
            .map(|p| {
                regex::Regex::new(p).map_err(|e| LexicalError::Pattern {
                    what: "phrase",
                    pattern: p.clone(),
                    message: e.to_string(),
                })
            })
            .collect::<Result<_, _>>()?;
        if patterns.is_empty() {
            return Ok(outcome.hits.clone());
        }
        let mut out = Vec::new();
        for h in &outcome.hits {
            let Some(text) = self.file_text(&h.path) else {
                continue;
            };
            let first = h.line.max(1) as usize;
            let count = (h.end_line as usize).max(first) - first + 1;
            let span = text
                .lines()
                .skip(first - 1)
                .take(count)
                .collect::<Vec<_>>()
                .join("\n");
            if patterns.iter().all(|p| p.is_match(&span)) {
                out.push(h.clone());
            }
        }
        Ok(out)
    }

    /// A file's text under the root (lossy UTF-8), read once per engine.
    fn file_text(&self, path: &str) -> Option<std::sync::Arc<String>> {
        let mut files = match self.files.lock() {
            Ok(f) => f,
            Err(poisoned) => poisoned.into_inner(),
        };
        files
            .entry(path.to_string())
            .or_insert_with(|| {
                crate::util::read_no_follow(&self.root.join(path))
                    .ok()
                    .map(|b| std::sync::Arc::new(String::from_utf8_lossy(&b).into_owned()))
            })
            .clone()
    }

    fn enrich(&self, h: &LexicalHit, terms: &[String], with_snippet: bool) -> SearchHit {
        let qualified_name = h.local_name.as_ref().map(|local| {
            let module = self
                .snapshot
                .table
                .find(&h.path)
                .map(|r| r.module.as_str())
                .unwrap_or("");
            let sep = LanguageRegistry::builtin()
                .ok()
                .and_then(|r| r.by_name(&h.language))
                .map_or(".", |l| l.separator.as_str());
            if module.is_empty() {
                local.clone()
            } else {
                format!("{module}{sep}{local}")
            }
        });
        let file = with_snippet.then(|| self.file_text(&h.path)).flatten();
        let snippet = file.and_then(|text| Snippet::build(&text, h.line, h.end_line, terms, SNIPPET_LINES));
        SearchHit {
            grain: h.grain,
            path: h.path.clone(),
            line: h.line,
            end_line: h.end_line,
            language: h.language.clone(),
            kind: h.kind.clone(),
            qualified_name,
            local_name: h.local_name.clone(),
            signature: h.signature.clone(),
            score: h.score,
            snippet,
        }
    }

    /// Every line matching `pattern` in the indexed files, in path and line order.
    pub fn lines(
        &self,
        pattern: &str,
        mode: LineSearchMode,
        ignore_case: bool,
        limit: usize,
    ) -> Result<LineResults, IndexError> {
        self.lines_in(pattern, mode, ignore_case, limit, |_| true)
    }

    /// [`CodeSearch::lines`] in the files whose path `keep` accepts (code only, docs only).
    pub fn lines_in(
        &self,
        pattern: &str,
        mode: LineSearchMode,
        ignore_case: bool,
        limit: usize,
        keep: impl Fn(&str) -> bool,
    ) -> Result<LineResults, IndexError> {
        let search = LineSearch::new(pattern, mode, ignore_case)?;
        let all: Vec<String> = self
            .snapshot
            .table
            .files
            .iter()
            .map(|f| f.path.to_string())
            .collect();
        let words = match mode {
            LineSearchMode::Literal => LineSearch::required_words(pattern),
            LineSearchMode::Regex => Vec::new(),
        };
        let mut candidates = if words.is_empty() {
            all.clone()
        } else {
            self.lexical.files_with_words(&words)?
        };
        candidates.retain(|p| keep(p));
        let (matches, searched) = search.run(&self.root, &candidates, limit);
        Ok(LineResults {
            matches,
            files_searched: searched,
            files_skipped_by_index: all.len() - searched,
        })
    }
}
