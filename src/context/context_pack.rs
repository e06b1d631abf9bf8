//! `ContextPack`: a ranking packed into a token budget, as text a person or a model reads.
//!
//! Order of filling: the ranked definitions, best first, with diversity (each further
//! definition from a file already shown counts for less), each shown whole when it fits —
//! a large one shows its head and tail with the middle marked as elided, a large type its
//! member signatures; then the neighbours of what was shown, as signatures only (resolved
//! callees, the type a method belongs to and its fields); then what was left out, named.
//! Tokens are counted with tiktoken's cl100k_base.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::Serialize;

use crate::graph::{CodeGraph, FileSkeleton, SymbolId};
use crate::index::{IndexError, IndexSnapshot};
use crate::search::{RankedSymbol, Ranking};
use crate::symbols::{FileSymbols, SymbolKind};

/// Share of the budget one definition may take before it is shown head and tail only.
const MAX_SHARE: f32 = 0.4;
/// Above this many bytes per allowed token a text cannot fit (code runs 3-4 bytes a token).
const MAX_BYTES_PER_TOKEN: usize = 8;
/// Lines kept at the end of an elided definition.
const TAIL_LINES: usize = 6;
/// Diversity: each definition already shown from a file multiplies the next one's score.
const SAME_FILE_DECAY: f32 = 0.6;
/// Neighbour signatures listed per shown definition.
const NEIGHBOURS_PER_SYMBOL: usize = 6;
/// Ranked files named in "left out".
const MAX_LEFT_OUT: usize = 15;
/// Tokens kept back for the closing "left out" note.
const NOTE_RESERVE: usize = 200;
/// Share of the rest kept for neighbour signatures (code may not take it).
const NEIGHBOUR_SHARE: f32 = 0.1;

/// Tokens of `text` as cl100k_base counts them (the `bpe` crate's encoder: the same counts
/// as tiktoken, tested below, built from a serialized table in a third of tiktoken's start-up
/// time and counting about 5x faster).
pub fn count_tokens(text: &str) -> usize {
    bpe_openai::cl100k_base().count(text)
}

/// Loads the token counter, so that a thread can do it while another ranks.
pub fn warm_token_counter() {
    let _ = bpe_openai::cl100k_base();
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Shown {
    pub path: String,
    pub qualified_name: String,
    pub start_line: u32,
    pub end_line: u32,
    /// `whole`, `head-and-tail` (middle elided) or `members` (a type's signatures).
    pub form: &'static str,
    pub tokens: usize,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Neighbour {
    pub path: String,
    pub line: u32,
    pub signature: String,
    /// `callee of X`, `type of X`, `field of T`.
    pub relation: String,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct LeftOut {
    /// Ranked definitions not shown (over budget or below the cut).
    pub symbols: usize,
    /// Ranked files none of whose code is shown, best first (at most 15).
    pub files: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct ContextPack {
    pub budget: usize,
    pub tokens: usize,
    /// Something ranked did not fit.
    pub truncated: bool,
    pub shown: Vec<Shown>,
    pub neighbours: Vec<Neighbour>,
    pub left_out: LeftOut,
    /// The packed code, markdown.
    pub text: String,
}

/// Reads and caches files of the working tree and their index records.
struct Sources<'a> {
    root: &'a Path,
    snapshot: &'a IndexSnapshot,
    text: HashMap<String, Option<(Vec<String>, bool)>>,
    records: HashMap<String, Option<FileSymbols>>,
}

impl Sources<'_> {
    /// The file's lines and whether it changed since it was indexed.
    fn lines(&mut self, path: &str) -> Option<&(Vec<String>, bool)> {
        if !self.text.contains_key(path) {
            let abs = self.root.join(path);
            // Indexed paths only; one that became a symbolic link is not followed.
            let loaded = crate::util::read_no_follow(&abs).ok().map(|bytes| {
                let stale = self
                    .snapshot
                    .file_id(path)
                    .and_then(|id| self.snapshot.table.files.get(id.index()))
                    .is_some_and(|r| *blake3::hash(&bytes).as_bytes() != r.hash);
                let text = String::from_utf8_lossy(&bytes);
                (text.lines().map(str::to_string).collect(), stale)
            });
            self.text.insert(path.to_string(), loaded);
        }
        self.text.get(path).and_then(Option::as_ref)
    }

    fn record(&mut self, path: &str) -> Result<Option<&FileSymbols>, IndexError> {
        if !self.records.contains_key(path) {
            let r = match self.snapshot.file_id(path) {
                Some(id) => self.snapshot.load_symbols_of(&[id])?.into_iter().next(),
                None => None,
            };
            self.records.insert(path.to_string(), r);
        }
        Ok(self.records.get(path).and_then(Option::as_ref))
    }
}

fn fence_lang(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "py" | "pyi" => "python",
        "rs" => "rust",
        "ts" | "tsx" => "typescript",
        "js" | "jsx" | "mjs" | "cjs" => "javascript",
        "go" => "go",
        "java" => "java",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        _ => "",
    }
}

fn is_type(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Class
            | SymbolKind::Struct
            | SymbolKind::Enum
            | SymbolKind::Trait
            | SymbolKind::Interface
            | SymbolKind::Impl
            | SymbolKind::Module
    )
}

