//! `IncomingMessage`: what one MCP message from a client (a stdio line, an HTTP body) turns
//! into before rmcp sees it: a message to serve, one to drop (an answer or a notification
//! that cannot be read; nobody waits for a reply to those), or a refusal, the JSON-RPC error
//! that answers it. rmcp alone drops a line over its size limit, one nested past serde_json's
//! recursion limit or not UTF-8 without a word, so the client would wait forever; and a request
//! whose `params` have the wrong shape got an error without its id, or "method not found".
//!
//! Invariant: every message that carries a request id is served or refused with that id; one
//! whose id cannot be read is refused with a `null` id. Limits: [`MAX_MCP_MESSAGE_BYTES`] and
//! [`MAX_MCP_DEPTH`] (stdio; the HTTP transport has `--max-body` for the size).

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, ErrorData, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::service::RxJsonRpcMessage;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::message_scan::MessageScan;

/// The longest MCP message (one line) read on stdio: far above any request a client makes of
/// this server (a query or a patch), far below what would strain memory. A longer line is
/// read through and dropped, never held, and refused by its id.
pub const MAX_MCP_MESSAGE_BYTES: usize = 8 << 20;

/// The most levels of arrays and objects an MCP message may nest: no request to this server
/// nests more than a few; serde_json stops at 128 and rmcp then drops the message unanswered.
pub const MAX_MCP_DEPTH: usize = 64;

/// What to do with one incoming message.
#[derive(Debug)]
pub enum IncomingMessage {
    Serve(Box<RxJsonRpcMessage<RoleServer>>),
    /// An answer or a notification that cannot be read: nobody waits for a reply.
    Drop(String),
    Refuse(Refusal),
}

/// The JSON-RPC error that answers a message, and why (for a log and for HTTP's status).
#[derive(Debug, Clone)]
pub struct Refusal {
    pub id: Option<RequestId>,
    pub error: ErrorData,
    pub too_large: bool,
}

impl Refusal {
    fn new(id: Option<RequestId>, error: ErrorData) -> Refusal {
        Refusal {
            id,
            error,
            too_large: false,
        }
    }

    /// `bytes` (at least) of a message over `limit`.
    pub fn too_large(id: Option<RequestId>, bytes: usize, limit: usize) -> Refusal {
        let error = ErrorData::invalid_request(
            format!(
                "the message is {}, over the limit of {} for one MCP message; send a smaller request",
                mib(bytes),
                mib(limit)
            ),
            Some(serde_json::json!({ "limit_bytes": limit })),
        );
        Refusal {
            too_large: true,
            ..Refusal::new(id, error)
        }
    }

    /// A message that could not be read or served (`why`), as an invalid request.
    pub fn unreadable(id: Option<RequestId>, why: &str) -> Refusal {
        Refusal::new(
            id,
            ErrorData::invalid_request(format!("invalid request: {why}"), None),
        )
    }

    /// The error as the JSON-RPC message sent back.
    pub fn message(self) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::error(self.error, self.id)
    }
}

fn mib(bytes: usize) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

