//! `ActionPolicy`: what class of action a shell command is, and whether it runs, needs a
//! human, or is refused, under an approval policy and a sandbox mode (the two axes codex
//! uses).
//!
//! A command is parsed with tree-sitter-bash and judged part by part: every simple command in
//! a list, pipeline, subshell or `$(..)`, and every redirection. The command's class is the
//! riskiest part's. A command that does not parse is never judged by a prefix: it is asked
//! about (refused under `never`).
//!
//! A command is judged by what it touches, not by how it is spelled: wrappers (`command`,
//! `env`, `nice`, `timeout`, `xargs`, `find -exec`, `eval`, `sh -c`) are looked through,
//! program paths (`/bin/rm`, `\rm`) reduced to their names, and path words resolved by
//! [`WorkspacePaths`] (`./`, `$PWD`, `~`, absolute paths, globs). Removing anything in the
//! workspace, or overwriting, truncating or moving away tracked work, is `destructive` under
//! every spelling; without a known workspace every path is taken to hold tracked work.

use std::path::Path;

use serde::{Deserialize, Serialize};
use tree_sitter::{Node, Parser};

use super::workspace_paths::{Touch, WorkspacePaths};

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
    /// The workspace and the command's folder, to resolve the paths a command names; `None`:
    /// every path is taken to hold tracked work.
    pub paths: Option<WorkspacePaths>,
}

/// The context while one command line is judged.
struct Scope<'a> {
    cx: &'a PolicyContext,
    /// The line changes folder somewhere (`cd`, `pushd`): relative paths may start anywhere.
    after_cd: bool,
}

impl Scope<'_> {
    fn touch(&self, word: &str) -> Touch {
        match &self.cx.paths {
            Some(p) => p.touch(word, self.after_cd),
            None if word.starts_with("/tmp/") || word.starts_with("$TMPDIR") => Touch::Temp,
            None => Touch::Workspace {
                rel: word.to_string(),
                tracked: true,
            },
        }
    }

    fn is_dir(&self, word: &str) -> bool {
        match &self.cx.paths {
            Some(p) => p.is_dir(word),
            None => word.ends_with('/'),
        }
    }
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

