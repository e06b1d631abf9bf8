//! `GraphBodies` and the stored layout of a `CodeGraph`: one section of heads (every file's
//! path, language, module and definitions, with the PageRank and the aliases) and one byte
//! string per file for its body (references, imports, bindings and their resolution).
//!
//! A file's head holds its definitions as two byte strings: their names, then the rest. A
//! reader that needs only names, spans and centrality (`ken search`, `ken context`) decodes
//! every file's path, language and module and the ranks, reads names in place, and decodes a
//! file's definitions when they are asked for ([`CodeGraph::defs`]); the bodies stay bytes,
//! each decoded when asked for. A full decode decodes everything on every core. Both give the
//! same graph (tested).

use std::sync::Arc;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::code_graph::NO_RESOLUTION;
use super::{
    BindingNode, CodeGraph, DefNode, Deps, FileResolution, FileSkeleton, ImportTarget, Name, RefNode,
    Resolution, Resolver,
};
use crate::symbols::{Import, RepoPath};
use crate::util::ByteString;

/// Bytes a heads-only graph keeps its bodies in: the buffer read, or a part mapped in place.
pub type GraphBytes = Arc<dyn StoredBytes>;

/// A stored graph's bytes, whole, and a range of them copied out. A part mapped in place
/// copies a body it is asked for with a positioned read of the file: read through the map,
/// the kernel would map the pages around each body too (up to 64 KiB on a cached file), and
/// a query that reads 300 bodies would hold most of the part.
pub trait StoredBytes: Send + Sync {
    fn bytes(&self) -> &[u8];

    /// `range` of the bytes (`None` past the end or when the file cannot be read).
    fn read_range(&self, range: std::ops::Range<usize>) -> Option<std::borrow::Cow<'_, [u8]>> {
        self.bytes().get(range).map(std::borrow::Cow::Borrowed)
    }
}

impl StoredBytes for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// What a graph decoded heads-only keeps as bytes: each file's definitions (decoded once, when
/// first asked for) and its body (decoded each time it is asked for, checked first).
pub struct GraphBodies {
    bytes: GraphBytes,
    frame: FrameAt,
    /// Where each file's names and the rest of its definitions lie in `bytes` (the heads
    /// were checked against their digest when the graph was opened).
    heads: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
    defs: Vec<std::sync::OnceLock<Vec<DefNode>>>,
}

impl GraphBodies {
    /// File `i`'s references and their resolutions, checked against its digest and decoded
    /// now (`None` past the end or on damage).
    pub fn body(&self, i: usize) -> Option<(Vec<RefNode>, FileResolution)> {
        let (_, range, want) = self.frame.stored_body(self.bytes.bytes(), i).ok()?;
        let body = self.bytes.read_range(range)?;
        if digest::<BODY_DIGEST>(&body) != want {
            return None;
        }
        let body = Body::decode(&body).ok()?;
        let (refs, _, _, resolution) = body.parts();
        Some((refs, resolution))
    }

    fn blobs(&self, i: usize) -> Option<(&[u8], &[u8])> {
        let bytes = self.bytes.bytes();
        let (names, rest) = self.heads.get(i)?;
        Some((bytes.get(names.clone())?, bytes.get(rest.clone())?))
    }

    /// File `i`'s definitions, decoded the first time they are asked for (none past the end;
    /// bytes that passed the heads' digest but do not decode are logged and read as none).
    fn defs(&self, i: usize) -> &[DefNode] {
        let Some(cell) = self.defs.get(i) else { return &[] };
        cell.get_or_init(|| {
            let decoded = self.blobs(i).map(|(names, rest)| decode_defs(names, rest));
            match decoded {
                Some(Ok(defs)) => defs,
                Some(Err(e)) => {
                    tracing::warn!(file = i, error = %e, "graph part: definitions do not decode");
                    Vec::new()
                }
                None => Vec::new(),
            }
        })
    }

    /// File `i`'s definitions' names, read in place.
    fn names(&self, i: usize) -> Vec<&str> {
        self.blobs(i)
            .and_then(|(names, _)| postcard::from_bytes(names).ok())
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for GraphBodies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphBodies")
            .field("bytes", &self.bytes.bytes().len())
            .field("files", &self.frame.files)
            .finish()
    }
}

impl PartialEq for GraphBodies {
    fn eq(&self, other: &Self) -> bool {
        self.bytes.bytes() == other.bytes.bytes()
    }
}

/// Why stored graph bytes could not be read.
#[derive(Debug)]
pub enum GraphDecodeError {
    /// The frame around the sections is cut or inconsistent, or a section fails its digest.
    Layout(String),
    Postcard(postcard::Error),
}

impl std::fmt::Display for GraphDecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GraphDecodeError::Layout(why) => f.write_str(why),
            GraphDecodeError::Postcard(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GraphDecodeError {}

impl From<postcard::Error> for GraphDecodeError {
    fn from(e: postcard::Error) -> Self {
        GraphDecodeError::Postcard(e)
    }
}

/// The stored frame: a fixed header, the heads, a table of body offsets and digests, then the
/// bodies. A reader of the heads touches the header, the heads and nothing else; a body is
/// found by its offset and checked against its own digest, so a part mapped in place is
/// checked as far as it is read (the whole-file blake3 in the manifest is `ken index
/// verify`'s).
///
/// ```text
/// 0..8    magic "kengraph"
/// 8..12   version (u32 LE)          12..16  zero
/// 16..24  heads length (u64 LE)     24..32  files n (u64 LE)
/// 32..48  blake3 of the heads (first 16 bytes)
/// 48..    heads (postcard), then n + 1 body offsets (u64 LE, from the bodies' start),
///         n body digests (blake3, first 8 bytes each), then the bodies back to back,
///         then the flows section: its length unpacked and packed (u64 LE each), one zstd
///         frame of n + 1 flow offsets (u32 LE: where each file's flows start, the last
///         their count) and the flows (u32 source node, u32 target node, f32 weight, LE),
///         and the blake3 of the section before it (first 16 bytes)
/// ```
///
/// The flows are the edges PageRank reads, file by file: an update that changes a file's
/// edges but no interface replaces that file's flows and ranks again, without decoding the
/// other files' references.
const MAGIC: &[u8; 8] = b"kengraph";
const HEADER: usize = 48;
const HEADS_DIGEST: usize = 16;
const BODY_DIGEST: usize = 8;
const FLOWS_DIGEST: usize = 16;
/// Bytes of one flow.
const FLOW: usize = 12;
/// The flows' zstd level: flows come file by file with a handful of weights, and pack 5.6x
/// at level 1 (688,091 flows of the 2.8M-line tree: 8.3 MB to 1.5 MB; at `zstd -b1`'s speeds
/// on them, about 15 ms to pack and 6 to unpack).
const FLOWS_LEVEL: i32 = 1;
/// The flows section's two lengths (u64 LE each) ahead of its frame.
const FLOWS_LENGTHS: usize = 16;

/// A stored body: its bytes, where they lie in the part, and their digest.
pub(super) type StoredBody<'a> = (&'a [u8], std::ops::Range<usize>, [u8; BODY_DIGEST]);

