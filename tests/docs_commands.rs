//! The user docs (README.md and docs/*.md) show only commands the binary knows. Every line of a
//! shell code block that runs `ken` names a subcommand that answers `--help`, and every `--flag`
//! on it appears in that help; a misspelt subcommand or flag in a doc fails here. A few of the
//! README's tour commands also run for real on a small fixture repository.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::{commit_all, git, ken_bin, materialize, stderr, stdout};

/// Info strings of the code blocks whose lines are shell commands.
const SHELL_BLOCKS: &[&str] = &["sh", "bash", "shell", "console", "zsh"];

/// One `ken` command as a doc shows it.
#[derive(Debug)]
struct DocCommand {
    place: String,
    words: Vec<String>,
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every Markdown file under docs/, sorted.
fn doc_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files = vec![root.join("README.md")];
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    guides.sort();
    assert!(!guides.is_empty(), "docs/ holds no guide");
    files.extend(guides);
    files
}

/// The logical lines of the shell code blocks of a Markdown text (continuations joined), with
/// the line number each starts on. In a `console` block only the lines after a `$ ` prompt are
/// commands (the rest is their output); in the other shell blocks every line is.
fn shell_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<Option<&str>> = None; // inside a block: Some(its shell kind, if any)
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            fence = match fence {
                None => {
                    let lang = info.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
                    Some(SHELL_BLOCKS.iter().copied().find(|s| *s == lang))
                }
                Some(_) => None,
            };
            pending = None;
            continue;
        }
        let Some(Some(kind)) = fence else { continue };
        let (start, mut line) = match pending.take() {
            Some((start, mut acc)) => {
                acc.push(' ');
                acc.push_str(trimmed);
                (start, acc)
            }
            None => match (kind, trimmed.strip_prefix("$ ")) {
                (_, Some(command)) => (i + 1, command.to_string()),
                ("console", None) => continue,
                (_, None) => (i + 1, trimmed.to_string()),
            },
        };
        if line.ends_with('\\') {
            line.pop();
            line.truncate(line.trim_end().len());
            pending = Some((start, line));
        } else {
            out.push((start, line));
        }
    }
    out
}

