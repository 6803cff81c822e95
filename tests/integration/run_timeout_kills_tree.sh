#!/bin/sh
# A timeout exits 124 and kills the whole process tree, background jobs included.
. "$(dirname "$0")/lib.sh"

marker="sleep 987.654$UNIQ"
ebrun --timeout 1 -l sh -c "echo started; $marker & sleep 30"
expect_rc 124 "run --timeout 1"
expect_stdout started "run --timeout 1"
expect_in err "timed out" "run --timeout 1"
expect_no_process "$marker" "after the timeout"

# A grandchild in its own subshell, and one that ignores SIGTERM.
marker2="sleep 987.655$UNIQ"
ebrun --timeout 500ms -l bash -c "( trap '' TERM; $marker2 ) & ( ( $marker2 ) & wait ) & wait"
expect_rc 124 "run --timeout 500ms nested"
expect_no_process "$marker2" "after the timeout (nested)"
finish