fn digest<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let hash = blake3::hash(bytes);
    out.copy_from_slice(&hash.as_bytes()[..N]);
    out
}

fn le_u64(bytes: &[u8], at: usize) -> Option<u64> {
    let b: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(b))
}

/// Where the sections of a frame are (positions into its bytes).
#[derive(Debug, Clone, Copy)]
pub(super) struct FrameAt {
    pub(super) version: u32,
    pub(super) files: usize,
    heads: (usize, usize),
    offsets: usize,
    digests: usize,
    bodies: usize,
    /// Where the flows section starts (it runs to the end).
    flows: usize,
}

impl FrameAt {
    pub(super) fn parse(bytes: &[u8]) -> Result<FrameAt, GraphDecodeError> {
        let bad = |why: &str| GraphDecodeError::Layout(format!("graph part {why}"));
        if bytes.get(..8) != Some(&MAGIC[..]) {
            return Err(bad("has no graph header (written by another version?)"));
        }
        let version = bytes
            .get(8..12)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map(u32::from_le_bytes)
            .ok_or_else(|| bad("header is cut"))?;
        let heads_len = le_u64(bytes, 16).ok_or_else(|| bad("header is cut"))?;
        let files = le_u64(bytes, 24).ok_or_else(|| bad("header is cut"))?;
        let too_big = || bad("header names more than the file holds");
        let heads_len = usize::try_from(heads_len).map_err(|_| too_big())?;
        let files = usize::try_from(files).map_err(|_| too_big())?;
        let heads = (HEADER, HEADER.checked_add(heads_len).ok_or_else(too_big)?);
        let offsets = heads.1;
        let digests = files
            .checked_add(1)
            .and_then(|n| n.checked_mul(8))
            .and_then(|n| n.checked_add(offsets))
            .ok_or_else(too_big)?;
        let bodies = files
            .checked_mul(BODY_DIGEST)
            .and_then(|n| n.checked_add(digests))
            .ok_or_else(too_big)?;
        if bodies > bytes.len() {
            return Err(too_big());
        }
        // The last offset is the bodies' length: a cut file fails here, not on a late read.
        let end = le_u64(bytes, offsets + 8 * files).ok_or_else(too_big)?;
        let flows = usize::try_from(end)
            .ok()
            .and_then(|e| e.checked_add(bodies))
            .filter(|&f| f <= bytes.len())
            .ok_or_else(|| bad("is cut"))?;
        // The section's packed length: a file cut in its flows, or with bytes past them,
        // fails here.
        let packed = le_u64(bytes, flows + 8).ok_or_else(|| bad("is cut in its flows"))?;
        let want = usize::try_from(packed)
            .ok()
            .and_then(|p| p.checked_add(flows + FLOWS_LENGTHS + FLOWS_DIGEST));
        if want != Some(bytes.len()) {
            return Err(bad("is cut or has bytes past its flows"));
        }
        Ok(FrameAt {
            version,
            files,
            heads,
            offsets,
            digests,
            bodies,
            flows,
        })
    }

    /// The heads' bytes, checked against their digest.
    pub(super) fn heads<'a>(&self, bytes: &'a [u8]) -> Result<&'a [u8], GraphDecodeError> {
        let heads = bytes
            .get(self.heads.0..self.heads.1)
            .ok_or_else(|| GraphDecodeError::Layout("graph part heads are cut".into()))?;
        if bytes.get(32..32 + HEADS_DIGEST) != Some(&digest::<HEADS_DIGEST>(heads)[..]) {
            return Err(GraphDecodeError::Layout(
                "graph part heads: checksum mismatch".into(),
            ));
        }
        Ok(heads)
    }

    /// The flows section, checked against its digest: each file's flow offsets and every flow.
    pub(super) fn flows(&self, bytes: &[u8]) -> Result<Flows, GraphDecodeError> {
        let bad = |why: &str| GraphDecodeError::Layout(format!("graph part flows: {why}"));
        let section = bytes.get(self.flows..).ok_or_else(|| bad("cut"))?;
        let (body, stored) = section
            .split_at_checked(section.len().saturating_sub(FLOWS_DIGEST))
            .ok_or_else(|| bad("cut"))?;
        if stored != &digest::<FLOWS_DIGEST>(body)[..] {
            return Err(bad("checksum mismatch"));
        }
        let (lengths, packed) = body.split_at_checked(FLOWS_LENGTHS).ok_or_else(|| bad("cut"))?;
        let unpacked = le_u64(lengths, 0)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| bad("cut"))?;
        let offsets = 4 * (self.files + 1);
        // The digest held, so the lengths are the writer's; still, no allocation a damaged
        // or crafted part names: the offsets and whole flows, and at most 64 KiB unpacked a
        // packed byte (more than zstd ever packs).
        if unpacked < offsets
            || !(unpacked - offsets).is_multiple_of(FLOW)
            || unpacked / 1024 > packed.len().max(1) * 64
        {
            return Err(bad("its length unpacked does not fit its offsets and flows"));
        }
        let raw = crate::util::zstd_decompress(packed, unpacked)
            .map_err(|e| bad(&format!("its frame does not unpack: {e}")))?;
        if raw.len() != unpacked {
            return Err(bad("its frame unpacks to another length"));
        }
        let (starts, flows) = raw.split_at_checked(offsets).ok_or_else(|| bad("cut"))?;
        let u32_at = |b: &[u8]| b.try_into().map(u32::from_le_bytes).unwrap_or(0);
        let starts: Vec<u32> = starts.chunks_exact(4).map(u32_at).collect();
        let flows: Vec<(u32, u32, f32)> = flows
            .chunks_exact(FLOW)
            .map(|f| {
                let (s, rest) = f.split_at(4);
                let (t, w) = rest.split_at(4);
                (u32_at(s), u32_at(t), f32::from_bits(u32_at(w)))
            })
            .collect();
        let ordered = starts.windows(2).all(|w| w[0] <= w[1]);
        if !ordered || starts.last().map(|&c| c as usize) != Some(flows.len()) {
            return Err(bad("offsets out of order"));
        }
        Ok(Flows { starts, flows })
    }

    /// The flows section's bytes, as stored (for a writer that keeps them).
    pub(super) fn flows_bytes<'a>(&self, bytes: &'a [u8]) -> Option<&'a [u8]> {
        bytes.get(self.flows..)
    }

    /// File `i`'s body, checked against its digest.
    pub(super) fn body<'a>(&self, bytes: &'a [u8], i: usize) -> Result<&'a [u8], GraphDecodeError> {
        let (body, _, want) = self.stored_body(bytes, i)?;
        if want != digest::<BODY_DIGEST>(body) {
            return Err(GraphDecodeError::Layout(format!(
                "graph part body {i}: checksum mismatch"
            )));
        }
        Ok(body)
    }

    /// File `i`'s body and the digest stored for it, not checked (for bytes already checked).
    pub(super) fn stored_body<'a>(
        &self,
        bytes: &'a [u8],
        i: usize,
    ) -> Result<StoredBody<'a>, GraphDecodeError> {
        let bad = |why: &str| GraphDecodeError::Layout(format!("graph part body {i}: {why}"));
        if i >= self.files {
            return Err(bad("past the last file"));
        }
        let at = |k: usize| {
            le_u64(bytes, self.offsets + 8 * k)
                .and_then(|o| usize::try_from(o).ok())
                .and_then(|o| o.checked_add(self.bodies))
        };
        let (a, b) = at(i).zip(at(i + 1)).ok_or_else(|| bad("offset out of range"))?;
        let body = bytes.get(a..b).ok_or_else(|| bad("offset out of range"))?;
        let want = bytes
            .get(self.digests + BODY_DIGEST * i..self.digests + BODY_DIGEST * (i + 1))
            .and_then(|d| <[u8; BODY_DIGEST]>::try_from(d).ok())
            .ok_or_else(|| bad("digest out of range"))?;
        Ok((body, a..b, want))
    }
}

