#!/bin/sh
# Runs tests/docker/library.c's checks, then makes sure nothing is left.
. "$(dirname "$0")/lib.sh" "$1"
"$2"
rc=$?
[ $rc = 77 ] && unavailable "the library test skipped"
[ $rc = 0 ] || fail "library checks: exit status $rc"
expect_no_container "after the library checks"
finish
