//! The text a model reads of an answer: paths with spans, names and signatures, the code
//! itself where the answer carries it, one line of coverage. Each answer type writes its own
//! ([`ModelText`]), from its fields; MCP sends the text beside the whole answer as
//! `structuredContent` (the model is not sent it twice), and the bundled agent puts it in its
//! prompts and tool results.

use serde::Serialize;
use serde_json::Value;

use super::context_ops::{AskResponse, ContextResponse, OverviewResponse};
use super::graph_ops::{
    CallsResponse, DepsResponse, GraphStatsResponse, LookupStatus, RefsResponse, SymbolResponse,
};
use super::impact::ImpactResponse;
use super::index_status::IndexStatusResponse;
use super::page::PageInfo;
use super::repo_file::ReadSpanResponse;
use super::search::SearchResponse;
use super::workspace::ReindexResponse;
use crate::graph::{Reached, SymbolInfo};
use crate::index::Coverage;

/// An answer as a model reads it.
pub trait ModelText {
    /// The answer itself, without the footer.
    fn body(&self) -> String;
    /// What the footer says: the notes, the next page, what the index covered.
    fn footing(&self) -> Footing<'_>;
}

/// The footer's material.
#[derive(Debug, Clone, Copy, Default)]
pub struct Footing<'a> {
    pub notes: &'a [String],
    pub next_cursor: Option<&'a str>,
    pub coverage: Option<&'a Coverage>,
}

impl<'a> Footing<'a> {
    /// The footer of a paged answer.
    fn paged(notes: &'a [String], page: &'a PageInfo, coverage: &'a Coverage) -> Footing<'a> {
        Footing {
            notes,
            next_cursor: page.next_cursor.as_deref(),
            coverage: Some(coverage),
        }
    }
}

/// The answer `a`, written for a model.
pub fn render(a: &(impl ModelText + ?Sized)) -> String {
    a.body() + &footer(&a.footing(), Footer::Whole)
}

/// The answer `a` within `budget` tokens (cl100k) as a model reads it. The footer shrinks
/// before the answer does: first the coverage line's detail goes, then the notes are
/// shortened and the coverage cut to its generation, then the notes and the coverage, then
/// the next page's cursor. Only if the answer alone is still over the budget is it cut,
/// keeping its first (best) lines, with a short note that says so; a first line too long to
/// fit is cut at a word.
pub fn render_within(a: &(impl ModelText + ?Sized), budget: usize) -> String {
    use crate::context::count_tokens;
    let body = a.body();
    let footing = a.footing();
    for form in Footer::FORMS {
        let text = body.clone() + &footer(&footing, form);
        if count_tokens(&text) <= budget {
            return text;
        }
    }
    cut(&body, budget)
}

/// The indexed files an answer names (every `path` in its JSON, each once) and their size in
/// tokens, estimated as bytes / 4: what an agent would have read without the answer.
pub fn drawn_tokens(v: &Value, size_of: &dyn Fn(&str) -> Option<u64>) -> u64 {
    fn paths<'v>(v: &'v Value, out: &mut std::collections::BTreeSet<&'v str>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("path", Value::String(p)) => {
                            out.insert(p.as_str());
                        }
                        _ => paths(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| paths(x, out)),
            _ => {}
        }
    }
    let mut found = std::collections::BTreeSet::new();
    paths(v, &mut found);
    found.into_iter().filter_map(size_of).map(|bytes| bytes / 4).sum()
}

/// A score or confidence as the answer's JSON spells it (`0.9`, `1.0`).
fn number(x: f32) -> String {
    serde_json::to_string(&x).unwrap_or_default()
}

/// A field's name as the answer's JSON spells it (an enum's variant).
fn spelled<T: Serialize>(x: &T) -> String {
    serde_json::to_string(x)
        .map(|s| s.trim_matches('"').to_string())
        .unwrap_or_default()
}

