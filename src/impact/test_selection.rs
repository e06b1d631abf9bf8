//! `TestSelection`: the tests to run for a change, best first, each saying how it was found:
//! reached through the graph (as test items a runner can select), changed together with a
//! changed file in the history, data cases with the driver that runs them, named after a
//! changed file or definition, or the suites of the changed package; then kept to the change's
//! languages, ranked, capped, and given their commands.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::Serialize;

use super::blast_radius::Affected;
use super::changed_symbol::ChangedSymbol;
use super::data_cases::DataCases;
use super::pytest_fixtures;
use super::test_commands::{TestCommands, stem};
use super::test_files::TestFiles;
use crate::graph::{CodeGraph, EdgeKind, Family};
use crate::index::HistoryPart;
use crate::lang::PathKind;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TestToRun {
    pub path: String,
    /// The test function, when the graph reached one.
    pub name: Option<String>,
    /// `graph` (a test reaches the change), `history` (it changed together with a changed
    /// file in the past), `naming` (named after a changed file), `mention` (it names a changed
    /// definition the graph could not resolve there), `fixture` (it asks for a pytest
    /// fixture the change reaches), `process` (it runs one of the project's programs in a
    /// child process), `package` (a test of the
    /// package of a changed definition no test reaches through the graph) or `suite` (a test
    /// suite of the package the change is in, largest first).
    pub found_by: &'static str,
    /// A path through the code graph reaches the change from this test: it must run. The
    /// others (history, names, the package's suites) are likely.
    pub must_run: bool,
    pub score: f32,
    pub command: Option<String>,
    /// For a test case that is a data file (`tests/functional/x/case.py`), the runnable test
    /// that runs it (`tests/test_functional.py`); `name` is then the case's id.
    pub driver: Option<String>,
}

/// The tests a change selects and what the selection could not follow.
pub(super) struct Selection {
    /// Best first.
    pub tests: Vec<TestToRun>,
    /// Ready-to-run commands for all of them, one per framework.
    pub test_commands: Vec<String>,
    /// The same for the tests that must run.
    pub must_run_commands: Vec<String>,
    /// Changed definitions no test reaches through the graph nor mentions: their packages'
    /// tests must run.
    pub unreached: Vec<String>,
}

impl TestToRun {
    /// A whole test file, found by `found_by`; it must run when a graph path, a mention, a
    /// fixture, a child process or the widening to a package found it.
    fn file(path: &str, found_by: &'static str, score: f32) -> TestToRun {
        TestToRun {
            command: None,
            path: path.to_string(),
            name: None,
            found_by,
            must_run: matches!(found_by, "graph" | "mention" | "fixture" | "process" | "package"),
            score,
            driver: None,
        }
    }
}

/// What a test file's stem names: `test_x`, `x_test`, `x_tests`, `x.test`, `x.spec` -> `x`.
fn tested_name(stem: &str) -> &str {
    stem.trim_start_matches("test_")
        .trim_end_matches("_test")
        .trim_end_matches("_tests")
        .trim_end_matches(".test")
        .trim_end_matches(".spec")
}

/// Added to the score of a test that must run in a file named after a changed file
/// (`test_limit.rs` for `src/buf/limit.rs`, `test_json_tag.py` for `json/tag.py`): it tests
/// that file, so it comes before the tests that only reach it, though after those that call
/// the change directly. A name alone does not raise a test the graph did not reach.
const NAMED_TEST: f32 = 1.5;

/// Raises by [`NAMED_TEST`] the tests that must run named after a changed file (its stem, or
/// its folder and stem), and every test named after a changed definition in a folder named
/// after its file (`__tests__/response/body.test.js` for `body` in `lib/response.js`).
fn named_after_changes(tests: &mut [TestToRun], changes: &[&str], changed: &[ChangedSymbol]) {
    let wanted: HashSet<String> = changes
        .iter()
        .flat_map(|p| {
            let s = stem(p).unwrap_or_default();
            let dir = p.rsplit('/').nth(1).unwrap_or("");
            [norm_name(&s), norm_name(&format!("{dir}{s}"))]
        })
        .filter(|n| n.len() > 2)
        .collect();
    let definitions = file_and_definition_names(changed);
    for t in tests.iter_mut() {
        let Some(s) = stem(&t.path) else { continue };
        let tested = norm_name(tested_name(&s));
        let folder = norm_name(t.path.rsplit('/').nth(1).unwrap_or(""));
        if (t.must_run && wanted.contains(&tested)) || definitions.contains(&(folder, tested)) {
            t.score += NAMED_TEST;
        }
    }
}

