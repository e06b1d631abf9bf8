//! `SymbolId`: one definition in one index generation (a file id and the definition's index
//! in that file's record).

use serde::{Deserialize, Serialize};

use crate::symbols::FileId;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct SymbolId {
    pub file: FileId,
    pub def: u32,
}

impl SymbolId {
    pub fn new(file: u32, def: u32) -> SymbolId {
        SymbolId {
            file: FileId(file),
            def,
        }
    }
}
