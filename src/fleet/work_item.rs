//! `WorkItem`: "index repository R at commit C", as queued on `ken.work.<token>`.

use serde::{Deserialize, Serialize};

use super::FleetError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WorkItem {
    /// The repository's key in object storage and in the pointer bucket (`host/owner/name`).
    pub repo: String,
    /// Where a worker fetches it from: a git URL or a path on the worker's machine.
    pub source: String,
    /// The full commit id to index.
    pub commit: String,
    pub enqueued_unix_ms: u64,
}

impl WorkItem {
    pub fn check(&self) -> Result<(), FleetError> {
        if self.repo.is_empty() || self.repo.len() > 512 || self.repo.chars().any(char::is_control) {
            return Err(FleetError::Item(format!("bad repository key {:?}", self.repo)));
        }
        if self.source.is_empty() || self.source.starts_with('-') {
            return Err(FleetError::Item(format!(
                "bad source {:?} for {}",
                self.source, self.repo
            )));
        }
        let hex = self.commit.len() >= 7 && self.commit.len() <= 64;
        if !hex || !self.commit.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(FleetError::Item(format!(
                "bad commit {:?} for {}: a hexadecimal commit id",
                self.commit, self.repo
            )));
        }
        Ok(())
    }

    /// What the stream's duplicate window drops: the same repository at the same commit.
    pub fn message_id(&self) -> String {
        format!("{}@{}", subject_token(&self.repo), self.commit)
    }
}

/// A NATS subject token and key-value key for a repository key: its readable characters
/// (others become `_`) and a hash suffix, so two keys never share a token.
pub fn subject_token(repo: &str) -> String {
    let readable: String = repo
        .chars()
        .take(80)
        .map(|c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            true => c,
            false => '_',
        })
        .collect();
    let hash = blake3::hash(repo.as_bytes()).to_hex();
    format!("{readable}-{}", &hash[..12])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_subject_safe_and_distinct_for_keys_that_read_alike() {
        let a = subject_token("github.com/pallets/flask");
        let b = subject_token("github.com/pallets_flask");
        assert_ne!(a, b);
        for t in [&a, &b] {
            assert!(
                t.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'),
                "{t}"
            );
        }
        assert!(a.starts_with("github_com_pallets_flask-"));
    }

    #[test]
    fn items_with_a_bad_commit_or_source_are_refused() {
        let ok = WorkItem {
            repo: "x/y".into(),
            source: "/srv/y".into(),
            commit: "0123456789abcdef0123456789abcdef01234567".into(),
            enqueued_unix_ms: 0,
        };
        assert!(ok.check().is_ok());
        let bad_commit = WorkItem {
            commit: "HEAD; rm -rf /".into(),
            ..ok.clone()
        };
        assert!(bad_commit.check().is_err());
        let bad_source = WorkItem {
            source: "--upload-pack=evil".into(),
            ..ok
        };
        assert!(bad_source.check().is_err());
    }
}