/// A file's body for the frame: encoded now, or where the previous graph's stored bytes
/// lie in them, with their digest.
enum BodyBytes {
    Fresh(Vec<u8>),
    Kept(std::ops::Range<usize>, [u8; BODY_DIGEST]),
}

/// Bodies encoded at a time while a graph is written: what the writer holds beyond the
/// graph itself is one batch, not the whole part (50 MB on a 3M-line tree, and as much again
/// while it was concatenated).
const WRITE_BATCH: usize = 256;

/// What [`CodeGraph::write_stored`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphWritten {
    /// The part's length in bytes.
    pub len: u64,
    /// Bodies copied from the previous graph's bytes rather than encoded again.
    pub kept: usize,
}

/// One file's head: its path, language and module, then its definitions as two byte strings,
/// their names (postcard `Vec<&str>`, read in place) and the rest (postcard `Vec<DefRest>`
/// behind a tag, packed when large: [`pack_defs`]; decoded when the file's definitions are
/// asked for).
#[derive(Serialize)]
struct HeadRef<'a> {
    path: &'a RepoPath,
    language: &'a Name,
    module: &'a Name,
    names: ByteString<'a>,
    defs: ByteString<'a>,
}

/// A head read in place.
#[derive(Deserialize)]
pub(super) struct HeadWire<'a> {
    pub(super) path: RepoPath,
    pub(super) language: Name,
    pub(super) module: Name,
    #[serde(borrow)]
    names: &'a [u8],
    #[serde(borrow)]
    defs: &'a [u8],
}

/// A definition less its name, as a head stores it.
#[derive(Serialize)]
struct DefRestRef<'a> {
    kind: &'a crate::symbols::SymbolKind,
    container: &'a [Name],
    parent: Option<u32>,
    line: u32,
    end_line: u32,
    name_byte: u32,
    params: &'a [(Name, Name)],
    returns: Option<&'a Name>,
}

#[derive(Deserialize)]
struct DefRest {
    kind: crate::symbols::SymbolKind,
    container: Vec<Name>,
    parent: Option<u32>,
    line: u32,
    end_line: u32,
    name_byte: u32,
    params: Vec<(Name, Name)>,
    returns: Option<Name>,
}

/// A head's definitions less their names are stored after a tag byte: postcard as it is
/// ([`DEFS_RAW`]) below [`DEFS_PACKED_FROM`] bytes, else in one zstd frame ([`DEFS_PACKED`]):
/// containers, parameters and types repeat within a file, and the 2.8M-line tree's 5.5 MB of
/// them take 2.3 MB. Only a file whose definitions are asked for unpacks them.
const DEFS_RAW: u8 = 0;
const DEFS_PACKED: u8 = 1;
/// Half the files' definitions take fewer bytes than this, where a frame gains little.
const DEFS_PACKED_FROM: usize = 64;
/// zstd's level for definitions (level 3 packed them 0.6 % smaller than level 1 on the tree
/// above).
const DEFS_LEVEL: i32 = 1;
/// The most bytes a file's definitions may unpack to (more is damage).
const MAX_DEFS: usize = 1 << 30;

fn pack_defs(rest: Vec<u8>) -> std::io::Result<Vec<u8>> {
    if rest.len() < DEFS_PACKED_FROM {
        let mut out = Vec::with_capacity(rest.len() + 1);
        out.push(DEFS_RAW);
        out.extend_from_slice(&rest);
        return Ok(out);
    }
    let packed = crate::util::zstd_compress(&rest, DEFS_LEVEL).map_err(std::io::Error::other)?;
    let mut out = Vec::with_capacity(packed.len() + 1);
    out.push(DEFS_PACKED);
    out.extend_from_slice(&packed);
    Ok(out)
}

/// A file's definitions from the two byte strings of its head.
fn decode_defs(names: &[u8], rest: &[u8]) -> Result<Vec<DefNode>, GraphDecodeError> {
    let names: Vec<&str> = postcard::from_bytes(names)?;
    let rest: Vec<DefRest> = match rest.split_first() {
        Some((&DEFS_RAW, raw)) => postcard::from_bytes(raw)?,
        Some((&DEFS_PACKED, packed)) => {
            let raw = crate::util::zstd_decompress(packed, MAX_DEFS)
                .map_err(|e| GraphDecodeError::Layout(format!("graph part heads: definitions: {e}")))?;
            postcard::from_bytes(&raw)?
        }
        _ => {
            return Err(GraphDecodeError::Layout(
                "graph part heads: definitions without their tag".into(),
            ));
        }
    };
    if names.len() != rest.len() {
        return Err(GraphDecodeError::Layout(format!(
            "graph part heads: {} names for {} definitions",
            names.len(),
            rest.len()
        )));
    }
    Ok(names
        .into_iter()
        .zip(rest)
        .map(|(name, r)| DefNode {
            name: Name::from(name),
            kind: r.kind,
            container: r.container.into_boxed_slice(),
            parent: r.parent,
            line: r.line,
            end_line: r.end_line,
            name_byte: r.name_byte,
            typing: super::DefTypes::boxed(r.params.into_boxed_slice(), r.returns),
        })
        .collect())
}

/// A file's head decoded whole.
pub(super) struct Head {
    pub(super) path: RepoPath,
    pub(super) language: Name,
    pub(super) module: Name,
    pub(super) defs: Vec<DefNode>,
}

impl HeadWire<'_> {
    /// The head decoded, the wire kept.
    pub(super) fn head(&self) -> Result<Head, GraphDecodeError> {
        Ok(Head {
            defs: decode_defs(self.names, self.defs)?,
            path: self.path.clone(),
            language: self.language.clone(),
            module: self.module.clone(),
        })
    }

    /// The number of its definitions, read from its names' length alone.
    pub(super) fn def_count(&self) -> Result<usize, GraphDecodeError> {
        let (n, _) = postcard::take_from_bytes::<u64>(self.names)?;
        usize::try_from(n)
            .map_err(|_| GraphDecodeError::Layout("graph part heads: bad definition count".into()))
    }
}

