//! `ken install` / `ken uninstall`: registers `ken serve --mcp` with the coding agents on
//! this machine (Claude Code, Codex, Cursor, VS Code, Gemini CLI, OpenCode), with a short
//! instructions block saying when to call which tool, and a Claude Code sub-agent.
//!
//! Edits are surgical: a JSON config gets one `"kenning"` entry inserted into its server
//! object (created if missing) with the rest of the text untouched; TOML and Markdown get a
//! block between `kenning:start` / `kenning:end` markers. A file whose client reads YAML front
//! matter (the sub-agent, the Cursor rule) is Kenning's whole: front matter on line 1, the
//! marked block after it. `ken uninstall` removes exactly that entry or block, and a file or
//! object only when `ken install` created it. What was created is recorded in
//! `<state dir>/kenning/installs.json`, by file.
//!
//! Invariants: every change is computed and checked before the first write, and a write that
//! fails undoes the run's earlier writes (`FileWrites`); a project install writes only inside
//! the project (a symbolic link out of it is refused) and names no path of this machine when
//! `ken` on PATH is this program; a user install names no repository: the server serves the
//! folder its client starts it in.

mod file_writes;

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use self::file_writes::FileWrites;
use super::args::{InstallArgs, InstallScope};

const START: &str = "kenning:start";
const END: &str = "kenning:end";

const INSTRUCTIONS: &str = "## Kenning (code search and context)\n\n\
The repository you work in is indexed by Kenning, available as the `kenning` MCP server. Prefer \
it to reading whole files:\n\
- a new task, bug report or question: call `context` with the task text first;\n\
- finding code by name, message or meaning: `search` (it lists the line spans to read), `symbol`;\n\
- who uses something: `callers`, `refs`; before or after an edit: `impact` (and the tests to run);\n\
- exact lines: `read_span` (`path:START-END`).\n";

/// The Claude Code sub-agent's front matter (plain YAML scalars: no `: ` or ` #` inside).
const SUBAGENT_FRONT: &str = "name: kenning-explorer\ndescription: Finds the code relevant to a task in \
this repository with the kenning MCP tools (context, search, symbol, callers, refs, impact, read_span) and \
reports paths with line spans. Use it before reading files by hand.\ntools: mcp__kenning__context, \
mcp__kenning__search, mcp__kenning__symbol, mcp__kenning__callers, mcp__kenning__refs, \
mcp__kenning__impact, mcp__kenning__read_span\n";

const SUBAGENT: &str = "Start with `context` on the task. Follow up with `search`, `symbol`, `callers` and \
`refs`. Answer with `path:START-END` spans and one line on why each matters; quote code only where it \
decides the answer.\n";

const CURSOR_RULE_FRONT: &str = "description: When to use the kenning MCP tools\nalwaysApply: true\n";

/// One file an agent reads, and what Kenning puts there.
#[derive(Debug, Clone)]
enum Edit {
    /// A JSON (or JSONC) file: `"kenning": entry` inside the object at `container`.
    Json {
        path: PathBuf,
        container: &'static str,
        entry: serde_json::Value,
    },
    /// A TOML or Markdown file: a marked block at its end (`comment` makes a marker line).
    Block {
        path: PathBuf,
        text: String,
        comment: fn(&str) -> String,
    },
    /// A Markdown file whose client reads YAML front matter, which must be its line 1: the
    /// file is Kenning's, `---` front matter `---` then the marked block.
    Fronted {
        path: PathBuf,
        front: &'static str,
        text: &'static str,
    },
}

impl Edit {
    fn path(&self) -> &Path {
        match self {
            Edit::Json { path, .. } | Edit::Block { path, .. } | Edit::Fronted { path, .. } => path,
        }
    }
}

fn hash_comment(m: &str) -> String {
    format!("# {m}")
}

fn html_comment(m: &str) -> String {
    format!("<!-- {m} -->")
}

pub const AGENTS: [&str; 6] = ["claude", "codex", "cursor", "vscode", "gemini", "opencode"];

