//! `FileParser`: one reusable tree-sitter parser (one per worker thread).

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use streaming_iterator::StreamingIterator;
use tree_sitter::{
    Node, ParseOptions, ParseState, Parser, QueryCursor, QueryCursorOptions, QueryCursorState, Tree,
};

use super::imports::ImportCollector;
use super::tags::TagCollector;
use crate::lang::{LanguageQueries, LanguageSpec};
use crate::symbols::{Diagnostic, DiagnosticKind, FileSymbols};

/// Caps the number of syntax errors reported per file; the count beyond it is still given.
const MAX_ERROR_WALK: usize = 10_000;

#[derive(Default)]
pub struct FileParser {
    parser: Parser,
}

/// Bounds on one file's parse: its wall-clock time (tree-sitter and the query pass) and the
/// nodes of its tree (the tree's memory grows with them). A file past either is not indexed.
/// Under a memory cap a large file's parse also stops when the process's resident set
/// reaches `max_resident_mib` while its tree grows (a 1 MB generated bundle's tree alone is
/// 30 MiB): the caller decides what then ([`ParseLimitHit::Memory`]).
#[derive(Debug, Clone, Copy)]
pub struct ParseLimits {
    pub max_time: Duration,
    pub max_nodes: u64,
    pub max_resident_mib: Option<u64>,
}

/// How many of tree-sitter's progress calls pass between two readings of the resident set
/// (each a read of `/proc/self/status`).
const RESIDENT_CHECK_EVERY: u32 = 16;

/// The start of the diagnostic of a file indexed as text because its parse would have taken
/// the build past its memory cap: the next build parses such a file again.
pub const OVER_CAP_DIAGNOSTIC: &str = "not parsed under the memory cap";

/// The bound a file's parse ran past, as a skip's detail names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseLimitHit {
    #[error("parsing ran past the {limit_ms} ms bound (--max-parse-ms)")]
    Time { limit_ms: u64 },
    #[error("its syntax tree has {nodes} nodes, over the {limit} bound (--max-tree-nodes)")]
    Nodes { nodes: u64, limit: u64 },
    #[error(
        "the process reached {resident_mib} MiB while its syntax tree grew, at the {limit_mib} MiB bound the memory cap leaves"
    )]
    Memory { resident_mib: u64, limit_mib: u64 },
}

impl ParseLimitHit {
    /// A file's record when its parse stopped at the memory bound for good: no symbols, one
    /// diagnostic saying why, and the text still indexed lexically.
    pub fn over_cap_symbols(&self, cap_mib: u64) -> FileSymbols {
        failed(
            Vec::new(),
            format!(
                "{OVER_CAP_DIAGNOSTIC} of {cap_mib} MiB ({self}); indexed as text, parsed again by the next build"
            ),
        )
    }
}

impl FileParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `source` as `spec`'s language and extracts its symbols. Never fails: problems
    /// become diagnostics in the result.
    pub fn parse(&mut self, spec: &LanguageSpec, source: &[u8]) -> FileSymbols {
        // Without limits there is no bound to hit.
        self.parse_within(spec, source, None).unwrap_or_default()
    }

    /// [`FileParser::parse`] under `limits`: a file past one is refused with the bound it hit
    /// (and the parser is reset for the next file); otherwise the same result.
    pub fn parse_within(
        &mut self,
        spec: &LanguageSpec,
        source: &[u8],
        limits: Option<&ParseLimits>,
    ) -> Result<FileSymbols, ParseLimitHit> {
        let started = Instant::now();
        let cleaned;
        let source = match spec.name.as_str() {
            "cpp" | "c" => {
                cleaned = blank_export_macros(source);
                cleaned.as_ref()
            }
            _ => source,
        };
        let mut diagnostics: Vec<Diagnostic> = utf8_diagnostic(source).into_iter().collect();
        let mut over_memory = None;
        let Some(tree) = self.tree(spec, source, started, limits, &mut over_memory) else {
            if let Some(hit) = over_memory {
                return Err(hit);
            }
            if let Some(l) = limits.filter(|l| over_time(started, l)) {
                return Err(time_hit(l));
            }
            let message = format!("tree-sitter could not parse the file as {}", spec.name);
            return Ok(failed(diagnostics, message));
        };
        let root = tree.root_node();
        if let Some(l) = limits {
            let nodes = root.descendant_count() as u64;
            if nodes > l.max_nodes {
                return Err(ParseLimitHit::Nodes {
                    nodes,
                    limit: l.max_nodes,
                });
            }
        }
        if root.has_error() {
            diagnostics.push(syntax_diagnostic(root));
        }
        let queries = match spec.queries() {
            Ok(q) => q,
            Err(e) => return Ok(failed(diagnostics, e.to_string())),
        };
        let (tags, imports) = collect(spec, queries, root, source, started, limits);
        if let Some(l) = limits.filter(|l| over_time(started, l)) {
            return Err(time_hit(l));
        }
        let (definitions, references, bindings) = tags.finish(&spec.separator, source);
        let (imports, package) = imports.finish();
        Ok(FileSymbols {
            definitions,
            references,
            imports,
            bindings,
            package,
            diagnostics,
        })
    }

    /// The syntax tree, or `None` when tree-sitter gives up or a bound cancels it (the parser
    /// is then reset: a cancelled parse would otherwise resume on the next call); a stop at
    /// the memory bound is put in `over_memory`.
    fn tree(
        &mut self,
        spec: &LanguageSpec,
        source: &[u8],
        started: Instant,
        limits: Option<&ParseLimits>,
        over_memory: &mut Option<ParseLimitHit>,
    ) -> Option<Tree> {
        self.parser.set_language(&spec.grammar).ok()?;
        let Some(l) = limits else {
            return self.parser.parse(source, None);
        };
        let mut calls = 0u32;
        let mut within = |_: &ParseState| {
            if started.elapsed() > l.max_time {
                return ControlFlow::Break(());
            }
            calls = calls.wrapping_add(1);
            if let Some(limit_mib) = l.max_resident_mib
                && calls.is_multiple_of(RESIDENT_CHECK_EVERY)
                && let Some(resident_mib) = crate::util::ResidentMemory::current_mib()
                && resident_mib >= limit_mib
            {
                *over_memory = Some(ParseLimitHit::Memory {
                    resident_mib,
                    limit_mib,
                });
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        };
        let options = ParseOptions::new().progress_callback(&mut within);
        let mut read = |at: usize, _: tree_sitter::Point| source.get(at..).unwrap_or(&[]);
        let tree = self.parser.parse_with_options(&mut read, None, Some(options));
        if tree.is_none() {
            self.parser.reset();
        }
        tree
    }
}

