//! `PathEvidence`: what a file's path says about a query, apart from its content. Two
//! signals, both pure functions of the query text and the path:
//!
//! - the name: a query word that is the file's stem (`Semaphore` and `semaphore.rs`, `args`
//!   and `args.go`, `Validate` and `Validate.java`) or covers its parts (`batch semaphore` and
//!   `batch_semaphore.rs`) is strong evidence that the file is what was asked for; `index`,
//!   `mod`, `__init__`, `main` and `lib` files are named by their folder;
//! - the kind of copy: tests, examples, docs, benchmarks, generated or vendored copies (as
//!   `lang::PathKind` tells them), legacy or versioned copies and platform variants mention
//!   the same names as the code they copy or exercise but are rarely what a query means, so
//!   they weigh less, unless the query asks for them (`test`, `example`, `windows`,
//!   `legacy`...).
//!
//! The weights are set here, by hand, not learned; `benches/search_eval.py` measures them.

use super::split_word;
use crate::lang::{PathKind, PathRole};

/// What a file whose stem is a query word gains in a reciprocal-rank fusion, in units of a
/// first place in one ranking (a part match gains in proportion).
pub const NAME_WEIGHT: f32 = 1.0;

/// Stems that name nothing but their folder.
const FOLDER_STEMS: &[&str] = &["index", "mod", "__init__", "main", "lib", "init"];

/// Kinds of copy, the words in a query that ask for them, and the weight they keep when not
/// asked for.
struct CopyKind {
    asked_by: &'static [&'static str],
    weight: f32,
}

const TESTS: CopyKind = CopyKind {
    asked_by: &[
        "test", "tests", "testing", "spec", "specs", "fixture", "fixtures", "mock", "mocks", "unittest",
    ],
    weight: 0.5,
};
const EXAMPLES: CopyKind = CopyKind {
    asked_by: &[
        "example",
        "examples",
        "demo",
        "doc",
        "docs",
        "documentation",
        "bench",
        "benchmark",
        "benchmarks",
        "tutorial",
        "sample",
    ],
    weight: 0.6,
};
const GENERATED: CopyKind = CopyKind {
    asked_by: &[
        "generated",
        "bundle",
        "dist",
        "vendored",
        "vendor",
        "minified",
        "umd",
        "esm",
        "protobuf",
    ],
    weight: 0.7,
};
const LEGACY: CopyKind = CopyKind {
    asked_by: &[
        "legacy",
        "compat",
        "compatibility",
        "deprecated",
        "old",
        "v1",
        "v2",
        "backport",
    ],
    weight: 0.7,
};
const PLATFORM: CopyKind = CopyKind {
    asked_by: &[
        "windows", "win32", "win", "darwin", "macos", "osx", "mac", "android", "ios", "wasm", "freebsd",
        "solaris",
    ],
    weight: 0.8,
};

#[derive(Debug, Clone, Default)]
pub struct PathEvidence {
    /// The query's words whole, lowercase, without `_`/`-` (`batch_semaphore` -> `batchsemaphore`).
    whole: Vec<String>,
    /// The query's words split at case changes and separators, lowercase.
    parts: Vec<String>,
    /// How much one word's match says: a name among a few query words says a lot, one among
    /// an issue's hundred words little (every long text names some file by accident).
    strength: f32,
}

/// Query words up to which a name match counts in full.
const FULL_STRENGTH_WORDS: f32 = 4.0;

