; Scala 2 and Scala 3 definitions and references (tree-sitter-scala). Scaladoc `/** */` blocks
; right above a definition are found by the generic doc-comment code (annotations and modifiers
; are children of the definition node).
;
; Compile time: tree-sitter analyzes every pattern step that names a node type and has child
; steps, walking the parse table from each place that type can occur, which is slow for this
; grammar's large expression and definition nodes (each costs up to ~10 ms, and a process
; compiles these files more than once). So a node whose type is implied by its fields, its
; keyword or its parent is a wildcard, equivalent for this grammar: in the places used here
; `(_ "val" pattern: ...)` is a val_definition, `(_ . value: _ field: ...)` a field_expression,
; `(_ . function: ... type_arguments: ...)` a generic_function, `(_ . function: ...
; arguments: ...)` a call_expression, `(_ . type: ... type_arguments: ...)` a generic_type and
; `(_ "." (type_identifier) .)` a stable_type_identifier. A wildcard is anchored (`.`) on its
; first child where it can be, so that matching drops it at once inside other nodes; patterns
; with the same root are merged; a wildcard root is only used with a keyword first child
; (`(_ "val" ...)`), where matching starts at that keyword.

; Types. An `object` is a class-like singleton whose members are methods (`Obj.apply`), as is
; a `given ... with { ... }` instance; `package object p` holds package-level members.
; A `name:` here is an identifier or an operator_identifier (`case class ::`, left out); an
; identifier starts with a letter, `$`, `_`, a backquote or `»`, an operator never does.
((class_definition name: (_) @name) @definition.class
  (#match? @name "^[\\p{L}\\p{Nl}$_`\\xBB]"))
((object_definition name: (_) @name) @definition.class
  (#match? @name "^[\\p{L}\\p{Nl}$_`\\xBB]"))
((trait_definition name: (_) @name) @definition.trait
  (#match? @name "^[\\p{L}\\p{Nl}$_`\\xBB]"))
((enum_definition name: (_) @name) @definition.enum
  (#match? @name "^[\\p{L}\\p{Nl}$_`\\xBB]"))
(simple_enum_case name: (identifier) @name) @definition.constant
(full_enum_case name: (identifier) @name) @definition.constant
; (A node with a `given` keyword, a `name:` and a `body:` is a given_definition.)
(_ "given" name: (identifier) @name body: (with_template_body)) @definition.class
(package_object name: (identifier) @name) @definition.module
; `package a.b { ... }` with a body nests what it holds; a plain `package a.b` clause is the
; file's package (imports.scm).
(package_clause name: (package_identifier) @name body: (_)) @definition.namespace

; Type aliases, opaque types and abstract type members.
(type_definition name: (type_identifier) @name) @definition.type

; Functions and abstract declarations; in a class, object, trait or enum they are methods. (A
; function's `name:` is an identifier or an operator_identifier.)
(function_definition name: (_) @name) @definition.function
(function_declaration name: (_) @name) @definition.function

; Members: `val`/`var`/`given x: T = ...` in a class, object, trait or enum body are fields,
; capitalized `val`s (`val MaxSize = 10`) constants; at the top level (Scala 3) variables.
; Locals inside function bodies are not definitions. Among the children of these bodies a
; node with a `pattern:` is a val_definition (`val`) or var_definition (`var`), and one with
; a `val`, `var` or `given` keyword and a `name:` a val_declaration, var_declaration or
; given_definition.
(template_body
  (_ "val" pattern: [(identifier) @name (identifiers (identifier) @name)]
    (#match? @name "^[A-Z]")) @definition.constant)
(template_body
  [
    (_ pattern: [(identifier) @name (identifiers (identifier) @name)])
    (_ ["val" "var" "given"] name: (identifier) @name)
  ] @definition.field)
(with_template_body
  (_ "val" pattern: [(identifier) @name (identifiers (identifier) @name)]
    (#match? @name "^[A-Z]")) @definition.constant)
(with_template_body
  [
    (_ pattern: [(identifier) @name (identifiers (identifier) @name)])
    (_ ["val" "var" "given"] name: (identifier) @name)
  ] @definition.field)
(enum_body
  (_ "val" pattern: [(identifier) @name (identifiers (identifier) @name)]
    (#match? @name "^[A-Z]")) @definition.constant)
(enum_body
  [
    (_ pattern: [(identifier) @name (identifiers (identifier) @name)])
    (_ ["val" "var" "given"] name: (identifier) @name)
  ] @definition.field)
(compilation_unit
  (_ "val" pattern: [(identifier) @name (identifiers (identifier) @name)]
    (#match? @name "^[A-Z]")) @definition.constant)
(compilation_unit
  [
    (_ pattern: [(identifier) @name (identifiers (identifier) @name)])
    (_ "given" name: (identifier) @name)
  ] @definition.variable)
; Case class parameters and `val`/`var` constructor parameters are fields.
(class_definition
  "case"
  class_parameters: (_
    (class_parameter name: (identifier) @name) @definition.field))
; (A class_parameter is a child of a class_parameters, and the only one with a `val`/`var`.)
(class_parameters (_ ["val" "var"] name: (identifier) @name) @definition.field)

; Calls. A call of a capitalized name is a construction through the companion's `apply`
; (`Point(1, 2)`, `Some(x)`, `geo.Point(1, 2)`).
(call_expression
  function: [
    (identifier) @name
    (_ . function: (identifier) @name type_arguments: (_))
    (_ . value: _ field: (identifier) @name)
    (_ . function: (_ . value: _ field: (identifier) @name) type_arguments: (_))
  ]
  (#match? @name "^[A-Z]")) @reference.class
(call_expression
  function: [
    (identifier) @name
    (_ . function: (identifier) @name type_arguments: (_))
    (_ . value: _ field: (identifier) @name)
    (_ . function: (_ . value: _ field: (identifier) @name) type_arguments: (_))
  ]
  ; `this(...)` in an auxiliary constructor is not a call by name.
  (#not-eq? @name "this")) @reference.call
; Type application without arguments: `Map.empty[String, Int]`.
(generic_function function: (_ . value: _ field: (identifier) @name)) @reference.call
; Alphanumeric infix calls: `xs map f`, `a max b`, `1 to n`.
((infix_expression operator: (_) @name @reference.call)
  (#match? @name "^[\\p{L}\\p{Nl}$_`\\xBB]"))

; `new Foo(x)`, `new a.b.Foo[T]`, `new Foo(x) with Mixin { ... }`. The constructed type is
; the first named child; of the types there only a compound_type has a `base:` or `extra:`
; (its mixins, after the base).
(instance_expression
  .
  [
    (type_identifier) @name
    (_ . type: (type_identifier) @name type_arguments: (_))
    (_ "." (type_identifier) @name .)
    (_ . type: (_ "." (type_identifier) @name .) type_arguments: (_))
    (_
      . base: [
        (type_identifier) @name
        (_ . type: (type_identifier) @name type_arguments: (_))
        (_ "." (type_identifier) @name .)
        (_ . type: (_ "." (type_identifier) @name .) type_arguments: (_))
        (applied_constructor_type
          [
            (type_identifier) @name
            (_ . type: (type_identifier) @name type_arguments: (_))
            (_ "." (type_identifier) @name .)
            (_ . type: (_ "." (type_identifier) @name .) type_arguments: (_))
          ])
      ])
  ]) @reference.class
(instance_expression
  .
  (_
    (_)
    .
    extra: [
      (type_identifier) @name
      (_ . type: (type_identifier) @name type_arguments: (_))
      (_ "." (type_identifier) @name .)
    ] @reference.implementation))

; `extends A(x) with B with C` / `extends A, B`: the first type is the base class, the rest
; are mixed-in traits.
(extends_clause
  .
  [
    (type_identifier) @name
    (_ . type: (type_identifier) @name type_arguments: (_))
    (_ "." (type_identifier) @name .)
    (_ . type: (_ "." (type_identifier) @name .) type_arguments: (_))
  ] @reference.class)
(extends_clause
  [
    (type_identifier) @name
    (_ . type: (type_identifier) @name type_arguments: (_))
    (_ "." (type_identifier) @name .)
    (_ . type: (_ "." (type_identifier) @name .) type_arguments: (_))
  ] @reference.implementation)

; Type uses: `a.b.Foo` keeps its path, then every other type name (annotations included).
(stable_type_identifier (type_identifier) @name .) @reference.type
((type_identifier) @name @reference.type
  (#match? @name "^[A-Za-z_$]"))

; Locals, parameters and fields whose type is visible: `val r: Repo = ...`,
; `val r = new Repo(db)`, `val r = Repo(db)`, `def f(repo: Repo)`, `class Svc(repo: Repo)`.
; Of a generic type only its name is kept (`List` of `List[Int]`). A node with a `val` (`var`)
; keyword and a `pattern:` is a val_definition (var_definition); a `value:` with a `new` first
; is an instance_expression.
(_
  "val"
  pattern: (identifier) @binding.name
  [
    type: (type_identifier) @binding.type
    type: (stable_type_identifier) @binding.type
    type: (_ . type: (_) @binding.type type_arguments: (_))
    value: (_ . "new" [(type_identifier) (stable_type_identifier)] @binding.value)
    value: (_ . "new" (_ . type: (_) @binding.value type_arguments: (_)))
    value: (_ . function: [(identifier) (field_expression)] @binding.value arguments: (_))
    value: (_ . function: (_ . function: (_) @binding.value type_arguments: (_)) arguments: (_))
  ]) @binding
(_
  "var"
  pattern: (identifier) @binding.name
  [
    type: (type_identifier) @binding.type
    type: (stable_type_identifier) @binding.type
    type: (_ . type: (_) @binding.type type_arguments: (_))
    value: (_ . "new" [(type_identifier) (stable_type_identifier)] @binding.value)
    value: (_ . "new" (_ . type: (_) @binding.value type_arguments: (_)))
    value: (_ . function: [(identifier) (field_expression)] @binding.value arguments: (_))
    value: (_ . function: (_ . function: (_) @binding.value type_arguments: (_)) arguments: (_))
  ]) @binding
; A parameter is a child of a parameters or a given_conditional, a class_parameter of a
; class_parameters; there they are the only children with a `name:` and a `type:`.
(parameters
  (_
    name: (identifier) @binding.name
    type: [
      (type_identifier) @binding.type
      (stable_type_identifier) @binding.type
      (_ . type: (_) @binding.type type_arguments: (_))
    ]) @binding)
(given_conditional
  (_
    name: (identifier) @binding.name
    type: [
      (type_identifier) @binding.type
      (stable_type_identifier) @binding.type
      (_ . type: (_) @binding.type type_arguments: (_))
    ]) @binding)
(class_parameters
  (_
    name: (identifier) @binding.name
    type: [
      (type_identifier) @binding.type
      (stable_type_identifier) @binding.type
      (_ . type: (_) @binding.type type_arguments: (_))
    ]) @binding)
