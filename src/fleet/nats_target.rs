//! `NatsTarget`: which NATS servers the fleet talks to and how it proves who it is. The URLs
//! may carry a user and password or a token (`nats://user:pass@host:4222`,
//! `nats://token@host`); a credentials file (`.creds`, a user JWT and its nkey seed, NATS's
//! decentralised auth) is passed beside them. Several servers are given comma-separated, and
//! the client moves between them on a drop. What is printed or reported is `shown`, with the
//! secrets replaced.

use std::path::PathBuf;
use std::time::Duration;

use super::FleetError;

#[derive(Debug, Clone)]
pub struct NatsTarget {
    /// One or more server URLs, comma-separated.
    pub urls: String,
    /// A NATS credentials file.
    pub credentials: Option<PathBuf>,
}

impl NatsTarget {
    pub fn new(urls: &str, credentials: Option<PathBuf>) -> NatsTarget {
        NatsTarget {
            urls: urls.to_string(),
            credentials,
        }
    }

    /// The URLs with any user, password or token replaced by `***`.
    pub fn shown(&self) -> String {
        redact_credentials(&self.urls)
    }

    /// A client that reconnects forever after a drop (a restarted server is picked up again).
    pub async fn connect(&self, name: &str) -> Result<async_nats::Client, FleetError> {
        let mut urls = Vec::new();
        let mut auth: Option<&str> = None;
        for u in self.urls.split(',').map(str::trim).filter(|u| !u.is_empty()) {
            let (plain, userinfo) = split_userinfo(u);
            if let Some(info) = userinfo {
                if auth.is_some_and(|a| a != info) {
                    return Err(FleetError::Connect {
                        url: self.shown(),
                        detail: "the URLs carry different credentials; give the same on every one".into(),
                    });
                }
                auth = Some(info);
            }
            urls.push(plain);
        }
        if urls.is_empty() {
            return Err(FleetError::Connect {
                url: String::new(),
                detail: "no NATS server URL given".into(),
            });
        }
        // Credentials from a URL apply to every server of the list (async-nats would use them
        // only on the server whose URL carries them).
        let mut options = match auth.map(|a| a.split_once(':')) {
            Some(Some((user, password))) => {
                async_nats::ConnectOptions::with_user_and_password(user.into(), password.into())
            }
            Some(None) => async_nats::ConnectOptions::with_token(auth.unwrap_or_default().into()),
            None => async_nats::ConnectOptions::new(),
        };
        if let Some(path) = &self.credentials {
            options = options
                .credentials_file(path)
                .await
                .map_err(|e| FleetError::Connect {
                    url: self.shown(),
                    detail: format!("credentials file {}: {e}", path.display()),
                })?;
        }
        options
            .name(name)
            .max_reconnects(None)
            .connection_timeout(Duration::from_secs(5))
            .request_timeout(Some(Duration::from_secs(10)))
            .reconnect_delay_callback(|attempt| Duration::from_millis((100 * attempt as u64).min(2000)))
            .connect(urls)
            .await
            .map_err(|e| FleetError::Connect {
                url: self.shown(),
                detail: e.to_string(),
            })
    }
}

/// A URL without its user information, and that information (`user:password` or a token).
fn split_userinfo(u: &str) -> (String, Option<&str>) {
    let (scheme, rest) = u.split_once("://").map_or(("", u), |(s, r)| (s, r));
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) if scheme.is_empty() => (rest[at + 1..].to_string(), Some(&rest[..at])),
        Some(at) => (format!("{scheme}://{}", &rest[at + 1..]), Some(&rest[..at])),
        None => (u.to_string(), None),
    }
}

/// `nats://user:secret@host:4222,nats://token@other` as `nats://***@host:4222,nats://***@other`.
fn redact_credentials(urls: &str) -> String {
    urls.split(',')
        .map(|u| match split_userinfo(u) {
            (plain, Some(_)) => match plain.split_once("://") {
                Some((scheme, rest)) => format!("{scheme}://***@{rest}"),
                None => format!("***@{plain}"),
            },
            (plain, None) => plain,
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::{redact_credentials, split_userinfo};

    #[test]
    fn credentials_never_leave_the_url() {
        assert_eq!(
            redact_credentials("nats://ken:s3cret@10.0.0.1:4222,tls://tok@nats.example:4443"),
            "nats://***@10.0.0.1:4222,tls://***@nats.example:4443"
        );
        assert_eq!(redact_credentials("user:pw@host:4222"), "***@host:4222");
        assert_eq!(
            redact_credentials("nats://127.0.0.1:4222"),
            "nats://127.0.0.1:4222"
        );
        assert_eq!(redact_credentials("ws://host/p@th"), "ws://host/p@th");
    }

    #[test]
    fn user_information_is_split_from_the_address() {
        assert_eq!(
            split_userinfo("nats://ken:pw@h:4222"),
            ("nats://h:4222".to_string(), Some("ken:pw"))
        );
        assert_eq!(split_userinfo("tok@h"), ("h".to_string(), Some("tok")));
        assert_eq!(
            split_userinfo("nats://h:4222"),
            ("nats://h:4222".to_string(), None)
        );
    }
}
