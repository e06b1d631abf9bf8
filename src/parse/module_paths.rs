//! `ModulePaths`: each file's module path, following its ecosystem's layout.
//!
//! - Python: the chain of enclosing `__init__.py` packages (`src/requests/api.py` is
//!   `requests.api` when `src/requests/__init__.py` exists); a file outside any package is a
//!   top-level module named after its stem.
//! - Rust: the crate from the nearest `Cargo.toml` with a `[package]` (or `[lib] name`), then
//!   the file's path under `src/` (`lib.rs`/`main.rs` are the root, `mod.rs` is its folder,
//!   `src/bin/x.rs` is crate `x`); `tests/`, `examples/`, `benches/` files are crates of
//!   their own.
//! - Go: the nearest `go.mod`'s module path plus the folder.
//! - Java: the declared `package`, else the folder.
//! - JavaScript/TypeScript: the path without extension (`/index` names its folder).
//! - C/C++: none (namespaces are containers).
//!
//! Pure: the index reads the manifests and passes their text in.

use std::collections::{BTreeMap, HashSet};

use crate::symbols::RepoPath;

/// A file that shapes module paths without being parsed for symbols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutFile {
    /// A `Cargo.toml` in folder `dir` (`""` for the root) and its text.
    Cargo { dir: String, text: String },
    /// A `go.mod` in folder `dir` and its text.
    GoMod { dir: String, text: String },
}

impl LayoutFile {
    /// Whether a file name is one the layout depends on.
    pub fn is_layout_name(file_name: &str) -> bool {
        matches!(file_name, "Cargo.toml" | "go.mod")
    }
}

#[derive(Debug, Default)]
pub struct ModulePaths {
    python_packages: HashSet<String>,
    /// Folder -> crate name (with `-` as `_`).
    crates: BTreeMap<String, String>,
    /// Folder -> Go module path.
    go_modules: BTreeMap<String, String>,
}

impl ModulePaths {
    /// `files` are the indexed files with their language names; `layout` the manifests.
    pub fn new<'a>(files: impl IntoIterator<Item = (&'a RepoPath, &'a str)>, layout: &[LayoutFile]) -> Self {
        let mut mp = ModulePaths::default();
        for (path, lang) in files {
            if lang == "python" && matches!(path.file_name(), "__init__.py" | "__init__.pyi") {
                mp.python_packages.insert(path.parent().to_string());
            }
        }
        for l in layout {
            match l {
                LayoutFile::Cargo { dir, text } => {
                    if let Some(name) = crate_name(text) {
                        mp.crates.insert(dir.clone(), name);
                    }
                }
                LayoutFile::GoMod { dir, text } => {
                    if let Some(m) = go_module(text) {
                        mp.go_modules.insert(dir.clone(), m);
                    }
                }
            }
        }
        mp
    }

    /// The module path of `path`, given its language and the package it declares.
    pub fn module_of(&self, path: &RepoPath, lang: &str, package: Option<&str>) -> String {
        match lang {
            "python" => self.python(path),
            "rust" => self.rust(path),
            "go" => self.go(path, package),
            "java" => package
                .map(str::to_string)
                .unwrap_or_else(|| path.parent().replace('/', ".")),
            "javascript" | "typescript" | "tsx" => js_module(path),
            _ => String::new(),
        }
    }

    fn python(&self, path: &RepoPath) -> String {
        let stem = stem(path.file_name());
        let mut parts: Vec<&str> = Vec::new();
        if stem != "__init__" {
            parts.push(stem);
        }
        let mut dir = path.parent();
        while self.python_packages.contains(dir) && !dir.is_empty() {
            let (parent, name) = dir.rsplit_once('/').unwrap_or(("", dir));
            parts.push(name);
            dir = parent;
        }
        if parts.is_empty() {
            parts.push(stem);
        }
        parts.reverse();
        parts.join(".")
    }

    fn rust(&self, path: &RepoPath) -> String {
        let (crate_dir, crate_name) = nearest(&self.crates, path.parent())
            .map(|(d, n)| (d, n.as_str()))
            .unwrap_or(("", "crate"));
        let rel = strip_dir(path.as_str(), crate_dir);
        let rel = rel.strip_suffix(".rs").unwrap_or(rel);
        let mut segs: Vec<&str> = rel.split('/').collect();
        let root: String = match segs.first().copied() {
            Some("src") if segs.get(1) == Some(&"bin") && segs.len() > 2 => {
                segs.drain(..2);
                let bin = segs.remove(0).to_string();
                bin.replace('-', "_")
            }
            Some("src") => {
                segs.remove(0);
                crate_name.to_string()
            }
            Some("tests" | "examples" | "benches") if segs.len() > 1 => {
                segs.remove(0);
                segs.remove(0).replace('-', "_")
            }
            _ => crate_name.to_string(),
        };
        if matches!(segs.last(), Some(&("lib" | "main" | "mod"))) {
            segs.pop();
        }
        std::iter::once(root.as_str())
            .chain(segs)
            .collect::<Vec<_>>()
            .join("::")
    }

    fn go(&self, path: &RepoPath, package: Option<&str>) -> String {
        let dir = path.parent();
        match nearest(&self.go_modules, dir) {
            Some((mod_dir, module)) => {
                let rel = strip_dir(dir, mod_dir);
                if rel.is_empty() {
                    module.clone()
                } else {
                    format!("{module}/{rel}")
                }
            }
            None if dir.is_empty() => package.unwrap_or("main").to_string(),
            None => dir.to_string(),
        }
    }
}

