//! `LexicalIndex`: ranked search over one generation's tantivy index.
//!
//! Ranking: BM25 per field with boosts (name over qualified name over signature and path over
//! doc over body and content), an exact-identifier boost on untokenized names, and a small
//! constant preference for definitions over file mentions. Long natural-language queries are
//! pruned: query terms are weighted by rarity in the index and only the rarest
//! [`SearchOptions::max_terms`] are searched.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{Index, IndexReader, ReloadPolicy, Searcher, Term};

use super::ReadOnlyDirectory;
use super::hit_reader::HitReader;
use super::lexical_query::PathFilter;
use super::{LexicalError, LexicalQuery, LexicalSchema, is_stop_word, tokenize};
use crate::lang::{PathKind, PathRole};
use crate::util::contain;

/// Frequent English words in issue texts that say nothing about code.
const ENGLISH_STOP: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "any", "are", "at", "be", "been", "but", "by", "can",
    "could", "did", "does", "doing", "e", "g", "get", "got", "had", "has", "have", "here", "how", "i", "it",
    "its", "just", "like", "may", "me", "might", "more", "my", "no", "now", "of", "on", "one", "only",
    "other", "our", "out", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "thing", "think", "to", "up", "us", "very", "was", "we", "were", "what",
    "when", "which", "who", "why", "will", "would", "you", "your",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Grain {
    File,
    Symbol,
}

#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// Restrict to one grain; `None` searches both.
    pub grain: Option<Grain>,
    pub limit: usize,
    /// Query terms kept after pruning.
    pub max_terms: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            grain: None,
            limit: 20,
            max_terms: 32,
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LexicalHit {
    pub grain: Grain,
    pub path: String,
    pub language: String,
    pub kind: Option<String>,
    pub name: Option<String>,
    /// Containers and name (`Request.register_hook`).
    pub local_name: Option<String>,
    pub signature: Option<String>,
    pub line: u32,
    pub end_line: u32,
    pub score: f32,
}

/// Hits plus the terms actually searched (for snippets and explanations).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SearchOutcome {
    pub hits: Vec<LexicalHit>,
    pub terms: Vec<String>,
    /// Case-insensitive regexes, one per required phrase, that a hit's lines must match: the
    /// index only knows that the phrase's words occur. When present, `hits` holds more than
    /// `limit` candidates for the caller to verify and truncate.
    pub phrase_patterns: Vec<String>,
}

#[derive(Clone)]
pub struct LexicalIndex {
    dir: PathBuf,
    fields: LexicalSchema,
    reader: IndexReader,
    /// Set once every file's checksum has been found good, so it is checked once.
    verified: std::sync::Arc<std::sync::OnceLock<()>>,
}

/// Indexes up to this size have every file's checksum checked when opened.
pub const VERIFY_WHOLE_BELOW: u64 = 32 << 20;

/// The sorted names of `index`'s files whose checksum fails (a panic while checking is damage
/// of the folder).
fn damaged_in(index: &Index, dir: &Path) -> Result<Vec<String>, LexicalError> {
    let bad = contain(|| index.validate_checksum())
        .map_err(|panic| LexicalError::Damaged {
            path: dir.to_path_buf(),
            detail: format!("checking its checksums failed: {panic}"),
        })?
        .map_err(LexicalError::tantivy(dir))?;
    let mut names: Vec<String> = bad.iter().map(|p| p.display().to_string()).collect();
    names.sort();
    Ok(names)
}

/// The tantivy index at `dir`, opened to read only: no lock taken, nothing written.
fn open_read_only(dir: &Path) -> tantivy::Result<Index> {
    let directory = ReadOnlyDirectory::open(dir).map_err(tantivy::TantivyError::from)?;
    Index::open(directory)
}

/// The bytes of the files directly in `dir` (what a tantivy index holds).
fn total_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(u64::MAX)
}

/// Field boosts: names first, then qualified names, signatures and paths, docs, bodies.
fn boosts(s: &LexicalSchema) -> [(Field, f32); 7] {
    [
        (s.name, 4.0),
        (s.qualified, 2.5),
        (s.signature, 2.0),
        (s.path_text, 2.0),
        (s.doc, 1.5),
        (s.body, 1.0),
        (s.content, 1.0),
    ]
}

