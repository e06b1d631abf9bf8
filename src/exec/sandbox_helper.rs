//! The sandbox helper: `ken __sandbox-init`, started by [`super::Sandbox`] with the spec in
//! its environment and the status pipe on fd 3. Three processes:
//! - the helper enters new user, mount and network namespaces (each optional, each
//!   reported), prepares the mount view, unshares a PID namespace and forks
//! - the reaper, PID 1 of that namespace: it mounts a fresh `/proc`, forks the command and
//!   reaps everything until the command ends, then exits, and the kernel kills whatever the
//!   command left behind (`setsid` grandchildren included);
//! - the command's process, which confines itself ([`super::confinement::Confinement`]) and
//!   calls `execve`.
//!
//! The helper owns the wall clock: at the deadline it kills the reaper, and with it the whole
//! namespace. Without a PID namespace the reaper is a child subreaper that kills every
//! descendant it can find instead.
//!
//! `unsafe` is allowed here, for `fork` (the helper is single-threaded when it forks: `main`
//! dispatches to it before anything starts a thread), for taking fd 3, for resetting signal
//! dispositions, and for the `ioctl` that brings loopback up.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::fcntl::{FcntlArg, FdFlag, fcntl};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sched::{CloneFlags, unshare};
use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::signal::{SigHandler, SigSet, SigmaskHow, Signal, kill, sigprocmask};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid, waitpid};
use nix::unistd::{ForkResult, Pid, execve, fork, getegid, geteuid};

use super::SandboxMode;
use super::confinement::Confinement;
use super::helper_event::{HelperEvent, SETUP_FAILED};
use super::mechanism::{Mechanism, MechanismState};
use super::mount_plan::MountPlan;
use super::sandbox_spec::SandboxSpec;

/// The helper's entry point; returns its exit code, or why it cannot act as the helper at
/// all (started by hand: no status pipe, no spec), for `main` to print.
pub fn helper_main() -> Result<i32, String> {
    let Some(mut status) = take_status_pipe() else {
        return Err("the sandbox helper runs only under `ken exec` (no status pipe on fd 3)".to_string());
    };
    let spec: SandboxSpec = std::env::var(SandboxSpec::ENV)
        .map_err(|e| e.to_string())
        .and_then(|s| serde_json::from_str(&s).map_err(|e| e.to_string()))
        .map_err(|e| format!("the sandbox helper got no valid spec: {e}"))?;
    ignore_interrupts();
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    let mut mechanisms = join_cgroups(&spec);
    let setup = enter_namespaces(&spec, &mut mechanisms);
    // SAFETY: single-threaded (see the module comment); the child only runs Rust code that
    // this process image already holds, then execs or exits.
    Ok(match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            let code = reaper(&spec, &setup, mechanisms, &mut status);
            std::process::exit(code)
        }
        Ok(ForkResult::Parent { child }) => supervise(&spec, &setup, child, &mut status),
        Err(e) => {
            emit(
                &mut status,
                &HelperEvent::Refused {
                    reason: format!("fork failed: {e}"),
                    code: SETUP_FAILED,
                },
            );
            SETUP_FAILED
        }
    })
}

/// What the namespaces gave.
struct Setup {
    pid_namespace: bool,
    network_namespace: bool,
    mounts: Option<MountPlan>,
}

fn take_status_pipe() -> Option<File> {
    // SAFETY: F_GETFD only reads the descriptor table.
    if unsafe { nix::libc::fcntl(3, nix::libc::F_GETFD) } < 0 {
        return None;
    }
    // SAFETY: fd 3 is open (checked above) and nothing else in this process owns it: the
    // parent placed it there for the helper alone.
    let fd = unsafe { OwnedFd::from_raw_fd(3) };
    // The command must not inherit the pipe: it would hold `ken exec` open after the helper.
    fcntl(&fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).ok()?;
    Some(File::from(fd))
}

fn emit(status: &mut File, event: &HelperEvent) {
    if let Ok(mut line) = serde_json::to_vec(event) {
        line.push(b'\n');
        let _ = status.write_all(&line);
    }
}

