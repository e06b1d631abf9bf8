; inherits: c
(using_declaration "namespace" (_) @import.path @import.glob) @import
(using_declaration (qualified_identifier) @import.path) @import