/// The heads section read in place: each file's head with its byte range, then the ranks and
/// the aliases.
struct HeadsWire<'a> {
    files: Vec<HeadWire<'a>>,
    /// The files' count, each file's head, then the rank and the aliases: byte ranges of the
    /// section, back to back.
    count: std::ops::Range<usize>,
    each: Vec<std::ops::Range<usize>>,
    tail: std::ops::Range<usize>,
    rank: Vec<Vec<f32>>,
    js_aliases: Vec<(String, String)>,
}

impl<'a> HeadsWire<'a> {
    fn parse(section: &'a [u8]) -> Result<HeadsWire<'a>, GraphDecodeError> {
        let at = |rest: &[u8]| section.len() - rest.len();
        // A sequence's length is a varint, read as a u64.
        let (n, mut rest) = postcard::take_from_bytes::<u64>(section)?;
        let n =
            usize::try_from(n).map_err(|_| GraphDecodeError::Layout("graph part heads: bad count".into()))?;
        let count = 0..at(rest);
        let mut files = Vec::with_capacity(n.min(section.len()));
        let mut each = Vec::with_capacity(n.min(section.len()));
        for _ in 0..n {
            let start = at(rest);
            let (h, r) = postcard::take_from_bytes::<HeadWire>(rest)?;
            rest = r;
            files.push(h);
            each.push(start..at(rest));
        }
        let tail = at(rest)..section.len();
        let (rank, r) = postcard::take_from_bytes::<Vec<Vec<f32>>>(rest)?;
        let (js_aliases, r) = postcard::take_from_bytes::<Vec<(String, String)>>(r)?;
        if !r.is_empty() {
            return Err(GraphDecodeError::Layout(
                "graph part heads: bytes past the aliases".into(),
            ));
        }
        Ok(HeadsWire {
            files,
            count,
            each,
            tail,
            rank,
            js_aliases,
        })
    }

    /// Every head decoded whole, on every core.
    fn decode_all(files: &[HeadWire<'a>]) -> Result<Vec<Head>, GraphDecodeError> {
        files.par_iter().map(HeadWire::head).collect()
    }
}

/// A body is stored as its head, what an update reads of every file (the imports and
/// bindings other files resolve against, the references naming a type's bases, which every
/// update resolves again, and what the file's resolution read), postcard, then the rest:
/// the references and their resolution, read only where a file's references are asked for,
/// postcard in one zstd frame (2.2x smaller on the 2.8M-line tree of `benches/scale_curve.sh`).
#[derive(Serialize)]
struct BodyTailRef<'a> {
    refs: &'a [RefNode],
    resolved_refs: &'a [Resolution],
    resolved_imports: &'a [ImportTarget],
}

#[derive(Serialize)]
struct BodyHeadRef<'a> {
    imports: &'a [Import],
    bindings: &'a [BindingNode],
    base_refs: Vec<&'a RefNode>,
    deps: &'a Deps,
}

/// What the symbol table reads of a body's head (its deps, last, are left unread).
#[derive(Deserialize)]
pub(super) struct BodyInterface {
    pub imports: Vec<Import>,
    pub bindings: Vec<BindingNode>,
    pub base_refs: Vec<RefNode>,
}

/// A whole body: what the table reads, the deps, then the references and their resolution.
pub(super) struct Body {
    head: BodyInterface,
    deps: Deps,
    refs: Vec<RefNode>,
    resolved_refs: Vec<Resolution>,
    resolved_imports: Vec<ImportTarget>,
}

#[derive(Deserialize)]
struct BodyFront {
    head: BodyInterface,
    deps: Deps,
}

#[derive(Deserialize)]
struct BodyTail {
    refs: Vec<RefNode>,
    resolved_refs: Vec<Resolution>,
    resolved_imports: Vec<ImportTarget>,
}

/// zstd's level for the bodies' references.
const BODY_LEVEL: i32 = 3;
/// The most bytes a body's references may decompress to (more is damage).
const MAX_BODY_TAIL: usize = 1 << 30;

impl Body {
    /// A stored body decoded (its bytes already checked against their digest).
    pub(super) fn decode(stored: &[u8]) -> Result<Body, GraphDecodeError> {
        let (front, rest) = postcard::take_from_bytes::<BodyFront>(stored)?;
        let tail = crate::util::zstd_decompress(rest, MAX_BODY_TAIL)
            .map_err(|e| GraphDecodeError::Layout(format!("graph body: {e}")))?;
        let tail: BodyTail = postcard::from_bytes(&tail)?;
        Ok(Body {
            head: front.head,
            deps: front.deps,
            refs: tail.refs,
            resolved_refs: tail.resolved_refs,
            resolved_imports: tail.resolved_imports,
        })
    }

    /// References, imports, bindings and their resolution.
    pub(super) fn parts(self) -> (Vec<RefNode>, Vec<Import>, Vec<BindingNode>, FileResolution) {
        let resolution = FileResolution {
            refs: self.resolved_refs,
            imports: self.resolved_imports,
            deps: self.deps,
        };
        (self.refs, self.head.imports, self.head.bindings, resolution)
    }
}

/// The heads section: the files' count, every file's head (encoded on every core), then the
/// ranks and the aliases.
pub(super) fn encode_heads(
    files: &[FileSkeleton],
    rank: &[Vec<f32>],
    js_aliases: &[(String, String)],
) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    heads_pieces(files, rank, js_aliases, |bytes| {
        out.extend_from_slice(bytes);
        Ok(())
    })?;
    Ok(out)
}

/// The heads section's bytes in order, each piece handed to `put`: the files' count, each
/// file's head (256 files encoded at a time, on every core), the ranks and the aliases.
fn heads_pieces(
    files: &[FileSkeleton],
    rank: &[Vec<f32>],
    js_aliases: &[(String, String)],
    mut put: impl FnMut(&[u8]) -> std::io::Result<()>,
) -> std::io::Result<()> {
    const FILES_AT_ONCE: usize = 256;
    put(&postcard::to_stdvec(&(files.len() as u64)).map_err(std::io::Error::other)?)?;
    for chunk in files.chunks(FILES_AT_ONCE) {
        let heads: Vec<Vec<u8>> = chunk
            .par_iter()
            .map(encode_head)
            .collect::<std::io::Result<_>>()?;
        for h in heads {
            put(&h)?;
        }
    }
    put(&postcard::to_stdvec(&(rank, js_aliases)).map_err(std::io::Error::other)?)
}

/// The edges PageRank reads, file by file: `flows[starts[i]..starts[i + 1]]` are file `i`'s.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flows {
    pub starts: Vec<u32>,
    pub flows: Vec<(u32, u32, f32)>,
}

