; Scala 2 and Scala 3 definitions and references (tree-sitter-scala). Scaladoc `/** */` blocks
; right above a definition are found by the generic doc-comment code (annotations and modifiers
; are children of the definition node).

; Types. An `object` is a class-like singleton whose members are methods (`Obj.apply`), as is
; a `given ... with { ... }` instance; `package object p` holds package-level members.
(class_definition name: (identifier) @name) @definition.class
(object_definition name: (identifier) @name) @definition.class
(trait_definition name: (identifier) @name) @definition.trait
(enum_definition name: (identifier) @name) @definition.enum
(simple_enum_case name: (identifier) @name) @definition.constant
(full_enum_case name: (identifier) @name) @definition.constant
(given_definition name: (identifier) @name body: (with_template_body)) @definition.class
(package_object name: (identifier) @name) @definition.module
; `package a.b { ... }` with a body nests what it holds; a plain `package a.b` clause is the
; file's package (imports.scm).
(package_clause name: (package_identifier) @name body: (_)) @definition.namespace

; Type aliases, opaque types and abstract type members.
(type_definition name: (type_identifier) @name) @definition.type

; Functions and abstract declarations; in a class, object, trait or enum they are methods.
(function_definition name: [(identifier) (operator_identifier)] @name) @definition.function
(function_declaration name: [(identifier) (operator_identifier)] @name) @definition.function

