(import_spec name: (package_identifier) @import.alias path: (_) @import.path) @import
(import_spec name: (dot) @import.glob path: (_) @import.path) @import
(import_spec name: (blank_identifier) path: (_) @import.path) @import
(import_spec !name path: (_) @import.path) @import

(package_clause (package_identifier) @package)
