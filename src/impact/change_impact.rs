//! `ChangeImpact`: the blast radius of a change — the definitions a diff touches, what
//! depends on them (backwards along calls, references, inheritance and imports, decayed by
//! edge confidence and depth), the public entry points and tests that reach them, and a risk
//! level with its reasons.
//!
//! Pure over the code graph and the file records: the caller supplies each changed file's
//! definitions before and after (re-parsed on the fly, so a dirty tree needs no rebuild).

use std::collections::{BTreeSet, BinaryHeap, HashMap, HashSet};

use serde::Serialize;

use super::FileDiff;
use super::data_cases::DataCases;
use super::test_commands::{TestCommands, stem};
use super::test_files::TestFiles;
use crate::context::area_of;
use crate::graph::{CodeGraph, EdgeKind, Family, Node, SymbolGraph, SymbolId};
use crate::index::HistoryPart;
use crate::lang::PathKind;
use crate::symbols::{Definition, FileSymbols, SymbolKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// The declaration changed (name line, parameters, return type): callers may break.
    Signature,
    Deleted,
    /// Only the body changed.
    Body,
    Added,
}

impl ChangeKind {
    /// How much of a change reaches dependents.
    fn weight(self) -> f32 {
        match self {
            ChangeKind::Signature | ChangeKind::Deleted => 1.0,
            ChangeKind::Body => 0.5,
            ChangeKind::Added => 0.0,
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ChangedSymbol {
    pub qualified_name: String,
    pub kind: SymbolKind,
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub change: ChangeKind,
    pub public: bool,
    /// Found in the index's graph (dependents known).
    pub in_graph: bool,
    #[serde(skip)]
    pub id: Option<SymbolId>,
}

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
pub struct TestToRun {
    pub path: String,
    /// The test function, when the graph reached one.
    pub name: Option<String>,
    /// `graph` (a test reaches the change), `history` (it changed together with a changed
    /// file in the past), `naming` (named after a changed file) or `suite` (a test suite of
    /// the package the change is in, largest first).
    pub found_by: &'static str,
    pub score: f32,
    pub command: Option<String>,
    /// For a test case that is a data file (`tests/functional/x/case.py`), the runnable test
    /// that runs it (`tests/test_functional.py`); `name` is then the case's id.
    pub driver: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EntryPointHit {
    pub kind: &'static str,
    pub name: String,
    pub path: String,
    pub line: u32,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Risk {
    /// `low`, `medium` or `high`.
    pub level: &'static str,
    pub reasons: Vec<String>,
}

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
    pub risk: Risk,
    /// The walk stopped at its bound before running out of dependents.
    pub bounded: bool,
    pub direct_dependents: usize,
    pub transitive_dependents: usize,
}

/// A changed file as the caller sees it.
pub struct ChangedFile<'a> {
    pub diff: &'a FileDiff,
    /// Definitions before the change (`None`: the file is new).
    pub old: Option<&'a FileSymbols>,
    /// Definitions after the change (`None`: deleted, or unknown for a bare patch).
    pub new: Option<&'a FileSymbols>,
    pub language: String,
}

/// What a test file's stem names: `test_x`, `x_test`, `x_tests`, `x.test`, `x.spec` -> `x`.
fn tested_name(stem: &str) -> &str {
    stem.trim_start_matches("test_")
        .trim_end_matches("_test")
        .trim_end_matches("_tests")
        .trim_end_matches(".test")
        .trim_end_matches(".spec")
}

/// Added to the score of a test that reaches a changed definition in one step (a call, a
/// type use, inheritance): above history's `1 + s`, so direct tests always come first.
const DIRECT_TEST: f32 = 3.0;

/// A definition inside a test that calls, uses or inherits a changed definition itself (an
/// import of the changed file is not a use of it).
fn reaches_directly(a: &Affected) -> bool {
    a.direct
        && a.symbol.is_some()
        && a.via.first().is_some_and(|s| {
            matches!(
                s.edge,
                EdgeKind::Calls | EdgeKind::References | EdgeKind::Inherits | EdgeKind::Implements
            ) && s.confidence >= 0.5
        })
}

const MAX_DEPTH: usize = 8;
const MAX_NODES: usize = 5000;
const MIN_SCORE: f32 = 0.01;
const DECAY: f32 = 0.8;
/// Importing a changed file's module counts for less than referencing a changed definition.
const IMPORT_CONFIDENCE: f32 = 0.5;
const MAX_AFFECTED: usize = 200;
const MAX_TESTS: usize = 50;
/// More named tests of one file than this and the file is run whole: a long list of one
/// suite's items would crowd every other test file out of the list.
const MAX_ITEMS_PER_FILE: usize = 5;

/// Is a definition part of the public API, from its signature and name?
pub fn is_public(language: &str, d: &Definition) -> bool {
    let sig = d.signature.trim_start();
    match Family::of(language) {
        // `pub(crate)` and narrower are not the crate's API.
        Family::Rust => {
            sig.starts_with("pub ") || sig.starts_with("pub async") || sig.starts_with("pub unsafe")
        }
        Family::Python => !d.name.starts_with('_') && d.container.iter().all(|c| !c.starts_with('_')),
        Family::Go => d.name.chars().next().is_some_and(char::is_uppercase),
        // Kotlin and Scala members are public unless they say otherwise.
        Family::Java if matches!(language, "kotlin" | "scala") => !["private ", "protected ", "internal "]
            .iter()
            .any(|m| sig.contains(m)),
        Family::Java => sig.contains("public "),
        Family::Js => sig.starts_with("export ") || sig.contains(" export "),
        Family::C | Family::Other => !sig.starts_with("static "),
    }
}

/// The definitions a file diff touches: the innermost definition around each changed line.
pub fn changed_definitions(file: &ChangedFile<'_>) -> Vec<(Definition, ChangeKind)> {
    let sep = Family::of(&file.language).separator();
    let mut out: Vec<(Definition, ChangeKind)> = Vec::new();
    let new_by_name: HashMap<(String, SymbolKind), &Definition> = file
        .new
        .map(|n| {
            n.definitions
                .iter()
                .map(|d| ((d.local_name(sep), d.kind), d))
                .collect()
        })
        .unwrap_or_default();
    if let Some(old) = file.old {
        let old_names: HashSet<(String, SymbolKind)> = old
            .definitions
            .iter()
            .map(|d| (d.local_name(sep), d.kind))
            .collect();
        let mut hit: BTreeSet<usize> = BTreeSet::new();
        let lines = file.diff.removed.iter().chain(&file.diff.inserted_after);
        for &l in lines {
            if let Some(i) = owner_of_line(&old.definitions, l) {
                hit.insert(i);
            }
        }
        // A deleted file: every definition.
        if file.diff.new_path.is_none() {
            hit = (0..old.definitions.len()).collect();
        }
        for i in hit {
            let Some(d) = old.definitions.get(i) else { continue };
            let key = (d.local_name(sep), d.kind);
            let kind = match (file.new, new_by_name.get(&key)) {
                (_, Some(n)) if n.signature != d.signature => ChangeKind::Signature,
                (_, Some(_)) => ChangeKind::Body,
                (Some(_), None) => ChangeKind::Deleted,
                // A bare patch: a change on the first line is a change of the declaration.
                (None, None) if file.diff.new_path.is_none() => ChangeKind::Deleted,
                (None, None) => {
                    let first = d.span.start_line..=d.name_span.start_line.max(d.span.start_line);
                    match file.diff.removed.iter().any(|l| first.contains(l)) {
                        true => ChangeKind::Signature,
                        false => ChangeKind::Body,
                    }
                }
            };
            out.push((d.clone(), kind));
        }
        if let Some(new) = file.new {
            for (i, d) in new.definitions.iter().enumerate() {
                let touched = file
                    .diff
                    .added
                    .iter()
                    .any(|l| owner_of_line(&new.definitions, *l) == Some(i));
                if touched && !old_names.contains(&(d.local_name(sep), d.kind)) {
                    out.push((d.clone(), ChangeKind::Added));
                }
            }
        }
    } else if let Some(new) = file.new {
        out.extend(new.definitions.iter().map(|d| (d.clone(), ChangeKind::Added)));
    }
    out
}

/// The definition a changed line belongs to: the innermost one around it, except that a
/// constant, variable or field declared inside a function is part of that function (a change
/// to it changes what the function does; nothing outside can name it).
fn owner_of_line(defs: &[Definition], line: u32) -> Option<usize> {
    let around = |d: &&Definition| d.span.start_line <= line && line <= d.span.end_line;
    let size = |d: &Definition| d.span.end_line - d.span.start_line;
    let (i, inner) = defs
        .iter()
        .enumerate()
        .filter(|(_, d)| around(d))
        .min_by_key(|(_, d)| size(d))?;
    if !matches!(
        inner.kind,
        SymbolKind::Constant | SymbolKind::Variable | SymbolKind::Field
    ) {
        return Some(i);
    }
    let function = defs
        .iter()
        .enumerate()
        .filter(|(_, d)| around(d) && matches!(d.kind, SymbolKind::Function | SymbolKind::Method))
        .min_by_key(|(_, d)| size(d))
        .map(|(j, _)| j);
    Some(function.unwrap_or(i))
}

pub struct ImpactAnalysis<'g> {
    graph: &'g CodeGraph,
    sg: std::borrow::Cow<'g, SymbolGraph>,
    by_path: HashMap<&'g str, usize>,
    root: Option<std::path::PathBuf>,
    history: Option<&'g HistoryPart>,
    test_files: TestFiles,
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

    /// The tests to run for a change, best first, with their commands: those the walk reached
    /// (as test items a runner can select), those named after a changed file, and the suites
    /// of the changed package.
    fn tests_to_run(
        &self,
        changed: &[ChangedSymbol],
        affected: &[Affected],
        changed_files: &[String],
    ) -> (Vec<TestToRun>, Vec<String>) {
        // Tests: reached through the graph, then named after a changed file.
        let runners = TestCommands::new(self.graph, &self.by_path, self.root.as_deref());
        let mut tests: Vec<TestToRun> = Vec::new();
        let mut seen: HashSet<(String, Option<String>)> = HashSet::new();
        for a in affected.iter().filter(|a| a.is_test) {
            // The test item a reached definition is in (a nested helper's test, a helper
            // method's test class); none for what a runner cannot select by name.
            // (`test_item` decides by each language's rules: a Rust test is any function with
            // a test attribute, whatever its name.)
            let name = a.symbol.and_then(|s| runners.test_item(s));
            // A test that calls or uses the changed code itself comes before every test that
            // only reaches it through other code or history: the one most likely to break.
            let score = match reaches_directly(a) {
                true => DIRECT_TEST + a.score,
                false => a.score,
            };
            // A file-level entry adds nothing next to a test of the same file.
            let named_already = name.is_none() && tests.iter().any(|t| t.path == a.path);
            if let Some(t) = tests.iter_mut().find(|t| t.path == a.path && t.name == name) {
                t.score = t.score.max(score);
            } else if !named_already && seen.insert((a.path.clone(), name.clone())) {
                tests.push(TestToRun {
                    command: None,
                    path: a.path.clone(),
                    name,
                    found_by: "graph",
                    score,
                    driver: None,
                });
            }
        }
        // A file's named tests are what reaches the change in it; a file-level entry there
        // came from a helper no test item holds, and would run the whole file.
        let named: HashSet<String> = tests
            .iter()
            .filter(|t| t.name.is_some())
            .map(|t| t.path.clone())
            .collect();
        tests.retain(|t| t.name.is_some() || !named.contains(&t.path));
        self.cochanged_tests(changed_files, &mut tests);
        let cases = DataCases::new(self.graph, self.root.as_deref(), &self.test_files);
        self.data_cases(&cases, changed, changed_files, &mut tests);
        let changes: Vec<&str> = changed_files
            .iter()
            .map(String::as_str)
            .filter(|p| !PathKind::of(p).is_test())
            .collect();
        self.named_tests(&changes, &mut tests);
        self.definition_named_tests(changed, &mut tests);
        self.package_suites(&changes, &mut tests);
        // Only tests in the changed code's languages, and no test data.
        let families = self.families_of(changed_files);
        tests.retain(|t| {
            let data = [
                "fixtures/",
                "testdata/",
                "test-data/",
                "syntax-tests/",
                "snapshots/",
            ]
            .iter()
            .any(|d| t.path.contains(d));
            let family = self
                .by_path
                .get(t.path.as_str())
                .and_then(|&i| self.graph.files.get(i))
                .map(|f| Family::of(&f.language));
            !data && (families.is_empty() || family.is_some_and(|f| families.contains(&f)))
        });
        // Ties in score go to the test with more evidence: more reached definitions inside
        // it, then a folder nearer the change.
        let evidence = |t: &TestToRun| {
            let reached = affected
                .iter()
                .filter(|a| a.path == t.path && a.symbol.is_some())
                .filter(|a| {
                    t.name
                        .as_ref()
                        .is_none_or(|n| a.qualified_name.starts_with(n.as_str()))
                })
                .count();
            let near = changes.iter().map(|c| shared_dirs(c, &t.path)).max().unwrap_or(0);
            (reached, near)
        };
        let mut keyed: Vec<((usize, usize), TestToRun)> =
            tests.into_iter().map(|t| (evidence(&t), t)).collect();
        keyed.sort_by(|(ea, a), (eb, b)| {
            b.score
                .total_cmp(&a.score)
                .then(eb.cmp(ea))
                .then(a.path.cmp(&b.path))
                .then(a.name.cmp(&b.name))
        });
        let tests: Vec<TestToRun> = keyed.into_iter().map(|(_, t)| t).collect();
        let mut tests = whole_files_past(tests, MAX_ITEMS_PER_FILE);
        tests.truncate(MAX_TESTS);
        for t in &mut tests {
            if cases.is_case(&t.path) {
                t.driver = cases.driver(&t.path);
                t.name = stem(&t.path);
                t.command = t
                    .driver
                    .as_ref()
                    .and_then(|d| runners.case_command(d, t.name.as_deref()?));
            } else {
                t.command = runners.command(&t.path, t.name.as_deref());
            }
        }
        let test_commands = runners.commands(&tests);
        (tests, test_commands)
    }

    /// Runnable test files named after a changed file (`test_x.py`, `x_test.go`,
    /// `x.spec.ts`, `tests/x.rs`).
    fn named_tests(&self, changes: &[&str], tests: &mut Vec<TestToRun>) {
        let stems: Vec<String> = changes.iter().filter_map(|p| stem(p)).collect();
        for f in &self.graph.files {
            let p = f.path.as_str();
            if !self.test_files.runnable(p) || tests.iter().any(|t| t.path == p) {
                continue;
            }
            let Some(s) = stem(p) else { continue };
            let bare = tested_name(&s).to_string();
            if stems.iter().any(|c| *c == bare && bare.len() > 2) {
                tests.push(TestToRun {
                    command: None,
                    path: p.to_string(),
                    name: None,
                    found_by: "naming",
                    score: 0.05,
                    driver: None,
                });
            }
        }
    }

    /// Runnable tests named after a changed definition inside a folder named after its file:
    /// `__tests__/response/body.test.js` for `body` in `lib/response.js`,
    /// `tests/client/test_send.py` for `send` in `client.py` (one test file per member).
    fn definition_named_tests(&self, changed: &[ChangedSymbol], tests: &mut Vec<TestToRun>) {
        let norm = |x: &str| x.to_ascii_lowercase().replace(['_', '-'], "");
        let wanted: HashSet<(String, String)> = changed
            .iter()
            .filter(|c| !PathKind::of(&c.path).is_test())
            .filter_map(|c| {
                let name = c.qualified_name.rsplit(['.', ':', '/']).next()?;
                Some((norm(&stem(&c.path)?), norm(name)))
            })
            .filter(|(f, n)| f.len() > 2 && n.len() > 2)
            .collect();
        if wanted.is_empty() {
            return;
        }
        for f in &self.graph.files {
            let p = f.path.as_str();
            if !self.test_files.runnable(p) || tests.iter().any(|t| t.path == p) {
                continue;
            }
            let Some(s) = stem(p) else { continue };
            let bare = norm(tested_name(&s));
            let mut dirs = p.split('/').rev().skip(1).map(norm);
            if dirs.any(|d| wanted.contains(&(d, bare.clone()))) {
                tests.push(TestToRun {
                    command: None,
                    path: p.to_string(),
                    name: None,
                    found_by: "naming",
                    score: 0.06,
                    driver: None,
                });
            }
        }
    }

    /// Test suites of the package the change is in (`<dir>/tests/**` or `<dir>/test/**`
    /// for a folder holding a changed file, or the root), the nearest package first, then
    /// largest: where tests of behaviour go when nothing names them. Rust integration suites
    /// exercise the crate from outside, through its binary when it has one — which no graph
    /// edge shows — so they rank above other packages' suites.
    fn package_suites(&self, changes: &[&str], tests: &mut Vec<TestToRun>) {
        if changes.is_empty() {
            return;
        }
        let has_binary = self.graph.files.iter().any(|f| {
            let p = f.path.as_str();
            p.ends_with("/main.rs") || p == "main.rs" || p.contains("/bin/")
        });
        let rust = changes.iter().any(|p| p.ends_with(".rs"));
        // (path, depth of the package folder, size): in a workspace the changed crate's
        // own suites come before the root's and other packages'.
        let mut suites: Vec<(&str, usize, usize)> = self
            .graph
            .files
            .iter()
            .filter(|f| self.test_files.runnable(f.path.as_str()))
            .filter_map(|f| {
                let p = f.path.as_str();
                let (dir, _) = PathKind::test_folder(p)?;
                let in_scope = dir.is_empty() || changes.iter().any(|c| c.starts_with(dir));
                // Size by definitions and references: macro-generated tests have no
                // definitions of their own.
                in_scope.then_some((p, dir.matches('/').count(), f.defs.len() + f.refs.len()))
            })
            .filter(|(p, _, _)| !tests.iter().any(|t| t.path == *p))
            .collect();
        suites.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(b.0)));
        let base = if rust && has_binary { 0.04 } else { 0.02 };
        for (i, (p, _, _)) in suites.into_iter().enumerate() {
            tests.push(TestToRun {
                command: None,
                path: p.to_string(),
                name: None,
                found_by: "suite",
                score: base / (1.0 + i as f32 * 0.1),
                driver: None,
            });
        }
    }

