//! `SymbolLookup`: find definitions by name or qualified name — exact, then
//! case-insensitive, then prefix — the first tier with hits wins.

use serde::Serialize;

use super::{IndexError, IndexSnapshot};
use crate::lang::LanguageRegistry;
use crate::symbols::{Definition, FileId, FileSymbols, SymbolKind};
use crate::symbols::{NAME_SEPARATORS, last_part, with_separator};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MatchQuality {
    Exact,
    CaseInsensitive,
    Prefix,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SymbolHit {
    pub kind: SymbolKind,
    pub name: String,
    pub qualified_name: String,
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    pub language: String,
    pub signature: String,
    pub doc: Option<String>,
    pub quality: MatchQuality,
}

pub struct SymbolLookup<'s> {
    snapshot: &'s IndexSnapshot,
}

impl<'s> SymbolLookup<'s> {
    pub fn new(snapshot: &'s IndexSnapshot) -> Result<Self, IndexError> {
        Ok(SymbolLookup { snapshot })
    }

    /// The files that can hold a match: those the lexical index says define a name with the
    /// query's last segment as prefix. `None` (all files) without a lexical part.
    fn candidates(&self, q_lower: &str) -> Result<Option<Vec<FileId>>, IndexError> {
        let Ok(lexical) = self.snapshot.lexical() else {
            return Ok(None);
        };
        let last = last_part(q_lower);
        let last = last.as_str();
        if last.is_empty() {
            return Ok(None);
        }
        let paths = lexical.files_defining(last)?;
        let mut ids: Vec<FileId> = paths.iter().filter_map(|p| self.snapshot.file_id(p)).collect();
        ids.sort();
        ids.dedup();
        Ok(Some(ids))
    }

    /// Definitions matching `query`, best tier only, sorted by kind weight then location.
    ///
    /// Exact and case-insensitive matches always end in the query's last segment, so the
    /// candidate files hold all of them; a prefix of a qualified name may not, so a qualified
    /// query without an exact or case-insensitive hit falls back to every file. (Known gap: a
    /// prefix hit through a container defined in another file, such as a Go method of a type
    /// declared elsewhere, is found only by the scan.)
    pub fn find(&self, query: &str) -> Result<Vec<SymbolHit>, IndexError> {
        let q_lower = query.trim().to_lowercase();
        if let Some(ids) = self.candidates(&q_lower)? {
            let symbols = self.snapshot.load_symbols_of(&ids)?;
            let hits = self.find_in(query, &ids, &symbols)?;
            // Only a qualified prefix can match outside the candidates.
            let qualified = q_lower.contains(NAME_SEPARATORS);
            if !qualified || hits.first().is_some_and(|h| h.quality != MatchQuality::Prefix) {
                return Ok(hits);
            }
        }
        self.find_by_scan(query)
    }

    /// The same answer as [`SymbolLookup::find`], from every file's symbols (the fallback, and
    /// the oracle the narrowed lookup is tested against).
    pub fn find_by_scan(&self, query: &str) -> Result<Vec<SymbolHit>, IndexError> {
        let ids: Vec<FileId> = (0..self.snapshot.table.files.len() as u32).map(FileId).collect();
        self.find_in(query, &ids, &self.snapshot.load_symbols()?)
    }

    fn find_in(
        &self,
        query: &str,
        ids: &[FileId],
        symbols: &[FileSymbols],
    ) -> Result<Vec<SymbolHit>, IndexError> {
        let registry = LanguageRegistry::builtin()?;
        let q = query.trim();
        let q_lower = q.to_lowercase();
        let mut tiers: [Vec<SymbolHit>; 3] = Default::default();
        for (id, syms) in ids.iter().zip(symbols) {
            let Some(record) = self.snapshot.table.files.get(id.index()) else {
                continue;
            };
            let sep = registry
                .by_name(&record.language)
                .map(|l| l.separator.as_str())
                .unwrap_or(".");
            for d in &syms.definitions {
                let qualified = d.qualified_name(&record.module, sep);
                let Some(quality) = classify(q, &q_lower, d, &qualified, sep) else {
                    continue;
                };
                tiers[quality as usize].push(SymbolHit {
                    kind: d.kind,
                    name: d.name.clone(),
                    qualified_name: qualified,
                    path: record.path.to_string(),
                    line: d.span.start_line,
                    end_line: d.span.end_line,
                    language: record.language.clone(),
                    signature: d.signature.clone(),
                    doc: d.doc.as_ref().and_then(|x| x.lines().next()).map(str::to_string),
                    quality,
                });
            }
        }
        let mut hits = tiers.into_iter().find(|t| !t.is_empty()).unwrap_or_default();
        hits.sort_by(|a, b| (kind_rank(a.kind), &a.path, a.line).cmp(&(kind_rank(b.kind), &b.path, b.line)));
        Ok(hits)
    }
}

fn classify(q: &str, q_lower: &str, d: &Definition, qualified: &str, sep: &str) -> Option<MatchQuality> {
    let local = d.local_name(sep);
    // PHP's module is its namespace as written (`Slim\Exception`): compared with one separator.
    let qualified = match qualified.contains('\\') {
        true => std::borrow::Cow::Owned(with_separator(qualified, sep)),
        false => std::borrow::Cow::Borrowed(qualified),
    };
    let qualified = qualified.as_ref();
    let suffix_of = |full: &str, part: &str| {
        full == part || full.ends_with(part) && full[..full.len() - part.len()].ends_with(sep)
    };
    // A name written the way any language writes it (`a.b.C`, `a::b::C`, PHP's `\A\B\C`,
    // Ruby's `C#method`, PHP's `$x->method`) is read with this language's separator.
    let alt = with_separator(q, sep);
    if d.name == q || suffix_of(qualified, q) || suffix_of(qualified, &alt) || local == q {
        return Some(MatchQuality::Exact);
    }
    let name_lower = d.name.to_lowercase();
    let qual_lower = qualified.to_lowercase();
    let alt_lower = alt.to_lowercase();
    if name_lower == q_lower || suffix_of(&qual_lower, q_lower) || suffix_of(&qual_lower, &alt_lower) {
        return Some(MatchQuality::CaseInsensitive);
    }
    if !q_lower.is_empty()
        && (name_lower.starts_with(q_lower)
            || qual_lower.starts_with(q_lower)
            || local.to_lowercase().starts_with(q_lower))
    {
        return Some(MatchQuality::Prefix);
    }
    None
}

/// Types and functions before fields and variables when a name is ambiguous.
fn kind_rank(k: SymbolKind) -> u8 {
    match k {
        SymbolKind::Class
        | SymbolKind::Struct
        | SymbolKind::Enum
        | SymbolKind::Interface
        | SymbolKind::Trait => 0,
        SymbolKind::Function | SymbolKind::Method | SymbolKind::Macro => 1,
        SymbolKind::Type | SymbolKind::Module | SymbolKind::Namespace => 2,
        SymbolKind::Impl => 3,
        SymbolKind::Constant | SymbolKind::Variable | SymbolKind::Field => 4,
    }
}