/// A name as test files spell it, case, `_`, `-` and `.` aside (`json_tag`, `JsonTag`).
fn norm_name(x: &str) -> String {
    x.to_ascii_lowercase().replace(['_', '-', '.'], "")
}

/// Each changed definition (outside tests) as (its file's stem, its name), normalized: what
/// a test named after it in a folder named after its file is called.
fn file_and_definition_names(changed: &[ChangedSymbol]) -> HashSet<(String, String)> {
    changed
        .iter()
        .filter(|c| !PathKind::of(&c.path).is_test())
        .filter_map(|c| {
            Some((
                norm_name(&stem(&c.path)?),
                norm_name(simple_name(&c.qualified_name)),
            ))
        })
        .filter(|(f, n)| f.len() > 2 && n.len() > 2)
        .collect()
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

const MAX_TESTS: usize = 50;
/// More named tests of one file than this and the file is run whole: a long list of one
/// suite's items would crowd every other test file out of the list.
const MAX_ITEMS_PER_FILE: usize = 5;

/// Where tests are looked for: the graph, the history, the working tree's test files.
pub(super) struct TestSelection<'a> {
    graph: &'a CodeGraph,
    by_path: &'a HashMap<&'a str, usize>,
    root: Option<&'a Path>,
    history: Option<&'a HistoryPart>,
    test_files: &'a TestFiles,
}

