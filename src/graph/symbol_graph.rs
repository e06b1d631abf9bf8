//! `SymbolGraph`: the code graph as a petgraph `DiGraph` of files and symbols, for bounded
//! traversals (callers, callees, dependencies) and (personalized) PageRank.
//!
//! Nodes: one per file, then one per definition. Edges: `contains` (file -> top-level
//! definition, definition -> nested definition), `imports` (file -> file), and one edge per
//! resolved reference from the innermost enclosing definition (or the file, for module-level
//! code) to each target: `calls`, `references`, `inherits`, `implements`.

use petgraph::Direction;
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::Serialize;

use super::graph_layout::Flows;
use super::{CodeGraph, FileResolution, FileSkeleton, Provenance, RefNode, Resolver, SymbolId};
use crate::symbols::{FileId, ReferenceKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EdgeKind {
    Contains,
    Imports,
    Calls,
    References,
    Inherits,
    Implements,
}

impl EdgeKind {
    pub const ALL: [EdgeKind; 6] = [
        EdgeKind::Contains,
        EdgeKind::Imports,
        EdgeKind::Calls,
        EdgeKind::References,
        EdgeKind::Inherits,
        EdgeKind::Implements,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Contains => "contains",
            EdgeKind::Imports => "imports",
            EdgeKind::Calls => "calls",
            EdgeKind::References => "references",
            EdgeKind::Inherits => "inherits",
            EdgeKind::Implements => "implements",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    File(FileId),
    Symbol(SymbolId),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Edge {
    pub kind: EdgeKind,
    /// `None` for structural edges (contains, imports).
    pub provenance: Option<Provenance>,
    pub confidence: f32,
    /// Where the reference is: its file and index in the skeleton's refs (or the import's).
    pub file: FileId,
    pub index: u32,
}

#[derive(Clone)]
pub struct SymbolGraph {
    pub graph: DiGraph<Node, Edge>,
    /// First symbol node of each file; file `i`'s node is `i`.
    offsets: Vec<u32>,
}

const DAMPING: f32 = 0.85;
const ITERATIONS: usize = 30;

impl SymbolGraph {
    pub fn new(cg: &CodeGraph) -> SymbolGraph {
        let (offsets, n) = node_offsets(&cg.files);
        let mut graph = DiGraph::with_capacity(n, cg.symbol_count() * 4);
        for i in 0..cg.files.len() {
            graph.add_node(Node::File(FileId(i as u32)));
        }
        for (fi, f) in cg.files.iter().enumerate() {
            for di in 0..f.defs.len() {
                graph.add_node(Node::Symbol(SymbolId::new(fi as u32, di as u32)));
            }
        }
        each_edge(cg, &offsets, n, |from, to, e| {
            graph.add_edge(NodeIndex::new(from as usize), NodeIndex::new(to as usize), e);
        });
        SymbolGraph { graph, offsets }
    }

    /// [`SymbolGraph::global_rank`] of the graph `cg` makes, the same to the bit, from a flat
    /// list of its flows (12 bytes an edge) without making it: the graph of a 3M-line tree
    /// is about 100 MB, and the build's rank set the peak of a capped build.
    pub fn global_rank_of(cg: &CodeGraph) -> Vec<Vec<f32>> {
        RankFlows::of_graph(cg).finish()
    }

    pub fn symbol_node(&self, s: SymbolId) -> NodeIndex {
        let base = self.offsets.get(s.file.index()).copied().unwrap_or(u32::MAX / 2);
        NodeIndex::new((base + s.def) as usize)
    }

    pub fn file_node(&self, f: FileId) -> NodeIndex {
        NodeIndex::new(f.index())
    }

    pub fn node(&self, n: NodeIndex) -> Option<Node> {
        self.graph.node_weight(n).copied()
    }

    /// Edges into (`Incoming`) or out of (`Outgoing`) a node.
    pub fn edges(&self, n: NodeIndex, dir: Direction) -> impl Iterator<Item = (NodeIndex, EdgeIndex, &Edge)> {
        self.graph.edges_directed(n, dir).map(move |e| {
            let other = match dir {
                Direction::Incoming => e.source(),
                Direction::Outgoing => e.target(),
            };
            (other, e.id(), e.weight())
        })
    }

    /// PageRank of every definition, per file: centrality. Edges matched by name alone
    /// (`name-unique`, `name-ambiguous`) carry no rank here: one common method name called on
    /// values of unknown type would otherwise make its one repository definition central.
    pub fn global_rank(&self) -> Vec<Vec<f32>> {
        let r = self.page_rank_with(None, false);
        self.per_symbol(&r)
    }

    /// PageRank restarted at `seeds` (nodes with weights): what matters around them.
    pub fn personalized_rank(&self, seeds: &[(Node, f32)]) -> Vec<f32> {
        let n = self.graph.node_count();
        let mut p = vec![0f32; n];
        for (node, w) in seeds {
            let idx = match node {
                Node::File(f) => self.file_node(*f),
                Node::Symbol(s) => self.symbol_node(*s),
            };
            if let Some(x) = p.get_mut(idx.index()) {
                *x += w.max(0.0);
            }
        }
        let total: f32 = p.iter().sum();
        if total <= 0.0 {
            return self.page_rank(None);
        }
        p.iter_mut().for_each(|x| *x /= total);
        self.page_rank(Some(&p))
    }

    /// Weighted power iteration. Rank flows along reference edges to what is referenced,
    /// from a member to its container (a type matters when its methods are used), and along
    /// imports; dangling rank restarts at the personalization (or uniformly).
    fn page_rank(&self, personalization: Option<&[f32]>) -> Vec<f32> {
        self.page_rank_with(personalization, true)
    }

    /// `name_matched`: whether edges resolved by name alone carry rank.
    fn page_rank_with(&self, personalization: Option<&[f32]>, name_matched: bool) -> Vec<f32> {
        let flows: Vec<(u32, u32, f32)> = self
            .graph
            .edge_references()
            .filter_map(|e| {
                flow(
                    e.source().index() as u32,
                    e.target().index() as u32,
                    e.weight(),
                    name_matched,
                )
            })
            .collect();
        page_rank_flows(self.graph.node_count(), &flows, personalization)
    }

    fn per_symbol(&self, r: &[f32]) -> Vec<Vec<f32>> {
        per_symbol(&self.offsets, r)
    }
}

/// The first node of each file's definitions (file `i`'s own node is `i`), and the number
/// of nodes.
fn node_offsets(files: &[FileSkeleton]) -> (Vec<u32>, usize) {
    let mut offsets = Vec::with_capacity(files.len());
    let mut next = files.len() as u32;
    for f in files {
        offsets.push(next);
        next += f.defs.len() as u32;
    }
    (offsets, next as usize)
}

fn node_of(offsets: &[u32], s: SymbolId) -> u32 {
    offsets.get(s.file.index()).copied().unwrap_or(u32::MAX / 2) + s.def
}

/// Every edge of the graph of `cg`, in the order the graph holds them: file by file, its
/// containment edges, its imports, then its references to each target.
fn each_edge(cg: &CodeGraph, offsets: &[u32], n: usize, mut add: impl FnMut(u32, u32, Edge)) {
    for (fi, f) in cg.files.iter().enumerate() {
        file_edges(fi, f, &f.refs, cg.resolved.get(fi), offsets, n, &mut add);
    }
}

/// File `fi`'s edges (`refs`: its skeleton's, which may be held apart from it). Edges to a
/// node that is not there (a stale target) are left out.
fn file_edges(
    fi: usize,
    f: &FileSkeleton,
    refs: &[RefNode],
    res: Option<&FileResolution>,
    offsets: &[u32],
    n: usize,
    add: &mut impl FnMut(u32, u32, Edge),
) {
    let mut edge = |from: u32, to: u32, e: Edge| {
        if (from as usize) < n && (to as usize) < n {
            add(from, to, e);
        }
    };
    let file = FileId(fi as u32);
    let structural = |kind, index| Edge {
        kind,
        provenance: None,
        confidence: 1.0,
        file,
        index,
    };
    for (di, d) in f.defs.iter().enumerate() {
        let from = match d.parent {
            Some(p) => node_of(offsets, SymbolId::new(fi as u32, p)),
            None => fi as u32,
        };
        let to = node_of(offsets, SymbolId::new(fi as u32, di as u32));
        edge(from, to, structural(EdgeKind::Contains, di as u32));
    }
    let Some(res) = res else { return };
    for (ii, it) in res.imports.iter().enumerate() {
        for t in &it.files {
            edge(
                fi as u32,
                t.index() as u32,
                structural(EdgeKind::Imports, ii as u32),
            );
        }
    }
    for (ri, (r, rr)) in refs.iter().zip(&res.refs).enumerate() {
        let Some(p) = rr.provenance else { continue };
        let kind = match r.kind {
            ReferenceKind::Call => EdgeKind::Calls,
            ReferenceKind::Implementation => EdgeKind::Implements,
            ReferenceKind::Class if Resolver::is_base_ref(f, r) => EdgeKind::Inherits,
            ReferenceKind::Class => EdgeKind::Calls,
            ReferenceKind::Type => EdgeKind::References,
        };
        let from = match r.enclosing {
            Some(e) => node_of(offsets, SymbolId::new(fi as u32, e)),
            None => fi as u32,
        };
        let confidence = p.confidence(rr.candidates);
        for t in &rr.targets {
            let e = Edge {
                kind,
                provenance: Some(p),
                confidence,
                file,
                index: ri as u32,
            };
            edge(from, node_of(offsets, *t), e);
        }
    }
}

/// The global PageRank of a graph given a file at a time, in file order (a build that
/// resolves and writes a batch of files at a time holds their flows, 12 bytes an edge, not
/// their references): equal to the bit to [`SymbolGraph::global_rank`].
pub struct RankFlows {
    offsets: Vec<u32>,
    n: usize,
    flows: Vec<(u32, u32, f32)>,
    /// Where each file added so far starts in `flows`, counting the spilled ones.
    starts: Vec<u32>,
    /// Flows written out by [`RankFlows::spill`] and not read back yet: they come first.
    spilled: u32,
}

/// Bytes of a spilled flow: source, target, weight, little-endian.
const FLOW_BYTES: usize = 12;

impl RankFlows {
    /// Nodes for `files`' definitions (their heads are enough).
    pub fn new(files: &[FileSkeleton]) -> RankFlows {
        let (offsets, n) = node_offsets(files);
        RankFlows {
            offsets,
            n,
            flows: Vec::new(),
            starts: Vec::with_capacity(files.len() + 1),
            spilled: 0,
        }
    }

    /// Writes the flows added since the last spill to `w` and lets them go: a build that
    /// resolves a batch of files at a time does not hold every edge of the tree (nor a
    /// growing vector's spare half) beside its symbol table.
    pub fn spill<W: std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(FLOW_BYTES * self.flows.len());
        for (s, t, weight) in &self.flows {
            bytes.extend_from_slice(&s.to_le_bytes());
            bytes.extend_from_slice(&t.to_le_bytes());
            bytes.extend_from_slice(&weight.to_bits().to_le_bytes());
        }
        w.write_all(&bytes)?;
        self.spilled += self.flows.len() as u32;
        self.flows.clear();
        Ok(())
    }

    /// [`RankFlows::finish_with_flows`] of flows spilled to `r` (positioned where the first
    /// was written), read back first in a vector of their exact length.
    pub fn finish_spilled<R: std::io::Read>(mut self, r: &mut R) -> std::io::Result<(Vec<Vec<f32>>, Flows)> {
        self.unspill(r)?;
        Ok(self.finish_with_flows())
    }

    fn unspill<R: std::io::Read>(&mut self, r: &mut R) -> std::io::Result<()> {
        let mut all = Vec::with_capacity(self.spilled as usize + self.flows.len());
        let mut buf = vec![0u8; FLOW_BYTES * 4096];
        let mut left = self.spilled as usize;
        while left > 0 {
            let k = left.min(4096);
            let chunk = &mut buf[..FLOW_BYTES * k];
            r.read_exact(chunk)?;
            for c in chunk.chunks_exact(FLOW_BYTES) {
                let word = |i: usize| u32::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
                all.push((word(0), word(4), f32::from_bits(word(8))));
            }
            left -= k;
        }
        all.append(&mut self.flows);
        self.flows = all;
        self.spilled = 0;
        Ok(())
    }

    /// File `fi`'s edges; every file comes, in order.
    pub fn add_file(&mut self, fi: usize, f: &FileSkeleton, refs: &[RefNode], res: &FileResolution) {
        let RankFlows {
            offsets,
            n,
            flows,
            starts,
            spilled,
        } = self;
        starts.push(*spilled + flows.len() as u32);
        file_edges(fi, f, refs, Some(res), offsets, *n, &mut |s, t, e| {
            flows.extend(flow(s, t, &e, false))
        });
    }

    /// The next file's edges as they were stored (`Flows::of`), for a file whose edges did
    /// not change; every file comes, in order.
    pub fn add_stored(&mut self, flows: &[(u32, u32, f32)]) {
        self.starts.push(self.spilled + self.flows.len() as u32);
        self.flows.extend_from_slice(flows);
    }

    /// Every file of a whole graph added.
    pub fn of_graph(cg: &CodeGraph) -> RankFlows {
        let mut r = RankFlows::new(&cg.files);
        for (fi, f) in cg.files.iter().enumerate() {
            let res = cg.resolved.get(fi).unwrap_or(&super::code_graph::NO_RESOLUTION);
            r.add_file(fi, f, &f.refs, res);
        }
        r
    }

    pub fn finish(self) -> Vec<Vec<f32>> {
        self.finish_with_flows().0
    }

    /// The ranks, and the flows they were ranked from, file by file (the graph part's
    /// flows section), when none was spilled (else [`RankFlows::finish_spilled`]).
    pub fn finish_with_flows(self) -> (Vec<Vec<f32>>, Flows) {
        let rank = per_symbol(&self.offsets, &page_rank_flows(self.n, &self.flows, None));
        (rank, self.into_flows())
    }

    /// The flows added, file by file.
    pub fn into_flows(mut self) -> Flows {
        self.starts.push(self.flows.len() as u32);
        Flows {
            starts: self.starts,
            flows: self.flows,
        }
    }
}

/// The rank an edge carries: to what is referenced, from a member to its container, along
/// imports; `None` for a name-matched edge when those carry none.
fn flow(s: u32, t: u32, e: &Edge, name_matched: bool) -> Option<(u32, u32, f32)> {
    if !name_matched && e.provenance.is_some_and(|p| !p.is_resolved()) {
        return None;
    }
    Some(match e.kind {
        EdgeKind::Contains => (t, s, 0.3),
        EdgeKind::Imports => (s, t, 0.5),
        _ => (s, t, e.confidence),
    })
}

/// Weighted power iteration over `flows` (source, target, weight) on `n` nodes; dangling
/// rank restarts at the personalization (or uniformly).
fn page_rank_flows(n: usize, flows: &[(u32, u32, f32)], personalization: Option<&[f32]>) -> Vec<f32> {
    if n == 0 {
        return Vec::new();
    }
    let uniform = 1.0 / n as f32;
    let restart = |i: usize| personalization.map_or(uniform, |p| p.get(i).copied().unwrap_or(0.0));
    let mut sums = vec![0f32; n];
    for &(s, _, w) in flows {
        sums[s as usize] += w;
    }
    let mut rank: Vec<f32> = (0..n).map(restart).collect();
    let mut next = vec![0f32; n];
    for _ in 0..ITERATIONS {
        next.iter_mut().for_each(|x| *x = 0.0);
        let dangling: f32 = (0..n).filter(|&i| sums[i] <= 0.0).map(|i| rank[i]).sum();
        for &(s, t, w) in flows {
            let s = s as usize;
            next[t as usize] += DAMPING * rank[s] * w / sums[s];
        }
        let base = 1.0 - DAMPING + DAMPING * dangling;
        for (i, x) in next.iter_mut().enumerate() {
            *x += base * restart(i);
        }
        std::mem::swap(&mut rank, &mut next);
    }
    rank
}

/// Node ranks as each file's definitions' ranks.
fn per_symbol(offsets: &[u32], r: &[f32]) -> Vec<Vec<f32>> {
    let mut out = Vec::with_capacity(offsets.len());
    for (i, &start) in offsets.iter().enumerate() {
        let end = offsets.get(i + 1).copied().unwrap_or(r.len() as u32);
        out.push(
            r.get(start as usize..end as usize)
                .map(<[f32]>::to_vec)
                .unwrap_or_default(),
        );
    }
    out
}
