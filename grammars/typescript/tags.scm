; inherits: javascript
; TypeScript additions on top of the JavaScript patterns.

(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(internal_module name: (_) @name) @definition.namespace
(module name: (_) @name) @definition.namespace
(function_signature name: (identifier) @name) @definition.function
(method_signature name: (property_identifier) @name) @definition.method
(abstract_method_signature name: (property_identifier) @name) @definition.method
(public_field_definition name: (property_identifier) @name) @definition.field
(public_field_definition name: (private_property_identifier) @name) @definition.field
(property_signature name: (property_identifier) @name) @definition.field

(extends_clause value: (identifier) @name @reference.class)
(extends_clause value: (member_expression property: (property_identifier) @name) @reference.class)
(implements_clause (type_identifier) @name @reference.implementation)
(implements_clause (generic_type name: (type_identifier) @name) @reference.implementation)
(extends_type_clause type: (type_identifier) @name @reference.implementation)
; `interface A extends B<T>`, `extends core.B<T>`: the base without its arguments.
(extends_type_clause type: (generic_type name: (type_identifier) @name) @reference.implementation)
(extends_type_clause
  type: (generic_type name: (nested_type_identifier name: (type_identifier) @name)) @reference.implementation)
(extends_type_clause type: (nested_type_identifier name: (type_identifier) @name) @reference.implementation)
(type_identifier) @name @reference.type

; `const s: Store = ...`
(variable_declarator
  name: (identifier) @binding.name
  type: (type_annotation [(type_identifier) (nested_type_identifier) (generic_type)] @binding.type)) @binding
