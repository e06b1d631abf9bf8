//! `ModelChain`: several models behind one, each call going to the first that answers — in
//! the order written (a fallback chain), or by measured latency: the candidate that has
//! answered fastest so far (a moving average of its wall time per call) first, a candidate
//! never measured before that, and one that fails at the back. The averages are kept in a
//! small table shared by every session (`latency.json` in the agent's state folder), so a
//! new run starts from what earlier runs measured. A call cut by Ctrl-C or the run's
//! deadline ends the chain there: no other model is tried, none is marked down.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::providers::{Message, ModelReply, ProviderError, ToolModel, ToolSpec};

/// Weight of the newest measurement in the moving average.
const ALPHA: f64 = 0.3;

/// One model's measured latency.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    /// Moving average of milliseconds per call.
    pub mean_ms: f64,
    pub calls: u64,
    pub failures: u64,
}

pub struct ModelChain {
    candidates: Vec<Arc<dyn ToolModel>>,
    /// Order by measured latency (else as written).
    fastest: bool,
    table: Mutex<BTreeMap<String, Latency>>,
    path: Option<PathBuf>,
}

impl ModelChain {
    /// A fallback chain: the models tried in the order given.
    pub fn in_order(candidates: Vec<Arc<dyn ToolModel>>) -> ModelChain {
        ModelChain {
            candidates,
            fastest: false,
            table: Mutex::new(BTreeMap::new()),
            path: None,
        }
    }

    /// Fastest first; `path`: where the latency table is read from and written back to
    /// (`None`: this run only).
    pub fn fastest(candidates: Vec<Arc<dyn ToolModel>>, path: Option<PathBuf>) -> ModelChain {
        let table = path
            .as_ref()
            .and_then(|p| std::fs::read(p).ok())
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        ModelChain {
            candidates,
            fastest: true,
            table: Mutex::new(table),
            path,
        }
    }

    /// The table as measured so far, by model id.
    pub fn table(&self) -> BTreeMap<String, Latency> {
        self.table.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// Candidates in the order to try: never measured first (in the order given), then by
    /// mean latency; a model whose last call failed counts as the slowest.
    fn order(&self) -> Vec<usize> {
        if !self.fastest {
            return (0..self.candidates.len()).collect();
        }
        let table = self.table();
        let key = |i: usize| -> (u8, f64) {
            match table.get(&self.candidates[i].id()) {
                None => (0, i as f64),
                Some(l) if l.calls == 0 => (2, l.failures as f64),
                Some(l) => (1, l.mean_ms),
            }
        };
        let mut order: Vec<usize> = (0..self.candidates.len()).collect();
        order.sort_by(|&a, &b| key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal));
        order
    }

    fn record(&self, id: String, ms: Option<f64>) {
        if !self.fastest {
            return;
        }
        let Ok(mut table) = self.table.lock() else {
            return;
        };
        let entry = table.entry(id).or_default();
        match ms {
            Some(ms) if entry.calls == 0 => {
                entry.mean_ms = ms;
                entry.calls = 1;
            }
            Some(ms) => {
                entry.mean_ms = ALPHA * ms + (1.0 - ALPHA) * entry.mean_ms;
                entry.calls += 1;
            }
            None => {
                // A failure: the model goes to the back until it answers again.
                entry.failures += 1;
                entry.calls = 0;
            }
        }
        if let Some(path) = &self.path
            && let Ok(bytes) = serde_json::to_vec_pretty(&*table)
        {
            let tmp = path.with_extension("json.tmp");
            if std::fs::write(&tmp, bytes).is_ok() {
                let _ = std::fs::rename(&tmp, path);
            }
        }
    }
}

impl ToolModel for ModelChain {
    fn id(&self) -> String {
        let ids: Vec<String> = self.candidates.iter().map(|m| m.id()).collect();
        match self.fastest {
            true => format!("fastest of {}", ids.join(", ")),
            false => ids.join(" -> "),
        }
    }

