//! `SecretRedactor`: takes secrets out of text and JSON before they are written anywhere
//! that outlives the command (the audit log), by two kinds of evidence:
//! - the value's shape: provider API keys (`sk-…`, `sk-ant-…`), GitHub, GitLab, Slack, npm,
//!   Hugging Face and Stripe tokens, AWS access keys, Google API keys, JWTs, bearer headers,
//!   private key blocks, and the password in a URL's `user:password@`;
//! - the field's or variable's name, split into words (`input_tokens`, `apiKey`,
//!   `OPENAI_API_KEY`): names that say secret (`password`, `secret`, `api_key`,
//!   `access_token`, `authorization`, `cookie`...) lose their whole value; names that only
//!   may (`key`, `signature`, `auth`) lose a string value that looks random (long, no spaces,
//!   high entropy).
//!
//! A name is never judged by a substring: `input_tokens`, `max_tokens` and `tokenizer` are
//! counts and settings, not secrets (a plural `tokens` is a count), and numbers and booleans
//! under any name are kept, since no key format is a bare number.

use std::sync::LazyLock;

use regex::Regex;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Name fragments that mark an environment variable as secret, matched as substrings of the
/// upper-cased name: the sandbox's environment is scrubbed with a wide net, since a variable
/// wrongly removed costs a rerun with `--allow-env` and one wrongly kept leaks.
const SECRET_ENV_FRAGMENTS: [&str; 8] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTHORIZATION",
    "COOKIE",
];

/// Words that make a name secret wherever they stand in it.
const SECRET_WORDS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "secrets",
    "credential",
    "credentials",
    "authorization",
    "cookie",
    "cookies",
    "apikey",
    "token",
];

/// Words that make `… key` secret (`api_key`, `private_key`, `AWS_SECRET_ACCESS_KEY`).
const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "private",
    "secret",
    "signing",
    "encryption",
    "master",
    "client",
    "license",
    "auth",
    "ssh",
    "gpg",
    "service",
    "account",
    "deploy",
    "session",
    "admin",
    "app",
];

/// Words that may name a secret: the value is redacted when it looks random.
const MAYBE_SECRET_WORDS: &[&str] = &["key", "keys", "auth", "signature", "sig", "salt", "pat", "dsn"];

static SHAPES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // Provider API keys and personal tokens.
        r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}",
        r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}",
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",
        r"\bgithub_pat_[A-Za-z0-9_]{30,}",
        r"\bglpat-[A-Za-z0-9_-]{20,}",
        r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
        r"\bxapp-[A-Za-z0-9-]{10,}",
        r"\bnpm_[A-Za-z0-9]{36}\b",
        r"\bhf_[A-Za-z0-9]{30,}",
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        r"\bAIza[0-9A-Za-z_-]{35}\b",
        // JSON Web Tokens: three base64url parts, the first two JSON objects (`eyJ`).
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{12,}",
        r"(?i)\bbasic\s+[A-Za-z0-9+/=]{8,}",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
    ]
    .iter()
    .filter_map(|p| Regex::new(p).ok())
    .collect()
});

/// A URL's `user:password@`: the password goes, the user and host stay.
static URL_PASSWORD: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:)([^\s/@]+)(@)").ok());

/// `NAME=value` and `NAME: value`; whether NAME is secret is decided by
/// [`SecretRedactor::is_secret_name`], not by the pattern.
static ASSIGNMENT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"\b([A-Za-z][A-Za-z0-9_.-]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s"',;&|]+)"#).ok()
});

#[derive(Debug, Default, Clone, Copy)]
pub struct SecretRedactor;

/// How much a name says its value is secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameSays {
    Secret,
    Maybe,
    Nothing,
}

impl SecretRedactor {
    /// Whether a field or variable named `name` holds a secret, judged by its words.
    pub fn is_secret_name(name: &str) -> bool {
        name_says(name) == NameSays::Secret
    }

    /// Whether an environment variable named `name` may hold a secret: any fragment of
    /// [`SECRET_ENV_FRAGMENTS`] in it (the sandbox's wide net).
    pub fn is_secret_env_name(name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        SECRET_ENV_FRAGMENTS.iter().any(|s| upper.contains(s))
    }

