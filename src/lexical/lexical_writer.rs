//! `LexicalWriter`: builds one generation's tantivy index, incrementally from the previous
//! generation's when there is one.
//!
//! The previous generation's folder is never modified: its immutable segment files are
//! hard-linked (copied where links fail) into the new folder, whose writer then deletes the
//! documents of changed and removed files and adds the new ones. tantivy replaces `meta.json`
//! by rename and only ever creates or deletes whole files, so the old generation stays intact.

use std::fs;
use std::path::{Path, PathBuf};

use tantivy::schema::TantivyDocument;
use tantivy::{Index, IndexWriter, Term};

use super::{LexicalError, LexicalSchema};
use crate::symbols::{Definition, FileSymbols, SymbolKind};

/// Longest definition body indexed, in bytes (generated tables can be huge).
const MAX_BODY: usize = 64 * 1024;
/// Fields, constants and variables get full documents of their own up to this many per file:
/// beyond it a file is a generated table (bindings, unicode data) whose members are still in
/// the file document, and in one names-only document per file for `ken symbol`; full
/// documents would multiply the index for no ranking gain.
const MAX_MINOR_DOCS_PER_FILE: usize = 256;
/// Memory budget of the tantivy writer per indexing thread, by default.
const BUDGET_PER_THREAD: usize = 48 * 1024 * 1024;
/// The least tantivy accepts per indexing thread (15 MB) and a margin.
const MIN_BUDGET_PER_THREAD: usize = 16 * 1024 * 1024;

/// One file, as the lexical layer needs it.
pub struct FileDoc<'a> {
    pub path: &'a str,
    pub language: &'a str,
    pub separator: &'a str,
    pub bytes: &'a [u8],
    pub lines: u32,
    pub symbols: &'a FileSymbols,
}

pub struct LexicalWriter {
    dir: PathBuf,
    fields: LexicalSchema,
    writer: IndexWriter,
    /// Every segment merged into one at the commit ([`LexicalWriter::merged_at_commit`]).
    merge_at_commit: bool,
}

impl LexicalWriter {
    /// Opens a writer in `dir` (created), starting from a copy of `base` when given. The
    /// writer's indexing heap is `budget` bytes in all when given (at least 16 MiB a thread;
    /// a smaller heap flushes segments more often), else 48 MiB a thread.
    pub fn open(
        dir: &Path,
        base: Option<&Path>,
        threads: usize,
        budget: Option<usize>,
    ) -> Result<LexicalWriter, LexicalError> {
        let io = |source| LexicalError::Io {
            path: dir.to_path_buf(),
            source,
        };
        fs::create_dir_all(dir).map_err(io)?;
        let index = match base {
            Some(base) => {
                link_files(base, dir)?;
                Index::open_in_dir(dir).map_err(LexicalError::tantivy(dir))?
            }
            None => {
                Index::create_in_dir(dir, LexicalSchema::new().schema).map_err(LexicalError::tantivy(dir))?
            }
        };
        LexicalSchema::register_tokenizer(&index);
        let fields = LexicalSchema::of(&index).map_err(LexicalError::tantivy(dir))?;
        let mut threads = threads.clamp(1, 4);
        let per_thread = match budget {
            Some(total) => {
                // Fewer indexing threads rather than a heap tantivy refuses.
                threads = threads.min((total / MIN_BUDGET_PER_THREAD).max(1));
                (total / threads).clamp(MIN_BUDGET_PER_THREAD, BUDGET_PER_THREAD)
            }
            None => BUDGET_PER_THREAD,
        };
        let writer = index
            .writer_with_num_threads(threads, per_thread * threads)
            .map_err(LexicalError::tantivy(dir))?;
        Ok(LexicalWriter {
            dir: dir.to_path_buf(),
            fields,
            writer,
            merge_at_commit: false,
        })
    }

    /// Commits without merging segments: a checkpoint of part of a tree, whose segments the
    /// commit of the whole tree merges (a merge at every checkpoint would rewrite the same
    /// postings again and again).
    pub fn without_merges(self) -> LexicalWriter {
        self.writer
            .set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        self
    }

    /// Merges every segment into one at the commit, and none before: the whole tree's
    /// commit after checkpoints that merged nothing (left to the next commit, their merge
    /// would land on the first one-file update). No merge of the policy's own starts on the
    /// way: under a small cap the writer flushes segments while the tree is read, and a merge
    /// still running at the commit held segments the whole merge then did not find.
    pub fn merged_at_commit(mut self) -> LexicalWriter {
        self = self.without_merges();
        self.merge_at_commit = true;
        self
    }

    /// Whether the commit merges every segment into one ([`LexicalWriter::merged_at_commit`]).
    pub fn merges_whole(&self) -> bool {
        self.merge_at_commit
    }

    /// Deletes every document of `path` (call before re-adding a changed file).
    pub fn remove_file(&self, path: &str) {
        self.writer
            .delete_term(Term::from_field_text(self.fields.path, path));
    }

