//! `SnapshotRemote`: publishes an index generation to object storage and installs one from it.
//!
//! The remote is an `object_store` store: `s3://bucket/prefix` (credentials, region and
//! endpoint from the usual `AWS_*` variables; `AWS_ENDPOINT` and `AWS_ALLOW_HTTP=true` for an
//! S3-compatible server) or `file:///path`. Calls run on a small runtime of its own, so the
//! callers stay synchronous.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use futures::stream::{self, StreamExt, TryStreamExt};
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, PutPayload};
use serde::Serialize;

use super::snapshot_manifest::SNAPSHOT_VERSION;
use super::{RemoteError, SNAPSHOT_FORMAT, SnapshotManifest, SnapshotObject};
use crate::index::{FORMAT_VERSION, FileTable, IndexStore, Manifest};
use crate::util::fsync_dir;

/// Objects transferred at once.
const CONCURRENCY: usize = 8;

pub struct SnapshotRemote {
    url: String,
    store: Arc<dyn ObjectStore>,
    runtime: tokio::runtime::Runtime,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PushReport {
    pub remote: String,
    pub key: String,
    pub repo: String,
    pub commit: String,
    pub tree: Option<String>,
    pub generation: u64,
    /// Files of the generation and its segments.
    pub objects: usize,
    pub bytes: u64,
    /// Source files published with it (0 without `--with-source`).
    pub sources: usize,
    pub source_bytes: u64,
    /// Distinct contents among them all: what the remote stores.
    pub distinct: usize,
    /// Distinct objects sent this time; the others were already there (same content, same
    /// key), or are files with the same bytes as one sent.
    pub uploaded: usize,
    pub uploaded_bytes: u64,
    pub ms: u64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PullReport {
    pub remote: String,
    pub key: String,
    pub repo: String,
    /// The commit the snapshot indexes, and how many first-parent commits it is behind `HEAD`.
    pub commit: String,
    pub behind: usize,
    /// The generation it was committed as here.
    pub generation: u64,
    pub objects: usize,
    pub bytes: u64,
    pub ms: u64,
}

impl SnapshotRemote {
    pub fn open(url: &str) -> Result<SnapshotRemote, RemoteError> {
        let bad = |detail: String| RemoteError::Url {
            url: url.to_string(),
            detail,
        };
        let parsed = url::Url::parse(url)
            .map_err(|e| bad(format!("{e} (expected s3://bucket/prefix or file:///path)")))?;
        let prefix = parsed.path().trim_matches('/').to_string();
        let store: Arc<dyn ObjectStore> = match parsed.scheme() {
            "s3" | "s3a" => {
                let s3 = object_store::aws::AmazonS3Builder::from_env()
                    .with_url(url)
                    .build()
                    .map_err(|e| bad(e.to_string()))?;
                match prefix.is_empty() {
                    true => Arc::new(s3),
                    false => Arc::new(object_store::prefix::PrefixStore::new(s3, prefix.as_str())),
                }
            }
            "file" => {
                let dir = parsed
                    .to_file_path()
                    .map_err(|_| bad("not a local path".to_string()))?;
                std::fs::create_dir_all(&dir).map_err(RemoteError::io(&dir))?;
                let fs = object_store::local::LocalFileSystem::new_with_prefix(&dir)
                    .map_err(|e| bad(e.to_string()))?;
                Arc::new(fs)
            }
            other => return Err(bad(format!("unsupported scheme {other:?}: use s3:// or file://"))),
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| bad(format!("cannot start the I/O runtime: {e}")))?;
        Ok(SnapshotRemote {
            url: url.to_string(),
            store,
            runtime,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Publishes the index's committed generation as `repo` at `commit` (`tree` for a tree
    /// with uncommitted changes): objects first, the snapshot manifest last.
    /// With `sources` (the repository's root), the indexed files' contents go too, each
    /// checked against the hash the index recorded (a file changed since the build refuses
    /// the push): what a reader without a checkout needs to show code.
    pub fn push(
        &self,
        index_dir: &Path,
        repo: &str,
        commit: &str,
        dirty: bool,
        sources: Option<&Path>,
    ) -> Result<PushReport, RemoteError> {
        let t0 = Instant::now();
        let store = IndexStore::new(index_dir);
        let generation = store.current()?.ok_or_else(|| RemoteError::Snapshot {
            key: index_dir.display().to_string(),
            detail: "the index has no committed generation: run `ken index build` first".to_string(),
        })?;
        let manifest = store.read_manifest(generation)?;
        let table = store.read_file_table(generation, &manifest)?;
        let tree = dirty.then(|| tree_hash(&table));
        let objects = index_objects(&store, generation, &manifest)?;
        let source_objects = source_objects(&table, sources);
        let sent = self.upload_unique(&objects, &source_objects)?;
        let key = SnapshotManifest::key(repo, commit, tree.as_deref());
        let snapshot = SnapshotManifest {
            format: SNAPSHOT_FORMAT.to_string(),
            version: SNAPSHOT_VERSION,
            repo: repo.to_string(),
            commit: commit.to_string(),
            tree: tree.clone(),
            index_format: FORMAT_VERSION,
            ken_version: env!("CARGO_PKG_VERSION").to_string(),
            generation,
            created_unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            files: manifest.summary.files,
            lines: manifest.summary.lines,
            objects: objects.iter().map(|(o, _)| o.clone()).collect(),
            sources: source_objects.iter().map(|(o, _)| o.clone()).collect(),
        };
        let body = serde_json::to_vec_pretty(&snapshot).map_err(|e| RemoteError::Snapshot {
            key: key.clone(),
            detail: e.to_string(),
        })?;
        self.runtime.block_on(self.put(&key, body))?;
        Ok(PushReport {
            remote: self.url.clone(),
            key,
            repo: repo.to_string(),
            commit: commit.to_string(),
            tree,
            generation,
            objects: objects.len(),
            bytes: snapshot.total_bytes(),
            sources: snapshot.sources.len(),
            source_bytes: snapshot.source_bytes(),
            distinct: sent.len(),
            uploaded: sent.iter().flatten().count(),
            uploaded_bytes: sent.iter().flatten().sum(),
            ms: t0.elapsed().as_millis() as u64,
        })
    }

    /// Uploads each distinct object (files with equal bytes are one) the remote lacks; per
    /// object, the bytes sent or `None` when it was there.
    fn upload_unique(
        &self,
        objects: &[(SnapshotObject, PathBuf)],
        source_objects: &[(SnapshotObject, PathBuf)],
    ) -> Result<Vec<Option<u64>>, RemoteError> {
        let mut unique: BTreeMap<&str, (&SnapshotObject, &PathBuf)> = BTreeMap::new();
        for (o, file) in objects.iter().chain(source_objects) {
            unique.entry(o.blake3.as_str()).or_insert((o, file));
        }
        self.runtime.block_on(async {
            stream::iter(unique.values().map(|(o, file)| self.upload(o, file)))
                .buffer_unordered(CONCURRENCY)
                .try_collect()
                .await
        })
    }

    /// The first of `commits` (nearest first) with a published snapshot of `repo`.
    pub fn find(
        &self,
        repo: &str,
        commits: &[String],
    ) -> Result<(SnapshotManifest, String, usize), RemoteError> {
        for (behind, commit) in commits.iter().enumerate() {
            let key = SnapshotManifest::key(repo, commit, None);
            let Some(bytes) = self.runtime.block_on(self.get_opt(&key))? else {
                continue;
            };
            let snapshot: SnapshotManifest =
                serde_json::from_slice(&bytes).map_err(|e| RemoteError::Snapshot {
                    key: key.clone(),
                    detail: format!("unreadable manifest: {e}"),
                })?;
            snapshot.validate().map_err(|detail| RemoteError::Snapshot {
                key: key.clone(),
                detail,
            })?;
            if snapshot.repo != repo || snapshot.commit != *commit {
                return Err(RemoteError::Snapshot {
                    key,
                    detail: format!("it names {} at {}", snapshot.repo, snapshot.commit),
                });
            }
            return Ok((snapshot, key, behind));
        }
        Err(RemoteError::NoSnapshot {
            repo: repo.to_string(),
            remote: self.url.clone(),
            head: commits.first().cloned().unwrap_or_default(),
            tried: commits.len(),
        })
    }

    /// Downloads `snapshot` into the index at `index_dir`, verifies every object, and commits
    /// it as a new generation. The caller holds no build lock; this takes it.
    pub fn install(
        &self,
        index_dir: &Path,
        snapshot: &SnapshotManifest,
        key: &str,
        behind: usize,
    ) -> Result<PullReport, RemoteError> {
        let t0 = Instant::now();
        if snapshot.index_format != FORMAT_VERSION {
            return Err(RemoteError::Snapshot {
                key: key.to_string(),
                detail: format!(
                    "it holds index format {}, this ken reads {FORMAT_VERSION}: build locally with `ken index build`",
                    snapshot.index_format
                ),
            });
        }
        let store = IndexStore::new(index_dir);
        store.prepare()?;
        let _lock = store.lock()?;
        // Past every generation folder there is, the current one among them.
        let (gen_high, seg_high) = store.highest_ids();
        let generation = gen_high + 1;
        let tmp = store.begin(generation)?;
        let result = self.download_into(&store, &tmp, snapshot, generation, seg_high);
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&tmp);
        }
        let (manifest, table) = result?;
        store.commit(&manifest, &table)?;
        Ok(PullReport {
            remote: self.url.clone(),
            key: key.to_string(),
            repo: snapshot.repo.clone(),
            commit: snapshot.commit.clone(),
            behind,
            generation,
            objects: snapshot.objects.len(),
            bytes: snapshot.total_bytes(),
            ms: t0.elapsed().as_millis() as u64,
        })
    }

    /// Downloads the snapshot's source files into the folder `dest`, which must not exist:
    /// every file verified against its blake3, written under a sibling `.part` folder and
    /// renamed to `dest` only when all are there. Returns the number of files.
    pub fn install_sources(&self, snapshot: &SnapshotManifest, dest: &Path) -> Result<usize, RemoteError> {
        if snapshot.sources.is_empty() {
            return Err(RemoteError::Snapshot {
                key: SnapshotManifest::key(&snapshot.repo, &snapshot.commit, snapshot.tree.as_deref()),
                detail: "it was published without its sources (`ken index push --with-source`)".to_string(),
            });
        }
        let part = dest.with_extension("part");
        if part.exists() {
            std::fs::remove_dir_all(&part).map_err(RemoteError::io(&part))?;
        }
        let result = self.runtime.block_on(async {
            stream::iter(snapshot.sources.iter().map(|o| {
                let part = &part;
                async move {
                    let bytes = self.fetch_verified(o).await?;
                    let file = part.join(&o.path);
                    if let Some(parent) = file.parent() {
                        std::fs::create_dir_all(parent).map_err(RemoteError::io(parent))?;
                    }
                    std::fs::write(&file, &bytes).map_err(RemoteError::io(&file))
                }
            }))
            .buffer_unordered(CONCURRENCY)
            .try_collect::<Vec<()>>()
            .await
        });
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&part);
            return Err(e);
        }
        std::fs::rename(&part, dest).map_err(RemoteError::io(dest))?;
        Ok(snapshot.sources.len())
    }

    /// Fetches and verifies every object; generation files go into `tmp`, segments in place
    /// under fresh ids (renamed in only once all are verified). Returns the manifest and file
    /// table renumbered for this index.
    fn download_into(
        &self,
        store: &IndexStore,
        tmp: &Path,
        snapshot: &SnapshotManifest,
        generation: u64,
        seg_high: u32,
    ) -> Result<(Manifest, FileTable), RemoteError> {
        let by_hash = self.fetch_unique(snapshot)?;
        let fetched = snapshot
            .objects
            .iter()
            .filter_map(|o| Some((o, by_hash.get(o.blake3.as_str())?.clone())));
        let (mut manifest, mut table, segments) = sort_fetched(fetched, tmp)?;
        let renumber = renumber_segments(&mut manifest, &mut table, &segments, seg_high)?;
        manifest.generation = generation;
        let mut placed: Vec<(PathBuf, PathBuf)> = Vec::new();
        for (old, bytes) in &segments {
            let Some(&fresh) = renumber.get(old) else { continue };
            let dest = store.segment_path(fresh);
            let part = dest.with_extension("bin.tmp-pull");
            write_synced(&part, bytes)?;
            placed.push((part, dest));
        }
        for (part, dest) in placed {
            std::fs::rename(&part, &dest).map_err(RemoteError::io(&dest))?;
        }
        let seg_dir = store.dir().join("segments");
        fsync_dir(&seg_dir).map_err(RemoteError::io(&seg_dir))?;
        Ok((manifest, table))
    }

    /// Every distinct object of the snapshot (files with equal bytes are one object: fetched
    /// once), verified, by hash.
    fn fetch_unique<'s>(
        &self,
        snapshot: &'s SnapshotManifest,
    ) -> Result<BTreeMap<&'s str, bytes::Bytes>, RemoteError> {
        let mut unique: BTreeMap<&str, &SnapshotObject> = BTreeMap::new();
        for o in &snapshot.objects {
            unique.entry(o.blake3.as_str()).or_insert(o);
        }
        self.runtime.block_on(async {
            stream::iter(unique.values().map(|o| async move {
                let bytes = self.fetch_verified(o).await?;
                Ok::<_, RemoteError>((o.blake3.as_str(), bytes))
            }))
            .buffer_unordered(CONCURRENCY)
            .try_collect()
            .await
        })
    }

    /// Sends one object unless the remote has it; the bytes sent, `None` when it was there.
    async fn upload(&self, o: &SnapshotObject, file: &Path) -> Result<Option<u64>, RemoteError> {
        let key = SnapshotManifest::object_key(&o.blake3);
        match self.store.head(&ObjectPath::from(key.as_str())).await {
            Ok(meta) if meta.size == o.bytes => return Ok(None),
            Ok(_) | Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => {
                return Err(RemoteError::Store {
                    key,
                    detail: e.to_string(),
                });
            }
        }
        let bytes = std::fs::read(file).map_err(RemoteError::io(file))?;
        // The file may have changed since it was hashed (a build in between): never publish
        // bytes under another content's key.
        if blake3::hash(&bytes).to_hex().as_str() != o.blake3 {
            return Err(RemoteError::Snapshot {
                key,
                detail: format!(
                    "{} changed while it was published: run the push again",
                    file.display()
                ),
            });
        }
        self.put(&key, bytes).await?;
        Ok(Some(o.bytes))
    }

    async fn fetch_verified(&self, o: &SnapshotObject) -> Result<bytes::Bytes, RemoteError> {
        let key = SnapshotManifest::object_key(&o.blake3);
        let tampered = |detail: String| RemoteError::Tampered {
            key: key.clone(),
            path: o.path.clone(),
            detail,
        };
        let bytes = match self.get_opt(&key).await? {
            Some(b) => b,
            None => return Err(tampered("missing from the remote".to_string())),
        };
        if bytes.len() as u64 != o.bytes {
            return Err(tampered(format!(
                "{} bytes, the snapshot lists {}",
                bytes.len(),
                o.bytes
            )));
        }
        if blake3::hash(&bytes).to_hex().as_str() != o.blake3 {
            return Err(tampered("its content does not match its blake3".to_string()));
        }
        Ok(bytes)
    }

    async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), RemoteError> {
        self.store
            .put(&ObjectPath::from(key), PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(|e| RemoteError::Store {
                key: key.to_string(),
                detail: e.to_string(),
            })
    }

    async fn get_opt(&self, key: &str) -> Result<Option<bytes::Bytes>, RemoteError> {
        let err = |e: object_store::Error| RemoteError::Store {
            key: key.to_string(),
            detail: e.to_string(),
        };
        match self.store.get(&ObjectPath::from(key)).await {
            Ok(r) => r.bytes().await.map(Some).map_err(err),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(err(e)),
        }
    }
}

