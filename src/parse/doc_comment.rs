//! Doc comments, docstrings and signature lines, the same rules for every language.

use tree_sitter::Node;

use super::node_text::text;

/// Longest signature kept; the rest is elided with `…`.
const MAX_SIGNATURE: usize = 300;
/// Longest doc kept, in bytes.
const MAX_DOC: usize = 4_000;

/// Nodes that may stand between a definition and its doc comment.
fn is_annotation(kind: &str) -> bool {
    matches!(
        kind,
        "attribute_item" | "decorator" | "annotation" | "marker_annotation" | "attribute_list" | "attribute"
    )
}

/// Nodes that wrap a definition without being one (`export function f`, `@dec def f`).
fn is_wrapper(kind: &str) -> bool {
    matches!(
        kind,
        "export_statement"
            | "decorated_definition"
            | "template_declaration"
            | "ambient_declaration"
            | "const_declaration"
            | "var_declaration"
            | "type_declaration"
            | "lexical_declaration"
            | "variable_declaration"
            | "expression_statement"
            | "body_statement"
    )
}

/// The doc of a definition: a Python-style docstring (first statement of the body is a
/// string), else the comments directly above it (no blank line between, but for one after a
/// `/** .. */` block).
pub(super) fn find(node: Node, source: &[u8]) -> Option<String> {
    docstring(node, source).or_else(|| leading_comments(node, source))
}

fn docstring(node: Node, source: &[u8]) -> Option<String> {
    let body = node.child_by_field_name("body")?;
    let first = body.named_child(0)?;
    if first.kind() != "expression_statement" || first.named_child_count() != 1 {
        return None;
    }
    let s = first.named_child(0)?;
    (s.kind() == "string").then(|| clean(&text(s, source)))
}

