//! `EnvironmentDump`: the machine-written listings that issue templates ask for — `pip
//! freeze`, `conda list`, `show_versions()` or `rustc -vV` output, one `name: version` or
//! `name==version` per line — found and cut from a task before it is ranked. They name
//! every dependency and the platform, not what the issue is about, and their words (a
//! package's name, `python`, `commit`) pull unrelated files up.
//!
//! A run of at least [`MIN_RUN`] consecutive listing lines, half of them or more with a
//! version-like value (a digit in it), is cut (blank lines inside a run go with it); shorter
//! runs are kept, so a sentence with one `key: value` survives, and so do exception lines
//! (`ValueError: bad`), which carry no versions.

use std::borrow::Cow;

/// Consecutive listing lines that make a dump.
const MIN_RUN: usize = 4;

pub struct EnvironmentDump;

impl EnvironmentDump {
    /// The task without its environment listings (borrowed when it has none).
    pub fn strip(task: &str) -> Cow<'_, str> {
        let lines: Vec<&str> = task.lines().collect();
        let mut keep = vec![true; lines.len()];
        let mut i = 0;
        let mut cut = false;
        while i < lines.len() {
            if !is_listing(lines[i]) {
                i += 1;
                continue;
            }
            let start = i;
            let mut end = i;
            let (mut count, mut versions) = (0, 0);
            while i < lines.len() && (is_listing(lines[i]) || lines[i].trim().is_empty()) {
                if is_listing(lines[i]) {
                    count += 1;
                    versions += usize::from(lines[i].chars().any(|c| c.is_ascii_digit()));
                    end = i;
                }
                i += 1;
            }
            if count >= MIN_RUN && versions * 2 >= count {
                keep[start..=end].iter_mut().for_each(|k| *k = false);
                cut = true;
            }
            i = end + 1;
        }
        if !cut {
            return Cow::Borrowed(task);
        }
        let kept: Vec<&str> = lines
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(l, _)| *l)
            .collect();
        Cow::Owned(kept.join("\n"))
    }
}

/// `name: value`, `name==1.2`, `name 1.2.3` (a package list), `----` rules: one short key
/// (no spaces, or a `sys.version`-like dotted name) and a value with no sentence in it.
fn is_listing(line: &str) -> bool {
    let l = line.trim();
    if l.len() > 160 || l.is_empty() {
        return false;
    }
    if l.chars().all(|c| c == '-' || c == '=') && l.len() >= 3 {
        return true;
    }
    let key_ok = |k: &str| {
        let k = k.trim();
        !k.is_empty() && k.len() <= 40 && k.chars().all(|c| c.is_alphanumeric() || "_-.[]".contains(c))
    };
    let versionish = |v: &str| {
        let v = v.trim();
        v.is_empty()
            || v.eq_ignore_ascii_case("none")
            || v.split_whitespace().count() <= 6 && v.chars().any(|c| c.is_ascii_digit())
            || v.split_whitespace().count() == 1
    };
    if let Some((k, v)) = l.split_once("==") {
        return key_ok(k) && versionish(v);
    }
    if let Some((k, v)) = l.split_once(':') {
        // Not a URL, not a `path:line` frame, not prose.
        return key_ok(k)
            && !v.starts_with("//")
            && !v
                .trim_start()
                .starts_with(|c: char| c.is_ascii_digit() && k.contains('.'))
            && versionish(v);
    }
    let mut words = l.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (Some(k), Some(v), None) => {
            key_ok(k) && v.chars().next().is_some_and(|c| c.is_ascii_digit()) && v.contains('.')
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_version_listings_and_keeps_the_issue() {
        let task = "to_unstacked_dataset broken for single-dim variables\n\
            ```python\narr.to_unstacked_dataset('y')\n```\n\
            #### Versions\nINSTALLED VERSIONS\n------------------\ncommit: None\n\
            python: 3.7.3 (default, Mar 27 2019, 22:11:17)\nOS: Linux\n\nxarray: 0.15.1\n\
            pandas: 1.0.3\nnumpy: 1.17.3\n\nThanks!";
        let out = EnvironmentDump::strip(task);
        assert!(out.contains("to_unstacked_dataset broken"));
        assert!(out.contains("arr.to_unstacked_dataset('y')"));
        assert!(out.contains("Thanks!"));
        for gone in ["pandas: 1.0.3", "commit: None", "OS: Linux", "------"] {
            assert!(!out.contains(gone), "{gone} left in {out}");
        }
        let freeze = "crash on import\nrequests==2.31.0\nurllib3==2.0.4\nidna==3.4\ncertifi==2023.7.22\n";
        assert_eq!(EnvironmentDump::strip(freeze).trim(), "crash on import");
    }

    #[test]
    fn keeps_prose_frames_and_short_runs() {
        for task in [
            "Error: the value is wrong\nNote: only on Linux\nSee: the docs",
            "Traceback (most recent call last):\n  File \"a.py\", line 3, in f\n    g()\nValueError: bad\nKeyError: x\nTypeError: y\nOSError: z",
            "src/a.rs:12:5\nsrc/b.rs:14:1\nsrc/c.rs:1:1\nsrc/d.rs:2:2",
        ] {
            assert!(matches!(EnvironmentDump::strip(task), Cow::Borrowed(_)), "{task}");
        }
    }
}
