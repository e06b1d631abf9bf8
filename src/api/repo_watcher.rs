//! `RepoWatcher`: keeps a [`Workspace`] fresh. It watches the repository (`notify`), keeps the
//! changes that the walker would index (hidden paths, ignore files' rules, the index folder
//! and unsupported files are dropped), waits for a quiet moment (debounce), then builds
//! incrementally in the background and swaps the new generation in. Queries never wait for
//! it: they are answered from the last complete generation, with the pending changes counted
//! as staleness. Generations built by another process are picked up too.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use notify::{Event, EventKind, RecursiveMode, Watcher};

use super::watch_state::{RefreshReport, WatchState};
use super::{ApiError, ReindexRequest, Workspace};
use crate::index::{IndexError, NoProgress};
use crate::lang::LanguageRegistry;

pub struct RepoWatcher {
    _watcher: notify::RecommendedWatcher,
}

/// A batch of changes is built at the latest this long after its first event, however busy.
const MAX_BATCH_WAIT: Duration = Duration::from_secs(2);
/// How often an idle watcher looks for a generation another process committed.
const POLL_OTHER_BUILDS: Duration = Duration::from_secs(2);

impl RepoWatcher {
    /// Starts watching `ws`'s repository; needs a workspace opened with
    /// [`super::Staleness::Watched`]. Runs until the process exits.
    pub fn start(ws: Arc<Workspace>, debounce: Duration) -> Result<RepoWatcher, ApiError> {
        let (tx, rx) = channel();
        let mut watcher = notify::recommended_watcher(move |res: notify::Result<Event>| {
            let _ = tx.send(res);
        })
        .map_err(|e| ApiError::Unavailable(format!("cannot watch {}: {e}", ws.root().display())))?;
        watcher.watch(ws.root(), RecursiveMode::Recursive).map_err(|e| {
            ApiError::Unavailable(format!(
                "cannot watch {}: {e} (raise fs.inotify.max_user_watches, or serve with --no-watch)",
                ws.root().display()
            ))
        })?;
        let filter = ChangeFilter::new(ws.root(), ws.index_dir())?;
        std::thread::Builder::new()
            .name("ken-watch".into())
            .spawn(move || run(ws, rx, filter, debounce))
            .map_err(|e| ApiError::Internal(format!("cannot start the watcher thread: {e}")))?;
        Ok(RepoWatcher { _watcher: watcher })
    }
}

fn run(
    ws: Arc<Workspace>,
    rx: Receiver<notify::Result<Event>>,
    mut filter: ChangeFilter,
    debounce: Duration,
) {
    let Some(state) = ws.watch_state().cloned() else {
        tracing::warn!("the workspace was not opened for watching; changes are not followed");
        return;
    };
    let mut first_seen: Option<Instant> = None;
    // The quiet period counts from the last relevant event: reads of the index itself (every
    // query) and ignored paths produce events too, and must not hold a build back.
    let mut last_seen = Instant::now();
    // Another process's builds are looked for on a clock of their own: under a steady stream
    // of events (every query reads the index, and a watcher may see those reads) the wait
    // below would never time out.
    let mut last_poll = Instant::now();
    loop {
        if first_seen.is_none() && last_poll.elapsed() >= POLL_OTHER_BUILDS {
            last_poll = Instant::now();
            refresh(&ws);
        }
        match rx.recv_timeout(batch_wait(first_seen, last_seen, debounce)) {
            Ok(Ok(event)) => {
                let paths = filter.relevant(&event);
                if !paths.is_empty() {
                    first_seen.get_or_insert_with(Instant::now);
                    last_seen = Instant::now();
                    state.add(paths);
                }
                let due = first_seen
                    .is_some_and(|t| t.elapsed() >= MAX_BATCH_WAIT || last_seen.elapsed() >= debounce);
                if !due {
                    continue;
                }
            }
            Ok(Err(e)) => {
                tracing::warn!("watching {}: {e}", ws.root().display());
                continue;
            }
            Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => {}
        }
        let Some(t0) = first_seen else {
            last_poll = Instant::now();
            refresh(&ws);
            continue;
        };
        let paths = state.take();
        let (report, built) = rebuild(&ws, &state, &paths, t0);
        if built {
            first_seen = None;
        }
        if paths.iter().any(|p| is_ignore_file(p)) {
            filter.forget_rules();
        }
        state.record(report);
    }
}

