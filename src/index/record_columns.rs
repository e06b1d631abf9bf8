//! `RecordColumns`: a file's symbol record laid out by column for storage. Each field of the
//! definitions and of the references is one list (kinds, names, spans...), spans are stored
//! as differences (from the previous item's start, and within the item), and a reference's
//! callee is stored only when it is not its receiver and name joined by `.`, `::` or `->`
//! (as 99.9 % are on the 2.8M-line tree of `benches/scale_curve.sh`). zstd then finds far
//! more to share: the tree's records take 18.6 MB, where postcard of [`FileSymbols`] as it
//! is compressed to 29.9 MB at the same level.

use serde::{Deserialize, Serialize};

use crate::symbols::{
    Binding, Definition, Diagnostic, FileSymbols, Import, Reference, ReferenceKind, Span, SymbolKind,
};

/// How a reference's callee is stored.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
enum Callee {
    /// The callee is the name alone (`register_hook(..)`).
    Name,
    /// The receiver, a separator, then the name (`self.session.register_hook`).
    Joined(Separator),
    /// Anything else, as written.
    Written(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Separator {
    Dot,
    Colons,
    Arrow,
}

impl Separator {
    const ALL: [Separator; 3] = [Separator::Dot, Separator::Colons, Separator::Arrow];

    fn text(self) -> &'static str {
        match self {
            Separator::Dot => ".",
            Separator::Colons => "::",
            Separator::Arrow => "->",
        }
    }
}

/// [`Callee`] as it is written: the same variants in the same order (postcard names a
/// variant by its position), the callee borrowed.
#[derive(Serialize)]
enum CalleeRef<'a> {
    Name,
    Joined(Separator),
    Written(&'a str),
}

impl<'a> CalleeRef<'a> {
    fn of(r: &'a Reference) -> CalleeRef<'a> {
        if r.callee == r.name {
            return CalleeRef::Name;
        }
        let joined = r.receiver.as_deref().and_then(|receiver| {
            let between = r.callee.strip_prefix(receiver)?.strip_suffix(r.name.as_str())?;
            Separator::ALL.into_iter().find(|s| s.text() == between)
        });
        match joined {
            Some(s) => CalleeRef::Joined(s),
            None => CalleeRef::Written(&r.callee),
        }
    }
}

impl Callee {
    fn written(self, name: &str, receiver: Option<&str>) -> Result<String, String> {
        match self {
            Callee::Name => Ok(name.to_string()),
            Callee::Joined(s) => receiver
                .map(|r| format!("{r}{}{name}", s.text()))
                .ok_or_else(|| "a joined callee without a receiver".to_string()),
            Callee::Written(c) => Ok(c),
        }
    }
}

/// [`RecordColumns`] as it is written: the same fields in the same order, the record's strings
/// borrowed (postcard writes a borrowed string or list as it writes an owned one), so that
/// encoding a record copies none of them.
#[derive(Serialize)]
struct ColumnsRef<'a> {
    def_kind: Vec<SymbolKind>,
    def_name: Vec<&'a str>,
    def_container: Vec<&'a [String]>,
    def_span: Vec<i64>,
    def_signature: Vec<&'a str>,
    def_doc: Vec<Option<&'a str>>,
    ref_kind: Vec<ReferenceKind>,
    ref_name: Vec<&'a str>,
    ref_receiver: Vec<Option<&'a str>>,
    ref_callee: Vec<CalleeRef<'a>>,
    ref_span: Vec<i64>,
    ref_enclosing: Vec<Option<u32>>,
    imports: &'a [Import],
    bindings: &'a [Binding],
    package: Option<&'a str>,
    diagnostics: &'a [Diagnostic],
}

/// A file's symbols, column by column.
#[derive(Debug, Deserialize)]
pub(super) struct RecordColumns {
    def_kind: Vec<SymbolKind>,
    def_name: Vec<String>,
    def_container: Vec<Vec<String>>,
    /// Eight numbers a definition ([`SpanDeltas`]).
    def_span: Vec<i64>,
    def_signature: Vec<String>,
    def_doc: Vec<Option<String>>,
    ref_kind: Vec<ReferenceKind>,
    ref_name: Vec<String>,
    ref_receiver: Vec<Option<String>>,
    ref_callee: Vec<Callee>,
    /// Eight numbers a reference ([`SpanDeltas`]).
    ref_span: Vec<i64>,
    ref_enclosing: Vec<Option<u32>>,
    imports: Vec<Import>,
    bindings: Vec<Binding>,
    package: Option<String>,
    diagnostics: Vec<Diagnostic>,
}

/// Spans as differences: an item's start (byte and line) from the previous item's, its end
/// from its start, and its name's span from the item's start. Small numbers, which postcard
/// writes in a byte or two and zstd finds again.
struct SpanDeltas {
    byte: u32,
    line: u32,
}

impl SpanDeltas {
    fn new() -> SpanDeltas {
        SpanDeltas { byte: 0, line: 0 }
    }