impl LexicalIndex {
    /// Files of the index at `dir` whose footer checksum does not match their bytes (tantivy
    /// keeps one per file); an index that cannot be opened at all is an error.
    pub fn damaged_files(dir: &Path) -> Result<Vec<String>, LexicalError> {
        let index = contain(|| open_read_only(dir))
            .map_err(|panic| LexicalError::Damaged {
                path: dir.to_path_buf(),
                detail: format!("opening it failed: {panic}"),
            })?
            .map_err(LexicalError::tantivy(dir))?;
        damaged_in(&index, dir)
    }

    /// Opens the index at `dir`. An index of at most [`VERIFY_WHOLE_BELOW`] bytes has every
    /// file's checksum checked first (a few milliseconds), so damage is refused by name before
    /// a query reads it; a larger one is checked by [`LexicalIndex::verify`] (a server does it
    /// once per generation) and, for one-shot queries, by the panic boundary every method has.
    pub fn open(dir: &Path) -> Result<LexicalIndex, LexicalError> {
        Self::open_sized(dir, total_size(dir))
    }

    /// [`LexicalIndex::open`] for a caller that knows the part's size (the manifest records
    /// every file's), so the folder is not listed again.
    pub fn open_sized(dir: &Path, bytes: u64) -> Result<LexicalIndex, LexicalError> {
        if bytes > VERIFY_WHOLE_BELOW {
            return Self::open_unverified(dir);
        }
        // Checked before a reader is opened: opening one decodes each store's and posting
        // list's header, and a damaged length there can ask for an allocation no process
        // survives (an abort, which no panic boundary catches).
        let bad = Self::damaged_files(dir).map_err(|e| Self::damage(dir, &e.to_string()))?;
        if let Some(first) = bad.first() {
            return Err(LexicalError::Damaged {
                path: dir.join(first),
                detail: "its checksum does not match its bytes".to_string(),
            });
        }
        let opened = Self::open_unverified(dir)?;
        let _ = opened.verified.set(());
        Ok(opened)
    }

    /// Opens the index at `dir` without checking its checksums first: damage then shows as an
    /// error (never a panic) from the method that meets it, or not at all where tantivy reads
    /// damaged bytes without noticing ([`LexicalIndex::verify`] finds those).
    pub fn open_unverified(dir: &Path) -> Result<LexicalIndex, LexicalError> {
        match contain(|| Self::open_unchecked(dir)) {
            Err(panic) => Err(Self::damage(dir, &panic)),
            Ok(Err(e)) => Err(Self::damage(dir, &e.to_string())),
            Ok(Ok(opened)) => Ok(opened),
        }
    }

    fn open_unchecked(dir: &Path) -> Result<LexicalIndex, LexicalError> {
        let index = open_read_only(dir).map_err(LexicalError::tantivy(dir))?;
        LexicalSchema::register_tokenizer(&index);
        let fields = LexicalSchema::of(&index).map_err(LexicalError::tantivy(dir))?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(LexicalError::tantivy(dir))?;
        Ok(LexicalIndex {
            dir: dir.to_path_buf(),
            fields,
            reader,
            verified: Default::default(),
        })
    }

    /// Checks every file's checksum (tantivy keeps one per file): the first damaged file is
    /// an error naming it. A check that passed is not repeated.
    pub fn verify(&self) -> Result<(), LexicalError> {
        if self.verified.get().is_some() {
            return Ok(());
        }
        let names = damaged_in(self.reader.searcher().index(), &self.dir)?;
        match names.first() {
            None => {
                let _ = self.verified.set(());
                Ok(())
            }
            Some(first) => Err(LexicalError::Damaged {
                path: self.dir.join(first),
                detail: "its checksum does not match its bytes".to_string(),
            }),
        }
    }

