//! `ken install` and `ken uninstall` against each agent's real config format: what install
//! writes is valid for the agent, other content is kept byte for byte, a second install is
//! refused rather than doubled, and uninstall restores every file exactly.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use support::{ken_bin, stderr, stdout};

fn ken_in(home: &Path, args: &[&str]) -> Output {
    Command::new(ken_bin())
        .args(args)
        .env("HOME", home)
        .env("XDG_STATE_HOME", home.join("state"))
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap()
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
    let sub = read(&r.join(".claude/agents/kenning-explorer.md"));
    assert!(
        sub.contains("name: kenning-explorer") && sub.contains("mcp__kenning__search"),
        "{sub}"
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
    assert!(read(&r.join(".cursor/rules/kenning.mdc")).contains("alwaysApply: true"));
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
fn user_scope_edits_the_home_configs_and_names_the_repository() {
    let home = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    let config = "# my codex settings\nmodel = \"o3\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
    std::fs::write(home.path().join(".codex/config.toml"), config).unwrap();
    // Codex is found by its folder: no --agent needed.
    let out = ken_in(
        home.path(),
        &[
            "install",
            "--scope",
            "user",
            "--repo",
            repo.path().to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = read(&home.path().join(".codex/config.toml"));
    assert!(text.starts_with(config), "{text}");
    let v: toml::Value = toml::from_str(&text).unwrap();
    assert_eq!(v["mcp_servers"]["docs"]["command"].as_str(), Some("docs-mcp"));
    let args = v["mcp_servers"]["kenning"]["args"].as_array().unwrap();
    let canonical = std::fs::canonicalize(repo.path()).unwrap();
    assert_eq!(args[2].as_str(), Some("--repo"));
    assert_eq!(args[3].as_str(), canonical.to_str());
    let out = ken_in(
        home.path(),
        &[
            "uninstall",
            "--scope",
            "user",
            "--repo",
            repo.path().to_str().unwrap(),
        ],
    );
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
    let repo_arg = repo.path().to_str().unwrap();
    let out = ken_in(
        home.path(),
        &[
            "install", "--scope", "user", "--agent", "codex", "--repo", repo_arg,
        ],
    );
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
    let out = ken_in(
        home.path(),
        &[
            "uninstall",
            "--scope",
            "user",
            "--agent",
            "codex",
            "--repo",
            repo_arg,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!list().contains("kenning"));
}
