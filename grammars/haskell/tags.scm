; Haskell definitions and references.
;
; One definition per function: its first equation (the one right after its type signature,
; or after anything that is not an equation of the same name); later equations of the same
; function are not definitions, and neither is the signature line (its type references sit
; at module level). The equation is the definition so that calls in its body have the
; function as their enclosing definition (calls in later equations have none). A binding of
; a literal is a constant. `where` bindings nest in their function; of `let` bindings only
; functions count. Data types, newtypes, synonyms and families are types; constructors are
; classes (what a constructor application instantiates); record fields are fields of their
; constructor; type classes are interfaces whose signatures are methods; an instance is an
; impl named after its type (like Rust's `impl Trait for Type`) that implements the class.
;
; Haddock comments are `haddock` nodes; the one before the first declaration of a block sits
; before the block's node (or at the end of `imports`), and the one of a function is above
; its signature, so those cases are captured with @doc. Patterns with a preceding sibling
; use one pattern per sibling kind: an alternation there loses matches when two siblings of
; one kind follow each other. Order matters: constants before functions, docs first.
;
; Compile time: tree-sitter analyses each named node that has children in a pattern against
; the parse table when the query is compiled, which is slow for `apply`, `infix`, `parens`,
; `signature`, `function` and most other expression nodes, and slower still for a pattern
; of siblings. So the sibling patterns below `haskell` (the only parent of `declarations`)
; are rooted there, and nested nodes are written as wildcards pinned down by their fields or
; context: `(_ constructor: ... argument: (_))` is an `apply` (the only node with
; `argument`), `(_ id: ...)` a `qualified` (a `do_module` only sits in a `do`), `(_ operator:
; ... right_operand: ...)` an `infix`, a `type:` beside a variable `name:` a `signature`, a
; variable `name:` with `patterns:` a `function`, without them a `bind`, and `binds:` holds a
; `local_binds`. Wildcards never match ERROR nodes. A wildcard as a pattern's root starts the
; pattern at its first child, which costs an analysis of its own, so roots stay concrete but
; for one slower `infix`.

; ---------------------------------------------------------------------------------------------
; Types, classes and instances.

(haskell
  (haddock) @doc
  .
  (declarations
    .
    [
      (data_type name: (name) @name)
      (newtype name: (name) @name)
      (type_synonym name: (name) @name)
    ] @definition.type))
(haskell
  (imports (haddock) @doc .)
  .
  (declarations
    .
    [
      (data_type name: (name) @name)
      (newtype name: (name) @name)
      (type_synonym name: (name) @name)
    ] @definition.type))
(haskell
  (haddock) @doc
  .
  (declarations
    .
    (class name: (name) @name) @definition.interface))
(haskell
  (imports (haddock) @doc .)
  .
  (declarations
    .
    (class name: (name) @name) @definition.interface))

(data_type name: (name) @name) @definition.type
(newtype name: (name) @name) @definition.type
(type_synonym name: (name) @name) @definition.type
(type_family name: (name) @name) @definition.type
(data_family name: (name) @name) @definition.type
(class name: (name) @name) @definition.interface

; Constructors and record fields.
(data_constructor
  constructor: [
    (_ name: (constructor) @name)
    (_ operator: (constructor_operator) @name)
  ]) @definition.class
(gadt_constructor name: (constructor) @name) @definition.class
(gadt_constructor names: (binding_list name: (constructor) @name @definition.class))
(newtype_constructor name: (constructor) @name) @definition.class
(field name: (field_name (variable) @name)) @definition.field

; Class method signatures (`m1, m2 :: a -> Int` gives two, each named by its name alone);
; default method bodies are not definitions of their own.
(class
  (haddock) @doc
  .
  (class_declarations
    .
    (_ name: [(variable) @name (_ (operator) @name)] type: (_)) @definition.function))
(class_declarations
  (_ name: [(variable) @name (_ (operator) @name)] type: (_)) @definition.function)
(class_declarations
  (_ names: (binding_list name: (variable) @name @definition.function)))

; `instance C T`, `instance C (T a)`, `instance C (T a b)`: an impl named `T`; when the first
; type is a variable, a list or a tuple, the impl is named after the class.
(instance patterns: (type_patterns . (name) @name)) @definition.impl
(instance
  patterns: (type_patterns
    .
    (parens
      [
        (_ constructor: (name) @name argument: (_))
        (_ constructor: (_ constructor: (name) @name argument: (_)) argument: (_))
      ]))) @definition.impl
(instance
  name: (name) @name
  patterns: (type_patterns . [(variable) (list) (tuple) (unit)])) @definition.impl
(instance
  name: (name) @name
  patterns: (type_patterns . (parens (_ constructor: (variable) argument: (_))))) @definition.impl

; ---------------------------------------------------------------------------------------------
; Functions and constants.


; Constants: a binding of a literal, at top level or in a `where`; a doc above the signature
; (a doc right above a definition is found without help; the one before the first declaration
; sits before the `declarations` node or at the end of `imports`).
(declarations
  (haddock) @doc
  .
  (_ name: (variable) @_sig type: (_))
  .
  (_ name: (variable) @name match: (match expression: (literal)) !patterns) @definition.constant
  (#eq? @_sig @name))
(haskell
  (haddock) @doc
  .
  (declarations
    .
    (_ name: (variable) @_sig type: (_))
    .
    (_ name: (variable) @name match: (match expression: (literal)) !patterns) @definition.constant)
  (#eq? @_sig @name))
(haskell
  (imports (haddock) @doc .)
  .
  (declarations
    .
    (_ name: (variable) @_sig type: (_))
    .
    (_ name: (variable) @name match: (match expression: (literal)) !patterns) @definition.constant)
  (#eq? @_sig @name))

(declarations
  (bind name: (variable) @name match: (match expression: (literal))) @definition.constant)
(function
  binds: (_
    (bind name: (variable) @name match: (match expression: (literal))) @definition.constant))
(bind
  binds: (_
    (bind name: (variable) @name match: (match expression: (literal))) @definition.constant))

; Functions: a doc above the signature.
(declarations
  (haddock) @doc
  .
  (_ name: (variable) @_sig type: (_))
  .
  (_ name: (variable) @name match: (_)) @definition.function
  (#eq? @_sig @name))
(haskell
  (haddock) @doc
  .
  (declarations
    .
    (_ name: (variable) @_sig type: (_))
    .
    (_ name: (variable) @name match: (_)) @definition.function)
  (#eq? @_sig @name))
(haskell
  (imports (haddock) @doc .)
  .
  (declarations
    .
    (_ name: (variable) @_sig type: (_))
    .
    (_ name: (variable) @name match: (_)) @definition.function)
  (#eq? @_sig @name))

; The first equation of each function (top level, `where`/`let` bindings, instance methods).
(declarations
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(declarations
  (signature)
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(declarations
  (function name: (_) @_prev)
  .
  (_ name: (variable) @name patterns: (_)) @definition.function
  (#not-eq? @_prev @name))
(declarations
  (bind)
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(declarations
  (function (infix))
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(declarations
  (_) @_other
  .
  (_ name: (variable) @name patterns: (_)) @definition.function
  (#match? @_other "^(data|newtype|type|class|instance|deriving|infixl|infixr|infix|foreign|pattern|default)\\s|^--|^\\{-|^#"))
(declarations
  (top_splice)
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(local_binds
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(local_binds
  (signature)
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(local_binds
  (function name: (_) @_prev)
  .
  (_ name: (variable) @name patterns: (_)) @definition.function
  (#not-eq? @_prev @name))
(local_binds
  (bind)
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(local_binds
  (function (infix))
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(local_binds
  (_) @_other
  .
  (_ name: (variable) @name patterns: (_)) @definition.function
  (#match? @_other "^(data|newtype|type|class|instance|deriving|infixl|infixr|infix|foreign|pattern|default)\\s|^--|^\\{-|^#"))
(instance_declarations
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(instance_declarations
  (signature)
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(instance_declarations
  (function name: (_) @_prev)
  .
  (_ name: (variable) @name patterns: (_)) @definition.function
  (#not-eq? @_prev @name))
(instance_declarations
  (bind)
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(instance_declarations
  (function (infix))
  .
  (_ name: (variable) @name patterns: (_)) @definition.function)
(instance_declarations
  (_) @_other
  .
  (_ name: (variable) @name patterns: (_)) @definition.function
  (#match? @_other "^(data|newtype|type|class|instance|deriving|infixl|infixr|infix|foreign|pattern|default)\\s|^--|^\\{-|^#"))

; Bindings without arguments have a single equation: top level, `where` (not `let`: those are
; local values) and instance methods.
(declarations (bind name: (variable) @name) @definition.function)
(function binds: (_ (bind name: (variable) @name) @definition.function))
(bind binds: (_ (bind name: (variable) @name) @definition.function))
(instance_declarations (bind name: (variable) @name) @definition.function)

; Operators defined prefix (`(<+>) a b = ...`) or infix (`a <> b = ...`, x `plus` y = ...);
; every equation of a multi-equation operator is a definition.
(function name: (_ (operator) @name)) @definition.function
(bind name: (_ (operator) @name)) @definition.function
(function (_ operator: (operator) @name)) @definition.function
(function (_ operator: (infix_id (variable) @name))) @definition.function

; ---------------------------------------------------------------------------------------------
; References.

; The class an instance implements; classes a data type derives.
(instance name: (name) @name @reference.implementation)
(instance name: (_ id: (name) @name) @reference.implementation)
(deriving
  classes: [
    (name) @name
    (_ id: (name) @name)
    (_ !argument !operator [(name) @name (_ id: (name) @name)])
  ] @reference.implementation)
(deriving_instance name: (name) @name @reference.implementation)

; Superclasses: `class (Eq a, Show a) => Ord a`.
(class
  context: (context
    context: [
      (_ constructor: (name) @name @reference.class argument: (_))
      (_ !argument !operator (_ constructor: (name) @name @reference.class argument: (_)))
    ]))

; Function application: the head of `f x y` (`M.f x` has receiver `M`).
(apply function: [(variable) @name (_ id: (variable) @name)]) @reference.call
(apply function: [(constructor) @name (_ id: (constructor) @name)]) @reference.class

; Infix application with backticks: x `div` y, x `M.f` y.
(infix_id (variable) @name @reference.call)
(infix_id (_ id: (variable) @name) @reference.call)

; Functions named without arguments where they are certainly functions: either side of `.`,
; the left of `$`, `<$>`, `=<<`, the right of `>>=`, `&`, `<&>`; a point-free definition
; (`quantityOf = itemQuantity`).
(infix
  left_operand: [
    (variable) @name
    (_ id: (variable) @name)
  ] @reference.call
  operator: (operator) @_op
  (#any-of? @_op "." "$" "$!" "<$>" "<$!>" "=<<" ">=>" "<=<"))
(_
  operator: (operator) @_op
  right_operand: [
    (variable) @name
    (_ id: (variable) @name)
  ] @reference.call
  (#any-of? @_op "." ">>=" "&" "<&>" ">=>" "<=<"))
(bind
  match: (match
    expression: [
      (variable) @name
      (_ id: (variable) @name)
    ] @reference.call))

; Constructors in expressions and patterns: `Backroom`, `Store <$> ...`, `(Shelf w n)`.
(expression/constructor) @name @reference.class
(pattern/constructor) @name @reference.class
(qualified id: (constructor) @name) @reference.class

; Type uses (in signatures, fields, contexts, instance heads).
(qualified id: (name) @name) @reference.type
(type/name) @name @reference.type
(constraint/name) @name @reference.type
