//! `TextFormats`: the files without a grammar that are still read, as text (`grammars/text.toml`,
//! embedded at compile time): docs (Markdown, reStructuredText...) and config (YAML, TOML, JSON,
//! SQL, Dockerfiles, Makefiles, templates...), and how such a file is cut into sections.
//!
//! Invariant: a text format's name is never a language's name, so a file record's `language`
//! tells code from text ([`TextFormats::by_name`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::LangError;

/// What a text file is to an answer: prose about the code, or configuration around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TextKind {
    Doc,
    Config,
}

impl TextKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TextKind::Doc => "doc",
            TextKind::Config => "config",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextFormat {
    pub name: String,
    pub kind: TextKind,
    #[serde(default)]
    pub extensions: Vec<String>,
    /// Whole file names (`Dockerfile`, `CMakeLists.txt`), matched without regard to case.
    #[serde(default)]
    pub names: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    format: Vec<TextFormat>,
}

#[derive(Debug)]
pub struct TextFormats {
    formats: Vec<TextFormat>,
    by_extension: HashMap<String, usize>,
    by_file_name: HashMap<String, usize>,
}

static BUILTIN: OnceLock<Result<TextFormats, String>> = OnceLock::new();

/// A section of a text file: a heading's lines, or a window of lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextSection {
    /// The heading (`Installation`), or the first non-blank line of a window.
    pub title: String,
    pub start_line: u32,
    pub end_line: u32,
}

/// Lines per section where a file has no headings.
const WINDOW_LINES: u32 = 60;
/// Longest section title kept.
const MAX_TITLE: usize = 120;

impl TextFormats {
    pub fn builtin() -> Result<&'static TextFormats, LangError> {
        BUILTIN
            .get_or_init(|| Self::parse(include_str!("../../grammars/text.toml")).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|m| LangError::Builtin(m.clone()))
    }

    pub fn parse(toml_text: &str) -> Result<TextFormats, LangError> {
        let err = |message: String| LangError::Manifest {
            lang: "text.toml".into(),
            message,
        };
        let table: Table = toml::from_str(toml_text).map_err(|e| err(e.to_string()))?;
        let mut by_extension = HashMap::new();
        let mut by_file_name = HashMap::new();
        for (i, f) in table.format.iter().enumerate() {
            for e in &f.extensions {
                if by_extension.insert(e.to_ascii_lowercase(), i).is_some() {
                    return Err(err(format!("extension {e} is listed twice")));
                }
            }
            for n in &f.names {
                by_file_name.insert(n.to_ascii_lowercase(), i);
            }
        }
        Ok(TextFormats {
            formats: table.format,
            by_extension,
            by_file_name,
        })
    }

    pub fn formats(&self) -> &[TextFormat] {
        &self.formats
    }

    /// The format of a file (its index in [`formats`](Self::formats) and itself), by its whole
    /// name first, then its last extension.
    pub fn for_file_name(&self, file_name: &str) -> Option<(usize, &TextFormat)> {
        let lower = file_name.to_ascii_lowercase();
        let i = *self.by_file_name.get(&lower).or_else(|| {
            let (_, ext) = lower.rsplit_once('.')?;
            self.by_extension.get(ext)
        })?;
        self.formats.get(i).map(|f| (i, f))
    }

    pub fn by_name(&self, name: &str) -> Option<&TextFormat> {
        self.formats.iter().find(|f| f.name == name)
    }
}

/// Whether a file at `path` is read as text: no grammar reads it and a text format does.
pub fn is_text_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let no_grammar = super::LanguageRegistry::builtin().is_ok_and(|r| r.for_file_name(name).is_none());
    no_grammar && TextFormats::builtin().is_ok_and(|t| t.for_file_name(name).is_some())
}

/// Whether a file record's language is a text format (docs or config), not code.
pub fn text_kind(language: &str) -> Option<TextKind> {
    TextFormats::builtin().ok()?.by_name(language).map(|f| f.kind)
}

