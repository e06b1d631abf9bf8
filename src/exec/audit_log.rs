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
//!
//! Damage is kept as evidence and never blocks the next run: [`AuditLog::open`] renames a
//! damaged log aside (`NAME.damaged-TS.jsonl`, its bytes untouched) and starts a new log at
//! the same path whose first event, `audit-log-damaged`, names the kept file, its first bad
//! line and why; [`verify`] reports that predecessor so `ken audit verify` shows both. A torn
//! tail is cut from the live log only after the whole file was copied aside
//! (`NAME.torn-TS.jsonl`), and the cut is recorded as the next event (`audit-log-torn`).
//! Nothing is truncated or rewritten without a byte-for-byte copy and an event naming it.

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
    recovered: Option<Recovery>,
}

/// What opening a log had to set aside: a damaged log renamed, or a torn tail copied and cut.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Recovery {
    /// The file kept as evidence, next to the log.
    pub kept: PathBuf,
    /// The first line that did not check (for a torn tail: the torn line).
    pub line: u64,
    pub reason: String,
    /// Whether the log was damaged (a new log started) rather than torn (the chain goes on).
    pub damaged: bool,
}

/// The event that starts a log after its predecessor at the same path was found damaged.
pub const DAMAGED_EVENT: &str = "audit-log-damaged";
/// The event recorded after a torn tail was copied aside and cut.
pub const TORN_EVENT: &str = "audit-log-torn";

impl AuditLog {
    /// Opens `path` for appending, creating it. A new line never chains onto damage: a
    /// damaged log is renamed aside and a new one started whose first event names it; a
    /// torn final line is copied aside with the whole file, then cut, and the cut recorded.
    /// [`AuditLog::recovered`] says which happened, for the caller to tell a person.
    pub fn open(path: &Path) -> Result<AuditLog, AuditError> {
        let (file, report) = Self::lock_current(path)?;
        let mut log = AuditLog {
            path: path.to_path_buf(),
            file,
            seq: report.lines,
            prev: report.head.clone(),
            recovered: None,
        };
        if let Some(bad) = &report.first_bad {
            let kept = keep_aside(path, "damaged", true)?;
            // Renamed: the locked file is the evidence now; start the new log at `path`.
            let (file, fresh) = Self::lock_current(path)?;
            log.file = file;
            log.seq = fresh.lines;
            log.prev = fresh.head;
            if fresh.first_bad.is_some() {
                return Err(AuditError::Invalid {
                    path: path.to_path_buf(),
                    detail: "another writer started a damaged log here while the last one was set aside"
                        .into(),
                });
            }
            log.append(&serde_json::json!({
                "kind": DAMAGED_EVENT,
                "damaged_log": file_name(&kept),
                "line": bad.line,
                "reason": bad.reason,
                "intact_lines": report.lines,
                "intact_head": report.head,
            }))?;
            log.recovered = Some(Recovery {
                kept,
                line: bad.line,
                reason: bad.reason.clone(),
                damaged: true,
            });
        } else if report.torn {
            let kept = keep_aside(path, "torn", false)?;
            log.file
                .set_len(report.intact_bytes)
                .map_err(AuditError::io(path))?;
            let line = report.lines + 1;
            log.append(&serde_json::json!({
                "kind": TORN_EVENT,
                "copy": file_name(&kept),
                "line": line,
                "reason": "the final line was cut short while being written (as by a crash)",
            }))?;
            log.recovered = Some(Recovery {
                kept,
                line,
                reason: "torn final line".into(),
                damaged: false,
            });
        } else if report.lines > 0 && !report.ends_with_newline {
            // A whole last line whose newline was lost: end it before the next one.
            log.file.write_all(b"\n").map_err(AuditError::io(path))?;
        }
        Ok(log)
    }

    /// Opens and locks the file now at `path`, then verifies it. Another writer may have
    /// renamed the file aside while this one waited for the lock; then the locked file is
    /// no longer the one at `path`, and the new one is opened instead.
    fn lock_current(path: &Path) -> Result<(nix::fcntl::Flock<File>, AuditReport), AuditError> {
        use std::os::unix::fs::MetadataExt;
        for _ in 0..8 {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(AuditError::io(path))?;
            let file = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
                .map_err(|(_, e)| AuditError::io(path)(std::io::Error::from(e)))?;
            let held = file.metadata().map_err(AuditError::io(path))?;
            let named = match path.metadata() {
                Ok(m) => m,
                Err(_) => continue,
            };
            if (held.dev(), held.ino()) != (named.dev(), named.ino()) {
                continue;
            }
            let report = match held.len() > 0 {
                true => verify_one(path)?,
                false => AuditReport::empty(path),
            };
            return Ok((file, report));
        }
        Err(AuditError::Invalid {
            path: path.to_path_buf(),
            detail: "the log kept being replaced while waiting for its lock".into(),
        })
    }

