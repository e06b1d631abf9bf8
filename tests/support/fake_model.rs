//! A scripted model behind a loopback server that speaks the real wire formats — OpenAI Chat
//! Completions and Anthropic Messages, both streamed as server-sent events, tool-call
//! arguments split across events — and records every request it is sent.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// One scripted reply: text and tool calls (name, arguments as JSON text).
#[derive(Clone, Debug)]
pub struct Turn {
    pub text: String,
    pub calls: Vec<(String, String)>,
    /// Answer with this HTTP status (and `retry-after: 0`) instead, once.
    pub status: Option<u16>,
}

pub fn call(name: &str, args: Value) -> Turn {
    Turn {
        text: String::new(),
        calls: vec![(name.to_string(), args.to_string())],
        status: None,
    }
}

pub fn raw_call(name: &str, args: &str) -> Turn {
    Turn {
        text: String::new(),
        calls: vec![(name.to_string(), args.to_string())],
        status: None,
    }
}

pub fn say(text: &str) -> Turn {
    Turn {
        text: text.to_string(),
        calls: Vec::new(),
        status: None,
    }
}

pub fn http_error(status: u16) -> Turn {
    Turn {
        text: String::new(),
        calls: Vec::new(),
        status: Some(status),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
    Responses,
}

pub struct FakeModel {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Value>>>,
}

impl FakeModel {
    /// Serves `script` in order; once it runs out, every reply calls `finish`.
    pub fn start(wire: Wire, script: Vec<Turn>) -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        std::thread::spawn(move || {
            let mut script = script.into_iter();
            let mut n = 0;
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let Some(body) = read_request(&stream) else {
                    continue;
                };
                seen.lock().unwrap().push(body);
                n += 1;
                let turn = script
                    .next()
                    .unwrap_or_else(|| call("finish", json!({"summary": "script exhausted"})));
                respond(stream, wire, &turn, n);
            }
        });
        FakeModel { url, requests }
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

fn read_request(stream: &TcpStream) -> Option<Value> {
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some(v) = l.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn respond(mut stream: TcpStream, wire: Wire, turn: &Turn, n: usize) {
    if let Some(status) = turn.status {
        let body = r#"{"error":{"message":"slow down"}}"#;
        let _ = write!(
            stream,
            "HTTP/1.1 {status} Too Many Requests\r\nretry-after: 0\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        return;
    }
    let mut events = String::new();
    let mut push = |event: Option<&str>, data: Value| {
        if let Some(e) = event {
            events.push_str(&format!("event: {e}\n"));
        }
        events.push_str(&format!("data: {data}\n\n"));
    };
    match wire {
        Wire::OpenAi => {
            for piece in split(&turn.text, 3) {
                push(
                    None,
                    json!({"choices": [{"index": 0, "delta": {"content": piece}}]}),
                );
            }
            for (i, (name, args)) in turn.calls.iter().enumerate() {
                let id = format!("call_{n}_{i}");
                push(
                    None,
                    json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}}]}),
                );
                for piece in split(args, 3) {
                    push(
                        None,
                        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "function": {"arguments": piece}}]}}]}),
                    );
                }
            }
            let reason = if turn.calls.is_empty() {
                "stop"
            } else {
                "tool_calls"
            };
            push(
                None,
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}),
            );
            push(
                None,
                json!({"choices": [], "usage": {"prompt_tokens": 100 * n, "completion_tokens": 20}}),
            );
            events.push_str("data: [DONE]\n\n");
        }
        Wire::Anthropic => {
            push(
                Some("message_start"),
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 100 * n, "output_tokens": 1}}}),
            );
            let mut index = 0;
            if !turn.text.is_empty() {
                push(
                    Some("content_block_start"),
                    json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
                );
                for piece in split(&turn.text, 3) {
                    push(
                        Some("content_block_delta"),
                        json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
                    );
                }
                push(
                    Some("content_block_stop"),
                    json!({"type": "content_block_stop", "index": index}),
                );
                index += 1;
            }
            for (i, (name, args)) in turn.calls.iter().enumerate() {
                let id = format!("toolu_{n}_{i}");
                push(
                    Some("content_block_start"),
                    json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                );
                for piece in split(args, 3) {
                    push(
                        Some("content_block_delta"),
                        json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                    );
                }
                push(
                    Some("content_block_stop"),
                    json!({"type": "content_block_stop", "index": index}),
                );
                index += 1;
            }
            let reason = if turn.calls.is_empty() {
                "end_turn"
            } else {
                "tool_use"
            };
            push(
                Some("message_delta"),
                json!({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 20}}),
            );
            push(Some("message_stop"), json!({"type": "message_stop"}));
        }
        Wire::Responses => {
            push(
                Some("response.created"),
                json!({"type": "response.created", "response": {"status": "in_progress"}}),
            );
            let mut index = 0;
            if !turn.text.is_empty() {
                push(
                    Some("response.output_item.added"),
                    json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "message"}}),
                );
                for piece in split(&turn.text, 3) {
                    push(
                        Some("response.output_text.delta"),
                        json!({"type": "response.output_text.delta", "output_index": index, "delta": piece}),
                    );
                }
                index += 1;
            }
            for (i, (name, args)) in turn.calls.iter().enumerate() {
                let call_id = format!("call_{n}_{i}");
                push(
                    Some("response.output_item.added"),
                    json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "function_call", "id": format!("fc_{n}_{i}"), "call_id": call_id, "name": name, "arguments": ""}}),
                );
                for piece in split(args, 3) {
                    push(
                        Some("response.function_call_arguments.delta"),
                        json!({"type": "response.function_call_arguments.delta", "output_index": index, "delta": piece}),
                    );
                }
                push(
                    Some("response.function_call_arguments.done"),
                    json!({"type": "response.function_call_arguments.done", "output_index": index, "arguments": args}),
                );
                index += 1;
            }
            push(
                Some("response.completed"),
                json!({"type": "response.completed", "response": {"status": "completed", "usage": {"input_tokens": 100 * n, "output_tokens": 20}}}),
            );
        }
    }
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{events}",
        events.len()
    );
}