    fn put(&mut self, out: &mut Vec<i64>, span: &Span, name: &Span) {
        let d = |a: u32, b: u32| i64::from(a) - i64::from(b);
        out.extend_from_slice(&[
            d(span.start_byte, self.byte),
            d(span.end_byte, span.start_byte),
            d(span.start_line, self.line),
            d(span.end_line, span.start_line),
            d(name.start_byte, span.start_byte),
            d(name.end_byte, name.start_byte),
            d(name.start_line, span.start_line),
            d(name.end_line, name.start_line),
        ]);
        self.byte = span.start_byte;
        self.line = span.start_line;
    }

    fn take(&mut self, d: &[i64]) -> Result<(Span, Span), String> {
        let at = |base: u32, delta: i64| {
            u32::try_from(i64::from(base) + delta).map_err(|_| "a span out of range".to_string())
        };
        let [b0, b1, l0, l1, nb0, nb1, nl0, nl1] =
            <[i64; 8]>::try_from(d).map_err(|_| "a span cut short".to_string())?;
        let start_byte = at(self.byte, b0)?;
        let start_line = at(self.line, l0)?;
        let span = Span {
            start_byte,
            end_byte: at(start_byte, b1)?,
            start_line,
            end_line: at(start_line, l1)?,
        };
        let name_byte = at(start_byte, nb0)?;
        let name_line = at(start_line, nl0)?;
        let name = Span {
            start_byte: name_byte,
            end_byte: at(name_byte, nb1)?,
            start_line: name_line,
            end_line: at(name_line, nl1)?,
        };
        self.byte = start_byte;
        self.line = start_line;
        Ok((span, name))
    }
}

/// A record's columns in postcard: what [`RecordColumns`] decodes.
pub(super) fn encode(s: &FileSymbols) -> Result<Vec<u8>, postcard::Error> {
    let (defs, refs) = (&s.definitions, &s.references);
    let mut c = ColumnsRef {
        def_kind: defs.iter().map(|d| d.kind).collect(),
        def_name: defs.iter().map(|d| d.name.as_str()).collect(),
        def_container: defs.iter().map(|d| d.container.as_slice()).collect(),
        def_span: Vec::with_capacity(8 * defs.len()),
        def_signature: defs.iter().map(|d| d.signature.as_str()).collect(),
        def_doc: defs.iter().map(|d| d.doc.as_deref()).collect(),
        ref_kind: refs.iter().map(|r| r.kind).collect(),
        ref_name: refs.iter().map(|r| r.name.as_str()).collect(),
        ref_receiver: refs.iter().map(|r| r.receiver.as_deref()).collect(),
        ref_callee: refs.iter().map(CalleeRef::of).collect(),
        ref_span: Vec::with_capacity(8 * refs.len()),
        ref_enclosing: refs.iter().map(|r| r.enclosing).collect(),
        imports: &s.imports,
        bindings: &s.bindings,
        package: s.package.as_deref(),
        diagnostics: &s.diagnostics,
    };
    let mut spans = SpanDeltas::new();
    for d in defs {
        spans.put(&mut c.def_span, &d.span, &d.name_span);
    }
    let mut spans = SpanDeltas::new();
    for r in refs {
        spans.put(&mut c.ref_span, &r.span, &r.name_span);
    }
    postcard::to_stdvec(&c)
}

impl RecordColumns {
    /// The record back, or why the columns do not make one (lists of unequal lengths, a
    /// span out of range: damage that passed the record's digest, or a crafted record).
    pub(super) fn into_symbols(self) -> Result<FileSymbols, String> {
        let defs = self.def_kind.len();
        let refs = self.ref_kind.len();
        let same = [
            self.def_name.len(),
            self.def_container.len(),
            self.def_signature.len(),
            self.def_doc.len(),
        ]
        .iter()
        .all(|&n| n == defs)
            && [
                self.ref_name.len(),
                self.ref_receiver.len(),
                self.ref_callee.len(),
                self.ref_enclosing.len(),
            ]
            .iter()
            .all(|&n| n == refs)
            && Some(self.def_span.len()) == defs.checked_mul(8)
            && Some(self.ref_span.len()) == refs.checked_mul(8);
        if !same {
            return Err("a record's columns differ in length".into());
        }
        let mut spans = SpanDeltas::new();
        let mut definitions = Vec::with_capacity(defs);
        let columns = self
            .def_kind
            .into_iter()
            .zip(self.def_name)
            .zip(self.def_container)
            .zip(self.def_span.chunks_exact(8))
            .zip(self.def_signature)
            .zip(self.def_doc);
        for (((((kind, name), container), d), signature), doc) in columns {
            let (span, name_span) = spans.take(d)?;
            definitions.push(Definition {
                kind,
                name,
                container,
                span,
                name_span,
                signature,
                doc,
            });
        }
        let mut spans = SpanDeltas::new();
        let mut references = Vec::with_capacity(refs);
        let columns = self
            .ref_kind
            .into_iter()
            .zip(self.ref_name)
            .zip(self.ref_receiver)
            .zip(self.ref_callee)
            .zip(self.ref_span.chunks_exact(8))
            .zip(self.ref_enclosing);
        for (((((kind, name), receiver), callee), d), enclosing) in columns {
            let (span, name_span) = spans.take(d)?;
            references.push(Reference {
                kind,
                callee: callee.written(&name, receiver.as_deref())?,
                name,
                receiver,
                span,
                name_span,
                enclosing,
            });
        }
        Ok(FileSymbols {
            definitions,
            references,
            imports: self.imports,
            bindings: self.bindings,
            package: self.package,
            diagnostics: self.diagnostics,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn span(v: [u32; 4]) -> Span {
        Span {
            start_byte: v[0],
            end_byte: v[1],
            start_line: v[2],
            end_line: v[3],
        }
    }

    fn reference(name: &str, callee: &str, receiver: Option<&str>, at: [u32; 4]) -> Reference {
        Reference {
            kind: ReferenceKind::Call,
            name: name.into(),
            callee: callee.into(),
            receiver: receiver.map(str::to_string),
            span: span(at),
            name_span: span(at),
            enclosing: None,
        }
    }

    /// The columns a record is written as, read back.
    fn columns(s: &FileSymbols) -> RecordColumns {
        postcard::from_bytes(&encode(s).expect("encode")).expect("decode")
    }

    fn round_trip(s: &FileSymbols) -> FileSymbols {
        columns(s).into_symbols().expect("columns")
    }

    #[test]
    fn callees_are_derived_only_where_they_are_the_receiver_and_name_joined() {
        let refs = vec![
            reference("get", "get", None, [0, 3, 1, 1]),
            reference("get", "self.cache.get", Some("self.cache"), [10, 24, 2, 2]),
            reference("new", "Vec::new", Some("Vec"), [30, 38, 3, 3]),
            reference("len", "p->len", Some("p"), [40, 46, 4, 4]),
            // Written otherwise: kept as written, never rebuilt.
            reference("get", "self.cache .get", Some("self.cache"), [50, 65, 5, 5]),
            reference("get", "a?.get", Some("a"), [70, 76, 6, 6]),
            reference("get", "x.get", None, [80, 85, 7, 7]),
            reference("get", "other.get", Some("self"), [90, 99, 8, 8]),
        ];
        let c = columns(&FileSymbols {
            references: refs.clone(),
            ..FileSymbols::default()
        });
        let stored = |i: usize| matches!(c.ref_callee[i], Callee::Written(_));
        assert_eq!(
            (0..8).map(stored).collect::<Vec<_>>(),
            [false, false, false, false, true, true, true, true]
        );
        assert_eq!(c.into_symbols().expect("columns").references, refs);
    }

    #[test]
    fn columns_of_unequal_length_are_an_error() {
        let s = FileSymbols {
            references: vec![reference("f", "f", None, [0, 1, 1, 1])],
            ..FileSymbols::default()
        };
        let mut c = columns(&s);
        c.ref_name.clear();
        assert!(c.into_symbols().is_err());
        let mut c = columns(&s);
        c.ref_span.pop();
        assert!(c.into_symbols().is_err());
        let mut c = columns(&s);
        c.ref_callee[0] = Callee::Joined(Separator::Dot);
        assert!(c.into_symbols().is_err(), "a joined callee needs a receiver");
        let mut c = columns(&s);
        c.ref_span[0] = -1;
        assert!(c.into_symbols().is_err(), "a span before the file's start");
    }

    fn any_span() -> impl Strategy<Value = Span> {
        // Any order, any distance: the deltas must carry what a parser never writes too.
        prop::array::uniform4(prop_oneof![0u32..200, Just(u32::MAX), any::<u32>()]).prop_map(span)
    }

    fn any_symbols() -> impl Strategy<Value = FileSymbols> {
        let word = "[a-z_:.>-]{0,8}";
        let def = (
            word,
            prop::collection::vec(word, 0..3),
            any_span(),
            any_span(),
            word,
            prop::option::of(word),
        )
            .prop_map(|(name, container, span, name_span, signature, doc)| Definition {
                kind: SymbolKind::Function,
                name,
                container,
                span,
                name_span,
                signature,
                doc,
            });
        let reference = (
            word,
            word,
            prop::option::of(word),
            any_span(),
            any_span(),
            prop::option::of(any::<u32>()),
        )
            .prop_map(|(name, callee, receiver, span, name_span, enclosing)| Reference {
                kind: ReferenceKind::Call,
                name,
                callee,
                receiver,
                span,
                name_span,
                enclosing,
            });
        (
            prop::collection::vec(def, 0..6),
            prop::collection::vec(reference, 0..12),
            prop::option::of(word),
        )
            .prop_map(|(definitions, references, package)| FileSymbols {
                definitions,
                references,
                package,
                ..FileSymbols::default()
            })
    }

    proptest! {
        #[test]
        fn any_record_round_trips(s in any_symbols()) {
            prop_assert_eq!(round_trip(&s), s);
        }
    }
}