/// What installing for `agent` at `scope` writes (`base`: the repository for project scope,
/// the home folder for user scope; `ken`: the program the configs start).
fn edits(agent: &str, scope: InstallScope, base: &Path, ken: &str) -> Result<Vec<Edit>> {
    let project = scope == InstallScope::Project;
    // No `--repo`, at either scope: the client starts the server in the project it has open
    // and `ken serve` finds the repository from there. A user config naming one repository
    // would serve it to every other project's agent.
    let args = SERVE_ARGS;
    let standard = serde_json::json!({"command": ken, "args": args});
    Ok(match (agent, project) {
        ("claude", true) => vec![
            mcp_json(base.join(".mcp.json"), "mcpServers", standard),
            instructions(base.join("CLAUDE.md")),
            subagent(base.join(".claude/agents/kenning-explorer.md")),
        ],
        ("claude", false) => vec![
            mcp_json(base.join(".claude.json"), "mcpServers", standard),
            instructions(base.join(".claude/CLAUDE.md")),
            subagent(base.join(".claude/agents/kenning-explorer.md")),
        ],
        ("codex", _) => codex_edits(project, base, ken),
        ("cursor", _) => {
            let mut e = vec![mcp_json(base.join(".cursor/mcp.json"), "mcpServers", standard)];
            if project {
                e.push(Edit::Fronted {
                    path: base.join(".cursor/rules/kenning.mdc"),
                    front: CURSOR_RULE_FRONT,
                    text: INSTRUCTIONS,
                });
            }
            e
        }
        ("vscode", true) => vec![
            mcp_json(
                base.join(".vscode/mcp.json"),
                "servers",
                serde_json::json!({"type": "stdio", "command": ken, "args": args}),
            ),
            instructions(base.join(".github/copilot-instructions.md")),
        ],
        ("vscode", false) => bail!(
            "VS Code keeps user MCP servers in its profile: use `--scope project` (writes .vscode/mcp.json)"
        ),
        ("gemini", _) => vec![
            mcp_json(base.join(".gemini/settings.json"), "mcpServers", standard),
            instructions(match project {
                true => base.join("GEMINI.md"),
                false => base.join(".gemini/GEMINI.md"),
            }),
        ],
        ("opencode", _) => opencode_edits(project, base, ken),
        (other, _) => bail!("unknown agent `{other}` (one of {})", AGENTS.join(", ")),
    })
}

/// The arguments every config starts `ken` with.
const SERVE_ARGS: [&str; 2] = ["serve", "--mcp"];

fn mcp_json(path: PathBuf, container: &'static str, entry: serde_json::Value) -> Edit {
    Edit::Json {
        path,
        container,
        entry,
    }
}

/// The instructions as a marked block of a Markdown file.
fn instructions(path: PathBuf) -> Edit {
    Edit::Block {
        path,
        text: INSTRUCTIONS.to_string(),
        comment: html_comment,
    }
}

fn subagent(path: PathBuf) -> Edit {
    Edit::Fronted {
        path,
        front: SUBAGENT_FRONT,
        text: SUBAGENT,
    }
}

/// Codex: a TOML server table and AGENTS.md.
fn codex_edits(project: bool, base: &Path, ken: &str) -> Vec<Edit> {
    let quoted: Vec<String> = SERVE_ARGS.iter().map(|a| toml_string(a)).collect();
    vec![
        Edit::Block {
            path: base.join(".codex/config.toml"),
            text: format!(
                "[mcp_servers.kenning]\ncommand = {}\nargs = [{}]\n",
                toml_string(ken),
                quoted.join(", ")
            ),
            comment: hash_comment,
        },
        instructions(match project {
            true => base.join("AGENTS.md"),
            false => base.join(".codex/AGENTS.md"),
        }),
    ]
}