/// The committed generation's files and the segments it lists, hashed, sorted by path.
fn index_objects(
    store: &IndexStore,
    generation: u64,
    manifest: &Manifest,
) -> Result<Vec<(SnapshotObject, PathBuf)>, RemoteError> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    let gen_dir = store.generation_dir(generation);
    list_files(&gen_dir, &gen_dir, &mut files)?;
    let mut files: Vec<(String, PathBuf)> = files
        .into_iter()
        .map(|(rel, p)| (format!("gen/{rel}"), p))
        .collect();
    for s in &manifest.segments {
        let p = store.segment_path(s.id);
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        files.push((format!("segments/{name}"), p));
    }
    files.sort();
    files
        .into_iter()
        .map(|(path, file)| {
            let bytes = std::fs::read(&file).map_err(RemoteError::io(&file))?;
            let object = SnapshotObject {
                path,
                blake3: blake3::hash(&bytes).to_hex().to_string(),
                bytes: bytes.len() as u64,
            };
            Ok((object, file))
        })
        .collect()
}

/// The indexed files under `sources` (the repository's root), by the hashes the index
/// recorded; none without it.
fn source_objects(table: &FileTable, sources: Option<&Path>) -> Vec<(SnapshotObject, PathBuf)> {
    match sources {
        None => Vec::new(),
        Some(root) => table
            .files
            .iter()
            .map(|r| {
                let o = SnapshotObject {
                    path: r.path.as_str().to_string(),
                    blake3: r.hash_hex(),
                    bytes: r.size,
                };
                (o, root.join(r.path.as_str()))
            })
            .collect(),
    }
}

