; `require "json"`, `require_relative "../models/invoice"`, `load "tasks/seed.rake"`: a call
; of one of these methods with a plain string argument (an interpolated path is skipped).
(call
  !receiver
  method: (identifier) @_require
  arguments: (argument_list
    .
    (string . (string_content) @import.path .)
    .)
  (#any-of? @_require "require" "require_relative" "load")) @import

; `autoload :Parser, "kenning/parser"`: the constant is loaded from the path on first use.
(call
  !receiver
  method: (identifier) @_autoload
  arguments: (argument_list
    (simple_symbol)
    (string . (string_content) @import.path .))
  (#eq? @_autoload "autoload")) @import
