//! `OpenAiTools`: [`ToolModel`] over OpenAI Chat Completions with streaming (SSE), which also
//! covers Ollama, llama.cpp's server, vLLM, LM Studio and OpenRouter. Tool-call fragments
//! arrive split across events by `index` (the id and name first, the arguments in pieces) and
//! are joined here.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::ProviderError;
use super::http_client::{CallLimits, HttpClient};
use super::tool_model::{Message, ModelReply, Role, ToolCall, ToolModel, ToolSpec, Usage};

pub struct OpenAiTools {
    endpoint: String,
    key: Option<String>,
    model: String,
    http: HttpClient,
    /// Ask for SSE (some local servers only call tools without streaming).
    pub stream: bool,
}

impl OpenAiTools {
    pub fn new(base_url: &str, key: Option<String>, model: &str) -> OpenAiTools {
        let base = base_url.trim_end_matches('/');
        let endpoint = match base.ends_with("/chat/completions") {
            true => base.to_string(),
            false => format!("{base}/chat/completions"),
        };
        OpenAiTools {
            endpoint,
            key,
            model: model.to_string(),
            http: HttpClient::new(CallLimits::model()),
            stream: true,
        }
    }

    fn body(&self, system: &str, messages: &[Message], tools: &[ToolSpec]) -> Value {
        let mut out = vec![json!({"role": "system", "content": system})];
        for m in messages {
            out.push(match m.role {
                Role::User => json!({"role": "user", "content": m.content}),
                Role::Tool => json!({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}),
                Role::Assistant if m.tool_calls.is_empty() => {
                    json!({"role": "assistant", "content": m.content})
                }
                Role::Assistant => json!({
                    "role": "assistant",
                    // A string even when empty: some servers (llama-cpp-python) refuse null.
                    "content": m.content,
                    "tool_calls": m.tool_calls.iter().map(|c| json!({
                        "id": c.id, "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments},
                    })).collect::<Vec<_>>(),
                }),
            });
        }
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
        let mut body = json!({
            "model": self.model,
            "messages": out,
            "temperature": 0,
            "stream": self.stream,
        });
        if self.stream {
            body["stream_options"] = json!({"include_usage": true});
        }
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
            body["tool_choice"] = json!("auto");
        }
        body
    }
}

impl ToolModel for OpenAiTools {
    fn id(&self) -> String {
        format!("openai:{}", self.model)
    }

    fn complete(
        &self,
        system: &str,
        messages: &[Message],
        tools: &[ToolSpec],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ModelReply, ProviderError> {
        let mut headers = Vec::new();
        if let Some(k) = &self.key {
            headers.push(("Authorization", format!("Bearer {k}")));
        }
        let mut reply = ModelReply::default();
        let mut calls: BTreeMap<u64, ToolCall> = BTreeMap::new();
        let body = self.body(system, messages, tools);
        self.http
            .post_sse_json(&self.endpoint, &headers, &body, &mut |event, v| {
                if let Some(e) = v.get("error") {
                    return Err(format!("error in the stream: {e}"));
                }
                if event == "json" {
                    // A whole completion: the message in one piece.
                    whole(v, &mut reply, &mut calls, on_text);
                    return Ok(());
                }
                if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
                    reply.usage = Usage {
                        input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
                        output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
                    };
                }
                let Some(choice) = v["choices"].get(0) else {
                    return Ok(());
                };
                if let Some(r) = choice["finish_reason"].as_str() {
                    reply.stop_reason = r.to_string();
                }
                let delta = &choice["delta"];
                if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                    on_text(t);
                    reply.text.push_str(t);
                }
                for tc in delta["tool_calls"].as_array().into_iter().flatten() {
                    let p = calls.entry(tc["index"].as_u64().unwrap_or(0)).or_default();
                    if let Some(id) = tc["id"].as_str() {
                        p.id = id.to_string();
                    }
                    if let Some(n) = tc["function"]["name"].as_str() {
                        p.name.push_str(n);
                    }
                    if let Some(a) = tc["function"]["arguments"].as_str() {
                        p.arguments.push_str(a);
                    }
                }
                Ok(())
            })?;
        reply.tool_calls = calls
            .into_values()
            .enumerate()
            .map(|(i, mut p)| {
                if p.id.is_empty() {
                    p.id = format!("call_{i}");
                }
                p
            })
            .collect();
        Ok(reply)
    }
}

/// A non-streamed completion folded into the same reply and call table.
fn whole(
    v: &Value,
    reply: &mut ModelReply,
    calls: &mut BTreeMap<u64, ToolCall>,
    on_text: &mut dyn FnMut(&str),
) {
    let choice = &v["choices"][0];
    if let Some(t) = choice["message"]["content"].as_str().filter(|t| !t.is_empty()) {
        on_text(t);
        reply.text.push_str(t);
    }
    reply.stop_reason = choice["finish_reason"].as_str().unwrap_or_default().to_string();
    for (i, tc) in choice["message"]["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        calls.insert(
            i as u64,
            ToolCall {
                id: tc["id"].as_str().unwrap_or_default().to_string(),
                name: tc["function"]["name"].as_str().unwrap_or_default().to_string(),
                arguments: tc["function"]["arguments"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            },
        );
    }
    reply.usage = Usage {
        input_tokens: v["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
        output_tokens: v["usage"]["completion_tokens"].as_u64().unwrap_or(0),
    };
}