/// Packs `ranking` into `budget` tokens.
pub fn pack(
    ranking: &Ranking,
    snapshot: &IndexSnapshot,
    root: &Path,
    graph: Option<&CodeGraph>,
    budget: usize,
) -> Result<ContextPack, IndexError> {
    let mut packer = Packer::new(snapshot, root, budget);
    packer.add_definitions(ranking)?;
    if let Some(g) = graph {
        packer.add_neighbours(ranking, g)?;
    }
    let left_out = packer.left_out(ranking);
    packer.add_left_out_note(&left_out);
    Ok(packer.finish(left_out))
}

/// A neighbour found in the graph, before its signature is looked up: path, line, relation.
type Candidate = (String, u32, String);

/// The pack being filled: the text so far, what it shows and the tokens it spent.
struct Packer<'a> {
    src: Sources<'a>,
    budget: usize,
    /// Tokens kept back for the closing note.
    reserve: usize,
    /// The budget less the reserve: code and neighbours together.
    budget_all: usize,
    /// What code may take: `budget_all` less the neighbours' share.
    budget_code: usize,
    /// Tokens one definition may take before it is shown head and tail only.
    max_one: usize,
    used: usize,
    text: String,
    truncated: bool,
    /// Ranked definitions not shown.
    skipped: usize,
    shown: Vec<Shown>,
    shown_spans: Vec<(&'a str, u32, u32)>,
    per_file: HashMap<&'a str, usize>,
    neighbours: Vec<Neighbour>,
}

impl<'a> Packer<'a> {
    fn new(snapshot: &'a IndexSnapshot, root: &'a Path, budget: usize) -> Self {
        // The closing note is written last; its room is kept from the start.
        let reserve = NOTE_RESERVE.min(budget / 4);
        let budget_all = budget - reserve;
        let budget_code = budget_all - ((budget_all as f32) * NEIGHBOUR_SHARE) as usize;
        Packer {
            src: Sources {
                root,
                snapshot,
                text: HashMap::new(),
                records: HashMap::new(),
            },
            budget,
            reserve,
            budget_all,
            budget_code,
            max_one: ((budget as f32) * MAX_SHARE) as usize,
            used: 0,
            text: String::new(),
            truncated: false,
            skipped: 0,
            shown: Vec::new(),
            shown_spans: Vec::new(),
            per_file: HashMap::new(),
            neighbours: Vec::new(),
        }
    }

    /// The ranked definitions, best first after the diversity discount, while code fits.
    fn add_definitions(&mut self, ranking: &'a Ranking) -> Result<(), IndexError> {
        let mut remaining: Vec<&RankedSymbol> = ranking.symbols.iter().collect();
        while !remaining.is_empty() {
            let s = remaining.remove(self.best_remaining(&remaining));
            self.add_definition(s)?;
        }
        Ok(())
    }

