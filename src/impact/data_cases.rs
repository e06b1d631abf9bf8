//! `DataCases`: tests that are data files run by one driver — a formatter's
//! `tests/data/cases/*.py` read by `tests/test_format.py`, a linter's
//! `tests/functional/**/*.py` collected by `tests/test_functional.py`. No runner runs such a
//! file by itself and no graph edge reaches it, but each is a test case: a change to the code
//! it covers should list it, with the driver that runs it.
//!
//! The driver of a case is found from the folders between the test root and the case,
//! deepest first: a runnable test named after one (`tests/test_functional.py` for
//! `tests/functional/**`), else a runnable test that parametrizes over it (a line with
//! `parametrize` and the folder's name quoted, as `all_data_cases("cases")`).

use std::collections::HashMap;
use std::path::Path;

use super::test_commands::stem;
use super::test_files::TestFiles;
use crate::graph::{CodeGraph, Family};
use crate::lang::PathKind;
use crate::lexical::split_word;

/// Files under test folders that support tests rather than being cases.
const HELPERS: [&str; 8] = [
    "conftest.py",
    "__init__.py",
    "util.py",
    "utils.py",
    "helpers.py",
    "mod.rs",
    "common.rs",
    "macros.rs",
];

/// Folders whose files are fixtures for other tests, never cases of a driver of their own.
const FIXTURE_DIRS: [&str; 4] = ["fixtures", "snapshots", "__snapshots__", "__pycache__"];

pub struct DataCases<'g> {
    graph: &'g CodeGraph,
    root: Option<&'g Path>,
    test_files: &'g TestFiles,
    /// Sources of runnable tests read so far (`None`: unreadable).
    sources: std::cell::RefCell<HashMap<String, Option<String>>>,
}

impl<'g> DataCases<'g> {
    pub fn new(graph: &'g CodeGraph, root: Option<&'g Path>, test_files: &'g TestFiles) -> Self {
        DataCases {
            graph,
            root,
            test_files,
            sources: Default::default(),
        }
    }

    /// A file under a test folder that no runner runs by itself and that is no helper or
    /// fixture: a case some driver reads.
    pub fn is_case(&self, path: &str) -> bool {
        let file = path.rsplit('/').next().unwrap_or(path);
        PathKind::of(path).is_test()
            && case_dirs(path).is_some()
            && !self.test_files.runnable(path)
            && !HELPERS.contains(&file)
            && !path.split('/').any(|d| FIXTURE_DIRS.contains(&d))
    }

    /// The runnable test file that runs `case`, if one can be told from the tree.
    pub fn driver(&self, case: &str) -> Option<String> {
        let (test_root, dirs) = case_dirs(case)?;
        let family = self.family(case)?;
        let candidates: Vec<&str> = self
            .graph
            .files
            .iter()
            .filter(|f| f.path.as_str().starts_with(test_root) && Family::of(&f.language) == family)
            .map(|f| f.path.as_str())
            .filter(|p| self.test_files.runnable(p) && !p[test_root.len()..].contains('/'))
            .collect();
        // Named after the folder, deepest first.
        for d in dirs.iter().rev() {
            let mut named: Vec<&str> = candidates
                .iter()
                .copied()
                .filter(|p| stem(p).is_some_and(|s| bare(&s) == *d))
                .collect();
            named.sort_unstable();
            if let Some(p) = named.first() {
                return Some(p.to_string());
            }
        }
        // Parametrized over the folder, deepest first; short names are too common to tell.
        for d in dirs.iter().rev().filter(|d| d.len() >= 3) {
            let mut over: Vec<&str> = candidates
                .iter()
                .copied()
                .filter(|p| self.parametrizes_over(p, d))
                .collect();
            over.sort_unstable();
            if let Some(p) = over.first() {
                return Some(p.to_string());
            }
        }
        None
    }

    /// Cases (in the given languages) named after a changed definition or file: the words of
    /// the case's name, at least two, are the words of the name (`nan_comparison_check.py`
    /// for `_check_nan_comparison`).
    pub fn named_after(&self, names: &[&str], families: &[Family]) -> Vec<String> {
        let wanted: Vec<Vec<String>> = names
            .iter()
            .map(|n| word_set(n))
            .filter(|w| w.len() >= 2)
            .collect();
        if wanted.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<String> = self
            .graph
            .files
            .iter()
            .filter(|f| families.is_empty() || families.contains(&Family::of(&f.language)))
            .map(|f| f.path.as_str())
            .filter(|p| self.is_case(p))
            .filter(|p| stem(p).is_some_and(|s| wanted.contains(&word_set(&s))))
            .map(str::to_string)
            .collect();
        out.sort_unstable();
        out
    }

    fn family(&self, path: &str) -> Option<Family> {
        self.graph
            .files
            .iter()
            .find(|f| f.path.as_str() == path)
            .map(|f| Family::of(&f.language))
    }

