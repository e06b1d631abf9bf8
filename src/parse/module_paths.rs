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
//! - JavaScript/TypeScript: the path without extension (`/index` names its folder). Bare
//!   imports that name the repository's own code are aliases: a `package.json`'s `name` (a
//!   package importing itself, or a workspace sibling) and `tsconfig.json`/`jsconfig.json`
//!   `compilerOptions.paths`; [`ModulePaths::js_aliases`] lists them for the resolver.
//! - C/C++: none (namespaces are containers).
//!
//! Pure: the index reads the manifests and passes their text in.

use std::collections::{BTreeMap, HashSet};

use crate::symbols::RepoPath;
use crate::util::{join_relative, strip_js_ext};

/// A file that shapes module paths without being parsed for symbols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutFile {
    /// A `Cargo.toml` in folder `dir` (`""` for the root) and its text.
    Cargo { dir: String, text: String },
    /// A `go.mod` in folder `dir` and its text.
    GoMod { dir: String, text: String },
    /// A `package.json`, `tsconfig.json` or `jsconfig.json` (`name`) in folder `dir`.
    Js { dir: String, name: String, text: String },
}

impl LayoutFile {
    /// Manifests read where the walk finds them.
    pub const BUILD_MANIFESTS: [&str; 2] = ["Cargo.toml", "go.mod"];
    /// JavaScript manifests, read in every folder the walk enters (ignore rules may hide them).
    pub const JS_MANIFESTS: [&str; 3] = ["package.json", "tsconfig.json", "jsconfig.json"];

    /// Whether a file name is one the layout depends on.
    pub fn is_layout_name(file_name: &str) -> bool {
        Self::BUILD_MANIFESTS.contains(&file_name) || Self::JS_MANIFESTS.contains(&file_name)
    }
}

#[derive(Debug, Default)]
pub struct ModulePaths {
    python_packages: HashSet<String>,
    /// Folder -> crate name (with `-` as `_`).
    crates: BTreeMap<String, String>,
    /// Folder -> Go module path.
    go_modules: BTreeMap<String, String>,
    /// Bare JavaScript import specifiers that name repository code: (pattern, target path
    /// without extension), a trailing `*` in both standing for the rest of the specifier.
    js_aliases: Vec<(String, String)>,
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
                LayoutFile::Js { dir, name, text } => mp.js_aliases.extend(js_aliases(dir, name, text)),
            }
        }
        // Longest pattern first: `zod/v4/core` before `zod/v4` before `zod`.
        mp.js_aliases
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.cmp(b)));
        mp.js_aliases.dedup_by(|a, b| a.0 == b.0);
        mp
    }

    /// The JavaScript/TypeScript import aliases, longest pattern first.
    pub fn js_aliases(&self) -> &[(String, String)] {
        &self.js_aliases
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
            // The namespace or package a file declares (C#, Kotlin, Scala, PHP, Haskell...).
            _ => package.map(str::to_string).unwrap_or_default(),
        }
    }

    /// The package chain up to the outermost regular package (a folder with `__init__.py`);
    /// folders without one below it are namespace packages (PEP 420: `flask/sansio/app.py`
    /// is `flask.sansio.app` though `sansio/` has no `__init__.py`).
    fn python(&self, path: &RepoPath) -> String {
        let stem = stem(path.file_name());
        let mut ancestors: Vec<&str> = Vec::new();
        let mut dir = path.parent();
        while !dir.is_empty() {
            ancestors.push(dir);
            dir = dir.rsplit_once('/').map_or("", |(parent, _)| parent);
        }
        let outermost = ancestors.iter().rposition(|d| self.python_packages.contains(*d));
        let mut parts: Vec<&str> = ancestors[..outermost.map_or(0, |i| i + 1)]
            .iter()
            .rev()
            .map(|d| d.rsplit_once('/').map_or(*d, |(_, name)| name))
            .collect();
        if stem != "__init__" || parts.is_empty() {
            parts.push(stem);
        }
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

/// Aliases a JavaScript manifest declares: a package's own name (its `main` entry, and
/// `name/*` for paths inside it), and tsconfig `paths` (relative to `baseUrl`).
fn js_aliases(dir: &str, file: &str, text: &str) -> Vec<(String, String)> {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&strip_jsonc(text)) else {
        return Vec::new();
    };
    // `./src/index.ts` -> `src/index`: the module the resolver looks for.
    let strip_ext = |p: &str| strip_js_ext(p).to_string();
    let mut out = Vec::new();
    if file == "package.json" {
        let Some(name) = v.get("name").and_then(|n| n.as_str()) else {
            return out;
        };
        // `exports`: subpaths to targets, picking the condition that names source files.
        let exports: Vec<(String, String)> = match v.get("exports") {
            Some(serde_json::Value::Object(m)) if m.keys().all(|k| k.starts_with('.')) => m
                .iter()
                .filter_map(|(k, t)| Some((k.clone(), export_target(t)?)))
                .collect(),
            Some(t) => export_target(t)
                .map(|t| vec![(".".to_string(), t)])
                .unwrap_or_default(),
            None => Vec::new(),
        };
        for (sub, target) in &exports {
            let pattern = match sub.as_str() {
                "." => name.to_string(),
                s => format!("{name}/{}", s.trim_start_matches("./")),
            };
            out.push((pattern, join_relative(dir, &strip_ext(target))));
        }
        // Else the entry the runtime loads (`main`), or the conventional `index`.
        if !exports.iter().any(|(s, _)| s == ".") {
            let main = v.get("main").and_then(|m| m.as_str()).unwrap_or("index");
            out.push((name.to_string(), join_relative(dir, &strip_ext(main))));
        }
        out.push((format!("{name}/*"), join_relative(dir, "*")));
        return out;
    }
    let Some(opts) = v.get("compilerOptions") else {
        return out;
    };
    let base = opts
        .get("baseUrl")
        .and_then(|b| b.as_str())
        .map_or_else(|| dir.to_string(), |b| join_relative(dir, b));
    for (pattern, targets) in opts
        .get("paths")
        .and_then(|p| p.as_object())
        .into_iter()
        .flatten()
    {
        let Some(first) = targets
            .as_array()
            .and_then(|t| t.first())
            .and_then(|t| t.as_str())
        else {
            continue;
        };
        out.push((pattern.clone(), strip_ext(&join_relative(&base, first))));
    }
    out
}

