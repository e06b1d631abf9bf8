//! `TestCommands`: which files hold tests, which definitions are test items a runner can
//! select, and the command that runs them — so that every command `ken impact` suggests
//! collects at least one test.
//!
//! - pytest: `path::test_f`, `path::Class::test_m`, `path::TestClass`; a nested function or
//!   a helper method is not an item: its enclosing test (or test class) is.
//! - cargo: a function is a test only with a test attribute (`#[test]`, `#[tokio::test]`,
//!   `#[rstest]`...) above it; filters are libtest names (the module path inside the crate);
//!   `--test NAME` only for integration suites (`<crate>/tests/NAME.rs`,
//!   `<crate>/tests/NAME/main.rs`), never for a unit-test module that lives in a `tests`
//!   folder under `src/`; `-p PACKAGE` for a crate below the repository root.
//! - go: `-run '^TestX$'` only for top-level `TestX` functions; `cd` into a module root that is
//!   not the repository root.
//! - jest and mocha select by test titles, which are strings, not definitions: whole files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::TestToRun;
use crate::graph::{CodeGraph, Family, SymbolId};
use crate::lang::PathKind;
use crate::symbols::SymbolKind;

pub struct TestCommands<'g> {
    graph: &'g CodeGraph,
    by_path: &'g HashMap<&'g str, usize>,
    /// The working tree, for test attributes and manifests; without it commands are built
    /// from the graph alone.
    root: Option<PathBuf>,
    /// Source files read for test attributes, each read once.
    sources: std::cell::RefCell<HashMap<String, Option<String>>>,
}

impl<'g> TestCommands<'g> {
    pub fn new(graph: &'g CodeGraph, by_path: &'g HashMap<&'g str, usize>, root: Option<&Path>) -> Self {
        TestCommands {
            graph,
            by_path,
            root: root.map(Path::to_path_buf),
            sources: Default::default(),
        }
    }

    /// The test item a reached definition belongs to, as a qualified name, or `None` when it
    /// is not inside one a runner can select (its file is then run whole).
    pub fn test_item(&self, s: SymbolId) -> Option<String> {
        let f = self.graph.files.get(s.file.index())?;
        let callable = |d: u32| {
            f.defs
                .get(d as usize)
                .is_some_and(|x| matches!(x.kind, SymbolKind::Function | SymbolKind::Method))
        };
        // Out of nested functions and closures: the outermost function is the candidate.
        let mut d = s.def;
        while let Some(p) = f.defs.get(d as usize)?.parent
            && callable(p)
        {
            d = p;
        }
        let def = f.defs.get(d as usize)?;
        let parent = def.parent.and_then(|p| f.defs.get(p as usize));
        let item = |d: u32| Some(f.qualified(d));
        match Family::of(&f.language) {
            Family::Python => {
                let test_fn = callable(d) && def.name.starts_with("test");
                match parent {
                    None if test_fn => item(d),
                    Some(c) if c.kind == SymbolKind::Class => {
                        let class = def.parent?;
                        match (test_fn, c.name.starts_with("Test")) {
                            (true, _) => item(d),
                            (false, true) => item(class),
                            (false, false) => None,
                        }
                    }
                    // A test class itself.
                    None if def.kind == SymbolKind::Class && def.name.starts_with("Test") => item(d),
                    _ => None,
                }
            }
            Family::Rust => {
                (callable(d) && self.has_test_attribute(f.path.as_str(), def.line)).then(|| f.qualified(d))
            }
            Family::Go => {
                let rest = def.name.strip_prefix("Test")?;
                let exported = rest.chars().next().is_none_or(|c| !c.is_lowercase());
                (def.kind == SymbolKind::Function && parent.is_none() && exported).then(|| f.qualified(d))
            }
            _ => None,
        }
    }

    fn has_test_attribute(&self, path: &str, line: u32) -> bool {
        let mut sources = self.sources.borrow_mut();
        let source = sources.entry(path.to_string()).or_insert_with(|| {
            let root = self.root.as_ref()?;
            crate::util::read_regular(&root.join(path))
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
        });
        source.as_deref().is_some_and(|s| has_test_attribute(s, line))
    }

