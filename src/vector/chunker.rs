//! `Chunker`: cuts a file into the pieces that get embedded, along its syntax tree.
//!
//! - One chunk per function, method or type body; a type's chunk holds its header, doc and
//!   fields (the lines its methods do not cover), so a method is not embedded twice.
//! - A body longer than `max_lines` is split into windows of `window` lines that overlap by
//!   `overlap`, cut preferably at a blank line.
//! - Small neighbouring top-level definitions are merged (constants, one-line functions).
//! - Code outside any definition (imports, module-level statements) is grouped in windows.
//! - Every chunk starts with a header line — path, container and signature — and its id is
//!   the hash of its text, so an unchanged chunk is never embedded twice.

use serde::{Deserialize, Serialize};

use crate::symbols::{FileSymbols, SymbolKind};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ChunkConfig {
    pub max_lines: u32,
    pub window: u32,
    pub overlap: u32,
    /// Definitions shorter than this are merged with their small neighbours...
    pub merge_below: u32,
    /// ...into chunks of at most this many lines.
    pub merge_up_to: u32,
}

impl Default for ChunkConfig {
    fn default() -> Self {
        ChunkConfig {
            max_lines: 80,
            window: 50,
            overlap: 8,
            merge_below: 6,
            merge_up_to: 40,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Chunk {
    /// 1-based, inclusive.
    pub start_line: u32,
    pub end_line: u32,
    /// The definition the chunk belongs to (index into the file's definitions), if one.
    pub symbol: Option<u32>,
    /// The text to embed: a header line, then the code.
    pub text: String,
    /// blake3 of `text`, truncated: the embedding cache key.
    pub hash: [u8; 16],
}

fn is_body(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Function
            | SymbolKind::Method
            | SymbolKind::Class
            | SymbolKind::Struct
            | SymbolKind::Enum
            | SymbolKind::Interface
            | SymbolKind::Trait
            | SymbolKind::Impl
            | SymbolKind::Macro
    )
}

/// Small definitions being merged: their line ranges and the first one's symbol.
type Pending = (Vec<(u32, u32)>, Option<u32>);

/// A run of lines that belongs to one definition (or to none).
struct Piece {
    lines: Vec<(u32, u32)>,
    symbol: Option<u32>,
    top_level: bool,
}

pub struct Chunker {
    config: ChunkConfig,
}

impl Chunker {
    pub fn new(config: ChunkConfig) -> Chunker {
        Chunker { config }
    }

    /// The chunks of one file. `module_label` names the file in headers (its path).
    pub fn chunk(&self, path: &str, source: &[u8], symbols: &FileSymbols) -> Vec<Chunk> {
        let text = String::from_utf8_lossy(source);
        let lines: Vec<&str> = text.lines().collect();
        let n = lines.len() as u32;
        if n == 0 {
            return Vec::new();
        }
        let defs = &symbols.definitions;
        let bodies: Vec<usize> = (0..defs.len()).filter(|&i| is_body(defs[i].kind)).collect();
        // Which body owns each line: the innermost (last in outer-first order) covering it.
        let mut owner: Vec<Option<u32>> = vec![None; n as usize];
        for &i in &bodies {
            let d = &defs[i];
            for l in d.span.start_line.max(1)..=d.span.end_line.min(n) {
                owner[(l - 1) as usize] = Some(i as u32);
            }
        }
        let mut pieces: Vec<Piece> = Vec::new();
        let mut l = 1u32;
        while l <= n {
            let o = owner[(l - 1) as usize];
            let start = l;
            while l <= n && owner[(l - 1) as usize] == o {
                l += 1;
            }
            let range = (start, l - 1);
            if (range.0..=range.1).all(|x| lines[(x - 1) as usize].trim().is_empty()) {
                continue;
            }
            match pieces.iter_mut().rev().find(|p| p.symbol == o && o.is_some()) {
                // A type's lines resume after a method: same chunk, with a gap.
                Some(p) => p.lines.push(range),
                None => pieces.push(Piece {
                    lines: vec![range],
                    symbol: o,
                    top_level: o.is_none_or(|i| defs[i as usize].container.is_empty()),
                }),
            }
        }
        pieces.sort_by_key(|p| p.lines[0].0);
        let mut chunks = Vec::new();
        let mut pending: Option<Pending> = None;
        for p in pieces {
            let size: u32 = p.lines.iter().map(|(a, b)| b - a + 1).sum();
            let blank = p
                .lines
                .iter()
                .all(|&(a, b)| (a..=b).all(|x| lines[(x - 1) as usize].trim().is_empty()));
            if blank {
                continue;
            }
            let small = p.top_level && p.symbol.is_some() && size < self.config.merge_below;
            if small {
                if let Some((ranges, _)) = pending.as_mut() {
                    let total: u32 = ranges.iter().map(|(a, b)| b - a + 1).sum();
                    if total + size <= self.config.merge_up_to {
                        ranges.extend(p.lines.iter().copied());
                        continue;
                    }
                }
                if let Some((ranges, sym)) = pending.take() {
                    self.emit(path, &lines, symbols, ranges, sym, &mut chunks);
                }
                pending = Some((p.lines, p.symbol));
                continue;
            }
            if let Some((ranges, sym)) = pending.take() {
                self.emit(path, &lines, symbols, ranges, sym, &mut chunks);
            }
            self.emit(path, &lines, symbols, p.lines, p.symbol, &mut chunks);
        }
        if let Some((ranges, sym)) = pending.take() {
            self.emit(path, &lines, symbols, ranges, sym, &mut chunks);
        }
        chunks
    }

    /// One piece as one chunk, or as overlapping windows when it is long.
    fn emit(
        &self,
        path: &str,
        lines: &[&str],
        symbols: &FileSymbols,
        ranges: Vec<(u32, u32)>,
        symbol: Option<u32>,
        out: &mut Vec<Chunk>,
    ) {
        let all: Vec<u32> = ranges.iter().flat_map(|&(a, b)| a..=b).collect();
        let header = match symbol.and_then(|i| symbols.definitions.get(i as usize)) {
            Some(d) => {
                let container = d.container.join(".");
                match container.is_empty() {
                    true => format!("{path} · {}", d.signature),
                    false => format!("{path} · {container} · {}", d.signature),
                }
            }
            None => format!("{path} · module"),
        };
        let c = &self.config;
        let mut start = 0usize;
        while start < all.len() {
            let mut end = (start + c.max_lines as usize).min(all.len());
            if end < all.len() {
                end = (start + c.window as usize).min(all.len());
                // Prefer to cut after a blank line in the last quarter of the window.
                let floor = start + (c.window as usize * 3) / 4;
                if let Some(b) = (floor..end)
                    .rev()
                    .find(|&k| lines[(all[k] - 1) as usize].trim().is_empty())
                {
                    end = b + 1;
                }
            }
            let mut text = header.clone();
            let mut prev: Option<u32> = None;
            for &l in &all[start..end] {
                if prev.is_some_and(|p| l != p + 1) {
                    text.push_str("\n    ...");
                }
                text.push('\n');
                text.push_str(lines[(l - 1) as usize]);
                prev = Some(l);
            }
            let mut hash = [0u8; 16];
            hash.copy_from_slice(&blake3::hash(text.as_bytes()).as_bytes()[..16]);
            out.push(Chunk {
                start_line: all[start],
                end_line: all[end - 1],
                symbol,
                text,
                hash,
            });
            if end >= all.len() {
                break;
            }
            start = end.saturating_sub(c.overlap as usize).max(start + 1);
        }
    }
}
