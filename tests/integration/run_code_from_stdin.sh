#!/bin/sh
# `execbox run -l LANG -` reads the code from standard input.
. "$(dirname "$0")/lib.sh"

printf 'echo "from stdin"\nexit 3\n' >"$T/code.sh"
ebrun -l sh - <"$T/code.sh"
expect_rc 3 "run -l sh -"
expect_stdout "from stdin" "run -l sh -"

if language_available python; then
  printf 'print(sum(range(10)))\n' >"$T/code.py"
  ebrun -l python - <"$T/code.py"
  expect_rc 0 "run -l python -"
  expect_stdout 45 "run -l python -"
fi

# `-` needs a language.
echo 'echo hi' >"$T/hi.sh"
ebrun - <"$T/hi.sh"
expect_rc 64 "run - without -l"
expect_in err "language" "run - without -l"

# Code and program stdin cannot both be standard input.
ebrun -l sh --stdin - - <"$T/hi.sh"
expect_rc 64 "run --stdin - -"
finish
