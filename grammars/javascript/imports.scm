; ES modules. A default import binds only an alias; `* as ns` (and `require`) bind the module
; namespace: a glob with an alias.
(import_statement
  (import_clause (identifier) @import.alias)
  source: (string (string_fragment) @import.path)) @import
(import_statement
  (import_clause
    (named_imports (import_specifier name: (_) @import.name alias: (_)? @import.alias)))
  source: (string (string_fragment) @import.path)) @import
(import_statement
  (import_clause (namespace_import "*" @import.glob (identifier) @import.alias))
  source: (string (string_fragment) @import.path)) @import
; Side-effect imports (`import "./polyfill"`); dropped when the same line names bindings.
(import_statement source: (string (string_fragment) @import.path)) @import

; Re-exports.
(export_statement
  (export_clause (export_specifier name: (_) @import.name alias: (_)? @import.alias))
  source: (string (string_fragment) @import.path)) @import
(export_statement "*" @import.glob source: (string (string_fragment) @import.path)) @import
; `export * as ns from "./x"`: the module's namespace passed on under a name.
(export_statement
  (namespace_export "*" @import.glob (identifier) @import.alias)
  source: (string (string_fragment) @import.path)) @import

; CommonJS.
(variable_declarator
  name: (identifier) @import.alias
  value: (call_expression
    function: (identifier) @_require @import.glob
    arguments: (arguments . (string (string_fragment) @import.path)))
  (#eq? @_require "require")) @import
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string (string_fragment) @import.path))
  (#eq? @_require "require")) @import