/// Ctrl-C goes to the command (the terminal signals the whole foreground group); the helper
/// and the reaper outlive it to report.
fn ignore_interrupts() {
    for sig in [Signal::SIGINT, Signal::SIGQUIT] {
        // SAFETY: SIG_IGN installs no handler code.
        let _ = unsafe { nix::sys::signal::signal(sig, SigHandler::SigIgn) };
    }
}

fn join_cgroups(spec: &SandboxSpec) -> Vec<Mechanism> {
    let pid = std::process::id().to_string();
    let failed: Vec<String> = spec
        .cgroup_procs
        .iter()
        .filter_map(|p| {
            std::fs::write(p, &pid)
                .err()
                .map(|e| format!("{}: {e}", p.display()))
        })
        .collect();
    if failed.is_empty() {
        Vec::new()
    } else {
        vec![Mechanism::new(
            "cgroup",
            MechanismState::Unavailable,
            format!("joining failed: {}", failed.join("; ")),
        )]
    }
}

fn enter_namespaces(spec: &SandboxSpec, out: &mut Vec<Mechanism>) -> Setup {
    let mut setup = Setup {
        pid_namespace: false,
        network_namespace: false,
        mounts: None,
    };
    if spec.mode == SandboxMode::FullAccess {
        for name in [
            "user-namespace",
            "mount-namespace",
            "network-namespace",
            "pid-namespace",
        ] {
            out.push(Mechanism::new(name, MechanismState::Off, "full-access"));
        }
        return setup;
    }
    out.push(enter_user_namespace(spec));
    let (mount, mounts) = enter_mount_namespace(spec);
    out.push(mount);
    setup.mounts = mounts;
    let (network, network_namespace) = enter_network_namespace(spec);
    out.push(network);
    setup.network_namespace = network_namespace;
    let (pid, pid_namespace) = enter_pid_namespace(spec);
    out.push(pid);
    setup.pid_namespace = pid_namespace;
    setup
}

/// `unshare(flag)` unless the spec disables the mechanism `name` (then `ENOSYS`, unused).
fn try_unshare(spec: &SandboxSpec, name: &str, flag: CloneFlags) -> nix::Result<()> {
    match spec.disabled(name) {
        Some(_) => Err(nix::errno::Errno::ENOSYS),
        None => unshare(flag),
    }
}

/// The mechanism `name` as the spec disabled it, else unavailable because `call` failed.
fn disabled_or(spec: &SandboxSpec, name: &str, e: nix::errno::Errno, call: &str) -> Mechanism {
    spec.disabled(name)
        .unwrap_or_else(|| Mechanism::new(name, MechanismState::Unavailable, format!("{call}: {e}")))
}

/// A user namespace with the caller's ids mapped to themselves.
fn enter_user_namespace(spec: &SandboxSpec) -> Mechanism {
    let (uid, gid) = (geteuid(), getegid());
    let user = try_unshare(spec, "user-namespace", CloneFlags::CLONE_NEWUSER)
        .and_then(|()| map_ids(uid.as_raw(), gid.as_raw()));
    match (&user, spec.disabled("user-namespace")) {
        (_, Some(m)) => m,
        (Ok(()), _) => Mechanism::new(
            "user-namespace",
            MechanismState::Enforced,
            format!("uid {uid} mapped to itself"),
        ),
        (Err(e), _) => Mechanism::new(
            "user-namespace",
            MechanismState::Unavailable,
            format!("unshare(CLONE_NEWUSER): {e}"),
        ),
    }
}

/// A mount namespace with the spec's mount view applied, and that view.
fn enter_mount_namespace(spec: &SandboxSpec) -> (Mechanism, Option<MountPlan>) {
    match try_unshare(spec, "mount-namespace", CloneFlags::CLONE_NEWNS) {
        Ok(()) => {
            let plan = MountPlan::apply(spec);
            let state = if plan.failures.is_empty() {
                MechanismState::Enforced
            } else {
                MechanismState::Partial
            };
            let m = Mechanism::new("mount-namespace", state, mount_detail(&plan));
            (m, Some(plan))
        }
        Err(e) => (
            disabled_or(spec, "mount-namespace", e, "unshare(CLONE_NEWNS)"),
            None,
        ),
    }
}

