; inherits: c
; C++ additions. Out-of-line member definitions (`void Foo::bar() {}`) name their class
; through @container.

(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: (_) @container
      name: [(identifier) (field_identifier) (destructor_name) (operator_name)] @name))) @definition.method
(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: (qualified_identifier scope: (_) @container name: (_) @name)))) @definition.method
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: (qualified_identifier scope: (_) @container name: (_) @name)))) @definition.method
(function_definition
  declarator: (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)) @definition.method
(field_declaration declarator: (function_declarator declarator: [(field_identifier) (destructor_name) (operator_name)] @name)) @definition.method
(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(namespace_definition name: (namespace_identifier) @name) @definition.namespace
(alias_declaration name: (type_identifier) @name) @definition.type
(concept_definition name: (identifier) @name) @definition.type

(call_expression function: (qualified_identifier name: (identifier) @name)) @reference.call
(call_expression function: (template_function name: (identifier) @name)) @reference.call
(call_expression
  function: (qualified_identifier name: (template_function name: (identifier) @name))) @reference.call
(new_expression type: (type_identifier) @name) @reference.class
(base_class_clause (type_identifier) @name @reference.class)
(base_class_clause (qualified_identifier name: (type_identifier) @name) @reference.class)
(new_expression type: (qualified_identifier name: (type_identifier) @name)) @reference.class
