; Swift definitions and references. `class`, `struct`, `enum`, `actor` and `extension` all
; parse as class_declaration, told apart by the declaration_kind keyword. An extension is an
; impl named after the extended type (the last component of `Outer.Inner`), so the methods,
; properties and nested types it declares come out as `Type.member`.
;
; Compile time: tree-sitter analyzes every pattern step that names a node type and has child
; steps, walking the parse table from each place that type can occur; for this grammar's
; expression and declaration nodes that walk is expensive (up to ~0.1 s for one step, and a
; process compiles these files more than once). So a node whose type is implied by its fields
; or children is a wildcard (`(_ . target: _ suffix: (navigation_suffix))` is a
; navigation_expression: no other node has a navigation_suffix), keywords are matched with
; `_` and a predicate (`declaration_kind: _ @_kind`), and patterns with the same root are
; merged. Each rewrite is equivalent for this grammar; the comments say why. A wildcard is
; anchored (`.`) on its first child where it can be, so that matching drops it at once inside
; other nodes; a wildcard root is only used with a distinctive first child (`(_ "func" ...)`),
; where matching starts at that child.

; The name of a class, actor, struct or enum is always a type_identifier. An extension's
; name is a type; the wildcards below are user_type: the only type whose last named child
; can be a type_identifier is a user_type, a bracket_qualified_type (`[A].B`, starting with
; `[`) or a suppressed_constraint (`~A`), and only a user_type has type_arguments.
((class_declaration declaration_kind: _ @_kind name: (_) @name) @definition.class
  (#any-of? @_kind "class" "actor"))
((class_declaration declaration_kind: _ @_kind name: (_) @name) @definition.struct
  (#eq? @_kind "struct"))
((class_declaration declaration_kind: _ @_kind name: (_) @name) @definition.enum
  (#eq? @_kind "enum"))
((class_declaration
  declaration_kind: _ @_kind
  name: (_ (type_identifier) @name .) @_type) @definition.impl
  (#eq? @_kind "extension")
  (#not-match? @_type "^[\\[~]"))
((class_declaration
  declaration_kind: _ @_kind
  name: (_ (type_identifier) @name . (type_arguments) .)) @definition.impl
  (#eq? @_kind "extension"))
(protocol_declaration name: (type_identifier) @name) @definition.interface

; Functions become methods inside a type, protocol or extension; `init` and `subscript` are
; named by their keyword. Operator functions (`static func ==`) are left out. Only a
; function_declaration or a protocol_function_declaration has a `func` keyword followed by
; a `name:` (an import's `func` has no name field).
(_ "func" name: (simple_identifier) @name) @definition.function
(init_declaration name: "init" @name) @definition.function
(subscript_declaration "subscript" @name) @definition.function
(macro_declaration (simple_identifier) @name) @definition.macro

(typealias_declaration name: (type_identifier) @name) @definition.type
(associatedtype_declaration name: (type_identifier) @name) @definition.type
(enum_entry name: (simple_identifier) @name) @definition.constant

; Stored and computed properties of types, protocol requirements, and globals (`let` is a
; constant, `var` a variable). Locals inside functions are not definitions. Only a pattern
; has a `bound_identifier:` under a `name:`, and only a value_binding_pattern a `mutability:`.
(class_body
  (property_declaration
    name: (_ bound_identifier: (simple_identifier) @name)) @definition.field)
(enum_class_body
  (property_declaration
    name: (_ bound_identifier: (simple_identifier) @name)) @definition.field)
(protocol_body
  (protocol_property_declaration
    name: (_ bound_identifier: (simple_identifier) @name)) @definition.field)
(source_file
  (property_declaration
    (_ mutability: "let")
    name: (_ bound_identifier: (simple_identifier) @name)) @definition.constant)
(source_file
  (property_declaration
    (_ mutability: "var")
    name: (_ bound_identifier: (simple_identifier) @name)) @definition.variable)

; A call_expression is a call when its suffix has parenthesized arguments or a trailing
; closure; `a[i]` (a subscript) is a call_expression with bracketed arguments.

; Initializer calls: a capitalized callee (`Circle(radius: 1)`, `Foundation.Date()`),
; `Circle.init(radius:)` and generic `Box<Int>()`. XCTest assertions and a few Foundation C
; functions are capitalized functions. (A node with a `suffix:` navigation_suffix is a
; navigation_expression; of the constructible types only a user_type has type_arguments.)
((call_expression
  . [
    ((simple_identifier) @name @_callee
      . (call_suffix [(value_arguments "(") (lambda_literal)]))
    ((_ . target: _ suffix: (navigation_suffix suffix: (simple_identifier) @name))
      . (call_suffix [(value_arguments "(") (lambda_literal)]))
    (_
      . target: (simple_identifier) @name
      suffix: (navigation_suffix suffix: (simple_identifier) @_init))
  ]) @reference.class
  (#match? @name "^[A-Z]")
  (#not-match? @_callee "^(XCT|NSLog$|NSLocalizedString$|NSStringFrom|NS[A-Za-z]*FromString$|CG[A-Za-z]*Make$)")
  (#eq? @_init "init"))
(constructor_expression
  constructed_type: (_ (type_identifier) @name . (type_arguments))) @reference.class

; Calls: `f()`, `obj.m()`, `a?.m()`, `xs.map { ... }` (the grammar reads `defer { ... }` as a
; call with a trailing closure).
((call_expression
  . [
    (simple_identifier) @name @_callee
    (_ . target: _ suffix: (navigation_suffix suffix: (simple_identifier) @name))
  ]
  . (call_suffix [(value_arguments "(") (lambda_literal)])) @reference.call
  (#not-eq? @_callee "defer"))

; The grammar reads `a + f(x)`, `a * f(x)` and `-f(x)` as a call of `a + f`: the callee is the
; operator's right operand (and `.init(...)`/`.member(...)` is a prefix `.` expression).
; Of the nodes with an `op:` and a `rhs:` only additive_expression (`+ -`) and
; multiplicative_expression (`* / %`) have these operators (a custom_operator is never one
; of them); of those with an `operation:` and a `target:` only a prefix_expression has the
; operation first.
((call_expression
  . [
    (_ . lhs: _ op: _ @_op rhs: (simple_identifier) @name @reference.class)
    (_ . operation: _ target: (simple_identifier) @name @reference.class)
  ]
  . (call_suffix [(value_arguments "(") (lambda_literal)]))
  (#any-of? @_op "+" "-" "*" "/" "%")
  (#match? @name "^[A-Z]"))
((call_expression
  . [
    (_ . lhs: _ op: _ @_op rhs: (simple_identifier) @name @reference.call)
    (_ . operation: _ target: (simple_identifier) @name @reference.call)
    (_
      . lhs: _
      op: _ @_op
      rhs: (_ . target: _ suffix: (navigation_suffix suffix: (simple_identifier) @name)) @reference.call)
    (_
      . operation: _
      target: (_ . target: _ suffix: (navigation_suffix suffix: (simple_identifier) @name)) @reference.call)
  ]
  . (call_suffix [(value_arguments "(") (lambda_literal)]))
  (#any-of? @_op "+" "-" "*" "/" "%"))

; Inheritance: the first entry of a class's list is its superclass (or a protocol: the
; grammar cannot tell); every other entry, and every entry of a struct, enum, actor,
; extension or protocol, is a protocol conformance. An `inherits_from:` is a user_type, a
; function_type or a suppressed_constraint (`~Copyable`, whose type_identifier is its
; `suppressed:`): the wildcards are user_type.
((class_declaration
  declaration_kind: _ @_kind
  name: (_)
  .
  (inheritance_specifier
    inherits_from: [
      (_ !suppressed (type_identifier) @name .)
      (_ (type_identifier) @name . (type_arguments) .)
    ]) @reference.class)
  (#eq? @_kind "class"))
((class_declaration
  declaration_kind: _ @_kind
  (type_parameters)
  .
  (inheritance_specifier
    inherits_from: [
      (_ !suppressed (type_identifier) @name .)
      (_ (type_identifier) @name . (type_arguments) .)
    ]) @reference.class)
  (#eq? @_kind "class"))
(inheritance_specifier
  inherits_from: [
    (_ !suppressed (type_identifier) @name .)
    (_ (type_identifier) @name . (type_arguments) .)
  ]) @reference.implementation

; Every other mention of a type name. Lowercase names are attributes (`@testable`,
; `@available`, `@objc`, `@escaping`), never types by Swift's conventions; the Interface
; Builder and Core Data markers are attributes too.
((type_identifier) @name @reference.type
  (#match? @name "^[A-Z]")
  (#not-any-of? @name
    "IBAction" "IBOutlet" "IBInspectable" "IBDesignable" "IBSegueAction" "NSManaged"
    "NSCopying" "GKInspectable" "UIApplicationMain" "NSApplicationMain"))

; Variables and properties whose type is visible: `let c: Cache`, `var c: Cache?`,
; `let c = Cache(...)`, `let c = Box<Int>()`, `let c = try await Cache.load()`,
; `let c = Cache.init(...)` (binds the type itself). The patterns start at the
; value_binding_pattern: only a property_declaration has a value_binding_pattern child and a
; `name:` (a pattern, the only node with a `bound_identifier:` there; a
; protocol_property_declaration's value_binding_pattern is inside its pattern). A node
; holding a call_suffix is a call_expression or a macro_invocation (`#m(...)`, whose text
; starts with `#` and whose first child is a simple_identifier, never a navigation).
(_
  (value_binding_pattern)
  name: (_ bound_identifier: (simple_identifier) @binding.name)
  (type_annotation
    [
      (user_type) @binding.type
      (optional_type wrapped: (user_type) @binding.type)
    ])) @binding
((_
  (value_binding_pattern)
  name: (_ bound_identifier: (simple_identifier) @binding.name)
  value: [
    (_ . (simple_identifier) @binding.value . (call_suffix [(value_arguments "(") (lambda_literal)])) @_macro_or_call
    (_
      . (_ . target: _ suffix: (navigation_suffix suffix: (simple_identifier) @_method)) @binding.value
      . (call_suffix [(value_arguments "(") (lambda_literal)]))
    (try_expression
      [
        (_ . (simple_identifier) @binding.value . (call_suffix [(value_arguments "(") (lambda_literal)])) @_macro_or_call
        (_
          . (_ . target: _ suffix: (navigation_suffix suffix: (simple_identifier) @_method)) @binding.value
          . (call_suffix [(value_arguments "(") (lambda_literal)]))
        (await_expression
          [
            (_ . (simple_identifier) @binding.value . (call_suffix [(value_arguments "(") (lambda_literal)])) @_macro_or_call
            (_
              . (_ . target: _ suffix: (navigation_suffix suffix: (simple_identifier) @_method)) @binding.value
              . (call_suffix [(value_arguments "(") (lambda_literal)]))
          ])
      ])
    (await_expression
      [
        (_ . (simple_identifier) @binding.value . (call_suffix [(value_arguments "(") (lambda_literal)])) @_macro_or_call
        (_
          . (_ . target: _ suffix: (navigation_suffix suffix: (simple_identifier) @_method)) @binding.value
          . (call_suffix [(value_arguments "(") (lambda_literal)]))
      ])
    (constructor_expression constructed_type: (_) @binding.value)
    (_
      . (_ . target: (_) @binding.value suffix: (navigation_suffix suffix: (simple_identifier) @_init))
      (call_suffix))
  ]) @binding
  (#not-match? @_macro_or_call "^#")
  (#not-eq? @_method "init")
  (#eq? @_init "init"))
