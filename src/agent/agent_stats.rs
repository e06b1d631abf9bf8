//! `AgentStats`: what the agent's audit logs say about its sessions: how many finished, how
//! many completed (the task success rate), how many model calls (iterations) a session took
//! on average, and what they cost. Read by `ken agent stats`, and on every scrape by the
//! `/metrics` of `ken serve`, `ken worker` and the fleet's shard servers (`AgentLogCollector`).
//!
//! A session counts once its log holds a `finished` event (the last one wins); a session
//! still running, or killed before it finished, is not a task outcome yet and is left out.
//! Only a log that verifies counts: one whose hash chain breaks is left out whole and listed
//! in `skipped` with the bad line and why (a torn final line is a crash: its intact lines
//! count), so a figure is never made from an edited record.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::gauge::ConstGauge;
use serde::Serialize;

/// The outcome a session's `finished` event records.
#[derive(Debug, Clone, PartialEq)]
struct SessionEnd {
    completed: bool,
    model_calls: u64,
    input_tokens: u64,
    output_tokens: u64,
    cost_usd: f64,
}

/// What one log contributes: how it finished (if it did), or why it was left out.
type LogOutcome = Result<Option<SessionEnd>, SkippedLog>;

impl SessionEnd {
    /// Verifies the log at `path`, then reads its intact lines. `Err` only when it cannot be
    /// read; a log that fails verification is an `Ok(Err(skipped))`.
    fn of_path(path: &Path) -> Result<LogOutcome, std::io::Error> {
        let named = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
        let report = match crate::exec::verify_audit_log(path) {
            Ok(r) => r,
            Err(crate::exec::AuditError::Io { source, .. }) => {
                return Err(std::io::Error::new(source.kind(), named(&source)));
            }
            Err(e) => {
                return Ok(Err(SkippedLog {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                }));
            }
        };
        if let Some(bad) = report.first_bad {
            return Ok(Err(SkippedLog {
                path: path.display().to_string(),
                reason: format!("it fails verification at line {}: {}", bad.line, bad.reason),
            }));
        }
        let text = std::fs::read_to_string(path).map_err(|e| std::io::Error::new(e.kind(), named(&e)))?;
        let intact = usize::try_from(report.lines).unwrap_or(usize::MAX);
        let lines: Vec<&str> = text.lines().take(intact).collect();
        Ok(Ok(SessionEnd::of_lines(lines.into_iter())))
    }

    /// The last `finished` event among a log's lines, if there is one.
    fn of_lines<'a>(lines: impl DoubleEndedIterator<Item = &'a str>) -> Option<SessionEnd> {
        let finished = lines
            .rev()
            .filter(|l| l.contains("\"finished\""))
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .find(|v| v["event"]["kind"] == "finished")?;
        let e = &finished["event"];
        Some(SessionEnd {
            completed: e["state"] == "completed",
            model_calls: e["steps"].as_u64().unwrap_or(0),
            input_tokens: e["input_tokens"].as_u64().unwrap_or(0),
            output_tokens: e["output_tokens"].as_u64().unwrap_or(0),
            cost_usd: e["cost_usd"].as_f64().unwrap_or(0.0),
        })
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct AgentStats {
    /// Sessions whose log records how they finished.
    pub sessions: usize,
    pub completed: usize,
    /// Finished in any other state (failed, cancelled).
    pub failed: usize,
    /// completed / sessions (0 without sessions).
    pub success_rate: f64,
    /// Model calls per finished session: the loop's iterations.
    pub average_model_calls: f64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// Logs left out because they fail verification, each with the bad line and why.
    pub skipped: Vec<SkippedLog>,
}

/// A log the statistics leave out.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SkippedLog {
    pub path: String,
    pub reason: String,
}

impl AgentStats {
    /// The statistics of these audit logs; a log that cannot be read is an error naming it,
    /// one that fails verification is left out and listed in `skipped`.
    pub fn from_logs(logs: &[PathBuf]) -> Result<AgentStats, std::io::Error> {
        let mut outcomes = Vec::new();
        for log in logs {
            outcomes.push(SessionEnd::of_path(log)?);
        }
        Ok(AgentStats::of_outcomes(outcomes))
    }

