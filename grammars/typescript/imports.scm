; inherits: javascript
; `import x = require("y")`
(import_alias (identifier) @import.alias (nested_identifier) @import.path) @import
