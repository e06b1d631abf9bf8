//! A syntax node's source text and span: the two reads every extractor in `parse/` makes of a
//! node (tags, imports, doc comments), in one module none of them owns.

use tree_sitter::Node;

use crate::symbols::Span;

/// The node's source, lossily decoded (invalid UTF-8 is never an error here).
pub(super) fn text(node: Node, source: &[u8]) -> String {
    String::from_utf8_lossy(&source[node.byte_range()]).into_owned()
}

/// The node's bytes and 1-based lines.
pub(super) fn span(node: Node) -> Span {
    Span {
        start_byte: node.start_byte() as u32,
        end_byte: node.end_byte() as u32,
        start_line: node.start_position().row as u32 + 1,
        end_line: node.end_position().row as u32 + 1,
    }
}
