#!/bin/sh
# A timeout exits 124 and the container is gone; so is it after SIGTERM
# (143) and SIGINT (130) cancel a run.
. "$(dirname "$0")/lib.sh"

ebrun --timeout 1 -l sh -c 'echo started; sleep 60'
expect_rc 124 "run --timeout 1"
expect_stdout started "run --timeout 1"
expect_in err "timed out" "run --timeout 1"
expect_no_container "after the timeout"

# A program that closes its output and runs on: the wait is bounded too.
ebrun --timeout 1 -l sh -c 'exec >&- 2>&-; sleep 60'
expect_rc 124 "timeout after closing stdout"
expect_no_container "after the timeout (closed stdout)"

for sig in TERM INT; do
  "$EXECBOX" run --runtime docker -l sh -c 'echo running; sleep 60' >"$T/out" 2>"$T/err" &
  pid=$!
  # The CLI prints the output at the end: wait for the container instead.
  i=0
  while [ -z "$(docker ps -q --filter label=execbox --filter status=running)" ] && [ $i -lt 200 ]; do
    sleep 0.05
    i=$((i + 1))
  done
  kill -"$sig" $pid
  wait_exit $pid 10 || fail "SIG$sig: execbox still runs"
  wait $pid
  RC=$?
  if [ "$sig" = TERM ]; then expect_rc 143 "SIGTERM"; else expect_rc 130 "SIGINT"; fi
  expect_in err "cancelled" "SIG$sig"
  expect_no_container "after SIG$sig"
done
finish
