//! The `ken` binary: tracing to stderr, then the CLI; errors become exit codes.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::ExitCode;

use clap::Parser;
use kenning::cli::{self, Cli};

/// mimalloc: the index build allocates and frees millions of small strings and vectors from
/// every thread (tokens, skeletons, postings), where glibc's per-thread arenas neither reuse
/// another thread's free memory nor give it back.
/// Built without transparent huge pages on its arenas (the `no_thp` feature): a first touch
/// of a huge page zeroes 2 MiB, and an incremental build or a cold query touching a little of
/// a lot of fresh memory spent most of its time in the kernel zeroing pages.
/// It also serves the C libraries' `malloc` (the `override` feature): tree-sitter's trees and
/// query compilations went to glibc's heap, which kept what they freed, and a first build of
/// the 2.8M-line tree held 30 to 50 MiB more from its first checkpoint to its end.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // The sandbox helper must run before anything starts a thread: entering a user namespace
    // needs a single-threaded process.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == kenning::exec::SandboxSpec::HELPER_ARG)
    {
        std::process::exit(kenning::exec::helper_main().unwrap_or_else(|e| {
            eprintln!("ken: {e}");
            kenning::exec::SETUP_FAILED
        }));
    }
    purge_at_once_under_a_cap();
    // Panics that a boundary contains (a dependency failing on a damaged index file) become
    // errors naming the file; only the others are printed.
    kenning::util::install_quiet_panic_hook();
    let args = Cli::parse_from(cli::normalize_args(std::env::args_os()));
    init_tracing(args.verbosity());
    match cli::run(args) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", message(&e));
            ExitCode::FAILURE
        }
    }
}

/// mimalloc keeps freed memory for a second before it gives it back to the system: a build
/// phase's freed memory was still resident when the next phase's came on top, and a build
/// under `--max-memory 400` peaked 30 to 70 MiB higher, by how the phases fell in time. Under
/// a cap (the flag, or `KEN_MAX_MEMORY_MIB` for `ken serve`'s builds) it gives it back at once
/// (`MIMALLOC_PURGE_DELAY=0`: as fast, measured, on the 2.8M-line tree), and by default where
/// the cap derived from the memory available is tight (below 2 GiB). The allocator reads
/// its options from the environment before `main`, so the process starts itself again with
/// it set; where that fails it goes on as it is. A delay the user set is kept.
fn purge_at_once_under_a_cap() {
    use std::os::unix::process::CommandExt;
    const PURGE_DELAY: &str = "MIMALLOC_PURGE_DELAY";
    if std::env::var_os(PURGE_DELAY).is_some() {
        return;
    }
    let flag = std::env::args_os().any(|a| {
        a.to_str()
            .is_some_and(|a| a == "--max-memory" || a.starts_with("--max-memory="))
    });
    // A cap derived from the memory available is tight on a small machine only.
    let tight_default =
        || kenning::index::default_cap_mib().is_some_and(|m| m < kenning::index::TIGHT_CAP_MIB);
    if !flag && kenning::index::IndexConfig::max_memory_from_env().is_none() && !tight_default() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let mut args = std::env::args_os();
    let Some(arg0) = args.next() else { return };
    let _failed = std::process::Command::new(exe)
        .arg0(arg0)
        .args(args)
        .env(PURGE_DELAY, "0")
        .exec();
}

fn init_tracing(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("KEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .init();
}

/// The error and its causes, each reason said once: a cause whose text its parent already
/// holds (`/x: No such file or directory` above `No such file or directory`) is dropped, and
/// so is a path the message has already named at its start.
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let mut text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if let Some((head, rest)) = text.split_once(": ")
            && !head.is_empty()
            && out.contains(head)
        {
            text = rest.to_string();
            if out.contains(&text) {
                continue;
            }
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// `ken ... | head` closes stdout early; that is not an error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let io = c.downcast_ref::<std::io::Error>().map(std::io::Error::kind);
        let json = c
            .downcast_ref::<serde_json::Error>()
            .and_then(serde_json::Error::io_error_kind);
        io.or(json) == Some(std::io::ErrorKind::BrokenPipe)
    })
}