/// opencode: a local server with the command as one list, and AGENTS.md.
fn opencode_edits(project: bool, base: &Path, ken: &str) -> Vec<Edit> {
    let mut command = vec![ken.to_string()];
    command.extend(SERVE_ARGS.iter().map(|a| a.to_string()));
    vec![
        mcp_json(
            match project {
                true => base.join("opencode.json"),
                false => base.join(".config/opencode/opencode.json"),
            },
            "mcp",
            serde_json::json!({"type": "local", "command": command, "enabled": true}),
        ),
        instructions(match project {
            true => base.join("AGENTS.md"),
            false => base.join(".config/opencode/AGENTS.md"),
        }),
    ]
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// Agents that look installed: their configuration folder exists or their program is on PATH.
fn detected(home: &Path) -> Vec<&'static str> {
    let on_path = |bin: &str| {
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
    };
    AGENTS
        .into_iter()
        .filter(|a| match *a {
            "claude" => {
                home.join(".claude").is_dir() || home.join(".claude.json").is_file() || on_path("claude")
            }
            "codex" => home.join(".codex").is_dir() || on_path("codex"),
            "cursor" => home.join(".cursor").is_dir() || on_path("cursor") || on_path("cursor-agent"),
            "vscode" => home.join(".vscode").is_dir() || on_path("code"),
            "gemini" => home.join(".gemini").is_dir() || on_path("gemini"),
            "opencode" => home.join(".config/opencode").is_dir() || on_path("opencode"),
            _ => false,
        })
        .collect()
}

// ----------------------------------------------------------------------------- JSON, by hand

/// One member of a JSON object: its key, where its key's quote opens, where its value
/// starts and where it ends.
type Member = (String, usize, usize, usize);

/// Byte ranges of a JSON(C) object's members (for the object opening at `open`), and where
/// the object closes.
fn members(text: &str, open: usize) -> Result<(Vec<Member>, usize)> {
    let b = text.as_bytes();
    let mut i = open + 1;
    let mut out = Vec::new();
    loop {
        i = skip_space(b, i);
        match b.get(i) {
            Some(b'}') => return Ok((out, i)),
            Some(b',') => {
                i += 1;
                continue;
            }
            Some(b'"') => {
                let key_end = string_end(b, i)?;
                let key: String = serde_json::from_str(&text[i..key_end])?;
                let colon = skip_space(b, key_end);
                if b.get(colon) != Some(&b':') {
                    bail!("expected `:` after {key:?}");
                }
                let value = skip_space(b, colon + 1);
                let value_end = value_end(b, value)?;
                out.push((key, i, value, value_end));
                i = value_end;
            }
            _ => bail!("unexpected text at byte {i}"),
        }
    }
}

fn skip_space(b: &[u8], mut i: usize) -> usize {
    loop {
        while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        match (b.get(i), b.get(i + 1)) {
            (Some(b'/'), Some(b'/')) => {
                while b.get(i).is_some_and(|c| *c != b'\n') {
                    i += 1;
                }
            }
            (Some(b'/'), Some(b'*')) => {
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i = (i + 2).min(b.len());
            }
            _ => return i,
        }
    }
}

fn string_end(b: &[u8], start: usize) -> Result<usize> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Ok(i + 1),
            _ => i += 1,
        }
    }
    bail!("unterminated string")
}

fn value_end(b: &[u8], start: usize) -> Result<usize> {
    match b.get(start) {
        Some(b'"') => string_end(b, start),
        Some(b'{') | Some(b'[') => {
            let mut depth = 0usize;
            let mut i = start;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = string_end(b, i)?;
                        continue;
                    }
                    b'/' if matches!(b.get(i + 1), Some(b'/') | Some(b'*')) => {
                        i = skip_space(b, i);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            bail!("unterminated object or array")
        }
        Some(_) => {
            let mut i = start;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']') && !b[i].is_ascii_whitespace() {
                i += 1;
            }
            Ok(i)
        }
        None => bail!("a value is missing"),
    }
}

fn top_object(text: &str) -> Result<usize> {
    let i = skip_space(text.as_bytes(), 0);
    match text.as_bytes().get(i) {
        Some(b'{') => Ok(i),
        _ => bail!("not a JSON object"),
    }
}

/// Inserts `"key": value` as the first member of the object opening at `open`.
fn insert_member(text: &str, open: usize, key: &str, value: &str, indent: &str) -> Result<String> {
    let (existing, _) = members(text, open)?;
    let comma = if existing.is_empty() { "" } else { "," };
    let key = serde_json::to_string(key)?;
    Ok(format!(
        "{}\n{indent}{key}: {value}{comma}{}",
        &text[..=open],
        &text[open + 1..]
    ))
}

