//! Every use of a definition, not only the calls and type uses the graph resolved: reads,
//! writes, attribute and member accesses, default arguments, decorators, imports and
//! re-exports of a constant, a variable, a field or a function passed as a value.
//!
//! Found at query time, so the index pays nothing for the identifiers no one asks about: the
//! files that can see the definition (its own file, and each file whose import the graph
//! resolved to it) are read and parsed, and each word-bounded occurrence of the name that the
//! syntax tree calls an identifier (never a string or a comment) is a use — bare where the name
//! is in scope (its own file, an import of the name, a glob import), after a `.`/`::` where an
//! import binds the module (`regexes.email`, `config.DEFAULT_TIMEOUT`).

use std::collections::HashSet;
use std::path::Path;

use crate::graph::{
    EdgeKind, Family, GraphQuery, Node, Provenance, Site, SymbolId, SymbolInfo, import_binding,
};
use crate::lang::LanguageRegistry;

/// Files read for one query at most: past it the answer says it stopped.
const MAX_FILES: usize = 2000;
/// Uses kept per query at most.
const MAX_USES: usize = 5000;

/// How the name appears in one file.
#[derive(Clone, PartialEq)]
enum Seen {
    /// As itself (its own file, imported by name or through a glob); the local name.
    Bare(String),
    /// As a member of a module binding (`ns.name`).
    Member,
}

/// Uses of `s` the graph holds no edge for, on lines not in `known` (path, line); and whether
/// the file limit cut the search.
pub fn uses(
    q: &GraphQuery,
    s: SymbolId,
    root: &Path,
    known: &HashSet<(String, u32)>,
) -> (Vec<(Site, SymbolInfo)>, bool) {
    let g = q.graph;
    let Some(f) = g.files.get(s.file.index()) else {
        return (Vec::new(), false);
    };
    let Some(d) = f.defs.get(s.def as usize) else {
        return (Vec::new(), false);
    };
    let name = d.name.to_string();
    if name.chars().count() < 2 {
        return (Vec::new(), false);
    }
    let fam = f.family();
    // The definition's own file sees it bare; every importer as its import binds it.
    let mut files: Vec<(usize, Vec<Seen>, Provenance)> =
        vec![(s.file.index(), vec![Seen::Bare(name.clone())], Provenance::Scope)];
    for (from, _, e) in q.sg.edges(q.sg.file_node(s.file), petgraph::Direction::Incoming) {
        if e.kind != EdgeKind::Imports {
            continue;
        }
        let Some(Node::File(ff)) = q.sg.node(from) else {
            continue;
        };
        let Some(src) = g.files.get(ff.index()) else {
            continue;
        };
        let Some(imp) = src.imports.get(e.index as usize) else {
            continue;
        };
        let seen = match (&imp.name, imp.glob) {
            (Some(n), _) if *n == name => Seen::Bare(import_binding(fam, imp).unwrap_or(&name).to_string()),
            (_, true) if imp.alias.is_none() => Seen::Bare(name.clone()),
            _ => Seen::Member,
        };
        match files.iter_mut().find(|(i, _, _)| *i == ff.index()) {
            Some((_, v, _)) if !v.contains(&seen) => v.push(seen),
            Some(_) => {}
            None => files.push((ff.index(), vec![seen], Provenance::Import)),
        }
    }
    let cut = files.len() > MAX_FILES;
    files.truncate(MAX_FILES);
    let registry = LanguageRegistry::builtin().ok();
    let mut parser = tree_sitter::Parser::new();
    let mut out = Vec::new();
    for (fi, ways, provenance) in files {
        let Some(file) = g.files.get(fi) else { continue };
        let Some(spec) = registry.and_then(|r| r.by_name(&file.language)) else {
            continue;
        };
        let Ok(text) = std::fs::read(root.join(file.path.as_str())) else {
            continue;
        };
        if parser.set_language(&spec.grammar).is_err() {
            continue;
        }
        let Some(tree) = parser.parse(&text, None) else {
            continue;
        };
        let own = (fi == s.file.index()).then_some(d.name_byte as usize);
        for way in &ways {
            let word = match way {
                Seen::Bare(local) => local.as_str(),
                Seen::Member => name.as_str(),
            };
            for at in word_positions(&text, word.as_bytes()) {
                if Some(at) == own {
                    continue;
                }
                if *way == Seen::Member && !after_member_access(&text, at, fam) {
                    continue;
                }
                let Some(node) = tree.root_node().descendant_for_byte_range(at, at + word.len()) else {
                    continue;
                };
                if !is_identifier(node.kind()) || node.byte_range() != (at..at + word.len()) {
                    continue;
                }
                let line = node.start_position().row as u32 + 1;
                if known.contains(&(file.path.to_string(), line)) {
                    continue;
                }
                let from = enclosing(q, fi, line);
                out.push((
                    Site {
                        path: file.path.to_string(),
                        line,
                        kind: "uses",
                        provenance,
                        confidence: provenance.confidence(1),
                        candidates: 1,
                    },
                    from,
                ));
                if out.len() >= MAX_USES {
                    return (dedup(out), true);
                }
            }
        }
    }
    (dedup(out), cut)
}

