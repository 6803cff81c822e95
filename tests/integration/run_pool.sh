#!/bin/sh
# `execbox run` with EXECBOX_POOL: the execution runs in a warm sandbox (for
# python, in the waiting interpreter) with the same results as a cold one;
# malformed pool settings are usage errors, and `off` turns the pool off.
. "$(dirname "$0")/lib.sh"

for pool in off 1 3; do
  export EXECBOX_POOL=$pool
  ebrun -l python -c 'import sys; print("py", sys.argv[1:]); sys.exit(5)' -- a 'b c'
  expect_rc 5 "pool $pool: exit code"
  expect_stdout "py ['a', 'b c']" "pool $pool: argv"
  printf 'in\n' >"$T/stdin"
  ebrun -l python --stdin "$T/stdin" -c 'print(input().upper())'
  expect_stdout IN "pool $pool: stdin"
  ebrun -l python -c 'raise ValueError("boom")'
  expect_rc 1 "pool $pool: uncaught exception"
  expect_in err 'ValueError: boom'
  expect_in err 'main.py", line 1'
  ebrun -l sh -c 'echo sh; exit 3'
  expect_rc 3 "pool $pool: sh exit code"
  expect_stdout sh "pool $pool: sh"
  ebrun -l python --timeout 300ms -c 'while True: pass'
  expect_rc 124 "pool $pool: timeout"
done

for bad in abc -1 65 2x; do
  EXECBOX_POOL=$bad eb run --runtime "$RUNTIME" -l sh -c true
  expect_rc 64 "EXECBOX_POOL=$bad"
  expect_in err EXECBOX_POOL
done
EXECBOX_POOL=1 EXECBOX_POOL_IDLE_MS=soon eb run --runtime "$RUNTIME" -l sh -c true
expect_rc 64 "EXECBOX_POOL_IDLE_MS=soon"
expect_in err EXECBOX_POOL_IDLE_MS
finish