/// What the mount view protects, and what failed.
fn mount_detail(plan: &MountPlan) -> String {
    let mut detail = format!(
        "{} mounts read-only; private /tmp: {}; read-only: {}",
        plan.read_only_mounts,
        if plan.private_tmp { "yes" } else { "no" },
        if plan.protected.is_empty() {
            "nothing protected".to_string()
        } else {
            plan.protected
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        }
    );
    if !plan.failures.is_empty() {
        detail.push_str(&format!("; failed: {}", plan.failures.join("; ")));
    }
    detail
}

/// An empty network namespace with its loopback up (none with `--network`), and whether
/// one was entered.
fn enter_network_namespace(spec: &SandboxSpec) -> (Mechanism, bool) {
    if spec.network {
        let m = Mechanism::new(
            "network-namespace",
            MechanismState::Off,
            "--network: the host's network",
        );
        return (m, false);
    }
    match try_unshare(spec, "network-namespace", CloneFlags::CLONE_NEWNET) {
        Ok(()) => {
            let lo = match loopback_up() {
                Ok(()) => "its own loopback only",
                Err(_) => "no interface up",
            };
            let m = Mechanism::new(
                "network-namespace",
                MechanismState::Enforced,
                format!("empty: {lo}"),
            );
            (m, true)
        }
        Err(e) => (
            disabled_or(spec, "network-namespace", e, "unshare(CLONE_NEWNET)"),
            false,
        ),
    }
}

/// A PID namespace for the reaper to come (entered by the next fork), and whether one was.
fn enter_pid_namespace(spec: &SandboxSpec) -> (Mechanism, bool) {
    match try_unshare(spec, "pid-namespace", CloneFlags::CLONE_NEWPID) {
        Ok(()) => {
            let m = Mechanism::new(
                "pid-namespace",
                MechanismState::Enforced,
                "the command's tree dies with it",
            );
            (m, true)
        }
        Err(e) => {
            let mut m = disabled_or(spec, "pid-namespace", e, "unshare(CLONE_NEWPID)");
            m.detail.push_str("; descendants are killed by walking /proc");
            (m, false)
        }
    }
}

fn map_ids(uid: u32, gid: u32) -> nix::Result<()> {
    let io = |_| nix::errno::Errno::EPERM;
    std::fs::write("/proc/self/setgroups", "deny").map_err(io)?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1")).map_err(io)?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1")).map_err(io)
}

fn loopback_up() -> nix::Result<()> {
    use nix::sys::socket::{AddressFamily, SockFlag, SockType, socket};
    use std::os::fd::AsRawFd;
    let sock = socket(
        AddressFamily::Inet,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    // SAFETY: ifreq is plain data; the name is NUL-terminated within its array.
    let mut req: nix::libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as nix::libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS/SIOCSIFFLAGS read and write `req`, which outlives both calls.
    unsafe {
        if nix::libc::ioctl(sock.as_raw_fd(), nix::libc::SIOCGIFFLAGS, &mut req) < 0 {
            return Err(nix::errno::Errno::last());
        }
        req.ifr_ifru.ifru_flags |= nix::libc::IFF_UP as nix::libc::c_short;
        if nix::libc::ioctl(sock.as_raw_fd(), nix::libc::SIOCSIFFLAGS, &req) < 0 {
            return Err(nix::errno::Errno::last());
        }
    }
    Ok(())
}

/// The helper after the fork: the wall clock, and the report of what the tree used. (No
/// thread here: after `unshare(CLONE_NEWPID)` the kernel refuses `CLONE_THREAD`.)
fn supervise(spec: &SandboxSpec, setup: &Setup, reaper: Pid, status: &mut File) -> i32 {
    let timed_out = match spec.limits.timeout_ms {
        Some(ms) => !wait_until_exit(reaper, Instant::now() + Duration::from_millis(ms)),
        None => false,
    };
    if timed_out {
        if !setup.pid_namespace {
            kill_descendants(reaper);
        }
        let _ = kill(reaper, Signal::SIGKILL);
    }
    let code = loop {
        match waitpid(reaper, None) {
            Ok(WaitStatus::Exited(_, code)) => break code,
            Ok(WaitStatus::Signaled(_, sig, _)) => break 128 + sig as i32,
            Ok(_) => continue,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break SETUP_FAILED,
        }
    };
    let usage = getrusage(UsageWho::RUSAGE_CHILDREN).ok();
    let ms = |t: nix::sys::time::TimeVal| (t.tv_sec() as u64) * 1000 + (t.tv_usec() as u64) / 1000;
    emit(
        status,
        &HelperEvent::Done {
            timed_out,
            max_rss_kib: usage.map_or(0, |u| u.max_rss().max(0) as u64),
            user_ms: usage.map_or(0, |u| ms(u.user_time())),
            system_ms: usage.map_or(0, |u| ms(u.system_time())),
        },
    );
    code
}

/// Waits for `pid` to end (without reaping it) until `deadline`; false when the deadline
/// came first. A pidfd where the kernel has them (5.3+), else a short poll.
fn wait_until_exit(pid: Pid, deadline: Instant) -> bool {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let raw = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid.as_raw(), 0) };
    if raw >= 0 {
        // SAFETY: the descriptor was just returned to this process and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(raw as i32) };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            let ms = u16::try_from(left.as_millis().min(60_000)).unwrap_or(60_000);
            let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
            match poll(&mut fds, PollTimeout::from(ms)) {
                Ok(n) if n > 0 => return true,
                Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
                Err(_) => break,
            }
        }
    }
    while Instant::now() < deadline {
        match waitid(
            Id::Pid(pid),
            WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT | WaitPidFlag::WEXITED,
        ) {
            Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(5)),
            _ => return true,
        }
    }
    false
}

