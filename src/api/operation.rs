//! `Operation`: the closed list of what the query layer answers, with each operation's name,
//! description (written for a model), and request and response JSON schemas. Servers and the
//! agent dispatch through [`Workspace::answer`] (typed) or [`Workspace::call`] (JSON); the CLI
//! calls the typed methods and prints the same serialized responses.

use serde::de::DeserializeOwned;

use super::answer_text::{Footing, ModelText};
use super::context_ops::{
    AskRequest, AskResponse, ContextRequest, ContextResponse, OverviewRequest, OverviewResponse,
};
use super::graph_ops::{
    CallDirection, CallsRequest, CallsResponse, DepsRequest, DepsResponse, GraphStatsRequest,
    GraphStatsResponse, RefsRequest, RefsResponse, SymbolRequest, SymbolResponse,
};
use super::impact::{ImpactRequest, ImpactResponse};
use super::index_status::{IndexStatusRequest, IndexStatusResponse};
use super::repo_file::{ReadSpanRequest, ReadSpanResponse};
use super::search::{SearchRequest, SearchResponse};
use super::workspace::{ReindexRequest, ReindexResponse};
use super::{ApiError, Workspace};
use crate::index::NoProgress;

/// The registry: each operation once, with its name, request, answer and handler. The enum,
/// its list and names, the schemas, the typed [`Answer`] and [`Workspace::answer`]'s dispatch
/// are all generated from it; a new operation is written in `Analysis` (or `Workspace`) and
/// registered here, and described in [`Operation::description`].
macro_rules! operations {
    ($($op:ident => $name:literal, $req:ty, $resp:ty, |$ws:ident, $r:ident| $call:expr;)*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Operation {
            $($op,)*
        }

        impl Operation {
            pub const ALL: [Operation; [$($name),*].len()] = [$(Operation::$op),*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Operation::$op => $name,)*
                }
            }

            /// The arguments' schema. Optional arguments are simply not required: their
            /// `null` alternative is dropped, since several model APIs refuse type arrays and
            /// `anyOf` with `null` in tool schemas (a `null` sent anyway still reads as absent).
            pub fn input_schema(self) -> serde_json::Value {
                match self {
                    $(Operation::$op => request_schema::<$req>(),)*
                }
            }

            /// The answer's schema, in the portable spelling (see [`portable`]).
            pub fn output_schema(self) -> serde_json::Value {
                match self {
                    $(Operation::$op => answer_schema::<$resp>(),)*
                }
            }
        }

        /// One operation's answer, typed: it writes its own model text ([`ModelText`]) and,
        /// for a client that wants the whole answer, its JSON ([`Answer::to_json`]).
        // Made once per request and moved once: boxing the large answers would save nothing.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone)]
        pub enum Answer {
            $($op($resp),)*
        }

        impl Answer {
            fn text(&self) -> &dyn ModelText {
                match self {
                    $(Answer::$op(a) => a,)*
                }
            }

            /// The answer as JSON, as the CLI's `--json` prints it: read from its text form,
            /// since `to_value` would widen `f32` scores to their exact `f64` values and the
            /// two would print differently.
            pub fn to_json(&self) -> Result<serde_json::Value, ApiError> {
                let text = match self {
                    $(Answer::$op(a) => serde_json::to_string(a),)*
                }
                .map_err(|e| ApiError::Internal(format!("serializing the answer: {e}")))?;
                serde_json::from_str(&text).map_err(|e| ApiError::Internal(format!("serializing the answer: {e}")))
            }
        }

        impl Workspace {
            /// Answers one operation from JSON arguments on the current generation.
            pub fn answer(&self, op: Operation, args: serde_json::Value) -> Result<Answer, ApiError> {
                Ok(match op {
                    $(Operation::$op => {
                        let $ws = self;
                        let $r: $req = parse(args)?;
                        Answer::$op($call?)
                    })*
                })
            }
        }
    };
}

