//! `EditPolicy`: the class of a file edit and whether it needs a person, from the paths it
//! touches and from what Kenning knows of the change (the impact analysis).
//!
//! Invariants: risk follows what changes. An edit that changes or removes a public
//! definition's signature, or touches CI or system configuration, asks under `on-request`
//! (and is refused under `never`); a new body behind the same signature does not ask, however
//! many definitions depend on it: its blast radius and risk level are recorded as notes.

use serde::Serialize;

use super::action_policy::protected_path;
use super::{ActionClass, ApprovalPolicy, Decision, SandboxMode};
use crate::impact::{ChangeKind, Impact};

#[derive(Debug, Clone)]
pub struct EditPolicy {
    /// Transitive dependents from which an edit is noted as far-reaching (a note, not a
    /// reason to ask).
    pub max_dependents: usize,
}

impl Default for EditPolicy {
    fn default() -> EditPolicy {
        EditPolicy { max_dependents: 25 }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EditVerdict {
    pub class: ActionClass,
    /// Why the edit asks (empty: it does not).
    pub risks: Vec<String>,
    /// What is worth knowing but asks for nothing: the blast radius, the risk level.
    pub notes: Vec<String>,
    #[serde(flatten)]
    pub decision: Decision,
}

impl EditPolicy {
    pub fn judge(&self, impact: &Impact, approval: ApprovalPolicy, sandbox: SandboxMode) -> EditVerdict {
        let protected: Vec<String> = impact
            .changed_files
            .iter()
            .filter_map(|p| protected_path(p).map(|why| format!("`{p}` {why}")))
            .collect();
        let mut risks = protected.clone();
        // A public definition whose declaration changed or that is gone breaks its users; a
        // new body behind the same signature does not.
        let broken: Vec<&str> = impact
            .changed
            .iter()
            .filter(|c| c.public && matches!(c.change, ChangeKind::Signature | ChangeKind::Deleted))
            .map(|c| c.qualified_name.as_str())
            .collect();
        if !broken.is_empty() {
            risks.push(format!(
                "changes public API ({}{})",
                broken.iter().take(5).copied().collect::<Vec<_>>().join(", "),
                if broken.len() > 5 { ", ..." } else { "" }
            ));
        }
        let mut notes = Vec::new();
        if impact.transitive_dependents >= self.max_dependents || impact.bounded {
            notes.push(format!(
                "blast radius of {}{} dependent definitions",
                impact.transitive_dependents,
                if impact.bounded { "+" } else { "" }
            ));
        }
        if impact.risk.level == "high" {
            notes.push(format!("high risk: {}", impact.risk.reasons.join("; ")));
        }
        let class = if protected.is_empty() {
            ActionClass::WorkspaceWrite
        } else {
            ActionClass::Protected
        };
        let ask = match approval {
            ApprovalPolicy::Untrusted => Some(match risks.is_empty() {
                true => "an edit is not read-only".to_string(),
                false => risks.join("; "),
            }),
            _ if sandbox == SandboxMode::ReadOnly => Some("the sandbox is read-only".to_string()),
            _ => (!risks.is_empty()).then(|| risks.join("; ")),
        };
        let decision = match (ask, approval) {
            (None, _) => Decision::Allow,
            (Some(reason), ApprovalPolicy::Never) => Decision::Deny {
                reason: format!("{reason} (approval policy `never`)"),
            },
            (Some(reason), _) => Decision::Ask { reason },
        };
        EditVerdict {
            class,
            risks,
            notes,
            decision,
        }
    }
}