impl Flows {
    /// The flows section as stored.
    pub(super) fn encode(&self) -> std::io::Result<Vec<u8>> {
        let mut raw = Vec::with_capacity(4 * self.starts.len() + FLOW * self.flows.len());
        for s in &self.starts {
            raw.extend_from_slice(&s.to_le_bytes());
        }
        for (s, t, w) in &self.flows {
            raw.extend_from_slice(&s.to_le_bytes());
            raw.extend_from_slice(&t.to_le_bytes());
            raw.extend_from_slice(&w.to_bits().to_le_bytes());
        }
        let packed = crate::util::zstd_compress(&raw, FLOWS_LEVEL).map_err(std::io::Error::other)?;
        let mut out = Vec::with_capacity(FLOWS_LENGTHS + packed.len() + FLOWS_DIGEST);
        out.extend_from_slice(&(raw.len() as u64).to_le_bytes());
        out.extend_from_slice(&(packed.len() as u64).to_le_bytes());
        out.extend_from_slice(&packed);
        let d = digest::<FLOWS_DIGEST>(&out);
        out.extend_from_slice(&d);
        Ok(out)
    }

    /// File `i`'s flows.
    pub(super) fn of(&self, i: usize) -> &[(u32, u32, f32)] {
        let at = |k: usize| self.starts.get(k).map(|&s| s as usize);
        match (at(i), at(i + 1)) {
            (Some(a), Some(b)) => self.flows.get(a..b).unwrap_or(&[]),
            _ => &[],
        }
    }
}

/// One file's head as the heads section holds it (a run of these, after their count, is the
/// section's `files`).
pub(super) fn encode_head(f: &FileSkeleton) -> std::io::Result<Vec<u8>> {
    let names: Vec<&str> = f.defs.iter().map(|d| d.name.as_str()).collect();
    let rest: Vec<DefRestRef> = f
        .defs
        .iter()
        .map(|d| DefRestRef {
            kind: &d.kind,
            container: &d.container,
            parent: d.parent,
            line: d.line,
            end_line: d.end_line,
            name_byte: d.name_byte,
            params: d.params(),
            returns: d.returns(),
        })
        .collect();
    let names = postcard::to_stdvec(&names).map_err(std::io::Error::other)?;
    let rest = pack_defs(postcard::to_stdvec(&rest).map_err(std::io::Error::other)?)?;
    postcard::to_stdvec(&HeadRef {
        path: &f.path,
        language: &f.language,
        module: &f.module,
        names: ByteString(&names),
        defs: ByteString(&rest),
    })
    .map_err(std::io::Error::other)
}

/// A heads section read file by file in place, with where each part lies in it, so that a
/// writer can copy the heads that did not change instead of encoding them again; a head's
/// definitions are decoded when asked for.
pub(super) struct HeadsAt<'a> {
    pub(super) files: Vec<HeadWire<'a>>,
    /// The files' count, each file's head, then the rank and the aliases: byte ranges of the
    /// section, back to back.
    pub(super) count: std::ops::Range<usize>,
    pub(super) each: Vec<std::ops::Range<usize>>,
    pub(super) tail: std::ops::Range<usize>,
    pub(super) ranks: usize,
    pub(super) js_aliases: Vec<(String, String)>,
}

impl<'a> HeadsAt<'a> {
    pub(super) fn index(section: &'a [u8]) -> Result<HeadsAt<'a>, GraphDecodeError> {
        let w = HeadsWire::parse(section)?;
        Ok(HeadsAt {
            files: w.files,
            count: w.count,
            each: w.each,
            tail: w.tail,
            ranks: w.rank.len(),
            js_aliases: w.js_aliases,
        })
    }

    /// Every head decoded, on every core.
    pub(super) fn decode_all(&self) -> Result<Vec<Head>, GraphDecodeError> {
        HeadsWire::decode_all(&self.files)
    }
}

/// One file's body: `refs` and `bindings` (the skeleton's, which may be held apart from it),
/// its imports, and their resolution.
pub(super) fn encode_body(
    f: &FileSkeleton,
    refs: &[RefNode],
    bindings: &[BindingNode],
    resolution: &FileResolution,
) -> std::io::Result<Vec<u8>> {
    let mut body = postcard::to_stdvec(&BodyHeadRef {
        imports: &f.imports,
        bindings,
        base_refs: refs.iter().filter(|r| Resolver::is_base_ref(f, r)).collect(),
        deps: &resolution.deps,
    })
    .map_err(std::io::Error::other)?;
    let tail = postcard::to_stdvec(&BodyTailRef {
        refs,
        resolved_refs: &resolution.refs,
        resolved_imports: &resolution.imports,
    })
    .map_err(std::io::Error::other)?;
    body.extend_from_slice(&crate::util::zstd_compress(&tail, BODY_LEVEL).map_err(std::io::Error::other)?);
    Ok(body)
}

pub(super) fn body_digest(body: &[u8]) -> [u8; BODY_DIGEST] {
    digest::<BODY_DIGEST>(body)
}

/// The fixed header and the heads of a frame of `files` bodies.
pub(super) fn write_head<W: std::io::Write>(
    w: &mut W,
    version: u32,
    heads: &[u8],
    files: usize,
) -> std::io::Result<()> {
    write_head_fields(
        w,
        version,
        heads.len() as u64,
        files,
        &digest::<HEADS_DIGEST>(heads),
    )?;
    w.write_all(heads)
}

/// The fixed header before the heads: magic, version, the heads' length, the files' count
/// and the heads' digest.
fn write_head_fields<W: std::io::Write>(
    w: &mut W,
    version: u32,
    heads_len: u64,
    files: usize,
    digest: &[u8; HEADS_DIGEST],
) -> std::io::Result<()> {
    w.write_all(MAGIC)?;
    w.write_all(&version.to_le_bytes())?;
    w.write_all(&[0u8; 4])?;
    w.write_all(&heads_len.to_le_bytes())?;
    w.write_all(&(files as u64).to_le_bytes())?;
    w.write_all(digest)
}

/// [`write_head`] for the heads [`encode_heads`] would give, written as they are encoded
/// (the header written again after them, with their length and digest): a first build
/// writing its graph under a memory cap never holds every head, let alone twice (10.7 MB
/// each on the 2.8M-line tree).
pub(super) fn write_heads_streamed<W: std::io::Write + std::io::Seek>(
    w: &mut W,
    version: u32,
    files: &[FileSkeleton],
    rank: &[Vec<f32>],
    js_aliases: &[(String, String)],
) -> std::io::Result<()> {
    use std::io::SeekFrom;
    let start = w.stream_position()?;
    write_head_fields(w, version, 0, files.len(), &[0u8; HEADS_DIGEST])?;
    let (mut hasher, mut len) = (blake3::Hasher::new(), 0u64);
    heads_pieces(files, rank, js_aliases, |bytes| {
        hasher.update(bytes);
        len += bytes.len() as u64;
        w.write_all(bytes)
    })?;
    let end = w.stream_position()?;
    let mut digest = [0u8; HEADS_DIGEST];
    digest.copy_from_slice(&hasher.finalize().as_bytes()[..HEADS_DIGEST]);
    w.seek(SeekFrom::Start(start))?;
    write_head_fields(w, version, len, files.len(), &digest)?;
    w.seek(SeekFrom::Start(end))?;
    Ok(())
}

/// The body offsets and digests of a frame, as its bodies are laid down one after another.
pub(super) struct BodyTable {
    offsets: Vec<u8>,
    digests: Vec<u8>,
    at: u64,
}

impl BodyTable {
    pub(super) fn new(files: usize) -> BodyTable {
        let mut offsets = Vec::with_capacity((files + 1) * 8);
        offsets.extend_from_slice(&0u64.to_le_bytes());
        BodyTable {
            offsets,
            digests: Vec::with_capacity(files * BODY_DIGEST),
            at: 0,
        }
    }