impl ModelText for SearchResponse {
    /// Ranked files with the spans to read, then definitions, chunks or matching lines.
    fn body(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            let symbol = f.symbol.as_deref().unwrap_or("");
            if f.chunks.is_empty() {
                let line = match (&f.best, f.lines) {
                    (Some(b), _) => format!(":{}", b.line),
                    (None, Some((a, b))) => format!(":{a}-{b}"),
                    _ => String::new(),
                };
                out.push_str(&format!("{}{line}  {symbol}\n", f.path));
                continue;
            }
            for (i, c) in f.chunks.iter().enumerate() {
                let place = if i == 0 { f.path.as_str() } else { "  " };
                let symbol = c.symbol.as_deref().unwrap_or("");
                out.push_str(&format!("{place}:{}-{}  {symbol}\n", c.start_line, c.end_line));
            }
        }
        for h in &self.hits {
            let name = h.qualified_name.as_deref().unwrap_or("(file)");
            out.push_str(&format!("{}:{}-{}  {name}", h.path, h.line, h.end_line));
            if let Some(sig) = &h.signature {
                out.push_str(&format!("  {sig}"));
            }
            out.push('\n');
        }
        for c in &self.chunks {
            let symbol = c.symbol.as_deref().unwrap_or("");
            out.push_str(&format!("{}:{}-{}  {symbol}\n", c.path, c.start_line, c.end_line));
        }
        for m in &self.matches {
            out.push_str(&format!("{}:{}: {}\n", m.path, m.line, m.text));
        }
        out
    }

    fn footing(&self) -> Footing<'_> {
        Footing::paged(&self.notes, &self.page, &self.coverage)
    }
}

impl ModelText for CallsResponse {
    /// One line per definition reached, its place, and where it calls the target; for an
    /// ambiguous or unknown name, what it could mean.
    fn body(&self) -> String {
        let mut out = String::new();
        if self.status != LookupStatus::Ok {
            candidates(&self.query, self.status, &self.candidates, &mut out);
            return out;
        }
        for r in &self.reached {
            out.push_str(&reached_line(r));
        }
        if self.truncated {
            out.push_str("truncated: more lie deeper or past the budget\n");
        }
        out
    }

    fn footing(&self) -> Footing<'_> {
        Footing::paged(&[], &self.page, &self.coverage)
    }
}

/// `depth N  name  path:line-end  kind at :lines (confidence c)`.
fn reached_line(r: &Reached) -> String {
    let s = &r.symbol;
    let lines: Vec<String> = r.sites.iter().map(|x| x.line.to_string()).collect();
    let kind = r.sites.first().map_or("", |x| x.kind);
    let confidence = r
        .sites
        .first()
        .map_or("null".to_string(), |x| number(x.confidence));
    format!(
        "depth {}  {}  {}:{}-{}  {kind} at :{} (confidence {confidence})\n",
        r.depth,
        s.qualified,
        s.path,
        s.line,
        s.end_line,
        lines.join(",")
    )
}

impl ModelText for RefsResponse {
    /// One line per reference: its place, its kind and the definition it is in.
    fn body(&self) -> String {
        let mut out = String::new();
        if self.status != LookupStatus::Ok {
            candidates(&self.query, self.status, &self.candidates, &mut out);
            return out;
        }
        for r in &self.refs {
            let site = &r.site;
            out.push_str(&format!(
                "{}:{}  {} in {}  (confidence {})\n",
                site.path,
                site.line,
                site.kind,
                r.from.qualified,
                number(site.confidence)
            ));
        }
        out
    }

    fn footing(&self) -> Footing<'_> {
        Footing::paged(&self.notes, &self.page, &self.coverage)
    }
}

/// Candidates shown for an ambiguous name.
const CANDIDATES_SHOWN: usize = 10;

/// An ambiguous or unknown name: what it could mean, a line each.
fn candidates(query: &str, status: LookupStatus, all: &[SymbolInfo], out: &mut String) {
    match status {
        LookupStatus::Ambiguous => out.push_str(&format!(
            "{query} names {} definitions; ask again with one of these (qualified name or path:line):\n",
            all.len()
        )),
        _ => out.push_str(&format!("no definition named {query}\n")),
    }
    for c in all.iter().take(CANDIDATES_SHOWN) {
        out.push_str(&format!("  {} {}  {}:{}\n", c.kind, c.qualified, c.path, c.line));
    }
    if all.len() > CANDIDATES_SHOWN {
        out.push_str(&format!("  ... and {} more\n", all.len() - CANDIDATES_SHOWN));
    }
}