    fn complete(
        &self,
        system: &str,
        messages: &[Message],
        tools: &[ToolSpec],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ModelReply, ProviderError> {
        let mut last = None;
        for i in self.order() {
            let model = &self.candidates[i];
            let started = Instant::now();
            match model.complete(system, messages, tools, on_text) {
                Ok(reply) => {
                    self.record(model.id(), Some(started.elapsed().as_secs_f64() * 1000.0));
                    return Ok(reply);
                }
                // The run's end, not the model's fault: no other model is tried or marked down.
                Err(e @ (ProviderError::Cancelled { .. } | ProviderError::Deadline { .. })) => {
                    return Err(e);
                }
                Err(e) => {
                    tracing::warn!(model = %model.id(), error = %e, "model failed; trying the next");
                    self.record(model.id(), None);
                    last = Some(e);
                }
            }
        }
        Err(last.unwrap_or_else(|| ProviderError::Settings("no model to route to".into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    struct Slow(&'static str, u64, bool);

    /// A model whose call the user interrupts.
    struct Interrupted;

    impl ToolModel for Interrupted {
        fn id(&self) -> String {
            "interrupted".into()
        }
        fn complete(
            &self,
            _: &str,
            _: &[Message],
            _: &[ToolSpec],
            _: &mut dyn FnMut(&str),
        ) -> Result<ModelReply, ProviderError> {
            Err(ProviderError::Cancelled {
                url: "http://h/v1".into(),
                what: "model call".into(),
            })
        }
    }

    impl ToolModel for Slow {
        fn id(&self) -> String {
            self.0.to_string()
        }
        fn complete(
            &self,
            _: &str,
            _: &[Message],
            _: &[ToolSpec],
            _: &mut dyn FnMut(&str),
        ) -> Result<ModelReply, ProviderError> {
            std::thread::sleep(Duration::from_millis(self.1));
            if self.2 {
                return Err(ProviderError::Settings("down".into()));
            }
            Ok(ModelReply {
                text: self.0.to_string(),
                ..ModelReply::default()
            })
        }
    }

    fn ask(m: &ModelChain) -> String {
        m.complete("", &[], &[], &mut |_| {})
            .map(|r| r.text)
            .unwrap_or_default()
    }

    #[test]
    fn probes_each_then_keeps_to_the_fastest_and_remembers_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("latency.json");
        let make = || {
            ModelChain::fastest(
                vec![
                    Arc::new(Slow("slow", 60, false)),
                    Arc::new(Slow("fast", 5, false)),
                ],
                Some(path.clone()),
            )
        };
        let m = make();
        // Unmeasured candidates are probed in the order given.
        assert_eq!(ask(&m), "slow");
        assert_eq!(ask(&m), "fast");
        for _ in 0..3 {
            assert_eq!(ask(&m), "fast");
        }
        let t = m.table();
        assert!(t["slow"].mean_ms > t["fast"].mean_ms, "{t:?}");
        assert_eq!(t["fast"].calls, 4);
        // A new run starts from the stored table: no probing of the slow one again.
        let again = make();
        assert_eq!(ask(&again), "fast");
        assert_eq!(again.table()["slow"].calls, 1);
    }

    #[test]
    fn a_fallback_chain_keeps_its_order() {
        let m = ModelChain::in_order(vec![
            Arc::new(Slow("down", 1, true)),
            Arc::new(Slow("slow", 20, false)),
            Arc::new(Slow("fast", 1, false)),
        ]);
        assert_eq!(ask(&m), "slow");
        assert_eq!(ask(&m), "slow");
        assert_eq!(m.id(), "down -> slow -> fast");
    }

    #[test]
    fn an_interrupted_call_ends_the_chain_without_marking_the_model_down() {
        let m = ModelChain::fastest(vec![Arc::new(Interrupted), Arc::new(Slow("up", 1, false))], None);
        let e = m.complete("", &[], &[], &mut |_| {}).err();
        assert!(matches!(e, Some(ProviderError::Cancelled { .. })), "{e:?}");
        assert!(m.table().is_empty(), "{:?}", m.table());
    }

    #[test]
    fn a_failing_model_goes_to_the_back() {
        let m = ModelChain::fastest(
            vec![Arc::new(Slow("down", 1, true)), Arc::new(Slow("up", 20, false))],
            None,
        );
        assert_eq!(ask(&m), "up");
        assert_eq!(m.table()["down"].failures, 1);
        // The failed one is not tried first any more, though it measured faster.
        assert_eq!(ask(&m), "up");
        assert_eq!(m.table()["down"].failures, 1);
    }
}
