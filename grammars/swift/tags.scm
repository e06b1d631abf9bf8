; Swift definitions and references. `class`, `struct`, `enum`, `actor` and `extension` all
; parse as class_declaration, told apart by the declaration_kind keyword. An extension is an
; impl named after the extended type (the last component of `Outer.Inner`), so the methods,
; properties and nested types it declares come out as `Type.member`.

(class_declaration declaration_kind: "class" name: (type_identifier) @name) @definition.class
(class_declaration declaration_kind: "actor" name: (type_identifier) @name) @definition.class
(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @definition.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @definition.enum
(class_declaration
  declaration_kind: "extension"
  name: (user_type (type_identifier) @name .)) @definition.impl
(class_declaration
  declaration_kind: "extension"
  name: (user_type (type_identifier) @name . (type_arguments) .)) @definition.impl
(protocol_declaration name: (type_identifier) @name) @definition.interface

; Functions become methods inside a type, protocol or extension; `init` and `subscript` are
; named by their keyword. Operator functions (`static func ==`) are left out.
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.function
(init_declaration name: "init" @name) @definition.function
(subscript_declaration "subscript" @name) @definition.function
(macro_declaration (simple_identifier) @name) @definition.macro

(typealias_declaration name: (type_identifier) @name) @definition.type
(associatedtype_declaration name: (type_identifier) @name) @definition.type
(enum_entry name: (simple_identifier) @name) @definition.constant

; Stored and computed properties of types, protocol requirements, and globals (`let` is a
; constant, `var` a variable). Locals inside functions are not definitions.
(class_body
  (property_declaration
    name: (pattern bound_identifier: (simple_identifier) @name)) @definition.field)
(enum_class_body
  (property_declaration
    name: (pattern bound_identifier: (simple_identifier) @name)) @definition.field)
(protocol_body
  (protocol_property_declaration
    name: (pattern bound_identifier: (simple_identifier) @name)) @definition.field)
(source_file
  (property_declaration
    (value_binding_pattern mutability: "let")
    name: (pattern bound_identifier: (simple_identifier) @name)) @definition.constant)
(source_file
  (property_declaration
    (value_binding_pattern mutability: "var")
    name: (pattern bound_identifier: (simple_identifier) @name)) @definition.variable)

; A call_expression is a call when its suffix has parenthesized arguments or a trailing
; closure; `a[i]` (a subscript) is a call_expression with bracketed arguments.

; Initializer calls: a capitalized callee (`Circle(radius: 1)`, `Foundation.Date()`),
; `Circle.init(radius:)` and generic `Box<Int>()`. XCTest assertions and a few Foundation C
; functions are capitalized functions.
((call_expression
  . (simple_identifier) @name
  . (call_suffix [(value_arguments "(") (lambda_literal)])) @reference.class
  (#match? @name "^[A-Z]")
  (#not-match? @name "^(XCT|NSLog$|NSLocalizedString$|NSStringFrom|NS[A-Za-z]*FromString$|CG[A-Za-z]*Make$)"))
((call_expression
  . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name))
  . (call_suffix [(value_arguments "(") (lambda_literal)])) @reference.class
  (#match? @name "^[A-Z]"))
((call_expression
  . (navigation_expression
      target: (simple_identifier) @name
      suffix: (navigation_suffix suffix: (simple_identifier) @_init))) @reference.class
  (#eq? @_init "init")
  (#match? @name "^[A-Z]"))
(constructor_expression
  constructed_type: (user_type (type_identifier) @name . (type_arguments))) @reference.class

; Calls: `f()`, `obj.m()`, `a?.m()`, `xs.map { ... }` (the grammar reads `defer { ... }` as a
; call with a trailing closure).
((call_expression
  . (simple_identifier) @name
  . (call_suffix [(value_arguments "(") (lambda_literal)])) @reference.call
  (#not-eq? @name "defer"))
(call_expression
  . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name))
  . (call_suffix [(value_arguments "(") (lambda_literal)])) @reference.call

; The grammar reads `a + f(x)`, `a * f(x)` and `-f(x)` as a call of `a + f`: the callee is the
; operator's right operand (and `.init(...)`/`.member(...)` is a prefix `.` expression).
((call_expression
  . [
    (additive_expression rhs: (simple_identifier) @name @reference.class)
    (multiplicative_expression rhs: (simple_identifier) @name @reference.class)
    (prefix_expression target: (simple_identifier) @name @reference.class)
  ]
  . (call_suffix [(value_arguments "(") (lambda_literal)]))
  (#match? @name "^[A-Z]"))
(call_expression
  . [
    (additive_expression rhs: (simple_identifier) @name @reference.call)
    (multiplicative_expression rhs: (simple_identifier) @name @reference.call)
    (prefix_expression target: (simple_identifier) @name @reference.call)
  ]
  . (call_suffix [(value_arguments "(") (lambda_literal)]))
(call_expression
  . [
    (additive_expression
      rhs: (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name)) @reference.call)
    (multiplicative_expression
      rhs: (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name)) @reference.call)
    (prefix_expression
      target: (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name)) @reference.call)
  ]
  . (call_suffix [(value_arguments "(") (lambda_literal)]))

; Inheritance: the first entry of a class's list is its superclass (or a protocol: the
; grammar cannot tell); every other entry, and every entry of a struct, enum, actor,
; extension or protocol, is a protocol conformance.
(class_declaration
  declaration_kind: "class"
  name: (_)
  .
  (inheritance_specifier
    inherits_from: [
      (user_type (type_identifier) @name .)
      (user_type (type_identifier) @name . (type_arguments) .)
    ]) @reference.class)
(class_declaration
  declaration_kind: "class"
  (type_parameters)
  .
  (inheritance_specifier
    inherits_from: [
      (user_type (type_identifier) @name .)
      (user_type (type_identifier) @name . (type_arguments) .)
    ]) @reference.class)
(inheritance_specifier
  inherits_from: [
    (user_type (type_identifier) @name .)
    (user_type (type_identifier) @name . (type_arguments) .)
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
; `let c = Cache(...)`, `let c = Box<Int>()`, `let c = try await Cache.load()`.
(property_declaration
  name: (pattern bound_identifier: (simple_identifier) @binding.name)
  (type_annotation
    [
      (user_type) @binding.type
      (optional_type wrapped: (user_type) @binding.type)
    ])) @binding
(property_declaration
  name: (pattern bound_identifier: (simple_identifier) @binding.name)
  value: [
    (call_expression
      . (simple_identifier) @binding.value
      . (call_suffix [(value_arguments "(") (lambda_literal)]))
    (constructor_expression constructed_type: (_) @binding.value)
    (try_expression
      (call_expression
        . (simple_identifier) @binding.value
        . (call_suffix [(value_arguments "(") (lambda_literal)])))
    (await_expression
      (call_expression
        . (simple_identifier) @binding.value
        . (call_suffix [(value_arguments "(") (lambda_literal)])))
    (try_expression
      (await_expression
        (call_expression
          . (simple_identifier) @binding.value
          . (call_suffix [(value_arguments "(") (lambda_literal)]))))
  ]) @binding
; `Cache.init(...)` binds the type itself.
((property_declaration
  name: (pattern bound_identifier: (simple_identifier) @binding.name)
  value: [
    (call_expression
      . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @_m)) @binding.value
      . (call_suffix [(value_arguments "(") (lambda_literal)]))
    (try_expression
      (call_expression
        . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @_m)) @binding.value
        . (call_suffix [(value_arguments "(") (lambda_literal)])))
    (await_expression
      (call_expression
        . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @_m)) @binding.value
        . (call_suffix [(value_arguments "(") (lambda_literal)])))
    (try_expression
      (await_expression
        (call_expression
          . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @_m)) @binding.value
          . (call_suffix [(value_arguments "(") (lambda_literal)]))))
  ]) @binding
  (#not-eq? @_m "init"))
((property_declaration
  name: (pattern bound_identifier: (simple_identifier) @binding.name)
  value: (call_expression
    . (navigation_expression
        target: (_) @binding.value
        suffix: (navigation_suffix suffix: (simple_identifier) @_init)))) @binding
  (#eq? @_init "init"))