impl PathEvidence {
    pub fn of_query(query: &str) -> PathEvidence {
        let mut e = PathEvidence::default();
        let mut words = 0usize;
        let mut plain = Vec::new();
        for word in query.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if word.chars().count() < 2 || super::is_stop_word(&word.to_lowercase()) {
                continue;
            }
            words += 1;
            // A word written as an identifier names something; a plain English word in a
            // sentence ("the same header name") only hints, so it is matched by parts.
            let identifier = word.contains('_')
                // camelCase or PascalCase (an all-capitals acronym like `URI` is a word)
                || (word.chars().skip(1).any(char::is_uppercase) && word.chars().any(char::is_lowercase))
                || (word.chars().any(|c| c.is_ascii_digit()) && word.chars().any(char::is_alphabetic));
            if identifier {
                e.whole.push(compact(word));
            } else {
                plain.push(compact(word));
            }
            for (a, b) in split_word(word) {
                let part = word[a..b].to_lowercase();
                if part.len() >= 2 && !e.parts.contains(&part) {
                    e.parts.push(part);
                }
            }
        }
        // A query of one or two words is a name however it is written (`router`, `reply send`).
        if words <= 2 {
            e.whole.append(&mut plain);
        }
        e.whole.sort();
        e.whole.dedup();
        e.strength = (FULL_STRENGTH_WORDS / words.max(1) as f32).min(1.0);
        e
    }

    /// How well the file's name matches the query, from 0 (not at all) to 1 (a query word is
    /// the file's stem). Covering the stem's parts gives up to 0.5, the folder's up to 0.25.
    pub fn name_match(&self, path: &str) -> f32 {
        if self.names_exactly(path) {
            return 1.0;
        }
        let (stem, folder) = stem_and_folder(path);
        let covered = |name: &str| -> f32 {
            let parts: Vec<String> = split_word(name)
                .into_iter()
                .map(|(a, b)| name[a..b].to_lowercase())
                .filter(|p| p.len() >= 2)
                .collect();
            if parts.is_empty() {
                return 0.0;
            }
            let hit = parts
                .iter()
                .filter(|p| self.parts.iter().any(|q| same_word(q, p)))
                .count();
            hit as f32 / parts.len() as f32
        };
        let by_stem = 0.5 * covered(stem);
        let by_folder = folder.map_or(0.0, |f| 0.25 * covered(f));
        by_stem.max(by_folder)
    }

    /// [`Self::name_match`] scaled by how much one word of this query says (a name among a
    /// few words in full, among an issue's hundred words little).
    pub fn name_evidence(&self, path: &str) -> f32 {
        self.strength * self.name_match(path)
    }

    /// A file's fused score (`rrf_k`: the fusion's constant) with the path's evidence: times
    /// its prior, plus its name match.
    pub fn weigh(&self, path: &str, score: f32, rrf_k: f32) -> f32 {
        score * self.prior(path) + NAME_WEIGHT * self.name_evidence(path) / (rrf_k + 1.0)
    }

    /// Whether the file is a test, an example, a doc or a benchmark the query does not ask
    /// for: such files are listed after every other candidate (they mention what the code
    /// does, so they match well, but are rarely what was asked for).
    pub fn set_aside(&self, path: &str) -> bool {
        let kinds = CopyKinds::of(path);
        self.unasked(&TESTS, kinds.test) || self.unasked(&EXAMPLES, kinds.example)
    }

    /// The weight the file keeps for the kind of copy its path says it is (1 for ordinary
    /// code, and for any kind the query asks for).
    pub fn prior(&self, path: &str) -> f32 {
        let k = CopyKinds::of(path);
        [
            (&TESTS, k.test),
            (&EXAMPLES, k.example),
            (&GENERATED, k.generated),
            (&LEGACY, k.legacy),
            (&PLATFORM, k.platform),
        ]
        .into_iter()
        .filter(|(kind, is)| self.unasked(kind, *is))
        .map(|(kind, _)| kind.weight)
        .fold(1.0, f32::min)
    }

    /// The path is of this kind and the query does not ask for it.
    fn unasked(&self, kind: &CopyKind, is: bool) -> bool {
        is && !self.parts.iter().any(|p| kind.asked_by.contains(&p.as_str()))
    }

    /// Whether the query names anything a file's stem could be (see [`Self::names_exactly`]).
    pub fn has_names(&self) -> bool {
        !self.whole.is_empty()
    }

    /// Whether a query word is the file's stem: [`Self::name_match`] of 1, without the part
    /// matching (for scanning every indexed path).
    pub fn names_exactly(&self, path: &str) -> bool {
        if !self.has_names() {
            return false;
        }
        let stem = compact(stem_and_folder(path).0);
        stem.len() >= 3
            && self
                .whole
                .iter()
                .any(|w| *w == stem || plural_of(w, &stem) || plural_of(&stem, w))
    }
}

/// Which kinds of copy a path is: tests, examples (with docs and benchmarks), generated (with
/// vendored) by [`PathKind`]; legacy and platform variants from its folders and file name.
struct CopyKinds {
    test: bool,
    example: bool,
    generated: bool,
    legacy: bool,
    platform: bool,
}

impl CopyKinds {
    fn of(path: &str) -> CopyKinds {
        let lower = path.to_ascii_lowercase();
        let segments: Vec<&str> = lower.split('/').collect();
        let file = segments.last().copied().unwrap_or("");
        let dirs = &segments[..segments.len().saturating_sub(1)];
        let in_dir = |names: &[&str]| dirs.iter().any(|d| names.contains(d));
        let kind = PathKind::of(path);
        let platforms = [
            "win", "win32", "windows", "darwin", "macos", "osx", "android", "ios", "freebsd", "solaris",
        ];
        let stem = file.split('.').next().unwrap_or("");
        CopyKinds {
            test: kind.is_test(),
            example: matches!(kind.role, PathRole::Example | PathRole::Bench | PathRole::Doc),
            generated: kind.generated || kind.vendored,
            legacy: in_dir(&["legacy", "compat", "deprecated"])
                || dirs.iter().any(|d| is_version_dir(d))
                || file.contains("_compat.")
                || file.starts_with("compat."),
            platform: in_dir(&platforms)
                || platforms
                    .iter()
                    .any(|p| stem.strip_suffix(p).is_some_and(|rest| rest.ends_with('_'))),
        }
    }
}