    /// The error for a failure inside tantivy (a panic or an error while reading the index):
    /// the damage is named by the files whose checksums fail, else by the file tantivy's
    /// message names, else the folder.
    fn damage(dir: &Path, failure: &str) -> LexicalError {
        const SHOWN: usize = 240;
        let mut what: String = failure.chars().take(SHOWN).collect();
        if what.len() < failure.len() {
            what.push('…');
        }
        let bad = Self::damaged_files(dir).unwrap_or_default();
        let named = || {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .map(|es| {
                    es.flatten()
                        .map(|e| e.file_name().to_string_lossy().to_string())
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            names.into_iter().find(|n| what.contains(n.as_str()))
        };
        match (bad.first(), named()) {
            (Some(first), _) => LexicalError::Damaged {
                path: dir.join(first),
                detail: format!("its checksum does not match its bytes; reading it failed: {what}"),
            },
            (None, Some(name)) => LexicalError::Damaged {
                path: dir.join(name),
                detail: format!("reading it failed: {what}"),
            },
            (None, None) => LexicalError::Damaged {
                path: dir.to_path_buf(),
                detail: format!("reading it failed: {what}"),
            },
        }
    }

    /// Runs a read of the index behind the panic boundary; tantivy failing to read what it
    /// wrote is damage too.
    fn guarded<T>(&self, f: impl FnOnce() -> Result<T, LexicalError>) -> Result<T, LexicalError> {
        match contain(f) {
            Err(panic) => Err(Self::damage(&self.dir, &panic)),
            Ok(Err(LexicalError::Tantivy { source, .. })) => {
                Err(Self::damage(&self.dir, &source.to_string()))
            }
            Ok(r) => r,
        }
    }

    pub fn num_docs(&self) -> u64 {
        contain(|| self.reader.searcher().num_docs()).unwrap_or(0)
    }

    /// Ranked hits for `q`, best first.
    pub fn search(&self, q: &LexicalQuery, opts: &SearchOptions) -> Result<SearchOutcome, LexicalError> {
        self.guarded(|| self.search_unguarded(q, opts))
    }

    fn search_unguarded(
        &self,
        q: &LexicalQuery,
        opts: &SearchOptions,
    ) -> Result<SearchOutcome, LexicalError> {
        let searcher = self.reader.searcher();
        let terms = self.select_terms(&searcher, &q.text, opts.max_terms);
        let long = terms.len() > 10;
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        if !terms.is_empty() {
            clauses.push((Occur::Must, Box::new(self.terms_query(&terms, opts.grain))));
        }
        let mut phrase_patterns = Vec::new();
        for phrase in &q.phrases {
            if let Some((pq, pattern)) = self.phrase_query(phrase) {
                let required = !long && q.phrases.len() <= 2;
                if required {
                    phrase_patterns.push(pattern);
                }
                let occur = if required { Occur::Must } else { Occur::Should };
                clauses.push((occur, Box::new(BoostQuery::new(pq, 3.0))));
            }
        }
        if clauses.is_empty() {
            return Ok(SearchOutcome {
                hits: Vec::new(),
                terms: Vec::new(),
                phrase_patterns,
            });
        }
        for (name, boost) in exact_identifiers(&q.text) {
            let t = Term::from_field_text(self.fields.name_exact, &name);
            let tq = TermQuery::new(t, IndexRecordOption::Basic);
            clauses.push((Occur::Should, Box::new(BoostQuery::new(Box::new(tq), boost))));
        }
        self.add_filters(q, opts, &mut clauses);
        let symbol = TermQuery::new(
            Term::from_field_text(self.fields.grain, "symbol"),
            IndexRecordOption::Basic,
        );
        clauses.push((
            Occur::Should,
            Box::new(ConstScoreQuery::new(Box::new(symbol), 0.5)),
        ));
        let query = BooleanQuery::new(clauses);

        let (include, exclude) = q.path_filters()?;
        let filtered = !include.is_empty() || !exclude.is_empty();
        let verify = !phrase_patterns.is_empty();
        let fetch = if filtered || verify {
            (opts.limit * 20).clamp(200, 20_000)
        } else {
            opts.limit.max(1)
        };
        let keep = if verify { fetch } else { opts.limit };
        let top = self.top_docs(&searcher, &query, fetch)?;
        // Where every document fetched is kept (no path filter stops the reading early), the
        // stored documents are read in document order: the store is compressed in blocks, and
        // in score order a block was decompressed again for each hit it holds (the block cache
        // is smaller than a query's spread); in order, each block once.
        let mut order: Vec<usize> = (0..top.len()).collect();
        if keep >= top.len() {
            order.sort_unstable_by_key(|&i| top[i].1);
        }
        let mut fetched: Vec<Option<LexicalHit>> = vec![None; top.len()];
        let mut reader = HitReader::new(&searcher, &self.fields);
        let mut kept = 0;
        let mut last_kept = f32::NAN;
        for i in order {
            let (score, addr) = top[i];
            // Past `keep` (the order is the score order whenever fewer than all are kept), only
            // the hits tied with the last one kept are read: which of them are kept is settled
            // below by what they hold, not by which came first.
            if kept >= keep && score != last_kept {
                break;
            }
            let hit = reader
                .hit(addr, score)
                .map_err(LexicalError::tantivy(&self.dir))?;
            if !keep_path(&hit.path, &include, &exclude) {
                continue;
            }
            fetched[i] = Some(hit);
            kept += 1;
            last_kept = score;
        }
        let mut hits: Vec<LexicalHit> = fetched.into_iter().flatten().collect();
        hits.sort_by(tie_order);
        hits.truncate(keep);
        let terms = terms.into_iter().map(|(t, _)| t).collect();
        Ok(SearchOutcome {
            hits,
            terms,
            phrase_patterns,
        })
    }

    /// The best `limit` documents for `query`, and past them every document tied with the
    /// last: tantivy breaks ties by document id, and a merged segment's document order differs
    /// from one build to the next (documents are indexed on several threads), so the caller
    /// settles ties by what the documents hold ([`tie_order`]). Fetches again, twice as many,
    /// while the tie runs on past what was fetched.
    fn top_docs(
        &self,
        searcher: &tantivy::Searcher,
        query: &dyn Query,
        limit: usize,
    ) -> Result<Vec<(f32, tantivy::DocAddress)>, LexicalError> {
        let mut fetch = limit + 1;
        loop {
            let mut top: Vec<(f32, tantivy::DocAddress)> = searcher
                .search(query, &TopDocs::with_limit(fetch).order_by_score())
                .map_err(LexicalError::tantivy(&self.dir))?;
            let Some(&(last, _)) = top.get(limit.saturating_sub(1)) else {
                return Ok(top);
            };
            let ties_past = top.len() == fetch && top[fetch - 1].0 == last;
            if !ties_past {
                let end = top[limit..].iter().take_while(|t| t.0 == last).count();
                top.truncate(limit + end);
                return Ok(top);
            }
            fetch = fetch.saturating_mul(2);
        }
    }

    /// Paths of the files defining something whose name starts with `prefix` (lowercase).
    pub fn files_defining(&self, prefix: &str) -> Result<Vec<String>, LexicalError> {
        let pattern = format!("{}.*", regex::escape(prefix));
        let query = tantivy::query::RegexQuery::from_pattern(&pattern, self.fields.name_exact)
            .map_err(LexicalError::tantivy(&self.dir))?;
        self.matching_paths(&query)
    }

    /// Paths of the files whose content has every one of `words` as a token (lowercased).
    pub fn files_with_words(&self, words: &[String]) -> Result<Vec<String>, LexicalError> {
        let s = &self.fields;
        let file = TermQuery::new(Term::from_field_text(s.grain, "file"), IndexRecordOption::Basic);
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, Box::new(file))];
        for w in words {
            let tq = TermQuery::new(Term::from_field_text(s.content, w), IndexRecordOption::Basic);
            clauses.push((Occur::Must, Box::new(tq)));
        }
        self.matching_paths(&BooleanQuery::new(clauses))
    }