/// Removes the member `key` of the object opening at `open`, with its separating comma.
fn remove_member(text: &str, open: usize, key: &str) -> Result<Option<String>> {
    let (all, _) = members(text, open)?;
    let Some(pos) = all.iter().position(|m| m.0 == key) else {
        return Ok(None);
    };
    let (_, start, _, end) = all[pos];
    let b = text.as_bytes();
    let (from, to) = match (pos + 1 < all.len(), pos > 0) {
        // Up to the next member: the comma after this one goes with it.
        (true, _) => (line_start(b, start), line_start(b, all[pos + 1].1)),
        // The last of several: the comma after the previous member goes.
        (false, true) => (all[pos - 1].3, end),
        (false, false) => (open + 1, skip_space_no_comments(b, end)),
    };
    Ok(Some(format!("{}{}", &text[..from], &text[to..])))
}

fn line_start(b: &[u8], mut i: usize) -> usize {
    while i > 0 && matches!(b[i - 1], b' ' | b'\t') {
        i -= 1;
    }
    i
}

fn skip_space_no_comments(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    // Keep the closing brace on its own line.
    while i > 0 && b[i - 1] != b'\n' && b.get(i) == Some(&b'}') && b[i - 1].is_ascii_whitespace() {
        i -= 1;
    }
    i
}

/// The JSON text with `"kenning": entry` in `container` (made when missing).
fn json_with(text: &str, container: &str, entry: &serde_json::Value) -> Result<String> {
    let top = top_object(text)?;
    let (all, _) = members(text, top)?;
    let pretty = |v: &serde_json::Value, indent: &str| -> Result<String> {
        Ok(serde_json::to_string_pretty(v)?.replace('\n', &format!("\n{indent}")))
    };
    match all.iter().find(|m| m.0 == container) {
        Some(&(_, _, value, _)) => {
            if text.as_bytes().get(value) != Some(&b'{') {
                bail!("`{container}` is not an object");
            }
            if members(text, value)?.0.iter().any(|m| m.0 == "kenning") {
                bail!("`{container}` already has a `kenning` server: `ken uninstall` first");
            }
            insert_member(text, value, "kenning", &pretty(entry, "    ")?, "    ")
        }
        None => {
            let wrapped = serde_json::json!({ "kenning": entry });
            insert_member(text, top, container, &pretty(&wrapped, "  ")?, "  ")
        }
    }
}

/// The JSON text without the `kenning` entry (and without `container` when `drop_container`
/// and it is left empty); `None` when there is no entry.
fn json_without(text: &str, container: &str, drop_container: bool) -> Result<Option<String>> {
    let top = top_object(text)?;
    let (all, _) = members(text, top)?;
    let Some(&(_, _, value, _)) = all.iter().find(|m| m.0 == container) else {
        return Ok(None);
    };
    let Some(out) = remove_member(text, value, "kenning")? else {
        return Ok(None);
    };
    if drop_container {
        let top = top_object(&out)?;
        let (all, _) = members(&out, top)?;
        if let Some(&(_, _, v, _)) = all.iter().find(|m| m.0 == container)
            && members(&out, v)?.0.is_empty()
            && let Some(gone) = remove_member(&out, top, container)?
        {
            return Ok(Some(gone));
        }
    }
    Ok(Some(out))
}

// ----------------------------------------------------------------------------- blocks

fn block_with(text: &str, block: &str, comment: fn(&str) -> String) -> Result<String> {
    if text.contains(&comment(START)) {
        bail!("a kenning block is there already: `ken uninstall` first");
    }
    let sep = match text.is_empty() || text.ends_with("\n\n") {
        true => "",
        false if text.ends_with('\n') => "\n",
        false => "\n\n",
    };
    Ok(format!(
        "{text}{sep}{}\n{block}{}\n",
        comment(START),
        comment(END)
    ))
}

fn block_without(text: &str, comment: fn(&str) -> String) -> Option<String> {
    let (start, end) = (comment(START), comment(END));
    let a = text.find(&start)?;
    let b = text[a..].find(&end)? + a + end.len();
    let b = if text[b..].starts_with('\n') { b + 1 } else { b };
    // The blank line `block_with` put before the block goes with it.
    let a = if text[..a].ends_with("\n\n") { a - 1 } else { a };
    Some(format!("{}{}", &text[..a], &text[b..]))
}

