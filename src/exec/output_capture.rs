//! `OutputCapture`: a stream's bytes kept within a cap — the head and the tail, with a marker
//! that says how much was cut between them — as the report and the audit log hold them.

use std::collections::VecDeque;

use serde::Serialize;

#[derive(Debug)]
pub struct OutputCapture {
    cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
    hasher: blake3::Hasher,
}

/// The kept text of one stream.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema, PartialEq, Eq)]
pub struct CapturedOutput {
    /// Head and tail, lossily decoded, with `[... N bytes cut ...]` between them when cut.
    pub text: String,
    pub total_bytes: u64,
    pub truncated: bool,
    /// blake3 of the whole stream, cut parts included.
    pub blake3: String,
}

impl OutputCapture {
    /// Keeps at most `cap` bytes: half from the start, half from the end.
    pub fn new(cap: usize) -> OutputCapture {
        OutputCapture {
            cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            hasher: blake3::Hasher::new(),
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        self.hasher.update(bytes);
        let head_cap = self.cap / 2;
        if self.head.len() < head_cap {
            let take = (head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        let tail_cap = self.cap - head_cap;
        if bytes.len() >= tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    pub fn finish(self) -> CapturedOutput {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let cut = self.total - kept;
        let tail: Vec<u8> = self.tail.into_iter().collect();
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if cut > 0 {
            text.push_str(&format!("\n[... {cut} bytes cut ...]\n"));
        }
        text.push_str(&String::from_utf8_lossy(&tail));
        CapturedOutput {
            text,
            total_bytes: self.total,
            truncated: cut > 0,
            blake3: self.hasher.finalize().to_hex().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_with_a_marker() {
        let mut c = OutputCapture::new(8);
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnop", b"qr"] {
            c.push(chunk);
        }
        let out = c.finish();
        assert_eq!(out.total_bytes, 18);
        assert!(out.truncated);
        assert_eq!(out.text, "abcd\n[... 10 bytes cut ...]\nopqr");
        assert_eq!(
            out.blake3,
            blake3::hash(b"abcdefghijklmnopqr").to_hex().to_string()
        );
    }

    #[test]
    fn short_output_is_whole() {
        let mut c = OutputCapture::new(64);
        c.push(b"hello\n");
        c.push(b"world\n");
        let out = c.finish();
        assert_eq!(out.text, "hello\nworld\n");
        assert!(!out.truncated);
    }
}
