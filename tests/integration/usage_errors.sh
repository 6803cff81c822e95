#!/bin/sh
# Usage errors exit 64 with a message on stderr and nothing on stdout.
. "$(dirname "$0")/lib.sh"

check_usage() {
  what=$1
  shift
  eb "$@"
  expect_rc 64 "$what"
  expect_stdout_empty "$what"
  [ -s "$T/err" ] || fail "$what: no message on stderr"
}

check_usage "run with no code" run --runtime "$RUNTIME" -l python
expect_in err "no code"
check_usage "run with no language" run --runtime "$RUNTIME" -c 'print(1)'
expect_in err "language"
check_usage "bad --timeout" run --runtime "$RUNTIME" -l sh --timeout abc -c true
expect_in err "--timeout"
check_usage "negative --timeout" run --runtime "$RUNTIME" -l sh --timeout -5 -c true
check_usage "zero --timeout" run --runtime "$RUNTIME" -l sh --timeout 0 -c true
check_usage "bad --output-limit" run --runtime "$RUNTIME" -l sh --output-limit lots -c true
check_usage "bad --memory" run --runtime "$RUNTIME" -l sh --memory 12q -c true
check_usage "bad --pids" run --runtime "$RUNTIME" -l sh --pids 0 -c true
check_usage "bad --network" run --runtime "$RUNTIME" -l sh --network maybe -c true
check_usage "unknown option" run --runtime "$RUNTIME" --no-such-option -l sh -c true
check_usage "missing option argument" run --runtime "$RUNTIME" -l
check_usage "unknown runtime" run --runtime no-such-runtime -l sh -c true
expect_in err "no-such-runtime"
check_usage "unknown command" frobnicate
expect_in err "frobnicate"
check_usage "no command"
check_usage "languages bad option" languages --bogus
check_usage "runtimes bad option" runtimes --bogus
finish
