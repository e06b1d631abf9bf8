//! `EnvScrubber`: the environment a confined command gets — the parent's, without variables
//! whose names say they hold secrets (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`,
//! `*CREDENTIAL*`, `*COOKIE*`, `*AUTHORIZATION*`) or whose values look like tokens, unless
//! the allow-list names them; names on the deny-list go whatever they hold.

use super::SecretRedactor;

#[derive(Debug, Clone, Default)]
pub struct EnvScrubber {
    /// Kept even when they look secret (exact names).
    pub allow: Vec<String>,
    /// Removed even when they look harmless (exact names).
    pub deny: Vec<String>,
}

/// What scrubbing did: the environment to pass, and the names taken out (never the values).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScrubbedEnv {
    pub vars: Vec<(String, String)>,
    pub removed: Vec<String>,
}

impl EnvScrubber {
    pub fn scrub(&self, env: impl IntoIterator<Item = (String, String)>) -> ScrubbedEnv {
        let mut out = ScrubbedEnv::default();
        for (name, value) in env {
            let allowed = self.allow.contains(&name);
            let denied = self.deny.contains(&name);
            let secret =
                SecretRedactor::is_secret_env_name(&name) || SecretRedactor::redact_text(&value) != value;
            if denied || (secret && !allowed) {
                out.removed.push(name);
            } else {
                out.vars.push((name, value));
            }
        }
        out.vars.sort();
        out.removed.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_leave_the_environment_unless_allowed() {
        let env = [
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/u"),
            ("OPENAI_API_KEY", "sk-0123456789abcdefghijkl"),
            ("GITHUB_TOKEN", "ghp_x"),
            ("DB_PASSWORD", "hunter2"),
            ("SOME_URL", "https://x.example/?t=1"),
            ("HIDDEN", "Bearer abcdefghijklmnopqrstu"),
            ("CARGO_REGISTRIES_TOKEN_SAFE", "ok"),
            ("LANG", "C.UTF-8"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()));
        let s = EnvScrubber {
            allow: vec!["CARGO_REGISTRIES_TOKEN_SAFE".into()],
            deny: vec!["SOME_URL".into()],
        }
        .scrub(env);
        let kept: Vec<&str> = s.vars.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(kept, ["CARGO_REGISTRIES_TOKEN_SAFE", "HOME", "LANG", "PATH"]);
        assert_eq!(
            s.removed,
            [
                "DB_PASSWORD",
                "GITHUB_TOKEN",
                "HIDDEN",
                "OPENAI_API_KEY",
                "SOME_URL"
            ]
        );
    }
}