/// One use per line.
fn dedup(mut v: Vec<(Site, SymbolInfo)>) -> Vec<(Site, SymbolInfo)> {
    let mut seen = HashSet::new();
    v.retain(|(s, _)| seen.insert((s.path.clone(), s.line)));
    v
}

/// Byte offsets of `word` in `text` with no identifier character on either side.
fn word_positions(text: &[u8], word: &[u8]) -> Vec<usize> {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    let mut out = Vec::new();
    if word.is_empty() || text.len() < word.len() {
        return out;
    }
    let mut i = 0;
    while i + word.len() <= text.len() {
        if &text[i..i + word.len()] == word
            && (i == 0 || !ident(text[i - 1]))
            && text.get(i + word.len()).is_none_or(|&b| !ident(b))
        {
            out.push(i);
            i += word.len();
        } else {
            i += 1;
        }
    }
    out
}

/// The occurrence at `at` follows `.`, `?.`, `->` or `::` (spaces allowed).
fn after_member_access(text: &[u8], at: usize, fam: Family) -> bool {
    let before = text[..at].trim_ascii_end();
    before.ends_with(b".")
        || (matches!(fam, Family::Rust | Family::C) && before.ends_with(b"::"))
        || before.ends_with(b"->")
}

/// Syntax node kinds that name something (each grammar's spelling of it).
fn is_identifier(kind: &str) -> bool {
    kind.ends_with("identifier") || kind == "constant" || kind == "property_identifier"
}

/// The innermost definition of file `fi` holding `line`, else the file.
fn enclosing(q: &GraphQuery, fi: usize, line: u32) -> SymbolInfo {
    let g = q.graph;
    let best = g.files.get(fi).and_then(|f| {
        f.defs
            .iter()
            .enumerate()
            .filter(|(_, d)| d.line <= line && line <= d.end_line && d.end_line > d.line)
            .max_by_key(|(_, d)| d.line)
            .map(|(i, _)| i as u32)
    });
    match best {
        Some(def) => q.info(SymbolId {
            file: crate::symbols::FileId(fi as u32),
            def,
        }),
        None => q.file_info(crate::symbols::FileId(fi as u32)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_bounded_on_both_sides() {
        let t = b"EMAIL email emails my_email email.x (email)";
        assert_eq!(word_positions(t, b"email"), vec![6, 28, 37]);
    }

    #[test]
    fn member_access_is_read_before_the_name() {
        let t = b"regexes.email + regexes . email + email";
        assert!(after_member_access(t, 8, Family::Js));
        assert!(after_member_access(t, 26, Family::Js));
        assert!(!after_member_access(t, 34, Family::Js));
    }
}
