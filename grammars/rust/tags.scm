; Rust definitions and references. Methods are functions inside an impl or trait; the
; extractor turns a function whose container holds methods into a method.

(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(enum_variant name: (identifier) @name) @definition.constant
(type_item name: (type_identifier) @name) @definition.type
(trait_item name: (type_identifier) @name) @definition.trait
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.macro
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.constant
(field_declaration name: (field_identifier) @name) @definition.field
(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function

; An impl block is the container of its methods, named after the implementing type.
(impl_item
  type: [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
    (reference_type type: (type_identifier) @name)
  ]) @definition.impl

; Calls: plain, method, path-qualified and turbofish forms; macros count as calls.
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
(call_expression
  function: (generic_function
    function: [
      (identifier) @name
      (scoped_identifier name: (identifier) @name)
      (field_expression field: (field_identifier) @name)
    ])) @reference.call
(macro_invocation macro: (identifier) @name) @reference.call
(macro_invocation macro: (scoped_identifier name: (identifier) @name)) @reference.call
; Macro arguments and `macro_rules!` bodies are token trees, not expressions: `name(` inside
; them is read as a call when it starts an argument (`assert_eq!(parse(s), x)`) or follows a
; path or a receiver (`T::f(`, `a.len(`), so a test that calls through a macro reaches what
; the macro calls.
(token_tree
  ["(" "," "[" "{" "=" ";" "&" "!" "*" "." "::"]
  .
  (identifier) @name @reference.call
  .
  (token_tree . "("))

; Struct literals construct the type.
(struct_expression name: (type_identifier) @name) @reference.class
(struct_expression name: (scoped_type_identifier name: (type_identifier) @name)) @reference.class

; Trait implementations.
(impl_item
  trait: [
    (type_identifier) @name
    (scoped_type_identifier name: (type_identifier) @name)
    (generic_type type: (type_identifier) @name)
    (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
  ]) @reference.implementation

; Every other mention of a type name.
(type_identifier) @name @reference.type

; Local variables whose type is visible: `let c: Cache = ..`, `let c = Cache::new()`,
; `let p = Point { .. }`.
(let_declaration
  pattern: (identifier) @binding.name
  type: (_) @binding.type) @binding
(let_declaration
  pattern: (identifier) @binding.name
  value: [
    (call_expression function: [(identifier) (scoped_identifier)] @binding.value)
    (try_expression (call_expression function: [(identifier) (scoped_identifier)] @binding.value))
    (struct_expression name: (_) @binding.value)
  ]) @binding