operations! {
    Search => "search", SearchRequest, SearchResponse, |ws, r| ws.analysis().search(&r);
    Symbol => "symbol", SymbolRequest, SymbolResponse, |ws, r| ws.analysis().symbol(&r);
    Callers => "callers", CallsRequest, CallsResponse, |ws, r| ws.analysis().calls(&r, CallDirection::Callers);
    Callees => "callees", CallsRequest, CallsResponse, |ws, r| ws.analysis().calls(&r, CallDirection::Callees);
    Refs => "refs", RefsRequest, RefsResponse, |ws, r| ws.analysis().refs(&r);
    Deps => "deps", DepsRequest, DepsResponse, |ws, r| ws.analysis().deps(&r);
    GraphStats => "graph_stats", GraphStatsRequest, GraphStatsResponse, |ws, r| ws.analysis().graph_stats(&r);
    Context => "context", ContextRequest, ContextResponse, |ws, r| ws.analysis().context(&r);
    Ask => "ask", AskRequest, AskResponse, |ws, r| ws.analysis().ask(&r);
    Overview => "overview", OverviewRequest, OverviewResponse, |ws, r| ws.analysis().overview(&r);
    Impact => "impact", ImpactRequest, ImpactResponse, |ws, r| ws.analysis().impact(&r);
    IndexStatus => "index_status", IndexStatusRequest, IndexStatusResponse, |ws, r| ws.index_status(&r);
    ReadSpan => "read_span", ReadSpanRequest, ReadSpanResponse, |ws, r| ws.analysis().read_span(&r);
    Reindex => "reindex", ReindexRequest, ReindexResponse, |ws, r| ws.reindex(&r, &NoProgress);
}

fn request_schema<T: schemars::JsonSchema>() -> serde_json::Value {
    let mut v = schemars::schema_for!(T).to_value();
    drop_null_alternatives(&mut v);
    portable(&mut v);
    v
}

fn answer_schema<T: schemars::JsonSchema>() -> serde_json::Value {
    let mut v = schemars::schema_for!(T).to_value();
    portable(&mut v);
    v
}