/// A fronted file: front matter on line 1, where Claude Code and Cursor look for it (they
/// read none after a marker line), then the marked block.
fn fronted(front: &str, text: &str) -> String {
    format!(
        "---\n{front}---\n{}\n{text}{}\n",
        html_comment(START),
        html_comment(END)
    )
}

/// The text without what `fronted` wrote: the front matter and the block right after it.
/// A file from before front matter came first (marker on line 1, front matter inside the
/// block) loses its block. `None`: no block.
fn fronted_without(text: &str) -> Option<String> {
    let start = html_comment(START);
    let block_at = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.find("\n---\n"))
        .map(|close| "---\n".len() + close + "\n---\n".len())
        .filter(|at| text[*at..].starts_with(&start));
    match block_at {
        Some(at) => block_without(&text[at..], html_comment),
        None => block_without(text, html_comment),
    }
}

/// The text `edit` leaves in a file that holds `existing` (`None`: absent), and whether it
/// creates the JSON container.
fn installed_text(edit: &Edit, existing: Option<&str>) -> Result<(String, bool)> {
    match edit {
        Edit::Json { container, entry, .. } => {
            // A new file: the closing brace on its own line after the entry.
            let text = existing.unwrap_or("{\n}\n");
            let had = top_object(text)
                .and_then(|t| members(text, t))
                .map(|(m, _)| m.iter().any(|m| m.0 == *container))
                .context("not a JSON object")?;
            Ok((json_with(text, container, entry)?, !had))
        }
        Edit::Block { text, comment, .. } => Ok((block_with(existing.unwrap_or(""), text, *comment)?, false)),
        Edit::Fronted { front, text, .. } => match existing.filter(|t| !t.trim().is_empty()) {
            None => Ok((fronted(front, text), false)),
            Some(t) if t.contains(&html_comment(START)) => {
                bail!("a kenning block is there already: `ken uninstall` first")
            }
            Some(_) => bail!(
                "the file is there and is not Kenning's (its front matter must be line 1, so nothing is added to it): move it away first"
            ),
        },
    }
}

// ----------------------------------------------------------------------------- paths

/// Where writing `path` lands: each symbolic link on the way followed (a dangling one too),
/// as far as the path exists; the rest appended.
fn real_location(path: &Path) -> Result<PathBuf> {
    real_location_within(path, 40)
}

fn real_location_within(path: &Path, hops: u32) -> Result<PathBuf> {
    if hops == 0 {
        bail!("{}: too many levels of symbolic links", path.display());
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            let to =
                std::fs::read_link(path).with_context(|| format!("reading the link {}", path.display()))?;
            // A relative target is relative to the link's folder; `join` keeps an absolute one.
            let next = path.parent().map_or(to.clone(), |d| d.join(&to));
            real_location_within(&next, hops - 1)
        }
        Ok(_) => std::fs::canonicalize(path).with_context(|| format!("resolving {}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let Some(parent) = path.parent() else {
                return Ok(path.to_path_buf());
            };
            let parent = real_location_within(parent, hops - 1)?;
            Ok(match path.components().next_back() {
                Some(Component::ParentDir) => parent.parent().map_or(parent.clone(), Path::to_path_buf),
                Some(Component::Normal(name)) => parent.join(name),
                _ => parent,
            })
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Refuses a project file that a symbolic link sends outside the project `base` (canonical):
/// the file is meant for this project, and the link's target may be anyone's.
fn check_inside(base: &Path, path: &Path, real: &Path) -> Result<()> {
    if real.starts_with(base) {
        return Ok(());
    }
    let link = path
        .ancestors()
        .take_while(|p| p.starts_with(base) && *p != base)
        .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()));
    match link.map(|l| (l, std::fs::read_link(l))) {
        Some((l, Ok(to))) => bail!(
            "{} is a symbolic link to {}, outside the project {}: `ken install` writes only inside the project, and nothing was written",
            l.display(),
            to.display(),
            base.display()
        ),
        _ => bail!(
            "{} leads to {}, outside the project {}: `ken install` writes only inside the project, and nothing was written",
            path.display(),
            real.display(),
            base.display()
        ),
    }
}

