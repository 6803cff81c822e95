#!/bin/sh
# SIGTERM to execbox cancels the run: the program tree is killed and execbox
# exits with 128+15.
. "$(dirname "$0")/lib.sh"

marker="sleep 987.652$UNIQ"
"$EXECBOX" run --runtime "$RUNTIME" -l sh -c "$marker & $marker" >"$T/out" 2>"$T/err" &
pid=$!
sleep 0.5
kill -TERM "$pid"
if wait_exit "$pid" 10; then
  wait "$pid"
  RC=$?
  expect_rc 143 "execbox after SIGTERM"
  expect_in err "cancel" "execbox after SIGTERM"
else
  fail "execbox still runs 10 s after SIGTERM"
  kill -9 "$pid"
fi
expect_no_process "$marker" "after SIGTERM"

# SIGINT likewise (130).
marker2="sleep 987.657$UNIQ"
"$EXECBOX" run --runtime "$RUNTIME" -l sh -c "$marker2" >"$T/out" 2>"$T/err" &
pid=$!
sleep 0.5
kill -INT "$pid"
if wait_exit "$pid" 10; then
  wait "$pid"
  RC=$?
  expect_rc 130 "execbox after SIGINT"
else
  fail "execbox still runs 10 s after SIGINT"
  kill -9 "$pid"
fi
expect_no_process "$marker2" "after SIGINT"
finish