    /// Where in `remaining` the best score is once each file's shown definitions discount it.
    fn best_remaining(&self, remaining: &[&RankedSymbol]) -> usize {
        let (at, _) = remaining
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let n = self.per_file.get(s.path.as_str()).copied().unwrap_or(0);
                (i, s.score * SAME_FILE_DECAY.powi(n as i32))
            })
            .fold((0, f32::MIN), |best, x| if x.1 > best.1 { x } else { best });
        at
    }

    /// Shows `s` when it adds something and fits; counts it as left out otherwise.
    fn add_definition(&mut self, s: &'a RankedSymbol) -> Result<(), IndexError> {
        // Inside something already shown: nothing to add.
        if self
            .shown_spans
            .iter()
            .any(|(p, a, b)| *p == s.path && *a <= s.start_line && s.end_line <= *b)
        {
            return Ok(());
        }
        let Some((section, form)) = self.section(s)? else {
            self.skipped += 1;
            return Ok(());
        };
        let tokens = count_tokens(&section);
        if self.used + tokens > self.budget_code {
            self.truncated = true;
            self.skipped += 1;
            return Ok(());
        }
        self.used += tokens;
        self.text.push_str(&section);
        *self.per_file.entry(s.path.as_str()).or_default() += 1;
        self.shown_spans.push((s.path.as_str(), s.start_line, s.end_line));
        self.shown.push(Shown {
            path: s.path.clone(),
            qualified_name: s.qualified_name.clone(),
            start_line: s.start_line,
            end_line: s.end_line,
            form,
            tokens,
        });
        Ok(())
    }

    /// The definition's section (header and fenced code) and its form; `None` when its file
    /// cannot be read or its text cannot be shown.
    fn section(&mut self, s: &RankedSymbol) -> Result<Option<(String, &'static str)>, IndexError> {
        let Some((lines, stale)) = self.src.lines(&s.path).cloned() else {
            return Ok(None);
        };
        let members = match is_type(s.kind) {
            true => self.src.record(&s.path)?.map(|r| member_signatures(r, s)),
            false => None,
        };
        // A type some of whose members are shown already: its outline, not its text again.
        let outline = self
            .shown_spans
            .iter()
            .any(|(p, a, b)| *p == s.path && s.start_line <= *a && *b <= s.end_line);
        let outline = outline && members.as_ref().is_some_and(|m| !m.is_empty());
        let Some((body, form)) = render(s, &lines, members.as_deref(), self.max_one, outline) else {
            return Ok(None);
        };
        let section = format!(
            "{}```{}\n{body}```\n\n",
            section_header(s, stale),
            fence_lang(&s.path)
        );
        Ok(Some((section, form)))
    }

    /// Signatures of what the shown definitions call and belong to, while the budget lasts.
    fn add_neighbours(&mut self, ranking: &Ranking, g: &CodeGraph) -> Result<(), IndexError> {
        let mut listed: HashSet<(String, u32)> = self
            .shown
            .iter()
            .map(|s| (s.path.clone(), s.start_line))
            .collect();
        let mut lines_out = String::new();
        let shown: Vec<&RankedSymbol> = ranking
            .symbols
            .iter()
            .filter(|s| {
                self.shown_spans
                    .iter()
                    .any(|(p, a, _)| *p == s.path && *a == s.start_line)
            })
            .collect();
        for s in shown {
            let found = neighbour_candidates(g, s);
            if !self.list_neighbours(found, &mut listed, &mut lines_out)? {
                break;
            }
        }
        if !lines_out.is_empty() {
            self.text.push_str("### Neighbours (signatures)\n");
            self.text.push_str(&lines_out);
            self.text.push('\n');
        }
        Ok(())
    }

    /// Lists up to `NEIGHBOURS_PER_SYMBOL` of one definition's neighbours not listed yet;
    /// false once the budget is spent.
    fn list_neighbours(
        &mut self,
        found: Vec<Candidate>,
        listed: &mut HashSet<(String, u32)>,
        lines_out: &mut String,
    ) -> Result<bool, IndexError> {
        let mut n = 0;
        for (path, line, relation) in found {
            if n >= NEIGHBOURS_PER_SYMBOL {
                break;
            }
            if !listed.insert((path.clone(), line)) {
                continue;
            }
            let Some(sig) = self.signature_at(&path, line)? else {
                continue;
            };
            let entry = format!("- `{path}:{line}` `{sig}` ({relation})\n");
            let tokens = count_tokens(&entry);
            if self.used + tokens > self.budget_all {
                self.truncated = true;
                return Ok(false);
            }
            self.used += tokens;
            lines_out.push_str(&entry);
            n += 1;
            self.neighbours.push(Neighbour {
                path,
                line,
                signature: sig,
                relation,
            });
        }
        Ok(true)
    }

    /// The signature of the definition starting on `line` of `path`, from the index.
    fn signature_at(&mut self, path: &str, line: u32) -> Result<Option<String>, IndexError> {
        Ok(self.src.record(path)?.and_then(|r| {
            r.definitions
                .iter()
                .find(|d| d.span.start_line == line)
                .map(|d| d.signature.clone())
        }))
    }

    /// The count of definitions not shown and the best ranked files none of whose code is.
    fn left_out(&self, ranking: &Ranking) -> LeftOut {
        let shown_files: HashSet<&str> = self.shown.iter().map(|s| s.path.as_str()).collect();
        let files = ranking
            .files
            .iter()
            .filter(|f| !shown_files.contains(f.path.as_str()))
            .take(MAX_LEFT_OUT)
            .map(|f| f.path.clone())
            .collect();
        LeftOut {
            symbols: self.skipped,
            files,
        }
    }

    /// The closing "left out" note, cut to the reserve.
    fn add_left_out_note(&mut self, left_out: &LeftOut) {
        if left_out.symbols == 0 && left_out.files.is_empty() {
            return;
        }
        let mut note = format!(
            "### Left out\n{} ranked definitions did not fit",
            left_out.symbols
        );
        if !left_out.files.is_empty() {
            note.push_str("; files ranked but not shown: ");
            note.push_str(&left_out.files.join(", "));
        }
        note.push('\n');
        cut_note(&mut note, self.reserve);
        self.text.push_str(&note);
    }

    fn finish(self, left_out: LeftOut) -> ContextPack {
        // Pieces were counted one by one; the whole is what a reader pays.
        let tokens = count_tokens(&self.text);
        ContextPack {
            budget: self.budget,
            tokens,
            truncated: self.truncated,
            shown: self.shown,
            neighbours: self.neighbours,
            left_out,
            text: self.text,
        }
    }
}