    /// The command that runs one test item (or the whole file).
    pub fn command(&self, path: &str, name: Option<&str>) -> Option<String> {
        let f = self.graph.files.get(*self.by_path.get(path)?)?;
        let family = Family::of(&f.language);
        let local = name.map(|n| {
            n.strip_prefix(&format!("{}{}", f.module, family.separator()))
                .unwrap_or(n)
        });
        Some(match family {
            Family::Python => match local {
                Some(l) => format!("pytest {path}::{}", l.replace('.', "::")),
                None => format!("pytest {path}"),
            },
            Family::Rust => self.cargo(path, &f.module, local)?,
            Family::Go => {
                let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
                let (cd, rel) = match self.manifest_dir(dir, "go.mod", |_| true) {
                    Some((m, _)) if !m.is_empty() => (format!("cd {m} && "), strip_dir(dir, &m).to_string()),
                    _ => (String::new(), dir.to_string()),
                };
                let pkg = if rel.is_empty() {
                    ".".to_string()
                } else {
                    format!("./{rel}")
                };
                match local {
                    Some(l) => format!("{cd}go test {pkg} -run '^{}$'", l.rsplit('.').next().unwrap_or(l)),
                    None => format!("{cd}go test {pkg}"),
                }
            }
            Family::Js if mocha_layout(path) => format!("npx mocha {path}"),
            Family::Js => format!("npx jest {path}"),
            // Languages whose `language.toml` names a test command (rspec, phpunit, dotnet
            // test, mix test...): the whole file.
            _ => crate::lang::LanguageRegistry::builtin()
                .ok()?
                .by_name(&f.language)?
                .test_command_for(&[path])?,
        })
    }

    /// The command that runs one case of a data-driven test: its driver, selected by the
    /// case's id where the runner selects by name (`pytest tests/test_format.py -k case`).
    pub fn case_command(&self, driver: &str, case: &str) -> Option<String> {
        match self.family_of(driver)? {
            Family::Python => Some(format!("pytest {driver} -k {case}")),
            _ => self.command(driver, None),
        }
    }

    fn cargo(&self, path: &str, module: &str, local: Option<&str>) -> Option<String> {
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        let (crate_dir, manifest) = self
            .manifest_dir(dir, "Cargo.toml", |t| t.contains("[package]"))
            .unwrap_or_default();
        let package = match crate_dir.is_empty() {
            true => String::new(),
            false => package_name(&manifest).map_or_else(String::new, |p| format!(" -p {p}")),
        };
        let rel = strip_dir(path, &crate_dir);
        // An integration suite: `tests/NAME.rs` or `tests/NAME/main.rs` (and its modules).
        let suite = rel.strip_prefix("tests/").and_then(|r| {
            let (first, rest) = r.split_once('/').unwrap_or((r, ""));
            match rest {
                "" => first.strip_suffix(".rs"),
                _ => Some(first),
            }
        });
        // libtest names a test by its path inside the crate (the crate itself left out).
        let inner = |m: &str| m.split_once("::").map_or("", |(_, r)| r).to_string();
        let filter = match local {
            Some(l) => {
                let m = inner(module);
                if m.is_empty() {
                    l.to_string()
                } else {
                    format!("{m}::{l}")
                }
            }
            None => inner(module),
        };
        Some(match suite {
            Some(target) if filter.is_empty() => format!("cargo test{package} --test {target}"),
            Some(target) => format!("cargo test{package} --test {target} {filter}"),
            None if filter.is_empty() => format!("cargo test{package}"),
            None => format!("cargo test{package} {filter}"),
        })
    }

    /// The nearest folder at or above `dir` holding manifest `name` whose text passes
    /// `keep`, with that text.
    fn manifest_dir(&self, dir: &str, name: &str, keep: impl Fn(&str) -> bool) -> Option<(String, String)> {
        let root = self.root.as_ref()?;
        let mut d = dir.to_string();
        loop {
            if let Some(text) = crate::util::read_regular(&root.join(&d).join(name))
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                && keep(&text)
            {
                return Some((d, text));
            }
            if d.is_empty() {
                return None;
            }
            d = d.rsplit_once('/').map_or("", |(p, _)| p).to_string();
        }
    }

