#!/bin/sh
# When the program exits normally, whatever it left running is killed and
# execbox returns at once with the program's status.
. "$(dirname "$0")/lib.sh"

marker="sleep 987.653$UNIQ"
start=$(date +%s)
ebrun -l sh -c "$marker & echo left it; exit 5"
end=$(date +%s)
expect_rc 5 "run leaving a background sleep"
expect_stdout "left it" "run leaving a background sleep"
expect_no_process "$marker" "after a normal exit"
# Not a benchmark: only "it did not wait for the 987 s sleep".
[ $((end - start)) -lt 20 ] || fail "execbox waited for the leftover ($((end - start)) s)"

# The leftover keeps stdout open and ignores SIGHUP/SIGTERM: still ended.
marker2="sleep 987.656$UNIQ"
ebrun -l bash -c "trap '' HUP TERM; nohup $marker2 2>&1 & echo bye"
expect_rc 0 "run leaving a nohup sleep"
expect_stdout bye "run leaving a nohup sleep"
expect_no_process "$marker2" "after a normal exit (nohup)"
finish