/// A section's header line: where the definition is, its name, and a warning when its file
/// changed since it was indexed.
fn section_header(s: &RankedSymbol, stale: bool) -> String {
    format!(
        "### {}:{}-{} · {}{}\n",
        s.path,
        s.start_line,
        s.end_line,
        s.qualified_name,
        if stale {
            " (changed since indexed: lines may be off)"
        } else {
            ""
        }
    )
}

/// Cuts `note` to `reserve` tokens, dropping whole file names from its end.
fn cut_note(note: &mut String, reserve: usize) {
    while count_tokens(note) > reserve && note.contains(", ") {
        if let Some(cut) = note.rfind(", ") {
            note.truncate(cut);
            note.push_str(", ...\n");
        }
        if note.ends_with(", ...\n") && count_tokens(note) > reserve {
            note.truncate(note.len() - ", ...\n".len());
        }
    }
}

/// The owning type, its fields and the resolved callees of `s`, in that order.
fn neighbour_candidates(g: &CodeGraph, s: &RankedSymbol) -> Vec<Candidate> {
    let mut found = Vec::new();
    let Some(id) = s.id else { return found };
    let Some(file) = g.files.get(id.file.index()) else {
        return found;
    };
    owner_and_fields(file, g.defs(id.file.index()), id, s, &mut found);
    resolved_callees(g, id, s, &mut found);
    found
}

/// The type `id` belongs to and that type's fields (`defs`: the file's definitions).
fn owner_and_fields(
    file: &FileSkeleton,
    defs: &[crate::graph::DefNode],
    id: SymbolId,
    s: &RankedSymbol,
    found: &mut Vec<Candidate>,
) {
    let Some(parent) = defs.get(id.def as usize).and_then(|d| d.parent) else {
        return;
    };
    let Some(p) = defs.get(parent as usize).filter(|p| is_type(p.kind)) else {
        return;
    };
    found.push((file.path.to_string(), p.line, format!("type of {}", s.local_name)));
    for d in defs
        .iter()
        .filter(|d| d.parent == Some(parent) && matches!(d.kind, SymbolKind::Field))
    {
        found.push((file.path.to_string(), d.line, format!("field of {}", p.name)));
    }
}

/// What `id` calls, resolved to one target (not names that merely matched: those are often
/// noise).
fn resolved_callees(g: &CodeGraph, id: SymbolId, s: &RankedSymbol, found: &mut Vec<Candidate>) {
    let Some((refs, res)) = g.file_body(id.file.index()) else {
        return;
    };
    for (r, rn) in res.refs.iter().zip(refs.iter()) {
        let by_name = r.provenance.is_some_and(|p| !p.is_resolved());
        if rn.enclosing != Some(id.def) || r.targets.len() != 1 || by_name {
            continue;
        }
        let Some(t) = r.targets.first() else { continue };
        let Some(tf) = g.files.get(t.file.index()) else {
            continue;
        };
        let Some(td) = g.def(*t) else {
            continue;
        };
        found.push((
            tf.path.to_string(),
            td.line,
            format!("called by {}", s.local_name),
        ));
    }
}

