; Go definitions and references. A method's container is its receiver type (@container),
; since Go methods are declared outside their type.

(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @container
        (pointer_type (type_identifier) @container)
        (generic_type type: (type_identifier) @container)
        (pointer_type (generic_type type: (type_identifier) @container))
      ]))
  name: (field_identifier) @name) @definition.method

(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
(method_elem name: (field_identifier) @name) @definition.method
(field_declaration name: (field_identifier) @name) @definition.field
(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))

(call_expression function: (identifier) @name) @reference.call
(call_expression function: (selector_expression field: (field_identifier) @name)) @reference.call
(composite_literal type: (type_identifier) @name) @reference.class
(composite_literal type: (qualified_type name: (type_identifier) @name)) @reference.class
(type_identifier) @name @reference.type

; Local variables whose type is visible: `s := &Server{}`, `s := NewServer()`, `var s Server`.
(short_var_declaration
  left: (expression_list . (identifier) @binding.name)
  right: (expression_list .
    [
      (composite_literal type: (_) @binding.value)
      (unary_expression operand: (composite_literal type: (_) @binding.value))
      (call_expression function: (selector_expression) @binding.value)
    ])) @binding
(short_var_declaration
  left: (expression_list . (identifier) @binding.name)
  right: (expression_list . (call_expression function: (identifier) @binding.value))
  (#not-eq? @binding.value "new")) @binding
; `r := new(Router)`: the builtin's argument is the type.
(short_var_declaration
  left: (expression_list . (identifier) @binding.name)
  right: (expression_list .
    (call_expression
      function: (identifier) @_new
      arguments: (argument_list . [(type_identifier) (qualified_type)] @binding.type)))
  (#eq? @_new "new")) @binding
(var_spec
  name: (identifier) @binding.name
  type: (_) @binding.type) @binding
; `for _, c := range n.children` / `range n.Children()`: the element of a slice field or of a
; function's result, whose declared type reduces to the element's (`[]*Node` -> `Node`).
(range_clause
  left: (expression_list (_) . (identifier) @binding.name)
  right: (selector_expression) @binding.value) @binding
(range_clause
  left: (expression_list (_) . (identifier) @binding.name)
  right: (call_expression function: [(identifier) (selector_expression)] @binding.value)) @binding