/// How long to wait for the next event: until the batch is quiet or due, else until the next
/// look for another process's builds.
fn batch_wait(first_seen: Option<Instant>, last_seen: Instant, debounce: Duration) -> Duration {
    match first_seen {
        Some(t) => {
            let quiet = (last_seen + debounce).saturating_duration_since(Instant::now());
            quiet.min(MAX_BATCH_WAIT.saturating_sub(t.elapsed()))
        }
        None => POLL_OTHER_BUILDS,
    }
}

/// Picks up a generation another process committed.
fn refresh(ws: &Workspace) {
    if let Err(e) = ws.refresh() {
        tracing::warn!("reading the index of {}: {e}", ws.root().display());
    }
}

/// Builds the changed `paths` (pending since `t0`) and reports it, with whether the build
/// succeeded; a failed one keeps them pending and pauses first.
fn rebuild(ws: &Workspace, state: &WatchState, paths: &[String], t0: Instant) -> (RefreshReport, bool) {
    let built = Instant::now();
    match ws.reindex(&ReindexRequest::default(), &NoProgress) {
        Ok(r) => {
            tracing::info!(
                "generation {} after {} changed paths: built in {} ms",
                r.generation,
                paths.len(),
                r.build_ms
            );
            state.finish();
            let report = RefreshReport {
                generation: r.generation,
                paths_changed: paths.len(),
                save_to_queryable_ms: t0.elapsed().as_millis() as u64,
                build_ms: built.elapsed().as_millis() as u64,
                error: None,
                finished_unix_ms: unix_ms(),
            };
            (report, true)
        }
        Err(e) => {
            // Another build holds the index (or this one failed): keep the changes pending
            // and try again after a pause.
            state.add(paths.iter().cloned());
            state.finish();
            let busy = matches!(e, ApiError::Index(IndexError::Locked { .. }) | ApiError::Busy(_));
            tracing::warn!("rebuilding {}: {e}", ws.root().display());
            std::thread::sleep(if busy {
                Duration::from_millis(500)
            } else {
                MAX_BATCH_WAIT
            });
            let report = RefreshReport {
                generation: ws.analysis().generation(),
                paths_changed: paths.len(),
                save_to_queryable_ms: 0,
                build_ms: built.elapsed().as_millis() as u64,
                error: Some(e.to_string()),
                finished_unix_ms: unix_ms(),
            };
            (report, false)
        }
    }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".kenignore"];

fn is_ignore_file(path: &str) -> bool {
    IGNORE_FILES
        .iter()
        .any(|f| path == *f || path.ends_with(&format!("/{f}")))
}

/// Which changed paths the index cares about: the walker's rules, applied to one path.
struct ChangeFilter {
    root: PathBuf,
    index_dir: Option<PathBuf>,
    registry: &'static LanguageRegistry,
    /// Ignore rules per folder (from its .gitignore, .ignore and .kenignore).
    rules: HashMap<PathBuf, Gitignore>,
}

impl ChangeFilter {
    fn new(root: &Path, index_dir: &Path) -> Result<ChangeFilter, ApiError> {
        Ok(ChangeFilter {
            root: root.canonicalize().unwrap_or_else(|_| root.to_path_buf()),
            index_dir: index_dir.canonicalize().ok(),
            registry: LanguageRegistry::builtin().map_err(|e| ApiError::Internal(e.to_string()))?,
            rules: HashMap::new(),
        })
    }

    fn forget_rules(&mut self) {
        self.rules.clear();
    }

    /// Repository paths of the event that a build would look at.
    fn relevant(&mut self, event: &Event) -> Vec<String> {
        if matches!(event.kind, EventKind::Access(_)) {
            return Vec::new();
        }
        let removed = matches!(event.kind, EventKind::Remove(_));
        let mut out = Vec::new();
        for p in &event.paths {
            if let Some(rel) = self.keep(p, removed) {
                out.push(rel);
            }
        }
        out
    }

