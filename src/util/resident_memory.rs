//! `ResidentMemory`: this process's resident set as the kernel counts it (Linux `/proc`), so a
//! build can say what each of its phases peaked at and hold itself under a cap. Elsewhere, or
//! when `/proc` cannot be read, every reading is `None` and nothing is bounded by it.

/// Readings of the process's own resident memory, in MiB.
pub struct ResidentMemory;

impl ResidentMemory {
    /// The resident set now (`VmRSS`).
    pub fn current_mib() -> Option<u64> {
        status_kib("VmRSS:").map(|k| k / 1024)
    }

    /// The highest resident set since the start or the last `reset_peak` (`VmHWM`).
    pub fn peak_mib() -> Option<u64> {
        status_kib("VmHWM:").map(|k| k / 1024)
    }

    /// Starts a new peak from the current resident set (`5` to `/proc/self/clear_refs`), so
    /// that the next `peak_mib` is this phase's own; false where the kernel refuses it.
    pub fn reset_peak() -> bool {
        std::fs::write("/proc/self/clear_refs", b"5").is_ok()
    }
}

fn status_kib(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].trim().trim_end_matches("kB").trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_touched_allocation_raises_the_peak_and_a_reset_lowers_it() {
        let Some(before) = ResidentMemory::peak_mib() else {
            return; // not Linux: nothing to read
        };
        let mut big = vec![0u8; 64 << 20];
        for i in (0..big.len()).step_by(4096) {
            big[i] = 1;
        }
        let during = ResidentMemory::peak_mib().unwrap_or(0);
        assert!(during >= before.max(ResidentMemory::current_mib().unwrap_or(0)));
        assert!(during >= 64, "64 MiB touched, peak {during} MiB");
        drop(big);
        if ResidentMemory::reset_peak() {
            // The new peak starts from the resident set now, not from the 64 MiB freed (the
            // slack is for other tests of this process allocating meanwhile).
            let after = ResidentMemory::peak_mib().unwrap_or(u64::MAX);
            let now = ResidentMemory::current_mib().unwrap_or(0);
            assert!(after <= now + 32, "peak {after} MiB after a reset, resident {now} MiB");
        }
    }
}
