//! `ModelRouter`: the model a run uses, from `--model PROVIDER:NAME` or the environment —
//! `openai` (Chat Completions) and `openai-responses` (the Responses API), both from
//! `OPENAI_API_KEY` and `OPENAI_BASE_URL`, `anthropic` (`ANTHROPIC_API_KEY`,
//! `ANTHROPIC_BASE_URL`), `ollama` (`OLLAMA_HOST`, its OpenAI-compatible `/v1`), `local`
//! (any OpenAI-compatible server at `OPENAI_BASE_URL`, llama.cpp's say) — with its price per
//! million tokens, and the privacy rule: a repository marked private (`private = true` in
//! `.kenning/agent.toml`) only goes to a loopback endpoint. A comma-joined chain is a
//! fallback chain, ordered as written, by price (`cheapest:`) or by measured latency
//! (`fastest:`), all through `ModelChain`.

use std::path::Path;
use std::sync::Arc;

use super::model_chain::ModelChain;

use crate::providers::{AnthropicMessages, OpenAiResponses, OpenAiTools, ToolModel};

/// A model and what it costs.
pub struct RoutedModel {
    pub model: Arc<dyn ToolModel>,
    /// Dollars per million input and output tokens (`None`: unknown, counted as 0).
    pub price: Option<(f64, f64)>,
    pub endpoint: String,
}

#[derive(Debug, thiserror::Error)]
#[error("--model {spec}: {detail}")]
pub struct RouteError {
    pub spec: String,
    pub detail: String,
}

/// Known prices, dollars per million tokens (input, output), by model-name prefix.
const PRICES: &[(&str, f64, f64)] = &[
    ("gpt-4o-mini", 0.15, 0.60),
    ("gpt-4o", 2.50, 10.00),
    ("gpt-4.1-mini", 0.40, 1.60),
    ("gpt-4.1", 2.00, 8.00),
    ("o4-mini", 1.10, 4.40),
    ("claude-3-5-haiku", 0.80, 4.00),
    ("claude-haiku", 1.00, 5.00),
    ("claude-sonnet", 3.00, 15.00),
    ("claude-opus", 15.00, 75.00),
];

pub struct ModelRouter;

