//! `TestFiles`: which files a test runner runs, by the default conventions (the test suites
//! of `lang::PathKind`) and by the project's own pytest configuration: `python_files` in
//! `pytest.ini`, `pyproject.toml` (`[tool.pytest.ini_options]`), `tox.ini` or `setup.cfg`
//! (`[tool:pytest]`), as pylint's `*test_*.py` makes `unittest_lint.py` a test module.

use std::path::Path;

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::lang::PathKind;

#[derive(Debug, Default)]
pub struct TestFiles {
    /// The project's `python_files` patterns, when it sets them.
    python_files: Option<GlobSet>,
}

impl TestFiles {
    /// The conventions, with the pytest configuration at `root` when there is one (the first
    /// file pytest itself would read that sets `python_files`).
    pub fn read(root: Option<&Path>) -> TestFiles {
        let Some(root) = root else {
            return TestFiles::default();
        };
        let read = |name: &str| {
            crate::util::read_regular(&root.join(name))
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
        };
        let patterns = read("pytest.ini")
            .and_then(|t| ini_value(&t, "pytest", "python_files"))
            .or_else(|| read("pyproject.toml").and_then(|t| pyproject_value(&t)))
            .or_else(|| read("tox.ini").and_then(|t| ini_value(&t, "pytest", "python_files")))
            .or_else(|| read("setup.cfg").and_then(|t| ini_value(&t, "tool:pytest", "python_files")));
        TestFiles {
            python_files: patterns.and_then(|p| glob_set(&p)),
        }
    }

    /// A file a runner runs: by the conventions, or a Python file matching the project's
    /// `python_files`.
    pub fn runnable(&self, path: &str) -> bool {
        if PathKind::of(path).is_test_suite() {
            return true;
        }
        let file = path.rsplit('/').next().unwrap_or(path);
        file.ends_with(".py")
            && file != "conftest.py"
            && self.python_files.as_ref().is_some_and(|g| g.is_match(file))
    }
}

fn glob_set(patterns: &[String]) -> Option<GlobSet> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).ok()?);
    }
    b.build().ok()
}

/// `key` in `[section]` of an ini file: whitespace-separated, continued on indented lines.
fn ini_value(text: &str, section: &str, key: &str) -> Option<Vec<String>> {
    let mut in_section = false;
    let mut values: Option<Vec<String>> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            in_section = trimmed.trim_matches(['[', ']']).trim() == section;
            if values.is_some() {
                break;
            }
            continue;
        }
        if !in_section || trimmed.starts_with(['#', ';']) {
            continue;
        }
        let continued = line.starts_with([' ', '\t']) && !trimmed.is_empty();
        match (&mut values, trimmed.split_once('=')) {
            (Some(v), _) if continued => v.extend(trimmed.split_whitespace().map(str::to_string)),
            (Some(_), _) => break,
            (None, Some((k, v))) if k.trim() == key => {
                values = Some(v.split_whitespace().map(str::to_string).collect());
            }
            _ => {}
        }
    }
    values.filter(|v| !v.is_empty())
}

/// `python_files` under `[tool.pytest.ini_options]`: a list or one space-separated string.
fn pyproject_value(text: &str) -> Option<Vec<String>> {
    let v = text.parse::<toml::Table>().ok()?;
    let p = v
        .get("tool")?
        .get("pytest")?
        .get("ini_options")?
        .get("python_files")?;
    let out: Vec<String> = match p {
        toml::Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
        toml::Value::Array(a) => a.iter().filter_map(|x| x.as_str()).map(str::to_string).collect(),
        _ => return None,
    };
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_without_configuration() {
        let t = TestFiles::read(None);
        assert!(t.runnable("tests/test_x.py"));
        assert!(!t.runnable("tests/lint/unittest_lint.py"));
    }

    #[test]
    fn python_files_from_each_configuration_file() {
        for (name, text) in [
            (
                "pytest.ini",
                "[pytest]\npython_files = *test_*.py\n    check_*.py\n",
            ),
            (
                "pyproject.toml",
                "[tool.pytest.ini_options]\npython_files = [\"*test_*.py\", \"check_*.py\"]\n",
            ),
            (
                "tox.ini",
                "[tox]\nenvlist = py3\n[pytest]\npython_files = *test_*.py check_*.py\n",
            ),
            (
                "setup.cfg",
                "[metadata]\nname = x\n[tool:pytest]\npython_files =\n  *test_*.py\n  check_*.py\naddopts = -q\n",
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join(name), text).unwrap();
            let t = TestFiles::read(Some(dir.path()));
            assert!(t.runnable("tests/lint/unittest_lint.py"), "{name}");
            assert!(t.runnable("tests/check_rules.py"), "{name}");
            assert!(t.runnable("tests/test_plain.py"), "{name}");
            assert!(!t.runnable("tests/conftest.py"), "{name}");
            assert!(!t.runnable("tests/data/cases/expression.py"), "{name}");
        }
    }

    #[test]
    fn an_unparsable_configuration_keeps_the_conventions() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("pyproject.toml"), "[tool.pytest.ini_options\n").unwrap();
        let t = TestFiles::read(Some(dir.path()));
        assert!(t.runnable("tests/test_x.py"));
        assert!(!t.runnable("tests/unittest_x.py"));
    }
}
