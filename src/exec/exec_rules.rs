//! `ExecRules`: the rules files a user writes to tune the policy — `.kenning/rules.toml` in
//! the repository and `rules.toml` in the user's config folder — and how they combine with
//! the built-in classes.
//!
//! ```toml
//! [[rule]]
//! match = "cargo test"      # a command's first words (`*` stands for any one word)
//! decision = "allow"        # allow | ask | deny
//! reason = "tests are fine here"
//!
//! [sandbox]
//! read_only = [".kenning"]  # kept read-only besides .git
//! env_allow = ["GH_HOST"]   # kept though the name looks secret
//! env_deny = ["AWS_PROFILE"]
//! ```
//!
//! Invariants:
//! - Rules judge simple commands one by one (every part of a pipeline, list, subshell,
//!   `$(..)` or `sh -c` script); among the rules that match a part, the strictest wins
//!   (deny > ask > allow), whichever file it comes from.
//! - A command that does not parse is never allowed by a rule: only a deny rule can change
//!   its verdict.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{
    ActionClass, ActionPolicy, ApprovalPolicy, CommandVerdict, Decision, EnvScrubber, PolicyContext,
    SandboxMode,
};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum RuleDecision {
    Allow,
    Ask,
    Deny,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Rule {
    #[serde(rename = "match")]
    pub pattern: String,
    pub decision: RuleDecision,
    #[serde(default)]
    pub reason: Option<String>,
    /// The file it came from, and its position there (1-based).
    #[serde(skip_deserializing)]
    pub source: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct SandboxRules {
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    #[serde(default)]
    pub env_allow: Vec<String>,
    #[serde(default)]
    pub env_deny: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
struct RulesFile {
    #[serde(default)]
    rule: Vec<Rule>,
    #[serde(default)]
    sandbox: SandboxRules,
}

#[derive(Debug, thiserror::Error)]
#[error("rules file {path}: {detail}")]
pub struct RulesError {
    pub path: PathBuf,
    pub detail: String,
}

#[derive(Debug, Clone, Default)]
pub struct ExecRules {
    pub rules: Vec<Rule>,
    pub sandbox: SandboxRules,
    /// The files read.
    pub files: Vec<PathBuf>,
}

/// The policy's answer with who gave it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RuledDecision {
    #[serde(flatten)]
    pub decision: Decision,
    /// `policy`, or the rule that decided (`file:N match`).
    pub decided_by: String,
}

impl ExecRules {
    /// The repository's rules file under `workspace`, then the user's; a missing file is no
    /// rules, a malformed one an error naming it.
    pub fn load(workspace: &Path, user_config: Option<&Path>) -> Result<ExecRules, RulesError> {
        let mut out = ExecRules::default();
        let repo = workspace.join(".kenning").join("rules.toml");
        for path in std::iter::once(repo).chain(user_config.map(|c| c.join("rules.toml"))) {
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(RulesError {
                        path,
                        detail: e.to_string(),
                    });
                }
            };
            let file: RulesFile = toml::from_str(&text).map_err(|e| RulesError {
                path: path.clone(),
                detail: e.to_string(),
            })?;
            for (i, mut rule) in file.rule.into_iter().enumerate() {
                if shlex::split(&rule.pattern).is_none_or(|w| w.is_empty()) {
                    return Err(RulesError {
                        path: path.clone(),
                        detail: format!("rule {}: `match` must be one or more words", i + 1),
                    });
                }
                rule.source = format!("{}:{}", path.display(), i + 1);
                out.rules.push(rule);
            }
            out.sandbox.read_only.extend(file.sandbox.read_only);
            out.sandbox.env_allow.extend(file.sandbox.env_allow);
            out.sandbox.env_deny.extend(file.sandbox.env_deny);
            out.files.push(path);
        }
        Ok(out)
    }

    /// The environment scrubber the rules ask for, keeping `extra_allow` too.
    pub fn scrubber(&self, extra_allow: &[String]) -> EnvScrubber {
        EnvScrubber {
            allow: extra_allow
                .iter()
                .chain(&self.sandbox.env_allow)
                .cloned()
                .collect(),
            deny: self.sandbox.env_deny.clone(),
        }
    }

    /// The strictest rule matching a simple command's text.
    pub fn matching(&self, text: &str) -> Option<&Rule> {
        let words =
            shlex::split(text).unwrap_or_else(|| text.split_whitespace().map(str::to_string).collect());
        self.rules
            .iter()
            .filter(|r| matches(&r.pattern, &words))
            .max_by_key(|r| r.decision)
    }

    /// The verdict's decision with the rules applied part by part.
    pub fn decide(
        &self,
        v: &CommandVerdict,
        approval: ApprovalPolicy,
        sandbox: SandboxMode,
        cx: &PolicyContext,
    ) -> RuledDecision {
        let policy = |d: Decision| RuledDecision {
            decision: d,
            decided_by: "policy".to_string(),
        };
        if !v.parsed {
            return match self
                .matching(&v.command)
                .filter(|r| r.decision == RuleDecision::Deny)
            {
                Some(rule) => ruled(rule),
                None => policy(ActionPolicy::decide(v, approval, sandbox, cx)),
            };
        }
        let mut ruled_parts: Vec<&Rule> = Vec::new();
        let mut rest = v.clone();
        rest.parts.retain(|p| match self.matching(&p.text) {
            Some(rule) => {
                ruled_parts.push(rule);
                false
            }
            None => true,
        });
        if let Some(rule) = ruled_parts
            .iter()
            .filter(|r| r.decision == RuleDecision::Deny)
            .max_by_key(|r| r.decision)
        {
            return ruled(rule);
        }
        rest.class = rest
            .parts
            .iter()
            .map(|p| p.class)
            .max()
            .unwrap_or(ActionClass::Read);
        let by_policy = ActionPolicy::decide(&rest, approval, sandbox, cx);
        if by_policy != Decision::Allow {
            return policy(by_policy);
        }
        match ruled_parts.iter().find(|r| r.decision == RuleDecision::Ask) {
            Some(rule) if approval == ApprovalPolicy::Never => RuledDecision {
                decision: Decision::Deny {
                    reason: format!("{} (approval policy `never`)", rule_reason(rule)),
                },
                decided_by: rule.source.clone(),
            },
            Some(rule) => ruled(rule),
            None if !ruled_parts.is_empty() => RuledDecision {
                decision: Decision::Allow,
                decided_by: {
                    let mut sources: Vec<&str> = ruled_parts.iter().map(|r| r.source.as_str()).collect();
                    sources.dedup();
                    sources.join(", ")
                },
            },
            None => policy(Decision::Allow),
        }
    }
}

fn matches(pattern: &str, words: &[String]) -> bool {
    let Some(pat) = shlex::split(pattern) else {
        return false;
    };
    let prog = |w: &str| w.rsplit('/').next().unwrap_or(w).to_string();
    pat.len() <= words.len()
        && pat
            .iter()
            .zip(words)
            .enumerate()
            .all(|(i, (p, w))| p == "*" || if i == 0 { prog(p) == prog(w) } else { p == w })
}

fn rule_reason(rule: &Rule) -> String {
    format!(
        "rule `{}` ({}){}",
        rule.pattern,
        rule.source,
        rule.reason
            .as_deref()
            .map(|r| format!(": {r}"))
            .unwrap_or_default()
    )
}

fn ruled(rule: &Rule) -> RuledDecision {
    let reason = rule_reason(rule);
    RuledDecision {
        decision: match rule.decision {
            RuleDecision::Allow => Decision::Allow,
            RuleDecision::Ask => Decision::Ask { reason },
            RuleDecision::Deny => Decision::Deny { reason },
        },
        decided_by: rule.source.clone(),
    }
}
