; Elixir definitions and references. Everything is a `call`: `defmodule A.B do`, `def f(x)`,
; `@attr value` (a `unary_operator` `@` around a call). Docs are `@moduledoc`/`@doc`/`@typedoc`
; strings, captured with @doc; `# comments` right above a definition are found generically.
; Each clause of a multi-clause function is a definition (they share one qualified name; the
; `@doc` goes to the first): a clause head is a `call`, so a clause that is not a definition
; would read as a call of itself, and calls in it would have no enclosing definition.

; ---------------------------------------------------------------------------------------------
; Modules (`defmodule A.B` names the module `A.B`; a nested `defmodule C` is `A.B.C`).

(call
  target: (identifier) @_kw
  (arguments (alias) @name)
  (do_block
    (unary_operator
      operator: "@"
      operand: (call
        target: (identifier) @_doc
        (arguments (string) @doc))))
  (#eq? @_kw "defmodule")
  (#eq? @_doc "moduledoc")) @definition.module
(call
  target: (identifier) @_kw
  (arguments (alias) @name)
  (#eq? @_kw "defmodule")) @definition.module

; Protocols are interfaces; their `def`s are method signatures.
(call
  target: (identifier) @_kw
  (arguments (alias) @name)
  (do_block
    (unary_operator
      operator: "@"
      operand: (call
        target: (identifier) @_doc
        (arguments (string) @doc))))
  (#eq? @_kw "defprotocol")
  (#eq? @_doc "moduledoc")) @definition.interface
(call
  target: (identifier) @_kw
  (arguments (alias) @name)
  (#eq? @_kw "defprotocol")) @definition.interface

; `defimpl Proto, for: Type` is an impl named after the implementing type (like Rust's
; `impl Trait for Type`), and implements `Proto`. Without `for:` (inside the type's own
; module) it is no definition: its functions belong to the enclosing module, the type.
(call
  target: (identifier) @_kw
  (arguments
    (alias) @_proto
    (keywords
      (pair
        key: (keyword) @_for
        value: (alias) @name)))
  (#eq? @_kw "defimpl")
  (#match? @_for "^for:")) @definition.impl
(call
  target: (identifier) @_kw
  (arguments . (alias) @name @reference.implementation)
  (#eq? @_kw "defimpl"))

; ---------------------------------------------------------------------------------------------
; Functions, macros and guards: `def f(x)`, `def f`, `def f(x) when g`, `def f(x), do: ...`.
; A `@doc` string before the clause (possibly with other attributes such as `@spec` or `@impl`
; in between) is its doc.

((unary_operator
   operator: "@"
   operand: (call
     target: (identifier) @_doc
     (arguments (string) @doc)))
 .
 (unary_operator)*
 .
 (call
   target: (identifier) @_kw
   (arguments
     [
       (identifier) @name
       (call target: (identifier) @name)
       (binary_operator
         left: [(identifier) @name (call target: (identifier) @name)]
         operator: "when")
     ])) @definition.function
 (#eq? @_doc "doc")
 (#any-of? @_kw "def" "defp" "defdelegate"))
((unary_operator
   operator: "@"
   operand: (call
     target: (identifier) @_doc
     (arguments (string) @doc)))
 .
 (unary_operator)*
 .
 (call
   target: (identifier) @_kw
   (arguments
     [
       (identifier) @name
       (call target: (identifier) @name)
       (binary_operator
         left: [(identifier) @name (call target: (identifier) @name)]
         operator: "when")
     ])) @definition.macro
 (#eq? @_doc "doc")
 (#any-of? @_kw "defmacro" "defmacrop" "defguard" "defguardp"))

(call
  target: (identifier) @_kw
  (arguments
    [
      (identifier) @name
      (call target: (identifier) @name)
      (binary_operator
        left: [(identifier) @name (call target: (identifier) @name)]
        operator: "when")
    ])
  (#any-of? @_kw "def" "defp" "defdelegate")) @definition.function
(call
  target: (identifier) @_kw
  (arguments
    [
      (identifier) @name
      (call target: (identifier) @name)
      (binary_operator
        left: [(identifier) @name (call target: (identifier) @name)]
        operator: "when")
    ])
  (#any-of? @_kw "defmacro" "defmacrop" "defguard" "defguardp")) @definition.macro

; ---------------------------------------------------------------------------------------------
; Module attributes: types, callbacks and constants.

; `@typedoc "..."` then `@type t :: ...` / `@type t(a) :: ...`.
((unary_operator
   operator: "@"
   operand: (call
     target: (identifier) @_doc
     (arguments (string) @doc)))
 .
 (unary_operator
   operator: "@"
   operand: (call
     target: (identifier) @_kw
     (arguments
       (binary_operator
         left: [(identifier) @name (call target: (identifier) @name)]
         operator: "::")))) @definition.type
 (#eq? @_doc "typedoc")
 (#any-of? @_kw "type" "typep" "opaque"))
(unary_operator
  operator: "@"
  operand: (call
    target: (identifier) @_kw
    (arguments
      (binary_operator
        left: [(identifier) @name (call target: (identifier) @name)]
        operator: "::")))
  (#any-of? @_kw "type" "typep" "opaque")) @definition.type

; Behaviour callbacks: `@callback handle(event) :: :ok` (also with a `when` clause).
((unary_operator
   operator: "@"
   operand: (call
     target: (identifier) @_doc
     (arguments (string) @doc)))
 .
 (unary_operator
   operator: "@"
   operand: (call
     target: (identifier) @_kw
     (arguments
       (binary_operator
         left: [(identifier) @name (call target: (identifier) @name)]
         operator: "::")))) @definition.function
 (#eq? @_doc "doc")
 (#any-of? @_kw "callback" "macrocallback"))
(unary_operator
  operator: "@"
  operand: (call
    target: (identifier) @_kw
    (arguments
      [
        (binary_operator
          left: [(identifier) @name (call target: (identifier) @name)]
          operator: "::")
        (binary_operator
          left: (binary_operator
            left: [(identifier) @name (call target: (identifier) @name)]
            operator: "::")
          operator: "when")
      ]))
  (#any-of? @_kw "callback" "macrocallback")) @definition.function

; `@behaviour Mod` is an implemented interface.
(unary_operator
  operator: "@"
  operand: (call
    target: (identifier) @_kw
    (arguments (alias) @name @reference.implementation))
  (#eq? @_kw "behaviour"))

; Any other attribute set with a value is a constant: `@timeout 5000`.
(unary_operator
  operator: "@"
  operand: (call
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
(call
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
  target: (dot right: (identifier) @name)
  (#eq? @name "t")) @reference.type
(call
  target: (identifier) @name
  (#any-of? @name
    "t" "integer" "non_neg_integer" "pos_integer" "neg_integer" "float" "number" "atom"
    "binary" "bitstring" "boolean" "term" "any" "none" "no_return" "keyword" "list"
    "nonempty_list" "maybe_improper_list" "nonempty_improper_list" "charlist"
    "nonempty_charlist" "iodata" "iolist" "pid" "arity" "byte" "char" "mfa"
    "as_boolean" "nonempty_binary" "nonempty_bitstring")) @reference.type
(call
  target: (identifier) @name
  (arguments) @_args
  (#any-of? @name
    "map" "tuple" "fun" "module" "timeout" "reference" "port" "struct" "node" "function"
    "identifier")
  (#eq? @_args "()")) @reference.type
(call
  target: (identifier) @name
  (arguments (_))
  (#any-of? @name
    "map" "tuple" "fun" "module" "timeout" "reference" "port" "struct" "node" "function"
    "identifier")) @reference.call

; Local calls, but definition and special forms, the typespec names above and
; `optional`/`required` (below), listed by parent so as to leave out a module attribute (`@doc
; "..."` is a call under `@`) and the head of a `@spec f(x) :: t` (left of `::`).
([
  (arguments (call target: (identifier) @name) @reference.call)
  (do_block (call target: (identifier) @name) @reference.call)
  (body (call target: (identifier) @name) @reference.call)
  (else_block (call target: (identifier) @name) @reference.call)
  (list (call target: (identifier) @name) @reference.call)
  (tuple (call target: (identifier) @name) @reference.call)
  (map_content (call target: (identifier) @name) @reference.call)
  (pair (call target: (identifier) @name) @reference.call)
  (interpolation (call target: (identifier) @name) @reference.call)
  (unary_operator
    operator: _ @_op
    operand: (call target: (identifier) @name) @reference.call
    (#not-eq? @_op "@"))
  (dot left: (call target: (identifier) @name) @reference.call)
  (binary_operator right: (call target: (identifier) @name) @reference.call)
  (binary_operator
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
(binary_operator
  left: (call target: (identifier) @name) @reference.type
  operator: "=>"
  (#any-of? @name "optional" "required"))

; Remote calls: `Mod.fun(x)` and `Mod.fun` (receiver `Mod`), `:ets.new(...)`, `mod.fun(x)`;
; `value.field` without parentheses is a field access, not a call.
(call
  target: (dot left: (alias) right: (identifier) @name)
  (#not-eq? @name "t")) @reference.call
(call
  target: (dot right: (identifier) @name)
  (arguments)
  (#not-eq? @name "t")) @reference.call

; Pipes into a function without parentheses: `x |> f`, `x |> Mod.f`.
(binary_operator
  operator: "|>"
  right: (identifier) @name @reference.call)
(binary_operator
  operator: "|>"
  right: (dot right: (identifier) @name) @reference.call)

; Captures: `&Mod.fun/2`, `&fun/1`.
(unary_operator
  operator: "&"
  operand: (binary_operator
    left: [
      (identifier) @name
      (dot right: (identifier) @name)
    ] @reference.call
    operator: "/"))

; Module names passed as values: `Repo.all(User)`, `GenServer.call(Cache, msg)`.
(call
  target: (dot)
  (arguments (alias) @name @reference.type))
(call
  target: (identifier) @_f
  (arguments (alias) @name @reference.type)
  (#not-any-of? @_f
    "defmodule" "defprotocol" "defimpl" "alias" "import" "require" "use"))