    /// The sorted, distinct paths of every document matching `query`.
    fn matching_paths(&self, query: &dyn Query) -> Result<Vec<String>, LexicalError> {
        self.guarded(|| self.matching_paths_unguarded(query))
    }

    fn matching_paths_unguarded(&self, query: &dyn Query) -> Result<Vec<String>, LexicalError> {
        let searcher = self.reader.searcher();
        let docs = searcher
            .search(query, &tantivy::collector::DocSetCollector)
            .map_err(LexicalError::tantivy(&self.dir))?;
        let mut paths = Vec::with_capacity(docs.len());
        let mut reader = HitReader::new(&searcher, &self.fields);
        for addr in docs {
            if let Some(p) = reader.path(addr).map_err(LexicalError::tantivy(&self.dir))? {
                paths.push(p);
            }
        }
        paths.sort();
        paths.dedup();
        Ok(paths)
    }

    /// Tokenizes the free text and keeps the rarest terms, weighted by query frequency.
    fn select_terms(&self, searcher: &Searcher, text: &str, max_terms: usize) -> Vec<(String, f32)> {
        let mut toks = Vec::new();
        tokenize(&strip_noise_lines(text), &mut toks);
        let mut tf: BTreeMap<String, u32> = BTreeMap::new();
        for t in toks {
            if ENGLISH_STOP.binary_search(&t.text.as_str()).is_err() && !is_stop_word(&t.text) {
                *tf.entry(t.text).or_default() += 1;
            }
        }
        let n = searcher.num_docs().max(1) as f32;
        let s = &self.fields;
        let mut scored: Vec<(String, f32, f32)> = tf
            .into_iter()
            .filter_map(|(t, count)| {
                let df = [s.content, s.name, s.path_text, s.doc]
                    .iter()
                    .map(|&f| searcher.doc_freq(&Term::from_field_text(f, &t)).unwrap_or(0))
                    .max()
                    .unwrap_or(0);
                if df == 0 {
                    return None;
                }
                let idf = (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln();
                Some((t, idf, 1.0 + (count as f32).ln()))
            })
            .collect();
        scored.sort_by(|a, b| (b.1 * b.2).total_cmp(&(a.1 * a.2)).then_with(|| a.0.cmp(&b.0)));
        scored.truncate(max_terms);
        scored.into_iter().map(|(t, _, w)| (t, w)).collect()
    }

    fn terms_query(&self, terms: &[(String, f32)], grain: Option<Grain>) -> BooleanQuery {
        let s = &self.fields;
        // Only the fields documents of the requested grain have.
        let fields: Vec<(Field, f32)> = boosts(s)
            .into_iter()
            .filter(|(f, _)| match grain {
                Some(Grain::File) => *f == s.content || *f == s.path_text,
                Some(Grain::Symbol) => *f != s.content,
                None => true,
            })
            .collect();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (t, weight) in terms {
            for &(field, boost) in &fields {
                let tq = TermQuery::new(Term::from_field_text(field, t), IndexRecordOption::WithFreqs);
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(tq), boost * weight)),
                ));
            }
        }
        BooleanQuery::new(clauses)
    }

    /// A phrase as the conjunction of its words over the text fields, plus the regex that
    /// verifies the words are adjacent (`parse error` also matches `ParseError`, `parse_error`).
    fn phrase_query(&self, phrase: &str) -> Option<(Box<dyn Query>, String)> {
        let mut toks = Vec::new();
        tokenize(phrase, &mut toks);
        let parts: Vec<String> = toks
            .into_iter()
            .filter(|t| t.position_length == 1)
            .map(|t| t.text)
            .collect();
        if parts.is_empty() {
            return None;
        }
        let s = &self.fields;
        let mut all: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for part in &parts {
            let any_field: Vec<(Occur, Box<dyn Query>)> = [s.content, s.signature, s.doc, s.name, s.body]
                .iter()
                .map(|&f| {
                    let tq: Box<dyn Query> = Box::new(TermQuery::new(
                        Term::from_field_text(f, part),
                        IndexRecordOption::WithFreqs,
                    ));
                    (Occur::Should, tq)
                })
                .collect();
            all.push((Occur::Must, Box::new(BooleanQuery::new(any_field))));
        }
        let words: Vec<String> = phrase
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(regex::escape)
            .collect();
        let pattern = format!("(?i){}", words.join(r"[\W_]*"));
        Some((Box::new(BooleanQuery::new(all)), pattern))
    }

    fn add_filters(
        &self,
        q: &LexicalQuery,
        opts: &SearchOptions,
        clauses: &mut Vec<(Occur, Box<dyn Query>)>,
    ) {
        let s = &self.fields;
        let any_of = |field: Field, values: &[String]| -> Box<dyn Query> {
            let qs = values
                .iter()
                .map(|v| {
                    let tq: Box<dyn Query> = Box::new(TermQuery::new(
                        Term::from_field_text(field, v),
                        IndexRecordOption::Basic,
                    ));
                    (Occur::Should, tq)
                })
                .collect();
            Box::new(BooleanQuery::new(qs))
        };
        if !q.langs.is_empty() {
            clauses.push((Occur::Must, any_of(s.lang, &q.langs)));
        }
        if !q.kinds.is_empty() {
            clauses.push((Occur::Must, any_of(s.kind, &q.kinds)));
        }
        for v in &q.not_langs {
            clauses.push((Occur::MustNot, any_of(s.lang, std::slice::from_ref(v))));
        }
        for v in &q.not_kinds {
            clauses.push((Occur::MustNot, any_of(s.kind, std::slice::from_ref(v))));
        }
        // Docs and config stay out of code answers unless the query asks for them.
        if !q.wants_text() {
            clauses.push((
                Occur::MustNot,
                any_of(s.kind, &["doc".to_string(), "config".to_string()]),
            ));
        }
        if let Some(g) = opts.grain {
            let v = match g {
                Grain::File => "file",
                Grain::Symbol => "symbol",
            };
            clauses.push((Occur::Must, any_of(s.grain, &[v.to_string()])));
        }
    }
}