impl ModelText for SymbolResponse {
    /// Definitions: kind, qualified name and place, then the signature and the doc's first line.
    fn body(&self) -> String {
        let mut out = String::new();
        if self.hits.is_empty() {
            out.push_str(&format!("no definition matches {}\n", self.query));
        }
        for h in &self.hits {
            out.push_str(&format!(
                "{} {}  {}:{}-{}\n",
                h.kind.as_str(),
                h.qualified_name,
                h.path,
                h.line,
                h.end_line
            ));
            if !h.signature.is_empty() {
                out.push_str(&format!("  {}\n", h.signature));
            }
            if let Some(doc) = h
                .doc
                .as_deref()
                .and_then(|d| d.lines().find(|l| !l.trim().is_empty()))
            {
                out.push_str(&format!("  {}\n", doc.trim()));
            }
        }
        out
    }

    fn footing(&self) -> Footing<'_> {
        Footing::paged(&[], &self.page, &self.coverage)
    }
}

/// Ranked files named beyond those the pack shows or lists as left out.
const RANKED_BEYOND: usize = 5;

impl ModelText for ContextResponse {
    /// The pack, which heads each file it shows and names the ranked files it left out, after
    /// a line naming the next few ranked files beyond those.
    fn body(&self) -> String {
        let mut out = String::new();
        let pack = self.pack.text.as_str();
        let more: Vec<&str> = self
            .files
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| !pack.contains(p))
            .take(RANKED_BEYOND)
            .collect();
        if !more.is_empty() {
            out.push_str(&format!("also ranked: {}\n\n", more.join(", ")));
        }
        out.push_str(pack);
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out
    }

    fn footing(&self) -> Footing<'_> {
        Footing {
            notes: &self.notes,
            next_cursor: None,
            coverage: Some(&self.coverage),
        }
    }
}

impl ModelText for ImpactResponse {
    /// The risk, what changed, what it reaches, and the tests to run, a line each.
    fn body(&self) -> String {
        let i = &self.impact;
        let mut out = format!("risk {}: {}\n", i.risk.level, i.risk.reasons.join("; "));
        for c in &i.changed {
            out.push_str(&format!(
                "changed: {} ({}) {}:{}-{}\n",
                c.qualified_name,
                spelled(&c.change),
                c.path,
                c.start_line,
                c.end_line
            ));
        }
        out.push_str(&format!(
            "dependents: {} direct, {} transitive\n",
            i.direct_dependents, i.transitive_dependents
        ));
        for a in &i.affected {
            out.push_str(&format!(
                "  {} {}:{} depth {}\n",
                a.qualified_name, a.path, a.line, a.depth
            ));
        }
        let files: Vec<&str> = i.affected_files.iter().map(|f| f.path.as_str()).collect();
        let entries: Vec<&str> = i.entry_points.iter().map(|e| e.name.as_str()).collect();
        let tests: Vec<&str> = i
            .tests
            .iter()
            .map(|t| t.command.as_deref().unwrap_or(""))
            .collect();
        for (label, names) in [("files", files), ("entry points", entries), ("tests", tests)] {
            if !names.is_empty() {
                out.push_str(&format!("{label}: {}\n", names.join(", ")));
            }
        }
        if !i.public_api.is_empty() {
            out.push_str(&format!("public API: {}\n", i.public_api.join(", ")));
        }
        if !i.test_commands.is_empty() {
            out.push_str(&format!("run: {}\n", i.test_commands.join(" && ")));
        }
        out
    }

    fn footing(&self) -> Footing<'_> {
        Footing::paged(&self.notes, &self.page, &self.coverage)
    }
}

impl ModelText for ReadSpanResponse {
    /// `path:start-end`, then the lines.
    fn body(&self) -> String {
        let mut out = format!(
            "{}:{}-{}\n{}",
            self.path, self.start_line, self.end_line, self.text
        );
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out
    }

