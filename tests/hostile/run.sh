#!/usr/bin/env bash
# The hostile battery: one case per invocation, run on the jail runtime.
#   run.sh EXECBOX CASE [USER]
# With USER, execbox runs as that unprivileged user (runuser). With
# EXECBOX_POOL set, every execution runs in a warm sandbox of the pool
# (Python ones in the waiting interpreter). Each case
# checks the containment it expects, then that the host is unchanged (no
# process, mount, cgroup or temp dir left behind) and that the next
# execution succeeds. Prints what failed and exits non-zero on failure.
set -u
EXECBOX_SRC=$1 CASE=$2 AS_USER=${3:-}
if [ -n "$AS_USER" ] && { [ "$(id -u)" != 0 ] || ! id "$AS_USER" >/dev/null 2>&1; }; then
  echo "skip: running as $AS_USER needs root and that user"
  exit 77
fi
WORK=$(mktemp -d /tmp/execbox-hostile.XXXXXX)
chmod 755 "$WORK"
cp "$EXECBOX_SRC" "$WORK/execbox" && chmod 755 "$WORK/execbox"
MARKERS=()
fail=0
cleanup() {
  for pid in "${MARKERS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  rm -rf "$WORK" 2>/dev/null; rm -f /root/execbox-secret-$$ 2>/dev/null
}
trap cleanup EXIT

die() { echo "FAIL [$CASE${AS_USER:+ as $AS_USER}]: $*"; fail=1; }

# Runs execbox (as AS_USER when set) from a neutral cwd; sets OUT, ERR, RC.
ebx() {
  local o="$WORK/out" e="$WORK/err"
  if [ -n "$AS_USER" ]; then
    (cd / && runuser -u "$AS_USER" -- env SANDBOX_ENV=jail ${EXECBOX_POOL:+EXECBOX_POOL=$EXECBOX_POOL} \
      "$WORK/execbox" "$@") >"$o" 2>"$e"
  else
    (cd / && SANDBOX_ENV=jail "$WORK/execbox" "$@") >"$o" 2>"$e"
  fi
  RC=$?
  OUT=$(cat "$o")
  ERR=$(cat "$e")
}

host_state() {
  # Processes of the sandbox's host uid, mounts, execbox cgroups, temp dirs.
  local uid
  if [ -n "$AS_USER" ]; then uid=$(id -u "$AS_USER"); else uid=65534; fi
  # Zombies are not counted: reaping orphans is the host init's business.
  echo "procs: $(ps -o stat= -u "$uid" | grep -vc '^Z')"
  echo "mounts: $(wc -l </proc/self/mountinfo)"
  # Groups are named run-PID-N after the execbox that made them. Those of
  # live processes (another test's server, say) are theirs to remove; a
  # group whose owner is gone is left behind.
  orphans=0
  for d in $(find /sys/fs/cgroup -maxdepth 3 -path '*execbox/run-*' 2>/dev/null); do
    owner=$(basename "$d" | cut -d- -f2)
    kill -0 "$owner" 2>/dev/null || orphans=$((orphans + 1))
  done
  echo "cgroups: $orphans"
  echo "tmp: $(find /tmp -maxdepth 1 -name 'execbox-??????' 2>/dev/null | wc -l)"
}

expect_rc() { [ "$RC" = "$1" ] || die "exit status $RC, expected $1 (stderr: ${ERR:0:300})"; }
expect_rc_not() { [ "$RC" != "$1" ] || die "exit status $RC was not expected (stdout: ${OUT:0:300})"; }
expect_out() { grep -q -- "$1" <<<"$OUT" || die "stdout lacks '$1': ${OUT:0:400} / stderr: ${ERR:0:300}"; }
expect_out_not() { ! grep -q -- "$1" <<<"$OUT$ERR" || die "output shows '$1': ${OUT:0:400}"; }
expect_err() { grep -q -- "$1" <<<"$ERR" || die "stderr lacks '$1': ${ERR:0:400}"; }
cgroups_in_use() {
  [ -z "$AS_USER" ] || return 1
  [ -w /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ]
}

# Groups other tests' SIGKILLed execbox processes left (the next execbox
# removes them only after 10 s) are not this case's: clear them first, so
# that the check below sees only what this case leaves.
if [ "$(id -u)" = 0 ]; then
  for d in $(find /sys/fs/cgroup -maxdepth 3 -path '*execbox/run-*' 2>/dev/null); do
    owner=$(basename "$d" | cut -d- -f2)
    kill -0 "$owner" 2>/dev/null || rmdir "$d" 2>/dev/null
  done
fi
before=$(host_state)

case "$CASE" in
fork_bomb)
  ebx run -l bash -t 4 -c ':(){ :|:& };:; sleep 30'
  expect_rc_not 0
  [ "$RC" = 124 ] || [ "$RC" = 137 ] || [ "$RC" -lt 124 ] || die "unexpected exit $RC"
  ;;
