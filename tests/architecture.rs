//! Module layering: imports point one way, `util < symbols < lang < parse < {graph, lexical,
//! vector} < index < search < context < impact < {providers, remote} < api < exec < agent < server < cli`. Reads `src/` and fails
//! on an import that points the wrong way, and on printing below `cli`. `server/` is narrower
//! still: it imports only `api` and `util`.

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

/// The top-level modules one `crate::` mention names, `part` being the text after it: the `x`
/// of `crate::x::Y`, or each `x` of a group, `crate::{x::Y, z}` (which may span lines).
fn modules_after(part: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = part.strip_prefix('{') else {
        return vec![ident(part)];
    };
    // Top-level items of the group: split at commas outside nested braces.
    let (mut out, mut depth, mut start) = (Vec::new(), 0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth > 0 => depth -= 1,
            ',' | '}' if depth == 0 => {
                out.push(ident(&group[start..i]));
                start = i + 1;
                if c == '}' {
                    break;
                }
            }
            _ => {}
        }
    }
    out.retain(|m| !m.is_empty());
    out
}

/// The top-level modules `line` imports from the crate, one per mention, in order.
fn crate_modules(line: &str) -> Vec<String> {
    line.split("crate::").skip(1).flat_map(modules_after).collect()
}

/// What `server/` may import from the crate: the query layer and the helpers, nothing else.
const SERVER_MAY_IMPORT: [&str; 3] = ["api", "util", "server"];

/// `crate::` imports in one server file that reach past `api` and `util`, as
/// `file:line: server imports x` (comments aside).
fn server_violations(name: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        if text[line_start..at].trim_start().starts_with("//") {
            continue;
        }
        let line = text[..at].matches('\n').count() + 1;
        for target in modules_after(&text[at + "crate::".len()..]) {
            if !SERVER_MAY_IMPORT.contains(&target.as_str()) {
                out.push(format!("{name}:{line}: server imports {target}"));
            }
        }
    }
    out
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
            for target in crate_modules(line) {
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

/// `server/` is transport only: everything it serves comes through `api` (and `util`), so a
/// transport cannot reach into the index, the agent or the CLI on its own.
#[test]
fn server_imports_only_api_and_util() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("server"), &mut files);
    assert!(!files.is_empty(), "no files under src/server");
    let mut violations = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        violations.extend(server_violations(&rel, &std::fs::read_to_string(f).unwrap()));
    }
    assert!(
        violations.is_empty(),
        "server/ may import only api and util:\n{}",
        violations.join("\n")
    );
}

#[test]
fn server_check_catches_imports_past_api() {
    let text = "//! x\nuse crate::api::Workspace;\nuse crate::index::IndexError;\n\
                use crate::{\n    util::contain,\n    agent::AgentLogCollector,\n};\n\
                fn f() { crate::graph::x(); }\n// crate::lexical in a comment\n";
    assert_eq!(
        server_violations("server/x.rs", text),
        [
            "server/x.rs:3: server imports index",
            "server/x.rs:4: server imports agent",
            "server/x.rs:8: server imports graph",
        ]
    );
    assert_eq!(crate_modules("use crate::{a::{b, c}, d};"), ["a", "d"]);
}
