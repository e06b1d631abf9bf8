//! `ken serve`: turns the arguments into a [`ServeLifecycle`] (which opens or first builds the
//! index, starts the watcher, and runs the chosen transports until stopped) and tells a person
//! on stderr what it does.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};

use super::args::{ServeArgs, ToolSetArg};
use super::progress::ProgressBars;
use crate::agent::AgentLogCollector;
use crate::api::BuildObserver;
use crate::server::{
    ServeConfig, ServeHost, ServeLifecycle, ServeNotice, ServerMetrics, ToolSet, parse_addr,
};

pub fn serve(a: ServeArgs, quiet: bool) -> Result<ExitCode> {
    if a.fleet {
        return super::fleet_commands::serve_fleet(a);
    }
    let config = serve_config(&a)?;
    check_repo(&a)?;
    if let Some(dir) = super::exec_commands::agent_sessions_dir() {
        ServerMetrics::get().add_collector(Box::new(AgentLogCollector::new(dir)));
    }
    let lifecycle = ServeLifecycle {
        config,
        repo: a.repo,
        index_dir: a.location.index_dir,
        watch: !a.no_watch,
        debounce: Duration::from_millis(a.debounce_ms),
    };
    lifecycle.run(Arc::new(StderrNotices { quiet }))?;
    Ok(ExitCode::SUCCESS)
}

/// The transports' config from the arguments, checked.
fn serve_config(a: &ServeArgs) -> Result<ServeConfig> {
    if !a.mcp && a.http.is_none() {
        bail!(
            "give --mcp (MCP on stdio), --mcp --http ADDR (MCP over HTTP at /mcp) or --http ADDR (the JSON API)"
        );
    }
    if !(a.deadline.is_finite() && a.deadline > 0.0 && a.deadline <= 3600.0) {
        bail!(
            "--deadline must be between 0 and 3600 seconds, not {}",
            a.deadline
        );
    }
    if a.max_body < 1024 {
        bail!("--max-body must be at least 1024 bytes, not {}", a.max_body);
    }
    let config = ServeConfig {
        mcp: a.mcp,
        http: a.http.as_deref().map(parse_addr).transpose()?,
        allow_remote: a.allow_remote,
        token: std::env::var("KEN_SERVE_TOKEN").ok().filter(|t| !t.is_empty()),
        deadline: Duration::from_secs_f64(a.deadline),
        max_body: a.max_body,
        tools: match a.tools {
            ToolSetArg::Core => ToolSet::Core,
            ToolSetArg::Full => ToolSet::Full,
        },
    };
    config.check()?;
    Ok(config)
}

/// `--repo`, when given, is a folder.
fn check_repo(a: &ServeArgs) -> Result<()> {
    if let Some(r) = &a.repo
        && !r.is_dir()
    {
        match std::fs::metadata(r) {
            Ok(m) => bail!(
                "--repo {}: {}, not a folder",
                r.display(),
                crate::util::special_kind(&m.file_type())
            ),
            Err(e) => bail!("--repo {}: {e}", r.display()),
        }
    }
    Ok(())
}

/// The lifecycle's notices on stderr; a first build's progress bars there too (hidden with
/// `--quiet` or when stderr is not a terminal).
struct StderrNotices {
    quiet: bool,
}

impl ServeHost for StderrNotices {
    fn build_progress(&self) -> Box<dyn BuildObserver> {
        use std::io::IsTerminal;
        Box::new(ProgressBars::new(self.quiet || !std::io::stderr().is_terminal()))
    }

    fn notice(&self, notice: ServeNotice) {
        let generation = |g: Option<u64>| {
            g.map_or("building its first index".to_string(), |g| {
                format!("generation {g}")
            })
        };
        match notice {
            ServeNotice::Repairing { root, reason } => eprintln!(
                "the index of {} cannot be opened ({reason}); rebuilding it while serving",
                root.display()
            ),
            ServeNotice::FirstBuild { root } => {
                eprintln!("no index for {}: building one while serving", root.display())
            }
            ServeNotice::FirstBuildFailed { error } => {
                eprintln!("error: the first index build failed: {error}")
            }
            ServeNotice::SecondStageFailed { error } => {
                eprintln!("warning: the second stage of the first build failed: {error}")
            }
            ServeNotice::NotWatching { error } => eprintln!("warning: not watching the repository: {error}"),
            ServeNotice::ServingStdio { root, generation: g } => {
                eprintln!("serving MCP on stdio for {} ({})", root.display(), generation(g))
            }
            ServeNotice::ServingHttp {
                root,
                generation: g,
                addr,
                mcp,
            } => {
                let what = match mcp {
                    true => format!("MCP at http://{addr}/mcp and the JSON API"),
                    false => "the JSON API".to_string(),
                };
                eprintln!("serving {what} for {} ({})", root.display(), generation(g));
                eprintln!("listening on http://{addr}");
            }
        }
    }
}
