//! `Mechanism`: one confinement mechanism of a run, and whether it was enforced, and if not,
//! why — what `ken exec --doctor` prints and what every run reports.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MechanismState {
    /// In force for this run.
    Enforced,
    /// In force, but weaker than asked (an older Landlock ABI, say).
    Partial,
    /// Wanted, but the kernel or the environment does not offer it: the run is degraded.
    Unavailable,
    /// Not wanted by the sandbox mode or flags (`full-access`, `--network`).
    Off,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Mechanism {
    pub name: String,
    pub state: MechanismState,
    pub detail: String,
}

impl Mechanism {
    pub fn new(name: &str, state: MechanismState, detail: impl Into<String>) -> Mechanism {
        Mechanism {
            name: name.to_string(),
            state,
            detail: detail.into(),
        }
    }

    /// Wanted and not fully in force.
    pub fn degraded(&self) -> bool {
        matches!(self.state, MechanismState::Partial | MechanismState::Unavailable)
    }
}
