//! Definitions and references from a language's `tags.scm`.
//!
//! Rules applied on top of the raw query matches, the same for every language:
//! - when several patterns capture the same name node, the earliest pattern wins (so a
//!   specific pattern placed above a catch-all decides the kind); for references, any kind
//!   beats the `type` catch-all;
//! - a reference whose name node is a definition's name is dropped;
//! - containers come from nesting (a method inside a class) plus an explicit `@container`
//!   (Go receivers, C++ `Foo::bar`); a function directly inside a class, impl, trait or
//!   interface is a method.

use std::collections::HashSet;

use tree_sitter::{Node, QueryMatch};

use super::doc_comment;
use super::node_text::{span, text};
use crate::lang::Capture;
use crate::symbols::{Binding, Definition, Reference, ReferenceKind, SymbolKind};

/// Longest callee text kept for a reference; chained calls can be arbitrarily long.
const MAX_CALLEE_LEN: usize = 200;

struct RawDef<'t> {
    pattern: usize,
    kind: SymbolKind,
    node: Node<'t>,
    name: Node<'t>,
    container: Option<Node<'t>>,
    doc: Option<Node<'t>>,
}

struct RawRef<'t> {
    pattern: usize,
    kind: ReferenceKind,
    node: Node<'t>,
    name: Node<'t>,
}

/// Gathers definition and reference matches; [`TagCollector::finish`] applies the rules.
struct RawBinding<'t> {
    node: Node<'t>,
    name: Node<'t>,
    value: Option<Node<'t>>,
    ty: Option<Node<'t>>,
}

#[derive(Default)]
pub(super) struct TagCollector<'t> {
    defs: Vec<RawDef<'t>>,
    refs: Vec<RawRef<'t>>,
    bindings: Vec<RawBinding<'t>>,
}

impl<'t> TagCollector<'t> {
    pub(super) fn accept(&mut self, m: &QueryMatch<'_, 't>, captures: &[Capture]) {
        let (mut def, mut reference, mut node, mut name, mut container, mut doc) =
            (None, None, None, None, None, None);
        let (mut binding, mut b_name, mut b_value, mut b_type) = (None, None, None, None);
        for cap in m.captures() {
            match captures.get(cap.index as usize) {
                Some(Capture::Binding) => binding = Some(cap.node),
                Some(Capture::BindingName) => b_name = Some(cap.node),
                Some(Capture::BindingValue) => b_value = Some(cap.node),
                Some(Capture::BindingType) => b_type = Some(cap.node),
                Some(Capture::Definition(k)) => (def, node) = (Some(*k), Some(cap.node)),
                Some(Capture::Reference(k)) => (reference, node) = (Some(*k), Some(cap.node)),
                Some(Capture::Name) => name = Some(cap.node),
                Some(Capture::Container) => container = Some(cap.node),
                Some(Capture::Doc) => doc = Some(cap.node),
                _ => {}
            }
        }
        if let (Some(node), Some(name)) = (binding, b_name) {
            if b_value.is_some() || b_type.is_some() {
                self.bindings.push(RawBinding {
                    node,
                    name,
                    value: b_value,
                    ty: b_type,
                });
            }
            return;
        }
        let (Some(node), Some(name)) = (node, name) else {
            return;
        };
        let pattern = m.pattern_index;
        if let Some(kind) = def {
            self.defs.push(RawDef {
                pattern,
                kind,
                node,
                name,
                container,
                doc,
            });
        } else if let Some(kind) = reference {
            self.refs.push(RawRef {
                pattern,
                kind,
                node,
                name,
            });
        }
    }

    pub(super) fn finish(
        self,
        separator: &str,
        source: &[u8],
    ) -> (Vec<Definition>, Vec<Reference>, Vec<Binding>) {
        let defs = dedupe_by_name_node(self.defs, |d| (d.name.byte_range(), d.pattern));
        let definitions = build_definitions(separator, &defs, source);
        let def_names: HashSet<_> = defs.iter().map(|d| d.name.byte_range()).collect();
        // A specific reference kind beats the `type` catch-all wherever the patterns sit (an
        // inherited query puts the base language's catch-all first).
        let refs: Vec<RawRef> = dedupe_by_name_node(self.refs, |r| {
            (
                r.name.byte_range(),
                usize::from(r.kind == ReferenceKind::Type) * 100_000 + r.pattern,
            )
        })
        .into_iter()
        .filter(|r| !def_names.contains(&r.name.byte_range()))
        .collect();
        let references = build_references(&refs, &definitions, source);
        let bindings = build_bindings(self.bindings, &definitions, source);
        (definitions, references, bindings)
    }
}

/// Keeps, per name node, the capture of the earliest pattern; output sorted by position.
fn dedupe_by_name_node<T>(mut items: Vec<T>, key: impl Fn(&T) -> (std::ops::Range<usize>, usize)) -> Vec<T> {
    items.sort_by_key(|i| {
        let (range, pattern) = key(i);
        (range.start, range.end, pattern)
    });
    items.dedup_by(|later, earlier| key(later).0 == key(earlier).0);
    items
}