impl<'a> TestSelection<'a> {
    pub(super) fn new(
        graph: &'a CodeGraph,
        by_path: &'a HashMap<&'a str, usize>,
        root: Option<&'a Path>,
        history: Option<&'a HistoryPart>,
        test_files: &'a TestFiles,
    ) -> TestSelection<'a> {
        TestSelection {
            graph,
            by_path,
            root,
            history,
            test_files,
        }
    }

    /// The tests to run for a change, best first, with their commands (for all of them, and
    /// for those that must run): those the walk reached
    /// (as test items a runner can select), those named after a changed file, and the suites
    /// of the changed package.
    pub(super) fn tests_to_run(
        &self,
        changed: &[ChangedSymbol],
        affected: &[Affected],
        changed_files: &[String],
    ) -> Selection {
        let runners = TestCommands::new(self.graph, self.by_path, self.root);
        let mut tests = reached_tests(&runners, affected);
        self.cochanged_tests(changed_files, &mut tests);
        let cases = DataCases::new(self.graph, self.root, self.test_files);
        self.data_cases(&cases, changed, changed_files, &mut tests);
        let changes: Vec<&str> = changed_files
            .iter()
            .map(String::as_str)
            .filter(|p| !PathKind::of(p).is_test())
            .collect();
        self.named_tests(&changes, &mut tests);
        self.definition_named_tests(changed, &mut tests);
        let mentions = self.mentions(changed);
        for (p, _) in &mentions {
            must_run_file(&mut tests, p, "mention", 0.07);
        }
        let (fixture_users, mut reached_otherwise) = self.fixture_users(affected);
        for p in &fixture_users {
            must_run_file(&mut tests, p, "fixture", 0.08);
        }
        let (process_tests, through_programs) = self.process_tests(affected);
        for p in &process_tests {
            must_run_file(&mut tests, p, "process", 0.06);
        }
        reached_otherwise.extend(through_programs);
        let unreached = unreached(changed, affected, &mentions, &reached_otherwise);
        let mut unreached_files: Vec<&str> = unreached.iter().map(|c| c.path.as_str()).collect();
        unreached_files.sort_unstable();
        unreached_files.dedup();
        self.widen_to_packages(&unreached_files, &mut tests);
        self.package_suites(&changes, &mut tests);
        self.keep_changed_languages(changed_files, &mut tests);
        named_after_changes(&mut tests, &changes, changed);
        let tests = by_evidence(tests, affected, &changes);
        let mut tests = whole_files_past(tests, MAX_ITEMS_PER_FILE);
        // The cap is on the likely tests: one that must run is never dropped.
        let mut likely = 0;
        tests.retain(|t| {
            likely += usize::from(!t.must_run);
            t.must_run || likely <= MAX_TESTS
        });
        with_commands(&mut tests, &runners, &cases);
        let test_commands = runners.commands(&tests);
        let must: Vec<TestToRun> = tests.iter().filter(|t| t.must_run).cloned().collect();
        let must_run_commands = runners.commands(&must);
        Selection {
            tests,
            test_commands,
            must_run_commands,
            unreached: unreached.into_iter().map(|c| c.qualified_name.clone()).collect(),
        }
    }

    /// Only tests in the changed code's languages, and no test data.
    fn keep_changed_languages(&self, changed_files: &[String], tests: &mut Vec<TestToRun>) {
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
                tests.push(TestToRun::file(p, "naming", 0.05));
            }
        }
    }

    /// Runnable tests named after a changed definition inside a folder named after its file:
    /// `__tests__/response/body.test.js` for `body` in `lib/response.js`,
    /// `tests/client/test_send.py` for `send` in `client.py` (one test file per member).
    fn definition_named_tests(&self, changed: &[ChangedSymbol], tests: &mut Vec<TestToRun>) {
        let wanted = file_and_definition_names(changed);
        if wanted.is_empty() {
            return;
        }
        for f in &self.graph.files {
            let p = f.path.as_str();
            if !self.test_files.runnable(p) || tests.iter().any(|t| t.path == p) {
                continue;
            }
            let Some(s) = stem(p) else { continue };
            let bare = norm_name(tested_name(&s));
            let mut dirs = p.split('/').rev().skip(1).map(norm_name);
            if dirs.any(|d| wanted.contains(&(d, bare.clone()))) {
                tests.push(TestToRun::file(p, "naming", 0.06));
            }
        }
    }

    /// The runnable test files that name a changed definition where the graph could not
    /// say what the name is (unresolved, or matched by name only: a method on a pytest
    /// fixture's value, a receiver of unknown type), each with the (last parts of the) names
    /// it mentions: they may call it, so they must run (`found_by: mention`). A name the graph
    /// resolved to another definition, or to outside code, is not a mention.
    fn mentions(&self, changed: &[ChangedSymbol]) -> Vec<(&'a str, HashSet<String>)> {
        let names: HashSet<&str> = changed
            .iter()
            .filter(|c| {
                c.change != super::changed_symbol::ChangeKind::Added && !PathKind::of(&c.path).is_test()
            })
            .map(|c| simple_name(&c.qualified_name))
            .filter(|n| n.len() >= MIN_MENTIONED_NAME)
            .collect();
        if names.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, f) in self.graph.files.iter().enumerate() {
            let p = f.path.as_str();
            if !self.test_files.runnable(p) {
                continue;
            }
            let Some((refs, resolved)) = self.graph.file_body(i) else {
                continue;
            };
            let mut found: HashSet<String> = refs
                .iter()
                .zip(resolved.refs.iter())
                .filter(|(_, x)| !x.external && !x.provenance.is_some_and(|p| p.is_resolved()))
                .filter(|(r, _)| names.contains(r.name.as_str()))
                .map(|(r, _)| r.name.to_string())
                .collect();
            // A Rust macro's arguments are tokens, not calls (`buf_tests!(get_u8, ..)` expands
            // to `buf.get_u8()`): a test file naming a changed definition there mentions it.
            if f.language == "rust"
                && let Some(text) = self.root.and_then(|r| std::fs::read_to_string(r.join(p)).ok())
            {
                found.extend(
                    names
                        .iter()
                        .filter(|n| n.len() > MIN_MENTIONED_NAME && names_word(&text, n))
                        .map(|n| n.to_string()),
                );
            }
            if !found.is_empty() {
                out.push((p, found));
            }
        }
        out
    }

    /// The runnable test files that ask for a pytest fixture the change reaches (a reached
    /// definition in a `conftest.py`, or a fixture asking for one), read from the working
    /// tree: no call links a test to its fixtures. With the changed definitions reaching them.
    fn fixture_users(&self, affected: &[Affected]) -> (Vec<&'a str>, HashSet<String>) {
        let mut users = Vec::new();
        let mut through = HashSet::new();
        let Some(root) = self.root else {
            return (users, through);
        };
        let read = |p: &str| std::fs::read_to_string(root.join(p)).ok();
        let is_conftest = |p: &str| p == "conftest.py" || p.ends_with("/conftest.py");
        let mut lines: HashMap<&str, (HashSet<u32>, HashSet<String>)> = HashMap::new();
        for a in affected
            .iter()
            .filter(|a| a.symbol.is_some() && is_conftest(&a.path))
        {
            let e = lines.entry(a.path.as_str()).or_default();
            e.0.insert(a.line);
            e.1.extend(a.via.first().map(|s| s.to.clone()));
        }
        let conftests: Vec<&str> = self
            .graph
            .files
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| is_conftest(p))
            .collect();
        for (conftest, (reached_lines, changed)) in lines {
            let Some(text) = read(conftest) else { continue };
            let (mut names, mut autouse) =
                pytest_fixtures::reached_fixtures(&text, &reached_lines, HashSet::new());
            if names.is_empty() {
                continue;
            }
            let dir = conftest.strip_suffix("conftest.py").unwrap_or("");
            // Fixtures of the conftests below asking for these.
            for below in conftests.iter().filter(|p| p.starts_with(dir) && **p != conftest) {
                if let Some(t) = read(below) {
                    let (more, auto) = pytest_fixtures::reached_fixtures(&t, &HashSet::new(), names.clone());
                    autouse |= auto;
                    names = more;
                }
            }
            for f in &self.graph.files {
                let p = f.path.as_str();
                if !p.starts_with(dir) || !self.test_files.runnable(p) || users.contains(&p) {
                    continue;
                }
                if autouse || read(p).is_some_and(|t| pytest_fixtures::uses_any(&t, &names)) {
                    users.push(p);
                }
            }
            through.extend(changed);
        }
        (users, through)
    }

    /// Where no test reaches a changed definition through the graph (it may be called
    /// dynamically: through an interface, a handler, reflection, a name in a string), the
    /// tests of its package must run instead of none: the runnable test files in the changed
    /// file's folder and in the test folders of the packages holding it (the root's
    /// `tests/` holds every file's).
    fn widen_to_packages(&self, files: &[&str], tests: &mut Vec<TestToRun>) {
        if files.is_empty() {
            return;
        }
        let in_package = |t: &str| {
            let dir = t.rsplit_once('/').map_or("", |(d, _)| d);
            files.iter().any(|f| {
                let fdir = f.rsplit_once('/').map_or("", |(d, _)| d);
                fdir == dir || PathKind::test_folder(t).is_some_and(|(pkg, _)| f.starts_with(pkg))
            })
        };
        let package_tests: Vec<&str> = self
            .graph
            .files
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| self.test_files.runnable(p) && in_package(p))
            .collect();
        for p in package_tests {
            must_run_file(tests, p, "package", 0.05);
        }
    }

    /// The runnable tests that run one of the project's own programs in a child process
    /// (`execFile('node', [fixtures/pm])`, `subprocess.run([.., "tests/fixtures/app.py"])`)
    /// when the change reaches a program in their test folder's `fixtures/`: no graph edge
    /// joins the test to what the program calls. With the changed definitions reaching them.
    fn process_tests(&self, affected: &[Affected]) -> (Vec<&'a str>, HashSet<String>) {
        let Some(root) = self.root else {
            return (Vec::new(), HashSet::new());
        };
        let in_fixtures = |p: &str| p.starts_with("fixtures/") || p.contains("/fixtures/");
        let programs: Vec<&Affected> = affected
            .iter()
            .filter(|a| !a.is_test && in_fixtures(&a.path))
            .collect();
        if programs.is_empty() {
            return (Vec::new(), HashSet::new());
        }
        let tests: Vec<&'a str> = self
            .graph
            .files
            .iter()
            .map(|f| f.path.as_str())
            .filter(|p| self.test_files.runnable(p))
            .filter(|t| {
                PathKind::test_folder(t)
                    .is_some_and(|(pkg, _)| programs.iter().any(|a| a.path.starts_with(pkg)))
            })
            .filter(|t| {
                std::fs::read_to_string(root.join(t))
                    .is_ok_and(|text| SPAWNS.iter().any(|m| text.contains(m)) && text.contains("fixtures"))
            })
            .collect();
        let through = match tests.is_empty() {
            true => HashSet::new(),
            false => programs
                .iter()
                .filter_map(|a| a.via.first().map(|s| s.to.clone()))
                .collect(),
        };
        (tests, through)
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
            tests.push(TestToRun::file(p, "suite", base / (1.0 + i as f32 * 0.1)));
        }
    }

    /// Files that changed in the same commits as a changed source file at least twice (one
    /// shared commit, the one that added both, is chance) and that `keep` accepts, each with
    /// its strongest coupling: shared commits over the source file's changes.
    fn cochanged(&self, changed_files: &[String], keep: impl Fn(&str) -> bool) -> HashMap<&'a str, f32> {
        let mut strength: HashMap<&'a str, f32> = HashMap::new();
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
                tests.push(TestToRun::file(path, "history", 1.0 + s));
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
            tests.push(TestToRun::file(&path, found_by, score));
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
}

