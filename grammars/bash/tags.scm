; Bash definitions and references. `#` comments right above a function are found
; generically. Every command is a call; builtins, coreutils and the standard POSIX utilities
; are left out, so what remains are mostly the script's own functions and other programs.

(function_definition name: (word) @name) @definition.function

; bats: `@test "adds numbers" { ... }` parses as a command named `@test` (the block's braces
; become commands of their own), so the definition covers the header line only.
(command
  name: (command_name (word) @_test)
  . argument: [
    (string (string_content) @name)
    (raw_string) @name
  ]
  (#eq? @_test "@test")) @definition.function

; Top-level variables: `readonly X=1` and `declare -r X=1` are constants; `export X=1`,
; `declare -gx X=1` and plain `X=1` variables.
(program
  (declaration_command
    "readonly"
    (variable_assignment name: (variable_name) @name)) @definition.constant)
(program
  (declaration_command
    ["declare" "typeset"]
    (word) @_flags
    (variable_assignment name: (variable_name) @name)) @definition.constant
  (#match? @_flags "^-[a-zA-Z]*r"))
(program
  (declaration_command
    ["export" "declare" "typeset"]
    (variable_assignment name: (variable_name) @name)) @definition.variable
  (#not-any-of? @name "PATH" "IFS" "HOME" "LANG" "LC_ALL" "PS4" "SHELLOPTS" "TERM"))
; `declare -A MAP` without a value (but not `declare -f fn`, `export -f fn`: functions).
(program
  (declaration_command
    ["declare" "typeset"]
    (word)? @_flags
    (variable_name) @name) @definition.variable
  (#not-match? @_flags "f"))
(program
  (variable_assignment name: (variable_name) @name) @definition.variable
  (#not-any-of? @name "PATH" "IFS" "HOME" "LANG" "LC_ALL" "PS4" "SHELLOPTS" "TERM"))

; Commands: `deploy "$env"`. The reference node is the command's name (a command may start
; with `VAR=x` assignments).
; A command run by another: bats' `run deploy "$env"`, `exec serve`, `sudo install_deps`,
; `nohup worker &`, `trap cleanup EXIT` (the first argument, not an option).
(command
  name: (command_name (word) @_runner)
  . argument: (word) @name @reference.call
  (#any-of? @_runner "run" "exec" "sudo" "nohup" "nice" "trap")
  (#not-match? @name "^-")
  (#not-any-of? @name
    ; shell keywords and builtins
    "." ":" "[" "[[" "]" "]]" "{" "}" "!" "alias" "bg" "bind" "break" "builtin" "caller"
    "cd" "command" "compgen" "complete" "compopt" "continue" "declare" "dirs" "disown" "echo"
    "enable" "eval" "exec" "exit" "export" "false" "fc" "fg" "getopts" "hash" "help"
    "history" "jobs" "kill" "let" "local" "logout" "mapfile" "popd" "printf" "pushd" "pwd"
    "read" "readarray" "readonly" "return" "set" "shift" "shopt" "source" "suspend" "test"
    "time" "times" "trap" "true" "type" "typeset" "ulimit" "umask" "unalias" "unset" "wait"
    ; coreutils and standard POSIX utilities
    "awk" "basename" "bash" "cat" "chgrp" "chmod" "chown" "cmp" "comm" "cp" "cut" "date"
    "dd" "df" "diff" "dirname" "du" "egrep" "env" "expr" "fgrep" "find" "grep" "gzip"
    "head" "id" "install" "ln" "ls" "mkdir" "mktemp" "mv" "nice" "nohup" "od" "paste"
    "printenv" "readlink" "realpath" "rm" "rmdir" "sed" "seq" "sh" "sleep" "sort" "stat"
    "sudo" "tail" "tar" "tee" "timeout" "touch" "tr" "uname" "uniq" "wc" "which" "whoami"
    "xargs" "yes"
    ; bats
    "@test" "run" "load" "skip"))

; A path (`./build.sh`) is another program, not a function.
(command
  name: (command_name (word) @name) @reference.call
  (#not-match? @name "/")
  (#not-any-of? @name
    ; shell keywords and builtins
    "." ":" "[" "[[" "]" "]]" "{" "}" "!" "alias" "bg" "bind" "break" "builtin" "caller"
    "cd" "command" "compgen" "complete" "compopt" "continue" "declare" "dirs" "disown" "echo"
    "enable" "eval" "exec" "exit" "export" "false" "fc" "fg" "getopts" "hash" "help"
    "history" "jobs" "kill" "let" "local" "logout" "mapfile" "popd" "printf" "pushd" "pwd"
    "read" "readarray" "readonly" "return" "set" "shift" "shopt" "source" "suspend" "test"
    "time" "times" "trap" "true" "type" "typeset" "ulimit" "umask" "unalias" "unset" "wait"
    ; coreutils and standard POSIX utilities
    "awk" "basename" "bash" "cat" "chgrp" "chmod" "chown" "cmp" "comm" "cp" "cut" "date"
    "dd" "df" "diff" "dirname" "du" "egrep" "env" "expr" "fgrep" "find" "grep" "gzip"
    "head" "id" "install" "ln" "ls" "mkdir" "mktemp" "mv" "nice" "nohup" "od" "paste"
    "printenv" "readlink" "realpath" "rm" "rmdir" "sed" "seq" "sh" "sleep" "sort" "stat"
    "sudo" "tail" "tar" "tee" "timeout" "touch" "tr" "uname" "uniq" "wc" "which" "whoami"
    "xargs" "yes"
    ; bats
    "@test" "run" "load" "skip"))
