; Elixir imports: `alias`, `import`, `require`, `use`. A module name (`A.B`) is one `alias`
; node, so `alias A.B` has path `A.B` (it binds `B`); `alias A.{B, C}` gives path `A` with
; names `B` and `C`. A plain `import A` brings every public function in: a glob. Elixir has
; no file-level package: `defmodule` names are absolute and come from tags.scm.
; `(_ target: ... (arguments ...))` is a `call`, written as a wildcard because a `call` parent
; is slow to compile (see tags.scm).

; `alias A.B`, `require A.B`; `use A.B` with or without options (`use A, :controller`).
(_
  target: (identifier) @_kw
  (arguments . (alias) @import.path .)
  (#any-of? @_kw "alias" "require")) @import
(_
  target: (identifier) @_kw
  (arguments . (alias) @import.path)
  (#eq? @_kw "use")) @import

; `alias A.B, as: C`, `require A.B, as: C`.
(_
  target: (identifier) @_kw
  (arguments
    .
    (alias) @import.path
    .
    (keywords
      (pair
        key: (keyword) @_as
        value: (alias) @import.alias)))
  (#any-of? @_kw "alias" "require")
  (#match? @_as "^as:")) @import

; `alias A.{B, C}` (also `require`/`use`, rare).
(_
  target: (identifier) @_kw
  (arguments
    (dot
      left: (alias) @import.path
      right: (tuple (alias) @import.name)))
  (#any-of? @_kw "alias" "require" "import")) @import

; `import A` brings in all of A: a glob; `import A, only: [f: 1]` names what it takes (the
; names are not captured: a keyword node keeps its colon), while `import A, except: [...]` and
; `import A, only: :functions` are still globs.
(_
  target: (identifier) @_kw
  (arguments . (alias) @import.path @import.glob .)
  (#eq? @_kw "import")) @import
(_
  target: (identifier) @_kw
  (arguments
    .
    (alias) @import.path @import.glob
    .
    (keywords
      .
      (pair
        key: (keyword) @_opt)))
  (#eq? @_kw "import")
  (#not-match? @_opt "^only:")) @import
(_
  target: (identifier) @_kw
  (arguments
    .
    (alias) @import.path @import.glob
    .
    (keywords
      .
      (pair
        key: (keyword) @_opt
        value: (atom))))
  (#eq? @_kw "import")
  (#match? @_opt "^only:")) @import
(_
  target: (identifier) @_kw
  (arguments
    .
    (alias) @import.path
    .
    (keywords
      .
      (pair
        key: (keyword) @_opt
        value: (list))))
  (#eq? @_kw "import")
  (#match? @_opt "^only:")) @import
