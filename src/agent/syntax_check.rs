//! `SyntaxCheck`: after every edit, the file is parsed with its language's tree-sitter
//! grammar and each `ERROR` or `MISSING` node is reported (line, column, the text around),
//! so the model learns at once that its edit broke the file.

use std::path::Path;

use crate::lang::LanguageRegistry;

pub struct SyntaxCheck;

const MAX_REPORTED: usize = 5;

impl SyntaxCheck {
    /// Syntax errors in `source`, the file at `path`; empty for a clean file or a language
    /// Kenning does not parse.
    pub fn errors(path: &Path, source: &str) -> Vec<String> {
        let Ok(registry) = LanguageRegistry::builtin() else {
            return Vec::new();
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some((_, spec)) = registry.for_file_name(&name) else {
            return Vec::new();
        };
        let mut parser = tree_sitter::Parser::new();
        if parser.set_language(&spec.grammar).is_err() {
            return Vec::new();
        }
        let Some(tree) = parser.parse(source, None) else {
            return Vec::new();
        };
        if !tree.root_node().has_error() {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut cursor = tree.walk();
        let mut stack = vec![tree.root_node()];
        while let Some(node) = stack.pop() {
            if out.len() >= MAX_REPORTED {
                break;
            }
            if node.is_error() || node.is_missing() {
                let p = node.start_position();
                let line = source.lines().nth(p.row).unwrap_or("").trim();
                let what = if node.is_missing() {
                    format!("missing `{}`", node.kind())
                } else {
                    "syntax error".to_string()
                };
                out.push(format!(
                    "{}:{}:{}: {what} near `{}`",
                    path.display(),
                    p.row + 1,
                    p.column + 1,
                    truncate(line, 80)
                ));
                continue;
            }
            if node.has_error() {
                let children: Vec<_> = node.children(&mut cursor).collect();
                stack.extend(children.into_iter().rev());
            }
        }
        out
    }
}

fn truncate(s: &str, n: usize) -> &str {
    &s[..s.floor_char_boundary(n)]
}
