#!/bin/sh
# -e adds environment variables; arguments after `--` reach the program.
. "$(dirname "$0")/lib.sh"

EB_HOST_ONLY=secret ebrun -l sh -e GREETING=hello -e 'SPACED=a b' \
  -c 'echo "$GREETING|$SPACED|${EB_HOST_ONLY-unset}"'
expect_rc 0 "run -e"
expect_stdout "hello|a b|unset" "run -e"

ebrun -l sh -e NOVALUE -c 'true'
expect_rc 64 "run -e NOVALUE"

printf 'printf "[%%s]" "$@"\n' >"$T/args.sh"
ebrun "$T/args.sh" -- one 'two words' ''
expect_rc 0 "run FILE -- args"
[ "$(cat "$T/out")" = "[one][two words][]" ] || { fail "run FILE -- args: wrong argv"; show; }
finish
