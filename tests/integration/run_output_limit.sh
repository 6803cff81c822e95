#!/bin/sh
# Past --output-limit the program is killed: 137, a message, capped output.
. "$(dirname "$0")/lib.sh"

ebrun --output-limit 10k -l sh -c 'while :; do echo 0123456789abcdef; done'
expect_rc 137 "run --output-limit 10k flood"
expect_in err "output limit" "run --output-limit 10k flood"
size=$(wc -c <"$T/out")
[ "$size" -le 10240 ] || fail "stdout has $size bytes, more than the 10240 allowed"
[ "$size" -gt 0 ] || fail "stdout is empty; the output before the cap should be kept"
head -n 1 "$T/out" | grep -qx 0123456789abcdef || { fail "first line of the capped output is wrong"; show; }

# Both streams count toward one cap.
ebrun --output-limit 1k -l sh -c 'yes out & yes err >&2'
expect_rc 137 "run --output-limit 1k two streams"
out=$(wc -c <"$T/out")
# stderr also holds execbox's own message: count only the program's lines.
err=$(grep -c '^err$' "$T/err" || true)
[ $((out + err * 4)) -le 1024 ] || fail "stdout ($out bytes) + stderr ($err lines) exceed 1024 bytes"

# Output below the limit is untouched.
ebrun --output-limit 10k -l sh -c 'head -c 5000 /dev/zero | tr "\000" x'
expect_rc 0 "run below the output limit"
[ "$(wc -c <"$T/out")" -eq 5000 ] || fail "5000 bytes expected below the limit"
finish