/// Drops lines of pasted environment reports (`numpy: 1.18.1`, `pandas==1.0.3`, `python:
/// 3.8.5 (default, ...)`) and bare URLs: their package names are rare in the index and would
/// otherwise dominate a pruned query.
fn strip_noise_lines(text: &str) -> String {
    let is_version = |v: &str| {
        let v = v.trim().trim_start_matches('v');
        v.chars().next().is_some_and(|c| c.is_ascii_digit()) && v.contains('.')
    };
    let noise = |line: &str| {
        let l = line.trim();
        if l.starts_with("http://") || l.starts_with("https://") {
            return !l.contains(' ');
        }
        let split = l
            .split_once("==")
            .or_else(|| l.split_once(':'))
            .or_else(|| l.split_once(' '));
        split.is_some_and(|(key, value)| {
            let key = key.trim();
            !key.is_empty() && !key.contains(' ') && key.len() <= 40 && is_version(value)
        })
    };
    text.lines().filter(|l| !noise(l)).collect::<Vec<_>>().join("\n")
}

/// Best score first; hits of one score by path, line, grain and name, so that which of them
/// are kept, and in what order, does not hang on the index's document order.
fn tie_order(a: &LexicalHit, b: &LexicalHit) -> std::cmp::Ordering {
    b.score
        .total_cmp(&a.score)
        .then_with(|| a.path.cmp(&b.path))
        .then_with(|| a.line.cmp(&b.line))
        .then_with(|| a.end_line.cmp(&b.end_line))
        .then_with(|| (a.grain as u8).cmp(&(b.grain as u8)))
        .then_with(|| a.local_name.cmp(&b.local_name))
}