impl ModelRouter {
    /// `spec` is `PROVIDER:NAME`, or several joined by commas (a fallback chain: each call
    /// goes to the first that answers), or empty (from the environment); `private` restricts
    /// the run to loopback endpoints.
    ///
    /// A chain may start with an order: `cheapest:` tries its models by known price (unknown
    /// prices last), `fastest:` by the latency measured so far (kept in `latency_table` across
    /// sessions; see `ModelChain`). Without one, the chain is tried as written.
    pub fn route(
        spec: Option<&str>,
        private: bool,
        latency_table: Option<&Path>,
    ) -> Result<RoutedModel, RouteError> {
        let (order, rest) = match spec.map(|s| s.trim()) {
            Some(s) if s.starts_with("fastest:") => (Some("fastest"), Some(&s["fastest:".len()..])),
            Some(s) if s.starts_with("cheapest:") => (Some("cheapest"), Some(&s["cheapest:".len()..])),
            other => (None, other),
        };
        let Some(chain) = rest.filter(|s| s.contains(',') || order.is_some()) else {
            return Self::route_one(rest, private);
        };
        let mut routed: Vec<RoutedModel> = chain
            .split(',')
            .map(|s| Self::route_one(Some(s.trim()), private))
            .collect::<Result<_, _>>()?;
        if order == Some("cheapest") {
            // Stable: equal prices keep the order written.
            let cost = |r: &RoutedModel| r.price.map_or(f64::INFINITY, |(i, o)| i + o);
            routed.sort_by(|a, b| cost(a).partial_cmp(&cost(b)).unwrap_or(std::cmp::Ordering::Equal));
        }
        // Priced at the dearest of the chain, so a cost limit is never under-counted.
        let price = routed
            .iter()
            .map(|r| r.price)
            .try_fold((0.0f64, 0.0f64), |acc, p| {
                p.map(|(i, o)| (acc.0.max(i), acc.1.max(o)))
            });
        let endpoint = routed
            .iter()
            .map(|r| r.endpoint.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let models: Vec<Arc<dyn ToolModel>> = routed.into_iter().map(|r| r.model).collect();
        let model: Arc<dyn ToolModel> = match order {
            Some("fastest") => Arc::new(ModelChain::fastest(models, latency_table.map(Path::to_path_buf))),
            _ => Arc::new(ModelChain::in_order(models)),
        };
        Ok(RoutedModel {
            model,
            price,
            endpoint,
        })
    }

    fn route_one(spec: Option<&str>, private: bool) -> Result<RoutedModel, RouteError> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let spec = match spec {
            Some(s) => s.to_string(),
            None if env("ANTHROPIC_API_KEY").is_some() => "anthropic:claude-sonnet-4-5".to_string(),
            None if env("OPENAI_API_KEY").is_some() || env("OPENAI_BASE_URL").is_some() => {
                format!(
                    "openai:{}",
                    env("KEN_MODEL").unwrap_or_else(|| "gpt-4o-mini".to_string())
                )
            }
            None if env("OLLAMA_HOST").is_some() => "ollama:qwen2.5-coder".to_string(),
            None => {
                return Err(RouteError {
                    spec: "(none)".into(),
                    detail: "no model configured: pass --model openai:NAME | anthropic:NAME | ollama:NAME | local:NAME, or set OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST".into(),
                });
            }
        };
        let (provider, name) = spec.split_once(':').ok_or_else(|| RouteError {
            spec: spec.clone(),
            detail: "expected PROVIDER:NAME (openai, openai-responses, anthropic, ollama, local)".into(),
        })?;
        let (model, endpoint): (Arc<dyn ToolModel>, String) = match provider {
            "openai" | "local" => {
                let base = env("OPENAI_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".to_string());
                let mut m = OpenAiTools::new(&base, env("OPENAI_API_KEY"), name);
                // KEN_MODEL_STREAM=0 for servers that call tools only without streaming
                // (llama-cpp-python's, for one).
                m.stream = !matches!(env("KEN_MODEL_STREAM").as_deref(), Some("0" | "false" | "no"));
                (Arc::new(m), base)
            }
            "openai-responses" => {
                let base = env("OPENAI_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".to_string());
                (
                    Arc::new(OpenAiResponses::new(&base, env("OPENAI_API_KEY"), name)),
                    base,
                )
            }
            "ollama" => {
                let host = env("OLLAMA_HOST").unwrap_or_else(|| "http://127.0.0.1:11434".to_string());
                let host = if host.starts_with("http") {
                    host
                } else {
                    format!("http://{host}")
                };
                let base = format!("{}/v1", host.trim_end_matches('/'));
                (Arc::new(OpenAiTools::new(&base, None, name)), base)
            }
            "anthropic" => {
                let base =
                    env("ANTHROPIC_BASE_URL").unwrap_or_else(|| "https://api.anthropic.com".to_string());
                (
                    Arc::new(AnthropicMessages::new(&base, env("ANTHROPIC_API_KEY"), name)),
                    base,
                )
            }
            other => {
                return Err(RouteError {
                    spec: spec.clone(),
                    detail: format!(
                        "unknown provider `{other}` (openai, openai-responses, anthropic, ollama, local)"
                    ),
                });
            }
        };
        if private && !is_loopback(&endpoint) {
            return Err(RouteError {
                spec,
                detail: format!(
                    "this repository is marked private: only a loopback endpoint may see it, not {endpoint}"
                ),
            });
        }
        let local = is_loopback(&endpoint);
        let price = if local {
            Some((0.0, 0.0))
        } else {
            PRICES
                .iter()
                .find(|(p, _, _)| name.starts_with(p))
                .map(|(_, i, o)| (*i, *o))
        };
        Ok(RoutedModel {
            model,
            price,
            endpoint,
        })
    }
}

fn is_loopback(url: &str) -> bool {
    let host = url
        .split("://")
        .nth(1)
        .unwrap_or(url)
        .split(['/', ':'])
        .next()
        .unwrap_or("");
    matches!(host, "127.0.0.1" | "localhost" | "[::1]" | "::1") || host.starts_with("127.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cheapest_orders_the_chain_by_price_and_fastest_routes_by_latency() {
        let r = ModelRouter::route(
            Some("cheapest:anthropic:claude-opus-4,openai:gpt-4o-mini,openai:unpriced-model"),
            false,
            None,
        )
        .unwrap();
        let id = r.model.id();
        let pos = |n: &str| id.find(n).unwrap();
        assert!(pos("gpt-4o-mini") < pos("claude-opus-4"), "{id}");
        assert!(pos("claude-opus-4") < pos("unpriced-model"), "{id}");
        // A chain with an unpriced model has no known price.
        assert_eq!(r.price, None);
        let r = ModelRouter::route(Some("cheapest:openai:gpt-4o-mini,openai:gpt-4o"), false, None).unwrap();
        assert_eq!(r.price, Some((2.50, 10.00)), "priced at the dearest");
        let r = ModelRouter::route(Some("fastest:openai:gpt-4o-mini,openai:gpt-4o"), false, None).unwrap();
        assert!(r.model.id().starts_with("fastest of"), "{}", r.model.id());
        // One model after an order is still routed (and a private repository still refused).
        assert!(ModelRouter::route(Some("fastest:openai:gpt-4o"), true, None).is_err());
    }
}
