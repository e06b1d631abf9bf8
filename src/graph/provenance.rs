//! `Provenance`: how a reference was resolved, and how far to trust it.

use serde::{Deserialize, Serialize};

/// How a reference was tied to its definition, in falling order of confidence.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Provenance {
    /// Through an import or `use` of the file (`from .x import y`, `use crate::a::b`).
    Import,
    /// A path written out in full (`crate::a::f`, `pkg.mod.f`, `Type::f`, `super::f`).
    Qualified,
    /// A method on a receiver whose type is known (`self`, `Self`, `this`, an annotated
    /// parameter).
    Receiver,
    /// Defined in the same file or the same package, visible from the reference.
    Scope,
    /// The only definition of that name (of a fitting kind) in the repository.
    NameUnique,
    /// One of several definitions of that name; all candidates are kept.
    NameAmbiguous,
}

impl Provenance {
    pub const ALL: [Provenance; 6] = [
        Provenance::Import,
        Provenance::Qualified,
        Provenance::Receiver,
        Provenance::Scope,
        Provenance::NameUnique,
        Provenance::NameAmbiguous,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Import => "import",
            Provenance::Qualified => "qualified",
            Provenance::Receiver => "receiver",
            Provenance::Scope => "scope",
            Provenance::NameUnique => "name-unique",
            Provenance::NameAmbiguous => "name-ambiguous",
        }
    }

    /// Confidence of one edge; an ambiguous edge shares it among its `candidates`.
    /// The figures follow the measured precision of each provenance (README, accuracy table).
    pub fn confidence(self, candidates: u32) -> f32 {
        match self {
            Provenance::Import | Provenance::Qualified => 0.95,
            Provenance::Receiver | Provenance::Scope => 0.9,
            Provenance::NameUnique => 0.6,
            Provenance::NameAmbiguous => 0.5 / candidates.max(2) as f32,
        }
    }

    /// Whether an edge of this provenance was resolved by rules rather than by name alone.
    pub fn is_resolved(self) -> bool {
        !matches!(self, Provenance::NameUnique | Provenance::NameAmbiguous)
    }
}

impl std::fmt::Display for Provenance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
