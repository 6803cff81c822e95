#!/bin/sh
# `execbox run -l python -c 'print(6*7)'` prints 42 and exits 0.
. "$(dirname "$0")/lib.sh"
language_available python || skip "python is not installed"

ebrun -l python -c 'print(6*7)'
expect_rc 0 "run -l python"
expect_stdout 42 "run -l python"
expect_stderr_empty "run -l python"

# Aliases and stderr passthrough.
ebrun -l py -c 'import sys; print("to stderr", file=sys.stderr); print("to stdout")'
expect_rc 0 "run -l py"
expect_stdout "to stdout" "run -l py"
expect_in err "to stderr" "run -l py"

# An uncaught exception: non-zero exit, the traceback on stderr.
ebrun -l python -c 'raise ValueError("boom")'
expect_rc 1 "python exception"
expect_in err "ValueError: boom" "python exception"
finish