/// A file's text; `None` when it is not there.
fn read_text(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

// ----------------------------------------------------------------------------- the record

type Record = serde_json::Map<String, serde_json::Value>;

/// What `ken install` created (files, JSON objects), so `ken uninstall` removes only that.
fn record_path() -> Result<PathBuf> {
    super::exec_commands::state_dir()
        .map(|d| d.join("installs.json"))
        .context("no state folder: set XDG_STATE_HOME or HOME")
}

fn read_record() -> Result<Record> {
    Ok(std::fs::read(record_path()?)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default())
}

/// Saves the record as the run's last write, so that a failure here undoes the run too.
fn save_record(writes: &mut FileWrites, r: &Record) -> Result<()> {
    // Its real location: an undo removes a file, never a link someone made.
    let path = real_location(&record_path()?)?;
    let before = match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    writes.write(&path, &serde_json::to_vec_pretty(r)?, before)
}

// ----------------------------------------------------------------------------- commands

/// One file's change, decided before anything is written.
struct Change {
    agent: &'static str,
    /// The path the client reads, and the record's key.
    path: PathBuf,
    /// Where the bytes land (symbolic links followed).
    real: PathBuf,
    before: Option<String>,
    /// `None`: the file goes.
    after: Option<String>,
    created_container: bool,
}

impl Change {
    fn key(&self) -> String {
        self.path.display().to_string()
    }
}

/// The folder the files go under (the canonical repository, or the home folder) and the agents.
fn targets(a: &InstallArgs) -> Result<(PathBuf, Vec<&'static str>)> {
    let home = PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?);
    let base = match a.scope {
        InstallScope::Project => {
            let repo = match &a.repo {
                Some(r) => r.clone(),
                None => std::env::current_dir().context("cannot read the current folder")?,
            };
            std::fs::canonicalize(&repo).with_context(|| format!("--repo {}", repo.display()))?
        }
        InstallScope::User => home.clone(),
    };
    let agents: Vec<&'static str> = match a.agent.is_empty() {
        true => detected(&home),
        false => {
            let mut v = Vec::new();
            for name in &a.agent {
                match AGENTS.iter().find(|x| **x == name.as_str()) {
                    Some(x) => v.push(*x),
                    None => bail!("--agent {name}: not one of {}", AGENTS.join(", ")),
                }
            }
            v
        }
    };
    if agents.is_empty() {
        bail!(
            "no coding agent found here; name one with --agent ({})",
            AGENTS.join(", ")
        );
    }
    Ok((base, agents))
}

/// The program the configs start. Project files are meant to be committed, so they name
/// `ken` when the first `ken` on PATH is this very program (canonical paths compared), else
/// this program's absolute path, with a note. User files name the absolute path: a client
/// started from a desktop may not see the shell's PATH.
fn ken_command(scope: InstallScope) -> Result<String> {
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("cannot find the path of this program")?;
    let absolute = exe
        .to_str()
        .map(str::to_string)
        .with_context(|| format!("{}: the path of this program is not UTF-8", exe.display()))?;
    if scope == InstallScope::User {
        return Ok(absolute);
    }
    let on_path = first_on_path("ken");
    if on_path.as_deref().and_then(|p| std::fs::canonicalize(p).ok()) == Some(exe) {
        return Ok("ken".to_string());
    }
    let why = match on_path {
        Some(p) => format!("the first `ken` on PATH, {}, is another program", p.display()),
        None => "there is no `ken` on PATH".to_string(),
    };
    eprintln!("note: the project files name {absolute}, a path on this machine only: {why}");
    Ok(absolute)
}

