//! `symbol`, `callers`, `callees`, `refs`, `deps`, `graph_stats`: definitions by name and the
//! code graph around them. A symbol address that names several definitions, or none, is an
//! answer (`status`), not an error: the caller picks one of the candidates.

use serde::{Deserialize, Serialize};

use super::page::{PageInfo, Paging};
use super::repo_file::repo_path;
use super::{Analysis, ApiError};
use crate::graph::{GraphQuery, GraphStats, ImportInfo, Lookup, Reached, Site, SymbolId, SymbolInfo};
use crate::index::{Coverage, SymbolHit, SymbolLookup};

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SymbolRequest {
    /// A name (`register_hook`), a qualified name (`requests.models.Request.register_hook`,
    /// `Request.register_hook`, `grep::Searcher::new`) or a prefix.
    pub name: String,
    /// Results per page (default 50).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SymbolResponse {
    pub query: String,
    /// Exact matches first, then case-insensitive, then prefix.
    pub hits: Vec<SymbolHit>,
    pub page: PageInfo,
    pub generation: u64,
    pub coverage: Coverage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CallDirection {
    Callers,
    Callees,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CallsRequest {
    /// A qualified name (`requests.sessions.Session.send`, `Session::send`), `path:line`, or
    /// a plain name (candidates are listed when it names several definitions).
    pub symbol: String,
    /// Levels of calls to follow, 1-10 (default 1).
    #[serde(default)]
    pub depth: Option<usize>,
    /// Ignore edges less sure than this, 0-1 (name-matched edges are 0.6 and below).
    #[serde(default)]
    pub min_confidence: Option<f32>,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LookupStatus {
    /// The address named one definition.
    Ok,
    /// It names several: see `candidates`, and ask again with a qualified name or path:line.
    Ambiguous,
    NotFound,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CallsResponse {
    pub query: String,
    pub status: LookupStatus,
    pub direction: CallDirection,
    pub depth: usize,
    pub target: Option<SymbolInfo>,
    /// Symbols reached, nearest first; `via` indexes this whole list (not the page).
    pub reached: Vec<Reached>,
    pub candidates: Vec<SymbolInfo>,
    /// The depth or node bound cut the traversal short.
    pub truncated: bool,
    pub page: PageInfo,
    pub generation: u64,
    pub coverage: Coverage,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefsRequest {
    /// A qualified name, `path:line`, or a plain name.
    pub symbol: String,
    /// References per page (default 200).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RefSite {
    pub site: Site,
    /// The definition the reference is in.
    pub from: SymbolInfo,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RefsResponse {
    pub query: String,
    pub status: LookupStatus,
    pub target: Option<SymbolInfo>,
    /// Calls, type uses and inheritance the graph resolved (`kind` calls, references,
    /// inherits, implements), then every other use found in the files that can see the
    /// definition (`kind: uses`: reads, writes, member accesses, imports, decorators).
    pub refs: Vec<RefSite>,
    pub candidates: Vec<SymbolInfo>,
    /// What could not be done (a search for uses cut short).
    pub notes: Vec<String>,
    pub page: PageInfo,
    pub generation: u64,
    pub coverage: Coverage,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DepsRequest {
    /// A file path relative to the repository root.
    pub file: String,
    /// Importing files per page (default 200).
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub max_tokens: Option<usize>,
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Importer {
    pub path: String,
    pub lines: Vec<u32>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct DepsResponse {
    pub file: String,
    pub module: String,
    /// What it imports, each resolved to files (or external).
    pub imports: Vec<ImportInfo>,
    /// Files importing it (paged).
    pub imported_by: Vec<Importer>,
    pub page: PageInfo,
    pub generation: u64,
    pub coverage: Coverage,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphStatsRequest {}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GraphStatsResponse {
    pub stats: GraphStats,
    /// How the last build updated the graph (files resolved, copied).
    pub last_update: Option<crate::graph::GraphUpdate>,
    pub generation: u64,
    pub coverage: Coverage,
}

/// The one symbol an address names, or the status and candidates.
fn lookup(
    q: &GraphQuery<'_>,
    address: &str,
) -> Result<(Option<SymbolId>, LookupStatus, Vec<SymbolInfo>), ApiError> {
    if address.trim().is_empty() {
        return Err(ApiError::invalid("symbol", "is empty"));
    }
    Ok(match q.find(address) {
        Lookup::Found(s) => (Some(s), LookupStatus::Ok, Vec::new()),
        Lookup::Ambiguous(v) => (
            None,
            LookupStatus::Ambiguous,
            v.iter().map(|s| q.info(*s)).collect(),
        ),
        Lookup::NotFound => (None, LookupStatus::NotFound, Vec::new()),
    })
}

impl Analysis {
    pub fn symbol(&self, r: &SymbolRequest) -> Result<SymbolResponse, ApiError> {
        if r.name.trim().is_empty() {
            return Err(ApiError::invalid("name", "is empty"));
        }
        let paging = Paging::new(r.cursor.as_deref(), r.limit, 50, 1000, r.max_tokens)?;
        let hits = SymbolLookup::new(self.snapshot())?.find(&r.name)?;
        let total = hits.len();
        let (hits, page) = paging.apply(hits, total);
        Ok(SymbolResponse {
            query: r.name.clone(),
            hits,
            page,
            generation: self.generation(),
            coverage: self.coverage(),
        })
    }

    pub fn calls(&self, r: &CallsRequest, direction: CallDirection) -> Result<CallsResponse, ApiError> {
        let depth = super::page::check_limit("depth", r.depth, 1, crate::graph::MAX_DEPTH)?;
        let min_confidence = r.min_confidence.unwrap_or(0.0);
        if !(0.0..=1.0).contains(&min_confidence) {
            return Err(ApiError::invalid(
                "min_confidence",
                format!("must be between 0 and 1, not {min_confidence}"),
            ));
        }
        let paging = Paging::new(r.cursor.as_deref(), r.limit, 200, 5000, r.max_tokens)?;
        let q = self.graph_query()?;
        let (found, status, candidates) = lookup(&q, &r.symbol)?;
        let mut out = CallsResponse {
            query: r.symbol.clone(),
            status,
            direction,
            depth,
            target: None,
            reached: Vec::new(),
            candidates,
            truncated: false,
            page: paging.apply(Vec::<()>::new(), 0).1,
            generation: self.generation(),
            coverage: self.coverage(),
        };
        if let Some(s) = found {
            let dir = match direction {
                CallDirection::Callers => petgraph::Direction::Incoming,
                CallDirection::Callees => petgraph::Direction::Outgoing,
            };
            let t = q.calls(s, dir, depth, min_confidence);
            out.target = Some(t.target);
            out.truncated = t.truncated;
            let total = t.reached.len();
            (out.reached, out.page) = paging.apply(t.reached, total);
        }
        Ok(out)
    }

    pub fn refs(&self, r: &RefsRequest) -> Result<RefsResponse, ApiError> {
        let paging = Paging::new(r.cursor.as_deref(), r.limit, 200, 5000, r.max_tokens)?;
        let q = self.graph_query()?;
        let (found, status, candidates) = lookup(&q, &r.symbol)?;
        let mut out = RefsResponse {
            query: r.symbol.clone(),
            status,
            target: None,
            refs: Vec::new(),
            candidates,
            notes: Vec::new(),
            page: paging.apply(Vec::<()>::new(), 0).1,
            generation: self.generation(),
            coverage: self.coverage(),
        };
        if let Some(s) = found {
            let mut all: Vec<RefSite> = q
                .refs(s)
                .into_iter()
                .map(|(site, from)| RefSite { site, from })
                .collect();
            // Then the uses the graph has no edge for: reads, writes, member accesses, imports.
            let known: std::collections::HashSet<(String, u32)> =
                all.iter().map(|r| (r.site.path.clone(), r.site.line)).collect();
            let (more, cut) = super::uses::uses(&q, s, self.root(), &known);
            if cut {
                out.notes.push(
                    "only the first 2000 files that can see the definition were read for its uses".into(),
                );
            }
            all.extend(more.into_iter().map(|(site, from)| RefSite { site, from }));
            out.target = Some(q.info(s));
            let total = all.len();
            (out.refs, out.page) = paging.apply(all, total);
        }
        Ok(out)
    }

    pub fn deps(&self, r: &DepsRequest) -> Result<DepsResponse, ApiError> {
        let paging = Paging::new(r.cursor.as_deref(), r.limit, 200, 5000, r.max_tokens)?;
        let path = repo_path(self.root(), "file", &r.file)?;
        let q = self.graph_query()?;
        let coverage = self.coverage();
        let Some(file) = q.file(&path) else {
            return Err(ApiError::NotFound(format!(
                "{path} is not an indexed file ({} files indexed, {} skipped; see `ken index status --details`)",
                coverage.files_indexed, coverage.files_skipped
            )));
        };
        let d = q.deps(file);
        let importers: Vec<Importer> = d
            .imported_by
            .into_iter()
            .map(|(path, lines)| Importer { path, lines })
            .collect();
        let total = importers.len();
        let (imported_by, page) = paging.apply(importers, total);
        Ok(DepsResponse {
            file: d.path,
            module: d.module,
            imports: d.imports,
            imported_by,
            page,
            generation: self.generation(),
            coverage,
        })
    }

    pub fn graph_stats(&self, _r: &GraphStatsRequest) -> Result<GraphStatsResponse, ApiError> {
        let q = self.graph_query()?;
        let last_update = self
            .snapshot()
            .manifest
            .parts
            .graph
            .as_ref()
            .map(|g| g.update.clone());
        Ok(GraphStatsResponse {
            stats: q.stats(),
            last_update,
            generation: self.generation(),
            coverage: self.coverage(),
        })
    }
}
