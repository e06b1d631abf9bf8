//! `PreviousGeneration`: the committed generation a build starts from (checked undamaged), whose
//! parts the part writers reuse where nothing they depend on changed.

use super::{FileTable, Manifest};

/// The committed generation a build starts from.
pub(super) struct PreviousGeneration {
    pub generation: u64,
    pub manifest: Manifest,
    pub table: FileTable,
}