/// A snapshot file that is missing or cannot be read.
fn corrupt(path: &str, detail: String) -> RemoteError {
    RemoteError::Snapshot {
        key: path.to_string(),
        detail,
    }
}

/// The fetched objects sorted out: the manifest and file table read, the other generation
/// files written under `tmp`, the segments kept by id.
fn sort_fetched<'s>(
    fetched: impl Iterator<Item = (&'s SnapshotObject, bytes::Bytes)>,
    tmp: &Path,
) -> Result<(Manifest, FileTable, BTreeMap<u32, bytes::Bytes>), RemoteError> {
    let mut manifest: Option<Manifest> = None;
    let mut table: Option<FileTable> = None;
    let mut segments: BTreeMap<u32, bytes::Bytes> = BTreeMap::new();
    for (o, bytes) in fetched {
        if let Some(rel) = o.path.strip_prefix("gen/") {
            match rel {
                "manifest.json" => {
                    manifest =
                        Some(serde_json::from_slice(&bytes).map_err(|e| corrupt(&o.path, e.to_string()))?)
                }
                "files.bin" => {
                    table = Some(postcard::from_bytes(&bytes).map_err(|e| corrupt(&o.path, e.to_string()))?)
                }
                _ => {
                    let dest = tmp.join(rel);
                    if let Some(parent) = dest.parent() {
                        std::fs::create_dir_all(parent).map_err(RemoteError::io(parent))?;
                    }
                    write_synced(&dest, &bytes)?;
                }
            }
        } else if let Some(id) = o
            .path
            .strip_prefix("segments/seg-")
            .and_then(|s| s.strip_suffix(".bin"))
            .and_then(|s| s.parse::<u32>().ok())
        {
            segments.insert(id, bytes);
        } else {
            return Err(corrupt(&o.path, "not a generation file or a segment".to_string()));
        }
    }
    let manifest = manifest.ok_or_else(|| corrupt("gen/manifest.json", "missing".to_string()))?;
    let table = table.ok_or_else(|| corrupt("gen/files.bin", "missing".to_string()))?;
    Ok((manifest, table, segments))
}

