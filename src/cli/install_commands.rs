//! `ken install` / `ken uninstall`: registers `ken serve --mcp` with the coding agents on
//! this machine (Claude Code, Codex, Cursor, VS Code, Gemini CLI, OpenCode), with a short
//! instructions block saying when to call which tool, and a Claude Code sub-agent.
//!
//! Edits are surgical: a JSON config gets one `"kenning"` entry inserted into its server
//! object (created if missing) with the rest of the text untouched; TOML and Markdown get a
//! block between `kenning:start` / `kenning:end` markers. `ken uninstall` removes exactly
//! that entry or block, and a file or object only when `ken install` created it. What was
//! created is recorded in `<state dir>/kenning/installs.json`, by file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use super::args::{InstallArgs, InstallScope};

const START: &str = "kenning:start";
const END: &str = "kenning:end";

const INSTRUCTIONS: &str = "## Kenning (code search and context)\n\n\
This repository is indexed by Kenning, available as the `kenning` MCP server. Prefer it to \
reading whole files:\n\
- a new task, bug report or question: call `context` with the task text first;\n\
- finding code by name, message or meaning: `search` (it lists the line spans to read), `symbol`;\n\
- who uses something: `callers`, `refs`; before or after an edit: `impact` (and the tests to run);\n\
- exact lines: `read_span` (`path:START-END`).\n";

const SUBAGENT: &str = "---\nname: kenning-explorer\ndescription: Finds the code relevant to a task in this \
repository with the kenning MCP tools (context, search, symbol, callers, refs, impact, read_span) and reports \
paths with line spans. Use it before reading files by hand.\ntools: mcp__kenning__context, mcp__kenning__search, \
mcp__kenning__symbol, mcp__kenning__callers, mcp__kenning__refs, mcp__kenning__impact, mcp__kenning__read_span\n---\n\n\
Start with `context` on the task. Follow up with `search`, `symbol`, `callers` and `refs`. Answer with \
`path:START-END` spans and one line on why each matters; quote code only where it decides the answer.\n";

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
}

