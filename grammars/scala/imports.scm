; Scala imports. The path segments of `import a.b.C` are sibling identifiers (no node spans
; `a.b`), so a pattern captures each segment as @import.path and the extractor joins them
; into the span from the first to the last. One statement may hold several comma-separated
; expressions (`import a.B, c.d._`): a path is a run of `segment .` pairs, which stops at a comma.

; `import a.b.C` (also the last expression of `import x.Y, a.b.C`).
(import_declaration
  ((identifier) @import.path . ".")+
  .
  (identifier) @import.name .) @import

; One pattern for the other forms (fewer patterns compile faster): every expression followed
; by a comma; `import a.b.C as D` (Scala 3); `import a.b._` / `import a.b.*`, where
; `import a.b.given` imports only given instances: the module alone; and
; `import a.b.{C, D => E, F as G, _}`: one import per selector, where `C => _` hides `C`.
((import_declaration
  ((identifier) @import.path . ".")+
  .
  [
    ((identifier) @import.name . ",")
    (as_renamed_identifier
      name: (identifier) @import.name
      alias: (identifier) @import.alias)
    (namespace_wildcard) @import.glob
    (namespace_wildcard) @_given
    (namespace_selectors (identifier) @import.name)
    (namespace_selectors
      [
        (arrow_renamed_identifier name: (identifier) @import.name alias: (identifier) @import.alias)
        (as_renamed_identifier name: (identifier) @import.name alias: (identifier) @import.alias)
      ])
    (namespace_selectors (namespace_wildcard) @import.glob)
  ]) @import
  (#not-eq? @import.glob "given")
  (#eq? @_given "given"))

; `import scala` (a single segment).
(import_declaration . (identifier) @import.path .) @import

; `package a.b` (chained clauses `package a.b` `package c` declare `a.b.c`; the extractor joins
; the captures of one match). A clause with a body is a namespace definition (tags.scm).
(compilation_unit
  (package_clause name: (package_identifier) @package !body)+)
