//! Every language: its queries compile inside the capture vocabulary, it has a fixture under
//! `fixtures/lang/<lang>/`, and what is extracted from the fixture is snapshotted.

mod support;

use std::path::Path;

use kenning::{FileParser, LanguageRegistry};

fn fixture_files(lang: &str) -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/lang")
        .join(lang);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("fixtures/lang/{lang} is missing: {e}"))
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    files
}

#[test]
fn every_query_compiles_within_the_vocabulary() {
    let registry = LanguageRegistry::builtin().expect("registry");
    assert!(registry.languages().len() >= 20);
    for spec in registry.languages() {
        let (tags, imports) = spec.validate().unwrap_or_else(|e| panic!("{}: {e}", spec.name));
        assert!(tags > 0, "{} has no tag patterns", spec.name);
        assert!(imports > 0, "{} has no import patterns", spec.name);
    }
}

/// Every grammar crate is built for an ABI this tree-sitter reads, and a parser accepts it:
/// a grammar crate of another generation fails here, not on a user's first file.
#[test]
fn every_grammar_speaks_this_tree_sitter_abi() {
    let registry = LanguageRegistry::builtin().expect("registry");
    for spec in registry.languages() {
        let abi = spec.grammar.abi_version();
        assert!(
            (tree_sitter::MIN_COMPATIBLE_LANGUAGE_VERSION..=tree_sitter::LANGUAGE_VERSION).contains(&abi),
            "{}: grammar ABI {abi} outside {}..={}",
            spec.name,
            tree_sitter::MIN_COMPATIBLE_LANGUAGE_VERSION,
            tree_sitter::LANGUAGE_VERSION
        );
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&spec.grammar)
            .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
    }
}

#[test]
fn every_grammar_folder_is_registered_and_has_a_fixture() {
    let registry = LanguageRegistry::builtin().expect("registry");
    let grammars = Path::new(env!("CARGO_MANIFEST_DIR")).join("grammars");
    for entry in std::fs::read_dir(grammars)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
    {
        let name = entry.file_name().to_string_lossy().to_string();
        assert!(
            registry.by_name(&name).is_some(),
            "grammars/{name} is not embedded in the registry"
        );
        assert!(!fixture_files(&name).is_empty(), "fixtures/lang/{name} is empty");
    }
}

fn check(lang: &str) {
    let registry = LanguageRegistry::builtin().expect("registry");
    let spec = registry.by_name(lang).expect("language");
    let mut parser = FileParser::new();
    let mut out = String::new();
    for file in fixture_files(lang) {
        let source = std::fs::read(&file).unwrap();
        let symbols = parser.parse(spec, &source);
        assert!(
            symbols.diagnostics.is_empty(),
            "fixture {} should parse cleanly: {:?}",
            file.display(),
            symbols.diagnostics
        );
        assert!(
            !symbols.definitions.is_empty(),
            "{}: no definitions",
            file.display()
        );
        assert!(
            !symbols.references.is_empty(),
            "{}: no references",
            file.display()
        );
        assert!(!symbols.imports.is_empty(), "{}: no imports", file.display());
        out.push_str(&format!("# {}\n", file.file_name().unwrap().to_string_lossy()));
        out.push_str(&support::render_symbols(&symbols, "", &spec.separator));
    }
    insta::assert_snapshot!(lang, out);
}

#[test]
fn rust_extraction() {
    check("rust");
}

#[test]
fn python_extraction() {
    check("python");
}

#[test]
fn javascript_extraction() {
    check("javascript");
}

#[test]
fn typescript_extraction() {
    check("typescript");
}

#[test]
fn tsx_extraction() {
    check("tsx");
}

#[test]
fn go_extraction() {
    check("go");
}

#[test]
fn java_extraction() {
    check("java");
}

#[test]
fn c_extraction() {
    check("c");
}

#[test]
fn cpp_extraction() {
    check("cpp");
}

#[test]
fn bash_extraction() {
    check("bash");
}

#[test]
fn csharp_extraction() {
    check("csharp");
}

#[test]
fn elixir_extraction() {
    check("elixir");
}

#[test]
fn haskell_extraction() {
    check("haskell");
}

#[test]
fn kotlin_extraction() {
    check("kotlin");
}

#[test]
fn lua_extraction() {
    check("lua");
}

#[test]
fn php_extraction() {
    check("php");
}

#[test]
fn ruby_extraction() {
    check("ruby");
}

#[test]
fn scala_extraction() {
    check("scala");
}

#[test]
fn swift_extraction() {
    check("swift");
}

#[test]
fn zig_extraction() {
    check("zig");
}
