//! The lexical layer: a tantivy index of definitions and files with a code-aware tokenizer,
//! ranked search with field boosts and pruned long queries, and ripgrep-style line search.
//!
//! Invariants: documents depend only on a file's path, language, bytes and extracted symbols
//! (never on module paths), so an unchanged file's documents stay valid across generations;
//! the `index` layer decides where the tantivy folder lives and which files to (re)add.

mod code_tokenizer;
mod hit_reader;
mod lexical_error;
mod lexical_index;
mod lexical_query;
mod lexical_schema;
mod lexical_writer;
mod line_search;
mod path_evidence;
mod read_only_directory;
mod snippet;

pub use code_tokenizer::{CodeTokenizer, MAX_TOKEN_LEN, is_stop_word, split_word, tokenize};
pub use lexical_error::LexicalError;
pub use lexical_index::{
    Grain, LexicalHit, LexicalIndex, SearchOptions, SearchOutcome, path_prior, rank_files,
};
pub use lexical_query::{LexicalQuery, PathFilter};
pub use lexical_schema::{LEXICAL_VERSION, LexicalSchema};
pub use lexical_writer::{FileDoc, LexicalWriter};
pub use line_search::{LineMatch, LineSearch, LineSearchMode};
pub use path_evidence::{NAME_WEIGHT, PathEvidence};
pub use read_only_directory::ReadOnlyDirectory;
pub use snippet::Snippet;
