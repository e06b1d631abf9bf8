//! `RecordCodec`: how a segment stores one file's symbol record. Segments of format 4 hold
//! each record as postcard compressed with zstd on its own (so one record is still read and
//! checked without the others); format 3 held the postcard bytes raw, and is still read.
//!
//! On the 2.8M-line tree of `benches/scale_curve.sh` the records compress 2.57x one by one
//! (77.5 to 30.1 MB), where the whole segment would compress 3.0x.

use crate::symbols::FileSymbols;
use crate::util::{zstd_compress, zstd_decompress};

/// The magic of a segment whose records are zstd-compressed postcard (written now).
pub(super) const MAGIC_ZSTD: &[u8; 8] = b"KENSEG\0\x04";
/// The magic of a segment whose records are raw postcard (written before; read).
pub(super) const MAGIC_RAW: &[u8; 8] = b"KENSEG\0\x03";

/// zstd's level for records (on a sample of 400 records: level 1 2.27x, 3 2.48x, 9 2.54x).
const LEVEL: i32 = 3;
/// The most bytes one record may decompress to (a record claiming more is damaged).
const MAX_RECORD: usize = 1 << 28;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RecordCodec {
    Raw,
    Zstd,
}

impl RecordCodec {
    /// The codec a segment's magic names, and the bytes after it.
    pub(super) fn of_segment(bytes: &[u8]) -> Option<(RecordCodec, &[u8])> {
        if let Some(rest) = bytes.strip_prefix(MAGIC_ZSTD.as_slice()) {
            return Some((RecordCodec::Zstd, rest));
        }
        bytes
            .strip_prefix(MAGIC_RAW.as_slice())
            .map(|rest| (RecordCodec::Raw, rest))
    }

    /// A record as segments are written now: postcard, then zstd.
    pub(super) fn encode(symbols: &FileSymbols) -> Result<Vec<u8>, String> {
        let raw = postcard::to_stdvec(symbols).map_err(|e| e.to_string())?;
        compress(&raw)
    }

    /// A stored record decoded.
    pub(super) fn decode(self, stored: &[u8]) -> Result<FileSymbols, String> {
        match self {
            RecordCodec::Raw => postcard::from_bytes(stored).map_err(|e| e.to_string()),
            RecordCodec::Zstd => {
                let raw = decompress(stored)?;
                postcard::from_bytes(&raw).map_err(|e| e.to_string())
            }
        }
    }

    /// A stored record in the codec segments are written with now (a compaction copying a
    /// format 3 segment's records compresses them; nothing is decoded).
    pub(super) fn to_current(self, stored: &[u8]) -> Result<Option<Vec<u8>>, String> {
        match self {
            RecordCodec::Raw => compress(stored).map(Some),
            RecordCodec::Zstd => Ok(None),
        }
    }
}

fn compress(raw: &[u8]) -> Result<Vec<u8>, String> {
    zstd_compress(raw, LEVEL)
}

fn decompress(stored: &[u8]) -> Result<Vec<u8>, String> {
    zstd_decompress(stored, MAX_RECORD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::LanguageRegistry;
    use crate::parse::FileParser;

    fn symbols() -> FileSymbols {
        let registry = LanguageRegistry::builtin().expect("registry");
        let python = registry.by_name("python").expect("python");
        let src = "import os\n\nclass Cart:\n    def total(self):\n        return os.path.join('a', 'b')\n";
        let mut parser = FileParser::new();
        parser.parse(python, src.as_bytes())
    }

    #[test]
    fn a_record_round_trips_and_a_raw_one_is_still_read() {
        let s = symbols();
        assert!(!s.definitions.is_empty());
        let stored = RecordCodec::encode(&s).expect("encode");
        assert_eq!(RecordCodec::Zstd.decode(&stored).expect("decode"), s);
        let raw = postcard::to_stdvec(&s).expect("postcard");
        assert_eq!(RecordCodec::Raw.decode(&raw).expect("raw decode"), s);
        let moved = RecordCodec::Raw
            .to_current(&raw)
            .expect("compress")
            .expect("some");
        assert_eq!(RecordCodec::Zstd.decode(&moved).expect("decode"), s);
        assert_eq!(RecordCodec::Zstd.to_current(&stored), Ok(None));
    }

    #[test]
    fn damaged_bytes_are_an_error_not_a_panic() {
        let stored = RecordCodec::encode(&symbols()).expect("encode");
        for cut in [0, 3, stored.len() / 2, stored.len() - 1] {
            assert!(RecordCodec::Zstd.decode(&stored[..cut]).is_err(), "cut at {cut}");
        }
        let mut flipped = stored.clone();
        let mid = flipped.len() / 2;
        flipped[mid] ^= 0x5a;
        // A flipped byte fails the frame or postcard, or decodes to something else; never panics.
        let _ = RecordCodec::Zstd.decode(&flipped);
        assert!(RecordCodec::Zstd.decode(b"not zstd at all").is_err());
    }
}
