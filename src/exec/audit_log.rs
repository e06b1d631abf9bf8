//! `AuditLog`: an append-only, hash-chained JSONL record of what a session did (commands,
//! edits, decisions, model calls), written one flushed line per event, secrets redacted.
//!
//! Line format (one JSON object per line):
//! `{"seq":N,"ts_ms":T,"prev":"<blake3 of line N-1>","event":{..},"hash":"<blake3>"}`, where
//! `hash` is the blake3 of the line's own bytes up to (not including) `,"hash"` plus the closing
//! `}`, and `prev` of line 0 is the blake3 of [`GENESIS`]. A changed byte breaks the line's own
//! hash (or, for a recomputed one, the next line's `prev`); a dropped or moved line breaks
//! `seq` and `prev`. A final line without its newline that does not parse is *torn* (a crash
//! mid-write), reported as such and not as tampering. Tamper evidence is against edits that
//! do not rewrite every later line: keep [`AuditReport::head`] elsewhere to anchor the whole log.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::SecretRedactor;

/// What the first line's `prev` hashes.
pub const GENESIS: &str = "kenning-audit 1";

#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {detail}")]
    Invalid { path: PathBuf, detail: String },
}

impl AuditError {
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> AuditError + '_ {
        move |source| AuditError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// An open log, appending after its last intact line.
pub struct AuditLog {
    path: PathBuf,
    /// Held locked (flock, exclusive) while open: two writers never chain onto the same line.
    file: nix::fcntl::Flock<File>,
    seq: u64,
    prev: String,
}

impl AuditLog {
    /// Opens `path` for appending, creating it; an existing log must verify intact (a torn
    /// final line is cut off first), so a new line never chains onto damage.
    pub fn open(path: &Path) -> Result<AuditLog, AuditError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(AuditError::io(path))?;
        let mut file = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| AuditError::io(path)(std::io::Error::from(e)))?;
        let report = match path.metadata().map(|m| m.len() > 0).unwrap_or(false) {
            true => verify(path)?,
            false => AuditReport::empty(path),
        };
        if let Some(bad) = &report.first_bad {
            return Err(AuditError::Invalid {
                path: path.to_path_buf(),
                detail: format!(
                    "line {}: {}; not appending to a damaged log",
                    bad.line, bad.reason
                ),
            });
        }
        if report.torn {
            // Drop the torn tail: the intact prefix ends at the last newline.
            file.set_len(report.intact_bytes).map_err(AuditError::io(path))?;
        } else if report.lines > 0 && !report.ends_with_newline {
            // A whole last line whose newline was lost: end it before the next one.
            file.write_all(b"\n").map_err(AuditError::io(path))?;
        }
        Ok(AuditLog {
            path: path.to_path_buf(),
            file,
            seq: report.lines,
            prev: report.head,
        })
    }

    /// Appends one event (redacted), flushed before returning; returns its line number.
    pub fn append(&mut self, event: &impl Serialize) -> Result<u64, AuditError> {
        let event = serde_json::to_value(event).map_err(|e| AuditError::Invalid {
            path: self.path.clone(),
            detail: e.to_string(),
        })?;
        let body = serde_json::json!({
            "seq": self.seq,
            "ts_ms": now_ms(),
            "prev": self.prev,
            "event": SecretRedactor::redact_json(&event),
        });
        let text = body.to_string();
        let hash = line_hash(&text);
        let open = text.strip_suffix('}').unwrap_or(&text);
        let line = format!("{open},\"hash\":\"{hash}\"}}\n");
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.flush())
            .map_err(AuditError::io(&self.path))?;
        self.prev = blake3::hash(line.trim_end().as_bytes()).to_hex().to_string();
        self.seq += 1;
        Ok(self.seq - 1)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The blake3 of a line's body (everything but its `hash` field).
fn line_hash(body: &str) -> String {
    blake3::hash(body.as_bytes()).to_hex().to_string()
}

/// The first line that does not check, and why.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based, as editors count.
    pub line: u64,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct AuditReport {
    pub path: String,
    /// Intact lines.
    pub lines: u64,
    /// The blake3 of the last intact line (of [`GENESIS`] for an empty log): anchor it
    /// elsewhere to make the whole log tamper-evident.
    pub head: String,
    /// The final line was cut short (a crash while writing), which is not tampering.
    pub torn: bool,
    pub first_bad: Option<BadLine>,
    #[serde(skip)]
    intact_bytes: u64,
    #[serde(skip)]
    ends_with_newline: bool,
}

impl AuditReport {
    fn empty(path: &Path) -> AuditReport {
        AuditReport {
            path: path.display().to_string(),
            lines: 0,
            head: blake3::hash(GENESIS.as_bytes()).to_hex().to_string(),
            torn: false,
            first_bad: None,
            intact_bytes: 0,
            ends_with_newline: true,
        }
    }

    pub fn intact(&self) -> bool {
        self.first_bad.is_none()
    }
}

/// Checks every line of a log: its own hash, its place in the sequence and its link to the
/// line before.
pub fn verify(path: &Path) -> Result<AuditReport, AuditError> {
    let bytes = std::fs::read(path).map_err(AuditError::io(path))?;
    let mut report = AuditReport::empty(path);
    let mut offset = 0usize;
    let mut rest = bytes.as_slice();
    let mut n = 0u64;
    while !rest.is_empty() {
        n += 1;
        let (line, complete) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], true),
            None => (rest, false),
        };
        let consumed = line.len() + usize::from(complete);
        match check_line(line, report.lines, &report.head) {
            Ok(()) => {
                report.head = blake3::hash(line).to_hex().to_string();
                report.lines += 1;
                offset += consumed;
                report.intact_bytes = offset as u64;
                report.ends_with_newline = complete;
            }
            // Cut short while being written: only ever the last line, without its newline.
            Err(_) if !complete && serde_json::from_slice::<serde_json::Value>(line).is_err() => {
                report.torn = true;
                break;
            }
            Err(reason) => {
                report.first_bad = Some(BadLine { line: n, reason });
                break;
            }
        }
        rest = &rest[consumed..];
    }
    Ok(report)
}

fn check_line(line: &[u8], seq: u64, prev: &str) -> Result<(), String> {
    let text = std::str::from_utf8(line).map_err(|_| "not UTF-8".to_string())?;
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not a JSON line ({e})"))?;
    let hash = v.get("hash").and_then(|h| h.as_str()).ok_or("no hash field")?;
    let suffix = format!(",\"hash\":\"{hash}\"}}");
    let body = text
        .strip_suffix(&suffix)
        .map(|b| format!("{b}}}"))
        .ok_or("the hash is not the line's last field")?;
    if line_hash(&body) != hash {
        return Err("its content does not match its hash (changed after it was written)".into());
    }
    let got = v.get("seq").and_then(|s| s.as_u64());
    if got != Some(seq) {
        return Err(format!(
            "sequence number {}, expected {seq} (a line was removed, added or moved)",
            got.map_or("missing".to_string(), |g| g.to_string())
        ));
    }
    if v.get("prev").and_then(|p| p.as_str()) != Some(prev) {
        return Err("it does not chain to the line before (that line was changed or replaced)".into());
    }
    Ok(())
}
