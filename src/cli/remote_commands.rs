//! `ken index push` and `ken index pull`: index snapshots shared through object storage.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use serde::Serialize;

use super::args::{IndexLocation, PullArgs, PushArgs, RemoteArgs};
use super::render;
use super::shared::{build_default, print_json};
use crate::index::BuildReport;
use crate::remote::{PullReport, RepoIdentity, SnapshotRemote};

/// The checkout, its index folder, its identity and the remote a command names.
fn target(
    path: &std::path::Path,
    location: &IndexLocation,
    remote: &RemoteArgs,
) -> Result<(PathBuf, PathBuf, RepoIdentity, SnapshotRemote)> {
    let root = std::fs::canonicalize(path).with_context(|| format!("no repository at {}", path.display()))?;
    let index_dir = location
        .index_dir
        .clone()
        .unwrap_or_else(|| root.join(".kenning"));
    let id = RepoIdentity::of(&root, remote.name.as_deref())?;
    let remote = SnapshotRemote::open(&remote.remote)?;
    Ok((root, index_dir, id, remote))
}

pub fn push(a: PushArgs) -> Result<ExitCode> {
    let (root, index_dir, id, remote) = target(&a.path, &a.location, &a.remote)?;
    let report = remote
        .push(
            &index_dir,
            &id.repo,
            &id.commit,
            id.dirty,
            a.with_source.then_some(root.as_path()),
        )
        .with_context(|| format!("cannot publish {} to {}", index_dir.display(), remote.url()))?;
    if a.json {
        print_json(&report)?;
    } else {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "published generation {} of {} at {}{} as {}",
            report.generation,
            report.repo,
            report.commit,
            match &report.tree {
                Some(t) => format!(" with uncommitted changes (tree {})", &t[..12.min(t.len())]),
                None => String::new(),
            },
            report.key
        )?;
        writeln!(
            out,
            "{} files ({:.1} MiB){} as {} objects: {} sent ({:.1} MiB), {} already there, in {:.2}s",
            report.objects,
            mib(report.bytes),
            match report.sources {
                0 => String::new(),
                n => format!(" and {n} source files ({:.1} MiB)", mib(report.source_bytes)),
            },
            report.distinct,
            report.uploaded,
            mib(report.uploaded_bytes),
            report.distinct - report.uploaded,
            report.ms as f64 / 1000.0
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct PullOutput {
    pull: PullReport,
    /// The incremental build that brought the snapshot up to date (absent with --no-update).
    update: Option<BuildReport>,
}

pub fn pull(a: PullArgs, quiet: bool) -> Result<ExitCode> {
    let (root, index_dir, id, remote) = target(&a.path, &a.location, &a.remote)?;
    let commits = RepoIdentity::ancestors(&root, a.depth.max(1))?;
    let (snapshot, key, behind) = remote.find(&id.repo, &commits)?;
    let report = remote
        .install(&index_dir, &snapshot, &key, behind)
        .with_context(|| format!("cannot install {key} into {}", index_dir.display()))?;
    let update = match a.no_update {
        true => None,
        false => Some(build_default(&root, a.location.index_dir.clone(), quiet)?.1),
    };
    if a.json {
        print_json(&PullOutput { pull: report, update })?;
    } else {
        let mut out = std::io::stdout().lock();
        writeln!(
            out,
            "installed {} at {}{} as generation {}: {} objects ({:.1} MiB) verified in {:.2}s",
            report.repo,
            report.commit,
            match report.behind {
                0 => String::new(),
                n => format!(" ({n} commit(s) behind HEAD)"),
            },
            report.generation,
            report.objects,
            mib(report.bytes),
            report.ms as f64 / 1000.0
        )?;
        if let Some(u) = &update {
            render::build_report(&mut out, u)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
