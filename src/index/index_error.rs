//! Errors of the index layer. Messages are lowercase and name the path they concern.

use std::path::PathBuf;

use crate::lang::LangError;
use crate::lexical::LexicalError;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("no index at {0}; run `ken index build` first")]
    NoIndex(PathBuf),
    #[error("{dir} is not a kenning index ({detail}); refusing to use it")]
    Foreign { dir: PathBuf, detail: String },
    #[error(
        "the index at {dir} has format version {found}, newer than this ken supports ({supported}); upgrade ken or delete the folder"
    )]
    NewerFormat {
        dir: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error(
        "{dir} holds the index of {owner}, not of {root}; pass another --index-dir, or delete the folder to give it to {root}"
    )]
    OtherRoot {
        dir: PathBuf,
        owner: PathBuf,
        root: PathBuf,
    },
    #[error("another `ken index build` is running on {dir} ({holder}); wait for it to finish")]
    Locked { dir: PathBuf, holder: String },
    #[error(
        "index file {path} is damaged ({detail}); `ken index verify` lists the damage, `ken index build` repairs it"
    )]
    Corrupt { path: PathBuf, detail: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Lang(#[from] LangError),
    #[error(transparent)]
    Lexical(#[from] LexicalError),
    #[error("the index at {dir} has no {part} part; run `ken index build` to add it")]
    MissingPart { dir: PathBuf, part: &'static str },
    #[error(
        "the {part} part of the index at {dir} has layout version {found}, this ken reads {reads}; \
         run `ken index build` to {rebuild}",
        rebuild = rebuild_of(part)
    )]
    OldPart {
        dir: PathBuf,
        part: &'static str,
        found: u64,
        reads: u32,
    },
    #[error(
        "the index at {0} has no semantic part (it was built with --no-semantic); run `ken index build` without it"
    )]
    NoSemantic(PathBuf),
    #[error("the index at {dir} has no history part ({why})")]
    NoHistory { dir: PathBuf, why: String },
    #[error("semantic index: {0}")]
    Vector(String),
    #[error("building the thread pool: {0}")]
    ThreadPool(String),
}

impl IndexError {
    /// The reason alone, without the path and advice the full message adds (for reports that
    /// already name the file).
    pub fn brief(&self) -> String {
        match self {
            IndexError::Corrupt { detail, .. } => detail.clone(),
            IndexError::Io { source, .. } => source.to_string(),
            e => e.to_string(),
        }
    }

    /// Whether a build repairs this (a first build killed before its commit, a damaged or
    /// missing `FORMAT`, `CURRENT` or manifest): a server starts and builds in the background.
    pub fn repaired_by_build(&self) -> bool {
        matches!(
            self,
            IndexError::NoIndex(_) | IndexError::Corrupt { .. } | IndexError::Io { .. }
        )
    }

    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> IndexError {
        let path = path.into();
        move |source| IndexError::Io { path, source }
    }
}

/// What `ken index build` does about a part of an older layout: the lexical layout is part of
/// the extractor fingerprint (its documents are made as files are parsed), so every file is
/// read again; the other parts are made again from the records.
fn rebuild_of(part: &str) -> &'static str {
    match part {
        "lexical" => "rebuild the index (a new lexical layout reads every file again)",
        _ => "rebuild that part (the rest is reused)",
    }
}
