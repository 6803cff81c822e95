#!/bin/sh
# `--stdin FILE` feeds FILE to the program; without it stdin is empty.
. "$(dirname "$0")/lib.sh"

printf 'first line\nsecond line\n' >"$T/input.txt"
ebrun -l sh --stdin "$T/input.txt" -c 'read a; echo "got: $a"; wc -l'
expect_rc 0 "run --stdin FILE"
printf 'got: first line\n1\n' >"$T/want2"
cmp -s "$T/want2" "$T/out" || { fail "run --stdin FILE: wrong stdout"; show; }

# Without --stdin the program reads end-of-file at once, even when execbox's
# own stdin is a terminal or a pipe.
echo "not for the program" >"$T/mine"
ebrun -l sh -c 'cat; echo "done"' <"$T/mine"
expect_rc 0 "run without --stdin"
expect_stdout done "run without --stdin"

# --stdin - passes execbox's stdin through.
printf 'piped\n' >"$T/piped"
ebrun -l sh --stdin - -c 'cat' <"$T/piped"
expect_rc 0 "run --stdin -"
expect_stdout piped "run --stdin -"

# A big input (1 MiB) arrives whole.
head -c 1048576 /dev/zero >"$T/big"
ebrun -l sh --stdin "$T/big" -c 'wc -c | tr -d " "'
expect_rc 0 "run --stdin big"
expect_stdout 1048576 "run --stdin big"

ebrun -l sh --stdin "$T/does-not-exist" -c 'cat'
expect_rc 64 "run --stdin missing"
expect_in err "does-not-exist" "run --stdin missing"
finish
