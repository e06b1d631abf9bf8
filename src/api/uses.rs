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

use std::collections::{HashSet, VecDeque};
use std::path::Path;

use crate::graph::{
    EdgeKind, Family, GraphQuery, Node, Provenance, Site, SymbolId, SymbolInfo, import_binding,
};
use crate::lang::LanguageRegistry;
use crate::symbols::FileId;

/// How far from the definition's file a name passed on by re-exports is followed.
const RE_EXPORT_DEPTH: usize = 2;

/// How a file sees the name it passes on to its importers.
#[derive(Clone)]
enum View {
    /// As the name itself.
    Direct,
    /// As a member of this binding (`export * as regexes from`, then `core.regexes.email`).
    Through(String),
}

/// Files read for one query at most: past it the answer says it stopped.
const MAX_FILES: usize = 2000;
/// Uses kept per query at most.
const MAX_USES: usize = 5000;

/// How the name appears in one file.
#[derive(Clone, PartialEq)]
enum Seen {
    /// As itself (its own file, imported by name or through a glob); the local name.
    Bare(String),
    /// As a member of a module binding (`ns.name`); the binding.
    Member(String),
    /// As a member of any object (a member whose name is the repository's only one).
    AnyMember,
    /// As a member of the enclosing object (`self.name`, `this.name`, `Self::name`): a
    /// field or method in its own file.
    Own,
}

/// Uses of `s` the graph holds no edge for, on lines not in `known` (path, line); and whether
/// a limit cut the search.
pub fn uses(
    q: &GraphQuery,
    s: SymbolId,
    root: &Path,
    known: &HashSet<(String, u32)>,
) -> (Vec<(Site, SymbolInfo)>, bool) {
    let Some(target) = Target::of(q, s) else {
        return (Vec::new(), false);
    };
    let mut files = visible_files(q, &target);
    let cut = files.len() > MAX_FILES;
    files.truncate(MAX_FILES);
    let mut parser = tree_sitter::Parser::new();
    let mut out = Vec::new();
    for (fi, ways, provenance) in files {
        uses_in_file(
            q,
            &target,
            (fi, &ways, provenance),
            root,
            known,
            &mut parser,
            &mut out,
        );
        if out.len() >= MAX_USES {
            out.truncate(MAX_USES);
            return (dedup(out), true);
        }
    }
    (dedup(out), cut)
}

/// The definition whose uses are looked for.
struct Target {
    file: FileId,
    name: String,
    fam: Family,
    /// A method or a field: named bare everywhere for other things.
    member: bool,
    /// A member whose name no other definition in the repository has.
    unique_member: bool,
}

impl Target {
    fn of(q: &GraphQuery, s: SymbolId) -> Option<Target> {
        let g = q.graph;
        let f = g.files.get(s.file.index())?;
        let d = f.defs.get(s.def as usize)?;
        if d.name.chars().count() < 2 {
            return None;
        }
        let member = d
            .parent
            .and_then(|p| f.defs.get(p as usize))
            .is_some_and(|p| crate::graph::is_type_like(p.kind));
        let unique_member = member
            && g.files
                .iter()
                .flat_map(|x| x.defs.iter())
                .filter(|x| x.name == d.name)
                .take(2)
                .count()
                == 1;
        Some(Target {
            file: s.file,
            name: d.name.to_string(),
            fam: f.family(),
            member,
            unique_member,
        })
    }
}

/// The files that can see the definition and how each names it. Its own file sees it bare
/// (a member: through the object itself, or on any object when its name is unique); every
/// importer as its import binds it, and the importers of a file that passes the name on
/// (`export * from`, `export * as ns from`, a package's `__init__` importing it), to
/// `RE_EXPORT_DEPTH` files away. A member with a common name is left to the graph's receiver
/// resolution outside its own file.
fn visible_files(q: &GraphQuery, t: &Target) -> Vec<(usize, Vec<Seen>, Provenance)> {
    let g = q.graph;
    let name = &t.name;
    let own = match (t.member, t.unique_member) {
        (true, true) => Seen::AnyMember,
        (true, false) => Seen::Own,
        (false, _) => Seen::Bare(name.clone()),
    };
    let mut files: Vec<(usize, Vec<Seen>, Provenance)> = vec![(t.file.index(), vec![own], Provenance::Scope)];
    if t.member && !t.unique_member {
        return files;
    }
    let mut queue: VecDeque<(FileId, View, usize)> = VecDeque::from([(t.file, View::Direct, 0)]);
    let mut passed_on: HashSet<FileId> = HashSet::from([t.file]);
    while let Some((at, view, depth)) = queue.pop_front() {
        for (from, _, e) in q.sg.edges(q.sg.file_node(at), petgraph::Direction::Incoming) {
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
            let seen = match (&view, &imp.name, imp.glob) {
                _ if t.unique_member => Seen::AnyMember,
                (View::Through(b), _, _) => Seen::Member(b.clone()),
                (View::Direct, Some(n), _) if n == name => {
                    Seen::Bare(import_binding(t.fam, imp).unwrap_or(name).to_string())
                }
                (View::Direct, _, true) if imp.alias.is_none() => Seen::Bare(name.clone()),
                (View::Direct, _, _) => match import_binding(src.family(), imp) {
                    Some(b) => Seen::Member(b.to_string()),
                    None => continue,
                },
            };
            // What this importer's own importers see of the name, if it passes it on.
            let next = match &seen {
                Seen::Bare(local) if local == name => Some(View::Direct),
                Seen::AnyMember => Some(View::Direct),
                Seen::Member(b) => Some(View::Through(b.clone())),
                _ => None,
            };
            if let Some(v) = next
                && depth < RE_EXPORT_DEPTH
                && passed_on.insert(ff)
            {
                queue.push_back((ff, v, depth + 1));
            }
            match files.iter_mut().find(|(i, _, _)| *i == ff.index()) {
                Some((_, v, _)) if !v.contains(&seen) => v.push(seen),
                Some(_) => {}
                None => files.push((ff.index(), vec![seen], Provenance::Import)),
            }
        }
    }
    files
}