/// Shell words of one line, quotes removed; a `#` word starts a comment; `|`, `&&`, `||` and
/// `;` end a command and are returned as words of their own.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    word.push(q);
                }
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '|' | '&' | ';' if !in_word || word.is_empty() => {
                let mut op = c.to_string();
                if chars.peek() == Some(&c) {
                    op.push(c);
                    chars.next();
                }
                words.push(op);
                in_word = false;
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Every `ken` command in the shell blocks of the docs: a line that begins with `ken ` (after
/// an optional `$ ` prompt and `NAME=value` assignments), and any later `ken` command
/// chained on it with `&&`, `||`, `;` or `|`.
fn doc_commands() -> Vec<DocCommand> {
    let mut commands = Vec::new();
    for file in doc_files() {
        let text = std::fs::read_to_string(&file).expect("read doc");
        let name = file
            .strip_prefix(repo_root())
            .expect("in repo")
            .display()
            .to_string();
        for (line_no, line) in shell_lines(&text) {
            let words = shell_words(&line);
            let mut segments = words.split(|w| ["|", "||", "&&", ";", "&"].contains(&w.as_str()));
            let first = segments.next().unwrap_or(&[]);
            if program(first).is_none() {
                continue;
            }
            for segment in std::iter::once(first).chain(segments) {
                if let Some(words) = program(segment) {
                    commands.push(DocCommand {
                        place: format!("{name}:{line_no}"),
                        words: words.to_vec(),
                    });
                }
            }
        }
    }
    commands
}

/// The words of a command that runs `ken`, leading `NAME=value` assignments left out.
fn program(segment: &[String]) -> Option<&[String]> {
    let start = segment.iter().position(|w| !is_assignment(w))?;
    (segment[start] == "ken").then(|| &segment[start..])
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

/// `ken <path> --help`, cached by path.
struct HelpCache(BTreeMap<Vec<String>, Output>);

impl HelpCache {
    fn get(&mut self, path: &[String]) -> &Output {
        self.0.entry(path.to_vec()).or_insert_with(|| {
            Command::new(ken_bin())
                .args(path)
                .arg("--help")
                .output()
                .expect("run ken --help")
        })
    }
}

/// The subcommands a help text lists under `Commands:`.
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("    "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Whether the help's first usage line requires a subcommand.
fn requires_subcommand(help: &str) -> bool {
    help.lines()
        .find(|l| l.starts_with("Usage:"))
        .is_some_and(|l| l.trim_end().ends_with("<COMMAND>"))
}

/// The help text mentions `flag` as a whole option name (`--json` is not `--json-lines`).
fn mentions_flag(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(at, _)| {
        let before = help[..at].chars().next_back();
        let after = help[at + flag.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '-')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')
    })
}

/// What is wrong with one doc command, if anything: its subcommand path must answer `--help`
/// and list every `--flag` the doc gives it.
fn check(command: &DocCommand, helps: &mut HelpCache) -> Option<String> {
    let shown = command.words.join(" ");
    let mut path: Vec<String> = Vec::new();
    for word in &command.words[1..] {
        let help = stdout(helps.get(&path));
        if subcommands(&help).contains(word) {
            path.push(word.clone());
        } else if word.starts_with('-') && path.is_empty() {
            continue; // a global option before the subcommand
        } else if requires_subcommand(&help) {
            return Some(format!(
                "`{word}` is not a subcommand of `ken {}`",
                path.join(" ")
            ));
        } else {
            break;
        }
    }
    if path.is_empty() {
        return Some("names no subcommand".to_string());
    }
    let out = helps.get(&path);
    if !out.status.success() {
        return Some(format!("`ken {} --help` failed: {}", path.join(" "), stderr(out)));
    }
    let help = stdout(out);
    // Words after a bare `--` belong to the command `ken exec` runs, not to `ken`.
    let unknown: Vec<&str> = command
        .words
        .iter()
        .take_while(|w| *w != "--")
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| w.split('=').next().unwrap_or(w))
        .filter(|flag| !mentions_flag(&help, flag))
        .collect();
    (!unknown.is_empty()).then(|| {
        format!(
            "`ken {} --help` does not list {}: {shown}",
            path.join(" "),
            unknown.join(", ")
        )
    })
}

#[test]
fn every_ken_command_in_the_docs_is_known_to_the_binary() {
    let commands = doc_commands();
    assert!(
        commands.len() >= 40,
        "only {} `ken` commands found in the docs: is the extraction broken?",
        commands.len()
    );
    let mut helps = HelpCache(BTreeMap::new());
    let faults: Vec<String> = commands
        .iter()
        .filter_map(|c| check(c, &mut helps).map(|why| format!("{}: {why}", c.place)))
        .collect();
    assert!(
        faults.is_empty(),
        "commands in the docs that the binary rejects:\n{}",
        faults.join("\n")
    );
}

#[test]
fn the_docs_show_every_main_command() {
    let commands = doc_commands();
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    for path in [
        "index build",
        "search",
        "context",
        "ask",
        "overview",
        "impact",
        "serve",
        "install",
        "agent",
        "exec",
        "audit",
        "index push",
        "index pull",
        "fleet",
        "worker",
    ] {
        let words: Vec<&str> = path.split(' ').collect();
        let shows = |c: &DocCommand| c.words.len() > words.len() && c.words[1..=words.len()] == words[..];
        assert!(commands.iter().any(shows), "no doc shows `ken {path}`");
        assert!(
            readme.contains(&format!("ken {path}")),
            "the README's tour leaves out `ken {path}`"
        );
    }
}

#[test]
fn a_misspelt_flag_or_subcommand_is_caught() {
    let mut helps = HelpCache(BTreeMap::new());
    let doc = |line: &str| DocCommand {
        place: "example".to_string(),
        words: shell_words(line),
    };
    assert_eq!(
        check(&doc("ken search --lexical register_hook"), &mut helps),
        None
    );
    assert_eq!(
        check(&doc("ken index push --remote file:///tmp/x"), &mut helps),
        None
    );
    assert!(check(&doc("ken search --lexicall register_hook"), &mut helps).is_some());
    assert!(check(&doc("ken index biuld ."), &mut helps).is_some());
    assert!(check(&doc("ken serach foo"), &mut helps).is_some());
    let lines = shell_lines(
        "```sh\nken index build . \\\n  --json # the report\n```\n```\nken nope --x\n```\n\
         ```console\n$ ken symbol Cart\nken exec: exit 0\n```\n",
    );
    let expected = [
        (2, "ken index build . --json # the report"),
        (9, "ken symbol Cart"),
    ];
    assert_eq!(lines, expected.map(|(n, l)| (n, l.to_string())));
    assert_eq!(
        shell_words("OPENAI_BASE_URL=http://h ken ask 'a # b' | head"),
        ["OPENAI_BASE_URL=http://h", "ken", "ask", "a # b", "|", "head"]
    );
}

const SHOP: &str = r#"
//- src/shop/__init__.py
from .cart import Cart
//- src/shop/cart.py
class Cart:
    def __init__(self, prices, coupon=0.0):
        self.prices = prices
        self.coupon = coupon

    def total(self):
        """The sum of the prices, less the coupon."""
        return apply_discount(sum(self.prices), self.coupon)


def apply_discount(amount, coupon):
    return amount * (1 - coupon)
//- tests/test_cart.py
from shop.cart import Cart


def test_total():
    assert Cart([10, 10], coupon=0.5).total() == 10
"#;

/// `ken` in `dir` with the state and config folders inside `home` and no model configured.
fn run(args: &[&str], dir: &Path, home: &Path) -> Output {
    Command::new(ken_bin())
        .args(args)
        .current_dir(dir)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("KEN_MODEL")
        .env_remove("KEN_REMOTE")
        .output()
        .expect("run ken")
}

#[test]
fn the_tour_commands_run_on_a_small_repository() {
    let repo = materialize(SHOP);
    let home = tempfile::tempdir().expect("tempdir");
    git(repo.path(), &["init", "-q"]);
    commit_all(repo.path(), "shop");
    let store = format!("file://{}", home.path().join("snapshots").display());
    let tour: &[&[&str]] = &[
        &["index", "build", "."],
        &["index", "status"],
        &["symbol", "Cart"],
        &["search", "apply the coupon discount"],
        &["search", "--lexical", "apply_discount"],
        &[
            "context",
            "why does the total ignore the coupon?",
            "--budget",
            "600",
        ],
        &["ask", "how is the total computed?"],
        &["overview", "--budget", "400"],
        &["callers", "apply_discount"],
        &["impact", "--symbol", "apply_discount"],
        &["install", "--dry-run", "--agent", "claude"],
        &["exec", "--explain", "--", "rm", "-rf", "build"],
        &["index", "push", "--remote", &store, "--name", "shop"],
    ];
    for args in tour {
        let out = run(args, repo.path(), home.path());
        assert!(out.status.success(), "ken {}: {}", args.join(" "), stderr(&out));
        assert!(
            !stdout(&out).trim().is_empty(),
            "ken {} printed nothing",
            args.join(" ")
        );
    }
    let impact = stdout(&run(
        &["impact", "--symbol", "apply_discount"],
        repo.path(),
        home.path(),
    ));
    assert!(impact.contains("pytest tests/test_cart.py"), "{impact}");

    let clone = home.path().join("clone");
    git(
        home.path(),
        &["clone", "-q", &repo.path().display().to_string(), "clone"],
    );
    let pull = run(
        &["index", "pull", "--remote", &store, "--name", "shop"],
        &clone,
        home.path(),
    );
    assert!(pull.status.success(), "{}", stderr(&pull));
    let found = run(&["symbol", "apply_discount"], &clone, home.path());
    assert!(stdout(&found).contains("src/shop/cart.py"), "{}", stderr(&found));
}
