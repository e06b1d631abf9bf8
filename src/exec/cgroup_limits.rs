//! `CgroupLimits`: a cgroup of its own for one confined run, where this process may make one
//! (cgroup v2 with the `pids`/`memory` controllers delegated, or the v1 `pids` and `memory`
//! hierarchies, as root has them). It bounds what rlimits cannot: the number of processes
//! for root (the kernel never applies `RLIMIT_NPROC` to uid 0) and the memory of the whole
//! tree, and it tells afterwards whether a limit was hit (`pids.events`, the OOM killer) and
//! the tree's peak memory.
//!
//! Invariants: the cgroups live under this process's own cgroup, are made before the helper
//! starts and removed after the run (whatever is left in them is killed first).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::mechanism::{Mechanism, MechanismState};

/// One controller's cgroup directory.
#[derive(Debug)]
struct Group {
    dir: PathBuf,
    v2: bool,
}

#[derive(Debug, Default)]
pub struct CgroupLimits {
    pids: Option<Group>,
    memory: Option<Group>,
}

/// What the cgroup saw of a run.
#[derive(Debug, Default, Clone, Copy)]
pub struct CgroupUsage {
    pub processes_limited: bool,
    pub oom_killed: bool,
    pub peak_memory_bytes: Option<u64>,
}

static SEQ: AtomicU64 = AtomicU64::new(0);

impl CgroupLimits {
    /// Makes the cgroups for `processes` and `memory` (either may be `None`: not wanted).
    pub fn create(processes: Option<u64>, memory: Option<u64>) -> (CgroupLimits, Mechanism) {
        let name = format!(
            "kenning-exec-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let mut out = CgroupLimits::default();
        let mut notes = Vec::new();
        if let Some(max) = processes {
            match make_group("pids", &name, &[("pids.max", max.to_string())]) {
                Ok(g) => out.pids = Some(g),
                Err(e) => notes.push(format!("pids: {e}")),
            }
        }
        if let Some(max) = memory {
            let limit = |v2: bool| if v2 { "memory.max" } else { "memory.limit_in_bytes" };
            match make_group(
                "memory",
                &name,
                &[(limit(true), max.to_string()), (limit(false), max.to_string())],
            ) {
                Ok(g) => out.memory = Some(g),
                Err(e) => notes.push(format!("memory: {e}")),
            }
        }
        let version = |g: &Group| if g.v2 { "v2" } else { "v1" };
        let mut made = Vec::new();
        if let (Some(g), Some(n)) = (&out.pids, processes) {
            made.push(format!("{n} processes ({})", version(g)));
        }
        if let (Some(g), Some(m)) = (&out.memory, memory) {
            made.push(format!("{} MiB of memory ({})", m >> 20, version(g)));
        }
        // For a user other than root, rlimits bound the processes (per user namespace) and the
        // address space, so a missing cgroup is a weaker limit, not a missing one.
        let rlimits_cover = !nix::unistd::getuid().is_root();
        let state = match (made.is_empty(), notes.is_empty()) {
            (_, true) if processes.is_none() && memory.is_none() => MechanismState::Off,
            (false, true) => MechanismState::Enforced,
            (false, false) => MechanismState::Partial,
            (true, _) if rlimits_cover => {
                notes.push("rlimits bound processes and address space instead".to_string());
                MechanismState::Off
            }
            (true, _) => MechanismState::Unavailable,
        };
        let mut detail = made.join(", ");
        if !notes.is_empty() {
            if !detail.is_empty() {
                detail.push_str("; ");
            }
            detail.push_str(&notes.join("; "));
        }
        (out, Mechanism::new("cgroup", state, detail))
    }

    pub fn bounds_processes(&self) -> bool {
        self.pids.is_some()
    }

    pub fn bounds_memory(&self) -> bool {
        self.memory.is_some()
    }

    /// The `cgroup.procs` files the helper joins.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        [&self.pids, &self.memory]
            .into_iter()
            .flatten()
            .map(|g| g.dir.join("cgroup.procs"))
            .collect()
    }

