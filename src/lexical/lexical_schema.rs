//! `LexicalSchema`: the tantivy fields. Two grains share one index: one document per file
//! (path, content) and one per definition (name, qualified name, signature, doc, body).

use tantivy::Index;
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::TextAnalyzer;

use super::CodeTokenizer;

/// Bump when the schema or the tokenizer changes: documents are then rebuilt.
/// 6: no field norms for the untokenized fields (one token each: BM25 reads the same
/// length for every document that has one), `line` stored only.
/// 7: grain, path, language, kind and lines in columns, not stored: a hit of a file's
/// document is read without a store block ([`super::hit_reader`]).
/// 8: no positions for `signature` and `doc` (no query reads positions: a phrase is a
/// conjunction checked against the text), 2.8 MB of 56 on the 2.8M-line tree.
pub const LEXICAL_VERSION: u32 = 8;
const TOKENIZER: &str = "code";

#[derive(Debug, Clone)]
pub struct LexicalSchema {
    pub schema: Schema,
    /// `file`, `symbol`, or `names` (the names of a file's minor definitions beyond the cap).
    pub grain: Field,
    /// The repository path, raw: deletes and filters.
    pub path: Field,
    /// The repository path, tokenized.
    pub path_text: Field,
    pub lang: Field,
    pub kind: Field,
    pub name: Field,
    /// The definition's name, lowercased and untokenized: exact identifier matches.
    pub name_exact: Field,
    /// Containers and name (`Request.register_hook`); the module is added at display time.
    pub qualified: Field,
    pub signature: Field,
    pub doc: Field,
    pub body: Field,
    pub content: Field,
    pub line: Field,
    pub end_line: Field,
}

/// A tokenized field, with term frequencies for BM25 and no positions: phrases are matched
/// as conjunctions and verified against the text by the caller
/// (`SearchOutcome::phrase_patterns`), which keeps the index small.
fn text(stored: bool) -> TextOptions {
    let opts = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    if stored { opts.set_stored() } else { opts }
}

/// An untokenized field: deletes, filters and exact matches. Without field norms: a byte a
/// document for a length that is always one. A `column` field is also read from hits, as a
/// column (a hit reads it without decompressing a store block).
fn raw(column: bool) -> TextOptions {
    let opts = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer("raw")
            .set_index_option(IndexRecordOption::Basic)
            .set_fieldnorms(false),
    );
    if column { opts.set_fast("raw") } else { opts }
}

impl LexicalSchema {
    pub fn new() -> LexicalSchema {
        let mut b = Schema::builder();
        let grain = b.add_text_field("grain", raw(true));
        let path = b.add_text_field("path", raw(true));
        let path_text = b.add_text_field("path_text", text(false));
        let lang = b.add_text_field("lang", raw(true));
        let kind = b.add_text_field("kind", raw(true));
        let name = b.add_text_field("name", text(true));
        let name_exact = b.add_text_field("name_exact", raw(false));
        let qualified = b.add_text_field("qualified", text(true));
        let signature = b.add_text_field("signature", text(true));
        let doc = b.add_text_field("doc", text(false));
        let body = b.add_text_field("body", text(false));
        let content = b.add_text_field("content", text(false));
        // Read from hits, never searched.
        let line = b.add_u64_field("line", FAST);
        let end_line = b.add_u64_field("end_line", FAST);
        LexicalSchema {
            schema: b.build(),
            grain,
            path,
            path_text,
            lang,
            kind,
            name,
            name_exact,
            qualified,
            signature,
            doc,
            body,
            content,
            line,
            end_line,
        }
    }

    /// Looks the fields up in an opened index's schema.
    pub fn of(index: &Index) -> Result<LexicalSchema, tantivy::TantivyError> {
        let schema = index.schema();
        let f = |n: &str| schema.get_field(n);
        Ok(LexicalSchema {
            grain: f("grain")?,
            path: f("path")?,
            path_text: f("path_text")?,
            lang: f("lang")?,
            kind: f("kind")?,
            name: f("name")?,
            name_exact: f("name_exact")?,
            qualified: f("qualified")?,
            signature: f("signature")?,
            doc: f("doc")?,
            body: f("body")?,
            content: f("content")?,
            line: f("line")?,
            end_line: f("end_line")?,
            schema,
        })
    }

    /// Registers the code tokenizer; needed every time an index is opened.
    pub fn register_tokenizer(index: &Index) {
        index
            .tokenizers()
            .register(TOKENIZER, TextAnalyzer::builder(CodeTokenizer::default()).build());
    }
}

impl Default for LexicalSchema {
    fn default() -> Self {
        Self::new()
    }
}
