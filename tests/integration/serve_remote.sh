#!/bin/sh
# The remote runtime against `execbox serve`: results, exit codes, the
# caller's deadline, cancellation, auth and failover.
. "$(dirname "$0")/lib.sh" "$1"
. "$(dirname "$0")/serve_lib.sh"
printf 'tok-%s' "$UNIQ" >"$T/token"
serve_start --token-file "$T/token"
export EXECBOX_REMOTE_URL="$URL" EXECBOX_REMOTE_TOKEN="tok-$UNIQ"
R="--runtime remote"

eb run $R -l python -c 'print(6*7)'
expect_rc 0 "remote python"
expect_stdout 42 "remote python"
eb run $R -l sh -c 'echo err >&2; exit 7'
expect_rc 7 "remote exit code"
expect_in err "err" "remote stderr"
printf 'abc\n' >"$T/in"
eb run $R --stdin "$T/in" -l sh -c 'tr a-z A-Z'
expect_stdout ABC "remote stdin"
eb run $R -t 1 -l sh -c 'sleep 5'
expect_rc 124 "remote timeout"
eb run $R --json -l sh -c 'echo hi'
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["status"]=="ok" and r["output"]=="hi\n", r' "$T/out" ||
  fail "remote --json"

# Failover: the first server refuses connections, the second runs it.
EXECBOX_REMOTE_URL="http://127.0.0.1:1,$URL" eb run $R -l sh -c 'echo failover'
expect_rc 0 "failover"
expect_stdout failover "failover"

# Wrong token: a clear error, exit 125.
EXECBOX_REMOTE_TOKEN=wrong eb run $R -l sh -c true
expect_rc 125 "wrong token"
expect_in err "401" "wrong token"

# The runtime is listed as usable.
eb runtimes
expect_in out "remote" "runtimes"
grep '^remote' "$T/out" | grep -q ' yes ' || fail "remote not usable in execbox runtimes: $(cat "$T/out")"

# Cancelling the caller (SIGTERM to execbox run) kills the code on the server.
"$EXECBOX" run $R -l sh -c "sleep 987.92$UNIQ" >/dev/null 2>&1 &
CLIENT=$!
i=0
while [ -z "$(pids_matching "sleep 987.92$UNIQ")" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
[ -n "$(pids_matching "sleep 987.92$UNIQ")" ] || fail "cancel: the remote code never started"
kill -TERM $CLIENT
wait $CLIENT
expect_no_process "sleep 987.92$UNIQ" "after the remote caller was cancelled"

[ "$FAILURES" -eq 0 ] || exit 1
echo "ok [serve_remote, runtime $RUNTIME]"
