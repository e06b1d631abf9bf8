//! `ModelRouter`: the model a run uses, from `--model PROVIDER:NAME` or the environment —
//! `openai` (Chat Completions) and `openai-responses` (the Responses API), both from
//! `OPENAI_API_KEY` and `OPENAI_BASE_URL`, `anthropic` (`ANTHROPIC_API_KEY`,
//! `ANTHROPIC_BASE_URL`), `ollama` (`OLLAMA_HOST`, its OpenAI-compatible `/v1`), `local`
//! (an OpenAI-compatible server on this machine at `OPENAI_BASE_URL`, or one named on purpose
//! by `KEN_LOCAL_BASE_URL`; llama.cpp's say) — with its price per million tokens, and the
//! privacy rule: a repository marked private (`private = true` in `.kenning/agent.toml`) only
//! goes to a loopback endpoint.
//!
//! Invariant: the repository leaves the machine only for an endpoint asked for by name. A
//! missing key or endpoint is refused here, before any request, naming the variable to set
//! (`Endpoint::resolve` holds the rules). A comma-joined chain is a
//! fallback chain, ordered as written, by price (`cheapest:`) or by measured latency
//! (`fastest:`), all through `ModelChain`.

use std::path::Path;
use std::sync::Arc;

use super::model_chain::ModelChain;

use crate::providers::{AnthropicMessages, OpenAiResponses, OpenAiTools, ToolModel, is_loopback_url};

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
        Self::route_with_env(spec, private, latency_table, &process_env)
    }

    /// [`ModelRouter::route`] with the environment given as a lookup (tests, embedders).
    pub fn route_with_env(
        spec: Option<&str>,
        private: bool,
        latency_table: Option<&Path>,
        env: Env,
    ) -> Result<RoutedModel, RouteError> {
        let (order, rest) = match spec.map(|s| s.trim()) {
            Some(s) if s.starts_with("fastest:") => (Some("fastest"), Some(&s["fastest:".len()..])),
            Some(s) if s.starts_with("cheapest:") => (Some("cheapest"), Some(&s["cheapest:".len()..])),
            other => (None, other),
        };
        let Some(chain) = rest.filter(|s| s.contains(',') || order.is_some()) else {
            return Self::route_one(rest, private, env);
        };
        let mut routed: Vec<RoutedModel> = chain
            .split(',')
            .map(|s| Self::route_one(Some(s.trim()), private, env))
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

    fn route_one(spec: Option<&str>, private: bool, env: Env) -> Result<RoutedModel, RouteError> {
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
        let refuse = |detail: String| RouteError {
            spec: spec.clone(),
            detail,
        };
        let Some(endpoint) = Endpoint::resolve(provider, env).map_err(&refuse)? else {
            return Err(refuse(format!(
                "unknown provider `{provider}` (openai, openai-responses, anthropic, ollama, local)"
            )));
        };
        let Endpoint { base, key, missing } = endpoint;
        let local = is_loopback_url(&base);
        if private && !local {
            return Err(refuse(format!(
                "this repository is marked private: only a loopback endpoint may see it, not {base}"
            )));
        }
        if let Some(detail) = missing {
            return Err(refuse(detail));
        }
        let model: Arc<dyn ToolModel> = match provider {
            "openai-responses" => Arc::new(OpenAiResponses::new(&base, key, name)),
            "anthropic" => Arc::new(AnthropicMessages::new(&base, key, name)),
            _ => {
                let mut m = OpenAiTools::new(&base, key, name);
                // KEN_MODEL_STREAM=0 for servers that call tools only without streaming
                // (llama-cpp-python's, for one).
                m.stream = !matches!(env("KEN_MODEL_STREAM").as_deref(), Some("0" | "false" | "no"));
                Arc::new(m)
            }
        };
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
            endpoint: base,
        })
    }
}

/// Reads an environment variable; empty counts as unset. Injected so the routing rules are
/// tested without touching the process environment.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

fn process_env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

/// Where a provider's requests go and the key they carry.
struct Endpoint {
    base: String,
    key: Option<String>,
    /// Why it may not be used though it resolved (a remote service without its key); kept
    /// apart so a private repository is refused for being private first.
    missing: Option<String>,
}

