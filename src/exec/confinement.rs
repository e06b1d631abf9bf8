//! `Confinement`: what the confined command's own process applies to itself just before
//! `execve`, in this order: resource limits, `no_new_privs`, Landlock, seccomp. Each step
//! reports a [`Mechanism`]; none is skipped silently.
//!
//! Invariants:
//! - Landlock grants reading everywhere and writing only beneath the writable roots (the
//!   workspace under `workspace-write`, the private temp dir, a few devices); where no mount
//!   namespace could protect `.git`, the workspace's other entries are granted one by one so
//!   `.git` is not among them.
//! - seccomp answers `EPERM` (never a kill) to ptrace, mount, bpf, kexec, keyctl, module
//!   loading, namespace creation and the like; `clone3` answers `ENOSYS` so libc falls back
//!   to `clone`, whose flags the filter can read. Sockets other than Unix are refused when
//!   the command may not reach the network and no network namespace holds it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
};
use nix::sys::resource::{Resource, setrlimit};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::SandboxMode;
use super::mechanism::{Mechanism, MechanismState};
use super::sandbox_spec::SandboxSpec;

/// What the helper learnt before the command's process applies its own restrictions.
pub struct Confinement<'a> {
    pub spec: &'a SandboxSpec,
    /// The private temp dir as the command sees it (`/tmp` when mounted there).
    pub tmp: PathBuf,
    /// A network namespace holds the command.
    pub network_namespace: bool,
    /// `.git` and the other protected paths are already read-only mounts.
    pub protected_by_mounts: bool,
    /// A cgroup limits processes (so the missing `RLIMIT_NPROC` for root is covered).
    pub cgroup_processes: bool,
    /// A cgroup limits memory (so `RLIMIT_AS` is not needed).
    pub cgroup_memory: bool,
}

const LANDLOCK_ABI: ABI = ABI::V6;