impl IncomingMessage {
    /// The message `text` (a whole line or body, its newline removed), of which `scan` has seen
    /// every byte; over `limit` bytes, `text` holds only what was kept.
    pub fn read(text: &[u8], scan: &MessageScan, limit: usize) -> IncomingMessage {
        if scan.bytes() > limit {
            return IncomingMessage::Refuse(Refusal::too_large(scan.id(), scan.bytes(), limit));
        }
        if scan.deepest() > MAX_MCP_DEPTH {
            let error = ErrorData::invalid_request(
                format!(
                    "the message nests {} levels deep; an MCP message may nest at most {MAX_MCP_DEPTH}",
                    scan.deepest()
                ),
                Some(serde_json::json!({ "limit_depth": MAX_MCP_DEPTH })),
            );
            return IncomingMessage::Refuse(Refusal::new(scan.id(), error));
        }
        let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        if let Err(e) = std::str::from_utf8(text) {
            let error = ErrorData::parse_error(
                format!(
                    "parse error: the message is not UTF-8 (an invalid byte at offset {})",
                    e.valid_up_to()
                ),
                None,
            );
            return IncomingMessage::Refuse(Refusal::new(scan.id(), error));
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(text) {
            Ok(m) => Self::served(m, text),
            Err(e)
                if matches!(
                    e.classify(),
                    serde_json::error::Category::Syntax | serde_json::error::Category::Eof
                ) =>
            {
                let error = ErrorData::parse_error(format!("parse error: {e}"), None);
                IncomingMessage::Refuse(Refusal::new(scan.id(), error))
            }
            Err(e) => Self::misshapen(text, &e.to_string(), scan.id()),
        }
    }

    /// A message rmcp reads; but a request for a method this server answers that rmcp took
    /// for a custom one had `params` of the wrong shape.
    fn served(m: RxJsonRpcMessage<RoleServer>, text: &[u8]) -> IncomingMessage {
        if let JsonRpcMessage::Request(r) = &m
            && let ClientRequest::CustomRequest(c) = &r.request
        {
            let v = serde_json::from_slice::<Value>(text).unwrap_or_default();
            if let Some(why) = params_fault(&c.method, v.get("params")) {
                return IncomingMessage::Refuse(Refusal::new(Some(r.id.clone()), why));
            }
        }
        IncomingMessage::Serve(Box::new(m))
    }

    /// Well-formed JSON that is not a message rmcp reads (`why`): a request is refused with
    /// its id, an answer or a notification dropped.
    fn misshapen(text: &[u8], why: &str, id: Option<RequestId>) -> IncomingMessage {
        let v = serde_json::from_slice::<Value>(text).unwrap_or_default();
        let has = |k: &str| v.get(k).is_some();
        if v.is_object() && (has("result") || has("error") || !has("id")) {
            return IncomingMessage::Drop(format!("an answer or notification rmcp cannot read: {why}"));
        }
        let method = v.get("method").and_then(Value::as_str);
        let error = method
            .and_then(|m| params_fault(m, v.get("params")))
            .unwrap_or_else(|| ErrorData::invalid_request(format!("invalid request: {why}"), None));
        IncomingMessage::Refuse(Refusal::new(id, error))
    }
}

/// Why `params` do not fit `method`, for the methods this server answers.
fn params_fault(method: &str, params: Option<&Value>) -> Option<ErrorData> {
    use rmcp::model as m;
    fn fault<T: DeserializeOwned>(params: Option<&Value>) -> Option<String> {
        serde_json::from_value::<T>(params.cloned().unwrap_or(Value::Null))
            .err()
            .map(|e| e.to_string())
    }
    let why = match method {
        "initialize" => fault::<m::InitializeRequestParams>(params),
        "tools/call" => fault::<m::CallToolRequestParams>(params),
        "resources/read" => fault::<m::ReadResourceRequestParams>(params),
        "prompts/get" => fault::<m::GetPromptRequestParams>(params),
        "completion/complete" => fault::<m::CompleteRequestParams>(params),
        "resources/subscribe" => fault::<m::SubscribeRequestParams>(params),
        "resources/unsubscribe" => fault::<m::UnsubscribeRequestParams>(params),
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
            fault::<Option<m::PaginatedRequestParams>>(params)
        }
        "ping" => fault::<Option<m::JsonObject>>(params),
        _ => None,
    }?;
    Some(ErrorData::invalid_params(
        format!("invalid params for {method}: {why}"),
        None,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &[u8]) -> IncomingMessage {
        let mut scan = MessageScan::default();
        scan.feed(text);
        IncomingMessage::read(text, &scan, MAX_MCP_MESSAGE_BYTES)
    }

    fn refused(text: &[u8]) -> Refusal {
        match read(text) {
            IncomingMessage::Refuse(r) => r,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn requests_rmcp_reads_are_served() {
        for text in [
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.as_slice(),
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}"#,
            br#"{"jsonrpc":"2.0","id":4,"method":"vendor/thing","params":{"a":1}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ] {
            assert!(
                matches!(read(text), IncomingMessage::Serve(_)),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn params_of_the_wrong_shape_are_refused_with_the_requests_id() {
        for (text, id) in [
            (
                br#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":5}"#.as_slice(),
                10,
            ),
            (
                br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":5}}"#,
                11,
            ),
            (
                br#"{"jsonrpc":"2.0","id":12,"method":"tools/list","params":[1]}"#,
                12,
            ),
            (
                br#"{"jsonrpc":"2.0","id":13,"method":"resources/read","params":{}}"#,
                13,
            ),
            (
                br#"{"jsonrpc":"2.0","id":14,"method":"initialize","params":"x"}"#,
                14,
            ),
        ] {
            let r = refused(text);
            assert_eq!(r.id, Some(RequestId::Number(id)));
            assert_eq!(
                r.error.code,
                rmcp::model::ErrorCode::INVALID_PARAMS,
                "{:?}",
                r.error
            );
        }
    }

    #[test]
    fn unreadable_text_is_a_parse_error_with_the_id_when_it_can_be_read() {
        let r = refused(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"x\":\"\xff\"}");
        assert_eq!(r.error.code, rmcp::model::ErrorCode::PARSE_ERROR);
        assert_eq!(r.id, Some(RequestId::Number(9)));
        assert!(r.error.message.contains("UTF-8"), "{}", r.error.message);
        let r = refused(br#"{"jsonrpc":"2.0","id":12,"#);
        assert_eq!(r.error.code, rmcp::model::ErrorCode::PARSE_ERROR);
        assert_eq!(r.id, Some(RequestId::Number(12)));
        let r = refused(b"not json");
        assert_eq!(r.id, None);
    }

    #[test]
    fn deep_or_large_messages_are_refused_naming_the_limit() {
        let deep = [
            br#"{"jsonrpc":"2.0","id":"d","method":"tools/call","params":"#.as_slice(),
            &b"[".repeat(100_000),
            &b"]".repeat(100_000),
            b"}",
        ]
        .concat();
        let r = refused(&deep);
        assert_eq!(r.id, Some(RequestId::String("d".into())));
        assert!(r.error.message.contains("at most 64"), "{}", r.error.message);
        let mut scan = MessageScan::default();
        scan.feed(br#"{"id":5,"method":"tools/call","params":{"q":""#);
        scan.feed(&vec![b'a'; MAX_MCP_MESSAGE_BYTES]);
        let IncomingMessage::Refuse(r) = IncomingMessage::read(b"", &scan, MAX_MCP_MESSAGE_BYTES) else {
            panic!("not refused");
        };
        assert!(r.too_large);
        assert_eq!(r.id, Some(RequestId::Number(5)));
        assert!(r.error.message.contains("8.0 MiB"), "{}", r.error.message);
    }

    #[test]
    fn answers_and_notifications_that_cannot_be_read_get_no_reply() {
        for text in [
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":5}"#.as_slice(),
            br#"{"jsonrpc":"2.0","id":3,"error":5}"#,
        ] {
            assert!(
                matches!(read(text), IncomingMessage::Drop(_)),
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }
}