    /// One command per runner covering every test found: pytest and jest/mocha take many
    /// files; cargo and go get one command per test (at most ten).
    pub fn commands(&self, tests: &[TestToRun]) -> Vec<String> {
        let mut py: Vec<&str> = Vec::new();
        let mut jest: Vec<&str> = Vec::new();
        let mut mocha: Vec<&str> = Vec::new();
        let mut other: Vec<String> = Vec::new();
        // Data cases per driver, selected by id: `pytest DRIVER -k 'a or b'`.
        let mut cases: Vec<(&str, Vec<&str>)> = Vec::new();
        for t in tests {
            if let (Some(d), Some(case)) = (&t.driver, &t.name)
                && self.family_of(d) == Some(Family::Python)
            {
                match cases.iter_mut().find(|(x, _)| x == d) {
                    Some((_, v)) => v.push(case),
                    None => cases.push((d, vec![case])),
                }
            }
        }
        for TestToRun {
            path,
            command,
            driver,
            ..
        } in tests
        {
            // A data case runs through its driver, never by itself; one without a known
            // driver has no command.
            if command.is_none() {
                continue;
            }
            if driver.is_some() {
                if let Some(c) = command
                    && self.family_of(path) != Some(Family::Python)
                    && !other.contains(c)
                {
                    other.push(c.clone());
                }
                continue;
            }
            let Some(f) = self
                .by_path
                .get(path.as_str())
                .and_then(|&i| self.graph.files.get(i))
            else {
                continue;
            };
            let list = match Family::of(&f.language) {
                Family::Python => &mut py,
                Family::Js if mocha_layout(path) => &mut mocha,
                Family::Js => &mut jest,
                _ => {
                    if let Some(c) = command
                        && !other.contains(c)
                    {
                        other.push(c.clone());
                    }
                    continue;
                }
            };
            if !list.contains(&path.as_str()) {
                list.push(path);
            }
        }
        let mut out = Vec::new();
        for (runner, files) in [("pytest", py), ("npx jest", jest), ("npx mocha", mocha)] {
            if !files.is_empty() {
                out.push(format!("{runner} {}", files.join(" ")));
            }
        }
        for (driver, ids) in cases {
            out.push(format!("pytest {driver} -k '{}'", ids.join(" or ")));
        }
        out.extend(other.into_iter().take(10));
        out
    }

    fn family_of(&self, path: &str) -> Option<Family> {
        let f = self.graph.files.get(*self.by_path.get(path)?)?;
        Some(Family::of(&f.language))
    }
}

/// `[package] name` of a Cargo manifest (what `cargo test -p` takes).
fn package_name(cargo_toml: &str) -> Option<String> {
    let v = cargo_toml.parse::<toml::Table>().ok()?;
    Some(v.get("package")?.get("name")?.as_str()?.to_string())
}

/// A test attribute on the item starting at `line` (1-based): the attribute lines right above
/// it (doc comments and other attributes may sit between).
fn has_test_attribute(source: &str, line: u32) -> bool {
    let lines: Vec<&str> = source.lines().collect();
    let mut i = (line as usize).saturating_sub(1);
    // The item's own line may carry the attribute too (`#[test] fn a() {}`).
    if lines.get(i).is_some_and(|l| is_test_attribute(l)) {
        return true;
    }
    while i > 0 {
        i -= 1;
        let l = lines.get(i).map_or("", |l| l.trim());
        if is_test_attribute(l) {
            return true;
        }
        if !(l.starts_with("#[") || l.starts_with("//") || l.ends_with(")]") || l.is_empty()) {
            return false;
        }
    }
    false
}

/// `#[test]`, `#[tokio::test]`, `#[tokio::test(flavor = ..)]`, `#[rstest]`, `#[test_case(..)]`.
fn is_test_attribute(line: &str) -> bool {
    let l = line.trim_start();
    let Some(attr) = l.strip_prefix("#[") else {
        return false;
    };
    let name: String = attr
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
        .collect();
    let last = name.rsplit("::").next().unwrap_or("");
    matches!(last, "test" | "rstest" | "test_case" | "quickcheck" | "proptest")
}

