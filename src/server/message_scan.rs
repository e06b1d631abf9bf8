//! `MessageScan`: one pass over the bytes of an incoming MCP message, fed in chunks as they
//! arrive, that learns what an answer to a refused message needs without parsing it: its size,
//! how deep it nests, and the `id` of the top-level object. It holds a few bytes whatever the
//! message's size, so a line too long to keep, too deep to parse or not UTF-8 still gets an
//! answer with its id.
//!
//! Invariants: memory is bounded (a key is kept up to [`KEY_KEPT`] bytes, the id's text up to
//! [`ID_KEPT`]); the scan never fails, it only learns less from broken input; strings are
//! skipped with their escapes, so brackets and quotes inside them count for nothing.

use rmcp::model::RequestId;

/// Bytes of a top-level key kept: enough to tell `id`, `method`, `result` and `error` apart.
const KEY_KEPT: usize = 8;

/// Bytes of the id's JSON text kept; a longer id is not read back.
const ID_KEPT: usize = 256;

/// What a message says about itself before it is parsed.
#[derive(Debug, Default)]
pub struct MessageScan {
    bytes: usize,
    depth: usize,
    deepest: usize,
    in_string: bool,
    escaped: bool,
    /// The message is an object, still open.
    top_object: bool,
    /// At depth 1, the next string is a key.
    expect_key: bool,
    key: Option<Vec<u8>>,
    /// The key just read is `id`: its value is being kept.
    id_text: Option<Vec<u8>>,
    key_was_id: bool,
    id: Option<RequestId>,
    /// A top-level `result` or `error`: the message is an answer, not a request.
    is_answer: bool,
}

impl MessageScan {
    /// Scans the next `chunk` of the message.
    pub fn feed(&mut self, chunk: &[u8]) {
        self.bytes = self.bytes.saturating_add(chunk.len());
        for &b in chunk {
            self.byte(b);
        }
    }

    /// Bytes fed so far.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The most levels of arrays and objects open at once.
    pub fn deepest(&self) -> usize {
        self.deepest
    }

    /// The top-level `id`, when the message is a request that has a readable one (a number or
    /// a string); never the id of an answer from the client, which is not ours to answer.
    pub fn id(&self) -> Option<RequestId> {
        self.id.clone().filter(|_| !self.is_answer)
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            self.string_byte(b);
            return;
        }
        if let Some(text) = &mut self.id_text
            && !matches!(b, b',' | b'}' if self.depth == 1)
        {
            keep(text, b, ID_KEPT);
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.top_object && self.expect_key {
                    self.key = Some(Vec::new());
                }
            }
            b'{' | b'[' => {
                // Only the first value is the message; whatever follows it makes a parse
                // error, and its keys are not the message's.
                let first = self.deepest == 0;
                self.depth += 1;
                self.deepest = self.deepest.max(self.depth);
                if first {
                    self.top_object = b == b'{';
                    self.expect_key = self.top_object;
                }
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.end_value();
                    self.top_object = false;
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b',' if self.depth == 1 => {
                self.end_value();
                self.expect_key = true;
            }
            b':' if self.depth == 1 && self.top_object => {
                self.expect_key = false;
                if self.key_was_id {
                    self.id_text = Some(Vec::new());
                }
            }
            _ => {}
        }
    }

    fn string_byte(&mut self, b: u8) {
        let closing = !self.escaped && b == b'"';
        self.escaped = !self.escaped && b == b'\\';
        if let Some(text) = &mut self.id_text {
            keep(text, b, ID_KEPT);
        }
        if !closing {
            if let Some(key) = &mut self.key {
                keep(key, b, KEY_KEPT);
            }
            return;
        }
        self.in_string = false;
        if let Some(key) = self.key.take() {
            self.key_was_id = key == b"id";
            self.is_answer |= key == b"result" || key == b"error";
        }
    }

    /// The value of a top-level key ended (at `,` or the closing `}`).
    fn end_value(&mut self) {
        if let Some(text) = self.id_text.take()
            && self.id.is_none()
            && text.len() < ID_KEPT
        {
            self.id = serde_json::from_slice::<RequestId>(text.trim_ascii()).ok();
        }
        self.key_was_id = false;
    }
}

fn keep(buf: &mut Vec<u8>, b: u8, cap: usize) {
    if buf.len() < cap {
        buf.push(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(parts: &[&[u8]]) -> MessageScan {
        let mut s = MessageScan::default();
        for p in parts {
            s.feed(p);
        }
        s
    }

    #[test]
    fn the_id_is_read_wherever_it_sits_in_the_top_level_object() {
        let s = scan(&[br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#]);
        assert_eq!(s.id(), Some(RequestId::Number(7)));
        let s = scan(&[br#"{"method":"x","params":{"id":1,"a":[{"id":2}]},"id":"ab\"c"}"#]);
        assert_eq!(s.id(), Some(RequestId::String("ab\"c".into())));
        let s = scan(&[br#" { "id" : 12 } "#]);
        assert_eq!(s.id(), Some(RequestId::Number(12)));
    }

    #[test]
    fn the_id_is_read_across_chunk_boundaries() {
        let text = br#"{"jsonrpc":"2.0","id":"req-42","method":"tools/call"}"#;
        for cut in 0..text.len() {
            let s = scan(&[&text[..cut], &text[cut..]]);
            assert_eq!(s.id(), Some(RequestId::String("req-42".into())), "cut at {cut}");
        }
    }

    #[test]
    fn nested_ids_strings_and_answers_are_not_taken_for_the_id() {
        assert_eq!(scan(&[br#"{"params":{"id":3}}"#]).id(), None);
        assert_eq!(scan(&[br#"{"a":"\"id\":4","b":1}"#]).id(), None);
        assert_eq!(scan(&[br#"[{"id":5}]"#]).id(), None);
        assert_eq!(scan(&[br#"{"id":6,"result":{}}"#]).id(), None);
        assert_eq!(scan(&[br#"{"id":{"x":1},"method":"m"}"#]).id(), None);
        assert_eq!(scan(&[br#"{"id":1.5,"method":"m"}"#]).id(), None);
    }

    #[test]
    fn depth_counts_arrays_and_objects_outside_strings() {
        let s = scan(&[b"{\"a\":[[[\"[[[[\"]]]}"]);
        assert_eq!(s.deepest(), 4);
        let deep = [b"[".repeat(100_000), b"]".repeat(100_000)].concat();
        let s = scan(&[&deep]);
        assert_eq!(s.deepest(), 100_000);
        assert_eq!(s.bytes(), 200_000);
    }

    #[test]
    fn a_truncated_or_invalid_message_still_gives_its_id() {
        assert_eq!(
            scan(&[br#"{"jsonrpc":"2.0","id":12,"#]).id(),
            Some(RequestId::Number(12))
        );
        let mut bad = br#"{"id":9,"method":"tools/call","params":{"q":""#.to_vec();
        bad.extend_from_slice(b"\xff\xfe\"}}");
        assert_eq!(scan(&[&bad]).id(), Some(RequestId::Number(9)));
    }
}