/// The test file `path` must run: an entry already listed is marked so (and says why), else
/// one is added.
fn must_run_file(tests: &mut Vec<TestToRun>, path: &str, found_by: &'static str, score: f32) {
    match tests.iter_mut().find(|t| t.path == path) {
        // Found as likely before: it now says why it must run.
        Some(t) if !t.must_run => {
            t.must_run = true;
            t.found_by = found_by;
        }
        Some(_) => {}
        None => tests.push(TestToRun::file(path, found_by, score)),
    }
}

/// Shorter names are too common to count as a mention of a changed definition (`get`, a
/// method called on a fixture's value, counts: safety first).
const MIN_MENTIONED_NAME: usize = 3;

/// What starts a child process in a test's source, by language.
const SPAWNS: [&str; 8] = [
    "child_process",
    "execFile(",
    "execa(",
    "subprocess.",
    "exec.Command(",
    "Command::new(",
    "ProcessBuilder(",
    "Runtime.getRuntime().exec(",
];

/// Whether `text` holds `word` as a whole identifier.
fn names_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + word.len()..].chars().next().is_some_and(ident)
    })
}

/// A qualified name's last part (`shop.cart.Cart.total` -> `total`, `a::b::f` -> `f`).
fn simple_name(qualified: &str) -> &str {
    qualified
        .rsplit(['.', ':', '/', '\\'])
        .next()
        .unwrap_or(qualified)
}