fn strip_dir<'a>(path: &'a str, dir: &str) -> &'a str {
    if dir.is_empty() {
        return path;
    }
    path.strip_prefix(dir)
        .and_then(|r| r.strip_prefix('/'))
        .unwrap_or(path)
}

/// Suites in a `test/` folder without a `.test.`/`.spec.` name are mocha's layout: jest
/// collects only `*.test.*`, `*.spec.*` and `__tests__/` by default.
fn mocha_layout(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    let jest_named = [".test.", ".spec."].iter().any(|m| file.contains(m)) || path.contains("__tests__/");
    PathKind::of(path).is_test_suite() && !jest_named
}

/// A file name without folders and its last extension.
pub fn stem(path: &str) -> Option<String> {
    let file = path.rsplit('/').next()?;
    let s = file.rsplit_once('.').map_or(file, |(a, _)| a);
    Some(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runnable_test_file(path: &str) -> bool {
        PathKind::of(path).is_test_suite()
    }

    #[test]
    fn runnable_test_files_and_stems() {
        assert!(runnable_test_file("tests/test_basic.py"));
        assert!(runnable_test_file("tests/regression.rs"));
        assert!(runnable_test_file("src/x.test.ts"));
        assert!(!runnable_test_file("tests/conftest.py"));
        assert!(!runnable_test_file("tests/test_apps/cliapp/app.py"));
        assert!(!runnable_test_file("tests/util.rs"));
        assert!(runnable_test_file("test/app.router.js"));
        assert!(runnable_test_file("packages/core/test/request.ts"));
        assert!(!runnable_test_file("test/fixtures/server.js"));
        assert!(!runnable_test_file("test/support/env.js"));
        assert!(!runnable_test_file("test/types.d.ts"));
        assert!(!runnable_test_file("src/flask/testing.py"));
        assert!(mocha_layout("test/app.router.js"));
        assert!(!mocha_layout("test/app.test.js"));
        assert_eq!(stem("src/walk.rs").as_deref(), Some("walk"));
        assert_eq!(stem("tests/test_walk.py").as_deref(), Some("test_walk"));
    }

    #[test]
    fn test_files_and_commands_of_the_languages_that_declare_them() {
        for path in [
            "spec/models/user_spec.rb",
            "test/shop/cart_test.exs",
            "Tests/AppTests/CartTests.swift",
            "tests/Unit/CartTest.php",
            "src/test/kotlin/com/acme/CartTest.kt",
            "test/deploy.bats",
        ] {
            assert!(runnable_test_file(path), "{path}");
        }
        for path in [
            "lib/shop/cart.ex",
            "Sources/App/Cart.swift",
            "app/models/user.rb",
            "src/Cart.php",
        ] {
            assert!(!runnable_test_file(path), "{path}");
        }
        let registry = crate::lang::LanguageRegistry::builtin().unwrap();
        let command = |lang: &str, file: &str| registry.by_name(lang).unwrap().test_command_for(&[file]);
        assert_eq!(
            command("ruby", "spec/a_spec.rb").as_deref(),
            Some("bundle exec rspec spec/a_spec.rb")
        );
        assert_eq!(
            command("kotlin", "src/test/kotlin/a/CartTest.kt").as_deref(),
            Some("./gradlew test --tests CartTest")
        );
        assert_eq!(
            command("haskell", "test/CartSpec.hs").as_deref(),
            Some("cabal test")
        );
    }

    #[test]
    fn rust_test_attributes() {
        let src = "fn helper() {}\n\n#[test]\nfn a() {}\n#[tokio::test(flavor = \"multi_thread\")]\n/// doc\nasync fn b() {}\n#[cfg(test)]\nfn c() {}\n#[test] fn d() {}\n";
        assert!(!has_test_attribute(src, 1));
        assert!(has_test_attribute(src, 4));
        assert!(has_test_attribute(src, 7));
        assert!(!has_test_attribute(src, 9));
        assert!(has_test_attribute(src, 10));
    }
}