/// PID 1 of the command's namespace (or a subreaper without one): starts the command, reaps
/// every process, and reports how the command ended.
fn reaper(spec: &SandboxSpec, setup: &Setup, mechanisms: Vec<Mechanism>, status: &mut File) -> i32 {
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let mut mechanisms = mechanisms;
    if setup.pid_namespace && setup.mounts.is_some() {
        let flags =
            nix::mount::MsFlags::MS_NOSUID | nix::mount::MsFlags::MS_NODEV | nix::mount::MsFlags::MS_NOEXEC;
        if let Err(e) = nix::mount::mount(Some("proc"), "/proc", Some("proc"), flags, None::<&str>) {
            mechanisms.push(Mechanism::new(
                "proc",
                MechanismState::Partial,
                format!("the host's /proc stays visible: {e}"),
            ));
        }
    }
    // SAFETY: this process is single-threaded (a fork of the single-threaded helper).
    let command = match unsafe { fork() } {
        Ok(ForkResult::Child) => std::process::exit(command(spec, setup, mechanisms, status)),
        Ok(ForkResult::Parent { child }) => child,
        Err(e) => {
            emit(
                status,
                &HelperEvent::Refused {
                    reason: format!("fork failed: {e}"),
                    code: SETUP_FAILED,
                },
            );
            return SETUP_FAILED;
        }
    };
    let ended = loop {
        match waitpid(None::<Pid>, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == command => break (Some(code), None),
            Ok(WaitStatus::Signaled(pid, sig, _)) if pid == command => break (None, Some(sig as i32)),
            Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break (None, None),
        }
    };
    emit(
        status,
        &HelperEvent::Child {
            code: ended.0,
            signal: ended.1,
        },
    );
    if !setup.pid_namespace {
        kill_descendants(Pid::this());
        while waitpid(None::<Pid>, None).is_ok() {}
    }
    match ended {
        (Some(code), _) => code,
        (None, Some(sig)) => 128 + sig,
        (None, None) => SETUP_FAILED,
    }
}

