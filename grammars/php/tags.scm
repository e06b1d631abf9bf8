; PHP definitions and references. PHPDoc `/** */` blocks right above a definition are found
; by the generic comment code; functions directly inside a class, interface, trait or enum
; become methods.

; `namespace App\Models { ... }`: the braced form scopes what it contains. The
; `namespace App\Models;` form is the file's @package (imports.scm).
(namespace_definition
  name: (namespace_name) @name
  body: (compound_statement)) @definition.namespace

(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(enum_case name: (name) @name) @definition.constant

(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method

; Constants (class, interface, enum, namespace level) and properties (`$count` is named
; `count`, as `$this->count` reads it).
(const_declaration (const_element (name) @name)) @definition.constant
(property_declaration
  (property_element name: (variable_name (name) @name))) @definition.field

; `define('X', 1);`
(expression_statement
  (function_call_expression
    function: (name) @_define
    arguments: (arguments
      . (argument [(string (string_content) @name) (encapsed_string (string_content) @name)])))
  (#eq? @_define "define")) @definition.constant

; A name written from the global namespace (`\count()`, `new \RuntimeException`,
; `\DateTimeImmutable $d`) is the bare name: the reference is the name alone, so no `\`
; receiver is left in front of it.
(function_call_expression
  function: (qualified_name (name) @name @reference.call) @_q
  (#match? @_q "^\\\\[^\\\\]+$"))
(object_creation_expression
  (qualified_name (name) @name @reference.class) @_q
  (#match? @_q "^\\\\[^\\\\]+$"))
(class_declaration
  (base_clause (qualified_name (name) @name @reference.class) @_q)
  (#match? @_q "^\\\\[^\\\\]+$"))
(anonymous_class
  (base_clause (qualified_name (name) @name @reference.class) @_q)
  (#match? @_q "^\\\\[^\\\\]+$"))
(interface_declaration
  (base_clause (qualified_name (name) @name @reference.implementation) @_q)
  (#match? @_q "^\\\\[^\\\\]+$"))
(class_interface_clause
  (qualified_name (name) @name @reference.implementation) @_q
  (#match? @_q "^\\\\[^\\\\]+$"))
(use_declaration
  (qualified_name (name) @name @reference.implementation) @_q
  (#match? @_q "^\\\\[^\\\\]+$"))
((qualified_name (name) @name @reference.type) @_q
  (#match? @_q "^\\\\[^\\\\]+$"))

; Calls: `f()`, `\App\f()`, `$obj->m()`, `$obj?->m()`, `Foo::m()`, `parent::__construct()`.
(function_call_expression function: (name) @name) @reference.call
(function_call_expression function: (qualified_name (name) @name)) @reference.call
(member_call_expression name: (name) @name) @reference.call
(nullsafe_member_call_expression name: (name) @name) @reference.call
(scoped_call_expression name: (name) @name) @reference.call

; Instantiation: `new Foo()`, `new \App\Foo`; not `new static` / `new self`.
(object_creation_expression
  (name) @name
  (#not-any-of? @name "static" "self" "parent")) @reference.class
(object_creation_expression (qualified_name (name) @name)) @reference.class

; Base classes, implemented interfaces, an interface's parents, used traits.
(class_declaration
  (base_clause [(name) @name (qualified_name (name) @name)] @reference.class))
(anonymous_class
  (base_clause [(name) @name (qualified_name (name) @name)] @reference.class))
(interface_declaration
  (base_clause [(name) @name (qualified_name (name) @name)] @reference.implementation))
(class_interface_clause [(name) @name (qualified_name (name) @name)] @reference.implementation)
(use_declaration [(name) @name (qualified_name (name) @name)] @reference.implementation)

; Attributes: `#[Route('/x')]`.
(attribute [(name) @name (qualified_name (name) @name)] @reference.type)

; Class names used as values: `Foo::class`, `Foo::BAR`, `Foo::$cache`, `$x instanceof Foo`.
(class_constant_access_expression
  . [(name) @name (qualified_name (name) @name)] @reference.type)
(scoped_property_access_expression
  scope: [(name) @name (qualified_name (name) @name)] @reference.type)
(binary_expression
  operator: "instanceof"
  right: [(name) @name (qualified_name (name) @name)] @reference.type)

; Type declarations of parameters, returns and properties, catch clauses.
(named_type
  (name) @name
  (#not-any-of? @name "self" "static" "parent")) @reference.type
(named_type (qualified_name (name) @name)) @reference.type

; Local variables whose type is visible: `$repo = new Repo()`, `$this->repo = new Repo()` in
; a method, `Repo $repo` / `?Repo $repo` parameters (promoted ones too).
(assignment_expression
  left: (variable_name) @binding.name
  right: (object_creation_expression [(name) (qualified_name)] @binding.value)
  (#not-any-of? @binding.value "static" "self" "parent")) @binding
(assignment_expression
  left: (member_access_expression object: (variable_name) @_this) @binding.name
  right: (object_creation_expression [(name) (qualified_name)] @binding.value)
  (#eq? @_this "$this")
  (#not-any-of? @binding.value "static" "self" "parent")) @binding
(simple_parameter
  type: [(named_type) @binding.type (optional_type (named_type) @binding.type)]
  name: (variable_name) @binding.name) @binding
(property_promotion_parameter
  type: [(named_type) @binding.type (optional_type (named_type) @binding.type)]
  name: (variable_name) @binding.name) @binding