/// The file's stem (its folder's name for `index.ts`, `mod.rs`, `__init__.py`...) and the
/// folder the stem is not.
fn stem_and_folder(path: &str) -> (&str, Option<&str>) {
    let mut segments = path.rsplit('/');
    let file = segments.next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    let parent = segments.next();
    match (FOLDER_STEMS.contains(&stem.to_ascii_lowercase().as_str()), parent) {
        (true, Some(folder)) => (folder, segments.next()),
        _ => (stem, parent),
    }
}

fn compact(word: &str) -> String {
    word.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

fn plural_of(plural: &str, one: &str) -> bool {
    one.len() >= 3 && (plural.strip_suffix('s') == Some(one) || plural.strip_suffix("es") == Some(one))
}

/// Two words are the same, or one is a prefix of the other of at least four letters
/// (`valid`/`validate`, `config`/`configuration`).
fn same_word(a: &str, b: &str) -> bool {
    a == b || (a.len().min(b.len()) >= 4 && (a.starts_with(b) || b.starts_with(a)))
}

fn is_version_dir(d: &str) -> bool {
    d.len() >= 2 && d.starts_with('v') && d[1..].chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_among_many_query_words_counts_for_less() {
        let short = PathEvidence::of_query("Request hooks");
        let long = PathEvidence::of_query(
            "Allow lists in the dict values of the hooks argument of the Request class when registering",
        );
        assert!(
            long.weigh("requests/__init__.py", 0.0, 60.0)
                < short.weigh("requests/__init__.py", 0.0, 60.0) / 2.0
        );
    }

    #[test]
    fn a_query_word_that_is_the_stem_beats_one_that_is_a_part_of_it() {
        let e = PathEvidence::of_query("Semaphore");
        assert_eq!(e.name_match("tokio/src/sync/semaphore.rs"), 1.0);
        assert!(e.name_match("tokio/src/sync/batch_semaphore.rs") < 1.0);
        assert!(e.name_match("tokio/src/sync/batch_semaphore.rs") > 0.0);
        assert_eq!(PathEvidence::of_query("Args").name_match("args.go"), 1.0);
        assert_eq!(
            PathEvidence::of_query("Validate").name_match("src/main/java/Validate.java"),
            1.0
        );
        assert_eq!(
            PathEvidence::of_query("the router").name_match("src/router/index.ts"),
            1.0
        );
        assert_eq!(
            PathEvidence::of_query("HeaderMap").name_match("src/header/map.rs"),
            0.5
        );
        // A plain word in a sentence matches by parts only.
        assert_eq!(
            PathEvidence::of_query("how are headers parsed").name_match("src/header.rs"),
            0.5
        );
        assert_eq!(
            PathEvidence::of_query("parse the header_map").name_match("src/header_map.rs"),
            1.0
        );
        assert_eq!(
            PathEvidence::of_query("apply a discount").name_match("shop/cart.py"),
            0.0
        );
    }

    #[test]
    fn tests_and_examples_are_set_aside_unless_asked_for() {
        let e = PathEvidence::of_query("parse the config file");
        assert!(e.set_aside("tests/test_config.py") && e.set_aside("examples/config.rs"));
        assert!(!e.set_aside("src/config.rs") && !e.set_aside("src/win/config.c"));
        assert!(!PathEvidence::of_query("config tests").set_aside("tests/test_config.py"));
    }

    #[test]
    fn copies_weigh_less_unless_the_query_asks_for_them() {
        let e = PathEvidence::of_query("parse the config file");
        assert_eq!(e.prior("src/config.rs"), 1.0);
        assert_eq!(e.prior("tests/test_config.py"), 0.5);
        assert_eq!(e.prior("examples/config.rs"), 0.6);
        assert_eq!(e.prior("pydantic/v1/main.py"), 0.7);
        assert_eq!(e.prior("src/unix/thread.c"), 1.0);
        assert_eq!(e.prior("src/win/thread.c"), 0.8);
        assert_eq!(e.prior("pkg/file_windows.go"), 0.8);
        assert_eq!(e.prior("underscore-umd.js"), 0.7);
        assert_eq!(
            PathEvidence::of_query("the config tests").prior("tests/test_config.py"),
            1.0
        );
        assert_eq!(
            PathEvidence::of_query("thread on Windows").prior("src/win/thread.c"),
            1.0
        );
    }
}
