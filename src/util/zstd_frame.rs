//! One zstd frame per stored unit (a segment's record, a graph body's references): the
//! compression contexts are kept per thread, and a frame is decompressed to the size it
//! declares, never more than a caller's bound.

use std::cell::RefCell;

thread_local! {
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// `raw` as one zstd frame at `level` (its size recorded in the frame).
pub fn zstd_compress(raw: &[u8], level: i32) -> Result<Vec<u8>, String> {
    COMPRESSOR.with(|c| {
        let mut c = c.borrow_mut();
        let c = match &mut *c {
            Some(c) => c,
            slot => slot.insert(zstd::bulk::Compressor::new(level).map_err(|e| e.to_string())?),
        };
        c.set_compression_level(level).map_err(|e| e.to_string())?;
        c.compress(raw).map_err(|e| e.to_string())
    })
}

/// One zstd frame decompressed; an error where it is not one, declares no size or more than
/// `max` bytes, or does not hold what it declares.
pub fn zstd_decompress(stored: &[u8], max: usize) -> Result<Vec<u8>, String> {
    let size = zstd::zstd_safe::get_frame_content_size(stored)
        .map_err(|e| format!("not a zstd frame: {e}"))?
        .ok_or_else(|| "a zstd frame without its size".to_string())?;
    let size = usize::try_from(size)
        .ok()
        .filter(|s| *s <= max)
        .ok_or_else(|| format!("a zstd frame of {size} bytes (at most {max})"))?;
    DECOMPRESSOR.with(|d| {
        let mut d = d.borrow_mut();
        let d = match &mut *d {
            Some(d) => d,
            slot => slot.insert(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?),
        };
        let out = d.decompress(stored, size).map_err(|e| e.to_string())?;
        match out.len() == size {
            true => Ok(out),
            false => Err(format!("{} bytes decompressed, the frame says {size}", out.len())),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_damage_is_an_error() {
        let raw: Vec<u8> = (0..20_000u32).flat_map(|i| (i % 97).to_le_bytes()).collect();
        let z = zstd_compress(&raw, 3).expect("compress");
        assert!(z.len() * 4 < raw.len(), "{} of {}", z.len(), raw.len());
        assert_eq!(zstd_decompress(&z, raw.len()).expect("decompress"), raw);
        assert!(zstd_decompress(&z, raw.len() - 1).is_err(), "over the bound");
        assert!(zstd_decompress(&z[..z.len() / 2], raw.len()).is_err(), "cut");
        assert!(zstd_decompress(b"plain bytes", 1 << 20).is_err(), "not a frame");
        assert_eq!(
            zstd_decompress(&zstd_compress(&[], 3).expect("empty"), 0).expect("empty"),
            b""
        );
    }
}