    /// Adds the file document and one document per definition.
    pub fn add_file(&self, f: &FileDoc) -> Result<(), LexicalError> {
        let s = &self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(s.grain, "file");
        doc.add_text(s.path, f.path);
        doc.add_text(s.path_text, f.path);
        doc.add_text(s.lang, f.language);
        doc.add_text(s.content, String::from_utf8_lossy(f.bytes));
        let text = crate::lang::text_kind(f.language);
        if let Some(k) = text {
            doc.add_text(s.kind, k.as_str());
        }
        doc.add_u64(s.line, 1);
        doc.add_u64(s.end_line, u64::from(f.lines));
        self.add(doc)?;
        if let Some(k) = text {
            return self.add_sections(f, k);
        }
        let mut minor = 0usize;
        // Names of minor definitions beyond the cap, for `ken symbol` to find the file.
        let mut names: Option<TantivyDocument> = None;
        for d in &f.symbols.definitions {
            if is_minor(d.kind) {
                minor += 1;
                if minor > MAX_MINOR_DOCS_PER_FILE {
                    let doc = names.get_or_insert_with(|| {
                        let mut doc = TantivyDocument::default();
                        doc.add_text(s.grain, "names");
                        doc.add_text(s.path, f.path);
                        doc
                    });
                    doc.add_text(s.name_exact, d.name.to_lowercase());
                    continue;
                }
            }
            self.add(self.symbol_doc(f, d))?;
        }
        if let Some(doc) = names {
            self.add(doc)?;
        }
        Ok(())
    }

    /// A text file's sections (headings, or windows of lines) as symbol-grain documents of
    /// kind `doc` or `config`: the heading is the name, the section's text the body.
    fn add_sections(&self, f: &FileDoc, kind: crate::lang::TextKind) -> Result<(), LexicalError> {
        let s = &self.fields;
        let text = String::from_utf8_lossy(f.bytes);
        let lines: Vec<&str> = text.lines().collect();
        for sec in crate::lang::sections(f.language, &text) {
            let body = lines
                .get((sec.start_line - 1) as usize..(sec.end_line as usize).min(lines.len()))
                .map(|l| l.join("\n"))
                .unwrap_or_default();
            let mut doc = TantivyDocument::default();
            doc.add_text(s.grain, "symbol");
            doc.add_text(s.path, f.path);
            doc.add_text(s.path_text, f.path);
            doc.add_text(s.lang, f.language);
            doc.add_text(s.kind, kind.as_str());
            doc.add_text(s.name, &sec.title);
            doc.add_text(s.qualified, &sec.title);
            doc.add_text(s.body, &body[..body.floor_char_boundary(MAX_BODY)]);
            doc.add_u64(s.line, u64::from(sec.start_line));
            doc.add_u64(s.end_line, u64::from(sec.end_line));
            self.add(doc)?;
        }
        Ok(())
    }

    fn symbol_doc(&self, f: &FileDoc, d: &Definition) -> TantivyDocument {
        let s = &self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(s.grain, "symbol");
        doc.add_text(s.path, f.path);
        doc.add_text(s.path_text, f.path);
        doc.add_text(s.lang, f.language);
        doc.add_text(s.kind, d.kind.as_str());
        doc.add_text(s.name, &d.name);
        doc.add_text(s.name_exact, d.name.to_lowercase());
        doc.add_text(s.qualified, d.local_name(f.separator));
        doc.add_text(s.signature, &d.signature);
        if let Some(text) = &d.doc {
            doc.add_text(s.doc, text);
        }
        if has_own_body(d.kind) {
            let start = d.span.start_byte as usize;
            let end = (d.span.end_byte as usize)
                .min(f.bytes.len())
                .min(start + MAX_BODY);
            if let Some(body) = f.bytes.get(start..end) {
                doc.add_text(s.body, String::from_utf8_lossy(body));
            }
        }
        doc.add_u64(s.line, u64::from(d.span.start_line));
        doc.add_u64(s.end_line, u64::from(d.span.end_line));
        doc
    }

    fn add(&self, doc: TantivyDocument) -> Result<(), LexicalError> {
        self.writer
            .add_document(doc)
            .map(|_| ())
            .map_err(LexicalError::tantivy(&self.dir))
    }

    /// Commits and waits for merges (merging every segment into one when
    /// [`LexicalWriter::merged_at_commit`]); returns the number of live documents.
    pub fn commit(mut self) -> Result<u64, LexicalError> {
        self.writer.commit().map_err(LexicalError::tantivy(&self.dir))?;
        if self.merge_at_commit {
            let ids = self
                .writer
                .index()
                .searchable_segment_ids()
                .map_err(LexicalError::tantivy(&self.dir))?;
            if ids.len() > 1 {
                self.writer
                    .merge(&ids)
                    .wait()
                    .map_err(LexicalError::tantivy(&self.dir))?;
                self.writer.commit().map_err(LexicalError::tantivy(&self.dir))?;
            }
        }
        let index = self.writer.index().clone();
        self.writer
            .wait_merging_threads()
            .map_err(LexicalError::tantivy(&self.dir))?;
        let reader = index.reader().map_err(LexicalError::tantivy(&self.dir))?;
        Ok(reader.searcher().num_docs())
    }
}

fn is_minor(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Field | SymbolKind::Constant | SymbolKind::Variable
    )
}

/// Containers are represented by their members' documents; indexing their whole body too
/// would double the index for no ranking gain.
fn has_own_body(kind: SymbolKind) -> bool {
    !kind.is_container()
}

/// Hard-links (or copies) a tantivy folder's files into `dir`. `meta.json` and
/// `.managed.json` are copied: tantivy rewrites them.
fn link_files(base: &Path, dir: &Path) -> Result<(), LexicalError> {
    let entries = fs::read_dir(base).map_err(|source| LexicalError::Io {
        path: base.to_path_buf(),
        source,
    })?;
    for e in entries.flatten() {
        let name = e.file_name();
        let name_str = name.to_string_lossy();
        if name_str.ends_with(".lock") || !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let to = dir.join(&name);
        let copy = name_str == "meta.json" || name_str == ".managed.json";
        let linked = !copy && fs::hard_link(e.path(), &to).is_ok();
        if !linked {
            fs::copy(e.path(), &to).map_err(|source| LexicalError::Io {
                path: to.clone(),
                source,
            })?;
        }
    }
    Ok(())
}