impl Edit {
    fn path(&self) -> &Path {
        match self {
            Edit::Json { path, .. } | Edit::Block { path, .. } => path,
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
/// the home folder for user scope).
fn edits(agent: &str, scope: InstallScope, base: &Path, ken: &str, repo: &Path) -> Result<Vec<Edit>> {
    let project = scope == InstallScope::Project;
    // A user-scope server is told which repository it serves; a project one runs there.
    let mut args = vec!["serve".to_string(), "--mcp".to_string()];
    if !project {
        args.push("--repo".into());
        args.push(repo.display().to_string());
    }
    let standard = serde_json::json!({"command": ken, "args": args});
    let md = |p: PathBuf| Edit::Block {
        path: p,
        text: INSTRUCTIONS.to_string(),
        comment: html_comment,
    };
    Ok(match (agent, project) {
        ("claude", true) => vec![
            Edit::Json {
                path: base.join(".mcp.json"),
                container: "mcpServers",
                entry: standard,
            },
            md(base.join("CLAUDE.md")),
            Edit::Block {
                path: base.join(".claude/agents/kenning-explorer.md"),
                text: SUBAGENT.to_string(),
                comment: html_comment,
            },
        ],
        ("claude", false) => vec![
            Edit::Json {
                path: base.join(".claude.json"),
                container: "mcpServers",
                entry: standard,
            },
            md(base.join(".claude/CLAUDE.md")),
            Edit::Block {
                path: base.join(".claude/agents/kenning-explorer.md"),
                text: SUBAGENT.to_string(),
                comment: html_comment,
            },
        ],
        ("codex", _) => {
            let quoted: Vec<String> = args.iter().map(|a| toml_string(a)).collect();
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
                md(match project {
                    true => base.join("AGENTS.md"),
                    false => base.join(".codex/AGENTS.md"),
                }),
            ]
        }
        ("cursor", _) => {
            let mut e = vec![Edit::Json {
                path: base.join(".cursor/mcp.json"),
                container: "mcpServers",
                entry: standard,
            }];
            if project {
                e.push(Edit::Block {
                    path: base.join(".cursor/rules/kenning.mdc"),
                    text: format!("---\ndescription: When to use the kenning MCP tools\nalwaysApply: true\n---\n{INSTRUCTIONS}"),
                    comment: html_comment,
                });
            }
            e
        }
        ("vscode", true) => vec![
            Edit::Json {
                path: base.join(".vscode/mcp.json"),
                container: "servers",
                entry: serde_json::json!({"type": "stdio", "command": ken, "args": args}),
            },
            md(base.join(".github/copilot-instructions.md")),
        ],
        ("vscode", false) => bail!(
            "VS Code keeps user MCP servers in its profile: use `--scope project` (writes .vscode/mcp.json)"
        ),
        ("gemini", _) => vec![
            Edit::Json {
                path: base.join(".gemini/settings.json"),
                container: "mcpServers",
                entry: standard,
            },
            md(match project {
                true => base.join("GEMINI.md"),
                false => base.join(".gemini/GEMINI.md"),
            }),
        ],
        ("opencode", _) => {
            let mut command = vec![ken.to_string()];
            command.extend(args.iter().cloned());
            vec![
                Edit::Json {
                    path: match project {
                        true => base.join("opencode.json"),
                        false => base.join(".config/opencode/opencode.json"),
                    },
                    container: "mcp",
                    entry: serde_json::json!({"type": "local", "command": command, "enabled": true}),
                },
                md(match project {
                    true => base.join("AGENTS.md"),
                    false => base.join(".config/opencode/AGENTS.md"),
                }),
            ]
        }
        (other, _) => bail!("unknown agent `{other}` (one of {})", AGENTS.join(", ")),
    })
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

// ----------------------------------------------------------------------------- the record

/// What `ken install` created (files, JSON objects), so `ken uninstall` removes only that.
fn record_path() -> Result<PathBuf> {
    super::exec_commands::state_dir()
        .map(|d| d.join("installs.json"))
        .context("no state folder: set XDG_STATE_HOME or HOME")
}

fn read_record() -> Result<serde_json::Map<String, serde_json::Value>> {
    Ok(std::fs::read(record_path()?)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default())
}

fn write_record(r: &serde_json::Map<String, serde_json::Value>) -> Result<()> {
    let path = record_path()?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(&path, serde_json::to_vec_pretty(r)?)
        .with_context(|| format!("writing {}", path.display()))
}

// ----------------------------------------------------------------------------- commands

fn targets(a: &InstallArgs) -> Result<(PathBuf, PathBuf, Vec<&'static str>)> {
    let home = PathBuf::from(std::env::var_os("HOME").context("HOME is not set")?);
    let repo = match &a.repo {
        Some(r) => r.clone(),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let repo = std::fs::canonicalize(&repo).with_context(|| format!("--repo {}", repo.display()))?;
    let base = match a.scope {
        InstallScope::Project => repo.clone(),
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
    Ok((base, repo, agents))
}

fn ken_program() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
        .unwrap_or_else(|| "ken".to_string())
}

pub fn install(a: InstallArgs) -> Result<ExitCode> {
    let (base, repo, agents) = targets(&a)?;
    let ken = ken_program();
    let mut record = read_record()?;
    let mut done: Vec<PathBuf> = Vec::new();
    for agent in agents {
        for edit in edits(agent, a.scope, &base, &ken, &repo)? {
            let path = edit.path().to_path_buf();
            // Two agents may share a file (AGENTS.md): one block is enough.
            if done.contains(&path) {
                continue;
            }
            let existing = match std::fs::read_to_string(&path) {
                Ok(t) => Some(t),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
            };
            let key = path.display().to_string();
            let (new, created_container) = match &edit {
                Edit::Json { container, entry, .. } => {
                    let text = existing.clone().unwrap_or_else(|| "{}\n".to_string());
                    let had = top_object(&text)
                        .and_then(|t| members(&text, t))
                        .map(|(m, _)| m.iter().any(|m| m.0 == *container))
                        .with_context(|| format!("{} is not a JSON object", path.display()))?;
                    let new =
                        json_with(&text, container, entry).with_context(|| path.display().to_string())?;
                    (new, !had)
                }
                Edit::Block { text, comment, .. } => (
                    block_with(existing.as_deref().unwrap_or(""), text, *comment)
                        .with_context(|| path.display().to_string())?,
                    false,
                ),
            };
            done.push(path.clone());
            println!(
                "{} {} ({agent})",
                if a.dry_run { "would write" } else { "wrote" },
                path.display()
            );
            if a.dry_run {
                continue;
            }
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
            }
            std::fs::write(&path, new).with_context(|| format!("writing {}", path.display()))?;
            record.insert(
                key,
                serde_json::json!({"created_file": existing.is_none(), "created_container": created_container}),
            );
        }
    }
    if !a.dry_run {
        write_record(&record)?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn uninstall(a: InstallArgs) -> Result<ExitCode> {
    let (base, repo, agents) = targets(&a)?;
    let ken = ken_program();
    let mut record = read_record()?;
    let mut seen: Vec<PathBuf> = Vec::new();
    for agent in agents {
        for edit in edits(agent, a.scope, &base, &ken, &repo)? {
            let path = edit.path().to_path_buf();
            if seen.contains(&path) {
                continue;
            }
            seen.push(path.clone());
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let key = path.display().to_string();
            let made = record.get(&key).cloned().unwrap_or_default();
            let flag = |k: &str| made.get(k).and_then(serde_json::Value::as_bool).unwrap_or(false);
            let new = match &edit {
                Edit::Json { container, .. } => json_without(&text, container, flag("created_container"))
                    .with_context(|| path.display().to_string())?,
                Edit::Block { comment, .. } => block_without(&text, *comment),
            };
            let Some(new) = new else {
                continue;
            };
            // A file `ken install` made, now holding nothing else, goes.
            let empty = new.trim().is_empty() || new.trim() == "{}";
            println!(
                "{} {} ({agent})",
                match (a.dry_run, flag("created_file") && empty) {
                    (true, true) => "would remove",
                    (true, false) => "would edit",
                    (false, true) => "removed",
                    (false, false) => "edited",
                },
                path.display()
            );
            if a.dry_run {
                continue;
            }
            match flag("created_file") && empty {
                true => std::fs::remove_file(&path)?,
                false => std::fs::write(&path, new)?,
            }
            record.remove(&key);
        }
    }
    if !a.dry_run {
        write_record(&record)?;
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
}