fn stem(file_name: &str) -> &str {
    file_name.rsplit_once('.').map(|(s, _)| s).unwrap_or(file_name)
}

fn js_module(path: &RepoPath) -> String {
    let p = path.as_str();
    let no_ext = p.rsplit_once('.').map(|(s, _)| s).unwrap_or(p);
    // `a/b.d.ts` declares `a/b`.
    let no_ext = no_ext.strip_suffix(".d").unwrap_or(no_ext);
    match no_ext.strip_suffix("/index") {
        Some(dir) => dir.to_string(),
        None if no_ext == "index" => String::new(),
        None => no_ext.to_string(),
    }
}

/// `a/b/c.rs` under `a` is `b/c.rs`; everything is under `""`.
fn strip_dir<'p>(path: &'p str, dir: &str) -> &'p str {
    if dir.is_empty() {
        path
    } else {
        path.strip_prefix(dir)
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(path)
    }
}

/// The entry for the nearest folder at or above `dir`.
fn nearest<'m, V>(map: &'m BTreeMap<String, V>, dir: &str) -> Option<(&'m str, &'m V)> {
    let mut d = dir;
    loop {
        if let Some((k, v)) = map.get_key_value(d) {
            return Some((k.as_str(), v));
        }
        if d.is_empty() {
            return None;
        }
        d = d.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
    }
}

fn crate_name(cargo_toml: &str) -> Option<String> {
    let doc: toml::Table = toml::from_str(cargo_toml).ok()?;
    let lib_name = doc
        .get("lib")
        .and_then(|l| l.get("name"))
        .and_then(|n| n.as_str());
    let pkg_name = doc
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(|n| n.as_str());
    lib_name.or(pkg_name).map(|n| n.replace('-', "_"))
}

fn go_module(go_mod: &str) -> Option<String> {
    go_mod.lines().find_map(|l| {
        let rest = l.trim().strip_prefix("module")?;
        let m = rest.trim().trim_matches('"');
        (!m.is_empty() && rest.starts_with(char::is_whitespace)).then(|| m.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rp(s: &str) -> RepoPath {
        RepoPath::parse(s).unwrap()
    }

    #[test]
    fn python_src_layout_uses_packages() {
        let files = [
            rp("src/requests/__init__.py"),
            rp("src/requests/api.py"),
            rp("tests/test_api.py"),
        ];
        let mp = ModulePaths::new(files.iter().map(|p| (p, "python")), &[]);
        assert_eq!(mp.module_of(&files[1], "python", None), "requests.api");
        assert_eq!(mp.module_of(&files[0], "python", None), "requests");
        assert_eq!(mp.module_of(&files[2], "python", None), "test_api");
    }

    #[test]
    fn rust_workspace_crates_and_module_files() {
        let layout = [
            LayoutFile::Cargo {
                dir: "".into(),
                text: "[workspace]\nmembers=[\"crates/*\"]\n".into(),
            },
            LayoutFile::Cargo {
                dir: "crates/grep-cli".into(),
                text: "[package]\nname = \"grep-cli\"\n".into(),
            },
        ];
        let mp = ModulePaths::new(std::iter::empty(), &layout);
        let m = |p: &str| mp.module_of(&rp(p), "rust", None);
        assert_eq!(m("crates/grep-cli/src/lib.rs"), "grep_cli");
        assert_eq!(m("crates/grep-cli/src/a/mod.rs"), "grep_cli::a");
        assert_eq!(m("crates/grep-cli/src/a/b.rs"), "grep_cli::a::b");
        assert_eq!(m("crates/grep-cli/src/bin/tool.rs"), "tool");
        assert_eq!(m("crates/grep-cli/tests/it.rs"), "it");
        assert_eq!(m("src/main.rs"), "crate");
    }

    #[test]
    fn go_java_js_layouts() {
        let layout = [LayoutFile::GoMod {
            dir: "".into(),
            text: "module example.com/m\n\ngo 1.22\n".into(),
        }];
        let mp = ModulePaths::new(std::iter::empty(), &layout);
        assert_eq!(
            mp.module_of(&rp("pkg/util/x.go"), "go", Some("util")),
            "example.com/m/pkg/util"
        );
        assert_eq!(mp.module_of(&rp("main.go"), "go", Some("main")), "example.com/m");
        assert_eq!(
            mp.module_of(&rp("src/A.java"), "java", Some("com.acme")),
            "com.acme"
        );
        assert_eq!(
            mp.module_of(&rp("src/lib/index.ts"), "typescript", None),
            "src/lib"
        );
        assert_eq!(mp.module_of(&rp("types/a.d.ts"), "typescript", None), "types/a");
    }
}