/// The uses of `t` in one file, read and parsed once, for each way the file names it.
fn uses_in_file(
    q: &GraphQuery,
    t: &Target,
    (fi, ways, provenance): (usize, &[Seen], Provenance),
    root: &Path,
    known: &HashSet<(String, u32)>,
    parser: &mut tree_sitter::Parser,
    out: &mut Vec<(Site, SymbolInfo)>,
) {
    let Some(file) = q.graph.files.get(fi) else { return };
    let Some(spec) = LanguageRegistry::builtin()
        .ok()
        .and_then(|r| r.by_name(&file.language))
    else {
        return;
    };
    let Ok(text) = crate::util::read_regular(&root.join(file.path.as_str())) else {
        return;
    };
    if parser.set_language(&spec.grammar).is_err() {
        return;
    }
    let Some(tree) = parser.parse(&text, None) else {
        return;
    };
    // Definitions' own names in this file (the target's among them) are not uses.
    let def_names: HashSet<usize> = file.defs.iter().map(|x| x.name_byte as usize).collect();
    for way in ways {
        let word = match way {
            Seen::Bare(local) => local.as_str(),
            Seen::Member(_) | Seen::Own | Seen::AnyMember => t.name.as_str(),
        };
        for at in word_positions(&text, word.as_bytes()) {
            if def_names.contains(&at) {
                continue;
            }
            let through = match way {
                // `other.name` is another object's member, not this name.
                Seen::Bare(_) => object_before(&text, at).is_none(),
                Seen::Member(binding) => member_of(&text, at, &[binding.as_str()]),
                Seen::Own => member_of(&text, at, &["self", "this", "cls", "Self"]),
                Seen::AnyMember => object_before(&text, at).is_some(),
            };
            if !through {
                continue;
            }
            let Some(node) = tree.root_node().descendant_for_byte_range(at, at + word.len()) else {
                continue;
            };
            if !is_identifier(node.kind()) || node.byte_range() != (at..at + word.len()) || is_label(node) {
                continue;
            }
            if matches!(way, Seen::Bare(_)) && shadowed(node, word.as_bytes(), &text) {
                continue;
            }
            let line = node.start_position().row as u32 + 1;
            if known.contains(&(file.path.to_string(), line)) {
                continue;
            }
            let site = Site {
                path: file.path.to_string(),
                line,
                kind: "uses",
                provenance,
                confidence: provenance.confidence(1),
                candidates: 1,
            };
            out.push((site, enclosing(q, fi, line)));
        }
    }
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

/// What stands before a member operator (`.`, `?.`, `->`, `::`) just before `at`, if one
/// does (spaces allowed around the operator).
fn object_before(text: &[u8], at: usize) -> Option<&[u8]> {
    let before = text[..at].trim_ascii_end();
    [b"?.".as_slice(), b".", b"->", b"::"]
        .iter()
        .find_map(|op| before.strip_suffix(*op))
        .map(<[u8]>::trim_ascii_end)
}

/// The occurrence at `at` is a member of one of `objects`: `ns.name`, `ns?.name`,
/// `self->name`, `Self::name`.
fn member_of(text: &[u8], at: usize, objects: &[&str]) -> bool {
    let Some(rest) = object_before(text, at) else {
        return false;
    };
    objects.iter().any(|o| {
        rest.ends_with(o.as_bytes())
            && rest[..rest.len() - o.len()]
                .last()
                .is_none_or(|&b| !(b.is_ascii_alphanumeric() || b == b'_' || b == b'$'))
    })
}

/// A name that labels rather than uses: a keyword argument's name (`f(email=x)`), an object
/// literal's key (`{email: x}`), a named parameter.
fn is_label(node: tree_sitter::Node) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    let first = parent.child(0).is_some_and(|c| c.id() == node.id());
    match parent.kind() {
        "keyword_argument" | "pair" | "field_initializer" | "named_argument" => first,
        "default_parameter" | "typed_default_parameter" | "typed_parameter" | "parameter" => first,
        _ => false,
    }
}

/// A bare name inside a function that has a parameter of the same name: the parameter.
fn shadowed(node: tree_sitter::Node, word: &[u8], text: &[u8]) -> bool {
    let mut at = node.parent();
    while let Some(n) = at {
        if let Some(params) = n.child_by_field_name("parameters")
            && !(params.start_byte() <= node.start_byte() && node.end_byte() <= params.end_byte())
            && !word_positions(&text[params.byte_range()], word).is_empty()
        {
            return true;
        }
        at = n.parent();
    }
    false
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
        let t = b"regexes.email + regexes . email + email + myregexes.email + this?.email";
        assert!(member_of(t, 8, &["regexes"]));
        assert!(member_of(t, 26, &["regexes"]));
        assert!(!member_of(t, 34, &["regexes"]));
        assert!(!member_of(t, 52, &["regexes"]));
        assert!(member_of(t, 66, &["self", "this"]));
        assert!(object_before(t, 8).is_some() && object_before(t, 34).is_none());
    }
}