fn keep_path(path: &str, include: &[PathFilter], exclude: &[PathFilter]) -> bool {
    (include.is_empty() || include.iter().any(|f| f.matches(path)))
        && !exclude.iter().any(|f| f.matches(path))
}

/// Identifier-looking words of the query (`register_hook`, `Session.send`, `HTTPError`,
/// `foo()`), as lowercased last segments with a boost; in a short query every word counts.
fn exact_identifiers(text: &str) -> Vec<(String, f32)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let short = words.len() <= 3;
    let mut out: HashMap<String, f32> = HashMap::new();
    for w in words {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
        let last = w.rsplit(['.', ':']).next().unwrap_or(w);
        if last.is_empty() || last.len() > 64 {
            continue;
        }
        let inner_upper = last.chars().skip(1).any(char::is_uppercase);
        let looks_like_code = last.contains('_') || inner_upper || w.contains("::") || w.contains('.');
        if short || looks_like_code {
            out.insert(last.to_lowercase(), if short { 8.0 } else { 4.0 });
        }
    }
    // "write atomic" is probably `write_atomic` or `writeAtomic`.
    let plain: Vec<String> = text
        .split_whitespace()
        .map(|w| w.to_lowercase())
        .filter(|w| w.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .collect();
    if short && plain.len() > 1 {
        out.insert(plain.join("_"), 12.0);
        out.insert(plain.join(""), 12.0);
    }
    let mut v: Vec<(String, f32)> = out.into_iter().collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Test code by its path (a test or test support, by [`PathKind`]).
const TEST_PRIOR: f32 = 0.5;

/// A prior on where a task's code lives: tests, examples, docs and benchmarks mention the
/// same names as the code they exercise, but are rarely what needs to change. What a path is
/// comes from [`PathKind`]; the weights are set here.
pub fn path_prior(path: &str) -> f32 {
    match PathKind::of(path).role {
        PathRole::Test | PathRole::TestSupport => TEST_PRIOR,
        PathRole::Example | PathRole::Bench | PathRole::Doc => 0.6,
        PathRole::Source => 1.0,
    }
}

/// Ranks files by their hits: the best hit plus a little for further distinct hits, times
/// the [`path_prior`].
pub fn rank_files(hits: &[LexicalHit]) -> Vec<(String, f32)> {
    let mut by_file: HashMap<&str, Vec<f32>> = HashMap::new();
    for h in hits {
        by_file.entry(h.path.as_str()).or_default().push(h.score);
    }
    let mut ranked: Vec<(String, f32)> = by_file
        .into_iter()
        .map(|(p, mut scores)| {
            scores.sort_by(|a, b| b.total_cmp(a));
            let best = scores.first().copied().unwrap_or(0.0);
            let rest: f32 = scores.iter().skip(1).take(4).sum();
            (p.to_string(), (best + 0.1 * rest) * path_prior(p))
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two files of the same text score the same; which one a search keeps must not hang on
    /// the order they were indexed in (a merged segment's order differs between builds).
    #[test]
    fn ties_are_settled_by_path_not_by_document_order() {
        let symbols = crate::symbols::FileSymbols::default();
        let text = b"frobnicate the widget twice\n";
        let mut answers = Vec::new();
        for order in [["b.py", "a.py", "c.py"], ["c.py", "a.py", "b.py"]] {
            let dir = tempfile::tempdir().unwrap();
            let writer = crate::lexical::LexicalWriter::open(dir.path(), None, 1, None).unwrap();
            for path in order {
                let doc = crate::lexical::FileDoc {
                    path,
                    language: "python",
                    separator: ".",
                    bytes: text,
                    lines: 1,
                    symbols: &symbols,
                };
                writer.add_file(&doc).unwrap();
            }
            writer.commit().unwrap();
            let index = LexicalIndex::open(dir.path()).unwrap();
            let query = LexicalQuery::parse("frobnicate widget");
            let mut paths = Vec::new();
            for limit in [1, 2] {
                let opts = SearchOptions {
                    limit,
                    ..Default::default()
                };
                let hits = index.search(&query, &opts).unwrap().hits;
                paths.push(hits.iter().map(|h| h.path.clone()).collect::<Vec<_>>());
            }
            answers.push(paths);
        }
        assert_eq!(answers[0], vec![vec!["a.py"], vec!["a.py", "b.py"]]);
        assert_eq!(answers[0], answers[1]);
    }

    #[test]
    fn tests_docs_and_examples_rank_below_code() {
        assert_eq!(path_prior("requests/models.py"), 1.0);
        assert_eq!(path_prior("tests/test_models.py"), 0.5);
        assert_eq!(path_prior("xarray/tests/test_dataset.py"), 0.5);
        assert_eq!(path_prior("pkg/server_test.go"), 0.5);
        assert_eq!(path_prior("docs/conf.py"), 0.6);
        assert_eq!(path_prior("fixtures/lang/rust/lib.rs"), 0.5);
        assert_eq!(path_prior("src/testament.rs"), 1.0);
    }

    #[test]
    fn environment_dumps_are_dropped_from_queries() {
        let text = "merge fails on dims\nnumpy: 1.18.1\npandas==1.0.3\nscipy 1.4.1\nhttps://x.org/a\nuse xr.merge here";
        assert_eq!(strip_noise_lines(text), "merge fails on dims\nuse xr.merge here");
    }

    #[test]
    fn english_stop_list_is_sorted() {
        let mut s = ENGLISH_STOP.to_vec();
        s.sort();
        assert_eq!(s, ENGLISH_STOP);
    }

    #[test]
    fn short_queries_also_try_the_joined_identifier() {
        let names: Vec<String> = exact_identifiers("write atomic")
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["atomic", "write", "write_atomic", "writeatomic"]);
    }

    #[test]
    fn identifiers_are_detected_in_prose() {
        let ids = exact_identifiers("Calling Session.send with register_hook fails in HTTPAdapter for users");
        let names: Vec<&str> = ids.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["httpadapter", "register_hook", "send"]);
    }
}
