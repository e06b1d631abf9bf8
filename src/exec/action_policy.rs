//! `ActionPolicy`: what class of action a shell command is, and whether it runs, needs a
//! human, or is refused, under an approval policy and a sandbox mode (the two axes codex
//! uses).
//!
//! A command is parsed with tree-sitter-bash and judged part by part: every simple command in
//! a list, pipeline, subshell or `$(..)`, and every redirection. The command's class is the
//! riskiest part's. A command that does not parse is never judged by a prefix: it is asked
//! about (refused under `never`).

use std::path::Path;

use serde::{Deserialize, Serialize};
use tree_sitter::{Node, Parser};

/// From least to most risky.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ActionClass {
    /// Known not to write anything.
    Read,
    /// Writes inside the workspace (or might: an unknown program is assumed to).
    WorkspaceWrite,
    Network,
    /// Gains privileges or leaves the sandbox's reach (`sudo`, `docker`, `curl .. | sh`).
    Escalation,
    /// Deletes or rewrites history: `rm`, `git reset --hard`, `git clean`.
    Destructive,
    /// Publishes or changes what others depend on: `git push`, commits on main/master,
    /// package installs, CI files and system configuration.
    Protected,
}

impl ActionClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionClass::Read => "read",
            ActionClass::WorkspaceWrite => "workspace-write",
            ActionClass::Network => "network",
            ActionClass::Escalation => "escalation",
            ActionClass::Destructive => "destructive",
            ActionClass::Protected => "protected",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    /// Ask before anything not known to be read-only.
    Untrusted,
    /// Ask for what leaves the sandbox or is risky.
    OnRequest,
    /// Ask for nothing: deny what would need asking.
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    ReadOnly,
    WorkspaceWrite,
    FullAccess,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::FullAccess => "full-access",
        }
    }
}

/// Where a command would run.
#[derive(Debug, Clone, Default)]
pub struct PolicyContext {
    /// The checked-out branch: a commit on `main`/`master` is protected.
    pub branch: Option<String>,
    /// The sandbox lets the command reach the network.
    pub network: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "decision", rename_all = "kebab-case")]
pub enum Decision {
    Allow,
    Ask { reason: String },
    Deny { reason: String },
}

/// One simple command or redirection and its class.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ActionPart {
    pub text: String,
    pub class: ActionClass,
    pub why: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CommandVerdict {
    pub command: String,
    /// The riskiest part's class (`protected` for a command that does not parse).
    pub class: ActionClass,
    pub parsed: bool,
    pub parts: Vec<ActionPart>,
}

pub struct ActionPolicy;

const READ_ONLY: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "wc",
    "echo",
    "printf",
    "pwd",
    "which",
    "whereis",
    "type",
    "file",
    "stat",
    "tree",
    "du",
    "df",
    "sort",
    "uniq",
    "cut",
    "tr",
    "diff",
    "cmp",
    "comm",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "date",
    "uname",
    "whoami",
    "id",
    "env",
    "printenv",
    "true",
    "false",
    "test",
    "[",
    "jq",
    "column",
    "nl",
    "od",
    "xxd",
    "hexdump",
    "md5sum",
    "sha256sum",
    "b2sum",
    "ps",
    "sleep",
    "seq",
    "yes",
    "fd",
    "find",
    "ken",
];
const NETWORK: &[&str] = &[
    "curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "telnet", "ftp", "ping", "dig",
    "nslookup", "host",
];
const ESCALATION: &[&str] = &[
    "sudo",
    "su",
    "doas",
    "pkexec",
    "chroot",
    "nsenter",
    "unshare",
    "mount",
    "umount",
    "docker",
    "podman",
    "kubectl",
    "chown",
    "setcap",
    "insmod",
    "modprobe",
    "systemctl",
    "crontab",
];
const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish"];
const INSTALLERS: &[(&str, &[&str])] = &[
    ("pip", &["install", "uninstall"]),
    ("pip3", &["install", "uninstall"]),
    ("npm", &["install", "i", "ci", "add", "uninstall", "publish"]),
    ("pnpm", &["install", "add", "remove", "publish"]),
    ("yarn", &["add", "install", "remove", "publish"]),
    ("cargo", &["install", "uninstall", "publish"]),
    ("go", &["install", "get"]),
    ("gem", &["install", "uninstall"]),
    ("apt", &["install", "remove", "purge"]),
    ("apt-get", &["install", "remove", "purge"]),
    ("brew", &["install", "uninstall"]),
    ("uv", &["add", "pip"]),
    ("poetry", &["add", "remove", "publish"]),
];