impl Confinement<'_> {
    pub fn apply(&self) -> Vec<Mechanism> {
        let confined = self.spec.mode != SandboxMode::FullAccess;
        let mut out = vec![self.rlimits()];
        out.push(if !confined {
            Mechanism::new("no-new-privs", MechanismState::Off, "full-access")
        } else if let Some(m) = self.spec.disabled("no-new-privs") {
            m
        } else {
            match nix::sys::prctl::set_no_new_privs() {
                Ok(()) => Mechanism::new("no-new-privs", MechanismState::Enforced, "set"),
                Err(e) => Mechanism::new("no-new-privs", MechanismState::Unavailable, e.to_string()),
            }
        });
        if confined {
            out.push(self.spec.disabled("landlock").unwrap_or_else(|| self.landlock()));
            out.push(self.spec.disabled("seccomp").unwrap_or_else(|| self.seccomp()));
        } else {
            out.push(Mechanism::new("landlock", MechanismState::Off, "full-access"));
            out.push(Mechanism::new("seccomp", MechanismState::Off, "full-access"));
        }
        out
    }

    fn rlimits(&self) -> Mechanism {
        let l = &self.spec.limits;
        let root = nix::unistd::getuid().is_root();
        let memory = l.memory_bytes.filter(|_| !self.cgroup_memory);
        let mut set = Vec::new();
        let mut failed = Vec::new();
        for (name, resource, value) in [
            ("cpu", Resource::RLIMIT_CPU, l.cpu_seconds),
            ("address-space", Resource::RLIMIT_AS, memory),
            ("file-size", Resource::RLIMIT_FSIZE, l.file_size_bytes),
            ("open-files", Resource::RLIMIT_NOFILE, l.open_files),
            ("processes", Resource::RLIMIT_NPROC, l.processes),
        ] {
            let Some(v) = value else { continue };
            // CPU: SIGXCPU at the soft limit, SIGKILL a second later if it is caught.
            let hard = if resource == Resource::RLIMIT_CPU {
                v + 1
            } else {
                v
            };
            match setrlimit(resource, v, hard) {
                Ok(()) => set.push(format!("{name}={v}")),
                Err(e) => failed.push(format!("{name}: {e}")),
            }
        }
        let mut detail = set.join(", ");
        // The kernel never applies RLIMIT_NPROC to uid 0: only a cgroup bounds a fork bomb.
        let unbounded_processes = root && l.processes.is_some() && !self.cgroup_processes;
        if unbounded_processes {
            detail.push_str("; processes not bounded: RLIMIT_NPROC does not apply to root and no pids cgroup could be made");
        }
        if !failed.is_empty() {
            detail.push_str(&format!("; failed: {}", failed.join(", ")));
        }
        let state = if failed.is_empty() && !unbounded_processes {
            MechanismState::Enforced
        } else {
            MechanismState::Partial
        };
        Mechanism::new("rlimits", state, detail)
    }

    fn landlock(&self) -> Mechanism {
        match self.landlock_ruleset() {
            Ok(status) => {
                let abi = match status.landlock {
                    LandlockStatus::Available {
                        effective_abi,
                        kernel_abi,
                    } => {
                        format!("ABI {}", kernel_abi.unwrap_or(effective_abi as i32))
                    }
                    LandlockStatus::NotEnabled => "not enabled at boot".to_string(),
                    LandlockStatus::NotImplemented => "not built into this kernel".to_string(),
                };
                let state = match status.ruleset {
                    RulesetStatus::FullyEnforced => MechanismState::Enforced,
                    RulesetStatus::PartiallyEnforced => MechanismState::Partial,
                    RulesetStatus::NotEnforced => MechanismState::Unavailable,
                };
                let scope = if self.spec.mode == SandboxMode::WorkspaceWrite {
                    "writes beneath the workspace and the private temp dir"
                } else {
                    "writes only to the private temp dir"
                };
                Mechanism::new("landlock", state, format!("{abi}; {scope}"))
            }
            Err(e) => Mechanism::new("landlock", MechanismState::Unavailable, e),
        }
    }

    fn landlock_ruleset(&self) -> Result<landlock::RestrictionStatus, String> {
        let abi = LANDLOCK_ABI;
        let err = |e: landlock::RulesetError| e.to_string();
        let mut ruleset = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(abi))
            .map_err(err)?
            .scope(Scope::Signal)
            .map_err(err)?;
        if !self.network_namespace {
            // No namespace keeps abstract Unix sockets (X11, D-Bus) or TCP apart from the host.
            ruleset = ruleset.scope(Scope::AbstractUnixSocket).map_err(err)?;
            if !self.spec.network {
                ruleset = ruleset.handle_access(AccessNet::from_all(abi)).map_err(err)?;
            }
        }
        let mut created = ruleset.create().map_err(err)?;
        let read = AccessFs::from_read(abi) | AccessFs::IoctlDev;
        created = created
            .add_rule(PathBeneath::new(
                PathFd::new("/").map_err(|e| e.to_string())?,
                read,
            ))
            .map_err(err)?;
        for (path, access) in self.writable(abi) {
            let Ok(fd) = PathFd::new(&path) else { continue };
            created = created.add_rule(PathBeneath::new(fd, access)).map_err(err)?;
        }
        created.restrict_self().map_err(err)
    }

    /// The writable roots with their rights.
    fn writable(&self, abi: ABI) -> Vec<(PathBuf, landlock::BitFlags<AccessFs>)> {
        let all = AccessFs::from_all(abi);
        let file = AccessFs::from_file(abi);
        let mut out: Vec<(PathBuf, landlock::BitFlags<AccessFs>)> = vec![(self.tmp.clone(), all)];
        for dev in ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx"] {
            out.push((PathBuf::from(dev), file));
        }
        out.push((PathBuf::from("/dev/pts"), file));
        if Path::new("/dev/shm").is_dir() && self.protected_by_mounts {
            out.push((PathBuf::from("/dev/shm"), all));
        }
        if self.spec.mode == SandboxMode::WorkspaceWrite {
            let ws = &self.spec.workspace;
            let has_protected = ws.join(".git").symlink_metadata().is_ok() || !self.spec.read_only.is_empty();
            if self.protected_by_mounts || !has_protected {
                out.push((ws.clone(), all));
            } else {
                // Landlock rules only add rights, so `.git` stays read-only by granting every
                // other entry of the workspace instead of the workspace itself.
                let protected: Vec<PathBuf> = std::iter::once(ws.join(".git"))
                    .chain(self.spec.read_only.iter().map(|p| ws.join(p)))
                    .collect();
                for entry in std::fs::read_dir(ws).into_iter().flatten().flatten() {
                    let path = entry.path();
                    // A symlink is granted as its target, which may be `.git` itself.
                    let Ok(kind) = entry.file_type() else { continue };
                    if protected.contains(&path) || kind.is_symlink() {
                        continue;
                    }
                    out.push((path, if kind.is_dir() { all } else { file }));
                }
            }
        }
        out
    }

    fn seccomp(&self) -> Mechanism {
        let filter_sockets = !self.spec.network && !self.network_namespace;
        let applied = seccomp_programs(filter_sockets).and_then(|programs| {
            programs
                .iter()
                .try_for_each(|p| seccompiler::apply_filter(p).map_err(|e| e.to_string()))
        });
        match applied {
            Ok(()) => {
                let mut detail =
                    "EPERM for ptrace, mount, bpf, kexec, keyctl, modules, namespaces, perf, io_uring"
                        .to_string();
                if filter_sockets {
                    detail.push_str("; sockets other than Unix refused");
                }
                Mechanism::new("seccomp", MechanismState::Enforced, detail)
            }
            Err(e) => Mechanism::new("seccomp", MechanismState::Unavailable, e),
        }
    }
}