impl Endpoint {
    /// The rules that keep a repository on this machine unless it was sent elsewhere by name
    /// (`Ok(None)`: not a provider). Every refusal names the variable to set, and happens
    /// here, before any request:
    /// - `openai`, `openai-responses`, `anthropic` are remote services: their key must be
    ///   set unless their base URL was pointed at a loopback server.
    /// - `local` is a server on this machine: `KEN_LOCAL_BASE_URL`, else a loopback
    ///   `OPENAI_BASE_URL`. Neither set is refused (never the public OpenAI endpoint); a
    ///   non-loopback `OPENAI_BASE_URL` is refused too, since it is often set for other
    ///   tools, while `KEN_LOCAL_BASE_URL` may name another machine on purpose. The key is
    ///   `KEN_LOCAL_API_KEY`, or `OPENAI_API_KEY` only for a loopback server, so a real
    ///   OpenAI key is never handed to a third host.
    /// - `ollama` is `OLLAMA_HOST` (Ollama's own setting, so explicit), default loopback.
    fn resolve(provider: &str, env: Env) -> Result<Option<Endpoint>, String> {
        let (base_var, key_var, default) = match provider {
            "openai" | "openai-responses" => ("OPENAI_BASE_URL", "OPENAI_API_KEY", OPENAI_DEFAULT),
            "anthropic" => ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", ANTHROPIC_DEFAULT),
            "local" => return Self::local(env).map(Some),
            "ollama" => return Self::ollama(env).map(Some),
            _ => return Ok(None),
        };
        let base = env(base_var).unwrap_or_else(|| default.to_string());
        check_url(&base, base_var)?;
        let key = env(key_var);
        let missing = (key.is_none() && !is_loopback_url(&base)).then(|| {
            format!(
                "{key_var} is not set: nothing is sent to {base} without it (or point {base_var} \
                 at a server on this machine)"
            )
        });
        Ok(Some(Endpoint { base, key, missing }))
    }

    fn local(env: Env) -> Result<Endpoint, String> {
        if let Some(base) = env("KEN_LOCAL_BASE_URL") {
            check_url(&base, "KEN_LOCAL_BASE_URL")?;
            let key = env("KEN_LOCAL_API_KEY")
                .or_else(|| is_loopback_url(&base).then(|| env("OPENAI_API_KEY")).flatten());
            return Ok(Endpoint {
                base,
                key,
                missing: None,
            });
        }
        let Some(base) = env("OPENAI_BASE_URL") else {
            return Err(
                "local: needs the server's address: set OPENAI_BASE_URL (or KEN_LOCAL_BASE_URL), \
                 e.g. http://127.0.0.1:8080/v1; without it nothing is sent"
                    .into(),
            );
        };
        check_url(&base, "OPENAI_BASE_URL")?;
        if !is_loopback_url(&base) {
            return Err(format!(
                "local: means a server on this machine, and OPENAI_BASE_URL is {base}: set \
                 KEN_LOCAL_BASE_URL={base} to use that server on purpose, or use openai:NAME"
            ));
        }
        let key = env("KEN_LOCAL_API_KEY").or_else(|| env("OPENAI_API_KEY"));
        Ok(Endpoint {
            base,
            key,
            missing: None,
        })
    }

    fn ollama(env: Env) -> Result<Endpoint, String> {
        let host = env("OLLAMA_HOST").unwrap_or_else(|| "127.0.0.1:11434".to_string());
        let host = match host.starts_with("http://") || host.starts_with("https://") {
            true => host,
            false => format!("http://{host}"),
        };
        // The Ollama server binds 0.0.0.0 when told to serve the network; its own client
        // then connects to this machine, and so does this one.
        let host = host.replacen("://0.0.0.0", "://127.0.0.1", 1);
        check_url(&host, "OLLAMA_HOST")?;
        Ok(Endpoint {
            base: format!("{}/v1", host.trim_end_matches('/')),
            key: None,
            missing: None,
        })
    }
}

const OPENAI_DEFAULT: &str = "https://api.openai.com/v1";
const ANTHROPIC_DEFAULT: &str = "https://api.anthropic.com";

