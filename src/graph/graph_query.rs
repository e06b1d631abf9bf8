//! `GraphQuery`: the questions the commands ask of a code graph — which symbol an address
//! names, its callers and callees to a depth, its references, a file's dependencies, and
//! counts. Pure: it reads a loaded [`CodeGraph`], never the disk.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use petgraph::Direction;
use petgraph::graph::NodeIndex;
use serde::Serialize;

use super::{CodeGraph, EdgeKind, Node, Provenance, SymbolGraph, SymbolId};
use crate::symbols::FileId;

/// Deepest traversal accepted, and most symbols a traversal visits.
pub const MAX_DEPTH: usize = 10;
pub const MAX_VISITED: usize = 2000;

pub struct GraphQuery<'g> {
    pub graph: &'g CodeGraph,
    pub sg: std::borrow::Cow<'g, SymbolGraph>,
}

/// A symbol (or a file's module-level code) as shown to users.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SymbolInfo {
    pub name: String,
    pub qualified: String,
    pub kind: String,
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    pub rank: f32,
}

/// One reference site.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Site {
    pub path: String,
    pub line: u32,
    pub kind: &'static str,
    pub provenance: Provenance,
    pub confidence: f32,
    /// Candidates of an ambiguous reference (1 otherwise).
    pub candidates: u32,
}

