//! `RecordCodec`: how a segment stores one file's symbol record. Segments of format 5 hold
//! each record as its columns ([`RecordColumns`]) in postcard, compressed with zstd on its
//! own (so one record is still read and checked without the others). Format 4 held postcard
//! of the record as it is, compressed the same way, and format 3 the postcard bytes raw;
//! both are still read, and a compaction writes their records as format 5.
//!
//! On the 2.8M-line tree of `benches/scale_curve.sh` the records take 18.6 MB as columns,
//! 29.9 MB in format 4 and 77.3 MB raw.

use super::record_columns::{self, RecordColumns};
use crate::symbols::FileSymbols;
use crate::util::{zstd_compress, zstd_decompress};

/// The magic of a segment whose records are zstd-compressed columns (written now).
pub(super) const MAGIC_COLUMNS: &[u8; 8] = b"KENSEG\0\x05";
/// The magic of a segment whose records are zstd-compressed postcard (written before; read).
pub(super) const MAGIC_ZSTD: &[u8; 8] = b"KENSEG\0\x04";
/// The magic of a segment whose records are raw postcard (written before; read).
pub(super) const MAGIC_RAW: &[u8; 8] = b"KENSEG\0\x03";

/// zstd's level for records (format 4, on a sample of 400 records: level 1 2.27x, 3 2.48x,
/// 9 2.54x; the whole tree's columns, before callees were derived: level 1 20.8 MB, 3 20.1 MB).
const LEVEL: i32 = 3;
/// The most bytes one record may decompress to (a record claiming more is damaged).
const MAX_RECORD: usize = 1 << 28;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RecordCodec {
    Raw,
    Zstd,
    Columns,
}

impl RecordCodec {
    /// The codec a segment's magic names, and the bytes after it.
    pub(super) fn of_segment(bytes: &[u8]) -> Option<(RecordCodec, &[u8])> {
        [
            (MAGIC_COLUMNS, RecordCodec::Columns),
            (MAGIC_ZSTD, RecordCodec::Zstd),
            (MAGIC_RAW, RecordCodec::Raw),
        ]
        .into_iter()
        .find_map(|(magic, codec)| bytes.strip_prefix(magic.as_slice()).map(|rest| (codec, rest)))
    }

    /// A record as segments are written now: its columns in postcard, then zstd.
    pub(super) fn encode(symbols: &FileSymbols) -> Result<Vec<u8>, String> {
        let raw = record_columns::encode(symbols).map_err(|e| e.to_string())?;
        zstd_compress(&raw, LEVEL)
    }

    /// A stored record decoded.
    pub(super) fn decode(self, stored: &[u8]) -> Result<FileSymbols, String> {
        match self {
            RecordCodec::Raw => postcard::from_bytes(stored).map_err(|e| e.to_string()),
            RecordCodec::Zstd => {
                let raw = zstd_decompress(stored, MAX_RECORD)?;
                postcard::from_bytes(&raw).map_err(|e| e.to_string())
            }
            RecordCodec::Columns => {
                let raw = zstd_decompress(stored, MAX_RECORD)?;
                postcard::from_bytes::<RecordColumns>(&raw)
                    .map_err(|e| e.to_string())?
                    .into_symbols()
            }
        }
    }

    /// A stored record in the codec segments are written with now (a compaction copying an
    /// older segment's records decodes and encodes them again; its own are kept as they are).
    pub(super) fn to_current(self, stored: &[u8]) -> Result<Option<Vec<u8>>, String> {
        match self {
            RecordCodec::Columns => Ok(None),
            RecordCodec::Raw | RecordCodec::Zstd => Self::encode(&self.decode(stored)?).map(Some),
        }
    }
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
    fn a_record_round_trips_and_older_ones_are_still_read() {
        let s = symbols();
        assert!(!s.definitions.is_empty());
        let stored = RecordCodec::encode(&s).expect("encode");
        assert_eq!(RecordCodec::Columns.decode(&stored).expect("decode"), s);
        let raw = postcard::to_stdvec(&s).expect("postcard");
        assert_eq!(RecordCodec::Raw.decode(&raw).expect("raw decode"), s);
        let format4 = zstd_compress(&raw, LEVEL).expect("compress");
        assert_eq!(RecordCodec::Zstd.decode(&format4).expect("format 4 decode"), s);
        for (codec, old) in [(RecordCodec::Raw, &raw), (RecordCodec::Zstd, &format4)] {
            let moved = codec.to_current(old).expect("encode").expect("some");
            assert_eq!(RecordCodec::Columns.decode(&moved).expect("decode"), s);
        }
        assert_eq!(RecordCodec::Columns.to_current(&stored), Ok(None));
    }

    #[test]
    fn damaged_bytes_are_an_error_not_a_panic() {
        let stored = RecordCodec::encode(&symbols()).expect("encode");
        for cut in [0, 3, stored.len() / 2, stored.len() - 1] {
            assert!(
                RecordCodec::Columns.decode(&stored[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        let mut flipped = stored.clone();
        let mid = flipped.len() / 2;
        flipped[mid] ^= 0x5a;
        // A flipped byte fails the frame or postcard, or decodes to something else; never panics.
        let _ = RecordCodec::Columns.decode(&flipped);
        assert!(RecordCodec::Columns.decode(b"not zstd at all").is_err());
    }
}
