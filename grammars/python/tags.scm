; Python definitions and references. Docstrings are read by the extractor from the first
; statement of a body; functions inside a class become methods.

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function

; Module-level and class-level assignments.
(module
  (expression_statement
    (assignment left: (identifier) @name) @definition.variable))
(class_definition
  body: (block
    (expression_statement
      (assignment left: (identifier) @name) @definition.field)))

(call function: (identifier) @name) @reference.call
(call function: (attribute attribute: (identifier) @name)) @reference.call
; A decorator calls what it names (`@app.before_request` calls `before_request`).
(decorator (identifier) @name @reference.call)
(decorator (attribute attribute: (identifier) @name) @reference.call)

; Base classes.
(class_definition
  superclasses: (argument_list
    [
      (identifier) @name
      (attribute attribute: (identifier) @name)
    ] @reference.class))

; Annotations.
(type (identifier) @name @reference.type)
(type (attribute attribute: (identifier) @name) @reference.type)

; Local variables whose type is visible: `s = Session()`, `x: Foo = ...`, `with Foo() as f`.
(assignment
  left: (identifier) @binding.name
  right: (call function: [(identifier) (attribute)] @binding.value)) @binding
(assignment
  left: (identifier) @binding.name
  type: (type) @binding.type) @binding
(with_item
  value: (as_pattern
    (call function: [(identifier) (attribute)] @binding.value)
    alias: (as_pattern_target (identifier) @binding.name))) @binding
; Attributes set in methods: `self.session = Session()` (the name is `self.session`).
(assignment
  left: (attribute object: (identifier) @_self) @binding.name
  right: (call function: [(identifier) (attribute)] @binding.value)
  (#eq? @_self "self")) @binding
