//! `LanguageRegistry`: every language from `grammars/`, compiled once per process.
//!
//! Each `grammars/<lang>/` folder is embedded at compile time. A query file whose first line is
//! `; inherits: other` is prefixed with `other`'s query of the same name (the nvim-treesitter
//! convention), so dialects such as TSX reuse TypeScript's queries.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;
use tree_sitter::Language;

use super::{ImportStyle, ImportsName, LanguageSpec, TestGlobs};

#[derive(Debug, Clone, thiserror::Error)]
pub enum LangError {
    #[error("grammars/{lang}/language.toml: {message}")]
    Manifest { lang: String, message: String },
    #[error("grammars/{lang}/{file}: {message}")]
    Query {
        lang: String,
        file: String,
        message: String,
    },
    #[error("grammars/{lang}/language.toml names grammar {grammar}, which this build does not link")]
    UnknownGrammar { lang: String, grammar: String },
    /// The registry failed to build earlier in this process; the message is the original error.
    #[error("{0}")]
    Builtin(String),
}

/// One language folder's files: embedded at compile time, or read from a folder by
/// [`LanguageRegistry::from_dir`] (for editing queries without rebuilding).
struct Embedded<'a> {
    dir: &'a str,
    manifest: &'a str,
    tags: &'a str,
    imports: &'a str,
}

macro_rules! embed {
    ($dir:literal) => {
        Embedded {
            dir: $dir,
            manifest: include_str!(concat!("../../grammars/", $dir, "/language.toml")),
            tags: include_str!(concat!("../../grammars/", $dir, "/tags.scm")),
            imports: include_str!(concat!("../../grammars/", $dir, "/imports.scm")),
        }
    };
}

const EMBEDDED: &[Embedded<'static>] = &[
    embed!("bash"),
    embed!("c"),
    embed!("cpp"),
    embed!("csharp"),
    embed!("elixir"),
    embed!("go"),
    embed!("haskell"),
    embed!("java"),
    embed!("javascript"),
    embed!("kotlin"),
    embed!("lua"),
    embed!("php"),
    embed!("python"),
    embed!("ruby"),
    embed!("rust"),
    embed!("scala"),
    embed!("swift"),
    embed!("tsx"),
    embed!("typescript"),
    embed!("zig"),
];

