//! `Risk`: how risky a change is, from its blast radius and the tests found for it, with the
//! reasons for the level.

use std::collections::HashSet;

use serde::Serialize;

use super::blast_radius::Affected;
use super::changed_symbol::{ChangeKind, ChangedSymbol};
use super::test_selection::TestToRun;
use crate::context::area_of;
use crate::lang::PathKind;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Risk {
    /// `low`, `medium` or `high`.
    pub level: &'static str,
    pub reasons: Vec<String>,
}

impl Risk {
    /// The level from fan-in, breaking declarations, the public API, dependents in other
    /// parts of the repository and tests that reach the change.
    pub(super) fn assess(
        changed: &[ChangedSymbol],
        affected: &[Affected],
        tests: &[TestToRun],
        public_api: &[String],
        direct: usize,
    ) -> Risk {
        let mut reasons = Vec::new();
        let breaking = changed
            .iter()
            .any(|c| matches!(c.change, ChangeKind::Signature | ChangeKind::Deleted));
        let public_changed = changed
            .iter()
            .any(|c| c.public && !PathKind::of(&c.path).is_test());
        let areas: HashSet<String> = affected
            .iter()
            .filter(|a| !a.is_test)
            .map(|a| area_of(&a.path))
            .collect();
        let changed_areas: HashSet<String> = changed.iter().map(|c| area_of(&c.path)).collect();
        let cross = areas.iter().any(|a| !changed_areas.contains(a));
        let graph_tests = tests.iter().filter(|t| t.found_by == "graph").count();
        let mut score = 0;
        if direct >= 20 {
            reasons.push(format!("high fan-in: {direct} direct dependents"));
            score += 2;
        } else if direct >= 5 {
            reasons.push(format!("fan-in: {direct} direct dependents"));
            score += 1;
        }
        if breaking {
            reasons.push("a declaration changed or was deleted: callers may break".into());
            score += 1;
        }
        if public_changed || !public_api.is_empty() {
            reasons.push(format!(
                "public API touched or reached ({} definitions)",
                public_api.len()
            ));
            score += 1;
        }
        if cross {
            reasons.push("dependents in other parts of the repository".into());
            score += 1;
        }
        if graph_tests == 0 {
            reasons.push(match tests.is_empty() {
                true => "no test reaches the change".into(),
                false => "no test reaches the change through the graph (only by naming)".into(),
            });
            score += 1;
        }
        if changed.is_empty() {
            reasons.push("no definition changed (comments, imports or unindexed files only)".into());
        }
        let level = match score {
            0 | 1 => "low",
            2 | 3 => "medium",
            _ => "high",
        };
        Risk { level, reasons }
    }
}
