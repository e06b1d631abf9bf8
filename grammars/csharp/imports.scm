; `using A.B;` and `using static A.B.C;` bring every type (or every static member) of the
; path into scope: a glob import of the path. `using X = A.B.C;` binds X to `C` of `A.B`.
; `global using` has the same forms. A leading `global::` is dropped where it stands alone
; (`using global::System;`); inside a longer path it stays in the path text.
(using_directive
  !name
  [(identifier) (qualified_name)] @import.path @import.glob) @import
(using_directive
  !name
  (alias_qualified_name alias: (_) @_global name: (_) @import.path @import.glob)
  (#eq? @_global "global")) @import

(using_directive
  name: (identifier) @import.alias
  (_
    qualifier: (_) @import.path
    name: [(identifier) @import.name (_ (identifier) @import.name (type_argument_list))])) @import
(using_directive
  name: (identifier) @import.alias
  (alias_qualified_name
    alias: (_) @import.path
    name: [(identifier) @import.name (_ (identifier) @import.name (type_argument_list))])
  (#not-eq? @import.path "global")) @import
(using_directive
  name: (identifier) @import.alias
  [
    (identifier) @import.path
    (_ (identifier) @import.path (type_argument_list))
    (alias_qualified_name
      alias: (_) @_global
      name: [(identifier) @import.path (_ (identifier) @import.path (type_argument_list))])
  ]
  (#eq? @_global "global")) @import

; The file's namespace: `namespace A.B;` (file-scoped) or the outermost `namespace A.B { }`.
; Namespaces nested inside it are definitions in tags.scm.
(file_scoped_namespace_declaration name: (_) @package)
(compilation_unit (namespace_declaration name: (_) @package))
