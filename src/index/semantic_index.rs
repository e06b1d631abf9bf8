//! `SemanticIndex`: the vector part opened for queries. A query is embedded with the model
//! the chunks were embedded with (another model is refused) and its neighbours found by a
//! scan or, above [`SCAN_MAX_POINTS`], the HNSW graph. The scan reads every point's sign bits
//! and re-scores the best [`rescored`] on their packed rows; a part smaller than a few times
//! that is scanned on its rows alone, exactly.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use super::IndexError;
use super::part_links::has_graph;
use super::vector_rows::Rows;
use super::vector_store::{ChunkTable, model_error};
use crate::vector::{Embedder, StaticEmbedder, VectorIndex};

/// A semantic match: one chunk of one file.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SemanticHit {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub symbol: Option<u32>,
    pub score: f32,
}

/// Below this many points a one-shot query scans the packed rows exactly: faster than
/// reloading the HNSW graph (`hnsw_rs` rebuilds its structure on load: 0.4 s for 43k points,
/// 2.5 s for 223k, while a scan of 223k takes milliseconds). `KEN_VECTOR_SEARCH=graph`
/// forces the graph, `scan` the scan.
pub(super) const SCAN_MAX_POINTS: usize = 5_000_000;

/// Points re-scored on their rows after the pass over the sign bits, for `k` asked: the
/// exact top 300 of 194,587 chunks came back at 94 % with 4,000, 97 % with 6,000
/// (`crate::vector::two_stage_top_k`); a one-shot query reads the rows of those points only.
pub fn rescored(k: usize) -> usize {
    (k * 12).max(4_000)
}

/// How queries find their neighbours.
enum Backend {
    Graph(VectorIndex),
    Scan {
        rows: Rows,
        dim: usize,
        dead: Vec<usize>,
    },
}

/// The vector part opened for queries.
pub struct SemanticIndex {
    /// The chunk table, read in place: a hit's file decodes its chunks.
    table: ChunkTable,
    live: usize,
    index: Backend,
    /// What embeds queries: the model that embedded the chunks.
    model: Arc<dyn Embedder>,
}

impl SemanticIndex {
    /// `table`'s chunks with their vectors; `embedder` must be the model the part was built
    /// with when that is not the built-in one; `builtin` is the built-in model when it was
    /// loaded already.
    pub fn open_with(
        table: ChunkTable,
        rows: Rows,
        dir: &Path,
        embedder: Option<Arc<dyn Embedder>>,
        builtin: Option<StaticEmbedder>,
    ) -> Result<SemanticIndex, IndexError> {
        let model = query_model(&table, embedder, builtin)?;
        let points = rows.points();
        if points != table.points() {
            return Err(IndexError::Corrupt {
                path: dir.to_path_buf(),
                detail: format!("{points} vectors, the vector part lists {}", table.points()),
            });
        }
        let live = table.live();
        // The backend owns the vectors; queries read only the chunk table.
        let dead: Vec<usize> = {
            let mut d: Vec<usize> = table.dead.iter().map(|&d| d as usize).collect();
            d.sort_unstable();
            d.dedup();
            d
        };
        let index = Backend::open(rows, table.dim as usize, dead, dir)?;
        Ok(SemanticIndex {
            table,
            live,
            index,
            model,
        })
    }

    /// The model's identity.
    pub fn model(&self) -> &str {
        &self.table.model
    }

    pub fn chunks(&self) -> usize {
        self.live
    }

    pub fn search(&self, query: &str, k: usize) -> Result<Vec<SemanticHit>, IndexError> {
        let q = self.model.embed(&[query]).map_err(model_error)?;
        let Some(q) = q.first() else { return Ok(Vec::new()) };
        let found = match &self.index {
            Backend::Graph(g) => g.search(q, k),
            Backend::Scan { rows, dim, dead } => {
                let depth = rescored(k);
                match rows.coded() {
                    // Scanned exactly below 4 times the candidates kept (or as asked).
                    Some(codes) if rows.points() > depth * 4 && !exact_scan() => {
                        let read =
                            |ids: &[usize], visit: &mut dyn FnMut(usize, &[u8])| rows.read_rows(ids, visit);
                        crate::vector::two_stage_top_k(&codes, *dim, dead, q, k, depth, &read)
                    }
                    _ => crate::vector::exact_top_k_in(&rows.slices(), *dim, dead, q, k),
                }
            }
        };
        Ok(found
            .into_iter()
            .filter_map(|(id, score)| {
                let (path, c) = self.table.chunk(id)?;
                Some(SemanticHit {
                    path: path.to_string(),
                    start_line: c.start_line,
                    end_line: c.end_line,
                    symbol: c.symbol,
                    score,
                })
            })
            .collect())
    }
}

/// The model that embeds queries: `embedder` when it is the one the part was built with,
/// else the built-in one with the part's IDF, when the part was made with it.
fn query_model(
    store: &ChunkTable,
    embedder: Option<Arc<dyn Embedder>>,
    builtin: Option<StaticEmbedder>,
) -> Result<Arc<dyn Embedder>, IndexError> {
    match embedder {
        Some(e) if e.id() == store.model && e.dim() == store.dim as usize => Ok(e),
        Some(e) => Err(IndexError::Vector(format!(
            "the index was embedded with {} ({} dimensions), not {} ({} dimensions): \
             rebuild it with `ken index build` to re-embed",
            store.model,
            store.dim,
            e.id(),
            e.dim()
        ))),
        None => {
            let model = match builtin {
                Some(m) => m,
                None => StaticEmbedder::builtin().map_err(model_error)?,
            };
            if store.model != crate::vector::BUILTIN_MODEL_ID || store.dim as usize != model.dim() {
                return Err(IndexError::Vector(format!(
                    "the index was embedded with {} ({} dimensions), which this ken cannot \
                     make from the index's settings; rebuild it with `ken index build`",
                    store.model, store.dim,
                )));
            }
            Ok(Arc::new(model.with_weights(store.idf.clone())))
        }
    }
}

/// `KEN_VECTOR_SEARCH=exact`: every packed row scanned, not the sign bits first.
fn exact_scan() -> bool {
    std::env::var("KEN_VECTOR_SEARCH").is_ok_and(|m| m == "exact")
}

impl Backend {
    /// A scan of `rows` below [`SCAN_MAX_POINTS`] (or as `KEN_VECTOR_SEARCH` says: `scan`,
    /// `exact` or `graph`), else the
    /// graph dumped in `dir`, or built in memory where none was kept.
    fn open(rows: Rows, dim: usize, dead: Vec<usize>, dir: &Path) -> Result<Backend, IndexError> {
        let mode = std::env::var("KEN_VECTOR_SEARCH").unwrap_or_default();
        let scan = match mode.as_str() {
            "graph" => false,
            "scan" | "exact" => true,
            _ => rows.points() <= SCAN_MAX_POINTS,
        };
        if scan {
            return Ok(Backend::Scan { rows, dim, dead });
        }
        let vectors = rows.to_vec();
        // hnsw_rs may panic on a damaged dump: the boundary makes that damage of the
        // folder, which the next build rewrites.
        let mut index = crate::util::contain(|| match has_graph(dir) {
            true => VectorIndex::load(dir, dim, vectors),
            // Not kept below the scan threshold: built here, in memory.
            false => VectorIndex::build(dim, vectors),
        })
        .map_err(|panic| IndexError::Corrupt {
            path: dir.to_path_buf(),
            detail: format!("reading the vector graph failed: {panic}"),
        })?
        .map_err(model_error)?;
        index.set_dead(dead);
        Ok(Backend::Graph(index))
    }
}
