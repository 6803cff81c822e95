#!/bin/sh
# Load through the remote runtime: 2,000 executions at concurrency 16, each
# printing its own token; every result must be its own, none lost. Then the
# server must not have leaked fds or processes.
. "$(dirname "$0")/lib.sh" "$1"
. "$(dirname "$0")/serve_lib.sh"
N=${EB_LOAD_N:-2000}
# A private TMPDIR: only what the server and its clients leave counts.
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"
serve_start --max-concurrent 4 --max-queue 64
export EXECBOX_REMOTE_URL="$URL" EXECBOX_EXEC="$EXECBOX" OUTDIR="$T/results"
mkdir -p "$OUTDIR"
# Two waves: after the first, the server holds what it caches (a few idle
# cgroups); the second must not grow anything.
wave() {
  seq "$1" "$2" | xargs -P 16 -I{} sh -c \
    '"$EXECBOX_EXEC" run --runtime remote -l sh -c "echo token-{}" >"$OUTDIR/{}" 2>"$OUTDIR/{}.err"; echo $? >"$OUTDIR/{}.rc"'
}
start=$(date +%s)
wave 1 $((N / 2))
sleep 0.5
fds_before=$(ls /proc/$SERVE_PID/fd | wc -l)
wave $((N / 2 + 1)) "$N"
elapsed=$(( $(date +%s) - start ))
bad=0
i=1
while [ $i -le "$N" ]; do
  if [ "$(cat "$OUTDIR/$i" 2>/dev/null)" != "token-$i" ] || [ "$(cat "$OUTDIR/$i.rc")" != 0 ]; then
    bad=$((bad + 1))
    [ $bad -le 3 ] && echo "request $i: rc $(cat "$OUTDIR/$i.rc" 2>/dev/null) out '$(cat "$OUTDIR/$i" 2>/dev/null)' err '$(head -c 200 "$OUTDIR/$i.err" 2>/dev/null)'"
  fi
  i=$((i + 1))
done
[ $bad -eq 0 ] || fail "$bad of $N results missing or wrong"
echo "$N executions at concurrency 16 in ${elapsed} s"
sleep 0.5
fds_after=$(ls /proc/$SERVE_PID/fd | wc -l)
# The jail keeps up to 8 idle cgroups with 3 open fds each (v1): that much
# growth is its pool filling up, not a leak of 1,000 requests.
[ "$fds_after" -le $((fds_before + 24)) ] || fail "server fds grew from $fds_before to $fds_after"
# Its only children are its warm sandboxes (2 kinds x EXECBOX_POOL, 4 by
# default), waiting; nothing of the 2,000 executions (zombies count too).
others=$(ps -o comm= --ppid "$SERVE_PID" | grep -vc '^execbox-init$')
warm_pids=$(ps -o pid=,comm= --ppid "$SERVE_PID" | awk '$2 == "execbox-init" {print $1}')
warm=$(echo $warm_pids | wc -w)
[ "$others" -eq 0 ] || fail "$others child processes of the server left: $(ps -o pid=,stat=,comm= --ppid "$SERVE_PID" | head -5)"
[ "$warm" -le 8 ] || fail "$warm warm sandboxes, more than the pool's 8"
serve_stop
# Stopping drains the pool: its sandboxes are gone.
for p in $warm_pids; do
  [ -d /proc/$p ] && [ "$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null)" != Z ] && fail "warm sandbox $p left after the server stopped"
done
left=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
[ "$left" -eq 0 ] || fail "$left work dirs left in /tmp"
[ "$FAILURES" -eq 0 ] || exit 1
echo "ok [serve_load, runtime $RUNTIME]"
