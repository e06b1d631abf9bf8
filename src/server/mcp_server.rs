//! `KenMcp`: the query layer as an MCP server (rmcp). One tool per operation, each with a
//! description for a model, its input and output schemas, annotations, and results as
//! `structuredContent` plus the same JSON as text; the overview and the index status as
//! resources. Errors a model can fix come back as tool errors (`isError`), with the reason.

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

use super::request_runner;
use crate::api::{ApiError, Operation, Workspace};

pub const OVERVIEW_URI: &str = "kenning://overview";
pub const STATUS_URI: &str = "kenning://index-status";

#[derive(Clone)]
pub struct KenMcp {
    ws: Arc<Workspace>,
    tools: Arc<Vec<Tool>>,
    deadline: Duration,
}

const INSTRUCTIONS: &str = "Kenning indexes this repository: definitions, references, calls, imports, a lexical and a \
semantic search index. For a new task call `context` with the task text first: it returns the relevant files and \
definitions with the code packed into a token budget. Use `search` for identifiers, messages or concepts, `symbol` for \
definitions by name, `callers`/`callees`/`refs`/`deps` to follow the code graph, `impact` before or after an edit to see \
what depends on it and which tests to run, and `read_span` to read exact lines. Every result states its coverage, the \
index generation and how many files changed since it was built; the server re-indexes changed files by itself.";

fn object(v: serde_json::Value) -> JsonObject {
    match v {
        serde_json::Value::Object(m) => m,
        _ => JsonObject::new(),
    }
}

fn tool(op: Operation) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(op.read_only())
        .destructive(false)
        .idempotent(op.read_only())
        .open_world(false);
    Tool::new(op.name(), op.description(), object(op.input_schema()))
        .with_raw_output_schema(Arc::new(object(op.output_schema())))
        .with_annotations(annotations)
}

impl KenMcp {
    pub fn new(ws: Arc<Workspace>, deadline: Duration) -> KenMcp {
        let tools = Operation::ALL
            .into_iter()
            .filter(|o| o.is_tool())
            .map(tool)
            .collect();
        KenMcp {
            ws,
            tools: Arc::new(tools),
            deadline,
        }
    }

    fn error_result(e: &ApiError) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(format!("{}: {e}", e.code()))])
    }
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
        let Some(op) = Operation::from_name(&request.name).filter(|o| o.is_tool()) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}; tools/list names them", request.name),
                None,
            ));
        };
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let answer = tokio::select! {
            _ = context.ct.cancelled() => return Err(ErrorData::internal_error("cancelled by the client", None)),
            a = request_runner::call(&self.ws, op, args, self.deadline) => a,
        };
        Ok(match answer {
            Ok(v) => CallToolResult::structured(v),
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
        let v = request_runner::call(&self.ws, op, serde_json::json!({}), self.deadline)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let text = match op {
            Operation::Overview => v
                .get("markdown")
                .and_then(|m| m.as_str())
                .unwrap_or_default()
                .to_string(),
            _ => serde_json::to_string_pretty(&v).unwrap_or_default(),
        };
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, request.uri.clone()).with_mime_type(mime),
        ])
        .into())
    }
}
