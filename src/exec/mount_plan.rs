//! `MountPlan`: the filesystem view of a confined command, made in its own mount namespace.
//! Every mount is remounted read-only except the writable set (the workspace under
//! `workspace-write`, a private `/tmp`, `/dev` and a private `/dev/shm`), then `.git` and the
//! other protected paths under the workspace are bound read-only over themselves. This is the
//! first of two independent layers over the filesystem; Landlock is the second.
//!
//! Invariants:
//! - Runs in the helper after `unshare(CLONE_NEWNS)`, before any process of the command
//!   exists; a step that fails is reported, never skipped silently.
//! - `/tmp` is the private directory unless the workspace or the starting folder lives under
//!   `/tmp`; then the host's `/tmp` is read-only and `TMPDIR` points at the private directory.

use std::path::{Path, PathBuf};

use nix::mount::{MsFlags, mount};
use nix::sys::statvfs::{FsFlags, statvfs};

use super::SandboxMode;
use super::sandbox_spec::SandboxSpec;

/// What the mount namespace achieved.
#[derive(Debug, Default)]
pub struct MountPlan {
    /// `/tmp` is the private directory.
    pub private_tmp: bool,
    /// Mounts made read-only, and those that refused (with why).
    pub read_only_mounts: usize,
    pub failures: Vec<String>,
    /// Protected paths bound read-only (`.git` among them).
    pub protected: Vec<PathBuf>,
}

const DEVICES: &str = "/dev";

impl MountPlan {
    pub fn apply(spec: &SandboxSpec) -> MountPlan {
        let mut plan = MountPlan::default();
        let none: Option<&str> = None;
        if let Err(e) = mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none) {
            plan.failures.push(format!("making / private: {e}"));
            return plan;
        }
        let mut writable: Vec<PathBuf> = vec![PathBuf::from(DEVICES)];
        writable.extend(plan.mount_private_tmp(spec));
        if Path::new("/dev/shm").is_dir() {
            let data = Some("size=268435456,mode=1777");
            let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
            if let Err(e) = mount(Some("tmpfs"), "/dev/shm", Some("tmpfs"), flags, data) {
                plan.failures.push(format!("private /dev/shm: {e}"));
            }
        }
        if spec.mode == SandboxMode::WorkspaceWrite {
            match bind(&spec.workspace, &spec.workspace) {
                Ok(()) => writable.push(spec.workspace.clone()),
                Err(e) => plan
                    .failures
                    .push(format!("binding the workspace {}: {e}", spec.workspace.display())),
            }
        }
        plan.remount_read_only(&writable);
        if spec.mode == SandboxMode::WorkspaceWrite {
            for path in protected_paths(spec) {
                match bind(&path, &path).and_then(|()| remount_read_only(&path)) {
                    Ok(()) => plan.protected.push(path),
                    Err(e) => plan.failures.push(format!("{} read-only: {e}", path.display())),
                }
            }
        }
        plan
    }

    /// Mounts the private directory on `/tmp` and returns the writable temp root. When the
    /// workspace or the starting folder lives under `/tmp`, the host's `/tmp` stays (read-only)
    /// and only the private directory is writable: binding the workspace back beneath a
    /// writable `/tmp` would make it writable to Landlock's path walk in read-only mode.
    fn mount_private_tmp(&mut self, spec: &SandboxSpec) -> Option<PathBuf> {
        let under_tmp = [&spec.workspace, &spec.cwd].iter().any(|p| p.starts_with("/tmp"));
        let target = if under_tmp {
            spec.private_tmp.clone()
        } else {
            PathBuf::from("/tmp")
        };
        match bind(&spec.private_tmp, &target) {
            Ok(()) => {
                self.private_tmp = !under_tmp;
                Some(target)
            }
            Err(e) => {
                self.failures
                    .push(format!("private temp dir on {}: {e}", target.display()));
                None
            }
        }
    }

    /// Every mount point outside the writable set becomes read-only (its other flags kept:
    /// the kernel refuses to drop `nosuid` or `nodev` that a parent namespace locked).
    fn remount_read_only(&mut self, writable: &[PathBuf]) {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for line in mounts.lines() {
            let Some(point) = line.split(' ').nth(4).map(unescape) else {
                continue;
            };
            let point = PathBuf::from(point);
            if writable.iter().any(|w| point.starts_with(w)) {
                continue;
            }
            match remount_read_only(&point) {
                Ok(()) => self.read_only_mounts += 1,
                // Mounts hidden under a later one cannot be reached by path: nothing to do.
                Err(nix::errno::Errno::ENOENT) => {}
                Err(e) => self.failures.push(format!("{} read-only: {e}", point.display())),
            }
        }
    }
}

fn protected_paths(spec: &SandboxSpec) -> Vec<PathBuf> {
    std::iter::once(PathBuf::from(".git"))
        .chain(spec.read_only.iter().cloned())
        .map(|p| {
            if p.is_absolute() {
                p
            } else {
                spec.workspace.join(p)
            }
        })
        .filter(|p| p.symlink_metadata().is_ok())
        .collect()
}

fn bind(source: &Path, target: &Path) -> nix::Result<()> {
    let none: Option<&str> = None;
    mount(
        Some(source),
        target,
        none,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        none,
    )
}

fn remount_read_only(path: &Path) -> nix::Result<()> {
    let kept = statvfs(path)?.flags();
    let mut flags = MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY;
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if kept.contains(fs) {
            flags |= ms;
        }
    }
    let none: Option<&str> = None;
    mount(none, path, none, flags, none)
}

/// `/proc/self/mountinfo` escapes space, tab, newline and backslash as octal.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut chars = field.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let code: String = chars.by_ref().take(3).collect();
            match u8::from_str_radix(&code, 8) {
                Ok(b) => out.push(char::from(b)),
                Err(_) => {
                    out.push('\\');
                    out.push_str(&code);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
