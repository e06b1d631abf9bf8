//! `ken install` and `ken uninstall` against each agent's real config format: what install
//! writes is valid for the agent (front matter read as its client reads it), other content is
//! kept byte for byte, a second install is refused rather than doubled, and uninstall restores
//! every file exactly. Install writes only where it belongs: no repository in a user's
//! configs, no path of this machine in a project's when `ken` on PATH is this program, nothing
//! through a link out of the project, and nothing left behind when it fails.

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use support::{ken_bin, stderr, stdout};

/// `ken` with a home folder of its own and a PATH without `ken` on it.
fn ken_cmd(home: &Path) -> Command {
    let mut c = Command::new(ken_bin());
    c.env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("PATH", "/usr/bin:/bin");
    c
}

fn ken_in(home: &Path, args: &[&str]) -> Output {
    ken_cmd(home).args(args).output().unwrap()
}

/// The front matter as Claude Code and Cursor read it: YAML between a `---` on line 1 and the
/// next `---` line. A minimal reader for what a sub-agent or rule holds, `key: plain scalar`
/// lines; it fails on anything a YAML parser would read otherwise (a `: ` or ` #` inside a
/// value, a quote, bracket or other indicator first).
fn front_matter(text: &str) -> BTreeMap<String, String> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("---"), "line 1 is not `---`:\n{text}");
    let mut out = BTreeMap::new();
    for line in lines {
        if line == "---" {
            return out;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("not `key: value`: {line:?}\n{text}"));
        assert!(
            key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "key {key:?}"
        );
        assert!(
            !value.contains(": ") && !value.contains(" #") && !value.ends_with(':'),
            "a YAML parser reads {value:?} otherwise"
        );
        assert!(
            !value.starts_with(|c| "[]{}&*!|>'\"%@`,?-#".contains(c)),
            "{value:?} starts with a YAML indicator"
        );
        assert!(
            out.insert(key.to_string(), value.to_string()).is_none(),
            "{key} twice"
        );
    }
    panic!("no closing `---`:\n{text}")
}

