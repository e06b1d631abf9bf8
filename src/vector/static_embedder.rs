//! `StaticEmbedder`: a Model2Vec static model — one vector per token, averaged and
//! normalized — compiled into the binary (potion-base-8M, int8 rows with per-row scales; see
//! `models/potion-base-8M-int8/`). Tokens are weighted by a corpus IDF when one is given, which
//! keeps common words (`self`, `return`, `the`) from dominating a code chunk's vector.
//!
//! Identifiers are split at case changes before tokenizing (`registerHook` reads as `register
//! hook`); the BERT pre-tokenizer already splits at `_` and punctuation.

use std::collections::HashMap;

use safetensors::SafeTensors;
use tokenizers::Tokenizer;

use super::{Embedder, VectorError};

const MODEL: &[u8] = include_bytes!("../../models/potion-base-8M-int8/model.safetensors");
const TOKENIZER: &[u8] = include_bytes!("../../models/potion-base-8M-int8/tokenizer.json");
pub const BUILTIN_MODEL_ID: &str = "potion-base-8M-int8";
/// Tokens read per text; a chunk is a few hundred at most, a pasted issue may be more.
const MAX_TOKENS: usize = 4096;

pub struct StaticEmbedder {
    id: String,
    /// Distinguishes this model's entries in the per-thread word cache.
    tag: u64,
    /// The WordPiece vocabulary read in place from the tokenizer's JSON: ASCII words (nearly
    /// every word of code and of an issue) are tokenized with it.
    ascii: Option<AsciiWordPiece>,
    /// The whole tokenizer, built on the first word `ascii` does not take (its JSON is read
    /// into owned maps: 9 ms of a cold query's CPU on the built-in model).
    full: std::sync::OnceLock<Result<Tokenizer, String>>,
    tokenizer_bytes: &'static [u8],
    /// Read in place in the model's bytes (embedded in the binary): no copy at start.
    rows: &'static [i8],
    scales: Vec<f32>,
    dim: usize,
    /// Per-token weights (corpus IDF); `None` weighs every token 1.
    weights: Option<Vec<f32>>,
    unk: Option<u32>,
    /// Words a thread keeps tokenized ([`StaticEmbedder::token_ids`]) before it starts over.
    word_cache_cap: usize,
}

/// A BERT WordPiece `tokenizer.json`, read as those concrete types.
#[derive(serde::Deserialize)]
struct BertTokenizerFile {
    normalizer: tokenizers::normalizers::BertNormalizer,
    pre_tokenizer: tokenizers::pre_tokenizers::bert::BertPreTokenizer,
    model: tokenizers::models::wordpiece::WordPiece,
}

/// A BERT WordPiece tokenizer built from its parts: `Tokenizer::from_bytes` goes through
/// serde's buffered untagged and flattened paths, about 12 ms (22% of the samples) of a
/// 55 ms cold query on a 30k vocabulary. `None` for any other shape (the caller then loads it whole). Added
/// tokens are left out: words are tokenized one at a time (`token_ids`), where a special
/// token written literally is plain text anyway.
fn bert_wordpiece(bytes: &[u8]) -> Option<Tokenizer> {
    let file: BertTokenizerFile = serde_json::from_slice(bytes).ok()?;
    let mut tokenizer = Tokenizer::new(file.model);
    tokenizer.with_normalizer(Some(file.normalizer)).ok()?;
    tokenizer.with_pre_tokenizer(Some(file.pre_tokenizer));
    Some(tokenizer)
}

/// The tokenizer of `bytes`: built from its BERT parts where it has them, else loaded whole.
fn full_tokenizer(bytes: &[u8]) -> Result<Tokenizer, String> {
    match bert_wordpiece(bytes) {
        Some(t) => Ok(t),
        None => Tokenizer::from_bytes(bytes).map_err(|e| e.to_string()),
    }
}

/// `tokenizer.json`'s parts that say how an ASCII word is tokenized, the vocabulary's keys
/// borrowed from the JSON's bytes.
#[derive(serde::Deserialize)]
struct WordPieceShape<'a> {
    normalizer: NormalizerShape,
    pre_tokenizer: TypeTag,
    #[serde(borrow)]
    model: WordPieceModel<'a>,
}