/// Where `source` stops being UTF-8, if it does (names are then decoded lossily).
fn utf8_diagnostic(source: &[u8]) -> Option<Diagnostic> {
    let e = std::str::from_utf8(source).err()?;
    Some(Diagnostic {
        kind: DiagnosticKind::InvalidUtf8,
        line: line_of(source, e.valid_up_to()),
        message: format!("invalid UTF-8 at byte {}; names decoded lossily", e.valid_up_to()),
    })
}

/// A file that yields no symbols: its diagnostics and why.
fn failed(mut diagnostics: Vec<Diagnostic>, message: String) -> FileSymbols {
    diagnostics.push(Diagnostic {
        kind: DiagnosticKind::ParseFailed,
        line: 0,
        message,
    });
    FileSymbols {
        diagnostics,
        ..FileSymbols::default()
    }
}

fn over_time(started: Instant, l: &ParseLimits) -> bool {
    started.elapsed() > l.max_time
}

fn time_hit(l: &ParseLimits) -> ParseLimitHit {
    ParseLimitHit::Time {
        limit_ms: l.max_time.as_millis() as u64,
    }
}

/// Runs the language's queries over the tree into tags and imports; the time bound stops it.
fn collect<'t>(
    spec: &LanguageSpec,
    queries: &LanguageQueries,
    root: Node<'t>,
    source: &[u8],
    started: Instant,
    limits: Option<&ParseLimits>,
) -> (TagCollector<'t>, ImportCollector) {
    let mut tags = TagCollector::default();
    let mut imports = ImportCollector::new(spec.import_style);
    let mut cursor = QueryCursor::new();
    let mut in_time = |_: &QueryCursorState| match limits.is_some_and(|l| over_time(started, l)) {
        true => ControlFlow::Break(()),
        false => ControlFlow::Continue(()),
    };
    let options = QueryCursorOptions::new().progress_callback(&mut in_time);
    let mut matches = cursor.matches_with_options(&queries.query, root, source, options);
    while let Some(m) = matches.next() {
        if !imports.accept(m, &queries.captures, source) {
            tags.accept(m, &queries.captures);
        }
    }
    (tags, imports)
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
    use super::*;

    /// A large file's parse stops once the process's resident set reaches the bound (here
    /// one below what the process already holds), says so, and leaves the parser fit for the
    /// next file; without the bound the same file parses whole.
    #[test]
    fn a_parse_stops_at_the_resident_memory_bound() {
        let Some(now) = crate::util::ResidentMemory::current_mib() else {
            return; // not Linux: nothing to read
        };
        let registry = crate::lang::LanguageRegistry::builtin().unwrap();
        let js = registry.by_name("javascript").unwrap();
        let source: String = (0..4000)
            .map(|i| format!("function f{i}(a, b) {{ return [a + {i}, b * {i}, {{ k{i}: a }}]; }}\n"))
            .collect();
        let mut parser = FileParser::new();
        let bounded = ParseLimits {
            max_time: Duration::from_secs(60),
            max_nodes: u64::MAX,
            max_resident_mib: Some(now.saturating_sub(1).max(1)),
        };
        let hit = parser
            .parse_within(js, source.as_bytes(), Some(&bounded))
            .unwrap_err();
        assert!(
            matches!(hit, ParseLimitHit::Memory { resident_mib, limit_mib } if resident_mib >= limit_mib),
            "{hit}"
        );
        let record = hit.over_cap_symbols(128);
        assert!(record.definitions.is_empty());
        assert!(record.diagnostics[0].message.starts_with(OVER_CAP_DIAGNOSTIC));
        assert_eq!(record.diagnostics[0].kind, DiagnosticKind::ParseFailed);
        let free = ParseLimits {
            max_resident_mib: None,
            ..bounded
        };
        let whole = parser.parse_within(js, source.as_bytes(), Some(&free)).unwrap();
        assert!(
            whole.definitions.len() >= 4000,
            "every function, after the stopped parse"
        );
    }

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
