//! What every command shares: opening the workspace, errors named by their flags, the JSON
//! form of a response, the task text from words or a file, and exit codes.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::api::{ApiError, Workspace};

/// Prints a response as the JSON a server returns for the same request.
pub(super) fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, v)?;
    writeln!(out)?;
    Ok(())
}

/// The workspace of a one-shot command. It lives until the process exits, and the OS
/// reclaims its index structures at once: freeing them one allocation at a time took 8% of
/// a cold `ken search`. (Nothing in it needs a destructor: no buffered writes, and locks end
/// with the process.)
pub(super) fn open(
    repo: Option<&Path>,
    index_dir: Option<std::path::PathBuf>,
) -> Result<std::mem::ManuallyDrop<Workspace>> {
    Workspace::open(repo, index_dir)
        .map(std::mem::ManuallyDrop::new)
        .map_err(cli_error)
}

/// An error of the query layer as the command line says it: arguments by their flag names.
pub(super) fn cli_error(e: ApiError) -> anyhow::Error {
    match e {
        ApiError::InvalidArgument { argument, message } => {
            let flag = match argument.as_str() {
                "max_tokens" => "--budget".to_string(),
                "query" | "task" | "question" => "the query".to_string(),
                "name" | "symbol" | "file" | "span" => format!("the {argument}"),
                "repo" => "--repo".to_string(),
                other => format!("--{}", other.replace('_', "-")),
            };
            anyhow::anyhow!("{flag}: {message}")
        }
        e => e.into(),
    }
}

/// Words from the command line, then a file's text (`-`: stdin). Only the first
/// [`crate::api::MAX_QUERY_BYTES`] are used (and one byte more is read, so the query layer can
/// say the rest was cut): `/dev/zero` or an endless pipe cannot grow the process.
pub(super) fn read_task(words: &[String], file: Option<&Path>) -> Result<String> {
    let mut q = words.join(" ");
    if let Some(f) = file {
        let limit = crate::api::MAX_QUERY_BYTES as u64 + 1;
        let (bytes, _) = read_input(f, limit, "the query", "query file")?;
        if !q.is_empty() {
            q.push(' ');
        }
        q.push_str(&String::from_utf8_lossy(&bytes));
    }
    if q.trim().is_empty() {
        anyhow::bail!("empty query: give QUERY words or --query-file FILE");
    }
    Ok(q)
}

/// At most `limit` bytes of the file `path` (`-`: stdin), and whether there was more; errors
/// say "reading WHAT from stdin" or "cannot read LABEL PATH".
pub(super) fn read_input(path: &Path, limit: u64, what: &str, label: &str) -> Result<(Vec<u8>, bool)> {
    if path.as_os_str() == "-" {
        return read_bounded(std::io::stdin().lock(), limit)
            .with_context(|| format!("reading {what} from stdin"));
    }
    let cannot = || format!("cannot read {label} {}", path.display());
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let kind = std::fs::metadata(path).with_context(cannot)?.file_type();
    if kind.is_socket() || kind.is_dir() || kind.is_block_device() {
        anyhow::bail!(
            "{label} {}: {}, not a file",
            path.display(),
            crate::util::special_kind(&kind)
        );
    }
    // A named pipe opens without waiting for a writer (it would wait forever when there is
    // none); reading it then waits for what a writer sends, and ends at once when no program
    // has it open for writing.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)
        .with_context(cannot)?;
    nix::fcntl::fcntl(&file, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()))
        .map_err(std::io::Error::from)
        .with_context(cannot)?;
    let read = read_bounded(file, limit).with_context(cannot)?;
    if kind.is_fifo() && read.0.is_empty() {
        anyhow::bail!("{label} {}: a named pipe no program writes to", path.display());
    }
    Ok(read)
}

/// At most `limit` bytes of `reader`, and whether there was more.
fn read_bounded(reader: impl std::io::Read, limit: u64) -> std::io::Result<(Vec<u8>, bool)> {
    use std::io::Read;
    let mut bytes = Vec::new();
    reader.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    let more = bytes.len() as u64 > limit;
    bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    Ok((bytes, more))
}

pub(super) fn exit_found(found: bool) -> ExitCode {
    match found {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    }
}

/// An incremental build of `root` with the default settings (returned with the root as
/// found), embedding with the model the index was built with (the built-in one when there is
/// no index yet).
pub(super) fn build_default(
    root: &Path,
    index_dir: Option<std::path::PathBuf>,
    quiet: bool,
) -> Result<(std::path::PathBuf, crate::index::BuildReport)> {
    use std::io::IsTerminal;
    let progress = super::progress::ProgressBars::new(quiet || !std::io::stderr().is_terminal());
    let root = root
        .canonicalize()
        .with_context(|| format!("cannot index {}", root.display()))?;
    let report = crate::api::BuildPlan::default_for(&root, index_dir)
        .run(&progress)
        .with_context(|| format!("indexing {} failed", root.display()))?;
    Ok((root, report))
}

/// Tells a person what opening an audit log had to set aside (it goes on, with the evidence
/// kept under the name shown).
pub fn warn_audit_recovery(log: &crate::exec::AuditLog) {
    if let Some(r) = log.recovered() {
        match r.damaged {
            true => eprintln!(
                "warning: the audit log {} was damaged at line {} ({}); it is kept unchanged as {} and a new log starts here, naming it (`ken audit verify {}` shows both)",
                log.path().display(),
                r.line,
                r.reason,
                r.kept.display(),
                log.path().display()
            ),
            false => eprintln!(
                "note: the audit log {} ended in a torn line {} (a crash while writing); the whole file was copied to {} before the torn line was cut",
                log.path().display(),
                r.line,
                r.kept.display()
            ),
        }
    }
}
