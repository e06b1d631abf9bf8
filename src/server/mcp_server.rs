//! `KenMcp`: the query layer as an MCP server (rmcp). One tool per operation, each with a
//! description for a model, its input schema (and, with `--tools full`, its output schema),
//! annotations, and results as `structuredContent` plus a compact text rendering for the
//! model (`api::answer_text`); the overview and the index status as resources. Errors a model can fix come back as tool errors (`isError`), with the reason.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities, ServerConfig,
    Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::{ToolSet, WorkspaceSlot, request_runner};
use crate::api::answer_text as tool_text;
use crate::api::{ApiError, Operation};

pub const OVERVIEW_URI: &str = "kenning://overview";
pub const STATUS_URI: &str = "kenning://index-status";

#[derive(Clone)]
pub struct KenMcp {
    ws: Arc<WorkspaceSlot>,
    tools: Arc<Vec<Tool>>,
    deadline: Duration,
}

const INSTRUCTIONS: &str = "Kenning indexes this repository: definitions, references, calls, a lexical and a semantic \
search index. For a new task call `context` with the task text first: the relevant files and definitions, with their \
code, within a token budget. `search` finds code by identifier, message or meaning and lists the line spans to read; \
`symbol`, `callers` and `refs` follow the code; `impact` says what a change breaks and which tests to run; `read_span` \
reads exact lines. Every answer ends with its coverage; the server re-indexes changed files by itself.";

fn object(v: serde_json::Value) -> JsonObject {
    match v {
        serde_json::Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

/// The token budget a model's call gets when it names none: every answer stays a small
/// share of a context window, and the rest is a page (or a larger `max_tokens`) away.
fn default_budget(op: Operation) -> Option<usize> {
    Some(match op {
        Operation::Context => 4000,
        Operation::Impact | Operation::ReadSpan => 3000,
        Operation::Search
        | Operation::Callers
        | Operation::Callees
        | Operation::Refs
        | Operation::Deps
        | Operation::Overview => 2000,
        Operation::Symbol | Operation::IndexStatus => 1500,
        _ => return None,
    })
}

/// Tokens kept for the lines `tool_text` adds under an answer (notes, the next page, the
/// coverage), at most: a fifth of a small budget, since that footer shrinks before the answer.
const FOOTER_TOKENS: usize = 50;

/// The budget the operation gets of `whole`, the budget for the text as the model reads it:
/// less what the footer may take, but never under the operations' minimum (the rendering cuts
/// whatever is over); a `whole` under that minimum goes as it is, for the operation to refuse
/// by the number the client sent.
fn operation_budget(whole: usize) -> usize {
    let least = crate::api::MIN_MAX_TOKENS;
    match whole < least {
        true => whole,
        false => whole.saturating_sub(FOOTER_TOKENS.min(whole / 5)).max(least),
    }
}

/// The lean schema with `max_tokens` saying the default this server applies.
fn core_schema(op: Operation) -> JsonObject {
    let mut schema = object(op.lean_input_schema());
    if let (Some(n), Some(serde_json::Value::Object(props))) =
        (default_budget(op), schema.get_mut("properties"))
        && let Some(serde_json::Value::Object(budget)) = props.get_mut("max_tokens")
    {
        budget.insert(
            "description".into(),
            format!("Token budget (cl100k) for the answer; default {n}.").into(),
        );
    }
    schema
}

fn tool(op: Operation, set: ToolSet) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(op.read_only())
        .destructive(false)
        .idempotent(op.read_only())
        .open_world(false);
    match set {
        // Structured content still comes back; only its schema is not listed.
        ToolSet::Core => Tool::new(op.name(), op.summary(), core_schema(op)),
        ToolSet::Full => Tool::new(op.name(), op.description(), object(op.input_schema()))
            .with_raw_output_schema(Arc::new(object(op.output_schema()))),
    }
    .with_annotations(annotations)
}

impl KenMcp {
    pub fn new(ws: Arc<WorkspaceSlot>, deadline: Duration, set: ToolSet) -> KenMcp {
        let ops: Vec<Operation> = match set {
            ToolSet::Core => Operation::CORE.to_vec(),
            ToolSet::Full => Operation::ALL.into_iter().filter(|o| o.is_tool()).collect(),
        };
        let tools = ops.into_iter().map(|op| tool(op, set)).collect();
        KenMcp {
            ws,
            tools: Arc::new(tools),
            deadline,
        }
    }

    /// A tool's result: the compact text the model reads (within the budget, as it reads it),
    /// the whole answer as structured content, and what it cost against reading its files.
    fn answered(
        op: Operation,
        a: &crate::api::Answer,
        ws: &crate::api::Workspace,
        budget: Option<usize>,
    ) -> CallToolResult {
        let v = match a.to_json() {
            Ok(v) => v,
            Err(e) => return Self::error_result(&e),
        };
        let text = match budget {
            Some(b) => tool_text::render_within(a, b),
            None => tool_text::render(a),
        };
        let returned = crate::api::count_tokens(&text) as u64;
        let snapshot = ws.analysis();
        let size_of = |p: &str| snapshot.snapshot().table.find(p).map(|r| r.size);
        let drawn = tool_text::drawn_tokens(&v, &size_of);
        super::ServerMetrics::get().answered(op.name(), returned, drawn);
        let mut r = CallToolResult::structured(v);
        r.content = vec![ContentBlock::text(text)];
        // What the answer cost against what reading its files would have: for the client,
        // never for the model.
        let mut meta = JsonObject::new();
        meta.insert(
            "kenning/tokens".into(),
            serde_json::json!({"returned": returned, "files_drawn_from": drawn}),
        );
        r.meta = Some(rmcp::model::MetaObject(meta));
        r
    }

    fn error_result(e: &ApiError) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(format!("{}: {e}", e.code()))])
    }
}