/// The changed definitions (outside tests, not just added) that no test reaches through the
/// graph nor `mentions` by a name the graph could not resolve.
fn unreached<'c>(
    changed: &'c [ChangedSymbol],
    affected: &[Affected],
    mentions: &[(&str, HashSet<String>)],
    reached_otherwise: &HashSet<String>,
) -> Vec<&'c ChangedSymbol> {
    // Each path's first step goes from what depends on the change to the changed definition
    // (`to`), or to its file for a test that imports the changed module.
    let reached: HashSet<&str> = affected
        .iter()
        .filter(|a| a.is_test)
        .filter_map(|a| a.via.first().map(|s| s.to.as_str()))
        .collect();
    changed
        .iter()
        .filter(|c| c.change != super::changed_symbol::ChangeKind::Added && !PathKind::of(&c.path).is_test())
        .filter(|c| !reached.contains(c.qualified_name.as_str()) && !reached.contains(c.path.as_str()))
        .filter(|c| !reached_otherwise.contains(&c.qualified_name) && !reached_otherwise.contains(&c.path))
        .filter(|c| {
            let name = simple_name(&c.qualified_name);
            !mentions.iter().any(|(_, names)| names.contains(name))
        })
        .collect()
}

/// The tests the walk reached, as test items a runner can select (a file where it cannot).
fn reached_tests(runners: &TestCommands<'_>, affected: &[Affected]) -> Vec<TestToRun> {
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
                must_run: true,
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
    tests
}

/// Best score first; ties go to the test with more evidence: more reached definitions
/// inside it, then a folder nearer the change.
fn by_evidence(tests: Vec<TestToRun>, affected: &[Affected], changes: &[&str]) -> Vec<TestToRun> {
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
    let mut keyed: Vec<((usize, usize), TestToRun)> = tests.into_iter().map(|t| (evidence(&t), t)).collect();
    keyed.sort_by(|(ea, a), (eb, b)| {
        b.score
            .total_cmp(&a.score)
            .then(eb.cmp(ea))
            .then(a.path.cmp(&b.path))
            .then(a.name.cmp(&b.name))
    });
    keyed.into_iter().map(|(_, t)| t).collect()
}

/// Each test's command; a data case also gets its driver, and its id as its name.
fn with_commands(tests: &mut [TestToRun], runners: &TestCommands<'_>, cases: &DataCases<'_>) {
    for t in tests {
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

/// How many leading folders two paths share.
fn shared_dirs(a: &str, b: &str) -> usize {
    let da = a.rsplit_once('/').map_or("", |(d, _)| d);
    let db = b.rsplit_once('/').map_or("", |(d, _)| d);
    da.split('/')
        .zip(db.split('/'))
        .take_while(|(x, y)| x == y && !x.is_empty())
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_identifiers_only() {
        assert!(names_word("check!(get_u8, 1)", "get_u8"));
        assert!(!names_word("check!(get_u8_overflow, 1)", "get_u8"));
        assert!(!names_word("try_get_u8()", "get_u8"));
    }
}