/// The first executable `name` in PATH's folders, as a client's shell would find it.
fn first_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|c| is_executable(c))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// Every file install changes, with its new text; fails before anything is written.
fn install_plan(agents: &[&'static str], scope: InstallScope, base: &Path, ken: &str) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    let mut seen = HashSet::new();
    for &agent in agents {
        for edit in edits(agent, scope, base, ken)? {
            let path = edit.path().to_path_buf();
            let real = real_location(&path)?;
            if scope == InstallScope::Project {
                check_inside(base, &path, &real)?;
            }
            // Two agents may share a file (AGENTS.md), or a link make two names one file:
            // one block is enough.
            if !seen.insert(real.clone()) {
                continue;
            }
            let before = read_text(&real)?;
            let (after, created_container) =
                installed_text(&edit, before.as_deref()).with_context(|| path.display().to_string())?;
            changes.push(Change {
                agent,
                path,
                real,
                before,
                after: Some(after),
                created_container,
            });
        }
    }
    Ok(changes)
}

/// Every file uninstall changes: the entry or block taken out, the file gone when install
/// made it and nothing else is left.
fn uninstall_plan(
    agents: &[&'static str],
    scope: InstallScope,
    base: &Path,
    record: &Record,
) -> Result<Vec<Change>> {
    let mut changes = Vec::new();
    let mut seen = HashSet::new();
    for &agent in agents {
        // The command in the entry does not matter: the entry goes by its name.
        for edit in edits(agent, scope, base, "ken")? {
            let path = edit.path().to_path_buf();
            let Ok(real) = real_location(&path) else {
                continue;
            };
            if !seen.insert(real.clone()) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&real) else {
                continue;
            };
            let made = record
                .get(&path.display().to_string())
                .cloned()
                .unwrap_or_default();
            let flag = |k: &str| made.get(k).and_then(serde_json::Value::as_bool).unwrap_or(false);
            let new = match &edit {
                Edit::Json { container, .. } => json_without(&text, container, flag("created_container"))
                    .with_context(|| path.display().to_string())?,
                Edit::Block { comment, .. } => block_without(&text, *comment),
                Edit::Fronted { .. } => fronted_without(&text),
            };
            let Some(new) = new else {
                continue;
            };
            // A file install made, holding nothing else now, goes; so does an emptied fronted
            // file without a record (another state folder): install writes those only whole.
            let bare: String = new.chars().filter(|c| !c.is_whitespace()).collect();
            let empty = bare.is_empty() || bare == "{}";
            let goes = empty && (flag("created_file") || matches!(edit, Edit::Fronted { .. }));
            changes.push(Change {
                agent,
                path,
                real,
                before: Some(text),
                after: (!goes).then_some(new),
                created_container: false,
            });
        }
    }
    Ok(changes)
}

/// Makes `changes` and saves `record`; on a failure, puts back every file it had changed.
fn apply(verb: &str, changes: &[Change], record: &Record) -> Result<()> {
    let mut writes = FileWrites::default();
    let Err(e) = apply_each(&mut writes, changes, record) else {
        return Ok(());
    };
    let failed = writes.undo();
    match failed.is_empty() {
        true => Err(e.context(format!(
            "`ken {verb}` stopped part way and put back every file it had changed"
        ))),
        false => Err(e.context(format!(
            "`ken {verb}` stopped part way, and could not put back: {}",
            failed.join("; ")
        ))),
    }
}

fn apply_each(writes: &mut FileWrites, changes: &[Change], record: &Record) -> Result<()> {
    for c in changes {
        let before = c.before.clone().map(String::into_bytes);
        match &c.after {
            Some(text) => writes.write(&c.real, text.as_bytes(), before)?,
            None => writes.remove(&c.real, before.unwrap_or_default())?,
        }
    }
    save_record(writes, record)
}

pub fn install(a: InstallArgs) -> Result<ExitCode> {
    if a.scope == InstallScope::User && a.repo.is_some() {
        bail!(
            "--repo does not go with --scope user: a user install serves whichever project the agent is opened in"
        );
    }
    let (base, agents) = targets(&a)?;
    let ken = ken_command(a.scope)?;
    let changes = install_plan(&agents, a.scope, &base, &ken)?;
    if !a.dry_run {
        let mut record = read_record()?;
        for c in &changes {
            record.insert(
                c.key(),
                serde_json::json!({"created_file": c.before.is_none(), "created_container": c.created_container}),
            );
        }
        apply("install", &changes, &record)?;
    }
    for c in &changes {
        let verb = if a.dry_run { "would write" } else { "wrote" };
        println!("{verb} {} ({})", c.path.display(), c.agent);
    }
    Ok(ExitCode::SUCCESS)
}

/// Uninstall takes `--repo` at user scope too (and ignores it there): the old user install
/// named a repository, and its users may name it again to remove it.
pub fn uninstall(a: InstallArgs) -> Result<ExitCode> {
    let (base, agents) = targets(&a)?;
    let mut record = read_record()?;
    let changes = uninstall_plan(&agents, a.scope, &base, &record)?;
    if !a.dry_run {
        for c in &changes {
            record.remove(&c.key());
        }
        apply("uninstall", &changes, &record)?;
    }
    for c in &changes {
        let verb = match (a.dry_run, c.after.is_none()) {
            (true, true) => "would remove",
            (true, false) => "would edit",
            (false, true) => "removed",
            (false, false) => "edited",
        };
        println!("{verb} {} ({})", c.path.display(), c.agent);
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "{\n  // my servers\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\"command\": \"x\"}\n  }\n}\n";

    #[test]
    fn a_json_entry_goes_in_and_out_leaving_every_other_byte() {
        let entry = serde_json::json!({"command": "ken", "args": ["serve", "--mcp"]});
        let with = json_with(CONFIG, "mcpServers", &entry).unwrap();
        assert!(with.contains("// my servers") && with.contains("\"other\": {\"command\": \"x\"}"));
        let stripped: String = with
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let v: serde_json::Value = serde_json::from_str(&stripped).unwrap();
        assert_eq!(v["mcpServers"]["kenning"], entry);
        assert_eq!(json_without(&with, "mcpServers", false).unwrap().unwrap(), CONFIG);
        // A container the install made goes too.
        let plain = "{\n  \"theme\": \"dark\"\n}\n";
        let with = json_with(plain, "mcpServers", &entry).unwrap();
        assert_eq!(json_without(&with, "mcpServers", true).unwrap().unwrap(), plain);
        // Twice is refused, not doubled.
        assert!(
            json_with(
                &json_with(plain, "mcpServers", &entry).unwrap(),
                "mcpServers",
                &entry
            )
            .is_err()
        );
    }

    #[test]
    fn a_marked_block_goes_in_and_out() {
        let md = "# Notes\n\nKeep this.\n";
        let with = block_with(md, INSTRUCTIONS, html_comment).unwrap();
        assert!(with.starts_with(md) && with.contains("<!-- kenning:start -->"));
        assert_eq!(block_without(&with, html_comment).unwrap(), md);
        let toml = "model = \"o3\"\n";
        let with = block_with(toml, "[mcp_servers.kenning]\ncommand = \"ken\"\n", hash_comment).unwrap();
        let parsed: toml::Value = toml::from_str(&with).unwrap();
        assert_eq!(parsed["mcp_servers"]["kenning"]["command"].as_str(), Some("ken"));
        assert_eq!(block_without(&with, hash_comment).unwrap(), toml);
    }

    #[test]
    fn a_fronted_file_starts_with_its_front_matter_and_goes_whole() {
        let text = fronted(SUBAGENT_FRONT, SUBAGENT);
        assert!(text.starts_with("---\nname: kenning-explorer\n"), "{text}");
        assert_eq!(fronted_without(&text).unwrap(), "");
        // Text a person added after the block stays.
        let added = format!("{text}\nMy notes.\n");
        assert_eq!(fronted_without(&added).unwrap(), "\nMy notes.\n");
        // The layout before front matter came first: the marker on line 1.
        let old =
            format!("<!-- kenning:start -->\n---\n{SUBAGENT_FRONT}---\n{SUBAGENT}<!-- kenning:end -->\n");
        assert_eq!(fronted_without(&old).unwrap(), "");
        assert!(fronted_without("---\nname: mine\n---\nMine.\n").is_none());
    }

    #[test]
    fn a_missing_path_resolves_through_the_links_above_it() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(base.join("real")).unwrap();
        std::os::unix::fs::symlink("real", base.join("link")).unwrap();
        std::os::unix::fs::symlink("../outside.md", base.join("real/dangling.md")).unwrap();
        assert_eq!(
            real_location(&base.join("link/new/a.md")).unwrap(),
            base.join("real/new/a.md")
        );
        let out = real_location(&base.join("link/dangling.md")).unwrap();
        assert_eq!(out, base.join("outside.md"));
        let escape = real_location(&base.join("no/../../x.md")).unwrap();
        assert!(!escape.starts_with(&base), "{}", escape.display());
    }
}