/// Gives the manifest's segments fresh ids past this index's own (`seg_high`) and points the
/// file table at them; old id -> fresh id.
fn renumber_segments(
    manifest: &mut Manifest,
    table: &mut FileTable,
    segments: &BTreeMap<u32, bytes::Bytes>,
    seg_high: u32,
) -> Result<BTreeMap<u32, u32>, RemoteError> {
    let mut renumber: BTreeMap<u32, u32> = BTreeMap::new();
    for (i, s) in manifest.segments.iter_mut().enumerate() {
        let fresh = seg_high + 1 + i as u32;
        renumber.insert(s.id, fresh);
        if !segments.contains_key(&s.id) {
            return Err(corrupt(
                &format!("segments/seg-{:08}.bin", s.id),
                "missing".to_string(),
            ));
        }
        s.id = fresh;
    }
    for r in &mut table.files {
        r.segment = *renumber.get(&r.segment).ok_or_else(|| {
            corrupt(
                "gen/files.bin",
                format!("{} is in segment {}, which is not listed", r.path, r.segment),
            )
        })?;
    }
    Ok(renumber)
}

/// The blake3 of the indexed paths and contents: names a tree with uncommitted changes.
fn tree_hash(table: &FileTable) -> String {
    let mut h = blake3::Hasher::new();
    for r in &table.files {
        h.update(r.path.as_str().as_bytes());
        h.update(&[0]);
        h.update(&r.hash);
    }
    h.finalize().to_hex().to_string()
}

/// Every file under `dir`, as a `/`-separated path relative to `base`.
fn list_files(base: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<(), RemoteError> {
    for e in std::fs::read_dir(dir).map_err(RemoteError::io(dir))? {
        let e = e.map_err(RemoteError::io(dir))?;
        let p = e.path();
        let kind = e.file_type().map_err(RemoteError::io(&p))?;
        if kind.is_dir() {
            list_files(base, &p, out)?;
        } else if kind.is_file() {
            let rel = p.strip_prefix(base).unwrap_or(&p);
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect();
            out.push((rel.join("/"), p));
        }
    }
    Ok(())
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), RemoteError> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(RemoteError::io(path))?;
    f.write_all(bytes).map_err(RemoteError::io(path))?;
    f.sync_all().map_err(RemoteError::io(path))
}
