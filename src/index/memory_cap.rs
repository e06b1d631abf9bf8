//! The memory cap a build runs under when none is given: a share of the memory this process
//! can still take, read from the kernel (`MemAvailable` in `/proc/meminfo`, and the headroom
//! left under the cgroup's limit, v2 or v1, where one is set). A container with a 2 GiB limit
//! on a 64 GiB host gets a cap from its 2 GiB, not from the host.

use std::path::{Path, PathBuf};

/// The share of the available memory a build takes by default, in quarters.
const DEFAULT_QUARTERS: u64 = 3;

/// The smallest cap a build is given: below it the build still runs, as slowly as it must.
pub const MIN_CAP_MIB: u64 = 128;

/// What a build's process holds before its work does: the binary's own pages once a parse
/// has run them (code and the grammars' tables, 27 MiB resident on x86-64) and the
/// allocator's first pages. Buffers sized to a cap are sized to what this leaves of it.
pub const PROCESS_FLOOR_MIB: u64 = 32;

/// Below this derived cap, freed memory is given back at once (`main.rs`): on a machine with
/// room to spare the allocator's one-second delay costs nothing worth a second exec.
pub const TIGHT_CAP_MIB: u64 = 2048;

/// Where a build's memory cap came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CapSource {
    /// `--max-memory` or `KEN_MAX_MEMORY_MIB`.
    Given,
    /// Three quarters of the memory available when the build started.
    Available,
}

/// The cap a build gets when none is given: three quarters of the memory available to this
/// process, at least [`MIN_CAP_MIB`]; `None` where the kernel does not say (outside Linux).
pub fn default_cap_mib() -> Option<u64> {
    available_mib().map(|a| (a * DEFAULT_QUARTERS / 4).max(MIN_CAP_MIB))
}

/// Memory this process can still take, in MiB: the system's available memory, less where
/// its cgroup's limit leaves less.
pub fn available_mib() -> Option<u64> {
    let system = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| meminfo_available_kib(&m))
        .map(|kib| kib >> 10)?;
    Some(match cgroup_headroom_bytes() {
        Some(h) => system.min(h >> 20),
        None => system,
    })
}

/// `MemAvailable` of a `/proc/meminfo` text, in KiB.
fn meminfo_available_kib(meminfo: &str) -> Option<u64> {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The bytes left under this process's cgroup memory limit (v2 `memory.max`, else v1
/// `memory.limit_in_bytes`), where one is set.
fn cgroup_headroom_bytes() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let root = Path::new("/sys/fs/cgroup");
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        let (dir, limit, usage) = match controllers {
            "" => (root.join(rel), "memory.max", "memory.current"),
            c if c.split(',').any(|c| c == "memory") => (
                root.join("memory").join(rel),
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            ),
            _ => continue,
        };
        if let Some(h) = headroom(&dir, limit, usage) {
            return Some(h);
        }
    }
    None
}

/// `limit - usage` in `dir`, where the limit is a number (not `max`, nor v1's "unlimited"
/// near `i64::MAX`).
fn headroom(dir: &Path, limit: &str, usage: &str) -> Option<u64> {
    let read = |name: &str| -> Option<u64> {
        let p: PathBuf = dir.join(name);
        std::fs::read_to_string(p).ok()?.trim().parse().ok()
    };
    let limit = read(limit).filter(|&l| l < 1 << 60)?;
    Some(limit.saturating_sub(read(usage).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_memory_is_read_from_meminfo() {
        let text = "MemTotal:       24000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20480000 kB\n";
        assert_eq!(meminfo_available_kib(text), Some(20_480_000));
        assert_eq!(meminfo_available_kib("MemTotal: 5 kB\n"), None);
    }

    #[test]
    fn headroom_is_the_limit_less_the_usage_and_no_limit_is_none() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("memory.max"), "1073741824\n").unwrap();
        std::fs::write(dir.path().join("memory.current"), "268435456\n").unwrap();
        assert_eq!(
            headroom(dir.path(), "memory.max", "memory.current"),
            Some(805_306_368)
        );
        std::fs::write(dir.path().join("memory.max"), "max\n").unwrap();
        assert_eq!(headroom(dir.path(), "memory.max", "memory.current"), None);
        // cgroup v1 says "no limit" with a number near i64::MAX.
        std::fs::write(dir.path().join("memory.max"), "9223372036854771712\n").unwrap();
        assert_eq!(headroom(dir.path(), "memory.max", "memory.current"), None);
    }

    #[test]
    fn the_default_cap_is_three_quarters_of_what_is_available_on_linux() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let available = available_mib().expect("Linux has /proc/meminfo");
        let cap = default_cap_mib().unwrap();
        assert!(cap >= MIN_CAP_MIB);
        assert!(cap <= available.max(MIN_CAP_MIB), "{cap} of {available}");
    }
}
