#!/bin/sh
# An unknown language exits 127 and says so.
. "$(dirname "$0")/lib.sh"

ebrun -l cobol -c 'DISPLAY "HI".'
expect_rc 127 "run -l cobol"
expect_in err "cobol" "run -l cobol"
expect_stdout_empty "run -l cobol"
finish
