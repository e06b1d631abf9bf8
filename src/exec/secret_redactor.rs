//! `SecretRedactor`: takes secrets out of text and JSON before they are written anywhere
//! that outlives the command (the audit log): values of variables and fields whose names say
//! they are secret (`..KEY`, `..TOKEN`, `..SECRET`, `..PASSWORD`...), and tokens recognisable
//! by their shape (provider API keys, GitHub and Slack tokens, AWS access keys, bearer
//! headers, private key blocks).

use std::sync::LazyLock;

use regex::Regex;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Name fragments that mark a variable or field as secret (matched case-insensitively).
const SECRET_NAMES: [&str; 8] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTHORIZATION",
    "COOKIE",
];

static SHAPES: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // Provider API keys and personal tokens.
        r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}",
        r"\bgh[pousr]_[A-Za-z0-9]{30,}",
        r"\bgithub_pat_[A-Za-z0-9_]{30,}",
        r"\bxox[abprs]-[A-Za-z0-9-]{10,}",
        r"\bAKIA[0-9A-Z]{16}\b",
        r"\bAIza[0-9A-Za-z_-]{35}\b",
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{12,}",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
    ]
    .iter()
    .filter_map(|p| Regex::new(p).ok())
    .collect()
});

/// `NAME=value` and `NAME: value` with a secret-looking NAME.
static ASSIGNMENT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"(?i)\b([A-Z0-9_.-]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)[A-Z0-9_]*)(\s*[=:]\s*)("[^"]*"|'[^']*'|[^\s"',;&|]+)"#).ok()
});

#[derive(Debug, Default, Clone, Copy)]
pub struct SecretRedactor;

impl SecretRedactor {
    /// Whether a variable or field named `name` holds a secret.
    pub fn is_secret_name(name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        SECRET_NAMES.iter().any(|s| upper.contains(s))
    }

    /// `text` with every secret replaced by [`REDACTED`].
    pub fn redact_text(text: &str) -> String {
        let mut out = match ASSIGNMENT.as_ref() {
            Some(re) => re
                .replace_all(text, format!("${{1}}${{2}}{REDACTED}"))
                .into_owned(),
            None => text.to_string(),
        };
        for re in SHAPES.iter() {
            if re.is_match(&out) {
                out = re.replace_all(&out, REDACTED).into_owned();
            }
        }
        out
    }

    /// A JSON value with secrets redacted: strings by [`SecretRedactor::redact_text`], and
    /// the whole value of any field whose name is secret.
    pub fn redact_json(value: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(s) => Value::String(Self::redact_text(s)),
            Value::Array(a) => Value::Array(a.iter().map(Self::redact_json).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| {
                        let v = match Self::is_secret_name(k) && !v.is_null() {
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

#[cfg(test)]
mod tests {
    use super::*;

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
