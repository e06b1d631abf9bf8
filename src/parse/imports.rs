//! Imports and the declared package from a language's `imports.scm`.

use tree_sitter::{Node, QueryMatch};

use super::node_text::text;
use crate::lang::{Capture, ImportStyle};
use crate::symbols::Import;

/// Gathers import matches and the declared package.
pub(super) struct ImportCollector {
    style: ImportStyle,
    imports: Vec<Import>,
    package: Option<String>,
}

impl ImportCollector {
    pub(super) fn new(style: ImportStyle) -> Self {
        ImportCollector {
            style,
            imports: Vec::new(),
            package: None,
        }
    }

    /// Takes the match if it is an import or package match; `false` leaves it to the tags.
    pub(super) fn accept(&mut self, m: &QueryMatch<'_, '_>, captures: &[Capture], source: &[u8]) -> bool {
        let mut statement = None;
        // Several @import.path captures (Scala's `import a.b.C` has no node spanning `a.b`)
        // make one path: the text from the first to the last.
        let mut path: Option<Node> = None;
        let mut path_end = 0;
        let mut multi_path = false;
        // Several @package captures in one match (Scala's chained `package a.b` `package c`)
        // make one package, joined with `.`.
        let mut package: Vec<String> = Vec::new();
        let mut name = None;
        let mut alias = None;
        let mut glob = false;
        let mut mine = false;
        for cap in m.captures() {
            let c = captures.get(cap.index as usize);
            mine |= c.is_some_and(|c| c.belongs_to_imports() && *c != Capture::Private);
            match c {
                Some(Capture::Import) => statement = Some(cap.node),
                Some(Capture::ImportPath) => {
                    multi_path |= path.is_some();
                    if path.is_none_or(|p| cap.node.start_byte() < p.start_byte()) {
                        path = Some(cap.node);
                    }
                    path_end = path_end.max(cap.node.end_byte());
                }
                Some(Capture::ImportName) => name = Some(text(cap.node, source)),
                Some(Capture::ImportAlias) => alias = Some(text(cap.node, source)),
                Some(Capture::ImportGlob) => glob = true,
                Some(Capture::Package) => package.push(text(cap.node, source)),
                _ => {}
            }
        }
        if !package.is_empty() {
            self.package = Some(package.join("."));
        }
        let (Some(statement), Some(path)) = (statement, path) else {
            return mine;
        };
        let line = statement.start_position().row as u32 + 1;
        if self.style == ImportStyle::RustUseTree && alias.is_none() {
            flatten_use_tree(path, source, &mut Vec::new(), line, &mut self.imports);
            return true;
        }
        let path = match multi_path {
            true => String::from_utf8_lossy(&source[path.start_byte()..path_end])
                .chars()
                .filter(|c| !c.is_whitespace() && *c != '`')
                .collect(),
            false => unquote(&text(path, source)),
        };
        // `import a.b.C` captured whole: the path is `a.b`, the name `C`.
        let path = match (self.style, &name) {
            (ImportStyle::PathEndsWithName, Some(n)) => path
                .strip_suffix(n.as_str())
                .and_then(|p| p.strip_suffix('.'))
                .map_or_else(|| path.clone(), str::to_string),
            _ => path,
        };
        self.imports.push(Import {
            path,
            name,
            alias,
            glob,
            line,
        });
        true
    }

    pub(super) fn finish(self) -> (Vec<Import>, Option<String>) {
        (normalize(self.imports), self.package)
    }
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches(['"', '\'', '`', '<', '>']).to_string()
}

/// Sorts, removes duplicates, and drops a bare import of a module when the same line also
/// imports names from it (`import x, {a} from "m"` matches the side-effect pattern too).
fn normalize(mut imports: Vec<Import>) -> Vec<Import> {
    imports.sort_by(|a, b| {
        (a.line, &a.path, &a.name, &a.alias, a.glob).cmp(&(b.line, &b.path, &b.name, &b.alias, b.glob))
    });
    imports.dedup();
    let bound: std::collections::HashSet<(u32, String)> = imports
        .iter()
        .filter(|i| i.name.is_some() || i.alias.is_some() || i.glob)
        .map(|i| (i.line, i.path.clone()))
        .collect();
    imports.retain(|i| {
        i.name.is_some() || i.alias.is_some() || i.glob || !bound.contains(&(i.line, i.path.clone()))
    });
    // `import a.b.*` also matches a name pattern as path `a`, name `b`: the glob says it all.
    let globs: std::collections::HashSet<(u32, String)> = imports
        .iter()
        .filter(|i| i.glob)
        .map(|i| (i.line, i.path.clone()))
        .collect();
    imports.retain(|i| match (&i.name, i.glob) {
        (Some(n), false) => ![".", "::"]
            .iter()
            .any(|sep| globs.contains(&(i.line, format!("{}{sep}{n}", i.path)))),
        _ => true,
    });
    imports
}

fn segments(node: Node, source: &[u8]) -> Vec<String> {
    text(node, source)
        .split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Flattens a Rust use-tree into one import per leaf: the path is every segment but the last,
/// the name the last (`use a::b::c as d` -> path `a::b`, name `c`, alias `d`); a glob keeps
/// the whole path (`use a::b::*` -> path `a::b`, glob).
fn flatten_use_tree(node: Node, source: &[u8], prefix: &mut Vec<String>, line: u32, out: &mut Vec<Import>) {
    let emit = |segs: Vec<String>, alias: Option<String>, glob: bool, out: &mut Vec<Import>| {
        if glob {
            out.push(Import {
                path: segs.join("::"),
                name: None,
                alias,
                glob,
                line,
            });
        } else if let Some((last, rest)) = segs.split_last() {
            out.push(Import {
                path: rest.join("::"),
                name: Some(last.clone()),
                alias,
                glob,
                line,
            });
        }
    };
    match node.kind() {
        "use_list" => {
            let mut c = node.walk();
            for child in node.named_children(&mut c) {
                flatten_use_tree(child, source, prefix, line, out);
            }
        }
        "scoped_use_list" => {
            let added = node
                .child_by_field_name("path")
                .map(|p| segments(p, source))
                .unwrap_or_default();
            let n = added.len();
            prefix.extend(added);
            if let Some(list) = node.child_by_field_name("list") {
                flatten_use_tree(list, source, prefix, line, out);
            }
            prefix.truncate(prefix.len() - n);
        }
        "use_as_clause" => {
            let mut segs = prefix.clone();
            if let Some(p) = node.child_by_field_name("path") {
                segs.extend(segments(p, source));
            }
            let alias = node.child_by_field_name("alias").map(|a| text(a, source));
            emit(segs, alias, false, out);
        }
        "use_wildcard" => {
            let mut segs = prefix.clone();
            if let Some(p) = node.named_child(0) {
                segs.extend(segments(p, source));
            }
            emit(segs, None, true, out);
        }
        _ => {
            let leaf = segments(node, source);
            let mut segs = prefix.clone();
            if leaf.as_slice() == ["self"] && !prefix.is_empty() {
                emit(segs, None, false, out);
            } else {
                segs.extend(leaf);
                emit(segs, None, false, out);
            }
        }
    }
}
