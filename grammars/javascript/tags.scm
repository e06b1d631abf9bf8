; JavaScript definitions and references (also inherited by TypeScript and TSX, so only node
; types that all three grammars share appear here).

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: (property_identifier) @name) @definition.method
; `#send() {..}`: a private method, named with its `#`.
(method_definition name: (private_property_identifier) @name) @definition.method
(class_declaration name: (_) @name) @definition.class
(class name: (_) @name) @definition.class

; `const f = () => ..`, `let g = function () ..`
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; Top-level constants (a function value above wins: the earliest pattern on a name wins).
(program (lexical_declaration (variable_declarator name: (identifier) @name) @definition.constant))
(program
  (export_statement
    declaration: (lexical_declaration (variable_declarator name: (identifier) @name) @definition.constant)))
; Top-level `var` (CommonJS objects: `var res = Object.create(..)`, `var app = exports = ..`).
(program (variable_declaration (variable_declarator name: (identifier) @name) @definition.variable))

; CommonJS members: `Foo.prototype.bar = function ..` is a method of `Foo`, and
; `res.send = function ..` a method of the object `res` (not of `exports`/`module`: those
; define the module's own functions). `this` inside them is that object.
(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @container
      property: (property_identifier) @_prototype)
    property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]
  (#eq? @_prototype "prototype")) @definition.method
(assignment_expression
  left: (member_expression object: (identifier) @container property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]
  (#not-any-of? @container "exports" "module" "window" "globalThis")) @definition.method

; `exports.f = function ..`, `module.exports.f = () => ..`
(assignment_expression
  left: (member_expression property: (property_identifier) @name)
  right: [(arrow_function) (function_expression)]) @definition.function

(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (member_expression property: (property_identifier) @name)) @reference.call
(call_expression function: (member_expression property: (private_property_identifier) @name)) @reference.call
(new_expression constructor: (identifier) @name) @reference.class
(new_expression constructor: (member_expression property: (property_identifier) @name)) @reference.class

; Local variables whose type is visible: `const s = new Server()`, `const a = createApp()`.
(variable_declarator
  name: (identifier) @binding.name
  value: [
    (new_expression constructor: [(identifier) (member_expression)] @binding.value)
    (call_expression function: [(identifier) (member_expression)] @binding.value)
    (await_expression (call_expression function: [(identifier) (member_expression)] @binding.value))
  ]) @binding
; Properties set in methods: `this.store = new Store()` (the name is `this.store`).
(assignment_expression
  left: (member_expression object: (this)) @binding.name
  right: (new_expression constructor: [(identifier) (member_expression)] @binding.value)) @binding