/// The file an `exports` entry leads to: a plain string, or among conditions the one naming
/// source (`source`, `@scope/source`), then `import`, `require`, `default` (nested ones too).
fn export_target(t: &serde_json::Value) -> Option<String> {
    match t {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Object(m) => {
            let source = m.iter().find(|(k, _)| k.ends_with("source")).map(|(_, v)| v);
            let ordered = ["import", "require", "default", "node"]
                .into_iter()
                .filter_map(|k| m.get(k));
            source.into_iter().chain(ordered).find_map(export_target)
        }
        serde_json::Value::Array(a) => a.iter().find_map(export_target),
        _ => None,
    }
}

/// JSON with comments and trailing commas (tsconfig's dialect) made plain JSON.
fn strip_jsonc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
            }
            _ => out.push(c),
        }
    }
    // Trailing commas before `}` or `]`.
    static TRAILING_COMMA: std::sync::LazyLock<Option<regex::Regex>> =
        std::sync::LazyLock::new(|| regex::Regex::new(r",(\s*[}\]])").ok());
    match TRAILING_COMMA.as_ref() {
        Some(re) => re.replace_all(&out, "$1").into_owned(),
        None => out,
    }
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
    #[test]
    fn js_aliases_from_package_names_and_tsconfig_paths() {
        let layout = [
            super::LayoutFile::Js {
                dir: "packages/zod".into(),
                name: "package.json".into(),
                text: r#"{"name": "zod", "main": "./index.cjs", "exports": {".": {"@zod/source": "./src/index.ts", "import": "./index.js"}, "./mini": {"types": "./mini/index.d.cts", "import": "./mini/index.js"}}}"#.into(),
            },
            super::LayoutFile::Js {
                dir: "packages/zod".into(),
                name: "tsconfig.json".into(),
                text: "{\n  // paths for the tests\n  \"compilerOptions\": {\n    \"baseUrl\": \".\",\n    \"paths\": {\"zod/v4\": [\"./src/v4/index.ts\"], \"@/*\": [\"src/*\"],},\n  },\n}\n".into(),
            },
        ];
        let mp = super::ModulePaths::new(std::iter::empty(), &layout);
        let a: Vec<(&str, &str)> = mp
            .js_aliases()
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        assert_eq!(
            a,
            [
                ("zod/mini", "packages/zod/mini/index"),
                ("zod/v4", "packages/zod/src/v4/index"),
                ("zod/*", "packages/zod/*"),
                ("@/*", "packages/zod/src/*"),
                ("zod", "packages/zod/src/index"),
            ]
        );
    }

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
    fn python_folder_without_init_inside_a_package_is_a_namespace_package() {
        let files = [
            rp("src/flask/__init__.py"),
            rp("src/flask/sansio/app.py"),
            rp("scripts/tool/run.py"),
        ];
        let mp = ModulePaths::new(files.iter().map(|p| (p, "python")), &[]);
        assert_eq!(mp.module_of(&files[1], "python", None), "flask.sansio.app");
        assert_eq!(mp.module_of(&files[0], "python", None), "flask");
        // Outside any regular package: a top-level module.
        assert_eq!(mp.module_of(&files[2], "python", None), "run");
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