    /// The audit logs of a sessions folder: `<dir>/<session>/audit.jsonl`.
    pub fn session_logs(dir: &Path) -> Vec<PathBuf> {
        let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path().join("audit.jsonl"))
            .filter(|p| p.is_file())
            .collect();
        logs.sort();
        logs
    }

    fn of_outcomes(outcomes: Vec<LogOutcome>) -> AgentStats {
        let mut s = AgentStats::default();
        let mut calls = 0u64;
        let mut ends = Vec::new();
        for o in outcomes {
            match o {
                Ok(end) => ends.extend(end),
                Err(skipped) => s.skipped.push(skipped),
            }
        }
        for e in &ends {
            s.sessions += 1;
            if e.completed {
                s.completed += 1;
            } else {
                s.failed += 1;
            }
            calls += e.model_calls;
            s.input_tokens += e.input_tokens;
            s.output_tokens += e.output_tokens;
            s.cost_usd += e.cost_usd;
        }
        if s.sessions > 0 {
            s.success_rate = s.completed as f64 / s.sessions as f64;
            s.average_model_calls = calls as f64 / s.sessions as f64;
        }
        s
    }
}

/// What a scrape knew of a log: its length and modification time, and how it finished.
type SeenLog = (u64, Option<SystemTime>, LogOutcome);

/// A Prometheus collector over a sessions folder, read at each scrape. A log is parsed again
/// only when its length or modification time changed, so a scrape costs a `stat` per session.
#[derive(Debug)]
pub struct AgentLogCollector {
    dir: PathBuf,
    seen: Mutex<HashMap<PathBuf, SeenLog>>,
}

