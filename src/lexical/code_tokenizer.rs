//! `CodeTokenizer`: identifiers split the way programmers read them.
//!
//! A word is a run of letters, digits and `_` (and `-` between two letters, for kebab-case).
//! Each word yields its parts — split at `_`, `-`, lower→upper (`parseInput`), acronym ends
//! (`HTTPServer` → `http`, `server`) and letter↔digit boundaries (`u32` also gives `u`, `32`)
//! — and, when it has more than one part, the whole word too, at the position of its first
//! part. Everything is lowercased; a small list of language keywords is dropped; parts longer
//! than [`MAX_TOKEN_LEN`] bytes (hashes, base64) are dropped.
//!
//! Positions advance by part, so the phrase "http request" matches `XMLHttpRequest`.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// Longest token kept, in bytes.
pub const MAX_TOKEN_LEN: usize = 64;

/// Language keywords that carry no meaning in a search (identifiers in names are kept whole
/// in the `name_exact` field, so a function called `new` is still found).
const STOP: &[&str] = &[
    "and",
    "as",
    "async",
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "crate",
    "def",
    "default",
    "do",
    "elif",
    "else",
    "enum",
    "except",
    "export",
    "extends",
    "false",
    "final",
    "finally",
    "fn",
    "for",
    "from",
    "func",
    "function",
    "if",
    "impl",
    "import",
    "in",
    "interface",
    "is",
    "let",
    "mod",
    "mut",
    "new",
    "nil",
    "none",
    "not",
    "null",
    "or",
    "package",
    "pass",
    "private",
    "protected",
    "pub",
    "public",
    "raise",
    "ref",
    "return",
    "self",
    "static",
    "struct",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "use",
    "var",
    "void",
    "where",
    "while",
    "with",
    "yield",
];

/// The first letters of the stop words.
const STOP_FIRST_BYTES: &[u8] = b"abcdefilmnoprstuvwy";

/// Longest stop word, in bytes: longer tokens are never looked up.
const MAX_STOP_LEN: usize = 9;

/// Whether `token` (already lowercase) is a stop word.
pub fn is_stop_word(token: &str) -> bool {
    token.len() <= MAX_STOP_LEN && STOP_PACKED.binary_search(&pack_lower(token.as_bytes())).is_ok()
}

/// Whether `word` is a stop word in any case, without allocating.
fn is_stop_word_ci(word: &str) -> bool {
    // Cheap rejection first: this runs for every word of every indexed file.
    let first = word.as_bytes().first().map_or(0, |b| b.to_ascii_lowercase());
    if word.len() < 2 || word.len() > MAX_STOP_LEN || !STOP_FIRST_BYTES.contains(&first) || !word.is_ascii() {
        return false;
    }
    // Words of at most 9 ASCII bytes compare as integers.
    STOP_PACKED.binary_search(&pack_lower(word.as_bytes())).is_ok()
}

/// A short ASCII word, lowercased, as one integer: bytes in order, then the length, so
/// distinct words never collide.
fn pack_lower(word: &[u8]) -> u128 {
    let mut v: u128 = 0;
    for b in word {
        v = (v << 8) | u128::from(b.to_ascii_lowercase());
    }
    (v << 8) | word.len() as u128
}

/// `STOP` packed and sorted.
static STOP_PACKED: std::sync::LazyLock<Vec<u128>> = std::sync::LazyLock::new(|| {
    let mut v: Vec<u128> = STOP.iter().map(|w| pack_lower(w.as_bytes())).collect();
    v.sort_unstable();
    v
});

#[derive(Clone, Default)]
pub struct CodeTokenizer {
    /// Reused between texts: token strings keep their capacity.
    tokens: Vec<Token>,
}

pub struct CodeTokenStream<'a> {
    /// The live tokens: the tokenizer's buffer may hold more, from a longer earlier text.
    tokens: &'a mut [Token],
    /// Index of the current token plus one; 0 before the first `advance`.
    next: usize,
    /// Returned by `token()` out of sequence, so no call can panic.
    empty: Token,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream<'a> {
        // Tokens are overwritten in place: their strings keep their capacity from one text to
        // the next, instead of one allocation per token of every indexed file.
        let len = tokenize_reusing(text, &mut self.tokens);
        CodeTokenStream {
            tokens: &mut self.tokens[..len],
            next: 0,
            empty: Token::default(),
        }
    }
}

