//! `AssembledGeneration`: what a build has made of the tree before its parts are written —
//! the file table, the segments, the parsed files' skeletons — and what every part writer
//! reads.

use super::{FileTable, SegmentInfo};
use crate::graph::FileSkeleton;

/// The new generation's file table and segments, before its parts are written.
pub(super) struct AssembledGeneration {
    pub table: FileTable,
    /// Skeletons of the parsed files (for the graph), aligned with `table.files`.
    pub skeletons: Vec<Option<FileSkeleton>>,
    pub segments: Vec<SegmentInfo>,
    pub parsed: u64,
    pub reused: u64,
    pub compacted: bool,
    pub removed_paths: Vec<String>,
    /// Bare JavaScript imports naming repository code (package names, tsconfig paths).
    pub js_aliases: Vec<(String, String)>,
}