    /// A line of `test` that parametrizes over a folder named `dir` (quoted, or as the last
    /// part of a quoted path).
    fn parametrizes_over(&self, test: &str, dir: &str) -> bool {
        let Some(root) = self.root else { return false };
        let mut sources = self.sources.borrow_mut();
        let source = sources.entry(test.to_string()).or_insert_with(|| {
            crate::util::read_regular(&root.join(test))
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
        });
        let Some(text) = source else { return false };
        let quoted = [
            format!("\"{dir}\""),
            format!("'{dir}'"),
            format!("/{dir}\""),
            format!("/{dir}'"),
        ];
        text.lines()
            .filter(|l| l.contains("parametrize"))
            .any(|l| quoted.iter().any(|q| l.contains(q.as_str())))
    }
}

/// The test root of a path (through its first `tests/` or `test/` folder) and the folders
/// between it and the file; `None` outside a test folder or directly in it.
fn case_dirs(path: &str) -> Option<(&str, Vec<&str>)> {
    let (holder, folder) = PathKind::test_folder(path)?;
    let root = &path[..holder.len() + folder.len() + 1];
    let (between, _) = path[root.len()..].rsplit_once('/')?;
    Some((root, between.split('/').collect()))
}

/// A test file's stem without its test affixes.
fn bare(stem: &str) -> &str {
    stem.trim_start_matches("test_")
        .trim_end_matches("_test")
        .trim_end_matches("_tests")
}

/// The lower-cased words of a name, sorted and deduplicated (`_check_nan_comparison` and
/// `nan_comparison_check` give the same set).
fn word_set(name: &str) -> Vec<String> {
    let name = name.rsplit(['.', ':']).next().unwrap_or(name);
    let mut w: Vec<String> = split_word(name)
        .into_iter()
        .map(|(a, b)| name[a..b].to_ascii_lowercase())
        .filter(|w| w.chars().any(|c| c.is_alphabetic()))
        .collect();
    w.sort_unstable();
    w.dedup();
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::FileSkeleton;
    use crate::symbols::{FileSymbols, RepoPath};

    fn graph(paths: &[&str]) -> CodeGraph {
        let files = paths
            .iter()
            .map(|p| {
                let path = RepoPath::parse(p).unwrap();
                FileSkeleton::new(path, "python", "", &FileSymbols::default())
            })
            .collect();
        CodeGraph::build(files, Vec::new(), None).0
    }

    #[test]
    fn cases_are_data_under_test_folders() {
        let g = graph(&[]);
        let conventions = TestFiles::default();
        let cases = DataCases::new(&g, None, &conventions);
        assert!(cases.is_case("tests/functional/n/nan_comparison_check.py"));
        assert!(cases.is_case("tests/data/cases/type_params.py"));
        assert!(!cases.is_case("tests/test_format.py"));
        assert!(!cases.is_case("tests/util.py"));
        assert!(!cases.is_case("tests/data/conftest.py"));
        assert!(!cases.is_case("tests/fixtures/app/models.py"));
        // Directly in the test root: a helper module, not a case of a folder.
        assert!(!cases.is_case("tests/helpers_x.py"));
        assert!(!cases.is_case("src/cases/x.py"));
    }

    #[test]
    fn driver_named_after_the_folder() {
        let g = graph(&[
            "tests/test_functional.py",
            "tests/test_self.py",
            "tests/functional/n/nan_comparison_check.py",
            "tests/checkers/test_n.py",
        ]);
        let conventions = TestFiles::default();
        let cases = DataCases::new(&g, None, &conventions);
        assert_eq!(
            cases
                .driver("tests/functional/n/nan_comparison_check.py")
                .as_deref(),
            Some("tests/test_functional.py")
        );
    }

    #[test]
    fn driver_parametrizing_over_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests/data/cases")).unwrap();
        std::fs::write(
            dir.path().join("tests/test_black.py"),
            "def test_x():\n    read_data(\"cases\", \"expression.py\")\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("tests/test_format.py"),
            "@pytest.mark.parametrize(\"filename\", all_data_cases(\"cases\"))\ndef test_simple_format(filename):\n    pass\n",
        )
        .unwrap();
        let g = graph(&[
            "tests/test_black.py",
            "tests/test_format.py",
            "tests/data/cases/type_params.py",
        ]);
        let conventions = TestFiles::default();
        let cases = DataCases::new(&g, Some(dir.path()), &conventions);
        assert_eq!(
            cases.driver("tests/data/cases/type_params.py").as_deref(),
            Some("tests/test_format.py")
        );
        // Without the tree to read, no guess.
        assert_eq!(
            DataCases::new(&g, None, &conventions).driver("tests/data/cases/type_params.py"),
            None
        );
    }

    #[test]
    fn cases_named_after_a_changed_definition() {
        let g = graph(&[
            "tests/functional/n/nan_comparison_check.py",
            "tests/functional/c/comparison_with_callable.py",
            "tests/functional/n/nan.py",
        ]);
        let conventions = TestFiles::default();
        let cases = DataCases::new(&g, None, &conventions);
        assert_eq!(
            cases.named_after(&["ComparisonChecker._check_nan_comparison", "nan"], &[]),
            vec!["tests/functional/n/nan_comparison_check.py".to_string()]
        );
    }
}
