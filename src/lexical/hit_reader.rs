//! `HitReader`: a hit's fields, read from the lexical part's columns (grain, path, language,
//! kind, lines) and from the document store only for what a definition alone has (its names
//! and signature). A file's document stores nothing, so ranking files by their hits reads no
//! store block: on the 2.8M-line tree, a search's two rankings had read about 1,600 stored
//! documents, each a decompressed block.

use std::collections::HashMap;

use tantivy::columnar::{Column, StrColumn};
use tantivy::schema::{Field, TantivyDocument, Value};
use tantivy::{DocAddress, Searcher};

use super::LexicalSchema;
use super::lexical_index::{Grain, LexicalHit};

/// One segment's columns; a text column is absent where no document of the segment has the
/// field (`kind` on a segment of code files alone).
struct SegmentColumns {
    grain: Option<StrColumn>,
    path: Option<StrColumn>,
    lang: Option<StrColumn>,
    kind: Option<StrColumn>,
    line: Option<Column<u64>>,
    end_line: Option<Column<u64>>,
}

/// The text columns, as keys of the decoded-term cache.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Text {
    Grain,
    Path,
    Lang,
    Kind,
}

/// Reads hits of one searcher; each segment's columns are opened once, and each term (a
/// path most of all: a file's hits share it) is looked up in its dictionary once.
pub(super) struct HitReader<'a> {
    searcher: &'a Searcher,
    fields: &'a LexicalSchema,
    segments: Vec<Option<SegmentColumns>>,
    terms: HashMap<(u32, Text, u64), String>,
}

impl<'a> HitReader<'a> {
    pub(super) fn new(searcher: &'a Searcher, fields: &'a LexicalSchema) -> HitReader<'a> {
        HitReader {
            searcher,
            fields,
            segments: (0..searcher.segment_readers().len()).map(|_| None).collect(),
            terms: HashMap::new(),
        }
    }

    fn columns<'s>(
        segments: &'s mut [Option<SegmentColumns>],
        searcher: &Searcher,
        segment: u32,
    ) -> tantivy::Result<&'s SegmentColumns> {
        let slot = segments
            .get_mut(segment as usize)
            .ok_or_else(|| tantivy::TantivyError::InvalidArgument(format!("no segment {segment}")))?;
        if slot.is_none() {
            let fast = searcher.segment_reader(segment).fast_fields();
            *slot = Some(SegmentColumns {
                grain: fast.str("grain")?,
                path: fast.str("path")?,
                lang: fast.str("lang")?,
                kind: fast.str("kind")?,
                line: fast.column_opt("line")?,
                end_line: fast.column_opt("end_line")?,
            });
        }
        slot.as_ref()
            .ok_or_else(|| tantivy::TantivyError::InvalidArgument(format!("no segment {segment}")))
    }

    /// The first value of a text column for `addr` (`None` where the document has none).
    fn text(&mut self, addr: DocAddress, which: Text) -> tantivy::Result<Option<String>> {
        let columns = Self::columns(&mut self.segments, self.searcher, addr.segment_ord)?;
        let column = match which {
            Text::Grain => &columns.grain,
            Text::Path => &columns.path,
            Text::Lang => &columns.lang,
            Text::Kind => &columns.kind,
        };
        let Some(column) = column else {
            return Ok(None);
        };
        let Some(ord) = column.term_ords(addr.doc_id).next() else {
            return Ok(None);
        };
        let key = (addr.segment_ord, which, ord);
        if let Some(s) = self.terms.get(&key) {
            return Ok(Some(s.clone()));
        }
        let mut s = String::new();
        if !column.ord_to_str(ord, &mut s)? {
            return Err(tantivy::TantivyError::InvalidArgument(format!(
                "term {ord} of a column is not in its dictionary"
            )));
        }
        self.terms.insert(key, s.clone());
        Ok(Some(s))
    }

    fn number(&mut self, addr: DocAddress, end: bool) -> tantivy::Result<u32> {
        let columns = Self::columns(&mut self.segments, self.searcher, addr.segment_ord)?;
        let column = if end { &columns.end_line } else { &columns.line };
        Ok(column.as_ref().and_then(|c| c.first(addr.doc_id)).unwrap_or(0) as u32)
    }

    /// The repository path of the document at `addr`.
    pub(super) fn path(&mut self, addr: DocAddress) -> tantivy::Result<Option<String>> {
        self.text(addr, Text::Path)
    }

    /// The hit at `addr`, with `score`. Only a definition's document is read from the store.
    pub(super) fn hit(&mut self, addr: DocAddress, score: f32) -> tantivy::Result<LexicalHit> {
        let grain = match self.text(addr, Text::Grain)?.as_deref() {
            Some("symbol") => Grain::Symbol,
            _ => Grain::File,
        };
        let (name, local_name, signature) = match grain {
            Grain::Symbol => {
                let doc: TantivyDocument = self.searcher.doc(addr)?;
                let text = |f: Field| doc.get_first(f).and_then(|v| v.as_str()).map(str::to_string);
                let s = self.fields;
                (text(s.name), text(s.qualified), text(s.signature))
            }
            Grain::File => (None, None, None),
        };
        Ok(LexicalHit {
            grain,
            path: self.text(addr, Text::Path)?.unwrap_or_default(),
            language: self.text(addr, Text::Lang)?.unwrap_or_default(),
            kind: self.text(addr, Text::Kind)?,
            name,
            local_name,
            signature,
            line: self.number(addr, false)?,
            end_line: self.number(addr, true)?,
            score,
        })
    }
}
