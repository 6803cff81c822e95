#!/bin/sh
# The memory limit (an OOM kill reads as memory_limit), a fork bomb held by
# the pids limit, the output cap, the tmpfs size and the file size limit.
. "$(dirname "$0")/lib.sh"

ebrun --json --memory 64M -l python -c 'x = bytearray(512 << 20); print("survived")'
expect_rc 137 "memory limit"
# Podman does not report the OOM kill (State.OOMKilled) on cgroup v1: the
# program is still killed, but the result can only say "signal 9".
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
want = ("memory_limit", "killed") if sys.argv[2] == "1" else ("memory_limit",)
assert r["status"] in want and r["exit_code"] == 137, r
assert "survived" not in r["output"], r
' "$T/out" "$PODMAN" || { fail "memory limit (--json)"; show; }
ebrun --memory 64M -l python -c 'x = bytearray(16 << 20); print("fits")'
expect_rc 0 "within the memory limit"
expect_stdout fits "within the memory limit"

# A fork bomb: the pids limit stops it, the host is untouched, the run ends
# at its timeout and leaves nothing behind.
ebrun --timeout 5 --pids 64 -l sh -c 'b() { b | b & }; b; sleep 2; echo host-ok'
case $RC in 0 | 124 | 137 | 2) ;; *) fail "fork bomb: exit status $RC"; show ;; esac
ebrun --pids 16 -l python -c '
import os, time
n = 0
try:
    while n < 100:
        if os.fork() == 0:
            time.sleep(3); os._exit(0)
        n += 1
except OSError:
    pass
print("forked", n)'
expect_rc 0 "pids limit"
n=$(sed -n 's/^forked //p' "$T/out")
[ -n "$n" ] && [ "$n" -lt 16 ] || { fail "pids limit: forked ${n:-?} with --pids 16"; show; }
expect_no_container "after the fork bombs"

ebrun --output-limit 4k -l python -c 'while True: print("x" * 100)'
expect_rc 137 "output limit"
[ "$(wc -c <"$T/out")" -le 4096 ] || fail "output limit: more than 4 KiB passed"
expect_in err "output limit" "output limit"

ebrun --tmp-size 1M -l sh -c 'head -c 4000000 /dev/zero >/tmp/fill 2>/dev/null; echo "tmp $?"; head -c 4000000 /dev/zero >fill 2>/dev/null; echo "work $?"'
expect_stdout "tmp 1
work 1" "tmpfs sizes"
expect_no_container "after the runs"
finish
