; `const std = @import("std");`, `const util = @import("util.zig");`: the constant is the
; alias.
(variable_declaration
  (identifier) @import.alias
  .
  (builtin_function
    (builtin_identifier) @_import
    (arguments . (string (string_content) @import.path)))
  (#eq? @_import "@import")) @import

; `const Foo = @import("foo.zig").Foo;`: one name of the module. A longer chain
; (`@import("std").mem.Allocator`) is a plain import of the module plus a constant.
(variable_declaration
  (identifier) @import.alias
  .
  (field_expression
    object: (builtin_function
      (builtin_identifier) @_import
      (arguments . (string (string_content) @import.path)))
    member: (identifier) @import.name)
  (#eq? @_import "@import")) @import

; `@import("x.zig")` anywhere else: `usingnamespace @import("x.zig");`, `_ = @import(..)`.
(builtin_function
  (builtin_identifier) @_import
  (arguments . (string (string_content) @import.path))
  (#eq? @_import "@import")) @import
