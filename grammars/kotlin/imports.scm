; Kotlin imports. The grammar's `qualified_identifier` is flat (no scope node), so the path is
; the whole dotted name as written and the name its last segment: `import a.b.C` gives
; path `a.b.C`, name `C` (the code drops the trailing `.C` to get the package `a.b`).

; `import a.b.C as D`
(import
  (qualified_identifier (identifier) @import.name .) @import.path
  (identifier) @import.alias) @import

; `import a.b.*`
(import (qualified_identifier) @import.path "*" @import.glob) @import

; `import a.b.C`, `import a.b.topLevelFunction`
((import
   (qualified_identifier (identifier) @import.name .) @import.path .) @import
 (#not-match? @import "[*]"))

(package_header (qualified_identifier) @package)
