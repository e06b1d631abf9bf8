//! `FileParser`: one reusable tree-sitter parser (one per worker thread).

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, QueryCursor, Tree};

use super::imports::ImportCollector;
use super::tags::TagCollector;
use crate::lang::LanguageSpec;
use crate::symbols::{Diagnostic, DiagnosticKind, FileSymbols};

/// Caps the number of syntax errors reported per file; the count beyond it is still given.
const MAX_ERROR_WALK: usize = 10_000;

#[derive(Default)]
pub struct FileParser {
    parser: Parser,
}

impl FileParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `source` as `spec`'s language and extracts its symbols. Never fails: problems
    /// become diagnostics in the result.
    pub fn parse(&mut self, spec: &LanguageSpec, source: &[u8]) -> FileSymbols {
        let cleaned;
        let source = match spec.name.as_str() {
            "cpp" | "c" => {
                cleaned = blank_export_macros(source);
                cleaned.as_ref()
            }
            _ => source,
        };
        let mut diagnostics = Vec::new();
        if let Err(e) = std::str::from_utf8(source) {
            let line = line_of(source, e.valid_up_to());
            diagnostics.push(Diagnostic {
                kind: DiagnosticKind::InvalidUtf8,
                line,
                message: format!("invalid UTF-8 at byte {}; names decoded lossily", e.valid_up_to()),
            });
        }
        let Some(tree) = self.tree(spec, source) else {
            diagnostics.push(Diagnostic {
                kind: DiagnosticKind::ParseFailed,
                line: 0,
                message: format!("tree-sitter could not parse the file as {}", spec.name),
            });
            return FileSymbols {
                diagnostics,
                ..FileSymbols::default()
            };
        };
        let root = tree.root_node();
        if root.has_error() {
            diagnostics.push(syntax_diagnostic(root));
        }
        let queries = match spec.queries() {
            Ok(q) => q,
            Err(e) => {
                diagnostics.push(Diagnostic {
                    kind: DiagnosticKind::ParseFailed,
                    line: 0,
                    message: e.to_string(),
                });
                return FileSymbols {
                    diagnostics,
                    ..FileSymbols::default()
                };
            }
        };
        let mut tags = TagCollector::default();
        let mut imports = ImportCollector::new(spec.import_style);
        let mut cursor = QueryCursor::new();
        let mut matches = cursor.matches(&queries.query, root, source);
        while let Some(m) = matches.next() {
            if !imports.accept(m, &queries.captures, source) {
                tags.accept(m, &queries.captures);
            }
        }
        let (definitions, references, bindings) = tags.finish(&spec.separator, source);
        let (imports, package) = imports.finish();
        FileSymbols {
            definitions,
            references,
            imports,
            bindings,
            package,
            diagnostics,
        }
    }

    fn tree(&mut self, spec: &LanguageSpec, source: &[u8]) -> Option<Tree> {
        self.parser.set_language(&spec.grammar).ok()?;
        self.parser.parse(source, None)
    }
}

/// `class YAML_CPP_API Node : ..` / `struct LLVM_LIBRARY_VISIBILITY X {`: an export macro
/// between the keyword and the name hides the class from tree-sitter (it takes the macro for
/// the name). The macro is blanked with spaces, so every byte offset stays where it was.
fn blank_export_macros(source: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    static MACRO: std::sync::LazyLock<Option<regex::bytes::Regex>> = std::sync::LazyLock::new(|| {
        regex::bytes::Regex::new(
            r"\b(?:class|struct|union)[ \t]+([A-Z][A-Z0-9_]{2,})[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t\r\n]*[:{]",
        )
        .ok()
    });
    let Some(re) = MACRO.as_ref() else {
        return std::borrow::Cow::Borrowed(source);
    };
    let spans: Vec<std::ops::Range<usize>> = re
        .captures_iter(source)
        .filter_map(|c| c.get(1).map(|m| m.range()))
        .collect();
    if spans.is_empty() {
        return std::borrow::Cow::Borrowed(source);
    }
    let mut out = source.to_vec();
    for r in spans {
        out[r].fill(b' ');
    }
    std::borrow::Cow::Owned(out)
}

fn line_of(source: &[u8], byte: usize) -> u32 {
    let end = byte.min(source.len());
    let newlines = source[..end].iter().filter(|&&b| b == b'\n').count();
    u32::try_from(newlines + 1).unwrap_or(u32::MAX)
}

/// Counts ERROR and MISSING nodes and reports the first one's line.
fn syntax_diagnostic(root: Node) -> Diagnostic {
    let mut first: Option<u32> = None;
    let mut count = 0usize;
    let mut visited = 0usize;
    let mut cursor = root.walk();
    'walk: loop {
        let node = cursor.node();
        visited += 1;
        let is_error = node.is_error() || node.is_missing();
        if is_error {
            count += 1;
            first.get_or_insert(node.start_position().row as u32 + 1);
        }
        let descend = !is_error && node.has_error() && visited < MAX_ERROR_WALK;
        if descend && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    let line = first.unwrap_or(root.start_position().row as u32 + 1);
    Diagnostic {
        kind: DiagnosticKind::SyntaxError,
        line,
        message: format!(
            "{count} syntax error(s), first at line {line}; extracted what tree-sitter recovered"
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn export_macros_are_blanked_in_place() {
        let src = b"class YAML_CPP_API Node : public Base {};\nstruct Plain {};\nclass API X;\n";
        let out = super::blank_export_macros(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "class              Node : public Base {};\nstruct Plain {};\nclass API X;\n"
        );
    }
}