impl TokenStream for CodeTokenStream<'_> {
    fn advance(&mut self) -> bool {
        if self.next <= self.tokens.len() {
            self.next += 1;
        }
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        self.next
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .unwrap_or(&self.empty)
    }

    fn token_mut(&mut self) -> &mut Token {
        match self.next.checked_sub(1) {
            Some(i) if i < self.tokens.len() => &mut self.tokens[i],
            _ => &mut self.empty,
        }
    }
}

/// Tokenizes `text` into `out` (see the module doc).
pub fn tokenize(text: &str, out: &mut Vec<Token>) {
    let mut buf = Vec::new();
    let len = tokenize_reusing(text, &mut buf);
    buf.truncate(len);
    out.extend(buf);
}

/// Tokenizes into `buf`, overwriting its first tokens in place (their strings keep their
/// capacity) and growing it as needed; returns how many tokens are live.
fn tokenize_reusing(text: &str, buf: &mut Vec<Token>) -> usize {
    let mut len = 0usize;
    let mut push = |from: usize, to: usize, position: usize, position_length: usize, word: &str| {
        if len == buf.len() {
            buf.push(Token::default());
        }
        let t = &mut buf[len];
        t.offset_from = from;
        t.offset_to = to;
        t.position = position;
        t.position_length = position_length;
        t.text.clear();
        if word.is_ascii() {
            t.text.push_str(word);
            t.text.make_ascii_lowercase();
        } else {
            t.text.extend(word.chars().flat_map(char::to_lowercase));
        }
        len += 1;
    };
    let mut position = 0usize;
    let mut parts: Vec<(usize, usize)> = Vec::new();
    for_each_word(text, |start, end| {
        let word = &text[start..end];
        parts.clear();
        split_word_into(word, &mut parts);
        parts.retain(|&(s, e)| e - s <= MAX_TOKEN_LEN && !is_stop_word_ci(&word[s..e]));
        let whole_differs = parts.len() > 1 || (parts.len() == 1 && parts[0] != (0, word.len()));
        if whole_differs && word.len() <= MAX_TOKEN_LEN && !is_stop_word_ci(word) {
            push(start, end, position, parts.len().max(1), word);
        }
        for (i, &(s, e)) in parts.iter().enumerate() {
            push(start + s, start + e, position + i, 1, &word[s..e]);
        }
        position += parts.len().max(1);
    });
    len
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Calls `f` with the byte range of each word: runs of letters, digits and `_`, joined
/// across `-` between letters.
fn for_each_word(text: &str, mut f: impl FnMut(usize, usize)) {
    let mut start: Option<usize> = None;
    let mut chars = text.char_indices().peekable();
    let mut prev: Option<char> = None;
    while let Some((i, c)) = chars.next() {
        let word_char = if c.is_ascii() {
            c.is_ascii_alphanumeric() || c == '_'
        } else {
            is_word_char(c)
        };
        let joins_kebab = c == '-'
            && start.is_some()
            && prev.is_some_and(char::is_alphabetic)
            && chars.peek().is_some_and(|(_, n)| n.is_alphabetic());
        if word_char || joins_kebab {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            f(s, i);
        }
        prev = Some(c);
    }
    if let Some(s) = start {
        f(s, text.len());
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Other,
}

fn class(c: char) -> Class {
    if c.is_ascii_digit() || c.is_numeric() {
        Class::Digit
    } else if c.is_uppercase() {
        Class::Upper
    } else if c.is_alphabetic() {
        Class::Lower
    } else {
        Class::Other
    }
}

/// Splits one word into parts (byte ranges within the word); `_` and `-` separate and are
/// dropped. A part that mixes letters and digits is kept and also split (`u32`, `u`, `32`).
pub fn split_word(word: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    split_word_into(word, &mut out);
    out
}

fn split_word_into(word: &str, out: &mut Vec<(usize, usize)>) {
    // Most words are short ASCII identifiers without separators or case changes.
    if word.bytes().all(|b| b.is_ascii_lowercase()) {
        out.push((0, word.len()));
        return;
    }
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut pieces: Vec<(usize, usize)> = Vec::new();
    let mut start: Option<usize> = None;
    for (k, &(i, c)) in chars.iter().enumerate() {
        if c == '_' || c == '-' {
            if let Some(s) = start.take() {
                pieces.push((s, i));
            }
            continue;
        }
        let Some(s) = start else {
            start = Some(i);
            continue;
        };
        let prev = class(chars[k - 1].1);
        let cur = class(c);
        let next = chars.get(k + 1).map(|&(_, n)| class(n));
        let boundary = (prev == Class::Lower && cur == Class::Upper)
            || (prev == Class::Upper && cur == Class::Upper && next == Some(Class::Lower))
            || (prev == Class::Digit && cur != Class::Digit && cur != Class::Other);
        if boundary {
            pieces.push((s, i));
            start = Some(i);
        }
    }
    if let Some(s) = start {
        pieces.push((s, word.len()));
    }
    // Letter→digit is a soft boundary: keep `u32` and add `u` and `32`.
    for (s, e) in pieces {
        out.push((s, e));
        let piece = &word[s..e];
        if let Some(d) = piece
            .char_indices()
            .find(|&(j, c)| j > 0 && class(c) == Class::Digit)
            .map(|(j, _)| j)
        {
            out.push((s, s + d));
            out.push((s + d, e));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        tokenize(text, &mut out);
        out.into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn splits_acronyms_and_camel_case() {
        assert_eq!(
            toks("HTTPServerError"),
            ["httpservererror", "http", "server", "error"]
        );
        assert_eq!(
            toks("XMLHttpRequest2"),
            ["xmlhttprequest2", "xml", "http", "request2", "request", "2"]
        );
        assert_eq!(toks("parseInput"), ["parseinput", "parse", "input"]);
    }

    #[test]
    fn splits_snake_kebab_and_digits() {
        assert_eq!(
            toks("parse_u32_be"),
            ["parse_u32_be", "parse", "u32", "u", "32", "be"]
        );
        assert_eq!(toks("max-file-size"), ["max-file-size", "max", "file", "size"]);
        assert_eq!(toks("x - y"), ["x", "y"]);
    }

    #[test]
    fn keeps_dunder_names_whole_and_drops_keywords() {
        assert_eq!(toks("def __init__(self):"), ["__init__", "init"]);
        assert_eq!(toks("pub fn new() -> Self"), Vec::<String>::new());
        assert_eq!(toks("register_hook"), ["register_hook", "register", "hook"]);
    }

    #[test]
    fn paths_split_into_segments() {
        assert_eq!(toks("src/requests/api.py"), ["src", "requests", "api", "py"]);
        assert_eq!(toks("os.path.join"), ["os", "path", "join"]);
    }

    #[test]
    fn positions_advance_by_part_so_phrases_match_inside_identifiers() {
        let mut out = Vec::new();
        tokenize("XMLHttpRequest sent", &mut out);
        let pos: Vec<(String, usize)> = out.into_iter().map(|t| (t.text, t.position)).collect();
        assert_eq!(
            pos,
            [
                ("xmlhttprequest".to_string(), 0),
                ("xml".into(), 0),
                ("http".into(), 1),
                ("request".into(), 2),
                ("sent".into(), 3)
            ]
        );
    }

    #[test]
    fn offsets_point_into_the_text_and_unicode_is_safe() {
        let text = "größe_Über über";
        let mut out = Vec::new();
        tokenize(text, &mut out);
        for t in &out {
            assert_eq!(text[t.offset_from..t.offset_to].to_lowercase(), t.text);
        }
        assert!(out.iter().any(|t| t.text == "über"));
    }

    #[test]
    fn stop_list_is_sorted_for_binary_search() {
        let mut sorted = STOP.to_vec();
        sorted.sort();
        assert_eq!(sorted, STOP);
        for w in STOP {
            assert!(w.len() >= 2 && w.len() <= MAX_STOP_LEN, "{w}");
            assert!(STOP_FIRST_BYTES.contains(&w.as_bytes()[0]), "{w}");
            assert!(is_stop_word_ci(&w.to_uppercase()));
        }
        // Near misses are not stop words: prefixes, extensions, one letter off.
        for w in [
            "an",
            "asy",
            "asyncs",
            "returns",
            "retur",
            "selff",
            "zelf",
            "pubb",
            "continu",
            "continues",
        ] {
            assert!(!is_stop_word_ci(w), "{w}");
        }
    }

    #[test]
    fn a_reused_stream_holds_only_the_latest_text() {
        let mut tok = CodeTokenizer::default();
        let texts = |tok: &mut CodeTokenizer, text: &str| {
            let mut stream = tok.token_stream(text);
            let mut out = Vec::new();
            while stream.advance() {
                out.push(stream.token().text.clone());
            }
            out
        };
        let long = texts(
            &mut tok,
            "parseInput HTTPServer register_hook many more words here",
        );
        assert!(long.len() > 8, "{long:?}");
        assert_eq!(texts(&mut tok, "getValue"), ["getvalue", "get", "value"]);
        let mut fresh = Vec::new();
        tokenize("getValue", &mut fresh);
        assert_eq!(
            fresh.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(),
            ["getvalue", "get", "value"]
        );
    }
}