    /// Files that changed in the same commits as a changed source file at least twice (one
    /// shared commit, the one that added both, is chance) and that `keep` accepts, each with
    /// its strongest coupling: shared commits over the source file's changes.
    fn cochanged(&self, changed_files: &[String], keep: impl Fn(&str) -> bool) -> HashMap<&'g str, f32> {
        let mut strength: HashMap<&'g str, f32> = HashMap::new();
        let Some(h) = self.history else { return strength };
        for p in changed_files.iter().filter(|p| !PathKind::of(p).is_test()) {
            let Some(f) = h.file(p) else { continue };
            let changes = f.changes.max(1);
            for (n, shared) in &f.neighbours {
                let Some(t) = h.path_of(*n) else { continue };
                if *shared >= 2 && self.by_path.contains_key(t) && keep(t) {
                    let s = strength.entry(t).or_default();
                    *s = s.max(*shared as f32 / changes as f32);
                }
            }
        }
        strength
    }

    /// Runnable tests that changed together with a changed source file (`cochanged`): scored
    /// above every other kind of evidence, in proportion to how often they changed together;
    /// a test the graph reached already is lifted instead of listed twice.
    fn cochanged_tests(&self, changed_files: &[String], tests: &mut Vec<TestToRun>) {
        let strength = self.cochanged(changed_files, |t| self.test_files.runnable(t));
        for (path, s) in strength {
            let mut lifted = false;
            for t in tests.iter_mut().filter(|t| t.path == path) {
                t.score += 1.0 + s;
                lifted = true;
            }
            if !lifted {
                tests.push(TestToRun {
                    command: None,
                    path: path.to_string(),
                    name: None,
                    found_by: "history",
                    score: 1.0 + s,
                    driver: None,
                });
            }
        }
    }

    /// Test cases that are data files run by a driver: those that changed together with a
    /// changed file at least twice (ranked as history), and those named after a changed
    /// definition or file (ranked just above test files named after one).
    fn data_cases(
        &self,
        cases: &DataCases<'_>,
        changed: &[ChangedSymbol],
        changed_files: &[String],
        tests: &mut Vec<TestToRun>,
    ) {
        let mut found: Vec<(String, &'static str, f32)> = self
            .cochanged(changed_files, |t| cases.is_case(t))
            .into_iter()
            .map(|(t, s)| (t.to_string(), "history", 1.0 + s))
            .collect();
        let families: Vec<Family> = self.families_of(changed_files).into_iter().collect();
        let stems: Vec<String> = changed_files
            .iter()
            .filter(|p| !PathKind::of(p).is_test())
            .filter_map(|p| stem(p))
            .collect();
        let names: Vec<&str> = changed
            .iter()
            .filter(|c| !PathKind::of(&c.path).is_test())
            .map(|c| c.qualified_name.as_str())
            .chain(stems.iter().map(String::as_str))
            .collect();
        for case in cases.named_after(&names, &families) {
            found.push((case, "naming", 0.06));
        }
        // Strongest first, one entry per case.
        found.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
        for (path, found_by, score) in found {
            if tests.iter().any(|t| t.path == path) {
                continue;
            }
            tests.push(TestToRun {
                command: None,
                name: None,
                driver: None,
                path,
                found_by,
                score,
            });
        }
    }

    /// The language families of the indexed files among `paths`.
    fn families_of(&self, paths: &[String]) -> HashSet<Family> {
        paths
            .iter()
            .filter_map(|p| {
                self.by_path
                    .get(p.as_str())
                    .and_then(|&i| self.graph.files.get(i))
            })
            .map(|f| Family::of(&f.language))
            .collect()
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

    /// The graph's definition matching `d` in `path` (same containers, name and kind; the
    /// nearest by line when several).
    pub fn find(&self, path: &str, d: &Definition) -> Option<SymbolId> {
        let &fi = self.by_path.get(path)?;
        let f = self.graph.files.get(fi)?;
        f.defs
            .iter()
            .enumerate()
            .filter(|(_, g)| g.name == d.name && g.kind == d.kind && g.container == d.container)
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
        let (best, bounded) = self.walk(&changed);
        let mut affected = self.affected(&changed, &best);
        let direct_dependents = affected.iter().filter(|a| a.direct).count();
        let transitive_dependents = affected.len() - direct_dependents;
        let affected_files = affected_files(&affected);
        let (tests, test_commands) = self.tests_to_run(&changed, &affected, &changed_files);
        let public_api = self.public_api(&changed, &affected, records);
        let entry_points = self.entry_points_reached(&changed, &affected);
        let risk = risk(&changed, &affected, &tests, &public_api, direct_dependents);
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
            risk,
            bounded,
            direct_dependents,
            transitive_dependents,
        }
    }

    /// Best paths first from the changed definitions (and, for less, their files), along
    /// incoming edges, bounded in depth and nodes; whether a bound cut it.
    fn walk(&self, changed: &[ChangedSymbol]) -> (HashMap<NodeIndex, Reach>, bool) {
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
            // A symbol referenced at a file's top level reaches the file; importers follow.
        }
        (best, bounded)
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
            let Some(node) = self.sg.node(n) else { continue };
            let (path, line, kind, name, symbol) = match node {
                Node::File(f) => {
                    let Some(x) = self.graph.files.get(f.index()) else {
                        continue;
                    };
                    (x.path.to_string(), 1, None, x.path.to_string(), None)
                }
                Node::Symbol(s) => {
                    let Some(x) = self.graph.files.get(s.file.index()) else {
                        continue;
                    };
                    let Some(d) = x.defs.get(s.def as usize) else {
                        continue;
                    };
                    (
                        x.path.to_string(),
                        d.line,
                        Some(d.kind),
                        self.qualified(s).unwrap_or_default(),
                        Some(s),
                    )
                }
            };
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

    /// Public definitions (outside tests) among the changed and the affected.
    fn public_api(
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
    fn entry_points_reached(&self, changed: &[ChangedSymbol], affected: &[Affected]) -> Vec<EntryPointHit> {
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

/// Tests in order, where a file with more than `max` named tests becomes one file-level
/// entry at the place of its best test.
fn whole_files_past(tests: Vec<TestToRun>, max: usize) -> Vec<TestToRun> {
    let mut named: HashMap<String, usize> = HashMap::new();
    for t in tests.iter().filter(|t| t.name.is_some() && t.driver.is_none()) {
        *named.entry(t.path.clone()).or_default() += 1;
    }
    let mut out: Vec<TestToRun> = Vec::with_capacity(tests.len());
    let mut whole: HashSet<String> = HashSet::new();
    for mut t in tests {
        let many = t.driver.is_none() && named.get(&t.path).is_some_and(|&n| n > max);
        if many {
            if !whole.insert(t.path.clone()) {
                continue;
            }
            t.name = None;
        }
        out.push(t);
    }
    out
}

/// Affected files by their best definition's score, with how many were reached in each.
fn affected_files(affected: &[Affected]) -> Vec<AffectedFile> {
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

fn risk(
    changed: &[ChangedSymbol],
    affected: &[Affected],
    tests: &[TestToRun],
    public_api: &[String],
    direct: usize,
) -> Risk {
    let mut reasons = Vec::new();
    let breaking = changed
        .iter()
        .any(|c| matches!(c.change, ChangeKind::Signature | ChangeKind::Deleted));
    let public_changed = changed
        .iter()
        .any(|c| c.public && !PathKind::of(&c.path).is_test());
    let areas: HashSet<String> = affected
        .iter()
        .filter(|a| !a.is_test)
        .map(|a| area_of(&a.path))
        .collect();
    let changed_areas: HashSet<String> = changed.iter().map(|c| area_of(&c.path)).collect();
    let cross = areas.iter().any(|a| !changed_areas.contains(a));
    let graph_tests = tests.iter().filter(|t| t.found_by == "graph").count();
    let mut score = 0;
    if direct >= 20 {
        reasons.push(format!("high fan-in: {direct} direct dependents"));
        score += 2;
    } else if direct >= 5 {
        reasons.push(format!("fan-in: {direct} direct dependents"));
        score += 1;
    }
    if breaking {
        reasons.push("a declaration changed or was deleted: callers may break".into());
        score += 1;
    }
    if public_changed || !public_api.is_empty() {
        reasons.push(format!(
            "public API touched or reached ({} definitions)",
            public_api.len()
        ));
        score += 1;
    }
    if cross {
        reasons.push("dependents in other parts of the repository".into());
        score += 1;
    }
    if graph_tests == 0 {
        reasons.push(match tests.is_empty() {
            true => "no test reaches the change".into(),
            false => "no test reaches the change through the graph (only by naming)".into(),
        });
        score += 1;
    }
    if changed.is_empty() {
        reasons.push("no definition changed (comments, imports or unindexed files only)".into());
    }
    let level = match score {
        0 | 1 => "low",
        2 | 3 => "medium",
        _ => "high",
    };
    Risk { level, reasons }
}

/// How many leading folders two paths share.
fn shared_dirs(a: &str, b: &str) -> usize {
    let da = a.rsplit_once('/').map_or("", |(d, _)| d);
    let db = b.rsplit_once('/').map_or("", |(d, _)| d);
    da.split('/')
        .zip(db.split('/'))
        .take_while(|(x, y)| x == y && !x.is_empty())
        .count()
}
