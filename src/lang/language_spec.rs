//! `LanguageSpec`: one language's grammar, compiled queries and layout conventions.

use std::sync::OnceLock;

use tree_sitter::{Language, Query};

use super::{Capture, LangError};

/// How a language's `@import.path` node is turned into imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportStyle {
    /// One match of `imports.scm` is one import; the captured texts are used as they are.
    Plain,
    /// The captured node is a Rust use-tree (`a::{b as c, d::*}`), flattened into one import
    /// per leaf.
    RustUseTree,
    /// `@import.path` is the whole dotted name, `@import.name` its last part (Kotlin's
    /// `import a.b.C`): the path is cut to `a.b`.
    PathEndsWithName,
}

/// What an import path names, for a language outside the built-in resolution families
/// (`language.toml`'s `imports_name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportsName {
    /// Nothing the resolver follows: every import is external.
    Nothing,
    /// A file, found through `import_files` (`require_relative`, `require("a.b")`,
    /// `@import("x.zig")`, `source lib.sh`).
    Files,
    /// A module a file declares with `@package` (`import Data.Map`).
    Modules,
    /// A definition by its qualified name (`alias Shop.Inventory`).
    Definitions,
}

pub struct LanguageSpec {
    /// Stable name (`rust`, `python`, `tsx`...), used in the index and in `lang:` filters.
    pub name: String,
    pub extensions: Vec<String>,
    /// The separator of qualified names (`::` for Rust and C++, `.` elsewhere).
    pub separator: String,
    pub import_style: ImportStyle,
    /// What an import path names (`imports_name`), for a language outside the built-in
    /// families.
    pub imports_name: ImportsName,
    /// Where an import names a file: candidate paths, `{path}` the import path as written and
    /// `{slashed}` with its dots made slashes (`import_files`); each is tried next to the
    /// importing file, at the repository root, then as the end of a path.
    pub import_files: Vec<String>,
    /// Names not bound in a file are looked up among the repository's top-level
    /// definitions of the language (`unbound_names = "repository"`: Ruby constants, Swift's
    /// module-wide names, Lua globals, functions of a sourced shell script).
    pub unbound_names_global: bool,
    /// The language whose names this one's code calls directly (`shares_names_with`:
    /// Kotlin and Scala with Java, TypeScript with JavaScript, C++ with C): they resolve in
    /// one name space, and every other language in its own.
    pub shares_names_with: Option<String>,
    /// Method names of the language's standard library so common (`len`, `push`, `append`,
    /// `size`) that a call `x.name()` on a value of unknown type is not linked to a
    /// repository method by the name alone (`language.toml`'s `common_members`).
    pub common_members: std::collections::HashSet<String>,
    /// Test files by the conventions of the language's test frameworks (`language.toml`'s
    /// `test_files`: globs on the repository path, `**/` implied for a glob without `/`).
    pub test_files: TestGlobs,
    /// The command that runs test files (`test_command`: `{files}` is replaced by their paths,
    /// `{stems}` by their names without extension; without either it runs every test).
    pub test_command: Option<String>,
    pub grammar: Language,
    /// Query sources with `; inherits:` resolved.
    pub(super) tags_source: String,
    pub(super) imports_source: String,
    /// Compiled on first use: a run that parses no file of this language never pays for it.
    pub(super) queries: OnceLock<Result<LanguageQueries, LangError>>,
}

/// A language's `test_files` globs, checked when the registry is built and compiled into one
/// set on first use: compiling every language's set took 4 ms of each one-shot query, which
/// asks about files of one or two languages, most of which declare no globs.
#[derive(Debug, Default)]
pub struct TestGlobs {
    globs: Vec<globset::Glob>,
    set: OnceLock<Option<globset::GlobSet>>,
}

impl TestGlobs {
    pub fn new(globs: Vec<globset::Glob>) -> TestGlobs {
        TestGlobs {
            globs,
            set: OnceLock::new(),
        }
    }

    pub fn is_match(&self, path: &str) -> bool {
        if self.globs.is_empty() {
            return false;
        }
        let set = self.set.get_or_init(|| {
            let mut b = globset::GlobSetBuilder::new();
            for g in &self.globs {
                b.add(g.clone());
            }
            b.build()
                .inspect_err(|e| tracing::warn!("test_files globs do not compile: {e}"))
                .ok()
        });
        set.as_ref().is_some_and(|s| s.is_match(path))
    }
}

