//! `EnvironmentFacts`: what explains a failed command beyond its stderr — a missing program
//! or module named in the output, and the OS and toolchain versions — for the model.

use std::process::Command;
use std::sync::OnceLock;

pub struct EnvironmentFacts;

static TOOLCHAIN: OnceLock<String> = OnceLock::new();

impl EnvironmentFacts {
    /// Facts for a failed command's output; `None` when nothing in it calls for them.
    pub fn for_failure(output: &str) -> Option<String> {
        let mut facts = Vec::new();
        for line in output.lines() {
            let l = line.trim();
            if let Some(cmd) = l
                .strip_suffix(": command not found")
                .or_else(|| l.strip_suffix(": not found"))
            {
                let cmd = cmd.rsplit([':', ' ']).next().unwrap_or(cmd).trim();
                facts.push(format!("`{cmd}` is not installed here (not on PATH)"));
            }
            if let Some(m) = l.split("No module named ").nth(1) {
                facts.push(format!("the Python module {} is not installed", m.trim()));
            }
            if l.contains("Cannot find module")
                || l.contains("can't find crate")
                || l.contains("unresolved import")
            {
                facts.push(format!("a dependency is missing: {l}"));
            }
        }
        if facts.is_empty() {
            return None;
        }
        facts.dedup();
        Some(format!("{}\n{}", facts.join("\n"), Self::toolchain()))
    }

    /// The OS and the versions of the usual toolchains (probed once).
    pub fn toolchain() -> String {
        TOOLCHAIN
            .get_or_init(|| {
                let os = std::fs::read_to_string("/etc/os-release")
                    .ok()
                    .and_then(|t| {
                        t.lines().find_map(|l| {
                            l.strip_prefix("PRETTY_NAME=")
                                .map(|v| v.trim_matches('"').to_string())
                        })
                    })
                    .unwrap_or_else(|| std::env::consts::OS.to_string());
                let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
                let mut out = format!("environment: {os}, Linux {}", kernel.trim());
                for (name, args) in [
                    ("python3", &["--version"][..]),
                    ("cargo", &["--version"]),
                    ("node", &["--version"]),
                    ("go", &["version"]),
                ] {
                    let v = Command::new(name)
                        .args(args)
                        .output()
                        .ok()
                        .filter(|o| o.status.success());
                    let text = v.map(|o| {
                        String::from_utf8_lossy(if o.stdout.is_empty() { &o.stderr } else { &o.stdout })
                            .trim()
                            .to_string()
                    });
                    out.push_str(&format!(
                        "; {name}: {}",
                        text.unwrap_or_else(|| "not installed".to_string())
                    ));
                }
                out
            })
            .clone()
    }
}