#[derive(serde::Deserialize)]
struct TypeTag {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(serde::Deserialize)]
struct NormalizerShape {
    #[serde(rename = "type")]
    kind: String,
    lowercase: bool,
}

#[derive(serde::Deserialize)]
struct WordPieceModel<'a> {
    #[serde(rename = "type")]
    kind: String,
    unk_token: String,
    continuing_subword_prefix: String,
    max_input_chars_per_word: usize,
    #[serde(borrow)]
    vocab: HashMap<std::borrow::Cow<'a, str>, u32, foldhash::fast::RandomState>,
}

/// WordPiece over ASCII words, as the BERT tokenizer gives it: on ASCII the BERT normalizer
/// only lowercases (its cleaning, accent stripping and CJK spacing change nothing), and a word
/// [`bert_words`] gives is already split as its pre-tokenizer splits. Greedy longest match
/// from the left, the continuing pieces prefixed (`##`), and one `[UNK]` for a word that
/// cannot be split or is longer than `max_input_chars_per_word` (100 here).
struct AsciiWordPiece {
    vocab: HashMap<std::borrow::Cow<'static, str>, u32, foldhash::fast::RandomState>,
    unk: Option<u32>,
    prefix: String,
    max_chars: usize,
    lowercase: bool,
}

impl AsciiWordPiece {
    /// `None` for any tokenizer but a BERT WordPiece one.
    fn parse(bytes: &'static [u8]) -> Option<AsciiWordPiece> {
        let file: WordPieceShape<'static> = serde_json::from_slice(bytes).ok()?;
        let bert = file.normalizer.kind == "BertNormalizer"
            && file.pre_tokenizer.kind == "BertPreTokenizer"
            && file.model.kind == "WordPiece";
        bert.then(|| AsciiWordPiece {
            unk: file.model.vocab.get(file.model.unk_token.as_str()).copied(),
            vocab: file.model.vocab,
            prefix: file.model.continuing_subword_prefix,
            max_chars: file.model.max_input_chars_per_word,
            lowercase: file.normalizer.lowercase,
        })
    }

    /// Appends the ids of `word` (ASCII) to `out`; `piece` is scratch space.
    fn word_ids(&self, word: &str, piece: &mut String, out: &mut Vec<u32>) {
        let word = match self.lowercase {
            true => std::borrow::Cow::Owned(word.to_ascii_lowercase()),
            false => std::borrow::Cow::Borrowed(word),
        };
        let unknown = |out: &mut Vec<u32>| out.extend(self.unk);
        if word.len() > self.max_chars {
            return unknown(out);
        }
        let first = out.len();
        let mut start = 0;
        while start < word.len() {
            let mut end = word.len();
            let found = loop {
                if start >= end {
                    break None;
                }
                piece.clear();
                if start > 0 {
                    piece.push_str(&self.prefix);
                }
                piece.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(piece.as_str()) {
                    break Some(id);
                }
                end -= 1;
            };
            let Some(id) = found else {
                out.truncate(first);
                return unknown(out);
            };
            out.push(id);
            start = end;
        }
    }
}

/// The built-in model being made in a thread of its own ([`StaticEmbedder::prepare_builtin`]),
/// for the next [`StaticEmbedder::builtin`] to take.
type Prepared = std::thread::JoinHandle<Result<StaticEmbedder, VectorError>>;
static PREPARED: std::sync::Mutex<Option<Prepared>> = std::sync::Mutex::new(None);

impl StaticEmbedder {
    /// The model compiled into the binary (the one [`Self::prepare_builtin`] made, if any).
    pub fn builtin() -> Result<StaticEmbedder, VectorError> {
        let prepared = PREPARED.lock().ok().and_then(|mut p| p.take());
        if let Some(Ok(Ok(model))) = prepared.map(|p| p.join()) {
            return Ok(model);
        }
        Self::from_bytes(BUILTIN_MODEL_ID, MODEL, TOKENIZER)
    }