/// A language's `tags.scm` and `imports.scm` compiled as one query, so extraction walks the
/// syntax tree once.
pub struct LanguageQueries {
    pub query: Query,
    /// `query.capture_names()` mapped to the vocabulary, by capture index.
    pub captures: Vec<Capture>,
}

impl LanguageSpec {
    /// A test file by this language's conventions (`test_files`).
    pub fn is_test_file(&self, path: &str) -> bool {
        self.test_files.is_match(path)
    }

    /// The command that runs `files` by this language's `test_command`: `{files}` is their
    /// paths, `{stems}` their file names without extension (a JVM test class), each once.
    pub fn test_command_for(&self, files: &[&str]) -> Option<String> {
        let template = self.test_command.as_ref()?;
        let stems: Vec<&str> = files
            .iter()
            .map(|f| {
                let name = f.rsplit('/').next().unwrap_or(f);
                name.split_once('.').map_or(name, |(s, _)| s)
            })
            .collect();
        Some(
            template
                .replace("{files}", &files.join(" "))
                .replace("{stems}", &stems.join(" ")),
        )
    }

    /// The compiled queries; fails if a query does not compile or leaves the vocabulary.
    pub fn queries(&self) -> Result<&LanguageQueries, LangError> {
        self.queries
            .get_or_init(|| {
                let source = format!("{}\n{}", self.tags_source, self.imports_source);
                let (query, captures) =
                    compile(&self.name, "tags.scm+imports.scm", &source, &self.grammar, |c| {
                        c.belongs_to_tags() || c.belongs_to_imports()
                    })?;
                Ok(LanguageQueries { query, captures })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Compiles `tags.scm` and `imports.scm` apart, each against its own part of the
    /// vocabulary; returns their pattern counts. Used by the tests that guard the grammars.
    pub fn validate(&self) -> Result<(usize, usize), LangError> {
        let (tags, _) = compile(
            &self.name,
            "tags.scm",
            &self.tags_source,
            &self.grammar,
            Capture::belongs_to_tags,
        )?;
        let (imports, _) = compile(
            &self.name,
            "imports.scm",
            &self.imports_source,
            &self.grammar,
            Capture::belongs_to_imports,
        )?;
        self.queries()?;
        Ok((tags.pattern_count(), imports.pattern_count()))
    }
}

fn compile(
    lang: &str,
    file: &str,
    source: &str,
    grammar: &Language,
    allowed: fn(Capture) -> bool,
) -> Result<(Query, Vec<Capture>), LangError> {
    let query = Query::new(grammar, source).map_err(|err| LangError::Query {
        lang: lang.into(),
        file: file.into(),
        message: format!("line {}: {:?}: {}", err.row + 1, err.kind, err.message),
    })?;
    let mut captures = Vec::new();
    for name in query.capture_names() {
        match Capture::parse(name).filter(|c| allowed(*c)) {
            Some(c) => captures.push(c),
            None => {
                return Err(LangError::Query {
                    lang: lang.into(),
                    file: file.into(),
                    message: format!("capture @{name} is outside the vocabulary (grammars/README.md)"),
                });
            }
        }
    }
    Ok((query, captures))
}

impl std::fmt::Debug for LanguageSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LanguageSpec")
            .field("name", &self.name)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust() -> Language {
        tree_sitter_rust::LANGUAGE.into()
    }

    fn tags_error(source: &str) -> String {
        match compile("rust", "tags.scm", source, &rust(), Capture::belongs_to_tags) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{source:?} should be rejected"),
        }
    }

    #[test]
    fn captures_outside_the_vocabulary_are_rejected() {
        let err = tags_error("(identifier) @local.scope");
        assert!(err.contains("@local.scope is outside the vocabulary"), "{err}");
        // An imports capture in tags.scm is outside that file's part of the vocabulary.
        tags_error("(identifier) @import.path");
        let ok = compile(
            "rust",
            "tags.scm",
            "(identifier) @name @reference.type",
            &rust(),
            Capture::belongs_to_tags,
        );
        assert!(ok.is_ok());
    }

    #[test]
    fn invalid_node_types_name_the_file_and_line() {
        let err = tags_error("\n(no_such_node) @name");
        assert!(err.starts_with("grammars/rust/tags.scm: line 2"), "{err}");
    }
}