    /// `text` with every secret replaced by [`REDACTED`].
    pub fn redact_text(text: &str) -> String {
        // Shapes first: a header's `Bearer <token>` goes whole before the assignment rule
        // sees `Authorization: Bearer` and would stop at the space.
        let mut out = text.to_string();
        if let Some(re) = URL_PASSWORD.as_ref()
            && re.is_match(&out)
        {
            out = re
                .replace_all(&out, format!("${{1}}{REDACTED}${{3}}"))
                .into_owned();
        }
        for re in SHAPES.iter() {
            if re.is_match(&out) {
                out = re.replace_all(&out, REDACTED).into_owned();
            }
        }
        if let Some(re) = ASSIGNMENT.as_ref()
            && re.is_match(&out)
        {
            out = re
                .replace_all(&out, |c: &regex::Captures| {
                    let (name, sep, value) = (&c[1], &c[2], &c[3]);
                    let bare = value.trim_matches(|ch| ch == '"' || ch == '\'');
                    match redacts(name_says(name), bare) {
                        true => format!("{name}{sep}{REDACTED}"),
                        false => c[0].to_string(),
                    }
                })
                .into_owned();
        }
        out
    }

    /// A JSON value with secrets redacted: strings by [`SecretRedactor::redact_text`]; under
    /// a secret name every string, array and object goes whole; under a name that may be
    /// secret, a string that looks random. Numbers and booleans are always kept.
    pub fn redact_json(value: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(s) => Value::String(Self::redact_text(s)),
            Value::Array(a) => Value::Array(a.iter().map(Self::redact_json).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| {
                        let says = name_says(k);
                        let whole = match v {
                            Value::Null | Value::Bool(_) | Value::Number(_) => false,
                            Value::String(s) => redacts(says, s),
                            Value::Array(_) | Value::Object(_) => says == NameSays::Secret,
                        };
                        let v = match whole {
                            true => Value::String(REDACTED.to_string()),
                            false => Self::redact_json(v),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// Whether a value under a name that says `says` is redacted whole.
fn redacts(says: NameSays, value: &str) -> bool {
    match says {
        NameSays::Secret => !value.is_empty() && value != REDACTED,
        NameSays::Maybe => looks_random(value),
        NameSays::Nothing => false,
    }
}

/// The words of a name: split at `_`, `-`, `.`, spaces and lower-to-upper case changes,
/// lower-cased (`OPENAI_API_KEY` -> openai api key, `inputTokens` -> input tokens).
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in name.chars() {
        if !ch.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if ch.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
        cur.push(ch.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn name_says(name: &str) -> NameSays {
    let words = words(name);
    let mut maybe = false;
    for (i, w) in words.iter().enumerate() {
        if SECRET_WORDS.contains(&w.as_str()) {
            return NameSays::Secret;
        }
        if w == "key" || w == "keys" {
            let qualified = i
                .checked_sub(1)
                .and_then(|j| words.get(j))
                .is_some_and(|q| KEY_QUALIFIERS.contains(&q.as_str()));
            if qualified {
                return NameSays::Secret;
            }
        }
        maybe |= MAYBE_SECRET_WORDS.contains(&w.as_str());
    }
    match maybe {
        true => NameSays::Maybe,
        false => NameSays::Nothing,
    }
}

/// A string that looks like generated key material: at least 20 characters, no whitespace,
/// not a path or a sentence, and over 3.5 bits of entropy per character.
fn looks_random(s: &str) -> bool {
    if s.len() < 20 || s.chars().any(char::is_whitespace) || (s.contains('/') && !s.contains('+')) {
        return false;
    }
    let mut counts = std::collections::HashMap::new();
    for b in s.bytes() {
        *counts.entry(b).or_insert(0usize) += 1;
    }
    let n = s.len() as f64;
    let entropy: f64 = counts
        .values()
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum();
    entropy > 3.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_and_other_non_secrets_survive_redaction() {
        let v = serde_json::json!({
            "kind": "model-call",
            "input_tokens": 1234, "output_tokens": 56, "max_tokens": 800,
            "usage": {"inputTokens": 7, "cache_read_input_tokens": 3, "total_tokens": 10},
            "tokens": 42, "tokenizer": "cl100k", "cost_usd": 0.01,
            "key_env": "OPENAI_API_KEY", "sort_key": "path",
            "file": "src/keys.rs", "head": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        });
        assert_eq!(SecretRedactor::redact_json(&v), v);
        for text in [
            "input_tokens=1234 output_tokens=56",
            "max_tokens: 800",
            "cargo test --test api -- --nocapture",
            "see https://example.com/a:b@c",
        ] {
            assert_eq!(SecretRedactor::redact_text(text), text);
        }
        assert!(!SecretRedactor::is_secret_name("input_tokens"));
        assert!(!SecretRedactor::is_secret_name("outputTokens"));
        assert!(SecretRedactor::is_secret_name("access_token"));
        assert!(SecretRedactor::is_secret_name("OPENAI_API_KEY"));
        assert!(SecretRedactor::is_secret_name("apiKey"));
    }

    #[test]
    fn secrets_in_every_shape_are_redacted() {
        let jwt =
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----";
        let samples = [
            "sk-proj-abcdefghijklmnopqrstuvwx",
            "sk-ant-api03-abcdefghijklmnopqrstuv",
            "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstu",
            "glpat-abcdefghij0123456789",
            "xoxb-1234567890-abcdefghij",
            "AKIAABCDEFGHIJKLMNOP",
            "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
            "sk_live_abcdefghijklmnop1234",
            "hf_abcdefghijklmnopqrstuvwxyz0123456",
            jwt,
            pem,
        ];
        for secret in samples {
            let t = SecretRedactor::redact_text(&format!("got {secret} here"));
            assert!(
                t.contains(REDACTED) && !t.contains(&secret[..12]),
                "{secret}: {t}"
            );
        }
        let t = SecretRedactor::redact_text("git clone https://bob:hunter2hunter2@git.example.com/x.git");
        assert_eq!(t, "git clone https://bob:[redacted]@git.example.com/x.git");
        let v = serde_json::json!({
            "password": "hunter2", "client_secret": "abc", "Authorization": "Basic Zm9vOmJhcg==",
            "api_key": "plain", "auth": {"token": "t0"}, "accessToken": "opaque-value",
            "key": "Zk3q9XvB2mN8pL4wR7tY1uI6oP0aS5dF", "signature": "short",
            "headers": {"cookie": "session=abc"},
        });
        let r = SecretRedactor::redact_json(&v);
        for k in [
            "password",
            "client_secret",
            "Authorization",
            "api_key",
            "accessToken",
            "key",
        ] {
            assert_eq!(r[k], REDACTED, "{k}: {r}");
        }
        assert_eq!(r["auth"]["token"], REDACTED, "{r}");
        assert_eq!(r["headers"]["cookie"], REDACTED, "{r}");
        // A name that only may be secret keeps a value that does not look random.
        assert_eq!(r["signature"], "short");
    }

    #[test]
    fn secrets_are_taken_out_of_text_and_json() {
        let t = SecretRedactor::redact_text(
            "OPENAI_API_KEY=sk-abcdefghijklmnopqrstuv curl -H 'Authorization: Bearer abc.def.ghi123456' \
             AWS AKIAABCDEFGHIJKLMNOP ghp_0123456789abcdefghijklmnopqrstuvwxyz done",
        );
        assert!(
            !t.contains("sk-abc") && !t.contains("abc.def") && !t.contains("AKIAABC") && !t.contains("ghp_0"),
            "{t}"
        );
        assert!(
            t.starts_with("OPENAI_API_KEY=[redacted]") && t.ends_with("done"),
            "{t}"
        );
        let plain = "cargo test --test api -- --nocapture";
        assert_eq!(SecretRedactor::redact_text(plain), plain);
        let v = serde_json::json!({"env": {"GITHUB_TOKEN": "x", "PATH": "/usr/bin"}, "argv": ["echo", "password=hunter2"]});
        let r = SecretRedactor::redact_json(&v);
        assert_eq!(r["env"]["GITHUB_TOKEN"], REDACTED);
        assert_eq!(r["env"]["PATH"], "/usr/bin");
        assert_eq!(r["argv"][1], "password=[redacted]");
    }
}
