//! Entry points that the project's manifests declare: console scripts (`pyproject.toml`
//! `[project.scripts]` and Poetry's, `setup.cfg` `console_scripts`), Cargo `[[bin]]` targets,
//! and npm `bin`/`main`. Each is placed at the file (and, for a Python script, the function)
//! it names when the index has it.

use super::EntryPoint;
use crate::graph::CodeGraph;

/// A manifest file's name (at the repository root) and its text.
pub type ManifestText = (String, String);

/// The manifests read for entry points.
pub const ENTRY_MANIFESTS: [&str; 4] = ["pyproject.toml", "setup.cfg", "Cargo.toml", "package.json"];

pub fn manifest_entry_points(manifests: &[ManifestText], g: Option<&CodeGraph>) -> Vec<EntryPoint> {
    let mut out = Vec::new();
    for (name, text) in manifests {
        match name.as_str() {
            "pyproject.toml" => {
                let Ok(v) = text.parse::<toml::Table>() else {
                    continue;
                };
                let tables = [
                    v.get("project").and_then(|p| p.get("scripts")),
                    v.get("project").and_then(|p| p.get("gui-scripts")),
                    v.get("tool")
                        .and_then(|t| t.get("poetry"))
                        .and_then(|p| p.get("scripts")),
                ];
                for t in tables.into_iter().flatten().filter_map(|t| t.as_table()) {
                    for (script, target) in t {
                        if let Some(target) = target.as_str() {
                            out.extend(python_script(script, target, g));
                        }
                    }
                }
            }
            "setup.cfg" => {
                let mut inside = false;
                for line in text.lines() {
                    let t = line.trim();
                    if t.starts_with('[') {
                        inside = false;
                    } else if t.starts_with("console_scripts") {
                        inside = true;
                    } else if inside && let Some((script, target)) = t.split_once('=') {
                        out.extend(python_script(script.trim(), target.trim(), g));
                    }
                }
            }
            "Cargo.toml" => {
                let Ok(v) = text.parse::<toml::Table>() else {
                    continue;
                };
                for bin in v.get("bin").and_then(|b| b.as_array()).into_iter().flatten() {
                    let name = bin.get("name").and_then(|n| n.as_str()).unwrap_or("");
                    let path = match bin.get("path").and_then(|p| p.as_str()) {
                        Some(p) => p.to_string(),
                        None => format!("src/bin/{name}.rs"),
                    };
                    out.push(at_file("binary", &path, name, g));
                }
            }
            "package.json" => {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
                    continue;
                };
                let package = v.get("name").and_then(|n| n.as_str()).unwrap_or("");
                match v.get("bin") {
                    Some(serde_json::Value::String(p)) => out.push(at_file("bin", p, package, g)),
                    Some(serde_json::Value::Object(m)) => {
                        for (name, p) in m {
                            if let Some(p) = p.as_str() {
                                out.push(at_file("bin", p, name, g));
                            }
                        }
                    }
                    _ => {}
                }
                if let Some(p) = v.get("main").and_then(|m| m.as_str()) {
                    out.push(at_file("package-main", p, package, g));
                }
            }
            _ => {}
        }
    }
    out
}

/// `name = "pkg.module:function"` at the function when the index knows the module.
fn python_script(script: &str, target: &str, g: Option<&CodeGraph>) -> Option<EntryPoint> {
    let target = target.split_whitespace().next()?.trim_matches(['"', '\'']);
    let (module, func) = target.split_once(':').unwrap_or((target, ""));
    let func = func.split('.').next_back().unwrap_or(func);
    let found = g.and_then(|g| {
        let fi = g.files.iter().position(|f| f.module == module)?;
        let f = g.files.get(fi)?;
        let line = g
            .defs(fi)
            .iter()
            .find(|d| d.name == func && d.container.is_empty())
            .map_or(1, |d| d.line);
        Some((f.path.to_string(), line))
    });
    let (path, line) = found.unwrap_or_else(|| (module.replace('.', "/") + ".py", 1));
    Some(EntryPoint {
        kind: "console-script",
        path,
        line,
        name: script.to_string(),
    })
}

fn at_file(kind: &'static str, path: &str, name: &str, _g: Option<&CodeGraph>) -> EntryPoint {
    EntryPoint {
        kind,
        path: path.trim_start_matches("./").to_string(),
        line: 1,
        name: name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_bins_and_mains_are_read_from_the_manifests() {
        let m = vec![
            (
                "pyproject.toml".to_string(),
                "[project.scripts]\nshop = \"shop.cli:main\"\n".to_string(),
            ),
            (
                "setup.cfg".to_string(),
                "[options.entry_points]\nconsole_scripts =\n    shopctl = shop.ctl:run\n".to_string(),
            ),
            (
                "Cargo.toml".to_string(),
                "[[bin]]\nname = \"ken\"\npath = \"src/main.rs\"\n".to_string(),
            ),
            (
                "package.json".to_string(),
                "{\"name\": \"x\", \"bin\": {\"x\": \"./bin/x.js\"}, \"main\": \"index.js\"}".to_string(),
            ),
        ];
        let e = manifest_entry_points(&m, None);
        let got: Vec<(&str, &str, &str)> = e
            .iter()
            .map(|e| (e.kind, e.path.as_str(), e.name.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("console-script", "shop/cli.py", "shop"),
                ("console-script", "shop/ctl.py", "shopctl"),
                ("binary", "src/main.rs", "ken"),
                ("bin", "bin/x.js", "x"),
                ("package-main", "index.js", "x"),
            ]
        );
    }
}