/// `Foo<T>` -> `Foo`, `a::B<T>` -> `a::B`: containers are named without generic arguments.
fn strip_generics(s: &str) -> &str {
    s.split('<').next().unwrap_or(s).trim()
}

fn build_definitions(separator: &str, defs: &[RawDef], source: &[u8]) -> Vec<Definition> {
    // Sort outer before inner so a stack sweep sees containers first.
    let mut order: Vec<usize> = (0..defs.len()).collect();
    order.sort_by_key(|&i| {
        let n = defs[i].node;
        (n.start_byte(), std::cmp::Reverse(n.end_byte()), defs[i].pattern)
    });
    let mut out: Vec<Definition> = Vec::with_capacity(defs.len());
    // Indices into `out` of the open enclosing definitions.
    let mut stack: Vec<usize> = Vec::new();
    for i in order {
        let raw = &defs[i];
        let sp = span(raw.node);
        while let Some(&top) = stack.last() {
            if out[top].span.contains(&sp) {
                break;
            }
            stack.pop();
        }
        // The innermost enclosing container's own path, which carries its `@container`
        // (`module A::B` then `class C` inside is `A::B::C`).
        let mut container: Vec<String> = stack
            .iter()
            .rev()
            .find(|&&j| out[j].kind.is_container() || is_scope(out[j].kind))
            .map(|&j| {
                let mut c = out[j].container.clone();
                c.push(out[j].name.clone());
                c
            })
            .unwrap_or_default();
        if let Some(c) = raw.container {
            let t = text(c, source);
            container.extend(
                // Ruby writes `class A::B::C` with a `.`-separated qualified name.
                strip_generics(&t)
                    .split(separator)
                    .flat_map(|s| s.split("::"))
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty()),
            );
        }
        let innermost = stack.last().map(|&j| out[j].kind);
        let kind = match (raw.kind, innermost) {
            (SymbolKind::Function, Some(k)) if k.holds_methods() => SymbolKind::Method,
            (k, _) => k,
        };
        out.push(Definition {
            kind,
            name: def_name(raw.name, source),
            container,
            span: sp,
            name_span: span(raw.name),
            signature: doc_comment::signature(raw.node, source),
            doc: raw
                .doc
                .map(|d| doc_comment::clean(&text(d, source)))
                .or_else(|| doc_comment::find(raw.node, source)),
        });
        if kind.is_container() || is_scope(kind) {
            stack.push(out.len() - 1);
        }
    }
    out
}

/// A definition's name as written, without a symbol's colon (Ruby `attr_reader :name`).
fn def_name(name: Node, source: &[u8]) -> String {
    let t = text(name, source);
    match name.kind().contains("symbol") {
        true => t.trim_start_matches(':').to_string(),
        false => t,
    }
}

/// Functions scope the names defined inside them (`outer.inner` for a closure).
fn is_scope(kind: SymbolKind) -> bool {
    matches!(kind, SymbolKind::Function | SymbolKind::Method)
}

fn build_references(refs: &[RawRef], defs: &[Definition], source: &[u8]) -> Vec<Reference> {
    // Definitions are sorted outer-first by start; the innermost one containing a reference is
    // the last containing one in that order.
    let mut out = Vec::with_capacity(refs.len());
    let mut stack: Vec<usize> = Vec::new();
    let mut next_def = 0usize;
    let mut sorted: Vec<&RawRef> = refs.iter().collect();
    sorted.sort_by_key(|r| (r.node.start_byte(), r.name.start_byte()));
    for r in sorted {
        let sp = span(r.node);
        while next_def < defs.len() && defs[next_def].span.start_byte <= sp.start_byte {
            while let Some(&top) = stack.last() {
                if defs[top].span.contains(&defs[next_def].span) {
                    break;
                }
                stack.pop();
            }
            stack.push(next_def);
            next_def += 1;
        }
        while let Some(&top) = stack.last() {
            if defs[top].span.contains(&sp) {
                break;
            }
            stack.pop();
        }
        let name = text(r.name, source);
        let mut callee = callee_text(r, source);
        let receiver = receiver_of(&callee, &name);
        // Macros live in their own namespace: `format!` is not the function `format`.
        if r.node.kind() == "macro_invocation" {
            callee.push('!');
        }
        out.push(Reference {
            kind: r.kind,
            name,
            callee,
            receiver,
            span: sp,
            name_span: span(r.name),
            enclosing: stack.last().map(|&i| i as u32),
        });
    }
    out
}

