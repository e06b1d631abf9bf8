; C# definitions and references. A file's outermost namespace, block (`namespace A.B { }`) or
; file-scoped (`namespace A.B;`), is its @package (imports.scm), as a Java package is; a
; namespace nested in another is a definition whose name qualifies what it contains. `///` XML
; doc comments above a definition are found generically.
;
; Compile time: tree-sitter analyses each named node that has children in a pattern against
; the parse table when the query is compiled, so nested names are written as wildcards pinned
; down by what only they have: `(_ qualifier: (_) name: ...)` is a `qualified_name`, `(_
; (identifier) (type_argument_list))` a `generic_name` (the only parent of a
; `type_argument_list`), `(_ type: ... "?")` a `nullable_type`. The catch-all `type:` and
; `returns:` patterns keep them concrete: a wildcard there would be tried at every node.

(declaration_list (namespace_declaration name: (_) @name) @definition.namespace)

(record_declaration "struct" name: (identifier) @name) @definition.struct
(record_declaration name: (identifier) @name) @definition.class
; Positional record parameters are public properties.
(record_declaration
  (parameter_list (parameter name: (identifier) @name) @definition.field))
(class_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.struct
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(enum_member_declaration name: (identifier) @name) @definition.constant
(delegate_declaration name: (identifier) @name) @definition.type

(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(local_function_statement name: (identifier) @name) @definition.function

(field_declaration
  (modifier) @_const
  (variable_declaration (variable_declarator name: (identifier) @name))
  (#eq? @_const "const")) @definition.constant
(field_declaration
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.field
(event_field_declaration
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.field
(property_declaration name: (identifier) @name) @definition.field
(event_declaration name: (identifier) @name) @definition.field

; Calls: `M()`, `M<T>()`, `obj.M()`, `obj.M<T>()`, `obj?.M()`.
(invocation_expression
  function: [
    (identifier) @name
    (_ (identifier) @name (type_argument_list))
  ]
  (#not-eq? @name "nameof")) @reference.call
(invocation_expression
  function: (member_access_expression
    name: [
      (identifier) @name
      (_ (identifier) @name (type_argument_list))
    ])) @reference.call
(invocation_expression
  function: (conditional_access_expression
    (member_binding_expression
      name: [
        (identifier) @name
        (_ (identifier) @name (type_argument_list))
      ]))) @reference.call

; Instantiations: `new Foo()`, `new Foo<T>()`, `new A.B.Foo()`.
(object_creation_expression
  type: [
    (identifier) @name
    (_ (identifier) @name (type_argument_list))
    (_ qualifier: (_) name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
  ]) @reference.class

; Base lists. C# allows one base class, first; every other entry is an interface. An
; `I`-prefixed first entry is taken for an interface too (a naming convention, not a rule).
(class_declaration
  (base_list
    [
      (identifier) @name
      (_ (identifier) @name (type_argument_list))
      (_ qualifier: (_) name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
    ] @reference.implementation)
  (#match? @name "^I[A-Z]"))
(record_declaration
  (base_list
    [
      (identifier) @name
      (_ (identifier) @name (type_argument_list))
      (_ qualifier: (_) name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
    ] @reference.implementation)
  (#match? @name "^I[A-Z]"))
(class_declaration
  (base_list
    .
    [
      (identifier) @name
      (_ (identifier) @name (type_argument_list))
      (_ qualifier: (_) name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
    ] @reference.class))
(record_declaration
  (base_list
    .
    [
      (identifier) @name
      (_ (identifier) @name (type_argument_list))
      (_ qualifier: (_) name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
      (primary_constructor_base_type
        type: [
          (identifier) @name
          (_ (identifier) @name (type_argument_list))
          (_ qualifier: (_) name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
        ])
    ] @reference.class))
(base_list
  [
    (identifier) @name
    (_ (identifier) @name (type_argument_list))
    (_ qualifier: (_) name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
  ] @reference.implementation)

; Attributes: `[Serializable]`, `[HttpGet("x")]`.
(attribute
  name: [
    (identifier) @name
    (_ qualifier: (_) name: (identifier) @name)
  ] @reference.type)

; `IEnumerable<T>.GetEnumerator()`: the interface of an explicit implementation.
(explicit_interface_specifier
  [
    (identifier) @name
    (_ (identifier) @name (type_argument_list))
    (_ qualifier: (_) name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
  ] @reference.type)

; Type uses: declared types of variables, parameters, fields, properties, returns, casts,
; `typeof`, patterns, constraints, and type arguments (catch-all, last).
(_
  type: [
    (identifier) @name
    (generic_name (identifier) @name)
    (qualified_name name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
  ] @reference.type)
(_
  returns: [
    (identifier) @name
    (generic_name (identifier) @name)
    (qualified_name name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
  ] @reference.type)
(as_expression
  right: [
    (identifier) @name
    (_ (identifier) @name (type_argument_list))
    (_ qualifier: (_) name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
  ] @reference.type)
(is_expression
  right: [
    (identifier) @name
    (_ (identifier) @name (type_argument_list))
    (_ qualifier: (_) name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
  ] @reference.type)
(type_argument_list
  [
    (identifier) @name
    (_ (identifier) @name (type_argument_list))
    (_ qualifier: (_) name: [(identifier) @name (_ (identifier) @name (type_argument_list))])
  ] @reference.type)

; Locals, parameters, fields and properties whose type is written or constructed:
; `Repo r = ...`, `var r = new Repo()`, `void M(Repo r)`, `private readonly Repo _r;`,
; `catch (IOException e)`, `x is Order o`, `out Order o`, `foreach (Order o in ...)`.
; Predefined types (`int`, `string`) are left out; `Foo?` binds `Foo`.
(variable_declaration
  type: [
    (identifier) @binding.type
    (generic_name) @binding.type
    (qualified_name) @binding.type
    (_ type: [(identifier) (generic_name) (qualified_name)] @binding.type "?")
  ]
  (variable_declarator name: (identifier) @binding.name)) @binding
(parameter
  type: [
    (identifier) @binding.type
    (generic_name) @binding.type
    (qualified_name) @binding.type
    (_ type: [(identifier) (generic_name) (qualified_name)] @binding.type "?")
  ]
  name: (identifier) @binding.name) @binding
(property_declaration
  type: [
    (identifier) @binding.type
    (generic_name) @binding.type
    (qualified_name) @binding.type
    (_ type: [(identifier) (generic_name) (qualified_name)] @binding.type "?")
  ]
  name: (identifier) @binding.name) @binding
(catch_declaration
  type: [
    (identifier) @binding.type
    (generic_name) @binding.type
    (qualified_name) @binding.type
    (_ type: [(identifier) (generic_name) (qualified_name)] @binding.type "?")
  ]
  name: (identifier) @binding.name) @binding
(declaration_expression
  type: [
    (identifier) @binding.type
    (generic_name) @binding.type
    (qualified_name) @binding.type
    (_ type: [(identifier) (generic_name) (qualified_name)] @binding.type "?")
  ]
  name: (identifier) @binding.name) @binding
(declaration_pattern
  type: [
    (identifier) @binding.type
    (generic_name) @binding.type
    (qualified_name) @binding.type
    (_ type: [(identifier) (generic_name) (qualified_name)] @binding.type "?")
  ]
  name: (identifier) @binding.name) @binding
(recursive_pattern
  type: [
    (identifier) @binding.type
    (generic_name) @binding.type
    (qualified_name) @binding.type
    (_ type: [(identifier) (generic_name) (qualified_name)] @binding.type "?")
  ]
  name: (identifier) @binding.name) @binding
(foreach_statement
  type: [
    (identifier) @binding.type
    (generic_name) @binding.type
    (qualified_name) @binding.type
  ]
  left: (identifier) @binding.name) @binding
(variable_declaration
  type: (implicit_type)
  (variable_declarator
    name: (identifier) @binding.name
    [
      (object_creation_expression type: (_) @binding.value)
      (invocation_expression function: [(identifier) (member_access_expression)] @binding.value)
    ])) @binding
