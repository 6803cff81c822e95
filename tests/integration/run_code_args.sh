#!/bin/sh
# Arguments after `--` reach a program given with -c, as `run --help` documents:
#   execbox run [OPTIONS] [FILE | -] [-- ARGS...]
. "$(dirname "$0")/lib.sh"

ebrun -l sh -c 'echo "$#:$1:$2"' -- x 'y z'
expect_rc 0 "run -c CODE -- ARGS"
expect_stdout "2:x:y z" "run -c CODE -- ARGS"

# With code from stdin.
printf 'echo "$#:$1"\n' >"$T/code.sh"
ebrun -l sh - -- arg <"$T/code.sh"
expect_rc 0 "run -l sh - -- ARGS"
expect_stdout "1:arg" "run -l sh - -- ARGS"
finish
