; Elixir definitions and references. Everything is a `call`: `defmodule A.B do`, `def f(x)`,
; `@attr value` (a `unary_operator` `@` around a call). Docs are `@moduledoc`/`@doc`/`@typedoc`
; strings, captured with @doc; `# comments` right above a definition are found generically.
; Each clause of a multi-clause function is a definition (they share one qualified name; the
; `@doc` goes to the first): a clause head is a `call`, so a clause that is not a definition
; would read as a call of itself, and calls in it would have no enclosing definition.

; Compile time: tree-sitter analyses each named node that has children in a pattern against
; the parse table when the query is compiled, and `call`, `binary_operator` and `do_block`
; are slow to analyse (Elixir is made of them). So most patterns write them as wildcards
; pinned down by fields that only one node type has: `(_ target: ... (arguments ...))` is a
; `call` (an `access_call` has a `target` but no `arguments`; `!key` rules it out where
; `arguments` is not required, but not on a pattern's root, whose negated fields tree-sitter
; skips: those keep `(call ...)`); `(_ operator: "@" operand: ...)` is a `unary_operator`
; (the only node with `operand`); `(_ left: ... operator: "when")` is a `binary_operator`
; (`dot` has operator ".", `stab_clause` "->"); `(_ operator: "." right: ...)` is a `dot`;
; the child of a call holding the anonymous "do" is its `do_block`. Wildcards never match
; ERROR nodes; patterns of siblings still start with a concrete node, as tree-sitter starts
; those only outside ERROR nodes. A wildcard's first child should be a concrete node (the
; pattern then starts there), or the pattern is tried at every node; and a wildcard child is
; tried on every sibling, so the hot `def` patterns keep `call` and `binary_operator` in their
; arguments.

; ---------------------------------------------------------------------------------------------
; Modules (`defmodule A.B` names the module `A.B`; a nested `defmodule C` is `A.B.C`). The
; `@moduledoc` sits in the `do_block`, the call's child holding the anonymous "do".

