#!/bin/sh
# A program killed by signal N makes execbox exit 128+N and say so.
. "$(dirname "$0")/lib.sh"

ebrun -l sh -c 'kill -9 $$'
expect_rc 137 "kill -9 \$\$"
expect_in err "signal 9" "kill -9 \$\$"

ebrun -l sh -c 'kill -TERM $$'
expect_rc 143 "kill -TERM \$\$"

ebrun -l sh -c 'kill -SEGV $$'
expect_rc 139 "kill -SEGV \$\$"
finish