impl CommandVerdict {
    /// Whether the command may change files, and so is checkpointed before it runs (by `ken
    /// exec` and by the agent alike): every command but those known to be read-only (`ls`,
    /// `cat`, `rg`, `git status`, `ken search`..). An opaque program — an interpreter given
    /// inline code or a script, `make`, a package manager's run script, a script run by path
    /// — is one whose effects the policy cannot see, so it may; so does a command that does
    /// not parse.
    pub fn may_write(&self) -> bool {
        !self.parsed || self.class != ActionClass::Read
    }
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
        let scope = Scope {
            cx,
            after_cd: changes_folder(tree.root_node(), src),
        };
        collect(tree.root_node(), src, &scope, &mut parts);
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

/// Whether any simple command in the tree is `cd` or `pushd`.
fn changes_folder(node: Node, src: &[u8]) -> bool {
    (node.kind() == "command" && matches!(program(node, src).as_str(), "cd" | "pushd"))
        || (0..node.named_child_count())
            .filter_map(|i| node.named_child(i as u32))
            .any(|c| changes_folder(c, src))
}

/// Walks the tree: each simple command and each redirection is a part.
fn collect(node: Node, src: &[u8], scope: &Scope, out: &mut Vec<ActionPart>) {
    match node.kind() {
        "command" => match shell_script(node, src) {
            // `sh -c 'a && b'` is judged by its script, part by part, like any other command.
            Some(script) => {
                let inner = ActionPolicy::classify(&script, scope.cx);
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
            None => out.push(command_part(node, src, scope)),
        },
        "file_redirect" => {
            let text = node.utf8_text(src).unwrap_or("").to_string();
            let target = node
                .child_by_field_name("destination")
                .and_then(|d| d.utf8_text(src).ok())
                .map(unquote)
                .unwrap_or_default();
            let op = text.trim_start_matches(|c: char| c.is_ascii_digit());
            let writes = op.starts_with('>') || op.starts_with("&>");
            let appends = op.starts_with(">>") || op.starts_with("&>>");
            if writes
                && !matches!(target.as_str(), "/dev/null" | "/dev/stdout" | "/dev/stderr")
                && !target.starts_with('&')
            {
                // `>` empties the file first: onto tracked work that is a loss, `>>` is not.
                let (class, why) = match appends {
                    true => write_target(&target, scope),
                    false => overwrite(&[target.as_str()], scope, "overwrites"),
                };
                out.push(ActionPart { text, class, why });
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
            collect(c, src, scope, out);
        }
    }
}

/// One pair of enclosing quotes removed (a double-quoted word's `\"`, `\\`, `\$` and `` \` ``
/// unescaped). Trimming every quote character instead would break a script that ends in a
/// quoted word (`sh -c "rm -rf 'src'"`).
fn unquote(s: &str) -> String {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b'\'' && b[b.len() - 1] == b'\'' {
        return s[1..s.len() - 1].to_string();
    }
    if b.len() >= 2 && b[0] == b'"' && b[b.len() - 1] == b'"' {
        let inner = &s[1..s.len() - 1];
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars().peekable();
        while let Some(c) = chars.next() {
            match (c, chars.peek()) {
                ('\\', Some('"' | '\\' | '$' | '`')) => out.extend(chars.next()),
                _ => out.push(c),
            }
        }
        return out;
    }
    s.to_string()
}

fn program(cmd: Node, src: &[u8]) -> String {
    cmd.child_by_field_name("name")
        .and_then(|n| n.utf8_text(src).ok())
        .map(|p| program_name(&unquote(p)))
        .unwrap_or_default()
}

/// `/bin/rm`, `\rm` and `"rm"` all run `rm`.
fn program_name(word: &str) -> String {
    let w = unquote(word);
    let w = w.trim_start_matches('\\');
    w.rsplit('/').next().unwrap_or(w).to_string()
}

/// A path the command writes without emptying it: protected when it is CI or system
/// configuration.
fn write_target(target: &str, scope: &Scope) -> (ActionClass, String) {
    match protected(target, scope) {
        Some(why) => (ActionClass::Protected, why),
        None => (ActionClass::WorkspaceWrite, "writes a file".to_string()),
    }
}

/// CI or system configuration, by the word as written or by where it lands.
fn protected(word: &str, scope: &Scope) -> Option<String> {
    protected_path(word).or_else(|| match scope.touch(word) {
        Touch::Workspace { rel, .. } => protected_path(&rel),
        Touch::Outside(p) => protected_path(&p.to_string_lossy()),
        Touch::Temp => None,
    })
}

/// Paths a command empties or replaces: destructive where one holds tracked work.
fn overwrite(targets: &[&str], scope: &Scope, verb: &str) -> (ActionClass, String) {
    if let Some(why) = targets.iter().find_map(|t| protected(t, scope)) {
        return (ActionClass::Protected, why);
    }
    for t in targets {
        if let Touch::Workspace { rel, tracked: true } = scope.touch(t) {
            return (
                ActionClass::Destructive,
                format!(
                    "{verb} tracked work (`{}`)",
                    if rel.is_empty() { "." } else { &rel }
                ),
            );
        }
    }
    (
        ActionClass::WorkspaceWrite,
        format!("{verb} files that hold no tracked work"),
    )
}

/// Paths a command deletes: destructive anywhere but a temporary folder outside the
/// workspace.
fn removal(targets: &[&str], scope: &Scope, prog: &str) -> (ActionClass, String) {
    if let Some(why) = targets.iter().find_map(|t| protected(t, scope)) {
        return (ActionClass::Protected, why);
    }
    let touches: Vec<Touch> = targets.iter().map(|t| scope.touch(t)).collect();
    if let Some(Touch::Workspace { rel, .. }) = touches.iter().find(|t| matches!(t, Touch::Workspace { .. }))
    {
        return (
            ActionClass::Destructive,
            format!(
                "`{prog}` deletes `{}` in the workspace",
                if rel.is_empty() { "." } else { rel }
            ),
        );
    }
    match !touches.is_empty() && touches.iter().all(|t| *t == Touch::Temp) {
        true => (
            ActionClass::WorkspaceWrite,
            "deletes files in a temporary folder".into(),
        ),
        false => (ActionClass::Destructive, format!("`{prog}` deletes files")),
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

fn command_part(cmd: Node, src: &[u8], scope: &Scope) -> ActionPart {
    let text = cmd.utf8_text(src).unwrap_or("").to_string();
    let words: Vec<String> = cmd
        .child_by_field_name("name")
        .into_iter()
        .chain(arguments(cmd))
        .filter_map(|c| c.utf8_text(src).ok().map(unquote))
        .collect();
    let (class, why) = classify_words(&words, scope, 0);
    ActionPart { text, class, why }
}

/// Flags of a wrapper that take a value as the next word.
const WRAPPER_VALUE_FLAGS: &[(&str, &[&str])] = &[
    ("env", &["-u", "--unset", "-C", "--chdir"]),
    ("nice", &["-n", "--adjustment"]),
    ("timeout", &["-s", "--signal", "-k", "--kill-after"]),
    ("ionice", &["-c", "-n", "-p"]),
    ("stdbuf", &["-i", "-o", "-e"]),
    (
        "xargs",
        &[
            "-I",
            "-n",
            "-P",
            "-d",
            "-L",
            "-s",
            "-a",
            "-E",
            "--arg-file",
            "--delimiter",
        ],
    ),
];

/// The command a wrapper runs (`env X=1 rm ..` -> `rm ..`), `None` when the words are not a
/// wrapper. `xargs` adds a word for what it reads from its input, which could name anything.
fn unwrap_once(words: &[String]) -> Option<Vec<String>> {
    let prog = program_name(words.first()?);
    let wrappers = [
        "command", "builtin", "exec", "env", "nice", "nohup", "time", "timeout", "stdbuf", "setsid",
        "ionice", "xargs", "busybox",
    ];
    if !wrappers.contains(&prog.as_str()) {
        return None;
    }
    let takes_value = WRAPPER_VALUE_FLAGS
        .iter()
        .find(|(p, _)| *p == prog)
        .map(|(_, f)| *f)
        .unwrap_or(&[]);
    let mut rest = words[1..].iter().peekable();
    let mut out = Vec::new();
    while let Some(w) = rest.next() {
        if w == "--" {
            break;
        }
        if w.starts_with('-') && w.len() > 1 {
            if prog == "env" && (w == "-S" || w == "--split-string") {
                let script = rest.next().cloned().unwrap_or_default();
                out.extend(shlex::split(&script).unwrap_or_else(|| vec![script]));
                break;
            }
            if takes_value.contains(&w.as_str()) {
                rest.next();
            }
            continue;
        }
        if prog == "env" && w.contains('=') {
            continue;
        }
        out.push(w.clone());
        break;
    }
    out.extend(rest.cloned());
    if prog == "timeout" && !out.is_empty() {
        out.remove(0);
    }
    if prog == "xargs" {
        if out.is_empty() {
            out.push("echo".into());
        }
        out.push("$XARGS_INPUT".into());
    }
    Some(out)
}

/// A simple command's class from its words (program first), wrappers looked through.
fn classify_words(words: &[String], scope: &Scope, depth: u8) -> (ActionClass, String) {
    use ActionClass::*;
    let Some(first) = words.first() else {
        return (Read, "known not to write".into());
    };
    let prog = program_name(first);
    // `command -v rm`, `type rm`: a lookup, nothing runs.
    if prog == "command" && words.iter().any(|w| w == "-v" || w == "-V") {
        return (Read, "looks a program up".into());
    }
    if depth < 8
        && let Some(inner) = unwrap_once(words)
    {
        return match inner.is_empty() {
            true => (Read, "known not to write".into()),
            false => classify_words(&inner, scope, depth + 1),
        };
    }
    let args: Vec<String> = words[1..].to_vec();
    if depth < 8 {
        if let Some(script) = inline_script(&prog, &args) {
            return classify_script(&script, scope);
        }
        if prog == "find"
            && let Some(found) = find_action(&args, scope, depth)
        {
            return found;
        }
    }
    classify_program(&prog, &args, scope)
}

/// The script of `sh -c SCRIPT` or `eval WORDS`.
fn inline_script(prog: &str, args: &[String]) -> Option<String> {
    if prog == "eval" {
        return Some(args.join(" "));
    }
    if !SHELLS.contains(&prog) {
        return None;
    }
    let at = args
        .iter()
        .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))?;
    args.get(at + 1).cloned()
}

/// A script's riskiest part, as one part.
fn classify_script(script: &str, scope: &Scope) -> (ActionClass, String) {
    let inner = ActionPolicy::classify(script, scope.cx);
    if !inner.parsed {
        return (
            ActionClass::Protected,
            "runs a shell script that could not be parsed".into(),
        );
    }
    inner
        .parts
        .iter()
        .max_by_key(|p| p.class)
        .map(|p| (p.class, format!("runs `{}`: {}", p.text, p.why)))
        .unwrap_or((ActionClass::Read, "runs an empty script".into()))
}

/// `find ROOTS .. -delete` deletes under its roots; `-exec CMD {} ;` runs CMD on them.
fn find_action(args: &[String], scope: &Scope, depth: u8) -> Option<(ActionClass, String)> {
    let mut roots: Vec<&str> = args
        .iter()
        .take_while(|a| !a.starts_with('-') && !matches!(a.as_str(), "(" | "!" | "\\(" | "\\!"))
        .map(String::as_str)
        .collect();
    if roots.is_empty() {
        roots.push(".");
    }
    let mut worst: Option<(ActionClass, String)> = None;
    let mut keep = |c: (ActionClass, String)| {
        if worst.as_ref().is_none_or(|w| c.0 > w.0) {
            worst = Some(c);
        }
    };
    if args.iter().any(|a| a == "-delete") {
        let under: Vec<String> = roots.iter().map(|r| format!("{r}/*")).collect();
        let under: Vec<&str> = under.iter().map(String::as_str).collect();
        keep(removal(&under, scope, "find -delete"));
    }
    let mut i = 0;
    while i < args.len() {
        if matches!(args[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            // `{}` stands for whatever is found under the roots.
            let cmd: Vec<String> = args[i + 1..]
                .iter()
                .take_while(|a| !matches!(a.as_str(), ";" | "\\;" | "+"))
                .map(|a| a.replace("{}", &format!("{}/*", roots[0])))
                .collect();
            let (class, why) = classify_words(&cmd, scope, depth + 1);
            keep((
                class,
                format!("`find {}` runs `{}`: {why}", args[i], cmd.join(" ")),
            ));
            i += cmd.len() + 1;
        }
        i += 1;
    }
    worst
}

/// Arguments that are not flags (and not a flag's value, for the flags in `valued`).
fn operands<'a>(args: &'a [String], valued: &[&str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut it = args.iter();
    let mut flags_done = false;
    while let Some(a) = it.next() {
        if !flags_done && a == "--" {
            flags_done = true;
        } else if !flags_done && a.starts_with('-') && a.len() > 1 {
            if valued.contains(&a.as_str()) {
                it.next();
            }
        } else {
            out.push(a.as_str());
        }
    }
    out
}

/// `cp`, `mv`, `install`, `ln`, `rsync`: where each source lands, and whether that replaces
/// tracked work; `mv` also takes tracked work away from where it was.
fn copy_like(prog: &str, args: &[String], scope: &Scope) -> (ActionClass, String) {
    let target_dir = args.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--target-directory=")
            .map(str::to_string)
            .or_else(|| (a == "-t").then(|| args.get(i + 1).cloned()).flatten())
    });
    let mut ops = operands(args, &["-t", "-S", "-m", "-o", "-g", "--suffix", "-e"]);
    let dest = match &target_dir {
        Some(d) => d.clone(),
        None => match ops.pop() {
            Some(d) => d.to_string(),
            None => return (ActionClass::WorkspaceWrite, format!("`{prog}` writes files")),
        },
    };
    if prog == "rsync"
        && args
            .iter()
            .any(|a| a.starts_with("--delete") || a == "--remove-source-files")
    {
        return removal(&[dest.as_str()], scope, "rsync --delete");
    }
    let into_dir = target_dir.is_some() || ops.len() > 1 || scope.is_dir(&dest);
    let landing: Vec<String> = match into_dir {
        true => ops
            .iter()
            .map(|s| {
                let name = s.trim_end_matches('/').rsplit('/').next().unwrap_or(s);
                format!("{}/{name}", dest.trim_end_matches('/'))
            })
            .collect(),
        false => vec![dest.clone()],
    };
    let landing: Vec<&str> = landing.iter().map(String::as_str).collect();
    let over = overwrite(&landing, scope, &format!("`{prog}` replaces"));
    if over.0 > ActionClass::WorkspaceWrite || prog != "mv" {
        return over;
    }
    // Moving tracked work out of the workspace removes it from there (and a private `/tmp`
    // goes when the sandbox ends).
    let dest_in = matches!(scope.touch(&dest), Touch::Workspace { .. });
    match ops.iter().find_map(|s| match scope.touch(s) {
        Touch::Workspace { rel, tracked: true } if !dest_in => Some(rel),
        _ => None,
    }) {
        Some(rel) => (
            ActionClass::Destructive,
            format!("`mv` takes tracked work (`{rel}`) out of the workspace"),
        ),
        None => over,
    }
}

fn classify_program(prog: &str, args: &[String], scope: &Scope) -> (ActionClass, String) {
    use ActionClass::*;
    if let Some(class) = privileged_or_network(prog, args, scope) {
        return class;
    }
    if let Some(class) = known_writer(prog, args, scope) {
        return class;
    }
    // A reader told to write its result somewhere writes that file.
    if let Some(out) = output_file(prog, args) {
        return overwrite(
            &[out.as_str()],
            scope,
            &format!("`{prog}` writes its output over"),
        );
    }
    if READ_ONLY.contains(&prog) || prog.is_empty() {
        return (Read, "known not to write".into());
    }
    (WorkspaceWrite, format!("`{prog}` is not known to be read-only"))
}

/// Installers, privilege escalation, set-id bits, the network and opaque shells.
fn privileged_or_network(prog: &str, args: &[String], scope: &Scope) -> Option<(ActionClass, String)> {
    use ActionClass::*;
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let first = args.first().map(String::as_str).unwrap_or("");
    if let Some((_, subs)) = INSTALLERS.iter().find(|(p, _)| *p == prog)
        && subs.contains(&first)
    {
        return Some((
            Protected,
            format!("`{prog} {first}` installs or publishes packages"),
        ));
    }
    if ESCALATION.contains(&prog) {
        return Some((
            Escalation,
            format!("`{prog}` gains privileges or leaves the sandbox"),
        ));
    }
    if prog == "chmod"
        && args
            .iter()
            .any(|a| a.contains('s') && (a.starts_with('+') || a.starts_with("u+") || a.starts_with("g+")))
    {
        return Some((Escalation, "sets a set-id bit".into()));
    }
    if prog == "rsync" {
        let local = copy_like(prog, args, scope);
        let remote = args.iter().any(|a| !a.starts_with('-') && a.contains(':'));
        return Some(match remote && local.0 < Network {
            true => (Network, "`rsync` reaches the network".into()),
            false => local,
        });
    }
    if NETWORK.contains(&prog) {
        return Some((Network, format!("`{prog}` reaches the network")));
    }
    if SHELLS.contains(&prog) && (has("-c") || args.is_empty()) {
        return Some((
            WorkspaceWrite,
            "runs a shell whose commands are not seen here".into(),
        ));
    }
    None
}

/// Programs known to remove, overwrite, copy or write files (or to only read, for a few of
/// cargo's and ken's subcommands), by what their arguments say.
fn known_writer(prog: &str, args: &[String], scope: &Scope) -> Option<(ActionClass, String)> {
    use ActionClass::*;
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let first = args.first().map(String::as_str).unwrap_or("");
    let class = match prog {
        "rm" | "rmdir" | "unlink" | "shred" => {
            let targets = operands(args, &["-n", "-s", "--iterations", "--size"]);
            removal(&targets, scope, prog)
        }
        "truncate" => {
            let targets = operands(args, &["-s", "-r", "--size", "--reference"]);
            overwrite(&targets, scope, "`truncate` empties")
        }
        "tee" if !(has("-a") || has("--append")) => {
            overwrite(&operands(args, &[]), scope, "`tee` overwrites")
        }
        "dd" => {
            let of: Vec<&str> = args.iter().filter_map(|a| a.strip_prefix("of=")).collect();
            overwrite(&of, scope, "`dd` overwrites")
        }
        "cp" | "mv" | "install" => copy_like(prog, args, scope),
        "ln" if args
            .iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('f')) =>
        {
            copy_like(prog, args, scope)
        }
        "git" => classify_git(args, scope),
        "find" if has("-delete") || has("-exec") || has("-execdir") || has("-ok") => (
            Destructive,
            "`find` deletes or runs commands on what it finds".into(),
        ),
        "find" if args.iter().any(|a| a.starts_with("-fprint") || a == "-fls") => {
            (WorkspaceWrite, "`find` writes a file".into())
        }
        "sed" | "perl" if args.iter().any(|a| a.starts_with("-i")) => {
            match args.iter().find_map(|t| protected(t, scope)) {
                Some(p) => (Protected, p),
                None => (WorkspaceWrite, "edits files in place".into()),
            }
        }
        "tee" | "touch" | "mkdir" | "ln" => match args.iter().find_map(|t| protected(t, scope)) {
            Some(p) => (Protected, p),
            None => (WorkspaceWrite, format!("`{prog}` writes files")),
        },
        "cargo" if matches!(first, "tree" | "metadata" | "--version" | "search") => {
            (Read, "reads the project".into())
        }
        "ken" if matches!(first, "exec" | "agent") => {
            (WorkspaceWrite, format!("`ken {first}` runs commands or edits"))
        }
        _ => return None,
    };
    Some(class)
}

/// The file `sort -o FILE` or `uniq INPUT OUTPUT` writes.
fn output_file(prog: &str, args: &[String]) -> Option<String> {
    match prog {
        "sort" => args.iter().enumerate().find_map(|(i, a)| {
            if a == "-o" || a == "--output" {
                return args.get(i + 1).cloned();
            }
            a.strip_prefix("--output=")
                .or_else(|| a.strip_prefix("-o").filter(|_| !a.starts_with("--")))
                .filter(|f| !f.is_empty())
                .map(str::to_string)
        }),
        "uniq" => operands(args, &["-f", "-s", "-w"]).get(1).map(|s| s.to_string()),
        _ => None,
    }
}

/// Git's options before the subcommand that take a value.
const GIT_VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--exec-path",
];