/// A base URL that does not parse as http(s) is refused naming where it came from, rather
/// than failing later inside the HTTP client's retries.
fn check_url(base: &str, var: &str) -> Result<(), String> {
    match url::Url::parse(base) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(()),
        _ => Err(format!("{var} is {base}, not an http(s) URL")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An environment holding exactly `vars`.
    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    fn route(spec: &str, vars: &[(&str, &str)]) -> Result<RoutedModel, RouteError> {
        ModelRouter::route_with_env(Some(spec), false, None, &env_of(vars))
    }

    fn refusal(spec: &str, vars: &[(&str, &str)]) -> String {
        match route(spec, vars) {
            Ok(r) => panic!("{spec} routed to {}", r.endpoint),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn local_without_a_base_url_is_refused_naming_the_variable() {
        let e = refusal("local:x", &[("OPENAI_API_KEY", "sk-real")]);
        assert!(e.contains("OPENAI_BASE_URL") && e.contains("local:x"), "{e}");
        assert!(!e.contains("api.openai.com"), "{e}");
    }

    #[test]
    fn local_refuses_a_remote_openai_base_url_but_takes_an_explicit_local_one() {
        let e = refusal("local:x", &[("OPENAI_BASE_URL", "https://openrouter.ai/api/v1")]);
        assert!(
            e.contains("KEN_LOCAL_BASE_URL") && e.contains("openrouter.ai"),
            "{e}"
        );
        // A loopback trick in the userinfo is the remote host it is.
        let e = refusal(
            "local:x",
            &[("OPENAI_BASE_URL", "http://127.0.0.1@example.com/v1")],
        );
        assert!(e.contains("KEN_LOCAL_BASE_URL"), "{e}");
        let r = route("local:x", &[("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")]).unwrap();
        assert_eq!(r.endpoint, "http://127.0.0.1:8080/v1");
        assert_eq!(r.price, Some((0.0, 0.0)));
        let r = route(
            "local:x",
            &[
                ("KEN_LOCAL_BASE_URL", "http://10.0.0.5:8080/v1"),
                ("OPENAI_BASE_URL", "https://openrouter.ai/api/v1"),
            ],
        )
        .unwrap();
        assert_eq!(r.endpoint, "http://10.0.0.5:8080/v1");
    }

    #[test]
    fn remote_providers_without_their_key_are_refused_naming_it() {
        for (spec, var) in [
            ("openai:gpt-4o", "OPENAI_API_KEY"),
            ("openai-responses:gpt-4.1", "OPENAI_API_KEY"),
            ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        ] {
            let e = refusal(spec, &[]);
            assert!(e.contains(var), "{spec}: {e}");
        }
        // A chain is refused whole when one member lacks its key.
        let e = refusal("openai:gpt-4o,anthropic:claude-haiku", &[("OPENAI_API_KEY", "k")]);
        assert!(e.contains("ANTHROPIC_API_KEY"), "{e}");
        // With a key, or a server on this machine, they route.
        assert!(route("openai:gpt-4o", &[("OPENAI_API_KEY", "k")]).is_ok());
        let r = route("anthropic:c", &[("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/")]).unwrap();
        assert_eq!(r.endpoint, "http://127.0.0.1:9/");
    }

    #[test]
    fn ollama_defaults_to_this_machine_and_a_bad_url_names_its_variable() {
        let r = route("ollama:q", &[]).unwrap();
        assert_eq!(r.endpoint, "http://127.0.0.1:11434/v1");
        let r = route("ollama:q", &[("OLLAMA_HOST", "0.0.0.0:11434")]).unwrap();
        assert_eq!(r.endpoint, "http://127.0.0.1:11434/v1");
        let e = refusal("local:x", &[("OPENAI_BASE_URL", "127.0.0.1:8080")]);
        assert!(e.contains("OPENAI_BASE_URL is 127.0.0.1:8080"), "{e}");
    }

    #[test]
    fn cheapest_orders_the_chain_by_price_and_fastest_routes_by_latency() {
        let keys = env_of(&[("OPENAI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")]);
        let route = |spec: &str, private: bool| ModelRouter::route_with_env(Some(spec), private, None, &keys);
        let r = route(
            "cheapest:anthropic:claude-opus-4,openai:gpt-4o-mini,openai:unpriced-model",
            false,
        )
        .unwrap();
        let id = r.model.id();
        let pos = |n: &str| id.find(n).unwrap();
        assert!(pos("gpt-4o-mini") < pos("claude-opus-4"), "{id}");
        assert!(pos("claude-opus-4") < pos("unpriced-model"), "{id}");
        // A chain with an unpriced model has no known price.
        assert_eq!(r.price, None);
        let r = route("cheapest:openai:gpt-4o-mini,openai:gpt-4o", false).unwrap();
        assert_eq!(r.price, Some((2.50, 10.00)), "priced at the dearest");
        let r = route("fastest:openai:gpt-4o-mini,openai:gpt-4o", false).unwrap();
        assert!(r.model.id().starts_with("fastest of"), "{}", r.model.id());
        // One model after an order is still routed (and a private repository still refused).
        assert!(route("fastest:openai:gpt-4o", true).is_err());
    }
}