    /// What opening had to set aside, if anything.
    pub fn recovered(&self) -> Option<&Recovery> {
        self.recovered.as_ref()
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

/// Keeps the file at `path` as evidence under a new name next to it: renamed (`rename`
/// true: the log itself becomes the evidence) or copied. The name is never one that exists:
/// a hard link (which refuses an existing name) places it, so no evidence is overwritten.
fn keep_aside(path: &Path, what: &str, rename: bool) -> Result<PathBuf, AuditError> {
    let stem = path
        .file_stem()
        .map_or("audit".into(), |s| s.to_string_lossy().into_owned());
    let ext = path
        .extension()
        .map_or("jsonl".into(), |e| e.to_string_lossy().into_owned());
    let dir = path.parent().unwrap_or(Path::new("."));
    let ts = now_ms();
    for n in 0..100u32 {
        let suffix = match n {
            0 => String::new(),
            n => format!("-{n}"),
        };
        let kept = dir.join(format!("{stem}.{what}-{ts}{suffix}.{ext}"));
        let placed = match rename {
            // A hard link refuses an existing name where `rename` would replace it; where
            // the file system has no hard links, a rename to a name checked free is next best.
            true => match std::fs::hard_link(path, &kept) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists && !kept.exists() => {
                    std::fs::rename(path, &kept).map(|()| false)
                }
                other => other.map(|()| true),
            },
            // `create_new` refuses an existing name, as the hard link does.
            false => OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&kept)
                .and_then(|mut to| {
                    let mut from = File::open(path)?;
                    std::io::copy(&mut from, &mut to)?;
                    to.sync_all()
                })
                .map(|()| false),
        };
        match placed {
            Ok(linked) => {
                if linked {
                    std::fs::remove_file(path).map_err(AuditError::io(path))?;
                }
                return Ok(kept);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(AuditError::io(&kept)(e)),
        }
    }
    Err(AuditError::Invalid {
        path: path.to_path_buf(),
        detail: format!("no free name to keep the {what} log aside"),
    })
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
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
    /// Logs this one replaced because they were damaged, newest first, each verified again
    /// (filled by [`verify`], as its first event names them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub predecessors: Vec<PredecessorReport>,
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
            predecessors: Vec::new(),
            intact_bytes: 0,
            ends_with_newline: true,
        }
    }

    pub fn intact(&self) -> bool {
        self.first_bad.is_none()
    }
}

/// A damaged log set aside, as the log that replaced it names it, and as it checks now.
#[derive(Debug, Clone, Serialize)]
pub struct PredecessorReport {
    pub path: String,
    /// Where and why it was found damaged, as recorded when it was set aside.
    pub recorded: BadLine,
    /// It verified again now (`None`: it could not be read, see `error`).
    pub report: Option<AuditReport>,
    pub error: Option<String>,
}

/// How many set-aside logs [`verify`] follows back (each names the one before it).
const MAX_PREDECESSORS: usize = 32;

/// Checks every line of a log: its own hash, its place in the sequence and its link to the
/// line before; then the damaged logs it replaced, named by its first event, are checked in
/// turn and listed in [`AuditReport::predecessors`].
pub fn verify(path: &Path) -> Result<AuditReport, AuditError> {
    let mut report = verify_one(path)?;
    let mut next = predecessor_of(path);
    while let Some((kept, recorded)) = next.take() {
        if report.predecessors.len() >= MAX_PREDECESSORS {
            break;
        }
        let (checked, error) = match verify_one(&kept) {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e.to_string())),
        };
        if checked.is_some() {
            next = predecessor_of(&kept);
        }
        report.predecessors.push(PredecessorReport {
            path: kept.display().to_string(),
            recorded,
            report: checked,
            error,
        });
    }
    Ok(report)
}

/// The damaged log `path`'s first line names (a sibling file), if it starts with one.
fn predecessor_of(path: &Path) -> Option<(PathBuf, BadLine)> {
    use std::io::BufRead;
    let file = File::open(path).ok()?;
    let mut first = String::new();
    std::io::BufReader::new(file).read_line(&mut first).ok()?;
    let v: serde_json::Value = serde_json::from_str(first.trim_end()).ok()?;
    let event = v.get("event")?;
    if event.get("kind")?.as_str()? != DAMAGED_EVENT {
        return None;
    }
    // Only a plain file name: the record cannot point a verifier elsewhere.
    let name = event.get("damaged_log")?.as_str()?;
    if name.contains('/') || name == "." || name == ".." {
        return None;
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    Some((
        dir.join(name),
        BadLine {
            line: event.get("line")?.as_u64()?,
            reason: event.get("reason")?.as_str()?.to_string(),
        },
    ))
}

fn verify_one(path: &Path) -> Result<AuditReport, AuditError> {
    // A log is a regular file: `/dev/zero`, a pipe or a folder would be read without end.
    let meta = std::fs::metadata(path).map_err(AuditError::io(path))?;
    if !meta.is_file() {
        return Err(AuditError::io(path)(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file, so not an audit log",
        )));
    }
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
