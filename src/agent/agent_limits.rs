//! `AgentLimits`: the hard limits checked before every model call; hitting one ends the run
//! in `Failed` with the limit named.

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct AgentLimits {
    pub max_steps: u32,
    pub max_wall: Duration,
    pub max_tokens: u64,
    pub max_cost_usd: f64,
    pub max_consecutive_errors: u32,
    /// Failed evaluations before the run gives up.
    pub max_evaluations: u32,
}

impl Default for AgentLimits {
    fn default() -> AgentLimits {
        AgentLimits {
            max_steps: 40,
            max_wall: Duration::from_secs(30 * 60),
            max_tokens: 2_000_000,
            max_cost_usd: 5.0,
            max_consecutive_errors: 5,
            max_evaluations: 4,
        }
    }
}
