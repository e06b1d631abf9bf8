//! `BlastRadius`: what depends on a change. Walks backwards from the changed definitions
//! along calls, references, inheritance and imports, decayed by edge confidence and depth,
//! and reads off what the walk reached: definitions and files with the path that reaches
//! each, the public API among them, and the entry points in reached files.

use std::collections::{BinaryHeap, HashMap, HashSet};

use serde::Serialize;

use super::changed_symbol::{ChangedSymbol, is_public};
use super::test_files::TestFiles;
use crate::graph::{CodeGraph, EdgeKind, Node, SymbolGraph, SymbolId, is_type_like};
use crate::lang::{PathKind, invoked_implicitly, is_property_decorator};
use crate::symbols::{FileSymbols, SymbolKind};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Step {
    pub from: String,
    pub to: String,
    pub edge: EdgeKind,
    pub provenance: Option<String>,
    pub confidence: f32,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Affected {
    pub qualified_name: String,
    pub kind: Option<SymbolKind>,
    pub path: String,
    pub line: u32,
    pub score: f32,
    pub depth: usize,
    pub direct: bool,
    /// From the changed definition to this one.
    pub via: Vec<Step>,
    pub is_test: bool,
    #[serde(skip)]
    pub(crate) symbol: Option<SymbolId>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AffectedFile {
    pub path: String,
    pub score: f32,
    pub symbols: usize,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EntryPointHit {
    pub kind: &'static str,
    pub name: String,
    pub path: String,
    pub line: u32,
}

/// Deep and faint paths are still paths: a test they reach must run (the mutation benchmark
/// missed failing tests at depth 9 and at scores under 0.01), and the node bound keeps the
/// walk in milliseconds.
const MAX_DEPTH: usize = 14;
const MAX_NODES: usize = 5000;
const MIN_SCORE: f32 = 0.0005;
const DECAY: f32 = 0.8;
/// Importing a changed file's module counts for less than referencing a changed definition.
const IMPORT_CONFIDENCE: f32 = 0.5;
/// Reaching a type for a method called through it (a constructor, a protocol method).
const IMPLICIT_CONFIDENCE: f32 = 0.9;
/// Affected definitions kept in an answer (and read for the public API).
pub(super) const MAX_AFFECTED: usize = 200;

/// The walk over a code graph and its symbol graph.
pub(super) struct BlastRadius<'a> {
    graph: &'a CodeGraph,
    sg: &'a SymbolGraph,
    by_path: &'a HashMap<&'a str, usize>,
    test_files: &'a TestFiles,
}

type NodeIndex = petgraph::graph::NodeIndex;
/// How a node was best reached: score, depth, and the step towards the change.
type Reach = (f32, usize, Option<(NodeIndex, petgraph::graph::EdgeIndex)>);

/// A frontier entry: best score first.
#[derive(PartialEq)]
struct Frontier {
    score: f32,
    node: petgraph::graph::NodeIndex,
    depth: usize,
}

impl Eq for Frontier {}

impl PartialOrd for Frontier {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Frontier {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.score
            .total_cmp(&other.score)
            .then(other.node.cmp(&self.node))
    }
}

/// Where a reached node is: path, line, kind, qualified name and symbol (none for a file).
type Place = (String, u32, Option<SymbolKind>, String, Option<SymbolId>);

impl<'a> BlastRadius<'a> {
    pub(super) fn new(
        graph: &'a CodeGraph,
        sg: &'a SymbolGraph,
        by_path: &'a HashMap<&'a str, usize>,
        test_files: &'a TestFiles,
    ) -> BlastRadius<'a> {
        BlastRadius {
            graph,
            sg,
            by_path,
            test_files,
        }
    }

    /// The reached definitions and files (not the changed ones), best first, each with the
    /// path that reaches it; whether a bound cut the walk.
    pub(super) fn reach(&self, changed: &[ChangedSymbol]) -> (Vec<Affected>, bool) {
        let (best, bounded) = self.walk(changed);
        (self.affected(changed, &best), bounded)
    }

    /// Where the walk starts: the changed definitions (and, for less, their files).
    fn seeds(&self, changed: &[ChangedSymbol]) -> (HashMap<NodeIndex, Reach>, BinaryHeap<Frontier>) {
        let mut best: HashMap<NodeIndex, Reach> = HashMap::new();
        let mut heap = BinaryHeap::new();
        for c in changed {
            let Some(id) = c.id else { continue };
            let w = c.change.weight();
            // Its file too: modules importing it are reached, for less (a private definition
            // reaches them only through its module's own definitions: for less still). This
            // catches dependents whose references the graph could not resolve.
            let file_w = w * IMPORT_CONFIDENCE * if c.public { 1.0 } else { 0.5 };
            for (node, w) in [(self.sg.symbol_node(id), w), (self.sg.file_node(id.file), file_w)] {
                if w > 0.0 && best.get(&node).is_none_or(|b| b.0 < w) {
                    best.insert(node, (w, 0, None));
                    heap.push(Frontier {
                        score: w,
                        node,
                        depth: 0,
                    });
                }
            }
        }
        (best, heap)
    }

    /// Best paths first from the changed definitions (and, for less, their files), along
    /// incoming edges, bounded in depth and nodes; whether a bound cut it.
    fn walk(&self, changed: &[ChangedSymbol]) -> (HashMap<NodeIndex, Reach>, bool) {
        let (mut best, mut heap) = self.seeds(changed);
        let mut bounded = false;
        let mut done: HashSet<petgraph::graph::NodeIndex> = HashSet::new();
        while let Some(Frontier { score, node, depth }) = heap.pop() {
            if !done.insert(node) {
                continue;
            }
            if done.len() > MAX_NODES {
                bounded = true;
                break;
            }
            if depth >= MAX_DEPTH {
                if self
                    .sg
                    .edges(node, petgraph::Direction::Incoming)
                    .next()
                    .is_some()
                {
                    bounded = true;
                }
                continue;
            }
            for (other, eid, e) in self.sg.edges(node, petgraph::Direction::Incoming) {
                let conf = match e.kind {
                    EdgeKind::Calls | EdgeKind::References | EdgeKind::Inherits | EdgeKind::Implements => {
                        e.confidence
                    }
                    EdgeKind::Imports => IMPORT_CONFIDENCE,
                    EdgeKind::Contains => continue,
                };
                let s = score * conf * DECAY;
                if s < MIN_SCORE {
                    continue;
                }
                if best.get(&other).is_none_or(|b| b.0 < s) {
                    best.insert(other, (s, depth + 1, Some((node, eid))));
                    heap.push(Frontier {
                        score: s,
                        node: other,
                        depth: depth + 1,
                    });
                }
            }
            // A method called without being named (a constructor, a protocol method, a
            // property) is reached through its type: the type's users follow.
            if let Some(owner) = self.implicit_owner(node) {
                let s = score * IMPLICIT_CONFIDENCE * DECAY;
                if s >= MIN_SCORE && best.get(&owner).is_none_or(|b| b.0 < s) {
                    best.insert(
                        owner,
                        (s, depth + 1, Some((node, self.contains_edge(owner, node)))),
                    );
                    heap.push(Frontier {
                        score: s,
                        node: owner,
                        depth: depth + 1,
                    });
                }
            }
        }
        (best, bounded)
    }

    /// The type a method belongs to, when the language calls the method without naming it
    /// (see [`invoked_implicitly`]): its parent definition, or for a Go method (declared
    /// outside its type) the type of that name in the same file.
    fn implicit_owner(&self, node: NodeIndex) -> Option<NodeIndex> {
        let Some(Node::Symbol(s)) = self.sg.node(node) else {
            return None;
        };
        let f = self.graph.files.get(s.file.index())?;
        let d = f.defs.get(s.def as usize)?;
        if !matches!(d.kind, SymbolKind::Method | SymbolKind::Function) {
            return None;
        }
        let owner = match d.parent {
            Some(p) => p,
            None => {
                let type_name = d.container.last()?;
                f.defs
                    .iter()
                    .position(|t| is_type_like(t.kind) && t.name == *type_name)? as u32
            }
        };
        let o = f.defs.get(owner as usize)?;
        if !is_type_like(o.kind) {
            return None;
        }
        // A Rust `impl` block: the type it is for, where the file defines it.
        let owner = match o.kind {
            SymbolKind::Impl => f
                .defs
                .iter()
                .position(|t| t.kind != SymbolKind::Impl && is_type_like(t.kind) && t.name == o.name)
                .map_or(owner, |i| i as u32),
            _ => owner,
        };
        let implicit = invoked_implicitly(&f.language, &d.name, &o.name)
            || (f.language == "python"
                && f.refs
                    .iter()
                    .any(|r| r.line < d.line && r.line + 3 >= d.line && is_property_decorator(&r.name)));
        implicit.then(|| self.sg.symbol_node(SymbolId::new(s.file.0, owner)))
    }

    /// The edge from a type to its method (`Contains`); none when the method is declared
    /// outside the type (Go, a Rust `impl`): the answer's path then skips the step.
    fn contains_edge(&self, owner: NodeIndex, method: NodeIndex) -> petgraph::graph::EdgeIndex {
        self.sg
            .graph
            .find_edge(owner, method)
            .unwrap_or_else(petgraph::graph::EdgeIndex::end)
    }

    /// The reached definitions and files (not the changed ones), best first, each with the
    /// path that reaches it.
    fn affected(&self, changed: &[ChangedSymbol], best: &HashMap<NodeIndex, Reach>) -> Vec<Affected> {
        let changed_nodes: HashSet<petgraph::graph::NodeIndex> = changed
            .iter()
            .filter_map(|c| c.id)
            .map(|id| self.sg.symbol_node(id))
            .collect();
        let mut affected: Vec<Affected> = Vec::new();
        for (&n, &(score, depth, _)) in best {
            if changed_nodes.contains(&n) || depth == 0 {
                continue;
            }
            let Some((path, line, kind, name, symbol)) = self.place(n) else {
                continue;
            };
            let via = self.via(best, n);
            // Code in a runnable test file, or a Rust unit test (inside a `tests` module).
            let is_test = self.test_files.runnable(&path) || name.split("::").any(|p| p == "tests");
            affected.push(Affected {
                qualified_name: name,
                kind,
                path,
                line,
                score,
                depth,
                direct: depth == 1,
                via,
                is_test,
                symbol,
            });
        }
        affected.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.path.cmp(&b.path))
                .then(a.line.cmp(&b.line))
        });
        affected
    }

    /// Where a reached node is (`None`: not in the graph's files).
    fn place(&self, n: NodeIndex) -> Option<Place> {
        Some(match self.sg.node(n)? {
            Node::File(f) => {
                let x = self.graph.files.get(f.index())?;
                (x.path.to_string(), 1, None, x.path.to_string(), None)
            }
            Node::Symbol(s) => {
                let x = self.graph.files.get(s.file.index())?;
                let d = x.defs.get(s.def as usize)?;
                (
                    x.path.to_string(),
                    d.line,
                    Some(d.kind),
                    self.qualified(s).unwrap_or_default(),
                    Some(s),
                )
            }
        })
    }

    /// The steps from the change to `n`, as the walk best reached it.
    fn via(&self, best: &HashMap<NodeIndex, Reach>, n: NodeIndex) -> Vec<Step> {
        let mut via = Vec::new();
        let mut cur = n;
        while let Some(&(_, _, Some((next, eid)))) = best.get(&cur) {
            if let Some(e) = self.sg.graph.edge_weight(eid) {
                via.push(Step {
                    from: self.sg.node(cur).map(|x| self.name_of(x)).unwrap_or_default(),
                    to: self.sg.node(next).map(|x| self.name_of(x)).unwrap_or_default(),
                    edge: e.kind,
                    provenance: e.provenance.map(|p| p.as_str().to_string()),
                    confidence: e.confidence,
                });
            }
            cur = next;
            if via.len() > MAX_DEPTH {
                break;
            }
        }
        via.reverse();
        via
    }

    fn name_of(&self, node: Node) -> String {
        match node {
            Node::File(f) => self
                .graph
                .files
                .get(f.index())
                .map_or_else(String::new, |x| x.path.to_string()),
            Node::Symbol(s) => self.qualified(s).unwrap_or_default(),
        }
    }

    fn qualified(&self, s: SymbolId) -> Option<String> {
        let f = self.graph.files.get(s.file.index())?;
        f.defs.get(s.def as usize)?;
        Some(f.qualified(s.def))
    }

    /// Public definitions (outside tests) among the changed and the affected.
    pub(super) fn public_api(
        &self,
        changed: &[ChangedSymbol],
        affected: &[Affected],
        records: &dyn Fn(&str) -> Option<FileSymbols>,
    ) -> Vec<String> {
        let mut public_api = Vec::new();
        let mut cache: HashMap<String, Option<FileSymbols>> = HashMap::new();
        for c in changed
            .iter()
            .filter(|c| c.public && !PathKind::of(&c.path).is_test())
        {
            public_api.push(c.qualified_name.clone());
        }
        for a in affected
            .iter()
            .filter(|a| !a.is_test && a.kind.is_some())
            .take(MAX_AFFECTED)
        {
            let rec = cache.entry(a.path.clone()).or_insert_with(|| records(&a.path));
            let lang = self
                .by_path
                .get(a.path.as_str())
                .and_then(|&i| self.graph.files.get(i))
                .map(|f| f.language.clone())
                .unwrap_or_default();
            let public = rec
                .as_ref()
                .and_then(|r| r.definitions.iter().find(|d| d.span.start_line == a.line))
                .is_some_and(|d| is_public(&lang, d));
            if public && !public_api.contains(&a.qualified_name) {
                public_api.push(a.qualified_name.clone());
            }
        }
        public_api
    }

    /// Entry points in a reached file: mains and binaries, and those at or after a reached
    /// line.
    pub(super) fn entry_points_reached(
        &self,
        changed: &[ChangedSymbol],
        affected: &[Affected],
    ) -> Vec<EntryPointHit> {
        let reached: HashSet<&str> = affected
            .iter()
            .map(|a| a.path.as_str())
            .chain(changed.iter().map(|c| c.path.as_str()))
            .collect();
        crate::context::entry_points(self.graph)
            .into_iter()
            .filter(|e| reached.contains(e.path.as_str()))
            .filter(|e| {
                let spans = affected
                    .iter()
                    .filter(|a| a.path == e.path)
                    .map(|a| (a.line, a.line))
                    .chain(
                        changed
                            .iter()
                            .filter(|c| c.path == e.path)
                            .map(|c| (c.start_line, c.end_line)),
                    );
                matches!(e.kind, "package-main" | "binary")
                    || spans.into_iter().any(|(s, _)| s <= e.line)
                    || e.kind == "main"
            })
            .map(|e| EntryPointHit {
                kind: e.kind,
                name: e.name,
                path: e.path,
                line: e.line,
            })
            .collect()
    }
}

/// Affected files by their best definition's score, with how many were reached in each.
pub(super) fn affected_files(affected: &[Affected]) -> Vec<AffectedFile> {
    let mut files: HashMap<String, (f32, usize)> = HashMap::new();
    for a in affected {
        let e = files.entry(a.path.clone()).or_default();
        e.0 = e.0.max(a.score);
        e.1 += 1;
    }
    let mut affected_files: Vec<AffectedFile> = files
        .into_iter()
        .map(|(path, (score, symbols))| AffectedFile { path, score, symbols })
        .collect();
    affected_files.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.path.cmp(&b.path)));
    affected_files
}
