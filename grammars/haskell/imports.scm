; Haskell imports and the module a file declares (`module A.B (exports) where`).
;
; `import A.B` and `import A.B hiding (x)` bring in everything: globs. `import A.B as C`
; (unqualified, aliased) is a glob with an alias. `import qualified A.B` and
; `import qualified A.B as C` (or `import A.B qualified as C`) bind only the qualifier.
; `import A.B (x, T(..), (<|>))` imports names: `x`, `T`, `<|>`.

(header module: (module) @package)

; Unqualified, no list: a glob (with its alias if any).
((import
   module: (module) @import.path @import.glob
   !alias
   !names) @import
 (#not-match? @import "(^|\\s)qualified\\s"))
((import
   module: (module) @import.path @import.glob
   alias: (module) @import.alias
   !names) @import
 (#not-match? @import "(^|\\s)qualified\\s"))

; Qualified: the module and its alias.
((import module: (module) @import.path !alias !names) @import
 (#match? @import "(^|\\s)qualified\\s"))
((import module: (module) @import.path alias: (module) @import.alias) @import
 (#match? @import "(^|\\s)qualified\\s"))

; `hiding (...)`: everything else, a glob.
(import module: (module) @import.path @import.glob "hiding") @import

; An import list: one import per name (not for `hiding`).
((import
   module: (module) @import.path
   names: (import_list
     name: (import_name
       [
         (variable) @import.name
         (name) @import.name
         (qualified) @import.name
         operator: (_ (operator) @import.name)
       ]))) @import
 (#not-match? @import "\\shiding\\s*\\("))
