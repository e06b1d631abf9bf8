//! `ResidentMemory`: this process's resident set as the kernel counts it (Linux `/proc`), so a
//! build can say where it peaked and what it held against its cap. Elsewhere, or
//! when `/proc` cannot be read, every reading is `None` and nothing is bounded by it.

/// Readings of the process's own resident memory, in MiB.
pub struct ResidentMemory;

impl ResidentMemory {
    /// The resident set now (`VmRSS`).
    pub fn current_mib() -> Option<u64> {
        status_kib("VmRSS:").map(|k| k / 1024)
    }

    /// The highest resident set since the process started (`VmHWM`).
    pub fn peak_mib() -> Option<u64> {
        status_kib("VmHWM:").map(|k| k / 1024)
    }
}

fn status_kib(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_touched_allocation_raises_the_peak() {
        if ResidentMemory::peak_mib().is_none() {
            return; // not Linux: nothing to read
        }
        let mut big = vec![0u8; 64 << 20];
        for i in (0..big.len()).step_by(4096) {
            big[i] = 1;
        }
        let during = ResidentMemory::peak_mib().unwrap_or(0);
        assert!(during >= 64, "64 MiB touched, peak {during} MiB");
        std::hint::black_box(&big);
        drop(big);
    }
}
