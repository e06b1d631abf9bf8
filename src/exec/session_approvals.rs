//! `SessionApprovals`: the commands a person approved "for the session", kept in a small JSON
//! file per session so that later runs in the same session are not asked again. Only an
//! exact command text is remembered, never a prefix.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct SessionApprovals {
    path: PathBuf,
    commands: BTreeSet<String>,
}

impl SessionApprovals {
    /// Reads `path` (missing or unreadable: nothing approved yet).
    pub fn load(path: &Path) -> SessionApprovals {
        let commands = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        SessionApprovals {
            path: path.to_path_buf(),
            commands,
        }
    }

    pub fn contains(&self, command: &str) -> bool {
        self.commands.contains(command)
    }

    /// Remembers `command`, written through a temp file and a rename.
    pub fn approve(&mut self, command: &str) -> std::io::Result<()> {
        self.commands.insert(command.to_string());
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = self.path.with_extension("tmp");
        let text = serde_json::to_string_pretty(&self.commands).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &self.path)
    }
}