    /// The table's length in bytes for `files` bodies.
    pub(super) fn len_for(files: usize) -> usize {
        (files + 1) * 8 + files * BODY_DIGEST
    }

    pub(super) fn push(&mut self, len: usize, digest: [u8; BODY_DIGEST]) {
        self.at += len as u64;
        self.offsets.extend_from_slice(&self.at.to_le_bytes());
        self.digests.extend_from_slice(&digest);
    }

    pub(super) fn write<W: std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        w.write_all(&self.offsets)?;
        w.write_all(&self.digests)
    }

    /// Writes the table into the room left for it at `table_at`, once every body is written,
    /// and leaves `w` at the end: the part written from `start`, `kept` bodies copied.
    pub(super) fn fill_in<W: std::io::Write + std::io::Seek>(
        &self,
        w: &mut W,
        table_at: u64,
        start: u64,
        kept: usize,
    ) -> std::io::Result<GraphWritten> {
        use std::io::SeekFrom;
        let end = w.stream_position()?;
        w.seek(SeekFrom::Start(table_at))?;
        self.write(w)?;
        w.seek(SeekFrom::Start(end))?;
        Ok(GraphWritten {
            len: end - start,
            kept,
        })
    }
}

impl CodeGraph {
    /// The stored form: heads, then one body per file (encoded on every core).
    pub fn encode(&self) -> std::io::Result<Vec<u8>> {
        self.encode_reusing(None)
    }

    /// [`CodeGraph::write_stored`] into one buffer.
    pub fn encode_reusing(&self, previous: Option<(&CodeGraph, &[u8])>) -> std::io::Result<Vec<u8>> {
        let mut out = std::io::Cursor::new(Vec::new());
        self.write_stored(previous, &mut out)?;
        Ok(out.into_inner())
    }

    /// Writes the stored form to `w`, an empty file, as it is encoded: the header and heads,
    /// room for the body table, then the bodies a batch at a time (each batch encoded on
    /// every core), and last the table. A body that is the same as the previous graph's at
    /// the same position is copied from its stored bytes with its digest, not encoded again;
    /// `previous` is that graph, fully decoded, and the bytes it was decoded from.
    pub fn write_stored<W: std::io::Write + std::io::Seek>(
        &self,
        previous: Option<(&CodeGraph, &[u8])>,
        w: &mut W,
    ) -> std::io::Result<GraphWritten> {
        let previous = previous.and_then(|(g, bytes)| Some((g, bytes, FrameAt::parse(bytes).ok()?)));
        let heads = encode_heads(&self.files, &self.rank, &self.js_aliases)?;
        let n = self.files.len();
        let start = w.stream_position()?;
        write_head(w, self.version, &heads, n)?;
        drop(heads);
        let table_at = w.stream_position()?;
        w.write_all(&vec![0u8; BodyTable::len_for(n)])?;
        let mut table = BodyTable::new(n);
        let mut kept = 0;
        for first in (0..n).step_by(WRITE_BATCH) {
            let batch: Vec<(BodyBytes, [u8; BODY_DIGEST])> = (first..n.min(first + WRITE_BATCH))
                .into_par_iter()
                .map(|i| {
                    let body = self.body_bytes(i, previous)?;
                    let d = match &body {
                        BodyBytes::Fresh(b) => digest::<BODY_DIGEST>(b),
                        BodyBytes::Kept(_, d) => *d,
                    };
                    Ok((body, d))
                })
                .collect::<std::io::Result<_>>()?;
            for (body, d) in batch {
                let bytes: &[u8] = match &body {
                    BodyBytes::Fresh(b) => b,
                    BodyBytes::Kept(r, _) => {
                        kept += 1;
                        previous
                            .and_then(|(_, bytes, _)| bytes.get(r.clone()))
                            .ok_or_else(|| std::io::Error::other("a kept graph body lies outside its part"))?
                    }
                };
                w.write_all(bytes)?;
                table.push(bytes.len(), d);
            }
        }
        // The flows PageRank reads, after the bodies.
        w.write_all(&super::RankFlows::of_graph(self).into_flows().encode()?)?;
        table.fill_in(w, table_at, start, kept)
    }

    /// File `i`'s body: the previous graph's stored bytes where it is the same there, else
    /// encoded now.
    fn body_bytes(
        &self,
        i: usize,
        previous: Option<(&CodeGraph, &[u8], FrameAt)>,
    ) -> std::io::Result<BodyBytes> {
        let f = &self.files[i];
        let resolution = self.resolved.get(i).unwrap_or(&NO_RESOLUTION);
        if let Some(kept) = previous.and_then(|(g, bytes, frame)| {
            let (p, r) = (g.files.get(i)?, g.resolved.get(i)?);
            let same = p.path == f.path
                && p.refs == f.refs
                && p.imports == f.imports
                && p.bindings == f.bindings
                && r == resolution;
            // Checked when the previous graph was decoded from these same bytes.
            let (_, range, d) = frame.stored_body(bytes, i).ok()?;
            same.then_some(BodyBytes::Kept(range, d))
        }) {
            return Ok(kept);
        }
        encode_body(f, &f.refs, &f.bindings, resolution).map(BodyBytes::Fresh)
    }

    /// The whole graph, heads and bodies decoded on every core.
    pub fn decode(bytes: &[u8]) -> Result<CodeGraph, GraphDecodeError> {
        let frame = FrameAt::parse(bytes)?;
        let heads = HeadsWire::parse(frame.heads(bytes)?)?;
        if frame.files != heads.files.len() {
            return Err(GraphDecodeError::Layout(
                "graph part: heads and bodies differ in count".into(),
            ));
        }
        let (rank, js_aliases) = (heads.rank, heads.js_aliases);
        let (heads, bodies) = rayon::join(
            || HeadsWire::decode_all(&heads.files),
            || {
                (0..frame.files)
                    .into_par_iter()
                    .map(|i| Body::decode(frame.body(bytes, i)?))
                    .collect::<Result<Vec<Body>, GraphDecodeError>>()
            },
        );
        let (heads, bodies) = (heads?, bodies?);
        let mut files = Vec::with_capacity(bodies.len());
        let mut resolved = Vec::with_capacity(bodies.len());
        for (h, b) in heads.into_iter().zip(bodies) {
            let (refs, imports, bindings, resolution) = b.parts();
            files.push(FileSkeleton {
                path: h.path,
                language: h.language,
                module: h.module,
                defs: h.defs,
                refs,
                imports,
                bindings,
            });
            resolved.push(resolution);
        }
        Ok(CodeGraph {
            version: frame.version,
            files,
            resolved,
            rank,
            js_aliases,
            bodies: None,
        })
    }

