//! clap definitions: the command names and flags users and scripts rely on.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "ken",
    version,
    about = "Index a codebase and find what matters for a task"
)]
pub struct Cli {
    /// Less output on stderr (errors only).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// More output on stderr (-v info, -vv debug, -vvv trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

/// Negated filters (`-path:tests/`, `-lang:go`, `-kind:field`) are query words, not flags:
/// they are rewritten to the `!path:` spelling, which the query language also accepts, before
/// clap sees them.
pub fn normalize_args(args: impl IntoIterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    args.into_iter()
        .map(|a| match a.to_str() {
            Some(s) if ["-path:", "-lang:", "-kind:"].iter().any(|p| s.starts_with(p)) => {
                format!("!{}", &s[1..]).into()
            }
            _ => a,
        })
        .collect()
}

impl Cli {
    pub fn verbosity(&self) -> &'static str {
        match (self.quiet, self.verbose) {
            (true, _) => "error",
            (false, 0) => "warn",
            (false, 1) => "info",
            (false, 2) => "debug",
            _ => "trace",
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build or inspect the index.
    #[command(subcommand)]
    Index(IndexCommand),
    /// Check or read an audit log (the hash-chained JSONL record of a session's actions).
    #[command(subcommand)]
    Audit(AuditCommand),
    /// The coding agent: plans, reads, edits, runs commands and tests through Kenning's index
    /// and sandbox until the evaluation passes or a limit is reached. `ken agent "TASK"`;
    /// `resume`, `rollback` and `stats` for past sessions.
    Agent(Box<AgentArgs>),
    /// Run one command confined (namespaces, read-only mounts, Landlock, seccomp, limits, a
    /// wall clock) after the approval policy has judged it; streams its output and exits
    /// with its status. `--doctor` says which mechanisms this kernel enforces.
    Exec(ExecArgs),
    /// Find definitions by name or qualified name (exact, then case-insensitive, then prefix).
    Symbol(SymbolArgs),
    /// Search code: identifiers, error messages, whole issue texts; or every matching line
    /// with --literal / --regex.
    Search(SearchArgs),
    /// What is relevant to a task (issue text, question, stack trace), ranked from every
    /// signal and packed into a token budget with citations.
    Context(ContextArgs),
    /// Answer an onboarding question: with a model configured (OPENAI_BASE_URL and/or
    /// OPENAI_API_KEY, KEN_MODEL), in prose with checked `path:line` citations; without one,
    /// the relevant code and a structural overview.
    Ask(AskArgs),
    /// A repository map for a newcomer: layout, languages, central modules, entry points,
    /// and how the main parts call each other.
    Overview(OverviewArgs),
    /// The ranking's training rows: for each line `{"id", "query"}` of a JSONL file, the
    /// fused ranking's head with each candidate's feature vector, one JSON line per query.
    #[command(hide = true)]
    RankFeatures(RankFeaturesArgs),
    /// The blast radius of a change: changed definitions, what depends on them (with the path
    /// that reaches each), public entry points and tests reached, tests to run, a risk level.
    Impact(ImpactArgs),
    /// Who calls a symbol, to a depth (resolved call edges, with provenance and confidence).
    Callers(CallArgs),
    /// What a symbol calls, to a depth.
    Callees(CallArgs),
    /// Every reference to a symbol: calls, type uses, inheritance.
    Refs(RefsArgs),
    /// A file's imports (resolved to files) and the files importing it.
    Deps(DepsArgs),
    /// The code graph as a whole.
    #[command(subcommand)]
    Graph(GraphCommand),
    /// Print lines of a repository file: `path:START-END`, `path:LINE` or `path` (the
    /// server's `read_span`; paths cannot leave the repository).
    ReadSpan(ReadSpanArgs),
    /// Register `ken serve --mcp` with the coding agents here (Claude Code, Codex, Cursor,
    /// VS Code, Gemini CLI, OpenCode), with instructions on when to call which tool and a
    /// Claude Code sub-agent; `--dry-run` lists the files first.
    Install(InstallArgs),
    /// Remove exactly what `ken install` wrote.
    Uninstall(InstallArgs),
    /// Serve the index to coding agents and scripts: MCP on stdio (`--mcp`), MCP over
    /// streamable HTTP at /mcp (`--mcp --http ADDR`), and the JSON API (`--http ADDR`). The
    /// index stays open and is rebuilt in the background when files change.
    Serve(ServeArgs),
    /// An indexing worker: takes "index repository R at commit C" from the NATS JetStream
    /// work queue, builds it incrementally from the last published snapshot, publishes it to
    /// object storage, and moves the repository's current pointer. Prints one line per item.
    Worker(WorkerArgs),
    /// Drive and watch the fleet: queue repositories for the workers, see the queue, the
    /// workers and every repository's current snapshot, and query the shard servers.
    #[command(subcommand)]
    Fleet(FleetCommand),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InstallScope {
    /// The repository's own files (`.mcp.json`, `AGENTS.md`, ...).
    Project,
    /// The agents' files in the home folder, serving this repository.
    User,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The agents (claude, codex, cursor, vscode, gemini, opencode; repeatable); default:
    /// those found on this machine.
    #[arg(long, value_name = "NAME")]
    pub agent: Vec<String>,
    #[arg(long, value_enum, default_value = "project")]
    pub scope: InstallScope,
    /// The repository (default: the current folder).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// List the files that would change; change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct NatsArgs {
    /// The NATS server (with JetStream enabled): `nats://host:4222`; several comma-separated;
    /// a user and password or a token in the URL (`nats://user:pass@host:4222`) are used and
    /// never printed.
    #[arg(long, value_name = "URL", env = "KEN_NATS")]
    pub nats: String,
    /// A NATS credentials file (`.creds`: a user JWT and its nkey seed).
    #[arg(long, value_name = "FILE", env = "KEN_NATS_CREDS")]
    pub nats_creds: Option<PathBuf>,
}

impl NatsArgs {
    pub fn target(&self) -> crate::fleet::NatsTarget {
        crate::fleet::NatsTarget::new(&self.nats, self.nats_creds.clone())
    }
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// Object storage the snapshots are published to (as for `ken index push`).
    #[arg(long, value_name = "URL", env = "KEN_REMOTE")]
    pub remote: String,
    /// Checkouts and indexes kept between items (default: ~/.cache/kenning/worker).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// This worker's name (default: host name and process id).
    #[arg(long)]
    pub id: Option<String>,
    /// Seconds an item stays with a worker that sends no progress (a dead worker's items
    /// go to another after this long).
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    pub ack_wait: f64,
    /// Attempts before an item goes to the dead-letter subject `ken.dead.<repo>`.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub max_attempts: i64,
    /// Seconds before a failed item is offered again (times the attempt number).
    #[arg(long, default_value_t = 2.0, value_name = "SECS")]
    pub retry_delay: f64,
    /// Serve GET /metrics (Prometheus) on this address (port 0 picks one); loopback unless
    /// --allow-remote.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    /// Allow a non-loopback --metrics address (a pod's, for Prometheus to scrape).
    #[arg(long)]
    pub allow_remote: bool,
    /// Exit once the queue has been empty this many seconds (default: run until stopped).
    #[arg(long, value_name = "SECS")]
    pub exit_when_idle: Option<f64>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum FleetCommand {
    /// Queue repositories (their HEAD, or --commit) for the workers. A repository already
    /// queued is replaced by the newer request; the same commit twice is merged.
    Enqueue(EnqueueArgs),
    /// The work queue, the live workers, dead letters, and every repository's pointer.
    Status(FleetStatusArgs),
    /// Search every repository of the fleet: each shard group answers for its repositories,
    /// the rankings are fused; groups that miss the deadline are named.
    Search(FleetSearchArgs),
    /// Any read-only operation of the query API over every repository (`symbol`, `context`,
    /// ...), with its JSON arguments.
    Call(FleetCallArgs),
}

#[derive(Debug, Args)]
pub struct EnqueueArgs {
    /// Repository checkouts (their key from the origin URL, as `ken index push` names them).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub nats: NatsArgs,
    /// The repository's key (one path only).
    #[arg(long)]
    pub name: Option<String>,
    /// The commit to index (one path only; default HEAD).
    #[arg(long)]
    pub commit: Option<String>,
    /// Where workers fetch it (a git URL; default: the checkout's absolute path).
    #[arg(long)]
    pub source: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct FleetStatusArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ShardGroupsArgs {
    #[command(flatten)]
    pub nats: NatsArgs,
    /// Every shard group of the fleet, comma-separated.
    #[arg(long, value_name = "LIST", env = "KEN_FLEET_GROUPS")]
    pub groups: String,
    /// Milliseconds to wait for the groups' answers; later ones are reported missing.
    #[arg(long, default_value_t = 5000, value_name = "MS")]
    pub deadline_ms: u64,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct FleetSearchArgs {
    pub query: String,
    #[command(flatten)]
    pub shards: ShardGroupsArgs,
    /// lexical, files, symbols, semantic, hybrid (literal and regex need the source, which
    /// shard servers do not hold).
    #[arg(long)]
    pub mode: Option<String>,
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

#[derive(Debug, Args)]
pub struct FleetCallArgs {
    /// The operation (`symbol`, `context`, `refs`, ...).
    pub operation: String,
    /// Its arguments as JSON (as for `POST /v1/<operation>`).
    #[arg(default_value = "{}")]
    pub args: String,
    #[command(flatten)]
    pub shards: ShardGroupsArgs,
}

#[derive(Debug, Args)]
pub struct ReadSpanArgs {
    /// `path:START-END` (1-based, inclusive), relative to the repository root.
    pub span: String,
    /// Read a file the ignore rules keep out of the index (never a secrets-shaped one such as
    /// `.env` or a private key, nor anything under `.git`).
    #[arg(long)]
    pub ignored: bool,
    #[command(flatten)]
    pub at: QueryLocation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ToolSetArg {
    Core,
    Full,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve the Model Context Protocol: on stdin/stdout, or at /mcp with --http.
    #[arg(long)]
    pub mcp: bool,
    /// Listen for HTTP on HOST:PORT (loopback unless --allow-remote; port 0 picks one). Serves
    /// the JSON API (POST /v1/<operation>, GET /v1/status, GET /healthz) and, with --mcp, /mcp.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Allow a non-loopback --http address; needs a bearer token in KEN_SERVE_TOKEN.
    #[arg(long)]
    pub allow_remote: bool,
    /// Do not watch the repository (answers then report staleness, and `reindex` updates).
    #[arg(long)]
    pub no_watch: bool,
    /// Quiet time after a change before rebuilding, in milliseconds.
    #[arg(long, default_value_t = 50, value_name = "MS")]
    pub debounce_ms: u64,
    /// Per-request deadline, in seconds.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub deadline: f64,
    /// Largest request body accepted, in bytes.
    #[arg(long, default_value_t = 2 << 20, value_name = "BYTES")]
    pub max_body: usize,
    /// MCP tools offered: `core` (search, context, symbol, callers, refs, impact, read_span,
    /// overview; short descriptions, lean schemas) or `full` (every tool, full descriptions,
    /// output schemas).
    #[arg(long, value_enum, default_value = "core", value_name = "SET")]
    pub tools: ToolSetArg,
    /// Repository root (default: found upwards from the current folder; indexed first if it
    /// has no index).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub location: IndexLocation,
    /// Serve a shard group of the fleet instead of one repository: hold the repositories
    /// that rendezvous hashing assigns to --group among --groups, loaded from their
    /// published snapshots and followed as their pointers move, and answer the group's
    /// queries over NATS. With --http, GET /metrics and POST /v1/fleet/<operation> (this
    /// server as the root of a fleet-wide query).
    #[arg(long, requires_all = ["nats", "group", "groups"])]
    pub fleet: bool,
    #[arg(long, value_name = "URL", env = "KEN_NATS")]
    pub nats: Option<String>,
    /// A NATS credentials file (`.creds`), as for `ken worker`.
    #[arg(long, value_name = "FILE", env = "KEN_NATS_CREDS")]
    pub nats_creds: Option<PathBuf>,
    /// Object storage the snapshots are read from.
    #[arg(long, value_name = "URL", env = "KEN_REMOTE")]
    pub remote: Option<String>,
    /// This server's shard group.
    #[arg(long)]
    pub group: Option<String>,
    /// Every shard group, comma-separated.
    #[arg(long, value_name = "LIST", env = "KEN_FLEET_GROUPS")]
    pub groups: Option<String>,
    /// Local snapshot cache (default: ~/.cache/kenning/shard-<group>).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// This replica's name in answers (default: host name and process id).
    #[arg(long)]
    pub replica: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum GraphCommand {
    /// Nodes, edges by kind and provenance, unresolved references by language.
    Stats(GraphStatsArgs),
}

#[derive(Debug, Args)]
pub struct QueryLocation {
    /// Repository root (default: found upwards from the current folder).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub location: IndexLocation,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// A qualified name (`requests.sessions.Session.send`, `Session::send`), `path:line`,
    /// or a plain name (candidates are listed when it is ambiguous).
    pub symbol: String,
    /// Follow calls this many levels (1-10).
    #[arg(long, default_value_t = 1)]
    pub depth: usize,
    /// Ignore edges less sure than this (0-1; name-matched edges are 0.6 and below).
    #[arg(long, default_value_t = 0.0)]
    pub min_confidence: f32,
    #[command(flatten)]
    pub at: QueryLocation,
}

#[derive(Debug, Args)]
pub struct RefsArgs {
    /// A qualified name, `path:line`, or a plain name.
    pub symbol: String,
    /// At most this many references.
    #[arg(long, default_value_t = 200)]
    pub limit: usize,
    #[command(flatten)]
    pub at: QueryLocation,
}

#[derive(Debug, Args)]
pub struct DepsArgs {
    /// A file path relative to the repository root.
    pub file: String,
    #[command(flatten)]
    pub at: QueryLocation,
}

#[derive(Debug, Args)]
pub struct GraphStatsArgs {
    #[command(flatten)]
    pub at: QueryLocation,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum SandboxArg {
    ReadOnly,
    WorkspaceWrite,
    FullAccess,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ApprovalArg {
    Untrusted,
    OnRequest,
    Never,
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    /// What the command may write: nothing but a private temp dir, the workspace too, or
    /// anything (no confinement but the limits).
    #[arg(long, value_enum, default_value = "workspace-write")]
    pub sandbox: SandboxArg,
    /// Let the command reach the network (by default it gets an empty network namespace).
    #[arg(long)]
    pub network: bool,
    /// Wall-clock limit in seconds; the whole process tree is killed when it passes (exit 124).
    #[arg(long, default_value_t = 600.0)]
    pub timeout: f64,
    /// The folder the command may write (default: the enclosing git repository, else the
    /// current folder).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// Refuse to run (exit 125) unless every wanted mechanism is in force.
    #[arg(long)]
    pub sandbox_strict: bool,
    /// When to ask a person: before anything not known to be read-only, for what leaves the
    /// sandbox or is risky, or never (deny what would need asking).
    #[arg(long, value_enum, default_value = "on-request")]
    pub approval: ApprovalArg,
    /// Memory limit for the whole tree, in MiB (a cgroup where one can be made, else the
    /// address-space rlimit).
    #[arg(long, default_value_t = 8192)]
    pub memory_mib: u64,
    /// CPU seconds per process (RLIMIT_CPU).
    #[arg(long)]
    pub cpu_seconds: Option<u64>,
    /// Processes and threads for the whole tree.
    #[arg(long, default_value_t = 1024)]
    pub max_processes: u64,
    /// Largest file the command may write, in MiB.
    #[arg(long, default_value_t = 4096)]
    pub max_file_mib: u64,
    /// Keep an environment variable that looks secret (repeatable).
    #[arg(long = "allow-env", value_name = "NAME")]
    pub allow_env: Vec<String>,
    /// The audit log to append to (default: `<state dir>/kenning/audit/<session>.jsonl`).
    #[arg(long)]
    pub audit: Option<PathBuf>,
    /// The session this run belongs to: its audit log and its approvals "for the session".
    #[arg(long, default_value = "exec")]
    pub session: String,
    /// Bytes of each output stream kept in the report (head and tail).
    #[arg(long, default_value_t = 65536)]
    pub capture_bytes: usize,
    /// Put the workspace back as it was before the last command this session ran that could
    /// write (again: one command further back), or before checkpoint ID, and run nothing.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "last")]
    pub undo: Option<String>,
    /// Print the policy's verdict (classes, decision, who decided) and do not run.
    #[arg(long)]
    pub explain: bool,
    /// Probe the kernel and print, for each mechanism, whether it is enforced here and why not.
    #[arg(long)]
    pub doctor: bool,
    /// The run report as JSON on stdout (the command's output is in it, not streamed).
    #[arg(long)]
    pub json: bool,
    /// The command and its arguments (after `--`).
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct AgentArgs {
    #[command(subcommand)]
    pub command: Option<AgentCommand>,
    /// The task, in words (an issue text, a stack trace, a request).
    pub task: Option<String>,
    #[command(flatten)]
    pub run: AgentRunArgs,
}

#[derive(Debug, Args, Clone)]
pub struct AgentRunArgs {
    /// The repository (default: found upwards from the current folder).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// PROVIDER:NAME — openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, ollama:qwen2.5-coder,
    /// local:NAME (any OpenAI-compatible server at OPENAI_BASE_URL). Default: from the
    /// environment.
    #[arg(long)]
    pub model: Option<String>,
    /// A cheaper model for the summaries of compaction turns (PROVIDER:NAME).
    #[arg(long)]
    pub summary_model: Option<String>,
    /// The model sub-agents run on (PROVIDER:NAME; default: --model).
    #[arg(long)]
    pub delegate_model: Option<String>,
    #[arg(long, value_enum, default_value = "workspace-write")]
    pub sandbox: SandboxArg,
    #[arg(long, value_enum, default_value = "on-request")]
    pub approval: ApprovalArg,
    /// Let commands reach the network.
    #[arg(long)]
    pub network: bool,
    /// Approve every edit inside the workspace up front (commands are still judged).
    #[arg(long)]
    pub approve_edits: bool,
    /// The evaluation the harness runs when the model says it is done (default: the tests
    /// the impact analysis selects for the files changed).
    #[arg(long)]
    pub test_cmd: Option<String>,
    /// Model calls, 1 to 10,000.
    #[arg(long, default_value_t = 40, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub max_steps: u32,
    /// Dollars (above 0).
    #[arg(long, default_value_t = 5.0, value_parser = positive_f64)]
    pub max_cost: f64,
    /// Seconds, 1 to a week.
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub max_time: u64,
    /// Tokens, 1,000 to 1,000,000,000.
    #[arg(long, default_value_t = 2_000_000, value_parser = clap::value_parser!(u64).range(1_000..=1_000_000_000))]
    pub max_tokens: u64,
    /// Seconds each command may run, 1 to a day.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub command_timeout: u64,
    /// The conversation is kept under this many tokens: old tool outputs are elided first,
    /// then a compaction turn summarizes.
    #[arg(long, default_value_t = 60_000)]
    pub window_tokens: usize,
    /// The session's name (default: a new one from the time).
    #[arg(long)]
    pub session: Option<String>,
    /// Events as JSON lines on stdout instead of the readable stream.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Continue a session from its audit log.
    Resume {
        #[arg(value_name = "SESSION")]
        id: String,
        #[command(flatten)]
        run: AgentRunArgs,
    },
    /// Put the tree back as it was before step STEP of a session (default: as it started).
    Rollback { session: String, step: Option<u32> },
    /// Task success rate, average model calls, tokens and cost over sessions (default: all).
    Stats {
        logs: Vec<PathBuf>,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check every line's hash, sequence and chain; names the first bad line (exit 1). A
    /// final line cut short by a crash is reported as torn, not as tampering.
    Verify(AuditArgs),
    /// Render a log for a person, one event per line.
    Show(AuditArgs),
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The log file.
    pub file: PathBuf,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Index a repository (incremental: unchanged files are not parsed again).
    Build(BuildArgs),
    /// What the index holds and what changed in the working tree since it was built.
    Status(StatusArgs),
    /// Check the whole index against its checksums (segments, file table, lexical part,
    /// graph, vectors) and list what is damaged; `ken index build` repairs it.
    Verify(VerifyArgs),
    /// Publish the committed generation to object storage, keyed by repository and commit
    /// (and tree hash for uncommitted changes); objects already there are not sent again.
    Push(PushArgs),
    /// Install the nearest published snapshot for this checkout's commit (HEAD, else its
    /// nearest first-parent ancestor that has one), verify every object, then bring it up to
    /// date with the working tree incrementally.
    Pull(PullArgs),
}

#[derive(Debug, Args)]
pub struct RemoteArgs {
    /// Object storage: `s3://bucket/prefix` (credentials, region and endpoint from the AWS_*
    /// variables; AWS_ENDPOINT and AWS_ALLOW_HTTP=true for an S3-compatible server) or
    /// `file:///path`.
    #[arg(long, value_name = "URL", env = "KEN_REMOTE")]
    pub remote: String,
    /// The repository's key (default: from its origin URL, `github.com/owner/name`).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub struct PushArgs {
    /// Repository root.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub location: IndexLocation,
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// Publish the indexed files' contents too (content-addressed, so unchanged files are
    /// stored once across commits): readers without a checkout, such as the fleet's shard
    /// servers, can then show code. The fleet's workers always do.
    #[arg(long)]
    pub with_source: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PullArgs {
    /// Repository root.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub location: IndexLocation,
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// How many first-parent ancestors of HEAD to look through for a snapshot.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub depth: usize,
    /// Install the snapshot only; do not bring it up to date with the working tree.
    #[arg(long)]
    pub no_update: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Repository root (default: found upwards from the current folder).
    pub path: Option<PathBuf>,
    #[command(flatten)]
    pub location: IndexLocation,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct IndexLocation {
    /// Where the index lives (default: <repo>/.kenning).
    #[arg(long, value_name = "DIR")]
    pub index_dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EmbedderKind {
    Builtin,
    Openai,
    Ollama,
    /// all-MiniLM-L6-v2 on the CPU (`--features minilm`, weights fetched once).
    Minilm,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Repository root.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    #[command(flatten)]
    pub location: IndexLocation,
    /// Worker threads, at most 1024 (default 0: one per core).
    #[arg(short = 'j', long, default_value_t = 0,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=1024))]
    pub threads: usize,
    /// Skip files larger than this many bytes (default 1 MiB; at most 256 MiB: a file is read
    /// whole into memory).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..=256 << 20))]
    pub max_file_size: Option<u64>,
    /// Skip a file whose parse runs past this many milliseconds (default 10000).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
    pub max_parse_ms: Option<u64>,
    /// Skip a file whose syntax tree has more nodes than this (default 10,000,000; a tree
    /// costs memory per node).
    #[arg(long, value_name = "NODES", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub max_tree_nodes: Option<u64>,
    /// Follow symbolic links (loops are detected and reported).
    #[arg(long)]
    pub follow_symlinks: bool,
    /// Do not read docs and config as text (Markdown, YAML, TOML...): count them as not read.
    #[arg(long)]
    pub no_text: bool,
    /// Ignore the previous index and parse every file.
    #[arg(long)]
    pub full: bool,
    /// Skip the lexical (search) part; only to measure what it costs. The next normal build
    /// is then a full one.
    #[arg(long, hide = true)]
    pub no_lexical: bool,
    /// Skip the semantic part (code chunks embedded, an HNSW index), which `ken search`
    /// uses for `--semantic` and its default hybrid ranking.
    #[arg(long)]
    pub no_semantic: bool,
    /// The semantic part is built by default; accepted for older scripts.
    #[arg(long, hide = true, conflicts_with = "no_semantic")]
    pub semantic: bool,
    /// Embedding model: `builtin` (potion-base-8M, inside `ken`: no network), `openai` (any
    /// OpenAI-compatible `/v1/embeddings` server), `ollama` (`/api/embed`) or `minilm`
    /// (all-MiniLM-L6-v2 on the CPU; a `--features minilm` build, weights fetched once by
    /// models/all-MiniLM-L6-v2/fetch.sh). Later builds and queries keep the choice; changing
    /// it re-embeds everything.
    #[arg(long, value_enum, value_name = "MODEL")]
    pub embedder: Option<EmbedderKind>,
    /// The provider's base URL (default: https://api.openai.com/v1, http://localhost:11434).
    #[arg(long, value_name = "URL")]
    pub embed_url: Option<String>,
    /// The provider's model name, e.g. text-embedding-3-small, nomic-embed-text.
    #[arg(long, value_name = "NAME")]
    pub embed_model: Option<String>,
    /// Environment variable holding the provider's API key (default for api.openai.com:
    /// OPENAI_API_KEY). The key is never stored.
    #[arg(long, value_name = "VAR")]
    pub embed_key_env: Option<String>,
    /// Texts per embedding request.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub embed_batch: usize,
    /// Skip the code graph part; only to measure what it costs.
    #[arg(long, hide = true)]
    pub no_graph: bool,
    /// Skip the history part (change counts, co-changes and commit words read from git).
    #[arg(long)]
    pub no_history: bool,
    /// First stage only: symbols and lexical search, ready in about the parse time; the
    /// graph, semantic and history parts are left to the next build (a plain `ken index
    /// build`, or the one `ken serve` starts), and answers say they are not built yet.
    #[arg(long)]
    pub quick: bool,
    /// Cap the build's resident memory at this many MiB (at least 64; default: three quarters
    /// of the memory available): buffers are sized to it, and the report names any phase that
    /// went over it anyway.
    #[arg(long, value_name = "MIB", env = "KEN_MAX_MEMORY_MIB",
          value_parser = clap::value_parser!(u64).range(64..=1 << 24))]
    pub max_memory: Option<u64>,
    /// A first build commits checkpoints (an eighth of the tree at a time) when it has at
    /// least this many bytes to read, so a killed build resumes from the last one (default
    /// 32 MiB; 0: always).
    #[arg(long, value_name = "BYTES", hide = true)]
    pub checkpoint_min_bytes: Option<u64>,
    /// Never commit checkpoints during a first build.
    #[arg(long)]
    pub no_checkpoints: bool,
    /// Print the build report as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Repository root (default: found upwards from the current folder).
    pub path: Option<PathBuf>,
    #[command(flatten)]
    pub location: IndexLocation,
    /// List every skipped file and diagnostic, not only counts.
    #[arg(long)]
    pub details: bool,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SymbolArgs {
    /// A name (`register_hook`), a qualified name (`requests.models.Request.register_hook`,
    /// `Request.register_hook`, `grep::Searcher::new`) or a prefix.
    pub name: String,
    /// Repository root (default: found upwards from the current folder).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub location: IndexLocation,
    /// At most this many results.
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The query: free text, "exact phrases", filters lang:, kind:, path: (glob), -path:.
    pub query: Vec<String>,
    /// Read the query from a file (`-` for stdin), e.g. a whole issue text.
    #[arg(long, value_name = "FILE")]
    pub query_file: Option<PathBuf>,
    /// Files only: the ranked files without the spans under each (with --lexical, or without
    /// a semantic part: files ranked by their best lexical hits).
    #[arg(long, conflicts_with_all = ["symbols", "per_file"])]
    pub files: bool,
    /// Spans listed under each ranked file (the best definitions and chunks to read).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=10))]
    pub per_file: u8,
    /// Only definitions.
    #[arg(long)]
    pub symbols: bool,
    /// With --files: the evaluation's reference ranking, plain whole-file BM25 over every
    /// query term, no priors.
    #[arg(long, hide = true, requires = "files")]
    pub plain_bm25: bool,
    /// Leave these signals out of the ranking (the evaluation's ablation).
    #[arg(long, hide = true, value_delimiter = ',')]
    pub without: Vec<crate::api::SearchSignal>,
    /// How hybrid search orders files: `learned` (the default: the shipped model over every
    /// signal, the ranking `ken context` uses) or `fused` (reciprocal rank fusion of the
    /// lexical and semantic lists, the fallback).
    #[arg(long, value_name = "KIND")]
    pub ranker: Option<String>,
    /// Search by meaning: code chunks nearest to the query in the embedding model's space.
    #[arg(long, conflicts_with_all = ["literal", "regex", "hybrid", "lexical"])]
    pub semantic: bool,
    /// Rank files by fusing the lexical and the semantic rankings (reciprocal rank fusion);
    /// the default when the index has a semantic part.
    #[arg(long, conflicts_with_all = ["literal", "regex", "lexical", "symbols"])]
    pub hybrid: bool,
    /// Lexical ranking only (BM25 over symbols and code; the default without a semantic part).
    #[arg(long)]
    pub lexical: bool,
    /// Every line containing the query text exactly (like `rg -F`).
    #[arg(long, conflicts_with = "regex")]
    pub literal: bool,
    /// Every line matching the query as a regular expression (like `rg`).
    #[arg(long)]
    pub regex: bool,
    /// Case-insensitive --literal / --regex.
    #[arg(short = 'i', long)]
    pub ignore_case: bool,
    /// At most this many results (lines with --literal/--regex: default 1000).
    #[arg(long)]
    pub limit: Option<usize>,
    /// Repository root (default: found upwards from the current folder).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub location: IndexLocation,
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ContextFormat {
    Markdown,
    Json,
}

#[derive(Debug, Args)]
pub struct RankFeaturesArgs {
    /// JSONL, one `{"id": ..., "query": ...}` per line.
    #[arg(long, value_name = "FILE")]
    pub queries: PathBuf,
    /// Rank as on a plain tree: the history signals left out (their columns zero).
    #[arg(long)]
    pub without_history: bool,
    /// Repository root (default: found upwards from the current folder).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub location: IndexLocation,
}

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// The task: an issue text, a question, a stack trace.
    pub task: Vec<String>,
    /// Read the task from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub query_file: Option<PathBuf>,
    /// Tokens (cl100k_base) the whole answer may take: the ranked lists first, the packed
    /// code the rest (at least a third).
    #[arg(long, default_value_t = 8000)]
    pub budget: usize,
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: ContextFormat,
    /// The same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Ranked files listed.
    #[arg(long, default_value_t = 20)]
    pub files: usize,
    /// Ranked definitions listed (in the JSON).
    #[arg(long, default_value_t = 20)]
    pub symbols: usize,
    /// Signals to use, comma-separated: lexical, semantic, mentions, definitions, paths,
    /// modules, graph, prior, history (default all).
    #[arg(long, value_name = "LIST")]
    pub signals: Option<String>,
    /// How the head of the fused list is ordered: `learned` (the shipped model) or `fused`.
    #[arg(long, value_name = "KIND")]
    pub ranker: Option<String>,
    /// Give each ranked candidate's feature vector in the JSON (training data).
    #[arg(long, hide = true)]
    pub features: bool,
    /// Repository root (default: found upwards from the current folder).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub location: IndexLocation,
}

#[derive(Debug, Args)]
pub struct AskArgs {
    /// The question.
    pub question: Vec<String>,
    /// Read the question from a file (`-` for stdin).
    #[arg(long, value_name = "FILE")]
    pub query_file: Option<PathBuf>,
    /// Tokens of code given to the model (or shown without one).
    #[arg(long, default_value_t = 6000)]
    pub budget: usize,
    /// Seconds the question may take, the model's answer included (1 to a week; default:
    /// the model call's own limits). Past it the call is cut and `ken ask` exits 124.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub max_time: Option<u64>,
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: ContextFormat,
    /// The same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Repository root (default: found upwards from the current folder).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub location: IndexLocation,
}

#[derive(Debug, Args)]
pub struct OverviewArgs {
    /// Tokens (cl100k_base) the overview may take.
    #[arg(long, default_value_t = 2000)]
    pub budget: usize,
    #[arg(long, value_enum, default_value = "markdown")]
    pub format: ContextFormat,
    /// The same as `--format json`.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
    /// Repository root (default: found upwards from the current folder).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub location: IndexLocation,
}

#[derive(Debug, Args)]
pub struct ImpactArgs {
    /// The staged changes (`git diff --cached`) instead of the working tree against HEAD.
    #[arg(long, conflicts_with_all = ["range", "patch", "symbol"])]
    pub staged: bool,
    /// A revision range read with git, e.g. `main..HEAD` or `HEAD~3..HEAD`.
    #[arg(long, value_name = "A..B", conflicts_with_all = ["patch", "symbol"])]
    pub range: Option<String>,
    /// A unified diff from a file (`-` for stdin), against the indexed tree.
    #[arg(long, value_name = "FILE", conflicts_with = "symbol")]
    pub patch: Option<PathBuf>,
    /// Symbols about to change (qualified name, `path:line` or plain name); repeatable.
    #[arg(long, value_name = "NAME")]
    pub symbol: Vec<String>,
    /// Also say whether this edit would run or need a person under an approval policy (a
    /// large blast radius, a public API or a protected file asks under `on-request`).
    #[arg(long, value_enum, value_name = "POLICY")]
    pub approval: Option<ApprovalArg>,
    /// Affected definitions listed (the JSON has up to 200).
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Run the tests that must run (a path reaches the change) with the project's runner,
    /// each command through `ken exec`'s gate and sandbox, and report which passed and
    /// failed; exits 1 when one failed.
    #[arg(long)]
    pub run: bool,
    /// Seconds each test command may run under `--run`.
    #[arg(long, default_value_t = 600.0, value_parser = positive_f64, requires = "run")]
    pub run_timeout: f64,
    #[arg(long)]
    pub json: bool,
    /// Repository root (default: found upwards from the current folder).
    #[arg(long)]
    pub repo: Option<PathBuf>,
    #[command(flatten)]
    pub location: IndexLocation,
}

/// A finite number above zero (a budget or a limit).
fn positive_f64(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(v) => Err(format!("{v} is not a positive number")),
        Err(e) => Err(e.to_string()),
    }
}