/// One symbol reached by a traversal.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Reached {
    pub symbol: SymbolInfo,
    pub depth: usize,
    /// Index in the result list of the symbol it was reached from (`None` at depth 1).
    pub via: Option<usize>,
    pub sites: Vec<Site>,
    /// Best confidence of its sites.
    pub confidence: f32,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Traversal {
    pub target: SymbolInfo,
    pub reached: Vec<Reached>,
    /// The depth or node bound cut the traversal short.
    pub truncated: bool,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ImportInfo {
    pub path: String,
    pub name: Option<String>,
    pub line: u32,
    pub files: Vec<String>,
    pub external: bool,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct FileDeps {
    pub path: String,
    pub module: String,
    pub imports: Vec<ImportInfo>,
    /// Files importing this one, with the lines of their imports.
    pub imported_by: Vec<(String, Vec<u32>)>,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct LanguageRefs {
    pub references: u64,
    pub resolved: u64,
    pub name_matched: u64,
    pub external: u64,
    pub unresolved: u64,
}

#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct GraphStats {
    pub files: u64,
    pub symbols: u64,
    pub edges: u64,
    pub edges_by_kind: BTreeMap<String, u64>,
    /// Reference edges (calls, references, inherits, implements) by provenance.
    pub edges_by_provenance: BTreeMap<String, u64>,
    pub references_by_language: BTreeMap<String, LanguageRefs>,
    pub imports: u64,
    pub imports_resolved: u64,
    pub imports_external: u64,
}

/// What an address names.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    Found(SymbolId),
    Ambiguous(Vec<SymbolId>),
    NotFound,
}

impl<'g> GraphQuery<'g> {
    pub fn new(graph: &'g CodeGraph) -> GraphQuery<'g> {
        GraphQuery {
            graph,
            sg: std::borrow::Cow::Owned(SymbolGraph::new(graph)),
        }
    }

    /// Over a symbol graph already built from `graph` (a resident server keeps one).
    pub fn with_symbol_graph(graph: &'g CodeGraph, sg: &'g SymbolGraph) -> GraphQuery<'g> {
        GraphQuery {
            graph,
            sg: std::borrow::Cow::Borrowed(sg),
        }
    }

    /// Finds a symbol by `path:line` (the innermost definition spanning the line), by
    /// qualified name or its suffix (`.` and `::` both accepted), or by plain name.
    pub fn find(&self, address: &str) -> Lookup {
        if let Some((path, line)) = address.rsplit_once(':')
            && let Ok(line) = line.parse::<u32>()
            && let Ok(fi) = self.graph.files.binary_search_by(|f| f.path.as_str().cmp(path))
        {
            let defs = &self.graph.files[fi].defs;
            let best = defs
                .iter()
                .enumerate()
                .filter(|(_, d)| d.line <= line && line <= d.end_line)
                .min_by_key(|(_, d)| (d.end_line - d.line, std::cmp::Reverse(d.line)));
            return match best {
                Some((di, _)) => Lookup::Found(SymbolId::new(fi as u32, di as u32)),
                None => Lookup::NotFound,
            };
        }
        let want = crate::symbols::with_separator(address.trim(), ".");
        let plain = !want.contains('.');
        let dotted = format!(".{want}");
        let mut exact = Vec::new();
        let mut suffix = Vec::new();
        for (fi, f) in self.graph.files.iter().enumerate() {
            for (di, d) in f.defs.iter().enumerate() {
                if plain {
                    if d.name == want && d.kind != crate::symbols::SymbolKind::Impl {
                        exact.push(SymbolId::new(fi as u32, di as u32));
                    }
                    continue;
                }
                if !want.ends_with(d.name.as_str()) || d.kind == crate::symbols::SymbolKind::Impl {
                    continue;
                }
                let q = crate::symbols::with_separator(&f.qualified(di as u32), ".");
                if q == want {
                    exact.push(SymbolId::new(fi as u32, di as u32));
                } else if q.ends_with(&dotted) {
                    suffix.push(SymbolId::new(fi as u32, di as u32));
                }
            }
        }
        let found = if exact.is_empty() { suffix } else { exact };
        match found.len() {
            0 => Lookup::NotFound,
            1 => Lookup::Found(found[0]),
            _ => Lookup::Ambiguous(found),
        }
    }

    pub fn info(&self, s: SymbolId) -> SymbolInfo {
        let f = &self.graph.files[s.file.index()];
        match f.defs.get(s.def as usize) {
            Some(d) => SymbolInfo {
                name: d.name.to_string(),
                qualified: f.qualified(s.def),
                kind: d.kind.as_str().to_string(),
                path: f.path.to_string(),
                line: d.line,
                end_line: d.end_line,
                rank: self.graph.rank_of(s),
            },
            None => self.file_info(s.file),
        }
    }

    pub fn file_info(&self, file: FileId) -> SymbolInfo {
        let f = &self.graph.files[file.index()];
        SymbolInfo {
            name: "<module>".to_string(),
            qualified: if f.module.is_empty() {
                f.path.to_string()
            } else {
                f.module.to_string()
            },
            kind: "module".to_string(),
            path: f.path.to_string(),
            line: 1,
            end_line: 1,
            rank: 0.0,
        }
    }

    fn node_info(&self, n: NodeIndex) -> Option<SymbolInfo> {
        match self.sg.node(n)? {
            Node::Symbol(s) => Some(self.info(s)),
            Node::File(f) => Some(self.file_info(f)),
        }
    }

    fn site(&self, e: &super::Edge) -> Option<Site> {
        let f = self.graph.files.get(e.file.index())?;
        let r = f.refs.get(e.index as usize)?;
        let res = self
            .graph
            .resolved
            .get(e.file.index())?
            .refs
            .get(e.index as usize)?;
        Some(Site {
            path: f.path.to_string(),
            line: r.line,
            kind: e.kind.as_str(),
            provenance: e.provenance?,
            confidence: e.confidence,
            candidates: res.candidates,
        })
    }

    /// Who calls `s` (`Incoming`) or what `s` calls (`Outgoing`), breadth first to `depth`.
    /// Instantiations count as calls. Edges below `min_confidence` are not followed.
    pub fn calls(&self, s: SymbolId, dir: Direction, depth: usize, min_confidence: f32) -> Traversal {
        let depth = depth.clamp(1, MAX_DEPTH);
        let start = self.sg.symbol_node(s);
        let mut reached: Vec<Reached> = Vec::new();
        let mut index_of: HashMap<NodeIndex, usize> = HashMap::new();
        let mut queue = VecDeque::from([(start, 0usize, None::<usize>)]);
        let mut seen = HashSet::from([start]);
        let mut truncated = false;
        while let Some((n, d, _)) = queue.pop_front() {
            // Sites of one neighbour are grouped; neighbours in order of best confidence.
            let mut grouped: BTreeMap<NodeIndex, Vec<Site>> = BTreeMap::new();
            for (other, _, e) in self.sg.edges(n, dir) {
                if e.kind != EdgeKind::Calls || e.confidence < min_confidence {
                    continue;
                }
                if let Some(site) = self.site(e) {
                    grouped.entry(other).or_default().push(site);
                }
            }
            let mut groups: Vec<(NodeIndex, Vec<Site>)> = grouped.into_iter().collect();
            groups.sort_by(|a, b| best(&b.1).total_cmp(&best(&a.1)).then(a.0.cmp(&b.0)));
            for (other, mut sites) in groups {
                // A recursive call of the target is reported (once); other self-calls add
                // nothing to a walk that already holds them.
                if other == n && (n != start || index_of.contains_key(&n)) {
                    continue;
                }
                if d + 1 > depth {
                    truncated = true;
                    break;
                }
                if let Some(&i) = index_of.get(&other) {
                    if reached[i].depth == d + 1 {
                        reached[i].sites.append(&mut sites);
                    }
                    continue;
                }
                if reached.len() >= MAX_VISITED {
                    truncated = true;
                    break;
                }
                let Some(info) = self.node_info(other) else {
                    continue;
                };
                sites.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
                let via = index_of.get(&n).copied();
                reached.push(Reached {
                    symbol: info,
                    depth: d + 1,
                    via,
                    confidence: best(&sites),
                    sites,
                });
                index_of.insert(other, reached.len() - 1);
                if seen.insert(other) && d + 1 < depth {
                    queue.push_back((other, d + 1, Some(reached.len() - 1)));
                }
            }
        }
        Traversal {
            target: self.info(s),
            reached,
            truncated,
        }
    }

    /// Every resolved reference to `s` (calls, type uses, inheritance), best first.
    pub fn refs(&self, s: SymbolId) -> Vec<(Site, SymbolInfo)> {
        let n = self.sg.symbol_node(s);
        let mut out: Vec<(Site, SymbolInfo)> = self
            .sg
            .edges(n, Direction::Incoming)
            .filter(|(_, _, e)| e.kind != EdgeKind::Contains && e.kind != EdgeKind::Imports)
            .filter_map(|(from, _, e)| Some((self.site(e)?, self.node_info(from)?)))
            .collect();
        out.sort_by(|a, b| {
            b.0.confidence
                .total_cmp(&a.0.confidence)
                .then((&a.0.path, a.0.line).cmp(&(&b.0.path, b.0.line)))
        });
        out
    }

    pub fn file(&self, path: &str) -> Option<FileId> {
        self.graph
            .files
            .binary_search_by(|f| f.path.as_str().cmp(path))
            .ok()
            .map(|i| FileId(i as u32))
    }

    pub fn deps(&self, file: FileId) -> FileDeps {
        let f = &self.graph.files[file.index()];
        let res = &self.graph.resolved[file.index()];
        let imports = f
            .imports
            .iter()
            .zip(&res.imports)
            .map(|(i, t)| ImportInfo {
                path: i.path.clone(),
                name: i.name.clone(),
                line: i.line,
                files: t
                    .files
                    .iter()
                    .map(|x| self.graph.files[x.index()].path.to_string())
                    .collect(),
                external: t.external,
            })
            .collect();
        let mut by: BTreeMap<String, Vec<u32>> = BTreeMap::new();
        for (from, _, e) in self.sg.edges(self.sg.file_node(file), Direction::Incoming) {
            if e.kind != EdgeKind::Imports {
                continue;
            }
            if let Some(Node::File(ff)) = self.sg.node(from) {
                let src = &self.graph.files[ff.index()];
                let line = src.imports.get(e.index as usize).map_or(0, |i| i.line);
                by.entry(src.path.to_string()).or_default().push(line);
            }
        }
        FileDeps {
            path: f.path.to_string(),
            module: f.module.to_string(),
            imports,
            imported_by: by.into_iter().collect(),
        }
    }

    pub fn stats(&self) -> GraphStats {
        let mut s = GraphStats {
            files: self.graph.files.len() as u64,
            symbols: self.graph.symbol_count() as u64,
            edges: self.sg.graph.edge_count() as u64,
            ..GraphStats::default()
        };
        for e in self.sg.graph.edge_weights() {
            *s.edges_by_kind.entry(e.kind.as_str().to_string()).or_default() += 1;
            if let Some(p) = e.provenance {
                *s.edges_by_provenance.entry(p.as_str().to_string()).or_default() += 1;
            }
        }
        for (f, r) in self.graph.files.iter().zip(&self.graph.resolved) {
            let l = s
                .references_by_language
                .entry(f.language.to_string())
                .or_default();
            for res in &r.refs {
                l.references += 1;
                match res.provenance {
                    Some(p) if p.is_resolved() => l.resolved += 1,
                    Some(_) => l.name_matched += 1,
                    None if res.external => l.external += 1,
                    None => l.unresolved += 1,
                }
            }
            for i in &r.imports {
                s.imports += 1;
                match (i.external, i.files.is_empty()) {
                    (true, _) => s.imports_external += 1,
                    (false, false) => s.imports_resolved += 1,
                    _ => {}
                }
            }
        }
        s
    }
}

fn best(sites: &[Site]) -> f32 {
    sites.iter().map(|s| s.confidence).fold(0.0, f32::max)
}
