; `source lib/util.sh`, `. "$DIR/common.sh"`, and bats' `load test_helper`: the path as
; written (quotes stripped, expansions kept).
(command
  name: (command_name (word) @_source)
  . argument: (_) @import.path
  (#any-of? @_source "source" "." "load")) @import