fn build_bindings(raw: Vec<RawBinding>, defs: &[Definition], source: &[u8]) -> Vec<Binding> {
    let collapse = |n: Node| -> String {
        let t = text(n, source);
        let t: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
        t.chars().take(MAX_CALLEE_LEN).collect()
    };
    let mut out: Vec<Binding> = raw
        .into_iter()
        .map(|b| {
            let sp = span(b.node);
            // Definitions come outer-first: the last one containing the binding is innermost.
            // A variable is not a scope, even when it is the binding's own statement.
            let enclosing = defs
                .iter()
                .rposition(|d| {
                    d.span.contains(&sp)
                        && !matches!(
                            d.kind,
                            SymbolKind::Variable | SymbolKind::Constant | SymbolKind::Field
                        )
                })
                .map(|i| i as u32);
            Binding {
                name: text(b.name, source),
                value: b.value.map(collapse),
                type_name: b.ty.map(collapse),
                line: sp.start_line,
                enclosing,
            }
        })
        .collect();
    out.sort_by(|a, b| (a.line, &a.name).cmp(&(b.line, &b.name)));
    out.dedup();
    out
}

/// The callee as written: from the start of the reference node to the end of the name
/// (`self.session.send` in `self.session.send(req)`), without a leading `new`.
fn callee_text(r: &RawRef, source: &[u8]) -> String {
    let start = token_path_start(r.node, source).min(r.name.start_byte());
    let raw = if r.kind == ReferenceKind::Implementation {
        String::from_utf8_lossy(&source[r.name.byte_range()]).into_owned()
    } else {
        String::from_utf8_lossy(&source[start..r.name.end_byte()]).into_owned()
    };
    let collapsed: String = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    // Keywords the grammar keeps inside a call chain: `new Foo`, Swift's `try x.f()`.
    let mut trimmed = collapsed.as_str();
    for kw in ["new ", "try? ", "try! ", "try ", "await "] {
        trimmed = trimmed.strip_prefix(kw).unwrap_or(trimmed);
    }
    let trimmed = trimmed.trim();
    let mut s = trimmed.to_string();
    if s.len() > MAX_CALLEE_LEN {
        let cut = s.len() - MAX_CALLEE_LEN;
        let cut = (cut..s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(s.len());
        s = s[cut..].to_string();
    }
    s
}

/// Where the path or receiver before a name in a macro's token tree starts: tokens there are
/// siblings, not an expression (`shop::pricing::apply_discount(` and `$x.len(`).
fn token_path_start(node: Node, source: &[u8]) -> usize {
    let mut start = node;
    // A path or receiver ends right before the node with `::` or `.`: where the text does not,
    // there is none, and the parent is not asked for: tree-sitter finds it by walking down
    // from the root (2 to 3% of a full build's samples on the 2.8M-line tree).
    let before = source
        .get(..node.start_byte())
        .unwrap_or_default()
        .trim_ascii_end();
    let after_separator = before.ends_with(b"::") || before.ends_with(b".");
    if after_separator && node.parent().is_some_and(|p| p.kind() == "token_tree") {
        while let Some(sep) = start.prev_sibling().filter(|p| matches!(p.kind(), "::" | ".")) {
            match sep.prev_sibling() {
                Some(part)
                    if matches!(
                        part.kind(),
                        "identifier" | "self" | "crate" | "super" | "metavariable"
                    ) =>
                {
                    start = part;
                }
                _ => break,
            }
        }
    }
    start.start_byte()
}

/// The receiver or path before the name: `self.session` for `self.session.send`.
fn receiver_of(callee: &str, name: &str) -> Option<String> {
    let before = callee.strip_suffix(name)?;
    let trimmed = before
        .trim_end()
        .trim_end_matches("::")
        .trim_end_matches(':')
        .trim_end_matches("?->")
        .trim_end_matches("->")
        .trim_end_matches('\\')
        .trim_end_matches("?.")
        .trim_end_matches("&.")
        .trim_end_matches('.')
        .trim_end()
        .trim_start_matches('\\');
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receiver_is_the_path_before_the_name() {
        assert_eq!(
            receiver_of("self.session.send", "send").as_deref(),
            Some("self.session")
        );
        assert_eq!(receiver_of("Vec::new", "new").as_deref(), Some("Vec"));
        assert_eq!(receiver_of("p->next", "next").as_deref(), Some("p"));
        assert_eq!(receiver_of("a?.b", "b").as_deref(), Some("a"));
        assert_eq!(receiver_of("logger&.warn", "warn").as_deref(), Some("logger"));
        assert_eq!(receiver_of("$a?->b?->m", "m").as_deref(), Some("$a?->b"));
        assert_eq!(receiver_of("\\App\\fmt", "fmt").as_deref(), Some("App"));
        assert_eq!(receiver_of("\\count", "count"), None);
        assert_eq!(receiver_of("item:restock", "restock").as_deref(), Some("item"));
        assert_eq!(receiver_of("send", "send"), None);
    }

    #[test]
    fn generics_are_stripped_from_containers() {
        assert_eq!(strip_generics("Foo<T>"), "Foo");
        assert_eq!(strip_generics("a::B<T, U>"), "a::B");
    }
}