/// `s` in `parts` pieces (on character boundaries), so fragments must be joined.
fn split(s: &str, parts: usize) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    let chars: Vec<char> = s.chars().collect();
    let size = chars.len().div_ceil(parts).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// Every tool result in a request answers a call made earlier in the same conversation.
pub fn results_answer_calls(wire: Wire, request: &Value) -> Result<(), String> {
    let mut ids: Vec<String> = Vec::new();
    if wire == Wire::Responses {
        for item in request["input"].as_array().into_iter().flatten() {
            if item["type"] == "function_call" {
                ids.push(item["call_id"].as_str().unwrap_or_default().to_string());
            }
            if item["type"] == "function_call_output" {
                let id = item["call_id"].as_str().unwrap_or_default();
                if !ids.iter().any(|i| i == id) {
                    return Err(format!("tool result for unknown call {id}"));
                }
            }
        }
        return Ok(());
    }
    for m in request["messages"].as_array().into_iter().flatten() {
        match wire {
            Wire::OpenAi => {
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    ids.push(c["id"].as_str().unwrap_or_default().to_string());
                }
                if m["role"] == "tool" {
                    let id = m["tool_call_id"].as_str().unwrap_or_default();
                    if !ids.iter().any(|i| i == id) {
                        return Err(format!("tool result for unknown call {id}"));
                    }
                }
            }
            Wire::Responses => {}
            Wire::Anthropic => {
                for b in m["content"].as_array().into_iter().flatten() {
                    if b["type"] == "tool_use" {
                        ids.push(b["id"].as_str().unwrap_or_default().to_string());
                    }
                    if b["type"] == "tool_result" {
                        let id = b["tool_use_id"].as_str().unwrap_or_default();
                        if !ids.iter().any(|i| i == id) {
                            return Err(format!("tool result for unknown call {id}"));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}