fn classify_git(args: &[String], scope: &Scope) -> (ActionClass, String) {
    use ActionClass::*;
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        i += if GIT_VALUE_OPTIONS.contains(&args[i].as_str()) {
            2
        } else {
            1
        };
    }
    let sub = args.get(i).map(String::as_str).unwrap_or("");
    let rest: &[String] = args.get(i + 1..).unwrap_or(&[]);
    let has = |flag: &str| rest.iter().any(|a| a == flag);
    let flag_has = |short: char, long: &str| {
        rest.iter()
            .any(|a| a == long || (a.starts_with('-') && !a.starts_with("--") && a.contains(short)))
    };
    match sub {
        "status" | "diff" | "log" | "show" | "blame" | "grep" | "ls-files" | "rev-parse" | "describe"
        | "shortlog" => (Read, format!("`git {sub}` reads the repository")),
        "branch" | "tag" | "remote" | "stash"
            if rest.is_empty() || has("--list") || has("-l") || has("-v") || has("list") || has("show") =>
        {
            (Read, format!("`git {sub}` lists"))
        }
        "stash" if has("drop") || has("clear") => (Destructive, "`git stash` drops saved work".into()),
        "push" => (Protected, "`git push` publishes commits".into()),
        "reset" if has("--hard") || has("--merge") => {
            (Destructive, "`git reset --hard` discards work".into())
        }
        "clean" if flag_has('n', "--dry-run") => (Read, "`git clean -n` lists".into()),
        "clean" => (Destructive, "`git clean` deletes untracked files".into()),
        "checkout" | "switch" if flag_has('f', "--force") || has("--discard-changes") => {
            (Destructive, format!("`git {sub}` discards changes"))
        }
        "restore" if !(has("--staged") || has("-S")) || has("--worktree") || has("-W") => {
            (Destructive, "`git restore` discards changes".into())
        }
        "checkout" if has("--") || has(".") => (Destructive, "`git checkout` discards changes".into()),
        "checkout" if !(has("-b") || has("-B") || has("--orphan")) => {
            // `git checkout PATH` discards that path's changes; a branch name is no path.
            match rest
                .iter()
                .filter(|a| !a.starts_with('-'))
                .find_map(|a| match scope.touch(a) {
                    Touch::Workspace { rel, tracked: true } => Some(rel),
                    _ => None,
                }) {
                Some(rel) => (
                    Destructive,
                    format!("`git checkout` discards the changes to `{rel}`"),
                ),
                None => (WorkspaceWrite, "`git checkout` changes the repository".into()),
            }
        }
        "rm" if !has("--cached") => (Destructive, "`git rm` deletes files".into()),
        "commit" if matches!(scope.cx.branch.as_deref(), Some("main" | "master")) => {
            (Protected, "commits on the main branch".into())
        }
        "clone" | "fetch" | "pull" | "ls-remote" | "submodule" => {
            (Network, format!("`git {sub}` reaches a remote"))
        }
        _ => (WorkspaceWrite, format!("`git {sub}` changes the repository")),
    }
}