/// System calls a confined command never needs, answered with `EPERM`.
const DENIED: &[i64] = &[
    nix::libc::SYS_ptrace,
    nix::libc::SYS_process_vm_readv,
    nix::libc::SYS_process_vm_writev,
    nix::libc::SYS_mount,
    nix::libc::SYS_umount2,
    nix::libc::SYS_pivot_root,
    nix::libc::SYS_chroot,
    nix::libc::SYS_bpf,
    nix::libc::SYS_kexec_load,
    nix::libc::SYS_kexec_file_load,
    nix::libc::SYS_keyctl,
    nix::libc::SYS_add_key,
    nix::libc::SYS_request_key,
    nix::libc::SYS_init_module,
    nix::libc::SYS_finit_module,
    nix::libc::SYS_delete_module,
    nix::libc::SYS_reboot,
    nix::libc::SYS_swapon,
    nix::libc::SYS_swapoff,
    nix::libc::SYS_setns,
    nix::libc::SYS_unshare,
    nix::libc::SYS_perf_event_open,
    nix::libc::SYS_userfaultfd,
    nix::libc::SYS_io_uring_setup,
    nix::libc::SYS_io_uring_enter,
    nix::libc::SYS_io_uring_register,
    nix::libc::SYS_open_by_handle_at,
    nix::libc::SYS_name_to_handle_at,
    nix::libc::SYS_acct,
    nix::libc::SYS_quotactl,
    nix::libc::SYS_settimeofday,
    nix::libc::SYS_clock_settime,
    nix::libc::SYS_adjtimex,
    nix::libc::SYS_syslog,
    nix::libc::SYS_fsopen,
    nix::libc::SYS_fsmount,
    nix::libc::SYS_move_mount,
    nix::libc::SYS_open_tree,
];

const NAMESPACE_FLAGS: &[nix::libc::c_int] = &[
    nix::libc::CLONE_NEWUSER,
    nix::libc::CLONE_NEWNS,
    nix::libc::CLONE_NEWNET,
    nix::libc::CLONE_NEWPID,
    nix::libc::CLONE_NEWIPC,
    nix::libc::CLONE_NEWUTS,
    nix::libc::CLONE_NEWCGROUP,
];

fn seccomp_programs(filter_sockets: bool) -> Result<Vec<BpfProgram>, String> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|e| e.to_string())?;
    let err = |e: seccompiler::BackendError| e.to_string();
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED.iter().map(|&nr| (nr, Vec::new())).collect();
    let mut clone_rules = Vec::new();
    for &flag in NAMESPACE_FLAGS {
        let flag = flag as u64;
        let cond = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(flag), flag)
            .map_err(err)?;
        clone_rules.push(SeccompRule::new(vec![cond]).map_err(err)?);
    }
    rules.insert(nix::libc::SYS_clone, clone_rules);
    if filter_sockets {
        let unix = nix::libc::AF_UNIX as u64;
        let cond = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, unix).map_err(err)?;
        rules.insert(
            nix::libc::SYS_socket,
            vec![SeccompRule::new(vec![cond.clone()]).map_err(err)?],
        );
        rules.insert(
            nix::libc::SYS_socketpair,
            vec![SeccompRule::new(vec![cond]).map_err(err)?],
        );
    }
    let eperm = SeccompAction::Errno(nix::libc::EPERM as u32);
    let main: BpfProgram = SeccompFilter::new(rules, SeccompAction::Allow, eperm, arch)
        .map_err(err)?
        .try_into()
        .map_err(err)?;
    // clone3 passes its flags in memory the filter cannot read: ENOSYS makes libc use clone.
    let clone3: BTreeMap<i64, Vec<SeccompRule>> = [(nix::libc::SYS_clone3, Vec::new())].into();
    let enosys = SeccompAction::Errno(nix::libc::ENOSYS as u32);
    let second: BpfProgram = SeccompFilter::new(clone3, SeccompAction::Allow, enosys, arch)
        .map_err(err)?
        .try_into()
        .map_err(err)?;
    Ok(vec![main, second])
}
