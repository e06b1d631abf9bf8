//! `ByteString`: bytes serialized as one length-prefixed string (postcard: a varint length,
//! then the bytes), so that a reader can borrow them in place (`#[serde(borrow)] &[u8]`) and
//! decode them later, or never.

use serde::Serialize;

pub struct ByteString<'a>(pub &'a [u8]);

impl Serialize for ByteString<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_byte_string_is_borrowed_back_as_it_was_written() {
        #[derive(Serialize)]
        struct Out<'a>(u32, ByteString<'a>, u8);
        #[derive(serde::Deserialize)]
        struct In<'a>(u32, #[serde(borrow)] &'a [u8], u8);
        let bytes = postcard::to_stdvec(&Out(7, ByteString(&[1, 2, 3]), 9)).unwrap();
        assert_eq!(bytes, vec![7, 3, 1, 2, 3, 9]);
        let back: In = postcard::from_bytes(&bytes).unwrap();
        assert_eq!((back.0, back.1, back.2), (7, &[1u8, 2, 3][..], 9));
    }
}
