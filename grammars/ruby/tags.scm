; Ruby definitions and references. Modules and classes nest (`Billing::Invoice`); a
; `class A::B` or `module A::B` names its outer scope explicitly (@container). Doc comments
; are the `#` comments right above a definition, found generically.
;
; Compile time: tree-sitter analyses each named node that has children in a pattern against
; the parse table when the query is compiled, which is slow for `call`, `body_statement`,
; `scope_resolution` and `assignment`. So nested ones are written as wildcards pinned down by
; fields that only one node type has (`receiver:`, `method:`, `arguments:`, `block:` belong
; to `call`, `scope:` to `scope_resolution`, the only node in a `left:` or a `name:` of a
; class or module with a `name:` of its own; `body:` holds a `body_statement`). A wildcard
; as a pattern's root starts the pattern at its first child, whose analysis is cheaper than
; a `call`'s, but it drops the root's negated fields (`!receiver`) and is tried at every
; node when that first child is itself a wildcard: those patterns keep `(call ...)`.

; Modules and classes.
(module
  name: [
    (constant) @name
    (_ scope: (_)? @container name: (constant) @name)
  ]) @definition.module
(class
  name: [
    (constant) @name
    (_ scope: (_)? @container name: (constant) @name)
  ]) @definition.class

; `Point = Struct.new(:x, :y) do ... end`, `Klass = Class.new(Base)`, `Coord = Data.define(:lat)`.
(assignment
  left: [
    (constant) @name
    (_ scope: (_)? @container name: (constant) @name)
  ]
  right: (_
    receiver: (constant) @_factory
    method: (identifier) @_new)
  (#any-of? @_factory "Struct" "Class" "Data")
  (#any-of? @_new "new" "define")) @definition.class
(assignment
  left: [
    (constant) @name
    (_ scope: (_)? @container name: (constant) @name)
  ]
  right: (_
    receiver: (constant) @_factory
    method: (identifier) @_new)
  (#eq? @_factory "Module")
  (#eq? @_new "new")) @definition.module

; Methods: every `def` in a module body (mixin or module methods, also inside `class << self`,
; `private def`, or a block such as `class_methods do`) is a method; elsewhere a `def` is a
; function, which becomes a method inside a class.
(module
  body: (_
    [
      (method name: (_) @name)
      (singleton_method name: (_) @name)
    ] @definition.method))
(module
  body: (_
    [
      (singleton_class
        body: (_
          [
            (method name: (_) @name)
            (singleton_method name: (_) @name)
          ] @definition.method))
      (_
        arguments: (argument_list
          [
            (method name: (_) @name)
            (singleton_method name: (_) @name)
          ] @definition.method))
      (_
        block: (do_block
          body: (_
            [
              (method name: (_) @name)
              (singleton_method name: (_) @name)
            ] @definition.method)))
    ]))
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.function
(alias name: (_) @name) @definition.method

; Constants (`MAX = 3`, `Config::DEFAULT = {}`), class variables and top-level script
; variables.
(assignment
  left: [
    (constant) @name
    (_ scope: (_)? @container name: (constant) @name)
  ]) @definition.constant
(operator_assignment
  left: [
    (constant) @name
    (_ scope: (_)? @container name: (constant) @name)
  ]) @definition.constant
(class
  body: (_
    (assignment left: (class_variable) @name) @definition.field))
(module
  body: (_
    (assignment left: (class_variable) @name) @definition.field))
(program
  (assignment left: (identifier) @name) @definition.variable)

; `attr_accessor :name, :email` (the name is the symbol).
(call
  !receiver
  method: (identifier) @_attr
  arguments: (argument_list (simple_symbol) @name @definition.field)
  (#any-of? @_attr "attr_accessor" "attr_reader" "attr_writer" "attr"))

; Mixins: `include Comparable`, `extend Forwardable`, `prepend Auditing`.
(_
  method: (identifier) @_mixin
  arguments: (argument_list
    [
      (constant) @name
      (scope_resolution name: (constant) @name)
    ] @reference.implementation)
  (#any-of? @_mixin "include" "extend" "prepend"))

; Base classes.
(superclass
  [
    (constant) @name
    (scope_resolution name: (constant) @name)
  ] @reference.class)

; `Class.new(Base) do ... end`: an anonymous subclass.
(_
  receiver: (constant) @_class
  method: (identifier) @_new
  arguments: (argument_list
    .
    [
      (constant) @name
      (scope_resolution name: (constant) @name)
    ] @reference.class)
  (#eq? @_class "Class")
  (#eq? @_new "new"))

; Instantiation: `Invoice.new(...)`, `Billing::Invoice.new` (the `new` itself is no call).
(_
  receiver: [
    (constant) @name
    (scope_resolution name: (constant) @name)
  ]
  method: (identifier) @_new
  (#eq? @_new "new")) @reference.class

; Calls. A bare identifier without arguments (`save`) cannot be told from a local: skipped.
; Declarations that are calls in form (`require`, `private`, `attr_reader`, `include`) are
; not references.
(call
  !receiver
  method: [(identifier) (constant)] @name
  (#not-any-of? @name
    "require" "require_relative" "load" "autoload" "include" "extend" "prepend"
    "attr_accessor" "attr_reader" "attr_writer" "attr" "private" "protected" "public"
    "module_function" "private_constant" "public_constant" "private_class_method"
    "public_class_method" "alias_method" "raise" "fail" "lambda" "proc" "loop" "new")) @reference.call
(call
  receiver: (_)
  method: [(identifier) (constant)] @name
  (#not-eq? @name "new")) @reference.call
; `klass.new`, `self.class.new`: a call on a value, not a named class.
(call
  receiver: (_) @_recv
  method: (identifier) @name
  (#eq? @name "new")
  (#not-match? @_recv "^(::)?[A-Z]")) @reference.call

; Every other constant: classes and modules used as values, rescued exceptions, constants.
(scope_resolution name: (constant) @name) @reference.type
(constant) @name @reference.type

; Locals and instance variables bound to a new object: `repo = Repo.new`, `@client = Http::Client.new`.
(assignment
  left: [(identifier) (instance_variable)] @binding.name
  right: (_
    receiver: [(constant) (scope_resolution)] @binding.value
    method: (identifier) @_new)
  (#eq? @_new "new")) @binding
(operator_assignment
  left: [(identifier) (instance_variable)] @binding.name
  right: (_
    receiver: [(constant) (scope_resolution)] @binding.value
    method: (identifier) @_new)
  (#eq? @_new "new")) @binding
