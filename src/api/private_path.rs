//! `PrivatePath`: repository paths no request reads however it names them. Version-control
//! internals (`.git`, `.hg`, `.svn` at any depth: `.git/config` often holds credentials, and
//! hooks there run outside any sandbox) are neither read nor written; secrets-shaped files
//! (`.env`, private keys, credential files) are never read, tracked or not, ignored or not.
//!
//! Names are compared without case: on a case-insensitive file system `.GIT/config` is
//! `.git/config`. The rules are by name only, so they hold before the file is opened.

/// Why a repository path may not be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrivatePath {
    /// Under a version-control folder.
    VcsInternals,
    /// Named like a file that holds secrets.
    SecretShaped,
}

const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn"];

/// Templates committed to show which variables exist; they hold no values by convention.
const ENV_TEMPLATES: &[&str] = &["example", "sample", "template", "dist"];

const SECRET_NAMES: &[&str] = &[
    ".env",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".git-credentials",
    ".htpasswd",
    "credentials.json",
];

const SECRET_EXTENSIONS: &[&str] = &["pem", "key", "p12", "pfx", "jks", "keystore", "ppk", "kdbx"];

const SSH_KEYS: &[&str] = &["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"];

impl PrivatePath {
    /// The rule `rel` (a checked, `/`-separated repository path) falls under, if any.
    pub fn of(rel: &str) -> Option<PrivatePath> {
        let parts: Vec<String> = rel.split('/').map(str::to_ascii_lowercase).collect();
        if parts.iter().any(|p| VCS_DIRS.contains(&p.as_str())) {
            return Some(PrivatePath::VcsInternals);
        }
        let name = parts.last()?;
        let dir = parts.len().checked_sub(2).and_then(|i| parts.get(i));
        let secret = SECRET_NAMES.contains(&name.as_str())
            || name
                .strip_prefix(".env.")
                .is_some_and(|rest| !ENV_TEMPLATES.contains(&rest))
            || name
                .rsplit_once('.')
                .is_some_and(|(stem, ext)| !stem.is_empty() && SECRET_EXTENSIONS.contains(&ext))
            || (SSH_KEYS.iter().any(|k| name.starts_with(k)) && !name.ends_with(".pub"))
            // ~/.aws/credentials, ~/.docker/config.json: files copied into a repository by mistake.
            || (dir.is_some_and(|d| d == ".aws") && name == "credentials")
            || (dir.is_some_and(|d| d == ".docker") && name == "config.json");
        secret.then_some(PrivatePath::SecretShaped)
    }

    pub fn reason(self) -> &'static str {
        match self {
            PrivatePath::VcsInternals => {
                "version-control internals (.git, .hg, .svn) are neither read nor written: they may hold credentials, and hooks there run outside any sandbox"
            }
            PrivatePath::SecretShaped => {
                "named like a file that holds secrets (.env, private keys, credential files); it is never served"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vcs_internals_at_any_depth_and_secrets_by_shape_are_private() {
        for (path, why) in [
            (".git/config", PrivatePath::VcsInternals),
            (".GIT/config", PrivatePath::VcsInternals),
            ("vendor/lib/.git/config", PrivatePath::VcsInternals),
            (".hg/hgrc", PrivatePath::VcsInternals),
            ("a/.svn/entries", PrivatePath::VcsInternals),
            (".env", PrivatePath::SecretShaped),
            ("deploy/.env.production", PrivatePath::SecretShaped),
            ("certs/server.pem", PrivatePath::SecretShaped),
            ("tls/server.KEY", PrivatePath::SecretShaped),
            ("keys/id_rsa", PrivatePath::SecretShaped),
            ("keys/id_ed25519_work", PrivatePath::SecretShaped),
            (".netrc", PrivatePath::SecretShaped),
            ("web/.npmrc", PrivatePath::SecretShaped),
            ("ops/.aws/credentials", PrivatePath::SecretShaped),
        ] {
            assert_eq!(PrivatePath::of(path), Some(why), "{path}");
        }
        for path in [
            "src/git.rs",
            ".github/workflows/ci.yml",
            ".gitignore",
            ".env.example",
            "keys/id_rsa.pub",
            "src/key.rs",
            "src/keyboard.py",
            "src/id_map.py",
            "docs/env.md",
            ".key",
        ] {
            assert_eq!(PrivatePath::of(path), None, "{path}");
        }
    }
}