    /// The heads only: every file's path, language and module, and the PageRank, decoded;
    /// definitions decoded a file at a time when asked for ([`CodeGraph::defs`]), their names
    /// read in place ([`CodeGraph::def_names`]); references, imports, bindings and
    /// resolutions read with [`CodeGraph::file_body`]. For readers that need the names of
    /// every file but the definitions and references of a few.
    pub fn decode_heads(bytes: GraphBytes) -> Result<CodeGraph, GraphDecodeError> {
        let (frame, files, places, rank, js_aliases) = {
            let b = bytes.bytes();
            let frame = FrameAt::parse(b)?;
            let heads = HeadsWire::parse(frame.heads(b)?)?;
            // Where a byte string of the heads lies in the whole part.
            let base = b.as_ptr() as usize;
            let place = |blob: &[u8]| {
                let at = (blob.as_ptr() as usize).saturating_sub(base);
                at..at + blob.len()
            };
            let mut files = Vec::with_capacity(heads.files.len());
            let mut places = Vec::with_capacity(heads.files.len());
            for h in heads.files {
                places.push((place(h.names), place(h.defs)));
                files.push(FileSkeleton {
                    path: h.path,
                    language: h.language,
                    module: h.module,
                    defs: Vec::new(),
                    refs: Vec::new(),
                    imports: Vec::new(),
                    bindings: Vec::new(),
                });
            }
            (frame, files, places, heads.rank, heads.js_aliases)
        };
        if frame.files != files.len() {
            return Err(GraphDecodeError::Layout(
                "graph part: heads and bodies differ in count".into(),
            ));
        }
        let defs = (0..files.len()).map(|_| std::sync::OnceLock::new()).collect();
        Ok(CodeGraph {
            version: frame.version,
            files,
            resolved: Vec::new(),
            rank,
            js_aliases,
            bodies: Some(Arc::new(GraphBodies {
                bytes,
                frame,
                heads: places,
                defs,
            })),
        })
    }

    /// File `fi`'s definitions, from either form (decoded on first use from a heads-only
    /// graph). Readers of a graph that may be heads-only read definitions here, never from
    /// `files[fi].defs`, which is empty there.
    pub fn defs(&self, fi: usize) -> &[DefNode] {
        match &self.bodies {
            Some(b) => b.defs(fi),
            None => self.files.get(fi).map_or(&[], |f| f.defs.as_slice()),
        }
    }

    /// One definition, from either form.
    pub fn def(&self, id: super::SymbolId) -> Option<&DefNode> {
        self.defs(id.file.index()).get(id.def as usize)
    }

    /// Containers + name of definition `i` of file `fi`, from either form.
    pub fn local_name(&self, fi: usize, i: u32) -> String {
        match (self.files.get(fi), self.defs(fi).get(i as usize)) {
            (Some(f), Some(d)) => f.local_of(d),
            _ => String::new(),
        }
    }

    /// Module + containers + name of definition `i` of file `fi`, from either form.
    pub fn qualified(&self, fi: usize, i: u32) -> String {
        match self.files.get(fi) {
            Some(f) => f.qualify(self.local_name(fi, i)),
            None => String::new(),
        }
    }

    /// File `fi`'s definitions' names, in order, without decoding the rest of them.
    pub fn def_names(&self, fi: usize) -> Vec<&str> {
        match &self.bodies {
            Some(b) => b.names(fi),
            None => self
                .files
                .get(fi)
                .map(|f| f.defs.iter().map(|d| d.name.as_str()).collect())
                .unwrap_or_default(),
        }
    }

    /// Whether only the heads are decoded (`files[i].refs` and `resolved` are then empty).
    pub fn heads_only(&self) -> bool {
        self.bodies.is_some()
    }

