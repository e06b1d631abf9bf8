//! `OpenAiResponses`: [`ToolModel`] over the OpenAI Responses API with streaming (SSE):
//! function calls arrive as output items whose arguments stream as
//! `response.function_call_arguments.delta` events; results go back as
//! `function_call_output` input items with the same `call_id`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::ProviderError;
use super::http_client::{CallLimits, HttpClient};
use super::tool_model::{Message, ModelReply, Role, ToolCall, ToolModel, ToolSpec};

pub struct OpenAiResponses {
    endpoint: String,
    key: Option<String>,
    model: String,
    http: HttpClient,
}

impl OpenAiResponses {
    pub fn new(base_url: &str, key: Option<String>, model: &str) -> OpenAiResponses {
        let base = base_url.trim_end_matches('/');
        let endpoint = match base.ends_with("/responses") {
            true => base.to_string(),
            false => format!("{base}/responses"),
        };
        OpenAiResponses {
            endpoint,
            key,
            model: model.to_string(),
            http: HttpClient::new(CallLimits::model()),
        }
    }

    fn body(&self, system: &str, messages: &[Message], tools: &[ToolSpec]) -> Value {
        let mut input = Vec::new();
        for m in messages {
            match m.role {
                Role::User => input.push(json!({"role": "user", "content": m.content})),
                Role::Tool => input.push(json!({
                    "type": "function_call_output",
                    "call_id": m.tool_call_id,
                    "output": m.content,
                })),
                Role::Assistant => {
                    if !m.content.is_empty() {
                        input.push(json!({"role": "assistant", "content": m.content}));
                    }
                    for c in &m.tool_calls {
                        input.push(json!({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": c.arguments}));
                    }
                }
            }
        }
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| json!({"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters}))
            .collect();
        json!({
            "model": self.model,
            "instructions": system,
            "input": input,
            "tools": tools,
            "temperature": 0,
            "stream": true,
        })
    }
}

impl ToolModel for OpenAiResponses {
    fn id(&self) -> String {
        format!("openai-responses:{}", self.model)
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
        // Function calls as they stream, by output index.
        let mut items: BTreeMap<u64, ToolCall> = BTreeMap::new();
        let body = self.body(system, messages, tools);
        self.http
            .post_sse_json(&self.endpoint, &headers, &body, &mut |event, v| {
                let kind = v["type"].as_str().unwrap_or(event);
                let index = v["output_index"].as_u64().unwrap_or(0);
                match kind {
                    "response.output_text.delta" => {
                        if let Some(t) = v["delta"].as_str() {
                            on_text(t);
                            reply.text.push_str(t);
                        }
                    }
                    "response.output_item.added" if v["item"]["type"] == "function_call" => {
                        let it = items.entry(index).or_default();
                        it.id = v["item"]["call_id"].as_str().unwrap_or_default().to_string();
                        it.name = v["item"]["name"].as_str().unwrap_or_default().to_string();
                        it.arguments = v["item"]["arguments"].as_str().unwrap_or_default().to_string();
                    }
                    "response.function_call_arguments.delta" => {
                        if let Some(d) = v["delta"].as_str() {
                            items.entry(index).or_default().arguments.push_str(d);
                        }
                    }
                    "response.function_call_arguments.done" => {
                        if let Some(a) = v["arguments"].as_str() {
                            items.entry(index).or_default().arguments = a.to_string();
                        }
                    }
                    "response.completed" => {
                        let u = &v["response"]["usage"];
                        reply.usage.input_tokens = u["input_tokens"].as_u64().unwrap_or(0);
                        reply.usage.output_tokens = u["output_tokens"].as_u64().unwrap_or(0);
                        reply.stop_reason = v["response"]["status"]
                            .as_str()
                            .unwrap_or("completed")
                            .to_string();
                    }
                    "response.failed" | "error" => return Err(format!("the response failed: {v}")),
                    _ => {}
                }
                Ok(())
            })?;
        reply.tool_calls = items.into_values().filter(|i| !i.name.is_empty()).collect();
        Ok(reply)
    }
}
