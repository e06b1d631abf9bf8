//! Index snapshots shared through object storage (`ken index push`, `ken index pull`).
//!
//! A published generation is a set of content-addressed objects (`objects/<blake3>`: every
//! file of the generation folder and every symbol segment it reads) plus one snapshot
//! manifest per repository and commit (`snapshots/<repo>/<commit>.json`), written after all
//! its objects, so a reader never finds a snapshot whose objects are missing.
//!
//! Invariants:
//! - Objects are keyed by the blake3 of their bytes: two builds of the same tree never collide,
//!   and an object already present is never uploaded again.
//! - A pull verifies every object's length and hash before anything is committed; a tampered,
//!   truncated or missing object fails the pull naming the object, and the index keeps its
//!   previous generation (the pulled one is committed by the same rename as a build's).
//! - Pulled segments are renumbered past the index's own, so a pull into an index that has
//!   generations of its own never overwrites a file a reader may hold.
//!
//! This layer touches the network (S3 through `object_store`), like `providers`.

mod remote_error;
mod repo_identity;
mod snapshot_manifest;
mod snapshot_remote;

pub use remote_error::RemoteError;
pub use repo_identity::RepoIdentity;
pub use snapshot_manifest::{SNAPSHOT_FORMAT, SnapshotManifest, SnapshotObject};
pub use snapshot_remote::{PullReport, PushReport, SnapshotRemote};
