//! `Overview`: a repository map for a newcomer — layout, languages, the most central modules
//! and their key definitions, entry points (`main`, `__main__`, binaries, command-line
//! parsers, HTTP routes), and which top-level parts call which — rendered within a token
//! budget.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::count_tokens;
use crate::graph::CodeGraph;
use crate::index::IndexSnapshot;
use crate::lang::{PathKind, PathRole};
use crate::symbols::SymbolKind;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Area {
    /// A top folder (two levels for `src/`, `crates/`, `lib/`, `packages/`).
    pub path: String,
    pub files: u64,
    pub lines: u64,
    pub languages: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CentralModule {
    pub path: String,
    pub module: String,
    pub rank: f32,
    /// Its most central definitions (names inside the module).
    pub key_symbols: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EntryPoint {
    /// `console-script`, `bin`, `binary`, `package-main` (declared by a manifest), `main`,
    /// `cli`, `http-route`.
    pub kind: &'static str,
    pub path: String,
    pub line: u32,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AreaEdge {
    pub from: String,
    pub to: String,
    /// Resolved references from one area to the other.
    pub references: u64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Overview {
    pub files: u64,
    pub lines: u64,
    pub languages: BTreeMap<String, u64>,
    pub areas: Vec<Area>,
    pub central: Vec<CentralModule>,
    pub entry_points: Vec<EntryPoint>,
    pub area_edges: Vec<AreaEdge>,
}

const MAX_AREAS: usize = 25;
const MAX_CENTRAL: usize = 15;
const MAX_ENTRY_POINTS: usize = 25;
const MAX_EDGES: usize = 20;
/// Folders whose children are the real areas.
const CONTAINERS: &[&str] = &[
    "src", "crates", "lib", "libs", "packages", "pkg", "internal", "cmd", "apps",
];
/// Modules and objects whose calls build a command-line interface.
const CLI_LIBRARIES: &[&str] = &[
    "argparse",
    "click",
    "typer",
    "clap",
    "commander",
    "cobra",
    "yargs",
    "cli",
    "app",
];
/// Decorators and calls that declare HTTP routes (receiver must look like an app or router).
const ROUTE_CALLS: &[&str] = &[
    "route",
    "get",
    "post",
    "put",
    "delete",
    "patch",
    "HandleFunc",
    "Handle",
    "api_view",
];
const ROUTERS: &[&str] = &[
    "app",
    "router",
    "bp",
    "blueprint",
    "api",
    "r",
    "mux",
    "server",
    "routes",
    "http",
];

/// The area a path belongs to.
pub fn area_of(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        [single] => (*single).to_string(),
        [first, second, _, ..] if CONTAINERS.contains(first) => format!("{first}/{second}"),
        [first, ..] => (*first).to_string(),
        [] => String::new(),
    }
}

impl Overview {
    pub fn build(snapshot: &IndexSnapshot, graph: Option<&CodeGraph>) -> Overview {
        let s = &snapshot.manifest.summary;
        let languages = s.by_language.iter().map(|(l, v)| (l.clone(), v.files)).collect();
        let mut areas: BTreeMap<String, (u64, u64, BTreeMap<String, u64>)> = BTreeMap::new();
        for r in &snapshot.table.files {
            let a = areas.entry(area_of(r.path.as_str())).or_default();
            a.0 += 1;
            a.1 += u64::from(r.lines);
            *a.2.entry(r.language.clone()).or_default() += 1;
        }
        let mut areas: Vec<Area> = areas
            .into_iter()
            .map(|(path, (files, lines, langs))| {
                let mut l: Vec<(String, u64)> = langs.into_iter().collect();
                l.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                Area {
                    path,
                    files,
                    lines,
                    languages: l.into_iter().map(|x| x.0).collect(),
                }
            })
            .collect();
        areas.sort_by(|a, b| b.lines.cmp(&a.lines).then(a.path.cmp(&b.path)));
        areas.truncate(MAX_AREAS);
        let (central, entry_points, area_edges) = match graph {
            Some(g) => (central(g), entry_points(g), area_edges(g)),
            None => (Vec::new(), Vec::new(), Vec::new()),
        };
        Overview {
            files: s.files,
            lines: s.lines,
            languages,
            areas,
            central,
            entry_points,
            area_edges,
        }
    }

    /// Puts the entry points the manifests declare first (console scripts, bins, package
    /// mains), each once.
    pub fn with_manifest_entry_points(mut self, declared: Vec<EntryPoint>) -> Overview {
        let mut all = declared;
        for e in std::mem::take(&mut self.entry_points) {
            if !all
                .iter()
                .any(|d| d.path == e.path && (d.line == e.line || d.kind == e.kind))
            {
                all.push(e);
            }
        }
        all.truncate(MAX_ENTRY_POINTS);
        self.entry_points = all;
        self
    }

    /// Markdown, cut to `budget` tokens (sections in order; each is cut at an item).
    pub fn markdown(&self, budget: usize) -> String {
        let mut out = String::new();
        let push = |out: &mut String, line: String| -> bool {
            if count_tokens(out) + count_tokens(&line) > budget {
                return false;
            }
            out.push_str(&line);
            true
        };
        let langs: Vec<String> = self.languages.iter().map(|(l, n)| format!("{l} {n}")).collect();
        push(
            &mut out,
            format!(
                "## Overview\n\n{} files, {} lines ({}).\n\n### Layout\n",
                self.files,
                self.lines,
                langs.join(", ")
            ),
        );
        for a in &self.areas {
            let slash = if a.files == 1 && a.path.contains('.') {
                ""
            } else {
                "/"
            };
            if !push(
                &mut out,
                format!(
                    "- `{}{slash}` — {} files, {} lines, {}\n",
                    a.path,
                    a.files,
                    a.lines,
                    a.languages.join(", ")
                ),
            ) {
                return out;
            }
        }
        if !self.central.is_empty() && push(&mut out, "\n### Central modules (by PageRank)\n".into()) {
            for c in &self.central {
                if !push(
                    &mut out,
                    format!("- `{}` (`{}`): {}\n", c.path, c.module, c.key_symbols.join(", ")),
                ) {
                    return out;
                }
            }
        }
        if !self.entry_points.is_empty() && push(&mut out, "\n### Entry points\n".into()) {
            for e in &self.entry_points {
                if !push(
                    &mut out,
                    format!("- {}: `{}` at `{}:{}`\n", e.kind, e.name, e.path, e.line),
                ) {
                    return out;
                }
            }
        }
        if !self.area_edges.is_empty() && push(&mut out, "\n### How the parts call each other\n".into()) {
            for e in &self.area_edges {
                if !push(
                    &mut out,
                    format!("- `{}` -> `{}` ({} references)\n", e.from, e.to, e.references),
                ) {
                    return out;
                }
            }
        }
        out
    }
}

fn local(g: &CodeGraph, fi: usize, d: usize) -> Option<String> {
    g.defs(fi).get(d)?;
    Some(g.local_name(fi, d as u32))
}

fn central(g: &CodeGraph) -> Vec<CentralModule> {
    let mut files: Vec<(usize, f32)> = g
        .rank
        .iter()
        .enumerate()
        .filter(|(fi, _)| {
            g.files
                .get(*fi)
                .is_some_and(|f| PathKind::of(f.path.as_str()).role == PathRole::Source)
        })
        .map(|(fi, r)| (fi, r.iter().sum()))
        .collect();
    files.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    files
        .into_iter()
        .take(MAX_CENTRAL)
        .filter_map(|(fi, rank)| {
            let f = g.files.get(fi)?;
            let mut defs: Vec<(usize, f32)> = g.rank.get(fi)?.iter().copied().enumerate().collect();
            defs.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            Some(CentralModule {
                path: f.path.to_string(),
                module: f.module.to_string(),
                rank,
                // An impl and its type share a name: each name once.
                key_symbols: {
                    let mut names: Vec<String> = Vec::new();
                    for n in defs.iter().filter_map(|(d, _)| local(g, fi, *d)) {
                        if !names.contains(&n) {
                            names.push(n);
                        }
                        if names.len() == 4 {
                            break;
                        }
                    }
                    names
                },
            })
        })
        .collect()
}

/// The graph's entry points: package mains, binaries, `main` functions, CLI commands and HTTP routes.
pub fn entry_points(g: &CodeGraph) -> Vec<EntryPoint> {
    let mut out = Vec::new();
    for (fi, f) in g.files.iter().enumerate() {
        let path = f.path.as_str();
        if PathKind::of(path).role != PathRole::Source {
            continue;
        }
        let file = path.rsplit('/').next().unwrap_or(path);
        if file == "__main__.py" {
            out.push(EntryPoint {
                kind: "package-main",
                path: path.into(),
                line: 1,
                name: f.module.to_string(),
            });
        }
        if path.ends_with("src/main.rs") || path.contains("/bin/") && path.ends_with(".rs") {
            out.push(EntryPoint {
                kind: "binary",
                path: path.into(),
                line: 1,
                name: f.module.to_string(),
            });
        }
        for d in g.defs(fi) {
            if d.name == "main" && matches!(d.kind, SymbolKind::Function) && d.container.is_empty() {
                out.push(EntryPoint {
                    kind: "main",
                    path: path.into(),
                    line: d.line,
                    name: "main".into(),
                });
            }
        }
        let mut cli = false;
        for r in &f.refs {
            let recv = r
                .receiver
                .as_deref()
                .unwrap_or("")
                .rsplit('.')
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            if !cli && is_cli_declaration(r, &recv) {
                out.push(EntryPoint {
                    kind: "cli",
                    path: path.into(),
                    line: r.line,
                    name: r.name.to_string(),
                });
                cli = true;
            }
            if ROUTE_CALLS.contains(&r.name.as_str()) && ROUTERS.contains(&recv.as_str()) {
                let name = format!("{}.{}", r.receiver.as_deref().unwrap_or(""), r.name);
                out.push(EntryPoint {
                    kind: "http-route",
                    path: path.into(),
                    line: r.line,
                    name,
                });
            }
        }
    }
    out.sort_by(|a, b| {
        a.kind
            .cmp(b.kind)
            .then(a.path.cmp(&b.path))
            .then(a.line.cmp(&b.line))
    });
    // Keep every kind visible: at most a third of the list per kind.
    let mut per_kind: HashMap<&str, usize> = HashMap::new();
    out.retain(|e| {
        let n = per_kind.entry(e.kind).or_default();
        *n += 1;
        *n <= MAX_ENTRY_POINTS / 3
    });
    out.truncate(MAX_ENTRY_POINTS);
    out
}

/// A call that declares a command-line interface: `argparse.ArgumentParser()`, `add_parser`,
/// `@click.command()`, `@app.command()`, `typer.Typer()`, `&cobra.Command{..}` (Rust
/// binaries are found by their `main` and bin targets). A type annotation or a bare `Command(..)` in a library is not one
/// (a function that takes a command object is no entry point).
fn is_cli_declaration(r: &crate::graph::RefNode, recv: &str) -> bool {
    use crate::symbols::ReferenceKind;
    if !matches!(r.kind, ReferenceKind::Call | ReferenceKind::Class) {
        return false;
    }
    let library = CLI_LIBRARIES.contains(&recv);
    match r.name.as_str() {
        "ArgumentParser" | "add_parser" | "add_subparsers" => true,
        "command" | "group" | "Command" | "Parser" | "App" | "Typer" => library,
        _ => false,
    }
}

fn area_edges(g: &CodeGraph) -> Vec<AreaEdge> {
    let mut counts: HashMap<(String, String), u64> = HashMap::new();
    let areas: Vec<String> = g.files.iter().map(|f| area_of(f.path.as_str())).collect();
    for (fi, res) in g.resolved.iter().enumerate() {
        let Some(from) = areas.get(fi) else { continue };
        for r in &res.refs {
            if r.targets.len() != 1 {
                continue;
            }
            let Some(to) = r.targets.first().and_then(|t| areas.get(t.file.index())) else {
                continue;
            };
            // A library does not depend on its tests, examples or docs: a reference from code
            // into them is a name that happened to match, not a dependency.
            let support = |area: &str| PathKind::of(&format!("{area}/x")).role != PathRole::Source;
            if to != from && (support(from) || !support(to)) {
                *counts.entry((from.clone(), to.clone())).or_default() += 1;
            }
        }
    }
    let mut edges: Vec<AreaEdge> = counts
        .into_iter()
        .map(|((from, to), references)| AreaEdge { from, to, references })
        .collect();
    edges.sort_by(|a, b| {
        b.references
            .cmp(&a.references)
            .then(a.from.cmp(&b.from))
            .then(a.to.cmp(&b.to))
    });
    edges.truncate(MAX_EDGES);
    edges
}

#[cfg(test)]
mod tests {
    use super::area_of;

    #[test]
    fn areas_look_inside_container_folders() {
        assert_eq!(area_of("src/requests/models.py"), "src/requests");
        assert_eq!(area_of("crates/core/src/lib.rs"), "crates/core");
        assert_eq!(area_of("xarray/core/dataset.py"), "xarray");
        assert_eq!(area_of("setup.py"), "setup.py");
        assert_eq!(area_of("src/main.rs"), "src");
    }
}