(_
  target: (identifier) @_kw
  (arguments (alias) @name)
  (_
    "do"
    (_
      operator: "@"
      operand: (_
        target: (identifier) @_doc
        (arguments (string) @doc))))
  (#eq? @_kw "defmodule")
  (#eq? @_doc "moduledoc")) @definition.module
(_
  target: (identifier) @_kw
  (arguments (alias) @name)
  (#eq? @_kw "defmodule")) @definition.module

; Protocols are interfaces; their `def`s are method signatures.
(_
  target: (identifier) @_kw
  (arguments (alias) @name)
  (_
    "do"
    (_
      operator: "@"
      operand: (_
        target: (identifier) @_doc
        (arguments (string) @doc))))
  (#eq? @_kw "defprotocol")
  (#eq? @_doc "moduledoc")) @definition.interface
(_
  target: (identifier) @_kw
  (arguments (alias) @name)
  (#eq? @_kw "defprotocol")) @definition.interface

; `defimpl Proto, for: Type` is an impl named after the implementing type (like Rust's
; `impl Trait for Type`), and implements `Proto`. Without `for:` (inside the type's own
; module) it is no definition: its functions belong to the enclosing module, the type.
(_
  target: (identifier) @_kw
  (arguments
    (alias) @_proto
    (keywords
      (pair
        key: (keyword) @_for
        value: (alias) @name)))
  (#eq? @_kw "defimpl")
  (#match? @_for "^for:")) @definition.impl
(_
  target: (identifier) @_kw
  (arguments . (alias) @name @reference.implementation)
  (#eq? @_kw "defimpl"))

; ---------------------------------------------------------------------------------------------
; Functions, macros and guards: `def f(x)`, `def f`, `def f(x) when g`, `def f(x), do: ...`.
; A `@doc` string before the clause (possibly with other attributes such as `@spec` or `@impl`
; in between) is its doc.

((unary_operator
   operator: "@"
   operand: (_
     target: (identifier) @_doc
     (arguments (string) @doc)))
 .
 (unary_operator)*
 .
 (_
   target: (identifier) @_kw
   (arguments
     [
       (identifier) @name
       (_ target: (identifier) @name !key)
       (_
         left: [(identifier) @name (_ target: (identifier) @name !key)]
         operator: "when")
     ])) @definition.function
 (#eq? @_doc "doc")
 (#any-of? @_kw "def" "defp" "defdelegate"))
((unary_operator
   operator: "@"
   operand: (_
     target: (identifier) @_doc
     (arguments (string) @doc)))
 .
 (unary_operator)*
 .
 (_
   target: (identifier) @_kw
   (arguments
     [
       (identifier) @name
       (_ target: (identifier) @name !key)
       (_
         left: [(identifier) @name (_ target: (identifier) @name !key)]
         operator: "when")
     ])) @definition.macro
 (#eq? @_doc "doc")
 (#any-of? @_kw "defmacro" "defmacrop" "defguard" "defguardp"))

(_
  target: (identifier) @_kw
  (arguments
    [
      (identifier) @name
      (call target: (identifier) @name)
      (binary_operator
        left: [(identifier) @name (_ target: (identifier) @name !key)]
        operator: "when")
    ])
  (#any-of? @_kw "def" "defp" "defdelegate")) @definition.function
(_
  target: (identifier) @_kw
  (arguments
    [
      (identifier) @name
      (call target: (identifier) @name)
      (binary_operator
        left: [(identifier) @name (_ target: (identifier) @name !key)]
        operator: "when")
    ])
  (#any-of? @_kw "defmacro" "defmacrop" "defguard" "defguardp")) @definition.macro

; ---------------------------------------------------------------------------------------------
; Module attributes: types, callbacks and constants.

; `@typedoc "..."` then `@type t :: ...` / `@type t(a) :: ...`.
((unary_operator
   operator: "@"
   operand: (_
     target: (identifier) @_doc
     (arguments (string) @doc)))
 .
 (_
   operator: "@"
   operand: (_
     target: (identifier) @_kw
     (arguments
       (_
         left: [(identifier) @name (_ target: (identifier) @name !key)]
         operator: "::")))) @definition.type
 (#eq? @_doc "typedoc")
 (#any-of? @_kw "type" "typep" "opaque"))
(_
  operator: "@"
  operand: (_
    target: (identifier) @_kw
    (arguments
      (_
        left: [(identifier) @name (_ target: (identifier) @name !key)]
        operator: "::")))
  (#any-of? @_kw "type" "typep" "opaque")) @definition.type

; Behaviour callbacks: `@callback handle(event) :: :ok` (also with a `when` clause).
((unary_operator
   operator: "@"
   operand: (_
     target: (identifier) @_doc
     (arguments (string) @doc)))
 .
 (_
   operator: "@"
   operand: (_
     target: (identifier) @_kw
     (arguments
       (_
         left: [(identifier) @name (_ target: (identifier) @name !key)]
         operator: "::")))) @definition.function
 (#eq? @_doc "doc")
 (#any-of? @_kw "callback" "macrocallback"))
(_
  operator: "@"
  operand: (_
    target: (identifier) @_kw
    (arguments
      [
        (_
          left: [(identifier) @name (_ target: (identifier) @name !key)]
          operator: "::")
        (_
          left: (_
            left: [(identifier) @name (_ target: (identifier) @name !key)]
            operator: "::")
          operator: "when")
      ]))
  (#any-of? @_kw "callback" "macrocallback")) @definition.function

; `@behaviour Mod` is an implemented interface.
(_
  operator: "@"
  operand: (_
    target: (identifier) @_kw
    (arguments (alias) @name @reference.implementation))
  (#eq? @_kw "behaviour"))

; Any other attribute set with a value is a constant: `@timeout 5000`.
(_
  operator: "@"
  operand: (_
    target: (identifier) @name
    (arguments))
  (#not-any-of? @name
    "doc" "moduledoc" "typedoc" "spec" "type" "typep" "opaque" "callback" "macrocallback"
    "impl" "behaviour" "derive" "enforce_keys" "compile" "dialyzer" "deprecated" "since"
    "external_resource" "on_load" "on_definition" "before_compile" "after_compile"
    "after_verify" "optional_callbacks" "vsn" "file" "fallback_to_any" "protocol"
    "nifs" "tag" "moduletag" "describetag")) @definition.constant

; ---------------------------------------------------------------------------------------------
; References.

; `use Mod` injects code: a mixin.
(_
  target: (identifier) @_kw
  (arguments . (alias) @name @reference.implementation)
  (#eq? @_kw "use"))

; Struct literals and patterns: `%User{}`, `%Shop.User{name: n}`.
(map (struct (alias) @name @reference.class))

; Typespec calls: `String.t()`, `t()`, and the built-in types (`integer()`, `list(t)`),
; whether in `@spec`/`@type` or elsewhere; built-in type names that are also common function
; names are types only with empty parentheses (`map()`, `tuple()`). The call patterns below
; leave these names out (any reference kind would beat a type).
(call
  target: (_ operator: "." right: (identifier) @name)
  (#eq? @name "t")) @reference.type
(call
  target: (identifier) @name
  (#any-of? @name
    "t" "integer" "non_neg_integer" "pos_integer" "neg_integer" "float" "number" "atom"
    "binary" "bitstring" "boolean" "term" "any" "none" "no_return" "keyword" "list"
    "nonempty_list" "maybe_improper_list" "nonempty_improper_list" "charlist"
    "nonempty_charlist" "iodata" "iolist" "pid" "arity" "byte" "char" "mfa"
    "as_boolean" "nonempty_binary" "nonempty_bitstring")) @reference.type
(_
  target: (identifier) @name
  (arguments) @_args
  (#any-of? @name
    "map" "tuple" "fun" "module" "timeout" "reference" "port" "struct" "node" "function"
    "identifier")
  (#eq? @_args "()")) @reference.type
(_
  target: (identifier) @name
  (arguments (_))
  (#any-of? @name
    "map" "tuple" "fun" "module" "timeout" "reference" "port" "struct" "node" "function"
    "identifier")) @reference.call

; Local calls, but definition and special forms, the typespec names above and
; `optional`/`required` (below), listed by parent so as to leave out a module attribute (`@doc
; "..."` is a call under `@`) and the head of a `@spec f(x) :: t` (left of `::`). The parent
; with "do" is the `do_block`; `left:` with an operator other than `::` is a `binary_operator`
; or a `dot` (operator "."); only a `binary_operator` has a call on its `right:`.
([
  (arguments (_ target: (identifier) @name !key) @reference.call)
  (_ "do" (_ target: (identifier) @name !key) @reference.call)
  (body (_ target: (identifier) @name !key) @reference.call)
  (else_block (_ target: (identifier) @name !key) @reference.call)
  (list (_ target: (identifier) @name !key) @reference.call)
  (tuple (_ target: (identifier) @name !key) @reference.call)
  (map_content (_ target: (identifier) @name !key) @reference.call)
  (pair (_ target: (identifier) @name !key) @reference.call)
  (interpolation (_ target: (identifier) @name !key) @reference.call)
  (unary_operator
    operator: _ @_op
    operand: (_ target: (identifier) @name !key) @reference.call
    (#not-eq? @_op "@"))
  (_ right: (call target: (identifier) @name) @reference.call)
  (_
    left: (call target: (identifier) @name) @reference.call
    operator: _ @_op
    (#not-eq? @_op "::"))
 ]
 (#not-any-of? @name
    "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defn" "defnp"
    "defmodule" "defprotocol" "defimpl" "defstruct" "defexception" "defoverridable"
    "alias" "import" "require" "use" "case" "cond" "if" "unless" "for" "with" "try"
    "receive" "quote" "unquote" "unquote_splicing" "super" "raise" "reraise" "throw"
    "describe" "test"
    "t" "integer" "non_neg_integer" "pos_integer" "neg_integer" "float" "number" "atom"
    "binary" "bitstring" "boolean" "term" "any" "none" "no_return" "keyword" "list"
    "nonempty_list" "maybe_improper_list" "nonempty_improper_list" "charlist"
    "nonempty_charlist" "iodata" "iolist" "pid" "arity" "byte" "char" "mfa"
    "as_boolean" "nonempty_binary" "nonempty_bitstring" "optional" "required"
    "map" "tuple" "fun" "module" "timeout" "reference" "port" "struct" "node" "function"
    "identifier"))

; In a typespec map, `optional(k) => v` and `required(k) => v` (never calls).
(_
  left: (call target: (identifier) @name) @reference.type
  operator: "=>"
  (#any-of? @name "optional" "required"))

; Remote calls: `Mod.fun(x)` and `Mod.fun` (receiver `Mod`), `:ets.new(...)`, `mod.fun(x)`;
; `value.field` without parentheses is a field access, not a call.
(call
  target: (_ left: (alias) operator: "." right: (identifier) @name)
  (#not-eq? @name "t")) @reference.call
(_
  target: (dot right: (identifier) @name)
  (arguments)
  (#not-eq? @name "t")) @reference.call

; Pipes into a function without parentheses: `x |> f`, `x |> Mod.f`.
(_
  operator: "|>"
  right: (identifier) @name @reference.call)
(_
  operator: "|>"
  right: (_ operator: "." right: (identifier) @name) @reference.call)

; Captures: `&Mod.fun/2`, `&fun/1`.
(_
  operator: "&"
  operand: (_
    left: [
      (identifier) @name
      (_ operator: "." right: (identifier) @name)
    ] @reference.call
    operator: "/"))

; Module names passed as values: `Repo.all(User)`, `GenServer.call(Cache, msg)`.
(_
  target: (dot)
  (arguments (alias) @name @reference.type))
(_
  target: (identifier) @_f
  (arguments (alias) @name @reference.type)
  (#not-any-of? @_f
    "defmodule" "defprotocol" "defimpl" "alias" "import" "require" "use"))