/// Whether the line above the one `start` is on could hold a comment or an annotation. Walking
/// to previous siblings costs time linear in the number of siblings, so the walk is skipped
/// when the text rules it out (most fields, variants and constants have no doc).
fn may_have_leading_comment(source: &[u8], start: usize) -> bool {
    let line_start = source[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let before = &source[..line_start];
    let trimmed_end = before
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    let prev_line_start = before[..trimmed_end]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let prev = &before[prev_line_start..trimmed_end];
    [&b"//"[..], b"#", b"*/", b"@", b"--", b"/*", b"]"]
        .iter()
        .any(|m| prev.windows(m.len()).any(|w| w == *m))
}

fn leading_comments(node: Node, source: &[u8]) -> Option<String> {
    if !may_have_leading_comment(source, node.start_byte()) {
        return None;
    }
    let mut anchor = node;
    let mut comments: Vec<String> = Vec::new();
    let mut top_line = node.start_position().row;
    loop {
        match anchor.prev_named_sibling() {
            Some(prev) if prev.kind().contains("comment") || prev.kind() == "haddock" => {
                // A JSDoc/Javadoc block documents what follows it across one blank line.
                let doc_block = comments.is_empty() && source[prev.byte_range()].starts_with(b"/**");
                let gap = if doc_block { 2 } else { 1 };
                if prev.end_position().row + gap < top_line {
                    break;
                }
                top_line = prev.start_position().row;
                comments.push(text(prev, source).trim_end().to_string());
                anchor = prev;
            }
            Some(prev) if is_annotation(prev.kind()) && comments.is_empty() => {
                top_line = prev.start_position().row;
                anchor = prev;
            }
            None if comments.is_empty() => match anchor.parent() {
                Some(p) if is_wrapper(p.kind()) => {
                    top_line = p.start_position().row;
                    anchor = p;
                }
                _ => break,
            },
            _ => break,
        }
    }
    if comments.is_empty() {
        return None;
    }
    comments.reverse();
    let doc = clean(&comments.join("\n"));
    (!doc.is_empty()).then_some(doc)
}

/// Strips comment markers and string quotes, dedents, and caps the length.
pub(super) fn clean(raw: &str) -> String {
    let unquoted = strip_string_quotes(raw.trim());
    let unquoted = &*xml_doc_tags(unquoted);
    let mut lines: Vec<&str> = unquoted
        .lines()
        .map(|l| {
            let l = l.trim();
            // `--` only before a space: Lua's `---`/`-- `, Haskell's `-- |`.
            let l = [
                "///", "//!", "//", "/**", "/*!", "/*", "#", "---", "-- |", "-- ^", "-- ",
            ]
            .iter()
            .find_map(|m| l.strip_prefix(m))
            .unwrap_or(l);
            let l = l.strip_suffix("*/").unwrap_or(l);
            let l = if l.starts_with("* ") || l == "*" {
                &l[1..]
            } else {
                l
            };
            l.trim()
        })
        .collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    truncate(lines.join("\n"), MAX_DOC)
}

/// C#'s XML doc comments read as text: `<summary>` and the like dropped, `<see cref="X"/>` as
/// `X`, `<param name="x">` as `x: `.
fn xml_doc_tags(s: &str) -> std::borrow::Cow<'_, str> {
    static TAGS: std::sync::LazyLock<Option<[regex::Regex; 3]>> = std::sync::LazyLock::new(|| {
        Some([
            regex::Regex::new(
                r#"<(?:see|seealso|paramref|typeparamref)\s+(?:cref|name|langword)="([^"]*)"\s*/>"#,
            )
            .ok()?,
            regex::Regex::new(r#"<(?:param|typeparam)\s+name="([^"]*)"\s*>"#).ok()?,
            regex::Regex::new(
                r"</?(?:summary|remarks|returns|value|para|example|param|typeparam|c|code|exception[^>]*)>",
            )
            .ok()?,
        ])
    });
    if !s.contains('<') {
        return s.into();
    }
    let Some([see, param, tag]) = TAGS.as_ref() else {
        return s.into();
    };
    let s = see.replace_all(s, "$1");
    let s = param.replace_all(&s, "$1: ");
    tag.replace_all(&s, "").into_owned().into()
}

fn strip_string_quotes(s: &str) -> &str {
    let s = s.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B', 'f', 'F']);
    for q in ["\"\"\"", "'''", "\"", "'"] {
        if let Some(inner) = s.strip_prefix(q).and_then(|x| x.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// The declaration up to its body, whitespace collapsed: `def get(url, params=None, **kwargs)`.
pub(super) fn signature(node: Node, source: &[u8]) -> String {
    // The signature ends at the body (the `body` field, or in grammars without one, as
    // Kotlin's, the first `*_body` child) or at a comment between the header and the body
    // (Ruby `class A # why`), whichever comes first.
    let body = node.child_by_field_name("body").map(|b| b.start_byte());
    let mut cursor = node.walk();
    let end = node
        .children(&mut cursor)
        .filter(|c| c.kind().contains("comment") || (body.is_none() && c.kind().ends_with("_body")))
        .map(|c| c.start_byte())
        .chain(body)
        .min()
        .filter(|&e| e > node.start_byte())
        .unwrap_or_else(|| {
            let bytes = &source[node.byte_range()];
            node.start_byte() + bytes.iter().position(|&b| b == b'\n').unwrap_or(bytes.len())
        });
    let raw = String::from_utf8_lossy(&source[node.start_byte()..end]);
    // Annotations on lines of their own (`@Test`, `#[Fact]`) are not the declaration.
    let mut raw: &str = &raw;
    while let Some((first, rest)) = raw.split_once('\n')
        && is_annotation_line(first)
        && !rest.trim().is_empty()
    {
        raw = rest;
    }
    let collapsed = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let trimmed = collapsed.trim_end_matches(['{', ':', ' ']).trim_end();
    truncate(trimmed.to_string(), MAX_SIGNATURE)
}

/// A line holding only annotations or attributes: `@Test`, `@Composable`, `[Fact]`, `#[X]`.
fn is_annotation_line(line: &str) -> bool {
    let l = line.trim();
    (l.starts_with('@') && !l.contains(" fun ") && !l.contains('{'))
        || (l.starts_with("#[") && l.ends_with(']'))
        || (l.starts_with('[') && l.ends_with(']'))
}

fn truncate(mut s: String, max: usize) -> String {
    if s.len() > max {
        let cut = (0..=max).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        s.truncate(cut);
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_strips_markers_and_quotes() {
        assert_eq!(clean("/// Sends it.\n/// Twice."), "Sends it.\nTwice.");
        assert_eq!(clean("/**\n * Adds.\n * @param a x\n */"), "Adds.\n@param a x");
        assert_eq!(
            clean("\"\"\"Return the thing.\n\n    More.\n    \"\"\""),
            "Return the thing.\n\nMore."
        );
        assert_eq!(clean("# a comment"), "a comment");
        assert_eq!(clean("-- | Parses it.\n-- Twice."), "Parses it.\nTwice.");
        assert_eq!(clean("--- Sends it."), "Sends it.");
        assert_eq!(
            clean(
                "/// <summary>\n/// Ships the <see cref=\"Order\"/>.\n/// </summary>\n/// <param name=\"id\">The id.</param>"
            ),
            "Ships the Order.\n\nid: The id."
        );
    }

    #[test]
    fn comment_guard_looks_at_the_previous_line() {
        let src = b"/// doc\nfn a() {}\n\nfn b() {}\n#[derive(Debug)]\nstruct C;\n";
        let at = |needle: &[u8]| src.windows(needle.len()).position(|w| w == needle).unwrap();
        assert!(may_have_leading_comment(src, at(b"fn a")));
        assert!(!may_have_leading_comment(src, at(b"fn b")));
        assert!(may_have_leading_comment(src, at(b"struct C")));
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        let s = truncate("ééé".to_string(), 3);
        assert_eq!(s, "é…");
    }
}
