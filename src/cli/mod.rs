//! Command line: clap arguments -> configs -> the library; output rendering. The only layer
//! that prints (results to stdout, progress and logs to stderr).

mod agent_commands;
mod args;
mod audit_commands;
mod commands;
mod context_commands;
mod exec_commands;
mod fleet_commands;
mod graph_commands;
mod impact_commands;
mod install_commands;
mod progress;
mod remote_commands;
mod render;
mod serve_commands;
mod shared;
mod test_run;

pub use args::{Cli, normalize_args};
pub use commands::run;
