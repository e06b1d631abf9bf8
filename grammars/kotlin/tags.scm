; Kotlin definitions and references (tree-sitter-kotlin-ng). KDoc `/** */` blocks right above a
; declaration are found by the generic doc-comment code; annotations live inside `modifiers`.

; Classes: `interface` and `enum class` first, then every other class form (data, sealed,
; abstract, inner, annotation, value classes).
(class_declaration "interface" name: (identifier) @name) @definition.interface
(class_declaration
  (modifiers (class_modifier) @_enum)
  name: (identifier) @name
  (#eq? @_enum "enum")) @definition.enum
(class_declaration name: (identifier) @name) @definition.class

; `object Foo` singletons and named companion objects (an unnamed companion is not a
; definition: its members are qualified by the enclosing class, as Kotlin calls them).
(object_declaration name: (identifier) @name) @definition.class
(companion_object name: (identifier) @name) @definition.class

; Functions, extension functions (`fun String.slug()` is `slug`); nested in a class they are
; methods.
(function_declaration name: (identifier) @name) @definition.function

(type_alias type: (identifier) @name) @definition.type

(enum_entry (identifier) @name) @definition.constant

; Properties. `const val` is a constant; top-level `val`/`var` are variables; in the body of a
; class, object or companion they are fields, as are `val`/`var` primary-constructor
; parameters (members of an anonymous `object : T { }` are left out).
(source_file
  (property_declaration
    (modifiers (property_modifier))
    (variable_declaration (identifier) @name)) @definition.constant)
(source_file
  (property_declaration (variable_declaration (identifier) @name)) @definition.variable)
(source_file
  (property_declaration
    (multi_variable_declaration (variable_declaration (identifier) @name))) @definition.variable)
([
  (class_declaration (class_body (property_declaration
    (modifiers (property_modifier))
    (variable_declaration (identifier) @name)) @definition.constant))
  (object_declaration (class_body (property_declaration
    (modifiers (property_modifier))
    (variable_declaration (identifier) @name)) @definition.constant))
  (companion_object (class_body (property_declaration
    (modifiers (property_modifier))
    (variable_declaration (identifier) @name)) @definition.constant))
])
([
  (class_declaration (class_body
    (property_declaration (variable_declaration (identifier) @name)) @definition.field))
  (class_declaration (enum_class_body
    (property_declaration (variable_declaration (identifier) @name)) @definition.field))
  (object_declaration (class_body
    (property_declaration (variable_declaration (identifier) @name)) @definition.field))
  (companion_object (class_body
    (property_declaration (variable_declaration (identifier) @name)) @definition.field))
])
(class_parameter ["val" "var"] . (identifier) @name) @definition.field

; Calls. A call of a capitalized name is an instantiation (`Foo(1)`, `Outer.Nested()`).
(call_expression
  (identifier) @name
  (#match? @name "^[A-Z]")) @reference.class
(call_expression
  (navigation_expression (identifier) @name .)
  (#match? @name "^[A-Z]")) @reference.class
(call_expression
  (identifier) @name
  (#not-eq? @name "it")) @reference.call
(call_expression (navigation_expression (identifier) @name .)) @reference.call
; Function references: `::helper`, `Repo::load`.
(callable_reference . (identifier) @name @reference.call)
(callable_reference (user_type) (identifier) @name) @reference.call
(navigation_expression
  "::"
  (identifier) @name .
  (#not-eq? @name "class")) @reference.call
; `this(...)` / `super(...)` delegation is not named; constructor calls in a supertype list are
; base classes, a bare type there (or `Iface by impl`) is an implemented interface.
(delegation_specifier
  (constructor_invocation
    (user_type (identifier) @name . (type_arguments)? .))) @reference.class
(delegation_specifier
  (user_type (identifier) @name . (type_arguments)? .)) @reference.implementation
(delegation_specifier
  (explicit_delegation
    (user_type (identifier) @name . (type_arguments)? .))) @reference.implementation

; Type uses: the last segment of `a.b.C<T>` (annotations included).
(user_type (identifier) @name . (type_arguments)? .) @reference.type

; Locals and properties whose type is visible: `val r: Repo = ...`, `val r = Repo(db)`,
; `class Svc(private val repo: Repo)`.
(variable_declaration
  (identifier) @binding.name
  [(user_type) @binding.type (nullable_type (user_type) @binding.type)]) @binding
(property_declaration
  (variable_declaration (identifier) @binding.name .)
  (call_expression [(identifier) (navigation_expression)] @binding.value)) @binding
(class_parameter
  (identifier) @binding.name .
  [(user_type) @binding.type (nullable_type (user_type) @binding.type)]) @binding
