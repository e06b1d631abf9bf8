//! Module layering: imports point one way, `util < symbols < lang < parse < {graph, lexical,
//! vector} < index < search < context < impact < {providers, remote} < api < exec < agent < server < cli`. Reads `src/` and fails
//! on an import that points the wrong way, and on printing below `cli`.

use std::path::Path;

/// A module's layer; modules of one layer may not import each other unless they are the same
/// module (`graph`, `lexical` and `vector` are siblings).
fn rank(module: &str) -> Option<usize> {
    Some(match module {
        "util" => 0,
        "symbols" => 1,
        "lang" => 2,
        "parse" => 3,
        "graph" | "lexical" | "vector" => 4,
        "index" => 5,
        "search" => 6,
        "context" => 7,
        "impact" => 8,
        // Both reach the network: model APIs, and object storage for shared snapshots.
        "providers" | "remote" => 9,
        "api" => 10,
        "exec" => 11,
        "agent" => 12,
        // `ken serve` starts the server: the CLI sits on top of it.
        "server" | "fleet" => 13,
        "cli" => 14,
        _ => return None,
    })
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn imports_point_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap();
        let Some(layer) = rel.components().next().and_then(|c| c.as_os_str().to_str()) else {
            continue;
        };
        if rel.parent().is_none_or(|p| p.as_os_str().is_empty()) {
            continue; // lib.rs, main.rs: the facade
        }
        let Some(own) = rank(layer) else {
            violations.push(format!(
                "{}: module {layer} is not in the layer list",
                rel.display()
            ));
            continue;
        };
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            for part in line.split("crate::").skip(1) {
                let target: String = part
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let Some(theirs) = rank(&target) else { continue };
                if theirs > own || (theirs == own && target != layer) {
                    violations.push(format!("{}:{}: {layer} imports {target}", rel.display(), n + 1));
                }
            }
            let prints = ["println!", "eprintln!", "print!(", "eprint!("]
                .iter()
                .any(|m| line.contains(m));
            if prints && layer != "cli" && !line.trim_start().starts_with("//") {
                violations.push(format!("{}:{}: prints outside cli", rel.display(), n + 1));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layering violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn every_module_documents_itself() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let undocumented: Vec<_> = files
        .iter()
        .filter(|f| {
            !std::fs::read_to_string(f)
                .unwrap()
                .trim_start()
                .starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        undocumented.is_empty(),
        "files without a //! header: {undocumented:?}"
    );
}