    fn footing(&self) -> Footing<'_> {
        Footing {
            coverage: Some(&self.coverage),
            ..Footing::default()
        }
    }
}

impl ModelText for OverviewResponse {
    fn body(&self) -> String {
        format!("{}\n", self.markdown)
    }

    fn footing(&self) -> Footing<'_> {
        Footing {
            notes: &self.notes,
            next_cursor: None,
            coverage: Some(&self.coverage),
        }
    }
}

/// Answers read as compact JSON: everything but the footer's fields, without what says
/// nothing (nulls, `false`, empty strings, lists and objects).
macro_rules! compact_json_text {
    ($($t:ty => |$s:ident| $footing:expr;)*) => {$(
        impl ModelText for $t {
            fn body(&self) -> String {
                compact_json(self)
            }

            fn footing(&self) -> Footing<'_> {
                let $s = self;
                $footing
            }
        }
    )*};
}

compact_json_text! {
    DepsResponse => |s| Footing::paged(&[], &s.page, &s.coverage);
    GraphStatsResponse => |s| Footing { coverage: Some(&s.coverage), ..Footing::default() };
    AskResponse => |s| Footing { notes: &s.notes, next_cursor: None, coverage: Some(&s.coverage) };
    IndexStatusResponse => |s| Footing { coverage: Some(&s.coverage), ..Footing::default() };
    ReindexResponse => |s| Footing { coverage: Some(&s.coverage), ..Footing::default() };
}

/// `answer` as one line of JSON without the footer's fields and what says nothing. Read from
/// its text form so that scores print as the JSON answer prints them.
fn compact_json<T: Serialize>(answer: &T) -> String {
    let mut lean: Value = match serde_json::to_string(answer).map(|t| serde_json::from_str(&t)) {
        Ok(Ok(v)) => v,
        _ => return "\n".to_string(),
    };
    if let Value::Object(m) = &mut lean {
        for k in ["coverage", "generation", "notes", "page"] {
            m.remove(k);
        }
    }
    prune(&mut lean);
    format!("{lean}\n")
}

/// The first lines of `body` that fit `budget` with a note that the answer was cut; when not
/// even the first line fits, as many of its words as do.
fn cut(body: &str, budget: usize) -> String {
    use crate::context::count_tokens;
    let note = format!("note: cut to fit max_tokens {budget}\n");
    let lines: Vec<&str> = body.lines().collect();
    let with_lines = |n: usize| lines[..n].iter().map(|l| format!("{l}\n")).collect::<String>() + &note;
    let fits = |text: &str| count_tokens(text) <= budget;
    let n = most(lines.len(), |n| fits(&with_lines(n)));
    if n > 0 {
        return with_lines(n);
    }
    let first = lines.first().copied().unwrap_or("");
    let words: Vec<&str> = first.split(' ').collect();
    let with_words = |n: usize| format!("{} …\n{note}", words[..n].join(" "));
    let n = most(words.len(), |n| fits(&with_words(n)));
    if n > 0 {
        return with_words(n);
    }
    // Not even the note fits: as much of it as does.
    let words: Vec<&str> = note.trim_end().split(' ').collect();
    let with_note_words = |n: usize| words[..n].join(" ") + "\n";
    with_note_words(most(words.len(), |n| fits(&with_note_words(n))))
}

/// The largest `n` in `0..=max` for which `fits(n)` holds, `fits` holding for every smaller
/// `n` too (by bisection: token counts grow with what is kept).
fn most(max: usize, fits: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, max);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        match fits(mid) {
            true => lo = mid,
            false => hi = mid - 1,
        }
    }
    lo
}

/// How much of the footer (notes, the next page, what the index covered) an answer carries,
/// from all of it to none: the order in which it shrinks to leave room for the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Footer {
    Whole,
    /// The coverage line without its languages and files not read.
    Counts,
    /// Each note to its first words, the coverage to its generation and size.
    Short,
    /// Only the next page's cursor.
    Cursor,
    Nothing,
}

