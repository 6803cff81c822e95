#!/bin/sh
# Exit statuses pass through; a signal reads as 128+N; no container is left.
. "$(dirname "$0")/lib.sh"

for code in 0 1 3 42 100; do
  ebrun -l python -c "import sys; sys.exit($code)"
  expect_rc "$code" "python exit $code"
done
ebrun -l sh -c 'echo before; exit 7'
expect_rc 7 "sh exit 7"
expect_stdout before "sh exit 7"

ebrun -l python -c 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)'
expect_rc 139 "killed by SIGSEGV"
expect_in err "signal 11" "killed by SIGSEGV"
ebrun --json -l sh -c 'kill -TERM $$'
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "killed" and r["signal"] == 15 and r["exit_code"] == 143, r
' "$T/out" || { fail "killed by SIGTERM (--json)"; show; }
expect_no_container "after the runs"
finish