; Members: `val`/`var`/`given x: T = ...` in a class, object, trait or enum body are fields,
; capitalized `val`s (`val MaxSize = 10`) constants; at the top level (Scala 3) variables.
; Locals inside function bodies are not definitions.
(template_body
  (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)]
    (#match? @name "^[A-Z]")) @definition.constant)
(template_body
  [
    (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
    (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
    (val_declaration name: (identifier) @name)
    (var_declaration name: (identifier) @name)
    (given_definition name: (identifier) @name)
  ] @definition.field)
(with_template_body
  (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)]
    (#match? @name "^[A-Z]")) @definition.constant)
(with_template_body
  [
    (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
    (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
    (val_declaration name: (identifier) @name)
    (var_declaration name: (identifier) @name)
    (given_definition name: (identifier) @name)
  ] @definition.field)
(enum_body
  (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)]
    (#match? @name "^[A-Z]")) @definition.constant)
(enum_body
  [
    (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
    (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
    (val_declaration name: (identifier) @name)
    (var_declaration name: (identifier) @name)
    (given_definition name: (identifier) @name)
  ] @definition.field)
(compilation_unit
  (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)]
    (#match? @name "^[A-Z]")) @definition.constant)
(compilation_unit
  [
    (val_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
    (var_definition pattern: [(identifier) @name (identifiers (identifier) @name)])
    (given_definition name: (identifier) @name)
  ] @definition.variable)
; Case class parameters and `val`/`var` constructor parameters are fields.
(class_definition
  "case"
  class_parameters: (class_parameters
    (class_parameter name: (identifier) @name) @definition.field))
(class_parameter ["val" "var"] name: (identifier) @name) @definition.field

; Calls. A call of a capitalized name is a construction through the companion's `apply`
; (`Point(1, 2)`, `Some(x)`, `geo.Point(1, 2)`).
(call_expression
  function: [
    (identifier) @name
    (generic_function function: (identifier) @name)
  ]
  (#match? @name "^[A-Z]")) @reference.class
(call_expression
  function: [
    (field_expression field: (identifier) @name)
    (generic_function function: (field_expression field: (identifier) @name))
  ]
  (#match? @name "^[A-Z]")) @reference.class
(call_expression
  function: [
    (identifier) @name
    (generic_function function: (identifier) @name)
    (field_expression field: (identifier) @name)
    (generic_function function: (field_expression field: (identifier) @name))
  ]
  ; `this(...)` in an auxiliary constructor is not a call by name.
  (#not-eq? @name "this")) @reference.call
; Type application without arguments: `Map.empty[String, Int]`.
(generic_function function: (field_expression field: (identifier) @name)) @reference.call
; Alphanumeric infix calls: `xs map f`, `a max b`, `1 to n`.
(infix_expression operator: (identifier) @name @reference.call)

; `new Foo(x)`, `new a.b.Foo[T]`, `new Foo(x) with Mixin { ... }`.
(instance_expression
  [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (stable_type_identifier (type_identifier) @name .)
    (generic_type type: (stable_type_identifier (type_identifier) @name .))
    (compound_type
      base: [
        (type_identifier) @name
        (generic_type type: (type_identifier) @name)
        (stable_type_identifier (type_identifier) @name .)
        (generic_type type: (stable_type_identifier (type_identifier) @name .))
        (applied_constructor_type
          [
            (type_identifier) @name
            (generic_type type: (type_identifier) @name)
            (stable_type_identifier (type_identifier) @name .)
            (generic_type type: (stable_type_identifier (type_identifier) @name .))
          ])
      ])
  ]) @reference.class
(instance_expression
  (compound_type
    (_)
    .
    [
      (type_identifier) @name
      (generic_type type: (type_identifier) @name)
      (stable_type_identifier (type_identifier) @name .)
    ] @reference.implementation))

; `extends A(x) with B with C` / `extends A, B`: the first type is the base class, the rest
; are mixed-in traits.
(extends_clause
  .
  [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (stable_type_identifier (type_identifier) @name .)
    (generic_type type: (stable_type_identifier (type_identifier) @name .))
  ] @reference.class)
(extends_clause
  [
    (type_identifier) @name
    (generic_type type: (type_identifier) @name)
    (stable_type_identifier (type_identifier) @name .)
    (generic_type type: (stable_type_identifier (type_identifier) @name .))
  ] @reference.implementation)

; Type uses: `a.b.Foo` keeps its path, then every other type name (annotations included).
(stable_type_identifier (type_identifier) @name .) @reference.type
((type_identifier) @name @reference.type
  (#match? @name "^[A-Za-z_$]"))

; Locals, parameters and fields whose type is visible: `val r: Repo = ...`,
; `val r = new Repo(db)`, `val r = Repo(db)`, `def f(repo: Repo)`, `class Svc(repo: Repo)`.
; Of a generic type only its name is kept (`List` of `List[Int]`).
(val_definition
  pattern: (identifier) @binding.name
  type: [(type_identifier) (stable_type_identifier)] @binding.type) @binding
(val_definition
  pattern: (identifier) @binding.name
  type: (generic_type type: (_) @binding.type)) @binding
(val_definition
  pattern: (identifier) @binding.name
  value: (instance_expression [(type_identifier) (stable_type_identifier)] @binding.value)) @binding
(val_definition
  pattern: (identifier) @binding.name
  value: (instance_expression (generic_type type: (_) @binding.value))) @binding
(val_definition
  pattern: (identifier) @binding.name
  value: (call_expression function: [(identifier) (field_expression)] @binding.value)) @binding
(val_definition
  pattern: (identifier) @binding.name
  value: (call_expression function: (generic_function function: (_) @binding.value))) @binding
(var_definition
  pattern: (identifier) @binding.name
  type: [(type_identifier) (stable_type_identifier)] @binding.type) @binding
(var_definition
  pattern: (identifier) @binding.name
  type: (generic_type type: (_) @binding.type)) @binding
(var_definition
  pattern: (identifier) @binding.name
  value: (instance_expression [(type_identifier) (stable_type_identifier)] @binding.value)) @binding
(var_definition
  pattern: (identifier) @binding.name
  value: (instance_expression (generic_type type: (_) @binding.value))) @binding
(var_definition
  pattern: (identifier) @binding.name
  value: (call_expression function: [(identifier) (field_expression)] @binding.value)) @binding
(var_definition
  pattern: (identifier) @binding.name
  value: (call_expression function: (generic_function function: (_) @binding.value))) @binding
(parameter
  name: (identifier) @binding.name
  type: [(type_identifier) (stable_type_identifier)] @binding.type) @binding
(parameter
  name: (identifier) @binding.name
  type: (generic_type type: (_) @binding.type)) @binding
(class_parameter
  name: (identifier) @binding.name
  type: [(type_identifier) (stable_type_identifier)] @binding.type) @binding
(class_parameter
  name: (identifier) @binding.name
  type: (generic_type type: (_) @binding.type)) @binding
