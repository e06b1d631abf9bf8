; `namespace App\Models;`: the file's namespace, as written (backslashes kept).
(namespace_definition name: (namespace_name) @package !body)

; `use App\Models\User;`, `use App\Models\User as U;`, `use function App\fmt;`,
; `use const App\LIMIT;`: path `App\Models`, name `User`.
(namespace_use_declaration
  (namespace_use_clause
    (qualified_name prefix: (namespace_name) @import.path (name) @import.name)
    !alias)) @import
(namespace_use_declaration
  (namespace_use_clause
    (qualified_name prefix: (namespace_name) @import.path (name) @import.name)
    alias: (name) @import.alias)) @import
; `use Exception;`, `use Exception as E;`: a global-namespace class.
(namespace_use_declaration
  (namespace_use_clause . (name) @import.path !alias)) @import
(namespace_use_declaration
  (namespace_use_clause . (name) @import.path alias: (name) @import.alias)) @import

; Grouped: `use App\Models\{User, Post as P};` (path `App\Models`, one import per name);
; `use App\{Models\User}` keeps `Models\User` as the name.
(namespace_use_declaration
  (namespace_name) @import.path
  body: (namespace_use_group
    (namespace_use_clause . [(name) (qualified_name)] @import.name !alias))) @import
(namespace_use_declaration
  (namespace_name) @import.path
  body: (namespace_use_group
    (namespace_use_clause
      . [(name) (qualified_name)] @import.name
      alias: (name) @import.alias))) @import

; `require 'a.php'`, `include_once("b.php")`, `require_once __DIR__ . '/c.php'`: the
; literal file path, quotes stripped (the part after `__DIR__ . ` keeps its leading `/`);
; interpolated and computed paths are skipped.
(require_expression
  [
    (string) @import.path
    (encapsed_string) @import.path
    (parenthesized_expression [(string) (encapsed_string)] @import.path)
    (binary_expression right: [(string) (encapsed_string)] @import.path)
    (parenthesized_expression
      (binary_expression right: [(string) (encapsed_string)] @import.path))
  ]
  (#not-match? @import.path "[$]")) @import
(require_once_expression
  [
    (string) @import.path
    (encapsed_string) @import.path
    (parenthesized_expression [(string) (encapsed_string)] @import.path)
    (binary_expression right: [(string) (encapsed_string)] @import.path)
    (parenthesized_expression
      (binary_expression right: [(string) (encapsed_string)] @import.path))
  ]
  (#not-match? @import.path "[$]")) @import
(include_expression
  [
    (string) @import.path
    (encapsed_string) @import.path
    (parenthesized_expression [(string) (encapsed_string)] @import.path)
    (binary_expression right: [(string) (encapsed_string)] @import.path)
    (parenthesized_expression
      (binary_expression right: [(string) (encapsed_string)] @import.path))
  ]
  (#not-match? @import.path "[$]")) @import
(include_once_expression
  [
    (string) @import.path
    (encapsed_string) @import.path
    (parenthesized_expression [(string) (encapsed_string)] @import.path)
    (binary_expression right: [(string) (encapsed_string)] @import.path)
    (parenthesized_expression
      (binary_expression right: [(string) (encapsed_string)] @import.path))
  ]
  (#not-match? @import.path "[$]")) @import
