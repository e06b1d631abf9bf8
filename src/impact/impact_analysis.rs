//! `ImpactAnalysis`: the impact of a change, composed of its parts — the definitions a diff
//! touches (`ChangedSymbol`), what depends on them (`BlastRadius`), the public entry points
//! and tests that reach them (`TestSelection`), and a risk level with its reasons (`Risk`).
//!
//! Pure over the code graph and the file records: the caller supplies each changed file's
//! definitions before and after (re-parsed on the fly, so a dirty tree needs no rebuild).

use std::collections::HashMap;

use serde::Serialize;

use super::blast_radius::{Affected, AffectedFile, BlastRadius, EntryPointHit, MAX_AFFECTED, affected_files};
use super::changed_symbol::ChangedSymbol;
use super::risk::Risk;
use super::test_files::TestFiles;
use super::test_selection::{TestSelection, TestToRun};
use crate::graph::{CodeGraph, SymbolGraph, SymbolId};
use crate::index::HistoryPart;
use crate::symbols::{Definition, FileSymbols};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Impact {
    pub changed_files: Vec<String>,
    pub changed: Vec<ChangedSymbol>,
    pub affected: Vec<Affected>,
    pub affected_files: Vec<AffectedFile>,
    /// Public definitions (outside tests) among the affected and changed.
    pub public_api: Vec<String>,
    pub entry_points: Vec<EntryPointHit>,
    pub tests: Vec<TestToRun>,
    /// Ready-to-run commands, one per framework.
    pub test_commands: Vec<String>,
    /// The commands for the tests that must run only (`ken impact --run` runs these).
    pub must_run_commands: Vec<String>,
    /// Changed definitions from which no test is reached through the graph: the tests of
    /// their packages must run instead.
    pub unreached: Vec<String>,
    pub risk: Risk,
    /// The walk stopped at its bound before running out of dependents.
    pub bounded: bool,
    pub direct_dependents: usize,
    pub transitive_dependents: usize,
}

/// A change's impact over one code graph (and, when given, the history and the working tree).
pub struct ImpactAnalysis<'g> {
    graph: &'g CodeGraph,
    sg: std::borrow::Cow<'g, SymbolGraph>,
    by_path: HashMap<&'g str, usize>,
    root: Option<std::path::PathBuf>,
    history: Option<&'g HistoryPart>,
    test_files: TestFiles,
}

impl<'g> ImpactAnalysis<'g> {
    pub fn new(graph: &'g CodeGraph) -> ImpactAnalysis<'g> {
        Self::with_symbol_graph(graph, std::borrow::Cow::Owned(SymbolGraph::new(graph)))
    }

    /// Over a symbol graph already built from `graph` (a resident server keeps one).
    pub fn with_symbol_graph(
        graph: &'g CodeGraph,
        sg: std::borrow::Cow<'g, SymbolGraph>,
    ) -> ImpactAnalysis<'g> {
        let by_path = graph
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.path.as_str(), i))
            .collect();
        ImpactAnalysis {
            graph,
            sg,
            by_path,
            root: None,
            history: None,
            test_files: TestFiles::default(),
        }
    }

    /// Reads the repository's history too: the tests that changed together with a changed
    /// file in the past rank first.
    pub fn with_history(mut self, history: Option<&'g HistoryPart>) -> Self {
        self.history = history;
        self
    }

    /// Reads the working tree at `root` for what the graph does not keep: test attributes
    /// and the manifests that say how a test is run.
    pub fn with_root(mut self, root: &std::path::Path) -> Self {
        self.root = Some(root.to_path_buf());
        self.test_files = TestFiles::read(Some(root));
        self
    }

    /// The walk backwards from a change over this graph.
    fn blast_radius(&self) -> BlastRadius<'_> {
        BlastRadius::new(self.graph, &self.sg, &self.by_path, &self.test_files)
    }

    /// Where this analysis looks for tests: the graph, the history, the working tree.
    fn test_selection(&self) -> TestSelection<'_> {
        TestSelection::new(
            self.graph,
            &self.by_path,
            self.root.as_deref(),
            self.history,
            &self.test_files,
        )
    }

    /// The graph's definition matching `d` in `path` (same containers, name and kind; the
    /// nearest by line when several).
    pub fn find(&self, path: &str, d: &Definition) -> Option<SymbolId> {
        let &fi = self.by_path.get(path)?;
        let f = self.graph.files.get(fi)?;
        f.defs
            .iter()
            .enumerate()
            .filter(|(_, g)| g.name == d.name && g.kind == d.kind && g.container[..] == d.container[..])
            .min_by_key(|(_, g)| g.line.abs_diff(d.span.start_line))
            .map(|(i, _)| SymbolId::new(fi as u32, i as u32))
    }

    /// Walks dependents backwards from the changed definitions, then reads off what the
    /// walk reached: definitions, files, tests, public API, entry points, and the risk.
    pub fn analyse(
        &self,
        changed_files: Vec<String>,
        changed: Vec<ChangedSymbol>,
        records: &dyn Fn(&str) -> Option<FileSymbols>,
    ) -> Impact {
        let radius = self.blast_radius();
        let (mut affected, bounded) = radius.reach(&changed);
        let direct_dependents = affected.iter().filter(|a| a.direct).count();
        let transitive_dependents = affected.len() - direct_dependents;
        let affected_files = affected_files(&affected);
        let super::test_selection::Selection {
            tests,
            test_commands,
            must_run_commands,
            unreached,
        } = self
            .test_selection()
            .tests_to_run(&changed, &affected, &changed_files);
        let public_api = radius.public_api(&changed, &affected, records);
        let entry_points = radius.entry_points_reached(&changed, &affected);
        let risk = Risk::assess(&changed, &affected, &tests, &public_api, direct_dependents);
        affected.truncate(MAX_AFFECTED);
        Impact {
            changed_files,
            changed,
            affected,
            affected_files,
            public_api,
            entry_points,
            tests,
            test_commands,
            must_run_commands,
            unreached,
            risk,
            bounded,
            direct_dependents,
            transitive_dependents,
        }
    }
}
