; inherits: javascript
; `import x = require("y")`
(import_alias (identifier) @import.alias (nested_identifier) @import.path) @import
(import_statement
  (import_require_clause (identifier) @import.alias source: (string (string_fragment) @import.path))) @import
