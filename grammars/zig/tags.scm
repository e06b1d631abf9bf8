; Zig definitions and references. Containers are values bound by `const`: the declaration
; `pub const Point = struct { ... }` is the definition, so functions inside become methods
; (`Point.add`) and `///` comments above it are found generically.

; Containers.
(variable_declaration (identifier) @name . (struct_declaration)) @definition.struct
(variable_declaration (identifier) @name . (union_declaration)) @definition.struct
(variable_declaration (identifier) @name . (opaque_declaration)) @definition.struct
(variable_declaration (identifier) @name . (enum_declaration)) @definition.enum
(variable_declaration (identifier) @name . (error_set_declaration)) @definition.enum

; A generic type: `fn List(comptime T: type) type { return struct { ... }; }`.
(function_declaration
  name: (identifier) @name
  type: (builtin_type) @_type
  body: (block
    (expression_statement
      (return_expression [(struct_declaration) (union_declaration) (enum_declaration)])))
  (#eq? @_type "type")) @definition.struct

(function_declaration name: (identifier) @name) @definition.function

; `test "adds points" { ... }` (a decltest `test add { }` names a declaration: not a new one).
(test_declaration (string (string_content) @name)) @definition.function

; Enum values and error names are constants; container fields are fields.
(enum_declaration
  (container_field name: (identifier) @name (#match? @name "[A-Za-z0-9]")) @definition.constant)
(error_set_declaration (identifier) @name @definition.constant)
(container_field name: (identifier) @name (#match? @name "[A-Za-z0-9]")) @definition.field

; Declarations of the file and of containers (not locals): `const`s and `var`s, but not
; `const std = @import("std")` or `const Foo = @import("foo.zig").Foo`, which are imports.
(source_file
  (variable_declaration "const" . (identifier) @name . (_)? @_value) @definition.constant
  (#not-match? @_value "^@import\\([^)]*\\)(\\.[A-Za-z_][A-Za-z0-9_]*)?$"))
(source_file
  (variable_declaration "var" . (identifier) @name) @definition.variable)
(struct_declaration
  (variable_declaration "const" . (identifier) @name . (_)? @_value) @definition.constant
  (#not-match? @_value "^@import\\([^)]*\\)(\\.[A-Za-z_][A-Za-z0-9_]*)?$"))
(struct_declaration (variable_declaration "var" . (identifier) @name) @definition.variable)
(union_declaration
  (variable_declaration "const" . (identifier) @name . (_)? @_value) @definition.constant
  (#not-match? @_value "^@import\\([^)]*\\)(\\.[A-Za-z_][A-Za-z0-9_]*)?$"))
(union_declaration (variable_declaration "var" . (identifier) @name) @definition.variable)
(enum_declaration
  (variable_declaration "const" . (identifier) @name . (_)? @_value) @definition.constant
  (#not-match? @_value "^@import\\([^)]*\\)(\\.[A-Za-z_][A-Za-z0-9_]*)?$"))
(enum_declaration (variable_declaration "var" . (identifier) @name) @definition.variable)
(opaque_declaration
  (variable_declaration "const" . (identifier) @name . (_)? @_value) @definition.constant
  (#not-match? @_value "^@import\\([^)]*\\)(\\.[A-Za-z_][A-Za-z0-9_]*)?$"))
(opaque_declaration (variable_declaration "var" . (identifier) @name) @definition.variable)

; Calls: `f()`, `obj.m()`, `std.debug.print()` (receiver `std.debug`).
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression member: (identifier) @name)) @reference.call

; Instantiation: `Point{ .x = 1 }`, `geo.Point{ ... }`.
(struct_initializer (identifier) @name) @reference.class
(struct_initializer (field_expression member: (identifier) @name)) @reference.class

; Type uses: a `type:` field (parameters, results, fields, declarations) and what type
; syntax wraps (`*T`, `?T`, `[]T`, `[N]T`, `E!T`).
(_ type: (identifier) @name @reference.type)
(_ type: (field_expression member: (identifier) @name) @reference.type)
(pointer_type (identifier) @name @reference.type)
(pointer_type (field_expression member: (identifier) @name) @reference.type)
(nullable_type (identifier) @name @reference.type)
(nullable_type (field_expression member: (identifier) @name) @reference.type)
(slice_type (identifier) @name @reference.type)
(slice_type (field_expression member: (identifier) @name) @reference.type)
(error_union_type (identifier) @name @reference.type)
(error_union_type (field_expression member: (identifier) @name) @reference.type)
(array_type (identifier) @name @reference.type .)
(array_type (field_expression member: (identifier) @name) @reference.type .)
; A TitleCase argument is a type by Zig's naming convention: `ArrayList(Point)`, `@sizeOf(T)`.
(call_expression (identifier) @name @reference.type (#match? @name "^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$"))
(builtin_function
  (arguments (identifier) @name @reference.type)
  (#match? @name "^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$"))

; Locals whose type is visible: `var p: Point = ...`, `const p = Point{ ... }`,
; `var list = try List.init(a)`.
(variable_declaration
  (identifier) @binding.name
  type: (_) @binding.type
  (#not-eq? @binding.name "_")) @binding
(variable_declaration
  (identifier) @binding.name
  .
  (struct_initializer [(identifier) (field_expression)] @binding.value)) @binding
(variable_declaration
  (identifier) @binding.name
  .
  [
    (call_expression function: [(identifier) (field_expression)] @binding.value)
    (try_expression (call_expression function: [(identifier) (field_expression)] @binding.value))
  ]
  (#not-eq? @binding.name "_")) @binding
