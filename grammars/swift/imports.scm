; Swift imports. `import Foundation` and `import UIKit.UIView` (a submodule) import a module;
; `import struct Foo.Bar` (or class, enum, protocol, typealias, func, let, var) imports one
; declaration: the path is the module, the name the declaration. Attributes such as
; `@testable` and `@_exported` do not change the import. Swift files declare no package: the
; module is the build target.

(import_declaration
  ["typealias" "struct" "class" "enum" "protocol" "let" "var" "func"]
  (identifier
    . (simple_identifier) @import.path
    . (simple_identifier) @import.name .)) @import
(import_declaration
  ["typealias" "struct" "class" "enum" "protocol" "let" "var" "func"]
  (identifier
    . (simple_identifier) @import.path
    . (simple_identifier)
    . (simple_identifier) @import.name .)) @import
((import_declaration (identifier) @import.path) @import
  (#not-match? @import "import[ \t]+(typealias|struct|class|enum|protocol|let|var|func)[ \t]"))