memory_bomb)
  ebx run --json -l python -m 128M -t 20 -c 'a = []
while True:
    a.append(bytearray(8 << 20))'
  if cgroups_in_use; then
    grep -q '"status":"memory_limit"' <<<"$OUT" || die "status is not memory_limit: ${OUT:0:300}"
  else
    grep -q 'MemoryError' <<<"$OUT" || die "no MemoryError under the rlimit fallback: ${OUT:0:300}"
  fi
  ;;
busy_loop)
  ebx run -l python -t 1 -c 'while True: pass'
  expect_rc 124
  expect_err "timed out"
  ;;
output_flood)
  ebx run -l sh --output-limit 64k -c 'yes flood'
  expect_rc 137
  expect_err "output limit"
  [ "${#OUT}" -le 65536 ] || die "captured ${#OUT} bytes past a 64 KiB cap"
  ;;
fill_tmp)
  ebx run -l python --tmp-size 8M -c 'import errno
for d in ("/tmp", "/sandbox", "/dev/shm"):
    try:
        with open(d + "/fill", "wb") as f:
            while True:
                f.write(b"x" * (1 << 20))
                f.flush()
    except OSError as e:
        print(d, "full" if e.errno in (errno.ENOSPC, errno.EFBIG) else "error %d" % e.errno)'
  expect_rc 0
  expect_out "/tmp full"
  expect_out "/sandbox full"
  expect_out "/dev/shm full"
  ;;
read_secret)
  secret="execbox-secret-value-$$"
  echo "$secret" >/root/execbox-secret-$$ 2>/dev/null
  echo "$secret" >"$WORK/secret"
  chmod 644 "$WORK/secret"
  ebx run -l sh -c "cat /root/execbox-secret-$$ $WORK/secret /work/* /home/* /var/* 2>&1; ls -a / /etc /run /var 2>&1"
  expect_out_not "$secret"
  grep -qx 'shadow' <<<"$OUT" && die "/etc/shadow is visible"
  grep -qx 'docker.sock' <<<"$OUT" && die "a docker socket is visible"
  for d in root home work var run srv mnt media opt; do
    grep -qx "$d" <<<"$OUT" && die "host dir /$d is visible"
  done
  ;;
host_loopback)
  port_file="$WORK/port"
  python3 - "$port_file" <<'PY' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(5)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(15)
try:
    c, _ = s.accept(); print("HOST LISTENER GOT A CONNECTION", flush=True)
except socket.timeout:
    pass
PY
  MARKERS+=($!)
  for _ in $(seq 50); do [ -s "$port_file" ] && break; sleep 0.1; done
  port=$(cat "$port_file")
  ebx run -l python -c "import socket
s = socket.socket(); s.settimeout(2)
print('connect', s.connect_ex(('127.0.0.1', $port)))
try:
    socket.create_connection(('1.1.1.1', 53), timeout=2); print('outside reachable')
except OSError as e:
    print('outside unreachable', e.errno)"
  expect_out "connect 111"
  expect_out "outside unreachable"
  ;;
list_host_processes)
  sleep 987.321 &
  MARKERS+=($!)
  ebx run -l sh -c 'ls /proc | grep -c "^[0-9]"; cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\0" " "'
  expect_out_not "987.321"
  n=$(head -1 <<<"$OUT")
  [ "${n:-99}" -le 6 ] || die "the sandbox sees $n processes"
  ;;
kill_all)
  sleep 987.322 &
  marker=$!
  MARKERS+=($marker)
  ebx run -l sh -c 'kill -9 -1; echo still-here'
  kill -0 "$marker" 2>/dev/null || die "kill -9 -1 in the sandbox reached a host process"
  ;;
ptrace)
  ebx run -l python -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, 1, 0, 0)  # PTRACE_ATTACH to the jail init
print("ptrace", r, os.strerror(ctypes.get_errno()))
r = libc.ptrace(0, 0, 0, 0)   # PTRACE_TRACEME
print("traceme", r, os.strerror(ctypes.get_errno()))'
  expect_out "ptrace -1 Operation not permitted"
  expect_out "traceme -1 Operation not permitted"
  ;;
mount)
  ebx run -l sh -c 'mount -t tmpfs none /tmp 2>&1; echo rc=$?; grep -c " /tmp " /proc/self/mounts'
  expect_out_not "rc=0"
  ;;
nested_userns)
  ebx run -l python -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("unshare", libc.unshare(0x10000000), os.strerror(ctypes.get_errno()))
print("clone", libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0), os.strerror(ctypes.get_errno()))'
  expect_out "unshare -1 Operation not permitted"
  expect_out "clone -1 Operation not permitted"
  ;;
keyctl)
  ebx run -l python -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("add_key", libc.syscall(248, b"user", b"k", b"v", 1, -4), os.strerror(ctypes.get_errno()))