/// The sections of a text file: Markdown `#` headings (outside fenced code), reStructuredText
/// titles (a line underlined with `=`, `-`, `~`...), else windows of [`WINDOW_LINES`] lines.
/// Sections cover the file without overlap; text before the first heading is a section too.
pub fn sections(format: &str, text: &str) -> Vec<TextSection> {
    let lines: Vec<&str> = text.lines().collect();
    let n = lines.len() as u32;
    if n == 0 {
        return Vec::new();
    }
    let mut starts: Vec<(u32, String)> = Vec::new();
    let mut fenced = false;
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let row = i as u32 + 1;
        match format {
            "markdown" => {
                if t.starts_with("```") || t.starts_with("~~~") {
                    fenced = !fenced;
                    continue;
                }
                if !fenced && let Some(h) = markdown_heading(t) {
                    starts.push((row, h.to_string()));
                }
            }
            "restructuredtext" | "asciidoc" => {
                if format == "asciidoc" && t.starts_with('=') {
                    let h = t.trim_start_matches('=').trim();
                    if !h.is_empty() {
                        starts.push((row, h.to_string()));
                    }
                } else if let Some(next) = lines.get(i + 1)
                    && is_underline(next, line)
                {
                    starts.push((row, line.trim().to_string()));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    let first = starts.first().map_or(n + 1, |s| s.0);
    // Text before the first heading (or the whole file when there is none), in windows.
    let mut at = 1;
    while at < first {
        let end = (at + WINDOW_LINES - 1).min(first - 1);
        if let Some(title) = (at..=end)
            .map(|l| lines[(l - 1) as usize].trim())
            .find(|l| !l.is_empty())
        {
            out.push(TextSection {
                title: clip(title),
                start_line: at,
                end_line: end,
            });
        }
        at = end + 1;
    }
    for (k, (start, title)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(n, |s| s.0 - 1);
        out.push(TextSection {
            title: clip(title),
            start_line: *start,
            end_line: end.max(*start),
        });
    }
    out
}

fn markdown_heading(t: &str) -> Option<&str> {
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &t[hashes..];
    (rest.starts_with(' ') && !rest.trim().is_empty()).then(|| rest.trim().trim_end_matches('#').trim())
}

/// `====` or `----` under a title of at least its length.
fn is_underline(line: &str, title: &str) -> bool {
    let u = line.trim_end();
    let Some(c) = u.chars().next() else { return false };
    "=-~^\"'`#*+".contains(c)
        && u.len() >= 3
        && u.chars().all(|x| x == c)
        && !title.trim().is_empty()
        && u.len() >= title.trim_end().len()
}

fn clip(s: &str) -> String {
    match s.char_indices().nth(MAX_TITLE) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_names_win_over_extensions() {
        let t = TextFormats::builtin().unwrap();
        assert_eq!(t.for_file_name("README.md").unwrap().1.name, "markdown");
        assert_eq!(t.for_file_name("CMakeLists.txt").unwrap().1.name, "make");
        assert_eq!(t.for_file_name("notes.txt").unwrap().1.name, "text");
        assert_eq!(t.for_file_name("Dockerfile").unwrap().1.kind, TextKind::Config);
        assert_eq!(t.for_file_name("ci.YML").unwrap().1.name, "yaml");
        assert!(t.for_file_name("logo.png").is_none());
        assert!(t.for_file_name("main.rs").is_none());
        // No text format shadows a language.
        let langs = crate::lang::LanguageRegistry::builtin().unwrap();
        for f in t.formats() {
            assert!(langs.by_name(&f.name).is_none(), "{} is a language too", f.name);
            for e in &f.extensions {
                assert!(
                    langs.for_file_name(&format!("x.{e}")).is_none(),
                    ".{e} has a grammar"
                );
            }
        }
    }

    #[test]
    fn markdown_sections_follow_headings_outside_code_fences() {
        let md = "Intro line\n\n# Title\ntext\n```sh\n# not a heading\n```\n## Install\nrun it\n";
        let s = sections("markdown", md);
        let got: Vec<(&str, u32, u32)> = s
            .iter()
            .map(|x| (x.title.as_str(), x.start_line, x.end_line))
            .collect();
        assert_eq!(got, [("Intro line", 1, 2), ("Title", 3, 7), ("Install", 8, 9)]);
    }

    #[test]
    fn rst_titles_and_windows_without_headings() {
        let rst = "Usage\n=====\n\nCall it.\n\nLimits\n------\nNone.\n";
        let s = sections("restructuredtext", rst);
        assert_eq!(
            s.iter().map(|x| x.title.as_str()).collect::<Vec<_>>(),
            ["Usage", "Limits"]
        );
        assert_eq!((s[1].start_line, s[1].end_line), (6, 8));
        let yaml: String = (1..=130).map(|i| format!("key{i}: {i}\n")).collect();
        let w = sections("yaml", &yaml);
        assert_eq!(
            w.iter().map(|x| (x.start_line, x.end_line)).collect::<Vec<_>>(),
            [(1, 60), (61, 120), (121, 130)]
        );
        assert_eq!(w[0].title, "key1: 1");
    }
}
