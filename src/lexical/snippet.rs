//! `Snippet`: the lines of a hit that show why it matched, with matched terms marked.

use serde::Serialize;

use super::tokenize;

/// Marks around a matched term in snippet text.
pub const MARK_OPEN: &str = "**";
pub const MARK_CLOSE: &str = "**";

#[derive(Debug, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct Snippet {
    /// 1-based line of the first snippet line.
    pub line: u32,
    /// Up to `max_lines` lines, matched terms wrapped in `**`.
    pub text: String,
}

impl Snippet {
    /// Picks, within lines `start..=end` of `text`, the lines with the most query terms (the
    /// first line when none match), keeps up to `max_lines` of them in order, and marks terms.
    pub fn build(text: &str, start: u32, end: u32, terms: &[String], max_lines: usize) -> Option<Snippet> {
        let from = start.max(1);
        let lines: Vec<(u32, &str)> = text
            .lines()
            .enumerate()
            .skip(from as usize - 1)
            .take((end.max(start).saturating_sub(from) + 1) as usize)
            .map(|(i, l)| (i as u32 + 1, l))
            .collect();
        let first = *lines.first()?;
        // A term is a lowercased token of the text, so a line whose lowercased text holds no
        // term as a substring has no match: only the others are tokenized (a file-grain hit
        // spans the whole file).
        let mut lower = String::new();
        let mut scored: Vec<(usize, u32, &str)> = lines
            .iter()
            .filter(|&&(_, l)| {
                lower.clear();
                if l.is_ascii() {
                    lower.push_str(l);
                    lower.make_ascii_lowercase();
                } else {
                    lower.extend(l.chars().flat_map(char::to_lowercase));
                }
                terms.iter().any(|t| lower.contains(t.as_str()))
            })
            .map(|&(n, l)| (matched_ranges(l, terms).len(), n, l))
            .filter(|(hits, _, _)| *hits > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(max_lines.max(1));
        scored.sort_by_key(|(_, n, _)| *n);
        if scored.is_empty() {
            return Some(Snippet {
                line: first.0,
                text: first.1.trim_end().to_string(),
            });
        }
        let text = scored
            .iter()
            .map(|(_, _, l)| mark(l.trim_end(), terms))
            .collect::<Vec<_>>()
            .join("\n");
        Some(Snippet {
            line: scored[0].1,
            text,
        })
    }
}

/// Byte ranges of tokens in `line` that are query terms (parts or whole identifiers).
fn matched_ranges(line: &str, terms: &[String]) -> Vec<(usize, usize)> {
    let mut toks = Vec::new();
    tokenize(line, &mut toks);
    let mut ranges: Vec<(usize, usize)> = toks
        .into_iter()
        .filter(|t| terms.contains(&t.text))
        .map(|t| (t.offset_from, t.offset_to))
        .collect();
    ranges.sort();
    // Keep outermost ranges (a whole identifier covers its parts).
    let mut out: Vec<(usize, usize)> = Vec::new();
    for r in ranges {
        match out.last_mut() {
            Some(last) if r.0 < last.1 => last.1 = last.1.max(r.1),
            _ => out.push(r),
        }
    }
    out
}

fn mark(line: &str, terms: &[String]) -> String {
    let mut out = String::with_capacity(line.len() + 16);
    let mut at = 0;
    for (s, e) in matched_ranges(line, terms) {
        out.push_str(&line[at..s]);
        out.push_str(MARK_OPEN);
        out.push_str(&line[s..e]);
        out.push_str(MARK_CLOSE);
        at = e;
    }
    out.push_str(&line[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_terms_in_the_best_lines() {
        let text = "def register_hook(self, event, hook):\n    \"\"\"Register.\"\"\"\n    self.hooks[event].append(hook)\n";
        let terms = vec!["hook".to_string(), "register".to_string()];
        let s = Snippet::build(text, 1, 3, &terms, 1).unwrap();
        assert_eq!(s.line, 1);
        assert_eq!(s.text, "def **register**_**hook**(self, event, **hook**):");
    }

    #[test]
    fn falls_back_to_the_first_line() {
        let s = Snippet::build("a\nb\nc\n", 2, 3, &["zzz".to_string()], 2).unwrap();
        assert_eq!((s.line, s.text.as_str()), (2, "b"));
        assert!(Snippet::build("a\n", 5, 6, &[], 1).is_none());
    }
}