/// A type's header line and its members' signatures, indented by nesting.
fn member_signatures(record: &FileSymbols, s: &RankedSymbol) -> Vec<(u32, String)> {
    record
        .definitions
        .iter()
        .filter(|d| s.start_line < d.span.start_line && d.span.end_line <= s.end_line)
        .map(|d| (d.span.start_line, d.signature.clone()))
        .collect()
}

/// The definition's text: whole, head and tail, or a type's members.
fn render(
    s: &RankedSymbol,
    lines: &[String],
    members: Option<&[(u32, String)]>,
    max_tokens: usize,
    outline: bool,
) -> Option<(String, &'static str)> {
    let start = (s.start_line as usize).checked_sub(1)?;
    let end = (s.end_line as usize).min(lines.len());
    if start >= end {
        return None;
    }
    let body: Vec<&str> = lines[start..end].iter().map(String::as_str).collect();
    let whole = body.join("\n") + "\n";
    // No tokenizer needs to see a text too long to fit at any plausible bytes per token.
    if !outline && whole.len() <= max_tokens * MAX_BYTES_PER_TOKEN && count_tokens(&whole) <= max_tokens {
        return Some((whole, "whole"));
    }
    if let Some(members) = members.filter(|m| !m.is_empty()) {
        let indent: String = body
            .get(1)
            .map(|l| l.chars().take_while(|c| c.is_whitespace()).collect())
            .unwrap_or_else(|| "    ".into());
        let mut out = format!("{}\n", body.first().copied().unwrap_or(""));
        let mut used = count_tokens(&out);
        for (line, sig) in members {
            let entry = format!("{indent}{sig}  # line {line}, body elided\n");
            let t = count_tokens(&entry);
            if used + t > max_tokens {
                out.push_str(&format!("{indent}⋮ more members elided\n"));
                break;
            }
            used += t;
            out.push_str(&entry);
        }
        return Some((out, "members"));
    }
    // Head and tail: as many head lines as fit, the last few lines, the middle marked.
    let tail_from = body.len().saturating_sub(TAIL_LINES);
    let tail = body[tail_from..].join("\n") + "\n";
    let mut budget = max_tokens.saturating_sub(count_tokens(&tail) + 16);
    let mut head = String::new();
    let mut shown = 0;
    for l in &body[..tail_from] {
        let t = count_tokens(l) + 1;
        if t > budget {
            break;
        }
        budget -= t;
        head.push_str(l);
        head.push('\n');
        shown += 1;
    }
    if shown == 0 {
        return None;
    }
    let elided = tail_from - shown;
    Some((
        format!(
            "{head}    ⋮ {elided} lines elided (lines {}-{})\n{tail}",
            s.start_line as usize + shown,
            s.start_line as usize + shown + elided - 1
        ),
        "head-and-tail",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The budget contract is cl100k as tiktoken counts it: the faster counter must agree on
    /// code, prose, JSON, whitespace runs, digits and text outside ASCII, line by line and whole.
    #[test]
    fn token_counts_equal_tiktoken() {
        let tiktoken = tiktoken_rs::cl100k_base_singleton();
        let texts = [
            include_str!("context_pack.rs"),
            include_str!("../graph/resolver.rs"),
            include_str!("../../README.md"),
            include_str!("../../grammars/python/tags.scm"),
            "",
            "   \n\n\t\t  x  \r\n",
            "1234567890 3.14159 0xDEADBEEF 1_000_000",
            "{\"path\":\"src/a.py\",\"tokens\":12,\"why\":[\"lexical #1\"]}",
            "Grüße, 世界! Ünïcödé — emoji 🎉 and ’quotes’ I'm you're",
        ];
        for text in texts {
            assert_eq!(
                count_tokens(text),
                tiktoken.encode_ordinary(text).len(),
                "{:.60}",
                text
            );
            for line in text.split_inclusive('\n') {
                assert_eq!(
                    count_tokens(line),
                    tiktoken.encode_ordinary(line).len(),
                    "{line:?}"
                );
            }
        }
    }
}
