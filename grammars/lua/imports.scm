; `local json = require("dkjson")`, `local util = require "app.util"`: the local name is the
; alias. `require("a.b")` alone imports for its effects.
(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @import.alias)
    (expression_list
      . value: (function_call
        name: (identifier) @_require
        arguments: (arguments . (string content: (string_content) @import.path)))))
  (#eq? @_require "require")) @import

; `local insert = require("tbl").insert`: one name of the module.
(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @import.alias)
    (expression_list
      . value: (dot_index_expression
        table: (function_call
          name: (identifier) @_require
          arguments: (arguments . (string content: (string_content) @import.path)))
        field: (identifier) @import.name)))
  (#eq? @_require "require")) @import

; Globals: `json = require("json")`.
(chunk
  (assignment_statement
    (variable_list . name: (identifier) @import.alias)
    (expression_list
      . value: (function_call
        name: (identifier) @_require
        arguments: (arguments . (string content: (string_content) @import.path)))))
  @import
  (#eq? @_require "require"))

; A bare `require("a.b")` / `require "a.b"` statement.
(function_call
  name: (identifier) @_require
  arguments: (arguments . (string content: (string_content) @import.path))
  (#eq? @_require "require")) @import
