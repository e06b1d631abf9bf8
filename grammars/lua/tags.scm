; Lua definitions and references. `function M.f()` and `function M:m()` name their table
; with @container (so `M.f`, `M.m`); `---` comments right above are found generically.

; Functions: `function f()`, `local function f()`, `function a.b.f()`, `function M:m()`.
(function_declaration name: (identifier) @name) @definition.function
(function_declaration
  name: (dot_index_expression table: (_) @container field: (identifier) @name)) @definition.function
(function_declaration
  name: (method_index_expression table: (_) @container method: (identifier) @name)) @definition.method

; `local f = function() end`, `f = function() end`, `M.f = function() end`.
(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @name)
    (expression_list . value: (function_definition)))) @definition.function
(assignment_statement
  (variable_list . name: (identifier) @name)
  (expression_list . value: (function_definition))) @definition.function
(assignment_statement
  (variable_list
    . name: (dot_index_expression table: (_) @container field: (identifier) @name))
  (expression_list . value: (function_definition))) @definition.function

; Functions in a table constructor: `local M = { f = function() end }` gives `M.f`.
(assignment_statement
  (variable_list . name: (identifier) @container)
  (expression_list
    . value: (table_constructor
      (field name: (identifier) @name value: (function_definition)) @definition.function)))
(field name: (identifier) @name value: (function_definition)) @definition.function

; Module-level locals and globals (not `local x = require(..)`, which is an import):
; `<const>` and ALL_CAPS names are constants (but for an empty table, a module:
; `local UI = {}`), the rest (module tables `local M = {}`) variables.
(chunk
  (variable_declaration
    (assignment_statement
      (variable_list . name: (identifier) @name . attribute: (attribute (identifier) @_attr))
      (expression_list . value: (_) @_value))) @definition.constant
  (#eq? @_attr "const")
  (#not-match? @_value "^require[ \t]*[(\"'\\[]"))
(chunk
  (variable_declaration
    (assignment_statement
      (variable_list . name: (identifier) @name)
      (expression_list . value: (_) @_value))) @definition.constant
  (#match? @name "^[A-Z][A-Z0-9_]+$")
  (#not-match? @_value "^(require[ \t]*[(\"'\\[]|\\{[ \t\r\n]*\\}$)"))
(chunk
  (variable_declaration
    (assignment_statement
      (variable_list . name: (identifier) @name)
      (expression_list . value: (_) @_value))) @definition.variable
  (#not-match? @_value "^require[ \t]*[(\"'\\[]"))
(chunk
  (variable_declaration (variable_list . name: (identifier) @name)) @definition.variable)
(chunk
  (assignment_statement
    (variable_list . name: (identifier) @name)
    (expression_list . value: (_) @_value)) @definition.variable
  (#not-match? @_value "^require[ \t]*[(\"'\\[]"))

; Module-level fields of a module table: `M.VERSION = "1.0"`, `M.defaults = {}`.
(chunk
  (assignment_statement
    (variable_list
      . name: (dot_index_expression table: (identifier) @container field: (identifier) @name))) @definition.field
  (#not-eq? @name "__index"))

; Calls: `f()`, `M.f()`, `obj:m()`; `require` is an import, not a call.
(function_call name: (identifier) @name (#not-eq? @name "require")) @reference.call
(function_call name: (dot_index_expression field: (identifier) @name)) @reference.call
(function_call name: (method_index_expression method: (identifier) @name)) @reference.call

; Inheritance by metatable: `setmetatable(Derived, { __index = Base })`.
(field
  name: (identifier) @_key
  value: [
    (identifier) @name
    (dot_index_expression field: (identifier) @name)
  ] @reference.class
  (#eq? @_key "__index"))