impl AgentLogCollector {
    pub fn new(dir: PathBuf) -> AgentLogCollector {
        AgentLogCollector {
            dir,
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// The statistics of the folder now.
    pub fn stats(&self) -> AgentStats {
        let mut seen = match self.seen.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        };
        let logs = AgentStats::session_logs(&self.dir);
        seen.retain(|p, _| logs.contains(p));
        let mut outcomes = Vec::new();
        for log in logs {
            let Ok(meta) = std::fs::metadata(&log) else {
                continue;
            };
            let key = (meta.len(), meta.modified().ok());
            let outcome = match seen.get(&log) {
                Some((len, mtime, outcome)) if (*len, *mtime) == key => outcome.clone(),
                _ => {
                    // Unreadable now (removed mid-scrape): not counted, tried again next time.
                    let Ok(outcome) = SessionEnd::of_path(&log) else {
                        continue;
                    };
                    seen.insert(log, (key.0, key.1, outcome.clone()));
                    outcome
                }
            };
            outcomes.push(outcome);
        }
        AgentStats::of_outcomes(outcomes)
    }
}

fn gauge<N>(encoder: &mut DescriptorEncoder, name: &str, help: &str, value: N) -> Result<(), std::fmt::Error>
where
    ConstGauge<N>: EncodeMetric,
{
    let g = ConstGauge::new(value);
    let m = encoder.encode_descriptor(name, help, None, g.metric_type())?;
    g.encode(m)
}

impl Collector for AgentLogCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let s = self.stats();
        gauge(
            &mut encoder,
            "agent_sessions",
            "Agent sessions whose audit log records how they finished",
            s.sessions as i64,
        )?;
        gauge(
            &mut encoder,
            "agent_sessions_completed",
            "Finished agent sessions that completed their task",
            s.completed as i64,
        )?;
        gauge(
            &mut encoder,
            "agent_success_ratio",
            "Completed over finished agent sessions (0 without sessions)",
            s.success_rate,
        )?;
        gauge(
            &mut encoder,
            "agent_average_iterations",
            "Model calls per finished agent session",
            s.average_model_calls,
        )?;
        gauge(
            &mut encoder,
            "agent_logs_skipped",
            "Agent audit logs left out of these figures because they fail verification",
            s.skipped.len() as i64,
        )?;
        gauge(
            &mut encoder,
            "agent_cost_usd",
            "Model cost of the finished agent sessions, in US dollars",
            s.cost_usd,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(state: &str, steps: u64) -> serde_json::Value {
        serde_json::json!({"kind": "finished", "state": state, "steps": steps,
            "input_tokens": 100, "output_tokens": 10, "cost_usd": 0.5})
    }

    /// A real, hash-chained log of these events (rewritten from scratch).
    fn session(dir: &Path, name: &str, events: &[serde_json::Value]) {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        let path = d.join("audit.jsonl");
        let _ = std::fs::remove_file(&path);
        let mut log = crate::exec::AuditLog::open(&path).unwrap();
        for e in events {
            log.append(e).unwrap();
        }
    }

    #[test]
    fn rate_and_iterations_count_finished_sessions_only() {
        let tmp = tempfile::tempdir().unwrap();
        let start = serde_json::json!({"kind": "started"});
        session(tmp.path(), "a", &[start.clone(), finished("completed", 4)]);
        session(tmp.path(), "b", &[start.clone(), finished("failed", 8)]);
        session(tmp.path(), "c", &[start.clone(), finished("completed", 3)]);
        session(tmp.path(), "running", std::slice::from_ref(&start));
        let c = AgentLogCollector::new(tmp.path().to_path_buf());
        let s = c.stats();
        assert_eq!((s.sessions, s.completed, s.failed), (3, 2, 1));
        assert!((s.success_rate - 2.0 / 3.0).abs() < 1e-9);
        assert!((s.average_model_calls - 5.0).abs() < 1e-9);
        assert_eq!(
            s,
            AgentStats::from_logs(&AgentStats::session_logs(tmp.path())).unwrap()
        );

        // The running session finishes: the next scrape sees it.
        session(tmp.path(), "running", &[start, finished("cancelled", 1)]);
        let s = c.stats();
        assert_eq!((s.sessions, s.completed, s.failed), (4, 2, 2));
        assert!((s.average_model_calls - 4.0).abs() < 1e-9);

        let mut reg = prometheus_client::registry::Registry::with_prefix("ken");
        reg.register_collector(Box::new(c));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &reg).unwrap();
        assert!(text.contains("ken_agent_success_ratio 0.5"), "{text}");
        assert!(text.contains("ken_agent_average_iterations 4.0"), "{text}");
        assert!(text.contains("ken_agent_sessions 4"), "{text}");
    }

    #[test]
    fn token_counts_survive_and_a_tampered_log_is_left_out_with_its_line() {
        let tmp = tempfile::tempdir().unwrap();
        let start = serde_json::json!({"kind": "started"});
        session(tmp.path(), "a", &[start.clone(), finished("completed", 4)]);
        session(tmp.path(), "b", &[start, finished("completed", 2)]);
        let logs = AgentStats::session_logs(tmp.path());
        let s = AgentStats::from_logs(&logs).unwrap();
        // Written through the audit log's redactor, the counts are still there.
        assert_eq!((s.sessions, s.input_tokens, s.output_tokens), (2, 200, 20));
        assert!(s.skipped.is_empty());

        // Someone turns b's failure story into more tokens: b is left out, named.
        let b = tmp.path().join("b/audit.jsonl");
        let text = std::fs::read_to_string(&b)
            .unwrap()
            .replace("\"steps\":2", "\"steps\":1");
        std::fs::write(&b, text).unwrap();
        for s in [
            AgentStats::from_logs(&logs).unwrap(),
            AgentLogCollector::new(tmp.path().to_path_buf()).stats(),
        ] {
            assert_eq!((s.sessions, s.input_tokens), (1, 100), "{s:?}");
            assert_eq!(s.skipped.len(), 1, "{s:?}");
            assert!(s.skipped[0].path.ends_with("b/audit.jsonl"), "{s:?}");
            assert!(s.skipped[0].reason.contains("line 2"), "{s:?}");
        }
    }

    #[test]
    fn an_unreadable_log_is_named() {
        let e = AgentStats::from_logs(&[PathBuf::from("/nonexistent/audit.jsonl")]).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/audit.jsonl"), "{e}");
    }
}