    /// Starts making the built-in model in a thread of its own (its vocabulary is read from
    /// JSON, about 2 ms), for a one-shot query to do while it reads the index's file table.
    pub fn prepare_builtin() {
        if let Ok(mut p) = PREPARED.lock()
            && p.is_none()
        {
            *p = Some(std::thread::spawn(|| {
                Self::from_bytes(BUILTIN_MODEL_ID, MODEL, TOKENIZER)
            }));
        }
    }

    pub fn from_bytes(
        id: &str,
        model: &'static [u8],
        tokenizer_bytes: &'static [u8],
    ) -> Result<StaticEmbedder, VectorError> {
        let err = |detail: String| VectorError::Model {
            model: id.to_string(),
            detail,
        };
        let ascii = AsciiWordPiece::parse(tokenizer_bytes);
        let full = std::sync::OnceLock::new();
        // Any other tokenizer is built now, so that a broken one is an error here.
        let unk = match &ascii {
            Some(a) => a.unk,
            None => {
                let t = full_tokenizer(tokenizer_bytes).map_err(|e| err(format!("tokenizer.json: {e}")))?;
                let unk = t.token_to_id("[UNK]");
                let _ = full.set(Ok(t));
                unk
            }
        };
        let st = SafeTensors::deserialize(model).map_err(|e| err(e.to_string()))?;
        let emb = st.tensor("embeddings").map_err(|e| err(e.to_string()))?;
        let shape = emb.shape().to_vec();
        let (n, dim) = match shape.as_slice() {
            [n, d] => (*n, *d),
            _ => return Err(err(format!("embeddings have shape {shape:?}"))),
        };
        let rows: &'static [i8] = match emb.dtype() {
            safetensors::Dtype::I8 => bytemuck::cast_slice(emb.data()),
            other => return Err(err(format!("embeddings are {other:?}, expected I8"))),
        };
        let scales: Vec<f32> = match st.tensor("weights") {
            Ok(w) if w.dtype() == safetensors::Dtype::F32 => w
                .data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            _ => return Err(err("no f32 `weights` (row scales) tensor".into())),
        };
        if rows.len() != n * dim || scales.len() != n {
            return Err(err(format!(
                "{} values and {} scales for {n} x {dim}",
                rows.len(),
                scales.len()
            )));
        }
        let tag = u64::from_le_bytes(
            blake3::hash(tokenizer_bytes)
                .as_bytes()
                .get(..8)
                .and_then(|b| b.try_into().ok())
                .unwrap_or([1; 8]),
        ) | 1;
        Ok(StaticEmbedder {
            id: id.to_string(),
            tag,
            ascii,
            full,
            tokenizer_bytes,
            rows,
            scales,
            dim,
            weights: None,
            unk,
            word_cache_cap: WORD_CACHE_CAP,
        })
    }

    /// Keeps at most `words` tokenized words a thread (200,000 by default: about 11 MiB a
    /// thread more than 20,000 on the 2.8M-line tree): a build under a tight memory cap keeps
    /// fewer and tokenizes more.
    pub fn with_word_cache_cap(mut self, words: usize) -> StaticEmbedder {
        self.word_cache_cap = words;
        self
    }

    /// Weighs tokens by `weights[token id]` (a corpus IDF).
    pub fn with_weights(mut self, weights: Vec<f32>) -> StaticEmbedder {
        self.weights = (weights.len() == self.scales.len()).then_some(weights);
        self
    }

    pub fn vocab_size(&self) -> usize {
        self.scales.len()
    }

    /// The token ids of a text, as embedding reads them (unknown tokens dropped).
    pub fn token_ids(&self, text: &str) -> Result<Vec<u32>, VectorError> {
        let prepared = split_case(text);
        let mut ids = Vec::new();
        // WordPiece works word by word once the BERT pre-tokenizer has split the text, and code
        // repeats its words endlessly: each distinct word is tokenized once per thread and
        // cached. (`words_match_whole_text_tokenization` checks this equals tokenizing the
        // whole text.)
        WORD_CACHE.with(|cache| -> Result<(), VectorError> {
            let mut cache = cache.borrow_mut();
            if cache.0 != self.tag {
                *cache = (self.tag, WordMap::default());
            }
            let mut piece = String::new();
            for word in bert_words(&prepared) {
                if ids.len() >= MAX_TOKENS {
                    break;
                }
                if let Some(hit) = cache.1.get(word) {
                    ids.extend_from_slice(hit);
                    continue;
                }
                let mut word_ids: Vec<u32> = match &self.ascii {
                    Some(ascii) if word.is_ascii() => {
                        let mut out = Vec::new();
                        ascii.word_ids(word, &mut piece, &mut out);
                        out
                    }
                    _ => self
                        .tokenizer()?
                        .encode(word, false)
                        .map_err(|e| VectorError::Tokenizer {
                            model: self.id.clone(),
                            detail: e.to_string(),
                        })?
                        .get_ids()
                        .to_vec(),
                };
                word_ids.retain(|&i| Some(i) != self.unk);
                ids.extend_from_slice(&word_ids);
                if cache.1.len() > self.word_cache_cap {
                    cache.1.clear();
                }
                cache.1.insert(word.to_string(), word_ids);
            }
            Ok(())
        })?;
        ids.truncate(MAX_TOKENS);
        Ok(ids)
    }

    /// Tokenizes the whole text in one call (the reference for the word cache).
    pub fn token_ids_uncached(&self, text: &str) -> Result<Vec<u32>, VectorError> {
        let prepared = split_case(text);
        let enc = self
            .tokenizer()?
            .encode(prepared.as_str(), false)
            .map_err(|e| VectorError::Tokenizer {
                model: self.id.clone(),
                detail: e.to_string(),
            })?;
        let mut ids: Vec<u32> = enc
            .get_ids()
            .iter()
            .copied()
            .filter(|&i| Some(i) != self.unk)
            .collect();
        ids.truncate(MAX_TOKENS);
        Ok(ids)
    }

    /// The whole tokenizer, built on first use.
    fn tokenizer(&self) -> Result<&Tokenizer, VectorError> {
        self.full
            .get_or_init(|| full_tokenizer(self.tokenizer_bytes))
            .as_ref()
            .map_err(|detail| VectorError::Tokenizer {
                model: self.id.clone(),
                detail: detail.clone(),
            })
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>, VectorError> {
        let ids = self.token_ids(text)?;
        Ok(self.embed_ids(&ids))
    }

    /// The vector of already tokenized text (see [`StaticEmbedder::token_ids`]).
    pub fn embed_ids(&self, ids: &[u32]) -> Vec<f32> {
        let ids = ids.iter().copied();
        let mut acc = vec![0f32; self.dim];
        for id in ids {
            let i = id as usize;
            let Some(&scale) = self.scales.get(i) else {
                continue;
            };
            let w = self
                .weights
                .as_ref()
                .and_then(|w| w.get(i))
                .copied()
                .unwrap_or(1.0)
                * scale;
            let row = &self.rows[i * self.dim..(i + 1) * self.dim];
            for (a, &q) in acc.iter_mut().zip(row) {
                *a += w * f32::from(q);
            }
        }
        let norm = acc.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            acc.iter_mut().for_each(|x| *x /= norm);
        }
        acc
    }
}