    fn keep(&mut self, path: &Path, removed: bool) -> Option<String> {
        if self.index_dir.as_ref().is_some_and(|d| path.starts_with(d)) {
            return None;
        }
        let rel = path.strip_prefix(&self.root).ok()?;
        let rel_str = rel.to_string_lossy().replace('\\', "/");
        if rel_str.is_empty()
            || rel_str
                .split('/')
                .any(|c| c.starts_with('.') && !IGNORE_FILES.contains(&c))
        {
            return None;
        }
        if is_ignore_file(&rel_str) {
            self.forget_rules();
            return Some(rel_str);
        }
        let name = rel.file_name()?.to_string_lossy();
        // Manifests that shape module paths and import aliases (`Cargo.toml`, `go.mod`,
        // `package.json`, `tsconfig.json`) matter even where ignore rules hide them.
        if crate::parse::LayoutFile::is_layout_name(&name) {
            let folder = rel.parent().filter(|p| !p.as_os_str().is_empty());
            return match folder.is_some_and(|p| self.ignored(p, true)) {
                true => None,
                false => Some(rel_str),
            };
        }
        let supported = self.registry.for_file_name(&name).is_some();
        // A removed folder cannot be told from its name; let the build find what went.
        let folder = removed && rel.extension().is_none();
        if !supported && !folder {
            return None;
        }
        let is_dir = path.is_dir();
        if self.ignored(rel, is_dir) {
            return None;
        }
        Some(rel_str)
    }

    /// Whether the ignore files of the path's folders exclude it (deeper folders win).
    fn ignored(&mut self, rel: &Path, is_dir: bool) -> bool {
        let mut verdict = false;
        let mut dir = self.root.clone();
        let mut folders = vec![dir.clone()];
        if let Some(parent) = rel.parent() {
            for c in parent.components() {
                dir.push(c);
                folders.push(dir.clone());
            }
        }
        let full = self.root.join(rel);
        for (depth, folder) in folders.iter().enumerate() {
            // A folder ignored by the rules above it is never walked into.
            if depth > 0 && verdict {
                return true;
            }
            let rules = self.rules.entry(folder.clone()).or_insert_with(|| {
                let mut b = GitignoreBuilder::new(folder);
                for f in IGNORE_FILES {
                    let p = folder.join(f);
                    if p.is_file() {
                        let _ = b.add(p);
                    }
                }
                b.build().unwrap_or_else(|_| Gitignore::empty())
            });
            let m = rules.matched_path_or_any_parents(&full, is_dir);
            if m.is_ignore() {
                verdict = true;
            } else if m.is_whitelist() {
                verdict = false;
            }
        }
        verdict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_keeps_source_files_and_drops_ignored_hidden_and_index_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n*.gen.py\n").unwrap();
        std::fs::write(root.join("src/.kenignore"), "skip.py\n").unwrap();
        let mut f = ChangeFilter::new(&root, &root.join(".kenning")).unwrap();
        let mut keep = |p: &str| f.keep(&root.join(p), false);
        assert_eq!(keep("src/a.py"), Some("src/a.py".to_string()));
        assert_eq!(keep("build/b.py"), None);
        assert_eq!(keep("src/x.gen.py"), None);
        assert_eq!(keep("src/skip.py"), None);
        assert_eq!(keep(".kenning/CURRENT"), None);
        assert_eq!(keep(".git/index"), None);
        assert_eq!(keep("README.txt"), None);
        assert_eq!(keep(".gitignore"), Some(".gitignore".to_string()));
        // Manifests count even when ignored themselves, not inside an ignored folder.
        std::fs::write(root.join(".gitignore"), "build/\n*.gen.py\npackage.json\n").unwrap();
        let mut f = ChangeFilter::new(&root, &root.join(".kenning")).unwrap();
        let mut keep = |p: &str| f.keep(&root.join(p), false);
        assert_eq!(keep("package.json"), Some("package.json".to_string()));
        assert_eq!(keep("src/tsconfig.json"), Some("src/tsconfig.json".to_string()));
        assert_eq!(keep("build/package.json"), None);
    }
}
