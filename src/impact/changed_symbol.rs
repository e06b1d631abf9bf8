//! `ChangedSymbol`: what a diff changes, read off the definitions of each changed file before
//! and after (the caller re-parses them, so a dirty tree needs no rebuild): the innermost
//! definition around each changed line, and whether its declaration, its body, or all of it
//! changed.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;

use super::FileDiff;
use crate::graph::{Family, SymbolId};
use crate::symbols::{Definition, FileSymbols, SymbolKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// The declaration changed (name line, parameters, return type): callers may break.
    Signature,
    Deleted,
    /// Only the body changed.
    Body,
    Added,
}

impl ChangeKind {
    /// How much of a change reaches dependents.
    pub(super) fn weight(self) -> f32 {
        match self {
            ChangeKind::Signature | ChangeKind::Deleted => 1.0,
            ChangeKind::Body => 0.5,
            ChangeKind::Added => 0.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ChangedSymbol {
    pub qualified_name: String,
    pub kind: SymbolKind,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub change: ChangeKind,
    pub public: bool,
    /// Found in the index's graph (dependents known).
    pub in_graph: bool,
    #[serde(skip)]
    pub id: Option<SymbolId>,
}

/// A changed file as the caller sees it.
pub struct ChangedFile<'a> {
    pub diff: &'a FileDiff,
    /// Definitions before the change (`None`: the file is new).
    pub old: Option<&'a FileSymbols>,
    /// Definitions after the change (`None`: deleted, or unknown for a bare patch).
    pub new: Option<&'a FileSymbols>,
    pub language: String,
}

/// Is a definition part of the public API, from its signature and name?
pub fn is_public(language: &str, d: &Definition) -> bool {
    let sig = d.signature.trim_start();
    match Family::of(language) {
        // `pub(crate)` and narrower are not the crate's API.
        Family::Rust => {
            sig.starts_with("pub ") || sig.starts_with("pub async") || sig.starts_with("pub unsafe")
        }
        Family::Python => !d.name.starts_with('_') && d.container.iter().all(|c| !c.starts_with('_')),
        Family::Go => d.name.chars().next().is_some_and(char::is_uppercase),
        // Kotlin and Scala members are public unless they say otherwise.
        Family::Java if matches!(language, "kotlin" | "scala") => !["private ", "protected ", "internal "]
            .iter()
            .any(|m| sig.contains(m)),
        Family::Java => sig.contains("public "),
        Family::Js => sig.starts_with("export ") || sig.contains(" export "),
        Family::C | Family::Other => !sig.starts_with("static "),
    }
}

/// The definitions a file diff touches: the innermost definition around each changed line.
pub fn changed_definitions(file: &ChangedFile<'_>) -> Vec<(Definition, ChangeKind)> {
    let sep = Family::of(&file.language).separator();
    let mut out: Vec<(Definition, ChangeKind)> = Vec::new();
    let new_by_name: HashMap<(String, SymbolKind), &Definition> = file
        .new
        .map(|n| {
            n.definitions
                .iter()
                .map(|d| ((d.local_name(sep), d.kind), d))
                .collect()
        })
        .unwrap_or_default();
    if let Some(old) = file.old {
        let old_names: HashSet<(String, SymbolKind)> = old
            .definitions
            .iter()
            .map(|d| (d.local_name(sep), d.kind))
            .collect();
        let mut hit: BTreeSet<usize> = BTreeSet::new();
        let lines = file.diff.removed.iter().chain(&file.diff.inserted_after);
        for &l in lines {
            if let Some(i) = owner_of_line(&old.definitions, l) {
                hit.insert(i);
            }
        }
        // A deleted file: every definition.
        if file.diff.new_path.is_none() {
            hit = (0..old.definitions.len()).collect();
        }
        for i in hit {
            let Some(d) = old.definitions.get(i) else { continue };
            let key = (d.local_name(sep), d.kind);
            let kind = match (file.new, new_by_name.get(&key)) {
                (_, Some(n)) if n.signature != d.signature => ChangeKind::Signature,
                (_, Some(_)) => ChangeKind::Body,
                (Some(_), None) => ChangeKind::Deleted,
                // A bare patch: a change on the first line is a change of the declaration.
                (None, None) if file.diff.new_path.is_none() => ChangeKind::Deleted,
                (None, None) => {
                    let first = d.span.start_line..=d.name_span.start_line.max(d.span.start_line);
                    match file.diff.removed.iter().any(|l| first.contains(l)) {
                        true => ChangeKind::Signature,
                        false => ChangeKind::Body,
                    }
                }
            };
            out.push((d.clone(), kind));
        }
        if let Some(new) = file.new {
            for (i, d) in new.definitions.iter().enumerate() {
                let touched = file
                    .diff
                    .added
                    .iter()
                    .any(|l| owner_of_line(&new.definitions, *l) == Some(i));
                if touched && !old_names.contains(&(d.local_name(sep), d.kind)) {
                    out.push((d.clone(), ChangeKind::Added));
                }
            }
        }
    } else if let Some(new) = file.new {
        out.extend(new.definitions.iter().map(|d| (d.clone(), ChangeKind::Added)));
    }
    out
}

/// The definition a changed line belongs to: the innermost one around it, except that a
/// constant, variable or field declared inside a function is part of that function (a change
/// to it changes what the function does; nothing outside can name it).
fn owner_of_line(defs: &[Definition], line: u32) -> Option<usize> {
    let around = |d: &&Definition| d.span.start_line <= line && line <= d.span.end_line;
    let size = |d: &Definition| d.span.end_line - d.span.start_line;
    let (i, inner) = defs
        .iter()
        .enumerate()
        .filter(|(_, d)| around(d))
        .min_by_key(|(_, d)| size(d))?;
    if !matches!(
        inner.kind,
        SymbolKind::Constant | SymbolKind::Variable | SymbolKind::Field
    ) {
        return Some(i);
    }
    let function = defs
        .iter()
        .enumerate()
        .filter(|(_, d)| around(d) && matches!(d.kind, SymbolKind::Function | SymbolKind::Method))
        .min_by_key(|(_, d)| size(d))
        .map(|(j, _)| j);
    Some(function.unwrap_or(i))
}