impl Footer {
    const FORMS: [Footer; 5] = [
        Footer::Whole,
        Footer::Counts,
        Footer::Short,
        Footer::Cursor,
        Footer::Nothing,
    ];
}

/// Words a note keeps in the short footer.
const NOTE_WORDS: usize = 10;

/// Notes, the next page, and what the index covered, one line each, in `form`.
fn footer(f: &Footing<'_>, form: Footer) -> String {
    let mut out = String::new();
    for note in f.notes {
        match form {
            Footer::Whole | Footer::Counts => out.push_str(&format!("note: {note}\n")),
            Footer::Short => {
                let words: Vec<&str> = note.split_whitespace().collect();
                let more = if words.len() > NOTE_WORDS { " …" } else { "" };
                let first = words[..words.len().min(NOTE_WORDS)].join(" ");
                out.push_str(&format!("note: {first}{more}\n"));
            }
            Footer::Cursor | Footer::Nothing => {}
        }
    }
    if form != Footer::Nothing
        && let Some(c) = f.next_cursor
    {
        out.push_str(&format!("more: cursor \"{c}\"\n"));
    }
    if let Some(c) = f.coverage
        && matches!(form, Footer::Whole | Footer::Counts | Footer::Short)
    {
        out.push_str(&coverage(c, form));
        out.push('\n');
    }
    out
}

/// The coverage line: generation, files, staleness and damage; in the whole form also the
/// languages read and the most common files not read; in the short form the generation and
/// the files indexed (and those stale) alone.
fn coverage(c: &Coverage, form: Footer) -> String {
    let stale = c.stale.filter(|n| *n > 0);
    if form == Footer::Short {
        let mut line = format!("coverage: generation {}, {} files", c.generation, c.files_indexed);
        if let Some(stale) = stale {
            line.push_str(&format!(", {stale} stale"));
        }
        return line;
    }
    let mut line = format!(
        "coverage: generation {}, {} files indexed, {} skipped, {} with errors",
        c.generation, c.files_indexed, c.files_skipped, c.files_with_errors
    );
    if let Some(stale) = stale {
        line.push_str(&format!(", {stale} stale"));
    }
    if form == Footer::Whole {
        line.push_str(&languages(c));
    }
    if !c.not_built_yet.is_empty() {
        line.push_str(&format!("; not built yet: {}", c.not_built_yet.join(", ")));
    }
    if c.not_read_yet > 0 {
        line.push_str(&format!(
            "; {} files not read yet (the build goes on)",
            c.not_read_yet
        ));
    }
    match (form, c.damaged.is_empty()) {
        (_, true) => {}
        (Footer::Whole, false) => line.push_str(&format!(", damaged: {}", c.damaged.join("; "))),
        (_, false) => line.push_str(&format!(", {} damaged", c.damaged.len())),
    }
    line
}