impl Operation {
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL.into_iter().find(|o| o.name() == name)
    }

    /// Everything but `reindex` only reads.
    pub fn read_only(self) -> bool {
        self != Operation::Reindex
    }

    /// Served as an MCP tool (`ask` needs a model of its own and `graph_stats` is for people;
    /// both stay in the JSON API).
    /// The tools offered by default: what an agent needs for a task, nothing it does not.
    pub const CORE: [Operation; 8] = [
        Operation::Search,
        Operation::Context,
        Operation::Symbol,
        Operation::Callers,
        Operation::Refs,
        Operation::Impact,
        Operation::ReadSpan,
        Operation::Overview,
    ];

    /// One or two sentences for a model choosing a tool (the core tool list; [`Self::description`]
    /// is the long form).
    pub fn summary(self) -> &'static str {
        match self {
            Operation::Search => {
                "Find code by identifier, message or meaning: ranked files with the line spans to read. mode literal/regex lists matching lines."
            }
            Operation::Context => {
                "Call first for a new task: the relevant files and definitions, and their code, within max_tokens."
            }
            Operation::Symbol => "Definitions by name or qualified name: kind, path:line, signature.",
            Operation::Callers => "Who calls a function (qualified name or path:line), with call sites.",
            Operation::Refs => "Every reference to a symbol, with the enclosing definition.",
            Operation::Impact => {
                "What a change (patch, git range, symbols; default: working tree) breaks, and the tests to run."
            }
            Operation::ReadSpan => "Read lines: path:START-END, path:LINE or path.",
            Operation::Overview => "A map of the repository: layout, central modules, entry points.",
            other => other.description(),
        }
    }

    /// The arguments' schema as the core tool list sends it: no `$schema`, titles or null
    /// defaults, enums as plain lists, each description its first sentence, and the
    /// evaluation-only arguments left out (they are still accepted).
    pub fn lean_input_schema(self) -> serde_json::Value {
        let mut v = self.input_schema();
        lean(&mut v);
        if let Some(serde_json::Value::Object(props)) = v.get_mut("properties") {
            for hidden in ["plain_bm25", "features", "ranker", "signals"] {
                props.remove(hidden);
            }
        }
        v
    }

    pub fn is_tool(self) -> bool {
        !matches!(self, Operation::Ask | Operation::GraphStats)
    }

    pub fn description(self) -> &'static str {
        match self {
            Operation::Search => {
                "Search the repository's code. Default mode `hybrid` ranks files by fusing keyword (BM25 over identifiers, \
                 signatures and code) and meaning; `lexical` and `symbols` return definitions with snippets; `semantic` returns \
                 code chunks close in meaning; `files` ranks files; `literal` and `regex` return every matching line like ripgrep. \
                 Accepts identifiers, error messages or a whole issue text, with \"phrases\" and lang:/kind:/path: filters."
            }
            Operation::Symbol => {
                "Find definitions by name or qualified name (`Session.send`, `grep::Searcher::new`, or a prefix): kind, path, line, \
                 signature and doc. Exact matches first, then case-insensitive, then prefix."
            }
            Operation::Callers => {
                "Who calls a function or method, to a depth of 1-10 levels, with each call site and how sure the resolution is. The \
                 symbol is a qualified name, `path:line`, or a plain name (if it names several definitions, status is `ambiguous` \
                 and `candidates` lists them)."
            }
            Operation::Callees => {
                "What a function or method calls, to a depth of 1-10 levels, with call sites and confidence. Same symbol forms as \
                 `callers`."
            }
            Operation::Refs => {
                "Every reference to a symbol across the repository: calls, type uses, inheritance, with the enclosing definition \
                 and confidence of each."
            }
            Operation::Deps => {
                "A file's imports, each resolved to repository files or marked external, and the files that import it."
            }
            Operation::GraphStats => {
                "The code graph as a whole: nodes, edges by kind and provenance, resolution by language."
            }
            Operation::Context => {
                "The code relevant to a task (an issue, a bug report, a question, a stack trace): files and definitions ranked from \
                 every signal with the reasons, and the code itself as markdown with path:line citations (`pack.text`), the \
                 whole answer within `max_tokens` (default 8000). Call this first for a new task."
            }
            Operation::Ask => {
                "Answer a question about the repository with a configured chat model, citing path:line checked against the index; \
                 without a model, the relevant code and an overview."
            }
            Operation::Overview => {
                "A map of the repository for a newcomer: layout, languages, central modules, entry points, and how the main parts \
                 call each other, as markdown within `max_tokens` (default 2000)."
            }
            Operation::Impact => {
                "The blast radius of a change: the definitions a unified diff (`patch`), a git range, the staged changes or the \
                 named `symbols` change, what depends on them and by which path, public API and entry points reached, the tests to \
                 run with ready commands, and a risk level. Without arguments: the working tree against HEAD."
            }
            Operation::IndexStatus => {
                "What the index covers: files by language, symbols, skipped files by reason, parse errors, the index's age and \
                 generation, files changed since the build, and the server's last refresh."
            }
            Operation::ReadSpan => {
                "Read lines of a repository file: `path:START-END` (1-based, inclusive), `path:LINE` or `path`. Paths are \
                 relative to the repository root and cannot leave it."
            }
            Operation::Reindex => {
                "Bring the index up to date with the working tree now (incremental: only changed files are parsed; `full` parses \
                 everything). The server also does this by itself when files change."
            }
        }
    }
}

/// The spelling that the most tool-schema consumers accept: a type array becomes `anyOf`
/// branches of one type each, and schemars' own number formats (`uint64`, `float`...), which
/// no JSON Schema dialect defines, are dropped (`minimum` keeps what matters of them).
fn portable(v: &mut serde_json::Value) {
    use serde_json::Value;
    const STANDARD: [&str; 8] = [
        "date-time",
        "date",
        "time",
        "email",
        "uri",
        "uuid",
        "regex",
        "hostname",
    ];
    match v {
        Value::Object(m) => {
            if m.get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD.contains(&f))
            {
                m.remove("format");
            }
            if let Some(Value::Array(types)) = m.get("type")
                && types.len() > 1
                && !m.contains_key("anyOf")
            {
                let branches: Vec<Value> = types.iter().map(|t| serde_json::json!({ "type": t })).collect();
                m.remove("type");
                m.insert("anyOf".into(), Value::Array(branches));
            }
            m.values_mut().for_each(portable);
        }
        Value::Array(a) => a.iter_mut().for_each(portable),
        _ => {}
    }
}

