//! `AnthropicMessages`: [`ToolModel`] over the Anthropic Messages API with streaming (SSE):
//! content blocks of text and `tool_use` whose input arrives as `input_json_delta` pieces;
//! tool results go back as `tool_result` blocks in a user message.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::ProviderError;
use super::http_client::{CallLimits, HttpClient};
use super::tool_model::{Message, ModelReply, Role, ToolCall, ToolModel, ToolSpec};

pub struct AnthropicMessages {
    endpoint: String,
    key: Option<String>,
    model: String,
    max_tokens: u64,
    http: HttpClient,
}

const VERSION: &str = "2023-06-01";

impl AnthropicMessages {
    pub fn new(base_url: &str, key: Option<String>, model: &str) -> AnthropicMessages {
        let base = base_url.trim_end_matches('/');
        let endpoint = match base.ends_with("/messages") {
            true => base.to_string(),
            false if base.ends_with("/v1") => format!("{base}/messages"),
            false => format!("{base}/v1/messages"),
        };
        AnthropicMessages {
            endpoint,
            key,
            model: model.to_string(),
            max_tokens: 8192,
            http: HttpClient::new(CallLimits::model()),
        }
    }

    fn body(&self, system: &str, messages: &[Message], tools: &[ToolSpec]) -> Value {
        let mut out: Vec<Value> = Vec::new();
        for m in messages {
            let (role, blocks) = match m.role {
                Role::User => ("user", vec![json!({"type": "text", "text": m.content})]),
                Role::Tool => (
                    "user",
                    vec![json!({"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content})],
                ),
                Role::Assistant => {
                    let mut b = Vec::new();
                    if !m.content.is_empty() {
                        b.push(json!({"type": "text", "text": m.content}));
                    }
                    for c in &m.tool_calls {
                        let input: Value = serde_json::from_str(&c.arguments).unwrap_or_else(|_| json!({}));
                        b.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
                    }
                    ("assistant", b)
                }
            };
            // Consecutive tool results (and user text) share one user message.
            match out.last_mut() {
                Some(last) if last["role"] == role => {
                    if let Some(arr) = last["content"].as_array_mut() {
                        arr.extend(blocks);
                    }
                }
                _ => out.push(json!({"role": role, "content": blocks})),
            }
        }
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        json!({
            "model": self.model,
            "system": system,
            "messages": out,
            "tools": tools,
            "max_tokens": self.max_tokens,
            "temperature": 0,
            "stream": true,
        })
    }
}

#[derive(Default)]
struct Block {
    id: String,
    name: String,
    input: String,
    tool: bool,
}

impl ToolModel for AnthropicMessages {
    fn id(&self) -> String {
        format!("anthropic:{}", self.model)
    }

    fn complete(
        &self,
        system: &str,
        messages: &[Message],
        tools: &[ToolSpec],
        on_text: &mut dyn FnMut(&str),
    ) -> Result<ModelReply, ProviderError> {
        let mut headers = vec![("anthropic-version", VERSION.to_string())];
        if let Some(k) = &self.key {
            headers.push(("x-api-key", k.clone()));
        }
        let mut reply = ModelReply::default();
        let mut blocks: BTreeMap<u64, Block> = BTreeMap::new();
        let body = self.body(system, messages, tools);
        self.http
            .post_sse_json(&self.endpoint, &headers, &body, &mut |event, v| {
                let index = v["index"].as_u64().unwrap_or(0);
                match event {
                    "message_start" => {
                        reply.usage.input_tokens =
                            v["message"]["usage"]["input_tokens"].as_u64().unwrap_or(0);
                    }
                    "content_block_start" => {
                        let cb = &v["content_block"];
                        let b = blocks.entry(index).or_default();
                        if cb["type"] == "tool_use" {
                            b.tool = true;
                            b.id = cb["id"].as_str().unwrap_or_default().to_string();
                            b.name = cb["name"].as_str().unwrap_or_default().to_string();
                        }
                    }
                    "content_block_delta" => {
                        let d = &v["delta"];
                        if let Some(t) = d["text"].as_str() {
                            on_text(t);
                            reply.text.push_str(t);
                        }
                        if let Some(p) = d["partial_json"].as_str() {
                            blocks.entry(index).or_default().input.push_str(p);
                        }
                    }
                    "message_delta" => {
                        if let Some(r) = v["delta"]["stop_reason"].as_str() {
                            reply.stop_reason = r.to_string();
                        }
                        if let Some(o) = v["usage"]["output_tokens"].as_u64() {
                            reply.usage.output_tokens = o;
                        }
                    }
                    "error" => return Err(format!("error in the stream: {}", v["error"])),
                    _ => {}
                }
                Ok(())
            })?;
        reply.tool_calls = blocks
            .into_values()
            .filter(|b| b.tool)
            .map(|b| ToolCall {
                id: b.id,
                name: b.name,
                // A tool called without arguments streams no input at all.
                arguments: if b.input.trim().is_empty() {
                    "{}".to_string()
                } else {
                    b.input
                },
            })
            .collect();
        Ok(reply)
    }
}
