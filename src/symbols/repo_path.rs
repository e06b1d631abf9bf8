//! `RepoPath`: a path relative to the repository root, always `/`-separated, never absolute
//! and never containing `..`, so the working directory never leaks into an index.

use std::fmt;
use std::path::{Component, Path};

use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct RepoPath(String);

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RepoPathError {
    #[error("path {0} is not inside the repository root")]
    OutsideRoot(String),
    #[error("path {0} is not valid UTF-8")]
    NotUtf8(String),
    #[error("path {0} is empty or not relative")]
    NotRelative(String),
}

impl RepoPath {
    /// Builds a repository path from `path`, which must lie under `root`.
    pub fn from_fs(root: &Path, path: &Path) -> Result<Self, RepoPathError> {
        let rel = path
            .strip_prefix(root)
            .map_err(|_| RepoPathError::OutsideRoot(path.display().to_string()))?;
        Self::from_relative(rel)
    }

    /// Builds a repository path from a relative filesystem path.
    pub fn from_relative(rel: &Path) -> Result<Self, RepoPathError> {
        let mut parts: Vec<&str> = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(s) => parts.push(
                    s.to_str()
                        .ok_or_else(|| RepoPathError::NotUtf8(rel.display().to_string()))?,
                ),
                Component::CurDir => {}
                _ => return Err(RepoPathError::NotRelative(rel.display().to_string())),
            }
        }
        if parts.is_empty() {
            return Err(RepoPathError::NotRelative(rel.display().to_string()));
        }
        Ok(RepoPath(parts.join("/")))
    }

    /// Parses an already `/`-separated relative path (as users type it).
    pub fn parse(s: &str) -> Result<Self, RepoPathError> {
        Self::from_relative(Path::new(s.trim_start_matches("./")))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The file name (last component).
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// The parent folder, `""` for files at the root.
    pub fn parent(&self) -> &str {
        self.0.rsplit_once('/').map(|(p, _)| p).unwrap_or("")
    }

    /// The file name's extension without the dot, lowercased by the caller if needed.
    pub fn extension(&self) -> Option<&str> {
        let name = self.file_name();
        name.rsplit_once('.')
            .map(|(_, e)| e)
            .filter(|_| !name.starts_with('.') || name.matches('.').count() > 1)
    }

    /// Converts to a native path below `root`.
    pub fn to_fs(&self, root: &Path) -> std::path::PathBuf {
        let mut p = root.to_path_buf();
        p.extend(self.0.split('/'));
        p
    }
}

impl fmt::Display for RepoPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_separators_and_rejects_escapes() {
        let root = Path::new("/repo");
        let p = RepoPath::from_fs(root, Path::new("/repo/src/a.rs")).unwrap();
        assert_eq!(p.as_str(), "src/a.rs");
        assert_eq!(p.parent(), "src");
        assert_eq!(p.file_name(), "a.rs");
        assert_eq!(p.extension(), Some("rs"));
        assert!(RepoPath::from_fs(root, Path::new("/other/a.rs")).is_err());
        assert!(RepoPath::parse("../a.rs").is_err());
        assert_eq!(RepoPath::parse("./x/y.py").unwrap().as_str(), "x/y.py");
        assert_eq!(RepoPath::parse(".gitignore").unwrap().extension(), None);
    }
}
