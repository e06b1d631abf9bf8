; The use-tree under `argument` is flattened by the extractor (import_style = rust-use-tree):
; `use a::{b as c, d::*};` gives `a::b` as `c` and the glob `a::d::*`.
(use_declaration argument: (_) @import.path) @import

(extern_crate_declaration name: (identifier) @import.path alias: (identifier) @import.alias) @import
(extern_crate_declaration name: (identifier) @import.path !alias) @import
