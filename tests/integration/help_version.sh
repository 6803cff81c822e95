#!/bin/sh
# --help and --version exit 0 and print to stdout.
. "$(dirname "$0")/lib.sh"

eb --help
expect_rc 0 "--help"
expect_in out "usage: execbox" "--help"
expect_in out "run" "--help"
expect_in out "languages" "--help"
expect_in out "runtimes" "--help"
expect_stderr_empty "--help"

eb -h
expect_rc 0 "-h"

eb --version
expect_rc 0 "--version"
grep -Eq '^execbox [0-9]+\.[0-9]+\.[0-9]+' "$T/out" || { fail "--version: no version number"; show; }

eb run --help
expect_rc 0 "run --help"
expect_in out "--language" "run --help"
expect_in out "--timeout" "run --help"
expect_in out "exit status" "run --help"

eb languages --help
expect_rc 0 "languages --help"
eb runtimes --help
expect_rc 0 "runtimes --help"
finish
