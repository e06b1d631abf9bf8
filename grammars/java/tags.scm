(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(enum_constant name: (identifier) @name) @definition.constant
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field

(method_invocation name: (identifier) @name) @reference.call
(object_creation_expression type: (type_identifier) @name) @reference.class
(object_creation_expression type: (generic_type (type_identifier) @name)) @reference.class
(superclass (type_identifier) @name @reference.class)
(super_interfaces (type_list (type_identifier) @name @reference.implementation))
(type_identifier) @name @reference.type

; Local variables whose type is visible: `Repo r = ...`, `var r = new Repo()`.
(local_variable_declaration
  type: (_) @binding.type
  declarator: (variable_declarator name: (identifier) @binding.name)) @binding
(variable_declarator
  name: (identifier) @binding.name
  value: (object_creation_expression type: (_) @binding.value)) @binding