/// The languages read, read as text, and the most common files not read, for the coverage line.
fn languages(c: &Coverage) -> String {
    let mut line = String::new();
    let listed = |m: &std::collections::BTreeMap<String, u64>| -> String {
        m.iter()
            .map(|(l, n)| format!("{l} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !c.languages.is_empty() {
        line.push_str(&format!("; read: {}", listed(&c.languages)));
    }
    if !c.read_as_text.is_empty() {
        line.push_str(&format!("; as text: {}", listed(&c.read_as_text)));
    }
    if !c.not_read.is_empty() {
        // The three most common, and what is left as one count.
        let mut v: Vec<(&String, u64)> = c.not_read.iter().map(|(k, n)| (k, *n)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let mut parts: Vec<String> = v
            .iter()
            .take(3)
            .map(|(k, n)| match k.as_str() {
                "" => format!("{n} without extension"),
                "other" => format!("{n} other"),
                k => format!("{n} .{k}"),
            })
            .collect();
        let rest: u64 = v.iter().skip(3).map(|(_, n)| n).sum();
        if rest > 0 {
            parts.push(format!("{rest} other"));
        }
        line.push_str(&format!("; not read: {}", parts.join(", ")));
    }
    line
}

/// Drops what says nothing: nulls, `false`, empty strings, lists and objects.
fn prune(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.values_mut().for_each(prune);
            m.retain(|_, x| !empty(x));
        }
        Value::Array(a) => a.iter_mut().for_each(prune),
        _ => {}
    }
}

fn empty(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::api::graph_ops::CallDirection;
    use crate::api::search::{ChunkSource, FileChunk, SearchFile, SearchMode};
    use crate::graph::{Provenance, Site};
    use crate::index::{MatchQuality, SymbolHit};
    use crate::symbols::SymbolKind;

    fn coverage(generation: u64, indexed: u64, skipped: u64, errors: u64) -> Coverage {
        Coverage {
            files_indexed: indexed,
            files_skipped: skipped,
            files_with_errors: errors,
            stale: None,
            generation,
            index_age_secs: 0,
            damaged: Vec::new(),
            languages: BTreeMap::new(),
            read_as_text: BTreeMap::new(),
            not_read: BTreeMap::new(),
            not_built_yet: Vec::new(),
            not_read_yet: 0,
        }
    }

    fn page(next_cursor: Option<&str>) -> PageInfo {
        PageInfo {
            total: 0,
            offset: 0,
            returned: 0,
            next_cursor: next_cursor.map(str::to_string),
            truncated_by_tokens: false,
        }
    }

    fn map(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
        pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect()
    }

    fn chunk(start_line: u32, end_line: u32, symbol: &str, by: ChunkSource) -> FileChunk {
        FileChunk {
            start_line,
            end_line,
            symbol: Some(symbol.to_string()),
            by,
        }
    }

    fn search(
        files: Vec<SearchFile>,
        notes: &[&str],
        cursor: Option<&str>,
        coverage: Coverage,
    ) -> SearchResponse {
        SearchResponse {
            query: "q".into(),
            mode: SearchMode::Hybrid,
            terms: Vec::new(),
            hits: Vec::new(),
            files,
            chunks: Vec::new(),
            matches: Vec::new(),
            files_searched: None,
            files_skipped_by_index: None,
            chunks_searched: None,
            rrf_k: None,
            ranker: None,
            page: page(cursor),
            notes: notes.iter().map(|n| n.to_string()).collect(),
            generation: coverage.generation,
            coverage,
        }
    }

    #[test]
    fn search_answers_read_as_spans_with_the_coverage_line() {
        let file = SearchFile {
            path: "a.py".into(),
            symbol: Some("a.f".into()),
            chunks: vec![
                chunk(3, 9, "a.f", ChunkSource::Lexical),
                chunk(20, 24, "a.g", ChunkSource::Semantic),
            ],
            ..SearchFile::default()
        };
        let mut c = coverage(4, 10, 1, 0);
        c.stale = Some(2);
        let text = render(&search(vec![file], &["cut"], Some("c2"), c));
        assert_eq!(
            text,
            "a.py:3-9  a.f\n  :20-24  a.g\nnote: cut\nmore: cursor \"c2\"\n\
             coverage: generation 4, 10 files indexed, 1 skipped, 0 with errors, 2 stale\n"
        );
    }

    #[test]
    fn the_coverage_line_names_languages_read_and_the_most_common_files_not_read() {
        let mut c = coverage(3, 25, 61, 0);
        c.languages = map(&[("kotlin", 20), ("bash", 5)]);
        c.read_as_text = map(&[("markdown", 4)]);
        c.not_read = map(&[("md", 30), ("yml", 12), ("", 9), ("png", 4), ("other", 6)]);
        let text = render(&search(Vec::new(), &[], None, c));
        assert_eq!(
            text,
            "coverage: generation 3, 25 files indexed, 61 skipped, 0 with errors; read: bash 5, kotlin 20; \
             as text: markdown 4; not read: 30 .md, 12 .yml, 9 without extension, 10 other\n"
        );
    }

    #[test]
    fn other_answers_are_compact_json_without_empty_fields() {
        #[derive(Serialize)]
        struct Other {
            symbol: &'static str,
            callers: Vec<u32>,
            status: &'static str,
            ambiguous: bool,
            n: u32,
            score: f32,
            generation: u64,
            notes: Vec<String>,
        }
        let v = Other {
            symbol: "x",
            callers: Vec::new(),
            status: "ok",
            ambiguous: false,
            n: 0,
            score: 0.9,
            generation: 3,
            notes: vec!["said in the footer".into()],
        };
        // Scores print as the JSON answer prints them, not widened to f64.
        assert_eq!(
            compact_json(&v),
            "{\"n\":0,\"score\":0.9,\"status\":\"ok\",\"symbol\":\"x\"}\n"
        );
    }

    #[test]
    fn the_files_an_answer_draws_from_are_counted_once() {
        let v = serde_json::json!({"files": [{"path": "a.py", "chunks": []}, {"path": "b.py"}],
                       "hits": [{"path": "a.py"}], "pack": {"shown": [{"path": "c.py"}]}});
        let size = |p: &str| match p {
            "a.py" => Some(400),
            "b.py" => Some(40),
            _ => None,
        };
        assert_eq!(drawn_tokens(&v, &size), 110);
    }

    fn info(kind: &str, qualified: &str, path: &str, line: u32, end_line: u32) -> SymbolInfo {
        SymbolInfo {
            name: qualified.rsplit('.').next().unwrap_or(qualified).to_string(),
            qualified: qualified.into(),
            kind: kind.into(),
            path: path.into(),
            line,
            end_line,
            rank: 0.0,
        }
    }

    fn calls(status: LookupStatus, reached: Vec<Reached>, candidates: Vec<SymbolInfo>) -> CallsResponse {
        CallsResponse {
            query: "f".into(),
            status,
            direction: CallDirection::Callers,
            depth: 1,
            target: None,
            reached,
            candidates,
            truncated: false,
            page: page(None),
            generation: 1,
            coverage: coverage(1, 1, 0, 0),
        }
    }

    #[test]
    fn callers_read_as_one_line_per_definition_reached() {
        let site = |line: u32| Site {
            path: "m.py".into(),
            line,
            kind: "calls",
            provenance: Provenance::Import,
            confidence: 0.9,
            candidates: 1,
        };
        let reached = Reached {
            symbol: info("method", "m.C.f", "m.py", 3, 9),
            depth: 1,
            via: None,
            sites: vec![site(5), site(7)],
            confidence: 0.9,
        };
        let a = calls(LookupStatus::Ok, vec![reached], Vec::new());
        assert_eq!(
            a.body(),
            "depth 1  m.C.f  m.py:3-9  calls at :5,7 (confidence 0.9)\n"
        );
        // An ambiguous name lists what it could mean, a line each.
        let a = calls(
            LookupStatus::Ambiguous,
            Vec::new(),
            vec![
                info("function", "a.f", "a.py", 1, 2),
                info("method", "b.C.f", "b.py", 7, 9),
            ],
        );
        assert_eq!(
            a.body(),
            "f names 2 definitions; ask again with one of these (qualified name or path:line):\n  function a.f  a.py:1\n  method b.C.f  b.py:7\n"
        );
    }

    #[test]
    fn definitions_read_as_place_signature_and_doc() {
        let hit = SymbolHit {
            kind: SymbolKind::Class,
            name: "Cart".into(),
            qualified_name: "shop.cart.Cart".into(),
            path: "shop/cart.py".into(),
            line: 4,
            end_line: 20,
            language: "python".into(),
            signature: "class Cart:".into(),
            doc: Some("\nA shopping cart.\nMore.".into()),
            quality: MatchQuality::Exact,
        };
        let a = SymbolResponse {
            query: "Cart".into(),
            hits: vec![hit],
            page: page(None),
            generation: 1,
            coverage: coverage(1, 1, 0, 0),
        };
        assert_eq!(
            a.body(),
            "class shop.cart.Cart  shop/cart.py:4-20\n  class Cart:\n  A shopping cart.\n"
        );
    }

    fn tokens(text: &str) -> usize {
        crate::context::count_tokens(text)
    }

    /// A search answer of `files` files, with two notes, a next page and a full coverage.
    fn search_answer(files: usize) -> SearchResponse {
        let files: Vec<SearchFile> = (0..files)
            .map(|i| SearchFile {
                path: format!("src/module_{i}.py"),
                symbol: Some(format!("m{i}.f")),
                chunks: vec![chunk(3, 9, &format!("m{i}.f"), ChunkSource::Lexical)],
                ..SearchFile::default()
            })
            .collect();
        let mut c = coverage(12, 4000, 310, 2);
        c.languages = map(&[("python", 3000), ("rust", 600), ("typescript", 400)]);
        c.read_as_text = map(&[("markdown", 120), ("toml", 40)]);
        c.not_read = map(&[("json", 200), ("png", 90), ("lock", 10), ("", 5), ("other", 5)]);
        search(
            files,
            &[
                "the semantic index is not built yet: these results are lexical only, ranked by BM25",
                "a document answers this better than any code: README.md:1-40",
            ],
            Some("p3"),
            c,
        )
    }

    #[test]
    fn within_its_budget_an_answer_is_the_whole_rendering() {
        let a = search_answer(3);
        assert_eq!(render_within(&a, 100_000), render(&a));
    }

    #[test]
    fn a_small_budget_shrinks_the_footer_before_the_answer() {
        let a = search_answer(3);
        let whole = render(&a);
        let body_lines = 3;
        let mut seen = Vec::new();
        for budget in (50..tokens(&whole)).step_by(5) {
            let text = render_within(&a, budget);
            assert!(tokens(&text) <= budget, "{budget}: {text}");
            let kept = text.lines().filter(|l| l.starts_with("src/module_")).count();
            // Every line of the answer stays while any of the footer does.
            if text.contains("coverage: ") || text.contains("more: ") || text.contains("note: the") {
                assert_eq!(kept, body_lines, "{budget}: {text}");
            }
            seen.push(text);
        }
        // The footer's forms all show up on the way down, the smallest keeping the cursor.
        assert!(
            seen.iter()
                .any(|t| t.contains("files indexed, 310 skipped, 2 with errors\n"))
        );
        assert!(
            seen.iter()
                .any(|t| t.contains("coverage: generation 12, 4000 files\n"))
        );
        assert!(
            seen.iter()
                .any(|t| t.contains("note: the semantic index is not built yet: these results are …\n"))
        );
        assert!(
            seen.iter()
                .any(|t| t.ends_with("src/module_2.py:3-9  m2.f\nmore: cursor \"p3\"\n"))
        );
    }

    #[test]
    fn an_answer_over_its_budget_keeps_its_first_lines_and_says_it_was_cut() {
        let a = search_answer(200);
        for budget in [50, 60, 100, 120, 400] {
            let text = render_within(&a, budget);
            assert!(tokens(&text) <= budget, "{budget}: {text}");
            assert!(
                text.starts_with("src/module_0.py:3-9  m0.f\nsrc/module_1.py:3-9  m1.f\n"),
                "{text}"
            );
            assert!(
                text.ends_with(&format!("\nnote: cut to fit max_tokens {budget}\n")),
                "{text}"
            );
        }
    }

    #[test]
    fn a_first_line_too_long_for_the_budget_is_cut_at_a_word() {
        let long: String = (0..200).map(|i| format!("word{i} ")).collect();
        let span = ReadSpanResponse {
            path: "a.txt".into(),
            start_line: 1,
            end_line: 1,
            total_lines: 1,
            text: long.clone(),
            truncated: false,
            indexed: true,
            changed_since_index: false,
            generation: 1,
            coverage: coverage(1, 1, 0, 0),
        };
        let text = render_within(&span, 60);
        assert!(tokens(&text) <= 60, "{text}");
        assert!(text.starts_with("a.txt:1-1\n"), "{text}");
        let text = cut(&long, 60);
        assert!(tokens(&text) <= 60, "{text}");
        assert!(text.starts_with("word0 word1 word2 "), "{text}");
        assert!(text.ends_with(" …\nnote: cut to fit max_tokens 60\n"), "{text}");
        assert!(tokens(&cut(&long, 3)) <= 3);
    }
}