/// Every file under `dir`, relative, with its bytes (what a failed run must leave as it was).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                out.insert(rel.join(""), Vec::new());
                todo.push(p);
            } else if meta.file_type().is_symlink() {
                out.insert(
                    rel,
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                );
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const ALL: [&str; 12] = [
    "--agent", "claude", "--agent", "codex", "--agent", "cursor", "--agent", "vscode", "--agent", "gemini",
    "--agent", "opencode",
];

#[test]
fn project_install_writes_each_agents_format_and_uninstall_restores_every_byte() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let r = repo.path();
    // What the user had: a server of their own, notes, a VS Code config with comments.
    let mcp = "{\n  \"mcpServers\": {\n    \"mine\": { \"command\": \"my-server\" }\n  }\n}\n";
    std::fs::write(r.join(".mcp.json"), mcp).unwrap();
    let agents_md = "# Agents\n\nRun `make test` before you commit.\n";
    std::fs::write(r.join("AGENTS.md"), agents_md).unwrap();
    std::fs::create_dir_all(r.join(".vscode")).unwrap();
    let vscode = "{\n  // servers for this project\n  \"servers\": {}\n}\n";
    std::fs::write(r.join(".vscode/mcp.json"), vscode).unwrap();
    let repo_arg = r.to_str().unwrap();

    let mut args = vec!["install", "--repo", repo_arg, "--dry-run"];
    args.extend(ALL);
    let out = ken_in(home.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("would write"), "{}", stdout(&out));
    assert_eq!(read(&r.join(".mcp.json")), mcp, "a dry run changed a file");
    assert!(!r.join("CLAUDE.md").exists());

    args.retain(|a| *a != "--dry-run");
    let out = ken_in(home.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    // Claude Code: .mcp.json keeps the user's server, gains kenning; CLAUDE.md; a sub-agent.
    let v: serde_json::Value = serde_json::from_str(&read(&r.join(".mcp.json"))).unwrap();
    assert_eq!(v["mcpServers"]["mine"]["command"], "my-server");
    assert_eq!(
        v["mcpServers"]["kenning"]["args"],
        serde_json::json!(["serve", "--mcp"])
    );
    assert!(read(&r.join("CLAUDE.md")).contains("call `context`"));
    let sub = front_matter(&read(&r.join(".claude/agents/kenning-explorer.md")));
    assert_eq!(sub["name"], "kenning-explorer");
    assert!(sub["description"].contains("kenning MCP tools"), "{sub:?}");
    let tools: Vec<&str> = sub["tools"].split(", ").collect();
    assert!(
        tools.contains(&"mcp__kenning__context") && tools.contains(&"mcp__kenning__search"),
        "{tools:?}"
    );
    // Codex and OpenCode share AGENTS.md: one block, after the user's text.
    let md = read(&r.join("AGENTS.md"));
    assert!(md.starts_with(agents_md), "{md}");
    assert_eq!(md.matches("kenning:start").count(), 1, "{md}");
    let codex: toml::Value = toml::from_str(&read(&r.join(".codex/config.toml"))).unwrap();
    assert_eq!(codex["mcp_servers"]["kenning"]["args"][0].as_str(), Some("serve"));
    // Cursor, VS Code (comments kept), Gemini, OpenCode.
    let cursor: serde_json::Value = serde_json::from_str(&read(&r.join(".cursor/mcp.json"))).unwrap();
    assert!(cursor["mcpServers"]["kenning"]["command"].is_string());
    let rule = read(&r.join(".cursor/rules/kenning.mdc"));
    let front = front_matter(&rule);
    assert_eq!(front["alwaysApply"], "true");
    assert!(front["description"].contains("kenning"), "{front:?}");
    assert!(rule.contains("call `context`"), "{rule}");
    let vs = read(&r.join(".vscode/mcp.json"));
    assert!(vs.contains("// servers for this project"), "{vs}");
    let vs_json: serde_json::Value =
        serde_json::from_str(&vs.replace("// servers for this project", "")).unwrap();
    assert_eq!(vs_json["servers"]["kenning"]["type"], "stdio");
    let gemini: serde_json::Value = serde_json::from_str(&read(&r.join(".gemini/settings.json"))).unwrap();
    assert!(gemini["mcpServers"]["kenning"].is_object());
    let oc: serde_json::Value = serde_json::from_str(&read(&r.join("opencode.json"))).unwrap();
    assert_eq!(oc["mcp"]["kenning"]["type"], "local");
    assert_eq!(oc["mcp"]["kenning"]["command"][1], "serve");

    // A second install is refused (nothing doubled).
    let out = ken_in(home.path(), &args);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("ken uninstall"), "{}", stderr(&out));

    args[0] = "uninstall";
    let out = ken_in(home.path(), &args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(read(&r.join(".mcp.json")), mcp);
    assert_eq!(read(&r.join("AGENTS.md")), agents_md);
    assert_eq!(read(&r.join(".vscode/mcp.json")), vscode);
    for made in [
        "CLAUDE.md",
        ".claude/agents/kenning-explorer.md",
        ".codex/config.toml",
        ".cursor/mcp.json",
        ".cursor/rules/kenning.mdc",
        ".gemini/settings.json",
        "opencode.json",
    ] {
        assert!(!r.join(made).exists(), "{made} was left behind");
    }
}

#[test]
fn user_scope_edits_the_home_configs_and_names_no_repository() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    let config = "# my codex settings\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
    std::fs::write(home.path().join(".codex/config.toml"), config).unwrap();
    // Codex is found by its folder: no --agent needed. Run from inside a project, as a
    // person would: none of it may leak into the home configs.
    let out = ken_cmd(home.path())
        .args(["install", "--scope", "user"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = read(&home.path().join(".codex/config.toml"));
    assert!(text.starts_with(config), "{text}");
    let v: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(v["mcp_servers"]["docs"]["command"].as_str(), Some("docs-mcp"));
    let args = v["mcp_servers"]["kenning"]["args"].as_array().unwrap();
    assert_eq!(args, &[toml::Value::from("serve"), toml::Value::from("--mcp")]);
    let out = ken_in(home.path(), &["uninstall", "--scope", "user"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(read(&home.path().join(".codex/config.toml")), config);
    // Nothing found and nothing named: a clear refusal.
    let empty = tempfile::tempdir().unwrap();
    let out = ken_in(
        empty.path(),
        &["install", "--repo", repo.path().to_str().unwrap()],
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no coding agent found"), "{}", stderr(&out));
    let out = ken_in(
        empty.path(),
        &[
            "install",
            "--agent",
            "emacs",
            "--repo",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(stderr(&out).contains("--agent emacs"), "{}", stderr(&out));
}

#[test]
fn user_configs_hold_no_repository_and_the_server_they_start_serves_the_clients_folder() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let p = std::fs::canonicalize(project.path()).unwrap();
    std::fs::write(p.join("lib.py"), "def greet():\n    return 'hi'\n").unwrap();
    let agents = [
        "--agent", "claude", "--agent", "codex", "--agent", "cursor", "--agent", "gemini", "--agent",
        "opencode",
    ];
    let mut args = vec!["install", "--scope", "user"];
    args.extend(agents);
    let out = ken_cmd(home.path()).args(&args).current_dir(&p).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let written: Vec<PathBuf> = stdout(&out)
        .lines()
        .filter_map(|l| l.strip_prefix("wrote "))
        .map(|l| PathBuf::from(l.rsplit_once(" (").unwrap().0))
        .collect();
    assert_eq!(written.len(), 10, "{}", stdout(&out));
    for file in &written {
        let text = read(file);
        assert!(!text.contains("--repo"), "{}:\n{text}", file.display());
        assert!(
            !text.contains(p.to_str().unwrap()),
            "{} names the project:\n{text}",
            file.display()
        );
    }
    // The sub-agent reads as Claude Code reads it, in the home folder too.
    let sub = front_matter(&read(&home.path().join(".claude/agents/kenning-explorer.md")));
    assert_eq!(sub["name"], "kenning-explorer");

    // What the client runs, run as Claude Code runs it: in the project it has open.
    let claude: serde_json::Value = serde_json::from_str(&read(&home.path().join(".claude.json"))).unwrap();
    let server = &claude["mcpServers"]["kenning"];
    let served_args: Vec<&str> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(served_args, ["serve", "--mcp"]);
    let out = Command::new(server["command"].as_str().unwrap())
        .args(&served_args)
        .current_dir(&p)
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(
        err.contains(&format!("serving MCP on stdio for {}", p.display())),
        "{err}"
    );

    // `--repo` with a user install is refused by name: it would serve one project to all.
    let out = ken_in(
        home.path(),
        &[
            "install",
            "--scope",
            "user",
            "--agent",
            "codex",
            "--repo",
            p.to_str().unwrap(),
        ],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--repo does not go with --scope user"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn project_files_name_ken_when_the_ken_on_path_is_this_program() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(ken_bin(), bin.path().join("ken")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let r = repo.path().to_str().unwrap();
    let mut args = vec!["install", "--repo", r];
    args.extend(ALL);
    let out = ken_cmd(home.path())
        .env("PATH", &path)
        .args(&args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&read(&repo.path().join(".mcp.json"))).unwrap();
    assert_eq!(v["mcpServers"]["kenning"]["command"], "ken");
    let canonical = std::fs::canonicalize(ken_bin()).unwrap();
    for (file, bytes) in tree(repo.path()) {
        let text = String::from_utf8_lossy(&bytes);
        for abs in [ken_bin(), canonical.to_str().unwrap()] {
            assert!(!text.contains(abs), "{} names {abs}:\n{text}", file.display());
        }
    }

    // Another `ken` first on PATH: the files name this one by its absolute path, and say so.
    let other = tempfile::tempdir().unwrap();
    let script = other.path().join("ken");
    std::fs::write(&script, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let repo2 = tempfile::tempdir().unwrap();
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        other.path().display(),
        bin.path().display()
    );
    let out = ken_cmd(home.path())
        .env("PATH", &path)
        .args([
            "install",
            "--agent",
            "claude",
            "--repo",
            repo2.path().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&read(&repo2.path().join(".mcp.json"))).unwrap();
    assert_eq!(v["mcpServers"]["kenning"]["command"], canonical.to_str().unwrap());
    assert!(stderr(&out).contains("is another program"), "{}", stderr(&out));
}

#[test]
fn a_link_out_of_the_project_is_refused_and_nothing_is_written() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let notes = outside.path().join("notes.md");
    std::fs::write(&notes, "# Someone's notes\n").unwrap();
    std::os::unix::fs::symlink(&notes, repo.path().join("CLAUDE.md")).unwrap();
    let before = tree(repo.path());
    let out = ken_in(
        home.path(),
        &[
            "install",
            "--agent",
            "claude",
            "--repo",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("CLAUDE.md is a symbolic link to") && err.contains(notes.to_str().unwrap()),
        "{err}"
    );
    assert_eq!(read(&notes), "# Someone's notes\n");
    assert_eq!(tree(repo.path()), before, "a refused install wrote files");
    assert!(
        !home.path().join("state").exists(),
        "a refused install wrote its record"
    );

    // A link that stays inside the project is written through, once.
    std::fs::remove_file(repo.path().join("CLAUDE.md")).unwrap();
    std::os::unix::fs::symlink("AGENTS.md", repo.path().join("CLAUDE.md")).unwrap();
    let r = repo.path().to_str().unwrap();
    let out = ken_in(
        home.path(),
        &["install", "--agent", "claude", "--agent", "codex", "--repo", r],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        read(&repo.path().join("AGENTS.md"))
            .matches("kenning:start")
            .count(),
        1
    );
    let out = ken_in(
        home.path(),
        &["uninstall", "--agent", "claude", "--agent", "codex", "--repo", r],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        std::fs::symlink_metadata(repo.path().join("CLAUDE.md")).is_ok(),
        "the link went"
    );
    assert!(!repo.path().join("AGENTS.md").exists());
}

#[test]
fn a_failed_install_leaves_no_new_file_and_puts_changed_ones_back() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let r = repo.path();
    let mcp = "{\n  \"mcpServers\": {\n    \"mine\": { \"command\": \"my-server\" }\n  }\n}\n";
    std::fs::write(r.join(".mcp.json"), mcp).unwrap();
    std::fs::write(r.join("AGENTS.md"), "# Agents\n").unwrap();
    let before = tree(r);
    let mut args = vec!["install", "--repo", r.to_str().unwrap()];
    args.extend(ALL);

    // The run's last step fails (its record, under a state folder that is a file): every
    // project file has been written by then.
    let state_file = home.path().join("state-file");
    std::fs::write(&state_file, "").unwrap();
    let out = ken_cmd(home.path())
        .env("XDG_STATE_HOME", &state_file)
        .args(&args)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("put back every file"), "{err}");
    assert!(err.contains("installs.json"), "{err}");
    assert_eq!(tree(r), before, "a failed install left its writes");

    // A write in the middle fails (a folder it may not write in; root may write anywhere,
    // so this part holds only where permissions do).
    let locked = r.join(".gemini");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    if std::fs::write(locked.join("probe"), "").is_err() {
        let before = tree(r);
        let out = ken_in(home.path(), &args);
        assert!(!out.status.success());
        assert!(stderr(&out).contains("put back every file"), "{}", stderr(&out));
        assert_eq!(tree(r), before, "a failed install left its writes");
        assert!(!home.path().join("state/kenning/installs.json").exists());
    }
    std::fs::set_permissions(&locked, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::remove_dir_all(&locked).unwrap();

    // A file that cannot be read stops the run before its first write.
    std::fs::create_dir_all(r.join(".gemini/settings.json")).unwrap();
    let before = tree(r);
    let out = ken_in(home.path(), &args);
    assert!(!out.status.success());
    assert!(stderr(&out).contains(".gemini/settings.json"), "{}", stderr(&out));
    assert_eq!(tree(r), before);
    assert!(!home.path().join("state/kenning/installs.json").exists());
}

#[test]
fn uninstall_removes_files_in_the_layout_before_front_matter_came_first() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let r = std::fs::canonicalize(repo.path()).unwrap();
    let old = |front: &str, body: &str| {
        format!("<!-- kenning:start -->\n---\n{front}---\n{body}<!-- kenning:end -->\n")
    };
    let sub = r.join(".claude/agents/kenning-explorer.md");
    let rule = r.join(".cursor/rules/kenning.mdc");
    std::fs::create_dir_all(sub.parent().unwrap()).unwrap();
    std::fs::create_dir_all(rule.parent().unwrap()).unwrap();
    std::fs::write(&sub, old("name: kenning-explorer\n", "Start with `context`.\n")).unwrap();
    std::fs::write(&rule, old("alwaysApply: true\n", "## Kenning\n")).unwrap();
    // The record the old install kept.
    let record = serde_json::json!({
        sub.display().to_string(): {"created_file": true, "created_container": false},
        rule.display().to_string(): {"created_file": true, "created_container": false},
    });
    let state = home.path().join("state/kenning");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("installs.json"), record.to_string()).unwrap();
    let args = [
        "--agent",
        "claude",
        "--agent",
        "cursor",
        "--repo",
        r.to_str().unwrap(),
    ];
    let out = ken_in(home.path(), &[&["uninstall"][..], &args].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!sub.exists() && !rule.exists(), "{}", stdout(&out));
    // And a fresh install then puts front matter first again.
    let out = ken_in(home.path(), &[&["install"][..], &args].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(front_matter(&read(&sub))["name"], "kenning-explorer");
    assert_eq!(front_matter(&read(&rule))["alwaysApply"], "true");
    // A sub-agent file of the user's own is not overwritten.
    let out = ken_in(home.path(), &[&["uninstall"][..], &args].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(&sub, "---\nname: kenning-explorer\n---\nMine.\n").unwrap();
    let out = ken_in(home.path(), &[&["install"][..], &args].concat());
    assert!(!out.status.success());
    assert!(stderr(&out).contains("not Kenning's"), "{}", stderr(&out));
    assert_eq!(read(&sub), "---\nname: kenning-explorer\n---\nMine.\n");
}

/// The Codex CLI itself (npm @openai/codex, installed by .ci/install_mcp_clients.sh) reads
/// what `ken install` wrote and lists the server; after `ken uninstall` it lists none.
#[test]
fn the_codex_cli_sees_the_installed_server() {
    if std::env::var("KEN_MCP_E2E").as_deref() != Ok("1") {
        eprintln!("skipped: set KEN_MCP_E2E=1 after .ci/install_mcp_clients.sh (as .ci/run does)");
        return;
    }
    let codex = std::env::var("E2E_CODEX").expect("E2E_CODEX from .ci/install_mcp_clients.sh");
    let node = std::env::var("E2E_NODE_BIN").expect("E2E_NODE_BIN from .ci/install_mcp_clients.sh");
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    let out = ken_cmd(home.path())
        .args(["install", "--scope", "user", "--agent", "codex"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let list = || {
        let out = Command::new(&codex)
            .args(["mcp", "list", "--json"])
            .env("HOME", home.path())
            .env("CODEX_HOME", home.path().join(".codex"))
            .env("PATH", format!("{node}:/usr/bin:/bin"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out)
    };
    let listed = list();
    assert!(listed.contains("kenning") && listed.contains("serve"), "{listed}");
    let out = ken_in(home.path(), &["uninstall", "--scope", "user", "--agent", "codex"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!list().contains("kenning"));
}