print("keyctl", libc.syscall(250, 0, -4, 0, 0, 0), os.strerror(ctypes.get_errno()))'
  expect_out "add_key -1 Operation not permitted"
  expect_out "keyctl -1 Operation not permitted"
  ;;
proc_sys_write)
  ebx run -l sh -c 'echo 1 > /proc/sys/kernel/sysrq && echo WROTE; echo 1 > /proc/sysrq-trigger && echo WROTE2; echo done'
  expect_out "done"
  expect_out_not "WROTE"
  ;;
setuid_binary)
  ebx run -l sh -c 'for b in /usr/bin/su /usr/bin/passwd /usr/bin/newgrp /usr/bin/mount; do
      [ -u "$b" ] && echo "suid present: $b"; done
    su -s /bin/sh -c "id -u" root </dev/null 2>&1; echo "su rc=$?"
    grep " /usr " /proc/self/mountinfo | grep -c nosuid
    grep NoNewPrivs /proc/self/status'
  expect_out "su rc=[1-9]"
  expect_out "NoNewPrivs:.1"
  expect_out_not "^0$"
  ;;
tiocsti)
  ebx run -l python -c 'import fcntl, termios, os
for fd in (0, 1, 2):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"x"); print("INJECTED")
    except OSError as e:
        print("tiocsti", os.strerror(e.errno))
print("sid", os.getsid(0) == os.getpid() or os.getsid(0))'
  expect_out "tiocsti Operation not permitted"
  expect_out_not "INJECTED"
  ;;
personality)
  # Turning ASLR off (also with bit 31 set, which a flag-only rule misses).
  ebx run -l python -c 'import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for v in (0x0040000, 0x80040000, 0x0400000):
    r = libc.personality(ctypes.c_ulong(v))
    print(hex(v), r, os.strerror(ctypes.get_errno()) if r == -1 else "CHANGED")'
  expect_out "0x40000 -1 Operation not permitted"
  expect_out "0x80040000 -1 Operation not permitted"
  expect_out_not "CHANGED"
  ;;
execbox_killed)
  # SIGKILL to execbox itself mid-run: the sandbox must die with it.
  marker=987.323$$
  if [ -n "$AS_USER" ]; then
    (cd / && exec runuser -u "$AS_USER" -- env SANDBOX_ENV=jail "$WORK/execbox" run -l sh -c "sleep $marker") &
  else
    (cd / && SANDBOX_ENV=jail exec "$WORK/execbox" run -l sh -c "sleep $marker") &
  fi
  runner=$!
  for _ in $(seq 50); do pgrep -f "sleep $marker" >/dev/null && break; sleep 0.1; done
  pgrep -f "sleep $marker" >/dev/null || die "the sandboxed sleep never started"
  # The sandbox's init is a clone of execbox with the same command line:
  # pick execbox itself (the runner, or runuser's child).
  if [ -n "$AS_USER" ]; then target=$(pgrep -P "$runner" -f "execbox run"); else target=$runner; fi
  kill -9 "$target"
  wait "$runner" 2>/dev/null
  for _ in $(seq 50); do pgrep -f "sleep $marker" >/dev/null || break; sleep 0.1; done
  pgrep -f "sleep $marker" >/dev/null && die "the sandbox outlived execbox"
  # The killed execbox could not remove its cgroup: the next execbox removes
  # empty groups of dead owners once they are 10 s old.
  if cgroups_in_use; then
    sleep 11
    ebx run -l sh -c true
    # A group's age counts from its last change, which the sandbox's end
    # may have made a moment after the kill: one more run a little later.
    if [ "$(host_state | grep '^cgroups:')" != "cgroups: 0" ]; then
      sleep 3
      ebx run -l sh -c true
    fi
  fi
  ;;
*)
  echo "unknown case $CASE"; exit 2 ;;
esac

for pid in "${MARKERS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
MARKERS=()
# The host is unchanged once execbox has returned (cgroup removal and the
# namespace's death are synchronous with it).
after=$(host_state)
if [ "$before" != "$after" ]; then
  die "host changed: before [$(echo $before)] after [$(echo $after)]"
  # Which groups are orphaned, and how old: whose execbox left them.
  for d in $(find /sys/fs/cgroup -maxdepth 3 -path '*execbox/run-*' 2>/dev/null); do
    owner=$(basename "$d" | cut -d- -f2)
    kill -0 "$owner" 2>/dev/null || echo "  orphan $d (age $(( $(date +%s) - $(stat -c %Y "$d") )) s)"
  done
fi
ebx run -l sh -c 'echo next-run-ok'
[ "$OUT" = next-run-ok ] || die "the next execution failed: rc=$RC ${ERR:0:300}"
[ $fail = 0 ] && echo "ok [$CASE${AS_USER:+ as $AS_USER}]"
exit $fail