/// Token weights from document frequencies over `docs` chunks: a smoothed IDF,
/// `ln((1 + docs) / (1 + df)) + 1`, so a token in every chunk still counts a little.
pub fn idf_weights(df: &[u32], docs: u32) -> Vec<f32> {
    let n = docs as f32;
    df.iter()
        .map(|&d| ((1.0 + n) / (1.0 + d as f32)).ln() + 1.0)
        .collect()
}

impl Embedder for StaticEmbedder {
    fn id(&self) -> String {
        match self.weights {
            Some(_) => format!("{}+idf", self.id),
            None => self.id.clone(),
        }
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, VectorError> {
        texts.iter().map(|t| self.embed_one(t)).collect()
    }
}

/// Distinct words remembered per thread before the cache starts over.
const WORD_CACHE_CAP: usize = 200_000;

/// Words hashed with foldhash: SipHash was a third of the tokenizer's time in a first build
/// (the keys are a thread's own cache, seeded per process).
type WordMap = HashMap<String, Vec<u32>, foldhash::fast::RandomState>;

thread_local! {
    /// (model tag, word -> token ids).
    static WORD_CACHE: std::cell::RefCell<(u64, WordMap)> =
        std::cell::RefCell::new((0, WordMap::default()));
}

/// The words the BERT pre-tokenizer (after the BERT normalizer's cleaning) would produce:
/// runs of characters split at whitespace, with every punctuation mark and every CJK
/// ideograph a word of its own; control characters dropped.
fn bert_words(text: &str) -> impl Iterator<Item = &str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        let alone = is_bert_punctuation(c) || is_cjk(c);
        let gap = c.is_whitespace() || (c.is_control() && c != '\t') || c == '\u{fffd}' || c == '\0';
        if alone || gap {
            if let Some(s) = start.take() {
                out.push(&text[s..i]);
            }
            if alone {
                out.push(&text[i..i + c.len_utf8()]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(&text[s..]);
    }
    out.into_iter()
}

/// BERT's punctuation: ASCII symbols and Unicode punctuation.
fn is_bert_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || (!c.is_ascii() && unicode_punct(c))
}

fn unicode_punct(c: char) -> bool {
    // General categories P*: the ranges code carries (general punctuation, CJK symbols,
    // full-width forms) and the scattered ones in Latin-1.
    matches!(c as u32,
        0x00A1 | 0x00A7 | 0x00AB | 0x00B6 | 0x00B7 | 0x00BB | 0x00BF | 0x037E | 0x0387
        | 0x2010..=0x2027 | 0x2030..=0x2043 | 0x2045..=0x2051 | 0x2053..=0x205E
        | 0x3001..=0x3003 | 0x3008..=0x3011 | 0x3014..=0x301F
        | 0xFF01..=0xFF03 | 0xFF05..=0xFF0A | 0xFF0C..=0xFF0F | 0xFF1A | 0xFF1B | 0xFF1F | 0xFF20
        | 0xFF3B..=0xFF3D | 0xFF3F | 0xFF5B | 0xFF5D)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

/// `registerHook` -> `register Hook`, `HTTPServer` -> `HTTP Server`: word pieces of code
/// identifiers become words for the tokenizer.
fn split_case(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(p) = prev {
            let lower_upper = p.is_lowercase() && c.is_uppercase();
            let acronym_end =
                p.is_uppercase() && c.is_uppercase() && chars.peek().is_some_and(|n| n.is_lowercase());
            if lower_upper || acronym_end {
                out.push(' ');
            }
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn builtin_model_loads_and_embeds_unit_vectors() {
        let m = StaticEmbedder::builtin().unwrap();
        assert_eq!(m.dim(), 256);
        assert_eq!(m.vocab_size(), 29528);
        let v = m.embed(&["parse the configuration file"]).unwrap();
        let norm: f32 = v[0].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4);
    }

    #[test]
    fn related_texts_are_closer_than_unrelated_ones() {
        let m = StaticEmbedder::builtin().unwrap();
        let v = m
            .embed(&[
                "fn read_config_file(path: &Path) -> Config",
                "load the configuration from disk",
                "render a triangle with the GPU shader",
            ])
            .unwrap();
        assert!(
            cos(&v[0], &v[1]) > cos(&v[0], &v[2]),
            "{} vs {}",
            cos(&v[0], &v[1]),
            cos(&v[0], &v[2])
        );
    }

    #[test]
    fn words_match_whole_text_tokenization() {
        let m = StaticEmbedder::builtin().unwrap();
        let samples = [
            include_str!("static_embedder.rs"),
            include_str!("../index/index_builder.rs"),
            "def résumé_naïve(x):\n\treturn x['ключ'] + \"中文字符\" — “quoted” … ½ ¿qué?\u{7}",
            "self.session.mount('https://', HTTPAdapter(max_retries=3)) # noqa: E501",
        ];
        // The one intended difference: the whole-text tokenizer reads special tokens written
        // literally (`[UNK]`, `[CLS]`) as those tokens; word by word they are plain text.
        for s in samples {
            let s = s.replace("[UNK]", "UNK");
            assert_eq!(
                m.token_ids(&s).unwrap(),
                m.token_ids_uncached(&s).unwrap(),
                "{}",
                &s[..s.len().min(60)]
            );
        }
    }

    /// A cache far smaller than a file's words (a tight memory cap keeps fewer) starts over
    /// again and again and still gives the ids the uncached tokenizer gives.
    #[test]
    fn a_small_word_cache_gives_the_same_ids() {
        let m = StaticEmbedder::builtin().unwrap().with_word_cache_cap(8);
        let text = include_str!("../index/vector_build.rs").replace("[UNK]", "UNK");
        assert!(
            text.split_whitespace()
                .collect::<std::collections::HashSet<_>>()
                .len()
                > 100
        );
        for _ in 0..2 {
            assert_eq!(m.token_ids(&text).unwrap(), m.token_ids_uncached(&text).unwrap());
        }
    }

    #[test]
    fn the_tokenizer_built_from_its_parts_equals_the_loaded_one() {
        let fast = bert_wordpiece(TOKENIZER).unwrap();
        let full = Tokenizer::from_bytes(TOKENIZER).unwrap();
        let long_word = "x".repeat(150);
        let samples = [
            include_str!("static_embedder.rs"),
            include_str!("../index/index_builder.rs"),
            "def résumé_naïve(x):\n\treturn x['ключ'] + \"中文字符\" — “quoted” … ½ ¿qué? ÅNGSTRÖM\u{7}\u{0}",
            long_word.as_str(),
        ];
        // Word by word, as `token_ids` reads (the loaded one also matches special tokens
        // written literally in a whole text, which words never are).
        for s in samples {
            let prepared = split_case(s);
            for word in bert_words(&prepared) {
                let ids = |t: &Tokenizer| t.encode(word, false).unwrap().get_ids().to_vec();
                assert_eq!(ids(&fast), ids(&full), "{word}");
            }
        }
        // Another shape is not taken for BERT WordPiece.
        assert!(bert_wordpiece(br#"{"model": {"type": "BPE"}}"#).is_none());
    }

    /// Every ASCII word gets from the vocabulary read in place the ids the whole tokenizer
    /// gives it: words of real code and prose, every case, digits, a word too long to
    /// split, pieces no vocabulary entry starts (`##`-only splits) and a single mark.
    #[test]
    fn ascii_words_tokenize_as_the_whole_tokenizer_does() {
        let m = StaticEmbedder::builtin().unwrap();
        let ascii = m
            .ascii
            .as_ref()
            .expect("the built-in tokenizer is BERT WordPiece");
        let full = m.tokenizer().unwrap();
        let long_word = "abc".repeat(40);
        let samples = [
            include_str!("static_embedder.rs"),
            include_str!("../index/index_builder.rs"),
            include_str!("../../README.md"),
            "XMLHttpRequest getHTTPResponseCode __init__ utf8 0x7fff 3.14159e-10 qqqqzzzx",
            long_word.as_str(),
            "! ? ~ ` ^ | \\ \" ' Ok",
        ];
        let mut piece = String::new();
        let mut words = 0;
        for s in samples {
            let prepared = split_case(s);
            for word in bert_words(&prepared).filter(|w| w.is_ascii()) {
                let mut got = Vec::new();
                ascii.word_ids(word, &mut piece, &mut got);
                let want = full.encode(word, false).unwrap().get_ids().to_vec();
                assert_eq!(got, want, "{word}");
                words += 1;
            }
        }
        assert!(words > 5_000, "{words}");
        // The long word is one unknown token, as the whole tokenizer makes it.
        let mut got = Vec::new();
        ascii.word_ids(&long_word, &mut piece, &mut got);
        assert_eq!(got, vec![ascii.unk.unwrap()]);
    }

    #[test]
    fn identifiers_are_split_at_case_changes() {
        assert_eq!(
            split_case("registerHook HTTPServer x"),
            "register Hook HTTP Server x"
        );
        let m = StaticEmbedder::builtin().unwrap();
        assert_eq!(
            m.token_ids("registerHook").unwrap(),
            m.token_ids("register_hook")
                .unwrap()
                .into_iter()
                .filter(|&t| Some(t) != m.tokenizer().unwrap().token_to_id("_"))
                .collect::<Vec<_>>()
        );
    }
}