    /// File `i`'s references and their resolutions, from either form.
    pub fn file_body(
        &self,
        i: usize,
    ) -> Option<(
        std::borrow::Cow<'_, [RefNode]>,
        std::borrow::Cow<'_, FileResolution>,
    )> {
        use std::borrow::Cow;
        match &self.bodies {
            Some(b) => b.body(i).map(|(r, res)| (Cow::Owned(r), Cow::Owned(res))),
            None => Some((
                Cow::Borrowed(self.files.get(i)?.refs.as_slice()),
                Cow::Borrowed(self.resolved.get(i)?),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::LanguageRegistry;
    use crate::parse::FileParser;

    fn graph() -> CodeGraph {
        let registry = LanguageRegistry::builtin().unwrap();
        let mut parser = FileParser::new();
        let sources = [
            (
                "shop/cart.py",
                "python",
                "shop.cart",
                "from shop.pricing import apply\nclass Cart:\n    def total(self):\n        return apply(self.sum())\n    def sum(self):\n        return 1\n",
            ),
            (
                "shop/pricing.py",
                "python",
                "shop.pricing",
                "def apply(x):\n    return x * 0.9\n",
            ),
            ("shop/empty.py", "python", "shop.empty", ""),
        ];
        let files = sources
            .iter()
            .map(|(path, lang, module, text)| {
                let symbols = parser.parse(registry.by_name(lang).unwrap(), text.as_bytes());
                FileSkeleton::new(RepoPath::parse(path).unwrap(), lang, module, &symbols)
            })
            .collect();
        CodeGraph::build(files, vec![("@shop/x".to_string(), "shop/x".to_string())], None).0
    }

    #[test]
    fn both_decodings_give_the_graph_that_was_encoded() {
        let g = graph();
        assert!(
            g.resolved
                .iter()
                .any(|r| r.refs.iter().any(|x| !x.targets.is_empty()))
        );
        let bytes = g.encode().unwrap();
        let full = CodeGraph::decode(&bytes).unwrap();
        assert_eq!(full, g);
        let heads = CodeGraph::decode_heads(Arc::new(bytes.clone())).unwrap();
        assert!(heads.heads_only() && !full.heads_only());
        assert_eq!(heads.rank, g.rank);
        assert_eq!(heads.js_aliases, g.js_aliases);
        assert!(g.files.iter().any(|f| f.defs.len() > 1));
        for (i, f) in g.files.iter().enumerate() {
            // Definitions are read through `defs`, decoded on first use; names in place.
            assert_eq!(&heads.files[i].path, &f.path);
            assert!(heads.files[i].defs.is_empty());
            assert_eq!(
                (heads.defs(i), full.defs(i)),
                (f.defs.as_slice(), f.defs.as_slice())
            );
            let names: Vec<&str> = f.defs.iter().map(|d| d.name.as_str()).collect();
            assert_eq!((heads.def_names(i), full.def_names(i)), (names.clone(), names));
            for d in 0..f.defs.len() as u32 {
                assert_eq!(heads.qualified(i, d), f.qualified(d));
                assert_eq!(heads.local_name(i, d), f.local_name(d));
            }
            let (refs, res) = heads.file_body(i).unwrap();
            assert_eq!((refs.as_ref(), res.as_ref()), (f.refs.as_slice(), &g.resolved[i]));
            let (refs, res) = full.file_body(i).unwrap();
            assert_eq!((refs.as_ref(), res.as_ref()), (f.refs.as_slice(), &g.resolved[i]));
        }
        assert!(heads.file_body(g.files.len()).is_none());
        // A cut graph is an error, not a shorter graph.
        assert!(CodeGraph::decode(&bytes[..bytes.len() - 5]).is_err());
        assert!(CodeGraph::decode_heads(Arc::new(bytes[..bytes.len() - 5].to_vec())).is_err());
    }

    #[test]
    fn the_builds_rank_without_a_petgraph_is_the_symbol_graphs_to_the_bit() {
        let g = graph();
        let sg = crate::graph::SymbolGraph::new(&g);
        assert!(sg.graph.edge_count() > g.symbol_count(), "references make edges");
        let flat = crate::graph::SymbolGraph::global_rank_of(&g);
        assert_eq!(flat, sg.global_rank());
        let all: Vec<f32> = flat.iter().flatten().copied().collect();
        assert!(all.iter().any(|&r| r != all[0]), "ranks differ: {all:?}");
        // A reference to a definition that is not there (a stale target) makes no edge.
        let mut stale = g.clone();
        if let Some(r) = stale
            .resolved
            .iter_mut()
            .flat_map(|f| f.refs.iter_mut())
            .find(|r| !r.targets.is_empty())
        {
            r.targets.push(crate::graph::SymbolId::new(9_999, 0));
        }
        assert_eq!(
            crate::graph::SymbolGraph::global_rank_of(&stale),
            crate::graph::SymbolGraph::new(&stale).global_rank()
        );
    }

    #[test]
    fn an_update_copies_unchanged_bodies_and_writes_what_a_fresh_encoding_writes() {
        let g = graph();
        let bytes = g.encode().unwrap();
        // The same graph: every body copied, the same bytes.
        assert_eq!(g.encode_reusing(Some((&g, &bytes))).unwrap(), bytes);
        // ... every body copied from the previous bytes, none encoded again.
        let mut out = std::io::Cursor::new(Vec::new());
        let written = g.write_stored(Some((&g, &bytes)), &mut out).unwrap();
        assert_eq!(written.kept, g.files.len());
        assert_eq!(written.len, bytes.len() as u64);
        // One file's references and resolution changed: the rest copied, the same bytes as a
        // fresh encoding of the new graph.
        let mut changed = g.clone();
        changed.files[0].refs.pop();
        changed.resolved[0].refs.pop();
        let fresh = changed.encode().unwrap();
        assert_ne!(fresh, bytes);
        assert_eq!(changed.encode_reusing(Some((&g, &bytes))).unwrap(), fresh);
        let mut out = std::io::Cursor::new(Vec::new());
        assert_eq!(
            changed.write_stored(Some((&g, &bytes)), &mut out).unwrap().kept,
            g.files.len() - 1
        );
        // Files shifted by one (a file added first): nothing lines up, nothing is copied wrongly.
        let mut shifted = g.clone();
        shifted.files.insert(0, g.files[2].clone());
        shifted.resolved.insert(0, g.resolved[2].clone());
        shifted.rank.insert(0, g.rank[2].clone());
        assert_eq!(
            shifted.encode_reusing(Some((&g, &bytes))).unwrap(),
            shifted.encode().unwrap()
        );
        let back = CodeGraph::decode(&shifted.encode_reusing(Some((&g, &bytes))).unwrap()).unwrap();
        assert_eq!(back, shifted);
        // More files than one batch of bodies: every body where the table says it is.
        let mut many = g.clone();
        for _ in 0..(2 * WRITE_BATCH / g.files.len() + 1) {
            many.files.extend(g.files.iter().cloned());
            many.resolved.extend(g.resolved.iter().cloned());
            many.rank.extend(g.rank.iter().cloned());
        }
        assert!(many.files.len() > 2 * WRITE_BATCH);
        let bytes = many.encode().unwrap();
        assert_eq!(CodeGraph::decode(&bytes).unwrap(), many);
        let mut out = std::io::Cursor::new(Vec::new());
        assert_eq!(
            many.write_stored(Some((&many, &bytes)), &mut out).unwrap().kept,
            many.files.len()
        );
        assert_eq!(out.into_inner(), bytes);
    }

    #[test]
    fn a_flipped_byte_fails_the_section_it_is_in_and_only_that_one() {
        let g = graph();
        let bytes = g.encode().unwrap();
        // A byte of the last body: the heads still read, that body does not, the others do.
        let frame = FrameAt::parse(&bytes).unwrap();
        let mut damaged = bytes.clone();
        let last = frame.flows - 1;
        damaged[last] ^= 0x40;
        let heads = CodeGraph::decode_heads(Arc::new(damaged.clone())).unwrap();
        let n = g.files.len();
        let bad: Vec<usize> = (0..n).filter(|&i| heads.file_body(i).is_none()).collect();
        let with_body = (0..n).rev().find(|&i| {
            heads
                .bodies
                .as_ref()
                .unwrap()
                .frame
                .body(&bytes, i)
                .is_ok_and(|b| !b.is_empty())
        });
        assert_eq!(bad, vec![with_body.unwrap()]);
        assert!(CodeGraph::decode(&damaged).is_err());
        // A byte of the heads: nothing decodes.
        let mut damaged = bytes.clone();
        damaged[HEADER + 3] ^= 0x01;
        let e = CodeGraph::decode_heads(Arc::new(damaged.clone())).unwrap_err();
        assert!(e.to_string().contains("checksum"), "{e}");
        assert!(CodeGraph::decode(&damaged).is_err());
        // A byte of the flows: the heads and bodies read, the flows do not.
        let mut damaged = bytes.clone();
        damaged[frame.flows + FLOWS_LENGTHS + 2] ^= 0x01;
        assert_eq!(
            CodeGraph::decode(&damaged).unwrap(),
            CodeGraph::decode(&bytes).unwrap()
        );
        let e = FrameAt::parse(&damaged).unwrap().flows(&damaged).unwrap_err();
        assert!(e.to_string().contains("checksum"), "{e}");
        assert!(frame.flows(&bytes).is_ok());
        // Another format's bytes are refused by name.
        let e = CodeGraph::decode(b"not a graph at all").unwrap_err();
        assert!(e.to_string().contains("header"), "{e}");
    }
}
