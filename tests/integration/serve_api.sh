#!/bin/sh
# The HTTP API of `execbox serve`: every status code, with curl.
. "$(dirname "$0")/lib.sh" "$1"
. "$(dirname "$0")/serve_lib.sh"
command -v curl >/dev/null || skip "curl is not installed"
printf 'secret-%s\n' "$UNIQ" >"$T/token"
TOKEN="secret-$UNIQ"
serve_start --token-file "$T/token" --max-concurrent 1 --max-queue 0 --max-body 64k --max-timeout 10s

# call NAME EXPECTED-CODE [CURL ARGS...]
call() {
  name=$1 want=$2
  shift 2
  CODE=$(curl -s -o "$T/b" -D "$T/h" -w '%{http_code}' "$@")
  [ "$CODE" = "$want" ] || fail "$name: HTTP $CODE, expected $want ($(head -c 300 "$T/b"))"
}
AUTH="Authorization: Bearer $TOKEN"

call healthz 200 "$URL/healthz"
call metrics 200 "$URL/metrics"
grep -q '^execbox_in_flight 0' "$T/b" || fail "metrics: no execbox_in_flight gauge"
call no-token 401 "$URL/v1/execute" -d '{"language":"sh","code":"true"}'
grep -qi '^www-authenticate: Bearer' "$T/h" || fail "401 without WWW-Authenticate"
call wrong-token 401 -H "Authorization: Bearer nope" "$URL/v1/execute" -d '{"language":"sh","code":"true"}'
call languages 200 -H "$AUTH" "$URL/v1/languages"
grep -q '"name":"python"' "$T/b" || fail "languages: no python"
call execute 200 -H "$AUTH" "$URL/v1/execute" -d '{"language":"python","code":"import sys; print(sys.stdin.read().upper()); sys.exit(3)","stdin":"hi"}'
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit_code"] == 3 and r["status"] == "nonzero_exit" and r["stdout"] == "HI\n", r
' "$T/b" || fail "execute: wrong result $(cat "$T/b")"
# The jail runs it in a warm sandbox (the Python one, once it is ready).
if [ "$RUNTIME" = jail ]; then
  call metrics-pool 200 "$URL/metrics"
  grep -q '^execbox_pool_sandboxes{state="ready"}' "$T/b" || fail "metrics: no pool gauge"
  grep -q '^execbox_pool_executions_total{sandbox="cold"}' "$T/b" || fail "metrics: no pool counter"
fi
call invalid-json 400 -H "$AUTH" "$URL/v1/execute" -d '{not json'
call missing-code 400 -H "$AUTH" "$URL/v1/execute" -d '{"language":"sh"}'
call limit-too-high 400 -H "$AUTH" "$URL/v1/execute" -d '{"language":"sh","code":"true","limits":{"wall_ms":60000}}'
call pids-too-high 400 -H "$AUTH" "$URL/v1/execute" -d '{"language":"sh","code":"true","limits":{"pids":4000000}}'
grep -q 'limits.pids' "$T/b" || fail "pids-too-high: $(cat "$T/b")"
# A CPU limit that would overflow into "no limit" (2^58 thousandths of a CPU).
call cpu-too-high 400 -H "$AUTH" "$URL/v1/execute" -d '{"language":"sh","code":"true","limits":{"cpu_milli":288230376151711744}}'
grep -q 'limits.cpu_milli' "$T/b" || fail "cpu-too-high: $(cat "$T/b")"
call unknown-language 422 -H "$AUTH" "$URL/v1/execute" -d '{"language":"cobol","code":"x"}'
head -c 70000 /dev/zero | tr '\0' 'x' >"$T/big"
call too-large 413 -H "$AUTH" "$URL/v1/execute" --data-binary @"$T/big"
call unknown-path 404 -H "$AUTH" "$URL/v2/nothing"
# MCP is served at /mcp too, behind the same token.
MCPINIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
call mcp-no-token 401 -H 'Content-Type: application/json' "$URL/mcp" -d "$MCPINIT"
call mcp-init 200 -H "$AUTH" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$URL/mcp" -d "$MCPINIT"
grep -qi '^mcp-session-id: ' "$T/h" || fail "serve /mcp: no Mcp-Session-Id"
grep -q '"serverInfo"' "$T/b" || fail "serve /mcp: no initialize result"
call wrong-method 405 -H "$AUTH" "$URL/v1/execute"

# Full: one slot, no queue; a second request gets 429 + Retry-After.
curl -s -o /dev/null -H "$AUTH" "$URL/v1/execute" -d '{"language":"sh","code":"sleep 1.5"}' &
BUSY=$!
sleep 0.5
call busy 429 -H "$AUTH" "$URL/v1/execute" -d '{"language":"sh","code":"true"}'
grep -qi '^retry-after: ' "$T/h" || fail "429 without Retry-After"
wait $BUSY
curl -s "$URL/metrics" | grep -q '^execbox_rejected_total 1' || fail "metrics: rejected count"

# A client that disconnects gets its execution killed.
curl -s -o /dev/null --max-time 0.7 -H "$AUTH" "$URL/v1/execute" \
  -d "{\"language\":\"sh\",\"code\":\"sleep 987.91$UNIQ\"}"
expect_no_process "sleep 987.91$UNIQ" "after the client disconnected"

# SIGTERM drains: what runs finishes with 200, then the server exits.
curl -s -o "$T/drain" -w '%{http_code}' -H "$AUTH" "$URL/v1/execute" \
  -d '{"language":"sh","code":"sleep 1; echo drained"}' >"$T/drain.code" &
DRAIN=$!
sleep 0.4
serve_stop
wait $DRAIN
[ "$(cat "$T/drain.code")" = 200 ] || fail "drain: the running request got HTTP $(cat "$T/drain.code")"
grep -q 'drained' "$T/drain" || fail "drain: the running request lost its output"
grep -q '"path":"/v1/execute","status":200' "$T/serve.err" || fail "no JSON request log on stderr"

# A non-loopback bind without a token is refused.
"$EXECBOX" serve -l 0.0.0.0:0 >/dev/null 2>"$T/err"
RC=$?
expect_rc 64 "non-loopback without a token"

[ "$FAILURES" -eq 0 ] || exit 1
echo "ok [serve_api, runtime $RUNTIME]"
