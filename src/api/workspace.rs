//! `Workspace`: the host. It finds a repository's index, holds the current generation as an
//! [`Analysis`], hands each request a cheap snapshot of it (an `Arc`), and swaps in a new
//! generation atomically after a build. A request keeps the generation it started with to
//! the end, so no answer mixes two generations and none waits for a build.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::watch_state::{Staleness, WatchState};
use super::{Analysis, ApiError, BuildActivity};
use crate::index::{BothObservers, BuildObserver, Coverage, IndexConfig, IndexSnapshot};

pub struct Workspace {
    root: PathBuf,
    index_dir: PathBuf,
    current: RwLock<Arc<Analysis>>,
    staleness: Staleness,
    /// One build at a time from this process (the index's lock guards against others); holds
    /// the generation the last one committed, which the next one reuses without verifying.
    building: Mutex<Option<u64>>,
    /// The build running now, for answers about parts it is adding.
    activity: Arc<BuildActivity>,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReindexRequest {
    /// Parse every file again instead of only the changed ones.
    #[serde(default)]
    pub full: bool,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ReindexResponse {
    pub previous_generation: u64,
    pub files_parsed: u64,
    pub files_reused: u64,
    pub files_removed: u64,
    pub build_ms: u64,
    pub generation: u64,
    pub coverage: Coverage,
}

impl Workspace {
    /// The repository root and index folder: explicit, or found upwards from `start` (default:
    /// the current folder) like git.
    pub fn locate(start: Option<&Path>, index_dir: Option<PathBuf>) -> Result<(PathBuf, PathBuf), ApiError> {
        let start = match start {
            Some(p) => p.to_path_buf(),
            None => std::env::current_dir()
                .map_err(|e| ApiError::Internal(format!("cannot read the current folder: {e}")))?,
        };
        let start = start
            .canonicalize()
            .map_err(|e| ApiError::invalid("repo", format!("{}: {e}", start.display())))?;
        if let Some(dir) = index_dir {
            return Ok((start, dir));
        }
        let found = start
            .ancestors()
            .find(|d| d.join(".kenning").join("FORMAT").is_file());
        match found {
            Some(root) => Ok((root.to_path_buf(), root.join(".kenning"))),
            None => Err(ApiError::NotFound(format!(
                "no index found at {} or above it; run `ken index build {}` first (with `--quick`, search and symbols answer after about the parse time; the next build adds the graph and semantic parts)",
                start.display(),
                start.display()
            ))),
        }
    }

    /// Opens the index of the repository at or above `start`.
    pub fn open(start: Option<&Path>, index_dir: Option<PathBuf>) -> Result<Workspace, ApiError> {
        let (root, index_dir) = Self::locate(start, index_dir)?;
        Self::open_at(root, index_dir, Staleness::Scan)
    }

    pub fn open_at(root: PathBuf, index_dir: PathBuf, staleness: Staleness) -> Result<Workspace, ApiError> {
        let snapshot = super::timed("snapshot", || IndexSnapshot::open(&index_dir))?;
        let activity = Arc::new(BuildActivity::default());
        let analysis = Analysis::new(root.clone(), snapshot, staleness.clone(), activity.clone());
        Ok(Workspace {
            root,
            index_dir,
            current: RwLock::new(Arc::new(analysis)),
            staleness,
            building: Mutex::new(None),
            activity,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn index_dir(&self) -> &Path {
        &self.index_dir
    }

    pub fn watch_state(&self) -> Option<&Arc<WatchState>> {
        match &self.staleness {
            Staleness::Watched(w) => Some(w),
            Staleness::Scan => None,
        }
    }

    /// The current generation; the caller keeps it for the whole request.
    pub fn analysis(&self) -> Arc<Analysis> {
        match self.current.read() {
            Ok(a) => a.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Opens the committed generation if it is newer than the one held (a build by this
    /// process or another), warms its parts, and swaps it in. Returns the new generation.
    pub fn refresh(&self) -> Result<Option<u64>, ApiError> {
        let held = self.analysis();
        let on_disk = IndexSnapshot::current_generation(&self.index_dir)?;
        if on_disk == Some(held.generation()) {
            return Ok(None);
        }
        let snapshot = IndexSnapshot::open(&self.index_dir)?;
        let generation = snapshot.generation();
        let next = Analysis::new(
            self.root.clone(),
            snapshot,
            self.staleness.clone(),
            self.activity.clone(),
        );
        // Opened before the swap, so the first request on the new generation does not pay.
        next.warm(held.has_semantic());
        let next = Arc::new(next);
        match self.current.write() {
            Ok(mut c) => *c = next,
            Err(poisoned) => *poisoned.into_inner() = next,
        }
        Ok(Some(generation))
    }

    /// An incremental build with the settings of the current generation (walk rules, parts,
    /// embedding model), then the swap.
    pub fn reindex(
        &self,
        req: &ReindexRequest,
        observer: &dyn BuildObserver,
    ) -> Result<ReindexResponse, ApiError> {
        let mut built = self
            .building
            .lock()
            .map_err(|_| ApiError::Internal("a previous build panicked".into()))?;
        let held = self.analysis();
        let m = &held.snapshot().manifest;
        let deferred = |part: &str| m.stats.deferred.iter().any(|d| d == part);
        let (max_memory_mib, max_memory_from) = IndexConfig::memory_cap(IndexConfig::max_memory_from_env());
        let config = IndexConfig {
            walk: m.walk.clone(),
            index_dir: Some(self.index_dir.clone()),
            threads: 0,
            full: req.full,
            lexical: true,
            // A first-stage generation's deferred parts are built now.
            graph: m.parts.graph.is_some() || deferred("graph"),
            vectors: m.parts.vectors.is_some() || deferred("semantic"),
            history: m.parts.history.is_some() || deferred("history"),
            first_stage: false,
            max_memory_mib,
            max_memory_from,
            checkpoint_min_bytes: Some(crate::index::CHECKPOINT_MIN_BYTES),
        };
        let plan = super::BuildPlan::new(&self.root, config).trusting(*built);
        let t0 = Instant::now();
        let both = BothObservers(observer, self.activity.as_ref());
        self.activity.begin();
        let report = plan.run(&both);
        self.activity.end();
        let report = report?;
        *built = Some(report.manifest.generation);
        let build_ms = t0.elapsed().as_millis() as u64;
        self.refresh()?;
        let now = self.analysis();
        let st = &report.manifest.stats;
        Ok(ReindexResponse {
            previous_generation: held.generation(),
            files_parsed: st.parsed,
            files_reused: st.reused,
            files_removed: st.removed,
            build_ms,
            generation: now.generation(),
            coverage: now.coverage(),
        })
    }
}