/// The command's own process: confine, report, exec.
fn command(spec: &SandboxSpec, setup: &Setup, mut mechanisms: Vec<Mechanism>, status: &mut File) -> i32 {
    reset_signals();
    let private_tmp = setup.mounts.as_ref().is_some_and(|m| m.private_tmp);
    let tmp = if private_tmp {
        PathBuf::from("/tmp")
    } else {
        spec.private_tmp.clone()
    };
    if let Err(e) = std::env::set_current_dir(&spec.cwd) {
        emit(
            status,
            &HelperEvent::Refused {
                reason: format!("cannot enter {}: {e}", spec.cwd.display()),
                code: SETUP_FAILED,
            },
        );
        return SETUP_FAILED;
    }
    let confinement = Confinement {
        spec,
        tmp: tmp.clone(),
        network_namespace: setup.network_namespace,
        protected_by_mounts: setup.mounts.as_ref().is_some_and(|m| m.failures.is_empty()),
        cgroup_processes: spec.cgroup_processes,
        cgroup_memory: spec.cgroup_memory,
    };
    mechanisms.extend(confinement.apply());
    let degraded: Vec<String> = mechanisms
        .iter()
        .filter(|m| m.degraded())
        .map(|m| format!("{}: {}", m.name, m.detail))
        .collect();
    emit(status, &HelperEvent::Mechanisms { mechanisms });
    if spec.strict && !degraded.is_empty() {
        emit(
            status,
            &HelperEvent::Refused {
                code: SETUP_FAILED,
                reason: format!(
                    "--sandbox-strict: not every mechanism is in force ({})",
                    degraded.join("; ")
                ),
            },
        );
        return SETUP_FAILED;
    }
    let mut env: Vec<(String, String)> = spec
        .env
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "TMPDIR" | "TMP" | "TEMP"))
        .cloned()
        .collect();
    if spec.mode != SandboxMode::FullAccess {
        for k in ["TMPDIR", "TMP", "TEMP"] {
            env.push((k.to_string(), tmp.display().to_string()));
        }
    }
    exec(spec, &env, status)
}

fn reset_signals() {
    for sig in [
        Signal::SIGINT,
        Signal::SIGQUIT,
        Signal::SIGPIPE,
        Signal::SIGTERM,
        Signal::SIGHUP,
    ] {
        // SAFETY: SIG_DFL installs no handler code.
        let _ = unsafe { nix::sys::signal::signal(sig, SigHandler::SigDfl) };
    }
    let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None);
}

/// Execs the command; on failure says why through the status pipe (as a shell would on
/// stderr) and returns the shell's code for it.
fn exec(spec: &SandboxSpec, env: &[(String, String)], status: &mut File) -> i32 {
    let mut refuse = |reason: String, code: i32| {
        emit(status, &HelperEvent::Refused { reason, code });
        code
    };
    let Some(program) = spec.argv.first() else {
        return refuse("no command".to_string(), SETUP_FAILED);
    };
    let path_var = env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str())
        .unwrap_or("/usr/bin:/bin");
    let Some(path) = resolve(program, path_var) else {
        return refuse(format!("`{program}`: command not found (PATH={path_var})"), 127);
    };
    let cstr = |s: &str| CString::new(s.as_bytes()).ok();
    let args: Option<Vec<CString>> = spec.argv.iter().map(|a| cstr(a)).collect();
    let vars: Option<Vec<CString>> = env.iter().map(|(k, v)| cstr(&format!("{k}={v}"))).collect();
    let (Some(args), Some(vars), Some(file)) = (args, vars, cstr(&path.to_string_lossy())) else {
        return refuse(
            "an argument or variable holds a NUL byte".to_string(),
            SETUP_FAILED,
        );
    };
    let err = execve(&file, &args, &vars).err();
    let code = if err == Some(nix::errno::Errno::ENOENT) {
        127
    } else {
        126
    };
    let why = err.map(|e| e.desc()).unwrap_or("unknown");
    refuse(format!("cannot run `{}`: {why}", path.display()), code)
}

fn resolve(program: &str, path_var: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    path_var
        .split(':')
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(d).join(program))
        .find(|p| nix::unistd::access(p, nix::unistd::AccessFlags::X_OK).is_ok() && p.is_file())
}

/// Every process below `root`, found through `/proc/<pid>/task/*/children`, killed until
/// none is left (a fork bomb keeps forking while it is walked).
fn kill_descendants(root: Pid) {
    for _ in 0..200 {
        let found = descendants(root);
        if found.is_empty() {
            return;
        }
        for pid in found {
            let _ = kill(pid, Signal::SIGKILL);
        }
    }
}

fn descendants(root: Pid) -> Vec<Pid> {
    let mut out = Vec::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten();
        for task in tasks {
            let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace().filter_map(|c| c.parse::<i32>().ok()) {
                let child = Pid::from_raw(child);
                out.push(child);
                queue.push(child);
            }
        }
    }
    out
}
