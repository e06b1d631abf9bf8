//! Past one machine: indexing workers and sharded serving over NATS JetStream, with
//! generations shared through object storage ([`crate::remote`]).
//!
//! - The **work queue** is the JetStream stream `KEN_WORK`, one subject per repository
//!   (`ken.work.<token>`), work-queue retention, one message per subject: a second request
//!   for a repository replaces the queued one, and an exact repeat (same repository and
//!   commit) is dropped by the stream's duplicate window. Workers pull one item at a time
//!   through one durable consumer with explicit acks; an item a worker does not ack in time
//!   (it died) is redelivered to another, a failed one is redelivered after a delay, and after
//!   the last attempt it goes to the dead-letter subject `ken.dead.<token>` (stream
//!   `KEN_DEAD`).
//! - A worker builds incrementally from the last published snapshot, publishes, then moves
//!   the repository's **current pointer** in the key-value bucket `ken_pointers` by
//!   compare-and-swap on the entry's revision; a stale swap is rejected and re-read, and a
//!   pointer never moves back to an ancestor of the commit it names.
//! - **Shard servers** own the repositories that rendezvous hashing assigns to their group,
//!   load their snapshots into a local cache, follow pointer moves, and answer on
//!   `ken.query.<group>` in the NATS queue group `<group>` (replicas share the load and
//!   stand in for each other). A root fans a query out to every group with a deadline and
//!   merges the answers; a group that does not answer in time is named in a partial answer.
//!
//! Invariants:
//! - Nothing here prints; the CLI renders reports. The network is touched here and in
//!   `remote` only.
//! - A worker acks an item only after its snapshot is published and the pointer is at that
//!   commit or a descendant; everything before the ack is idempotent (objects are content
//!   keyed, the manifest is rewritten with the same bytes, the swap re-reads).
//! - Every wait has a bound: requests have deadlines, fetches expire, builds send progress
//!   acks so a live worker keeps its item and a dead one loses it after `ack_wait`.

mod fleet_bus;
mod fleet_error;
mod fleet_metrics;
mod fleet_query;
mod indexing_worker;
mod nats_target;
mod rendezvous;
mod repo_pointer;
mod shard_server;
mod work_item;

pub use fleet_bus::{DeadLetter, EnqueueReport, FleetBus, FleetStatus, QueueState, WorkerBeat, now_ms};
pub use fleet_error::FleetError;
pub use fleet_metrics::FleetMetrics;
pub use fleet_query::{FleetAnswer, GroupAnswer, MergedHit, RepoAnswer, ShardReply, ShardRequest, scatter};
pub use indexing_worker::{IndexingWorker, WorkerConfig, WorkerEvent};
pub use nats_target::NatsTarget;
pub use rendezvous::{owner, parse_groups};
pub use repo_pointer::{PointerMove, RepoPointer};
pub use shard_server::{ShardConfig, ShardServer};
pub use work_item::{WorkItem, subject_token};