    /// Reads what the run hit, kills what is left, removes the cgroups.
    pub fn finish(self) -> CgroupUsage {
        let mut usage = CgroupUsage::default();
        if let Some(g) = &self.pids {
            usage.processes_limited = counter(&g.dir.join("pids.events"), "max") > 0;
        }
        if let Some(g) = &self.memory {
            let (events, peak) = if g.v2 {
                ("memory.events", "memory.peak")
            } else {
                ("memory.oom_control", "memory.max_usage_in_bytes")
            };
            usage.oom_killed = counter(&g.dir.join(events), "oom_kill") > 0;
            usage.peak_memory_bytes = std::fs::read_to_string(g.dir.join(peak))
                .ok()
                .and_then(|s| s.trim().parse().ok());
        }
        for g in [self.pids, self.memory].into_iter().flatten() {
            remove(&g);
        }
        usage
    }
}

fn counter(file: &Path, key: &str) -> u64 {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0)
}

/// A child cgroup of this process's own in the hierarchy that has `controller`, with `files`
/// written (those that do not exist in this cgroup version are skipped).
fn make_group(controller: &str, name: &str, files: &[(&str, String)]) -> Result<Group, String> {
    let (base, v2) = own_cgroup(controller)
        .ok_or_else(|| format!("no cgroup hierarchy with `{controller}` is mounted"))?;
    let dir = base.join(name);
    std::fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
    if v2 && !dir.join(format!("{controller}.max")).exists() {
        // Delegate the controller to children; refused when this cgroup holds processes.
        let _ = std::fs::write(base.join("cgroup.subtree_control"), format!("+{controller}"));
        if !dir.join(format!("{controller}.max")).exists() {
            let _ = std::fs::remove_dir(&dir);
            return Err(format!(
                "the `{controller}` controller is not delegated to {}",
                base.display()
            ));
        }
    }
    let g = Group { dir, v2 };
    let mut wrote = false;
    for (file, value) in files {
        let path = g.dir.join(file);
        if path.exists() {
            std::fs::write(&path, value).map_err(|e| {
                remove(&g);
                format!("cannot write {}: {e}", path.display())
            })?;
            wrote = true;
        }
    }
    if !wrote {
        remove(&g);
        return Err(format!("{} has no limit file", g.dir.display()));
    }
    Ok(g)
}

/// This process's cgroup directory in the hierarchy holding `controller`: a v1 hierarchy of
/// its own first, else the unified (v2) one if it offers the controller.
fn own_cgroup(controller: &str) -> Option<(PathBuf, bool)> {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut v2_mount = None;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(sep) = fields.iter().position(|f| *f == "-") else {
            continue;
        };
        let (Some(point), Some(fstype), Some(opts)) =
            (fields.get(4), fields.get(sep + 1), fields.get(sep + 3))
        else {
            continue;
        };
        if *fstype == "cgroup" && opts.split(',').any(|o| o == controller) {
            let path = own.lines().find_map(|l| {
                let mut parts = l.splitn(3, ':');
                let (_, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
                ctrls
                    .split(',')
                    .any(|c| c == controller)
                    .then(|| path.to_string())
            })?;
            return Some((Path::new(point).join(path.trim_start_matches('/')), false));
        }
        if *fstype == "cgroup2" && v2_mount.is_none() {
            v2_mount = Some(PathBuf::from(point));
        }
    }
    let mount = v2_mount?;
    let path = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = mount.join(path.trim_start_matches('/'));
    let controllers = std::fs::read_to_string(dir.join("cgroup.controllers")).ok()?;
    controllers
        .split_whitespace()
        .any(|c| c == controller)
        .then_some((dir, true))
}

fn remove(g: &Group) {
    for _ in 0..100 {
        let procs = std::fs::read_to_string(g.dir.join("cgroup.procs")).unwrap_or_default();
        let pids: Vec<i32> = procs.split_whitespace().filter_map(|p| p.parse().ok()).collect();
        if pids.is_empty() && std::fs::remove_dir(&g.dir).is_ok() {
            return;
        }
        for pid in pids {
            let _ =
                nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
