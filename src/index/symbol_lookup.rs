//! `SymbolLookup`: find definitions by name or qualified name — exact, then
//! case-insensitive, then prefix — the first tier with hits wins.

use serde::Serialize;

use super::{IndexError, IndexSnapshot};
use crate::lang::LanguageRegistry;
use crate::symbols::{Definition, FileSymbols, SymbolKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatchQuality {
    Exact,
    CaseInsensitive,
    Prefix,
}

#[derive(Debug, Clone, Serialize)]
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
    symbols: Vec<FileSymbols>,
}

impl<'s> SymbolLookup<'s> {
    pub fn new(snapshot: &'s IndexSnapshot) -> Result<Self, IndexError> {
        Ok(SymbolLookup {
            snapshot,
            symbols: snapshot.load_symbols()?,
        })
    }

    /// Definitions matching `query`, best tier only, sorted by kind weight then location.
    pub fn find(&self, query: &str) -> Result<Vec<SymbolHit>, IndexError> {
        let registry = LanguageRegistry::builtin()?;
        let q = query.trim();
        let q_lower = q.to_lowercase();
        let mut tiers: [Vec<SymbolHit>; 3] = Default::default();
        for (record, syms) in self.snapshot.table.files.iter().zip(&self.symbols) {
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
    let suffix_of = |full: &str, part: &str| {
        full == part || full.ends_with(part) && full[..full.len() - part.len()].ends_with(sep)
    };
    // A query written with the other language family's separator still matches.
    let alt = if sep == "::" {
        q.replace('.', "::")
    } else {
        q.replace("::", ".")
    };
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
