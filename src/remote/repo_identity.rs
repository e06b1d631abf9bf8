//! `RepoIdentity`: which repository and commit a working tree is, as snapshots are keyed —
//! read from git (`remote.origin.url`, `HEAD`, `git status`).

use std::path::Path;
use std::process::Command;

use super::RemoteError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoIdentity {
    /// `github.com/psf/requests` from the origin URL, or the name given.
    pub repo: String,
    pub commit: String,
    /// Uncommitted changes (tracked or untracked, ignored files aside).
    pub dirty: bool,
}

impl RepoIdentity {
    /// The identity of the working tree at `root`; `name` replaces the key from the origin URL
    /// (needed when there is no origin).
    pub fn of(root: &Path, name: Option<&str>) -> Result<RepoIdentity, RemoteError> {
        let commit = git(root, &["rev-parse", "--verify", "HEAD"])?;
        let repo = match name {
            Some(n) => sanitize(n),
            None => {
                let url = git(root, &["config", "--get", "remote.origin.url"]).map_err(|_| {
                    RemoteError::Git(format!(
                        "{} has no origin remote to name it by: pass --name",
                        root.display()
                    ))
                })?;
                repo_key(&url)
            }
        };
        if repo.is_empty() {
            return Err(RemoteError::Git(
                "the repository name is empty: pass --name".to_string(),
            ));
        }
        let dirty = !git(root, &["status", "--porcelain"])?.is_empty();
        Ok(RepoIdentity { repo, commit, dirty })
    }

    /// `HEAD` and its first-parent ancestors, nearest first, at most `n`.
    pub fn ancestors(root: &Path, n: usize) -> Result<Vec<String>, RemoteError> {
        let out = git(
            root,
            &["rev-list", "--first-parent", &format!("--max-count={n}"), "HEAD"],
        )?;
        Ok(out.lines().map(str::to_string).collect())
    }
}

fn git(root: &Path, args: &[&str]) -> Result<String, RemoteError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .output()
        .map_err(|e| RemoteError::Git(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(RemoteError::Git(format!(
            "git {} in {}: {}",
            args.join(" "),
            root.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `https://github.com/psf/requests.git`, `git@github.com:psf/requests` and
/// `ssh://git@github.com/psf/requests/` all name `github.com/psf/requests`.
fn repo_key(url: &str) -> String {
    let mut s = url.trim();
    if let Some(i) = s.find("://") {
        s = &s[i + 3..];
    }
    if let Some(i) = s.find('@')
        && s[..i].find('/').is_none()
    {
        s = &s[i + 1..];
    }
    let s = s.trim_end_matches('/');
    let s = s.strip_suffix(".git").unwrap_or(s);
    // scp form `host:path`, and `host:port/path`.
    let s = match s.split_once(':') {
        Some((host, rest)) if !host.contains('/') => {
            let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            format!("{}/{}", host.to_ascii_lowercase(), rest.trim_start_matches('/'))
        }
        _ => match s.split_once('/') {
            Some((host, rest)) => format!("{}/{rest}", host.to_ascii_lowercase()),
            None => s.to_string(),
        },
    };
    sanitize(&s)
}

/// Keeps `[A-Za-z0-9._-]` and `/` between non-empty parts; anything else becomes `_`.
fn sanitize(s: &str) -> String {
    s.split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .map(|p| {
            p.chars()
                .map(
                    |c| match c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                        true => c,
                        false => '_',
                    },
                )
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_urls_of_one_repository_name_it_alike() {
        for url in [
            "https://github.com/psf/requests.git",
            "https://github.com/psf/requests",
            "https://user:token@GitHub.com/psf/requests/",
            "git@github.com:psf/requests.git",
            "ssh://git@github.com/psf/requests",
            "ssh://git@github.com:22/psf/requests.git",
        ] {
            assert_eq!(repo_key(url), "github.com/psf/requests", "{url}");
        }
        assert_eq!(repo_key("/srv/git/tools.git"), "srv/git/tools");
    }

    #[test]
    fn names_cannot_leave_their_prefix() {
        assert_eq!(sanitize("../../etc/x y"), "etc/x_y");
        assert_eq!(sanitize("team//a/./b"), "team/a/b");
    }
}