/// The grammar crates this build links, by the name `language.toml` uses.
fn grammar(name: &str) -> Option<Language> {
    Some(match name {
        "tree-sitter-bash" => tree_sitter_bash::LANGUAGE.into(),
        "tree-sitter-c" => tree_sitter_c::LANGUAGE.into(),
        "tree-sitter-c-sharp" => tree_sitter_c_sharp::LANGUAGE.into(),
        "tree-sitter-elixir" => tree_sitter_elixir::LANGUAGE.into(),
        "tree-sitter-haskell" => tree_sitter_haskell::LANGUAGE.into(),
        "tree-sitter-kotlin-ng" => tree_sitter_kotlin_ng::LANGUAGE.into(),
        "tree-sitter-lua" => tree_sitter_lua::LANGUAGE.into(),
        "tree-sitter-php" => tree_sitter_php::LANGUAGE_PHP.into(),
        "tree-sitter-ruby" => tree_sitter_ruby::LANGUAGE.into(),
        "tree-sitter-scala" => tree_sitter_scala::LANGUAGE.into(),
        "tree-sitter-swift" => tree_sitter_swift::LANGUAGE.into(),
        "tree-sitter-zig" => tree_sitter_zig::LANGUAGE.into(),
        "tree-sitter-cpp" => tree_sitter_cpp::LANGUAGE.into(),
        "tree-sitter-go" => tree_sitter_go::LANGUAGE.into(),
        "tree-sitter-java" => tree_sitter_java::LANGUAGE.into(),
        "tree-sitter-javascript" => tree_sitter_javascript::LANGUAGE.into(),
        "tree-sitter-python" => tree_sitter_python::LANGUAGE.into(),
        "tree-sitter-rust" => tree_sitter_rust::LANGUAGE.into(),
        "tree-sitter-typescript" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "tree-sitter-typescript/tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        _ => return None,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    name: String,
    extensions: Vec<String>,
    grammar: String,
    separator: String,
    #[serde(default)]
    import_style: Option<String>,
    #[serde(default)]
    common_members: Vec<String>,
    #[serde(default)]
    test_files: Vec<String>,
    #[serde(default)]
    test_command: Option<String>,
    #[serde(default)]
    imports_name: Option<String>,
    #[serde(default)]
    import_files: Vec<String>,
    #[serde(default)]
    unbound_names: Option<String>,
    #[serde(default)]
    shares_names_with: Option<String>,
}

#[derive(Debug)]
pub struct LanguageRegistry {
    languages: Vec<LanguageSpec>,
    by_extension: HashMap<String, usize>,
    fingerprint: String,
}

static BUILTIN: OnceLock<Result<LanguageRegistry, String>> = OnceLock::new();

impl LanguageRegistry {
    /// The registry of the languages compiled into this binary, built on first use.
    pub fn builtin() -> Result<&'static LanguageRegistry, LangError> {
        BUILTIN
            .get_or_init(|| Self::build().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|message| LangError::Builtin(message.clone()))
    }

    fn build() -> Result<LanguageRegistry, LangError> {
        Self::build_from(EMBEDDED)
    }

    /// The registry of a `grammars/` folder on disk, for the languages this build links: how
    /// query edits are tried without rebuilding (`cargo run --example extract`). A folder
    /// whose grammar this build does not link is an error naming it.
    pub fn from_dir(dir: &std::path::Path) -> Result<LanguageRegistry, LangError> {
        let read = |lang: &str, file: &str| {
            std::fs::read_to_string(dir.join(lang).join(file)).map_err(|e| LangError::Query {
                lang: lang.into(),
                file: file.into(),
                message: e.to_string(),
            })
        };
        let mut folders: Vec<String> = std::fs::read_dir(dir)
            .map_err(|e| LangError::Manifest {
                lang: dir.display().to_string(),
                message: e.to_string(),
            })?
            .flatten()
            .filter(|e| e.path().join("language.toml").is_file())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        folders.sort();
        let mut texts = Vec::new();
        for lang in &folders {
            texts.push([
                read(lang, "language.toml")?,
                read(lang, "tags.scm")?,
                read(lang, "imports.scm")?,
            ]);
        }
        let sources: Vec<Embedded<'_>> = folders
            .iter()
            .zip(&texts)
            .map(|(dir, [manifest, tags, imports])| Embedded {
                dir,
                manifest,
                tags,
                imports,
            })
            .collect();
        Self::build_from(&sources)
    }

    fn build_from(sources: &[Embedded<'_>]) -> Result<LanguageRegistry, LangError> {
        let mut languages = Vec::new();
        let mut by_extension = HashMap::new();
        let mut hasher = blake3::Hasher::new();
        hasher.update(&crate::symbols::RECORD_VERSION.to_le_bytes());
        for e in sources {
            let spec = load(e, sources)?;
            for ext in &spec.extensions {
                by_extension.insert(ext.clone(), languages.len());
            }
            for part in [e.manifest, e.tags, e.imports] {
                hasher.update(part.as_bytes());
            }
            languages.push(spec);
        }
        Ok(LanguageRegistry {
            languages,
            by_extension,
            fingerprint: hasher.finalize().to_hex()[..16].to_string(),
        })
    }

    pub fn languages(&self) -> &[LanguageSpec] {
        &self.languages
    }

    /// The language for a file name, by its (case-insensitive) extension.
    pub fn for_file_name(&self, file_name: &str) -> Option<(usize, &LanguageSpec)> {
        let (_, ext) = file_name.rsplit_once('.')?;
        let idx = *self.by_extension.get(&ext.to_ascii_lowercase())?;
        self.languages.get(idx).map(|l| (idx, l))
    }

    pub fn by_name(&self, name: &str) -> Option<&LanguageSpec> {
        self.languages.iter().find(|l| l.name == name)
    }

    /// The name space a language's definitions resolve in: its own index, or that of the
    /// language it `shares_names_with`; `languages().len()` for a language not registered.
    pub fn name_space(&self, name: &str) -> usize {
        let idx = |n: &str| self.languages.iter().position(|l| l.name == n);
        match idx(name) {
            Some(i) => match &self.languages[i].shares_names_with {
                Some(other) => idx(other).unwrap_or(i),
                None => i,
            },
            None => self.languages.len(),
        }
    }

    /// A digest of every embedded query and manifest: records extracted under a different
    /// fingerprint are stale even when the file content is unchanged.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }
}

/// Resolves `; inherits: other` on the first line, recursively (bounded: no cycles).
fn query_source(lang: &str, file: &str, text: &str, sources: &[Embedded<'_>]) -> Result<String, LangError> {
    let mut parts = vec![text];
    let mut current = text;
    while let Some(parent) = current
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("; inherits:"))
        .map(str::trim)
    {
        let base = sources
            .iter()
            .find(|e| e.dir == parent)
            .filter(|_| parts.len() <= sources.len())
            .ok_or_else(|| LangError::Query {
                lang: lang.into(),
                file: file.into(),
                message: format!("inherits unknown language {parent} (or an inheritance cycle)"),
            })?;
        current = if file == "tags.scm" {
            base.tags
        } else {
            base.imports
        };
        parts.push(current);
    }
    parts.reverse();
    Ok(parts.join("\n"))
}

fn load(e: &Embedded<'_>, sources: &[Embedded<'_>]) -> Result<LanguageSpec, LangError> {
    let m: Manifest = toml::from_str(e.manifest).map_err(|err| LangError::Manifest {
        lang: e.dir.into(),
        message: err.to_string(),
    })?;
    let grammar = grammar(&m.grammar).ok_or_else(|| LangError::UnknownGrammar {
        lang: e.dir.into(),
        grammar: m.grammar.clone(),
    })?;
    let import_style = match m.import_style.as_deref() {
        None | Some("plain") => ImportStyle::Plain,
        Some("rust-use-tree") => ImportStyle::RustUseTree,
        Some("path-ends-with-name") => ImportStyle::PathEndsWithName,
        Some(other) => {
            return Err(LangError::Manifest {
                lang: e.dir.into(),
                message: format!("unknown import_style {other}"),
            });
        }
    };
    let manifest_error = |message: String| LangError::Manifest {
        lang: e.dir.into(),
        message,
    };
    let imports_name = match m.imports_name.as_deref() {
        None | Some("nothing") => ImportsName::Nothing,
        Some("files") => ImportsName::Files,
        Some("modules") => ImportsName::Modules,
        Some("definitions") => ImportsName::Definitions,
        Some(other) => return Err(manifest_error(format!("unknown imports_name {other}"))),
    };
    if imports_name == ImportsName::Files && m.import_files.is_empty() {
        return Err(manifest_error(
            "imports_name = \"files\" needs import_files".into(),
        ));
    }
    let unbound_names_global = match m.unbound_names.as_deref() {
        None | Some("external") => false,
        Some("repository") => true,
        Some(other) => return Err(manifest_error(format!("unknown unbound_names {other}"))),
    };
    if let Some(other) = &m.shares_names_with
        && !sources.iter().any(|s| s.dir == other.as_str())
    {
        return Err(manifest_error(format!(
            "shares_names_with names no language: {other}"
        )));
    }
    let test_files = test_globs(e.dir, &m.test_files)?;
    let tags_source = query_source(e.dir, "tags.scm", e.tags, sources)?;
    let imports_source = query_source(e.dir, "imports.scm", e.imports, sources)?;
    Ok(LanguageSpec {
        name: m.name,
        extensions: m.extensions.iter().map(|x| x.to_ascii_lowercase()).collect(),
        separator: m.separator,
        import_style,
        imports_name,
        import_files: m.import_files,
        unbound_names_global,
        shares_names_with: m.shares_names_with,
        grammar,
        tags_source,
        imports_source,
        common_members: m.common_members.into_iter().collect(),
        test_files,
        test_command: m.test_command,
        queries: OnceLock::new(),
    })
}

/// `test_files` globs as one set; a glob without `/` matches in any folder.
fn test_globs(lang: &str, globs: &[String]) -> Result<TestGlobs, LangError> {
    let mut parsed = Vec::with_capacity(globs.len());
    for g in globs {
        let pattern = match g.contains('/') {
            true => g.clone(),
            false => format!("**/{g}"),
        };
        let glob = globset::GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| LangError::Manifest {
                lang: lang.into(),
                message: format!("test_files: {e}"),
            })?;
        parsed.push(glob);
    }
    Ok(TestGlobs::new(parsed))
}
