(import_declaration (scoped_identifier scope: (_) @import.path name: (identifier) @import.name)) @import
(import_declaration (scoped_identifier) @import.path (asterisk) @import.glob) @import
(import_declaration (identifier) @import.path) @import

(package_declaration (scoped_identifier) @package)
(package_declaration (identifier) @package)
