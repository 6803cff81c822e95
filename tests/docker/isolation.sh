#!/bin/sh
# Inside the container: no network (a connect attempt fails, only lo), a
# read-only root, a non-root user without capabilities, no_new_privs.
. "$(dirname "$0")/lib.sh"

# TEST-NET-1 (192.0.2.0/24) is never routed: with network none the connect
# fails at once, and no packet can leave anyway.
ebrun -l python -c '
import os, socket
print(sorted(os.listdir("/sys/class/net")))
s = socket.socket()
s.settimeout(3)
try:
    s.connect(("192.0.2.1", 80))
    print("connected")
except OSError as e:
    print("connect failed", e.errno)'
expect_rc 0 "no network"
expect_in out "['lo']" "no network: only loopback"
expect_in out "connect failed" "no network: connect"
expect_not_in out "connected" "no network"

ebrun --network host -l python -c 'print(1)'
expect_rc 125 "--network host refused"
expect_in err "network" "--network host refused"

ebrun -l sh -c 'for d in / /etc /usr /bin /var; do touch "$d/x" 2>/dev/null && echo "wrote $d"; done; echo done'
expect_stdout done "read-only root"

ebrun -l python -c '
import os
print(os.getuid(), os.getgid(), os.geteuid())
st = dict(l.split(":\t", 1) for l in open("/proc/self/status").read().splitlines() if ":\t" in l)
print(st["CapEff"].strip(), st["CapBnd"].strip(), st["NoNewPrivs"].strip())'
expect_rc 0 "non-root user"
expect_stdout "65534 65534 65534
0000000000000000 0000000000000000 1" "non-root user, no capabilities, no_new_privs"
# Two execbox processes in different pid namespaces (two containers sharing
# the daemon) do not see each other's pids: neither may take the other's
# running containers for orphans.
if command -v unshare >/dev/null && [ "$(id -u)" = 0 ]; then
  ("$EXECBOX" run --runtime docker -l python -c 'import time; time.sleep(4); print("first done")' \
     >"$T/first.out" 2>&1; echo $? >"$T/first.rc") &
  first=$!
  sleep 1.5
  unshare -pf --mount-proc "$EXECBOX" run --runtime docker -l sh -c 'echo second done' >"$T/second.out" 2>&1
  wait $first
  [ "$(cat "$T/first.rc")" = 0 ] && grep -q 'first done' "$T/first.out" ||
    fail "another pid namespace's execbox removed a running container: $(cat "$T/first.out")"
  grep -q 'second done' "$T/second.out" || fail "second namespace: $(cat "$T/second.out")"
fi
expect_no_container "after the runs"
finish
