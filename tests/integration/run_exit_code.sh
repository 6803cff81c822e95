#!/bin/sh
# The program's exit status is execbox's exit status.
. "$(dirname "$0")/lib.sh"

for code in 0 1 7 42 100; do
  ebrun -l sh -c "echo before; exit $code"
  expect_rc "$code" "exit $code"
  expect_stdout before "exit $code"
done
ebrun -l bash -c 'exit 7'
expect_rc 7 "bash exit 7"
finish
