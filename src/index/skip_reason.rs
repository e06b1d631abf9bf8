//! Why a file was not indexed. Every skip is counted by reason.

use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// Larger than `max_file_size`.
    TooLarge,
    /// A NUL byte in the first 8 KiB.
    Binary,
    /// Very long lines (minified or generated), or a `.min.` file name.
    Minified,
    /// A vendored or build folder (`node_modules`, `vendor`, a cargo `target`...), counted
    /// once per folder.
    VendoredDir,
    /// A symbolic link, not followed (`--follow-symlinks` follows them).
    Symlink,
    /// A symbolic link that leads back into its own ancestors.
    SymlinkLoop,
    /// Could not be read (permissions, vanished during the walk, IO error).
    Unreadable,
    /// No grammar for this file's extension.
    UnsupportedLanguage,
    /// Its parse ran past a bound (`max_parse_ms`, `max_tree_nodes`); the detail names it.
    ParseLimit,
    /// A named pipe, socket or device: never opened (reading one can wait forever). An ignore
    /// file of this kind skips its folder, whose rules cannot be read.
    SpecialFile,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::TooLarge => "too-large",
            SkipReason::Binary => "binary",
            SkipReason::Minified => "minified",
            SkipReason::VendoredDir => "vendored-dir",
            SkipReason::Symlink => "symlink",
            SkipReason::SymlinkLoop => "symlink-loop",
            SkipReason::Unreadable => "unreadable",
            SkipReason::UnsupportedLanguage => "unsupported-language",
            SkipReason::ParseLimit => "parse-limit",
            SkipReason::SpecialFile => "special-file",
        }
    }
}