/// How often a waiting call that asked for progress hears how the first build goes.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// While the first build runs, sends `notifications/progress` for `token` (if the client gave
/// one) every [`PROGRESS_EVERY`], the percentage rising only; then waits forever, so that the
/// call's own answer ends the `select!` it runs in.
async fn report_build_progress(
    slot: &WorkspaceSlot,
    peer: &rmcp::Peer<RoleServer>,
    token: Option<rmcp::model::ProgressToken>,
) {
    if let Some(token) = token {
        let mut last = -1.0_f64;
        while let Some(b) = slot.building() {
            if b.percent > last {
                last = b.percent;
                let note = rmcp::model::ProgressNotificationParam::new(token.clone(), b.percent)
                    .with_total(100.0)
                    .with_message(format!("first index build: {}", b.line()));
                if peer.notify_progress(note).await.is_err() {
                    break;
                }
            }
            tokio::time::sleep(PROGRESS_EVERY).await;
        }
    }
    std::future::pending::<()>().await
}

/// The type a branch that never finishes gives `select!`.
fn unreachable_answer() -> Result<(crate::api::Answer, Arc<crate::api::Workspace>), ApiError> {
    Err(ApiError::Internal("progress reporting ended a call".into()))
}

impl ServerHandler for KenMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("kenning", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let listed = self.tools.iter().any(|t| t.name == request.name);
        let Some(op) = Operation::from_name(&request.name).filter(|o| o.is_tool() && listed) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}; tools/list names them", request.name),
                None,
            ));
        };
        let mut args = request.arguments.unwrap_or_default();
        let mut whole_budget = None;
        // The budget is for the text as the model reads it: the operation gets it less the
        // lines the rendering adds. One that is not a whole number is left for the operation
        // to refuse.
        let asked = args.get("max_tokens");
        if let Some(n) = default_budget(op)
            && asked.is_none_or(serde_json::Value::is_u64)
        {
            let whole = asked
                .and_then(serde_json::Value::as_u64)
                .map_or(n, |a| usize::try_from(a).unwrap_or(usize::MAX));
            whole_budget = Some(whole);
            args.insert("max_tokens".into(), operation_budget(whole).into());
        }
        // While the first build runs, the status is how far it has got.
        if op == Operation::IndexStatus
            && let Some(b) = self.ws.building()
        {
            let text = format!(
                "The first index build is under way: {}. Other tools answer once it is done.",
                b.line()
            );
            let mut r = CallToolResult::structured(serde_json::to_value(&b).unwrap_or_default());
            r.content = vec![ContentBlock::text(text)];
            return Ok(r.into());
        }
        let args = serde_json::Value::Object(args);
        let token = context.meta.get_progress_token();
        let answer = tokio::select! {
            _ = context.ct.cancelled() => return Err(ErrorData::internal_error("cancelled by the client", None)),
            // Never ends: tells a client that asked for progress how the first build goes.
            _ = report_build_progress(&self.ws, &context.peer, token) => unreachable_answer(),
            a = async {
                let ws = self.ws.wait(self.deadline).await?;
                request_runner::answer(&ws, op, args, self.deadline).await.map(|a| (a, ws))
            } => a,
        };
        Ok(match answer {
            Ok((a, ws)) => Self::answered(op, &a, &ws, whole_budget),
            Err(e) => Self::error_result(&e),
        }
        .into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(OVERVIEW_URI, "overview")
                .with_description("A map of the repository: layout, languages, central modules, entry points")
                .with_mime_type("text/markdown"),
            Resource::new(STATUS_URI, "index-status")
                .with_description("What the index covers, its generation, and what changed since the build")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let (op, mime) = match request.uri.as_str() {
            OVERVIEW_URI => (Operation::Overview, "text/markdown"),
            STATUS_URI => (Operation::IndexStatus, "application/json"),
            other => {
                return Err(ErrorData::resource_not_found(
                    format!("no resource {other}"),
                    None,
                ));
            }
        };
        if op == Operation::IndexStatus
            && let Some(b) = self.ws.building()
        {
            let text = serde_json::to_string_pretty(&b).unwrap_or_default();
            return Ok(ReadResourceResult::new(vec![
                ResourceContents::text(text, request.uri.clone()).with_mime_type(mime),
            ])
            .into());
        }
        let ws = self
            .ws
            .wait(self.deadline)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let answer = request_runner::answer(&ws, op, serde_json::json!({}), self.deadline)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let text = match answer {
            crate::api::Answer::Overview(o) => o.markdown,
            other => other
                .to_json()
                .map(|v| serde_json::to_string_pretty(&v).unwrap_or_default())
                .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
        };
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri.clone()).with_mime_type(mime),
        ])
        .into())
    }
}