/// See [`Operation::lean_input_schema`].
fn lean(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            m.remove("$schema");
            m.remove("title");
            if m.get("default")
                .is_some_and(|d| d.is_null() || *d == Value::Bool(false))
            {
                m.remove("default");
            }
            if let Some(Value::String(d)) = m.get_mut("description") {
                let flat = d.split_whitespace().collect::<Vec<_>>().join(" ");
                let first = match flat.find(". ") {
                    Some(i) => flat[..=i].to_string(),
                    None => flat,
                };
                *d = first;
            }
            // `oneOf` of documented constants: a plain `enum` of their values.
            let consts: Option<Vec<Value>> = match m.get("oneOf") {
                Some(Value::Array(alts)) => alts.iter().map(|a| a.get("const").cloned()).collect(),
                _ => None,
            };
            if let Some(values) = consts {
                m.remove("oneOf");
                m.insert("enum".into(), Value::Array(values));
                m.insert("type".into(), Value::String("string".into()));
            }
            m.values_mut().for_each(lean);
        }
        Value::Array(a) => a.iter_mut().for_each(lean),
        _ => {}
    }
}

/// `"type": ["integer", "null"]` to `"type": "integer"`, and `anyOf: [X, {"type": "null"}]`
/// to `X`, everywhere in a schema.
fn drop_null_alternatives(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            if let Some(Value::Array(types)) = m.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    m.insert("type".into(), only);
                }
            }
            let single = match m.get_mut("anyOf") {
                Some(Value::Array(alts)) => {
                    alts.retain(|a| a.get("type").is_none_or(|t| t != "null"));
                    (alts.len() == 1).then(|| alts.remove(0))
                }
                _ => None,
            };
            if let Some(Value::Object(inner)) = single {
                m.remove("anyOf");
                for (k, x) in inner {
                    m.entry(k).or_insert(x);
                }
            }
            m.values_mut().for_each(drop_null_alternatives);
        }
        Value::Array(a) => a.iter_mut().for_each(drop_null_alternatives),
        _ => {}
    }
}

fn parse<T: DeserializeOwned>(args: serde_json::Value) -> Result<T, ApiError> {
    // An absent argument object is an empty one.
    let args = match args {
        serde_json::Value::Null => serde_json::json!({}),
        a => a,
    };
    serde_json::from_value(args).map_err(|e| ApiError::invalid("arguments", e.to_string()))
}

impl ModelText for Answer {
    fn body(&self) -> String {
        self.text().body()
    }

    fn footing(&self) -> Footing<'_> {
        self.text().footing()
    }
}

impl Workspace {
    /// [`Self::answer`] as JSON.
    pub fn call(&self, op: Operation, args: serde_json::Value) -> Result<serde_json::Value, ApiError> {
        self.answer(op, args)?.to_json()
    }

    /// The index status with what this workspace's watcher knows.
    pub fn index_status(&self, r: &IndexStatusRequest) -> Result<IndexStatusResponse, ApiError> {
        let watch = self.watch_state().map(|w| w.last());
        self.analysis().index_status(r, watch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_schemas_have_no_null_alternatives_and_name_their_required_fields() {
        for op in Operation::ALL {
            let text = op.input_schema().to_string();
            assert!(!text.contains("\"null\""), "{}: {text}", op.name());
            let schema = op.input_schema();
            assert_eq!(schema["type"], "object", "{}", op.name());
            let out = op.output_schema();
            assert_eq!(out["type"], "object", "{}", op.name());
            let out = out.to_string();
            assert!(
                !out.contains("\"uint64\"") && !out.contains("\"type\":[\""),
                "{}: {out}",
                op.name()
            );
        }
        let search = Operation::Search.input_schema();
        assert_eq!(search["required"], serde_json::json!(["query"]));
        assert_eq!(search["properties"]["limit"]["type"], "integer");
    }
}