impl ActionPolicy {
    /// Classifies `command` (a shell command line) part by part.
    pub fn classify(command: &str, cx: &PolicyContext) -> CommandVerdict {
        let mut parser = Parser::new();
        let tree = parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .ok()
            .and_then(|()| parser.parse(command, None));
        let Some(tree) = tree.filter(|t| !t.root_node().has_error()) else {
            return CommandVerdict {
                command: command.to_string(),
                class: ActionClass::Protected,
                parsed: false,
                parts: Vec::new(),
            };
        };
        let src = command.as_bytes();
        let mut parts = Vec::new();
        collect(tree.root_node(), src, cx, &mut parts);
        let class = parts.iter().map(|p| p.class).max().unwrap_or(ActionClass::Read);
        CommandVerdict {
            command: command.to_string(),
            class,
            parsed: true,
            parts,
        }
    }

    /// Whether a classified command runs, needs approval or is refused.
    pub fn decide(
        v: &CommandVerdict,
        approval: ApprovalPolicy,
        sandbox: SandboxMode,
        cx: &PolicyContext,
    ) -> Decision {
        let why = || {
            v.parts
                .iter()
                .filter(|p| p.class == v.class)
                .map(|p| format!("`{}`: {}", p.text, p.why))
                .next()
                .unwrap_or_else(|| "the command could not be parsed".to_string())
        };
        let needs_asking = match (approval, v.parsed) {
            (_, false) => {
                Some("the command could not be parsed; it is never judged by its prefix".to_string())
            }
            (ApprovalPolicy::Untrusted, true) => {
                (v.class != ActionClass::Read).then(|| format!("not known to be read-only: {}", why()))
            }
            (ApprovalPolicy::OnRequest | ApprovalPolicy::Never, true) => {
                let leaves = match v.class {
                    ActionClass::Read => false,
                    ActionClass::WorkspaceWrite => sandbox == SandboxMode::ReadOnly,
                    ActionClass::Network => !cx.network && sandbox != SandboxMode::FullAccess,
                    _ => true,
                };
                leaves.then(|| format!("{}: {}", v.class.as_str(), why()))
            }
        };
        match (needs_asking, approval) {
            (None, _) => Decision::Allow,
            (Some(reason), ApprovalPolicy::Never) => Decision::Deny {
                reason: format!("{reason} (approval policy `never`)"),
            },
            (Some(reason), _) => Decision::Ask { reason },
        }
    }
}

