//! `StuckDetector`: notices a loop that makes no progress — the same call answered the same
//! way again, the same error again, or two actions alternating — before the step limit does.

#[derive(Debug, Default)]
pub struct StuckDetector {
    /// (call key, result key, was an error), newest last.
    seen: Vec<(u64, u64, bool)>,
}

fn key(s: &str) -> u64 {
    let h = blake3::hash(s.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&h.as_bytes()[..8]);
    u64::from_le_bytes(b)
}

impl StuckDetector {
    /// Records a tool call and its result; `Some(why)` when the run is stuck.
    pub fn record(&mut self, name: &str, arguments: &str, result: &str, error: bool) -> Option<String> {
        let entry = (key(&format!("{name}\0{arguments}")), key(result), error);
        self.seen.push(entry);
        let n = self.seen.len();
        let last = |k: usize| self.seen[n - 1 - k];
        // The same call with the same result, three times running.
        if n >= 3 && (0..3).all(|k| last(k).0 == entry.0 && last(k).1 == entry.1) {
            return Some(format!(
                "`{name}` was called three times with the same arguments and the same result"
            ));
        }
        // The same error three times running, whatever the call.
        if n >= 3 && (0..3).all(|k| last(k).2 && last(k).1 == entry.1) {
            return Some("the same error came back three times running".to_string());
        }
        // Two actions alternating: A B A B A B.
        if n >= 6 {
            let (a, b) = ((last(1).0, last(1).1), (last(0).0, last(0).1));
            if a != b && (0..6).all(|k| (last(k).0, last(k).1) == if k % 2 == 0 { b } else { a }) {
                return Some("two actions have alternated three times with the same results".to_string());
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_repeats_errors_and_alternation() {
        let mut d = StuckDetector::default();
        assert!(d.record("read_file", "{a}", "x", false).is_none());
        assert!(d.record("read_file", "{a}", "x", false).is_none());
        assert!(d.record("read_file", "{a}", "x", false).is_some());
        let mut d = StuckDetector::default();
        for (i, _) in (0..2).enumerate() {
            assert!(d.record("run_command", &format!("{i}"), "boom", true).is_none());
        }
        assert!(d.record("apply_patch", "p", "boom", true).is_some());
        let mut d = StuckDetector::default();
        let mut hit = None;
        for i in 0..6 {
            hit = d.record(
                if i % 2 == 0 { "a" } else { "b" },
                "",
                if i % 2 == 0 { "ra" } else { "rb" },
                false,
            );
        }
        assert!(hit.unwrap().contains("alternated"));
        // Progress is not a loop.
        let mut d = StuckDetector::default();
        for i in 0..10 {
            assert!(
                d.record("read_file", &format!("{i}"), &format!("r{i}"), false)
                    .is_none()
            );
        }
    }
}