/// Walks the tree: each simple command and each redirection is a part.
fn collect(node: Node, src: &[u8], cx: &PolicyContext, out: &mut Vec<ActionPart>) {
    match node.kind() {
        "command" => match shell_script(node, src) {
            // `sh -c 'a && b'` is judged by its script, part by part, like any other command.
            Some(script) => {
                let inner = ActionPolicy::classify(&script, cx);
                if inner.parsed {
                    out.extend(inner.parts);
                } else {
                    out.push(ActionPart {
                        text: node.utf8_text(src).unwrap_or("").to_string(),
                        class: ActionClass::Protected,
                        why: "runs a shell script that could not be parsed".to_string(),
                    });
                }
            }
            None => out.push(command_part(node, src, cx)),
        },
        "file_redirect" => {
            let text = node.utf8_text(src).unwrap_or("").to_string();
            let target = node
                .child_by_field_name("destination")
                .and_then(|d| d.utf8_text(src).ok())
                .map(unquote)
                .unwrap_or_default();
            let writes = text
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .starts_with('>')
                || text.contains(">>")
                || text.starts_with("&>");
            if writes
                && !matches!(target.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr")
                && !target.starts_with('&')
            {
                out.push(write_part(&text, &target));
            }
        }
        "pipeline" => {
            // `curl .. | sh`: running what was just fetched.
            let cmds: Vec<Node> = (0..node.named_child_count())
                .filter_map(|i| node.named_child(i as u32))
                .filter(|c| c.kind() == "command")
                .collect();
            let fetches = cmds.iter().any(|c| NETWORK.contains(&program(*c, src).as_str()));
            let runs_shell = cmds
                .iter()
                .skip(1)
                .any(|c| SHELLS.contains(&program(*c, src).as_str()));
            if fetches && runs_shell {
                out.push(ActionPart {
                    text: node.utf8_text(src).unwrap_or("").to_string(),
                    class: ActionClass::Escalation,
                    why: "pipes what it downloads into a shell".into(),
                });
            }
        }
        _ => {}
    }
    for i in 0..node.named_child_count() {
        if let Some(c) = node.named_child(i as u32) {
            collect(c, src, cx, out);
        }
    }
}

fn unquote(s: &str) -> String {
    s.trim_matches(|c| c == '"' || c == '\'').to_string()
}

fn program(cmd: Node, src: &[u8]) -> String {
    cmd.child_by_field_name("name")
        .and_then(|n| n.utf8_text(src).ok())
        .map(unquote)
        .map(|p| p.rsplit('/').next().unwrap_or(&p).to_string())
        .unwrap_or_default()
}

/// A path the command writes: protected when it is CI or system configuration.
fn write_part(text: &str, target: &str) -> ActionPart {
    let (class, why) = match protected_path(target) {
        Some(why) => (ActionClass::Protected, why),
        None => (ActionClass::WorkspaceWrite, "writes a file".to_string()),
    };
    ActionPart {
        text: text.to_string(),
        class,
        why,
    }
}

pub(super) fn protected_path(p: &str) -> Option<String> {
    let ci = [
        ".github/workflows",
        ".gitlab-ci.yml",
        ".ci/",
        ".circleci",
        "Jenkinsfile",
        ".travis.yml",
        "azure-pipelines.yml",
    ];
    let system = [
        "/etc/",
        "/usr/",
        "/boot/",
        "/sys/",
        "/proc/",
        "/var/lib/",
        "~/.ssh",
        "~/.bashrc",
        "~/.profile",
        "~/.zshrc",
    ];
    let trimmed = p.trim_start_matches("./");
    if ci
        .iter()
        .any(|c| trimmed.starts_with(c) || trimmed.contains(&format!("/{c}")))
    {
        return Some("edits CI configuration".into());
    }
    if system.iter().any(|s| p.starts_with(s)) || (p.starts_with('/') && Path::new(p).starts_with("/etc")) {
        return Some("edits system configuration".into());
    }
    None
}

/// A simple command's argument words: its children but the name, assignments and redirects.
fn arguments(cmd: Node) -> Vec<Node> {
    (0..cmd.named_child_count())
        .filter_map(|i| cmd.named_child(i as u32))
        .filter(|c| {
            c.kind() != "command_name" && c.kind() != "variable_assignment" && !c.kind().ends_with("redirect")
        })
        .collect()
}

/// The script of `sh -c SCRIPT` (any shell of [`SHELLS`]), when it is a literal word.
fn shell_script(cmd: Node, src: &[u8]) -> Option<String> {
    if !SHELLS.contains(&program(cmd, src).as_str()) {
        return None;
    }
    let words = arguments(cmd);
    // `-c`, or a cluster that holds it (`-lc`, `-ec`).
    let at = words.iter().position(|w| {
        w.utf8_text(src)
            .is_ok_and(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('c'))
    })?;
    let script = words.get(at + 1)?;
    matches!(script.kind(), "word" | "raw_string" | "string")
        .then(|| script.utf8_text(src).ok().map(unquote))
        .flatten()
}

fn command_part(cmd: Node, src: &[u8], cx: &PolicyContext) -> ActionPart {
    let text = cmd.utf8_text(src).unwrap_or("").to_string();
    let prog = program(cmd, src);
    let args: Vec<String> = arguments(cmd)
        .into_iter()
        .filter_map(|c| c.utf8_text(src).ok().map(unquote))
        .collect();
    let (class, why) = classify_program(&prog, &args, cx);
    ActionPart {
        text,
        class,
        why: why.to_string(),
    }
}

fn classify_program(prog: &str, args: &[String], cx: &PolicyContext) -> (ActionClass, String) {
    use ActionClass::*;
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let first = args.first().map(String::as_str).unwrap_or("");
    if let Some((_, subs)) = INSTALLERS.iter().find(|(p, _)| *p == prog)
        && subs.contains(&first)
    {
        return (
            Protected,
            format!("`{prog} {first}` installs or publishes packages"),
        );
    }
    if ESCALATION.contains(&prog) {
        return (
            Escalation,
            format!("`{prog}` gains privileges or leaves the sandbox"),
        );
    }
    if prog == "chmod"
        && args
            .iter()
            .any(|a| a.contains('s') && (a.starts_with('+') || a.starts_with("u+") || a.starts_with("g+")))
    {
        return (Escalation, "sets a set-id bit".into());
    }
    if NETWORK.contains(&prog) {
        return (Network, format!("`{prog}` reaches the network"));
    }
    if SHELLS.contains(&prog) && (has("-c") || args.is_empty()) {
        return (
            WorkspaceWrite,
            "runs a shell whose commands are not seen here".into(),
        );
    }
    match prog {
        "rm" | "rmdir" | "unlink" | "shred" => {
            let targets: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
            let in_temp = !targets.is_empty()
                && targets
                    .iter()
                    .all(|t| t.starts_with("/tmp/") || t.starts_with("$TMPDIR"));
            if let Some(p) = targets.iter().find_map(|t| protected_path(t)) {
                return (Protected, p);
            }
            return match in_temp {
                true => (WorkspaceWrite, "deletes files in a temporary folder".into()),
                false => (Destructive, "deletes files".into()),
            };
        }
        "git" => return classify_git(args, cx),
        "find" if has("-delete") || has("-exec") || has("-execdir") || has("-ok") => {
            return (
                Destructive,
                "`find` deletes or runs commands on what it finds".into(),
            );
        }
        "find" if args.iter().any(|a| a.starts_with("-fprint") || a == "-fls") => {
            return (WorkspaceWrite, "`find` writes a file".into());
        }
        "sed" | "perl" if args.iter().any(|a| a.starts_with("-i")) => {
            if let Some(p) = args.iter().find_map(|t| protected_path(t)) {
                return (Protected, p);
            }
            return (WorkspaceWrite, "edits files in place".into());
        }
        "cp" | "mv" | "tee" | "touch" | "mkdir" | "ln" | "install" | "truncate" | "dd" => {
            if let Some(p) = args.iter().find_map(|t| protected_path(t)) {
                return (Protected, p);
            }
            return (WorkspaceWrite, format!("`{prog}` writes files"));
        }
        "cargo" if matches!(first, "tree" | "metadata" | "--version" | "search") => {
            return (Read, "reads the project".into());
        }
        _ => {}
    }
    if READ_ONLY.contains(&prog) || prog.is_empty() {
        return (Read, "known not to write".into());
    }
    (WorkspaceWrite, format!("`{prog}` is not known to be read-only"))
}

fn classify_git(args: &[String], cx: &PolicyContext) -> (ActionClass, String) {
    use ActionClass::*;
    let sub = args
        .iter()
        .find(|a| !a.starts_with('-'))
        .map(String::as_str)
        .unwrap_or("");
    let has = |flag: &str| args.iter().any(|a| a == flag);
    match sub {
        "status" | "diff" | "log" | "show" | "blame" | "grep" | "ls-files" | "rev-parse" | "describe"
        | "shortlog" => (Read, format!("`git {sub}` reads the repository")),
        "branch" | "tag" | "remote" | "stash"
            if args.len() == 1 || has("--list") || has("-l") || has("-v") =>
        {
            (Read, format!("`git {sub}` lists"))
        }
        "push" => (Protected, "`git push` publishes commits".into()),
        "reset" if has("--hard") => (Destructive, "`git reset --hard` discards work".into()),
        "clean" => (Destructive, "`git clean` deletes untracked files".into()),
        "checkout" | "restore" if args.iter().any(|a| a == "--" || a == ".") => {
            (Destructive, format!("`git {sub}` discards changes"))
        }
        "rm" => (Destructive, "`git rm` deletes files".into()),
        "commit" if matches!(cx.branch.as_deref(), Some("main" | "master")) => {
            (Protected, "commits on the main branch".into())
        }
        "clone" | "fetch" | "pull" | "ls-remote" | "submodule" => {
            (Network, format!("`git {sub}` reaches a remote"))
        }
        _ => (WorkspaceWrite, format!("`git {sub}` changes the repository")),
    }
}
