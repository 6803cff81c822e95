#!/bin/sh
# The Streamable HTTP transport's status codes and headers, with curl.
#   mcp_http.sh EXECBOX
. "$(dirname "$0")/lib.sh" "$1"
command -v curl >/dev/null || skip "curl is not installed"
"$EXECBOX" mcp --runtime "$RUNTIME" --http 127.0.0.1:0 2>"$T/server.err" &
SERVER=$!
trap 'kill -9 $SERVER 2>/dev/null; rm -rf "$T"' EXIT
i=0
while ! grep -q 'http://' "$T/server.err" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
URL=$(grep -o 'http://[^ ]*' "$T/server.err" | head -1)
[ -n "$URL" ] || { fail "server did not start: $(cat "$T/server.err")"; exit 1; }

# post NAME BODY [CURL ARGS...]: status in $CODE, headers in $T/h, body in $T/b
post() {
  name=$1 body=$2
  shift 2
  CODE=$(curl -s -o "$T/b" -D "$T/h" -w '%{http_code}' -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' "$@" "$URL" -d "$body")
}
expect_code() { [ "$CODE" = "$1" ] || fail "$2: HTTP $CODE, expected $1 ($(head -c 300 "$T/b"))"; }

INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
post init "$INIT"
expect_code 200 "initialize"
SID=$(grep -i '^mcp-session-id:' "$T/h" | cut -d' ' -f2 | tr -d '\r')
[ -n "$SID" ] || fail "initialize: no Mcp-Session-Id header"
grep -q '"protocolVersion":"2025-11-25"' "$T/b" || fail "initialize: protocol version"

post notification '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "Mcp-Session-Id: $SID"
expect_code 202 "notification"
post list '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25'
expect_code 200 "tools/list"
grep -q '"execute_code"' "$T/b" || fail "tools/list: no execute_code"
post call '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"execute_code","arguments":{"language":"sh","code":"echo 42"}}}' -H "Mcp-Session-Id: $SID"
expect_code 200 "tools/call"
grep -q '^data: .*42' "$T/b" || fail "tools/call: no SSE event with the result"
grep -qi '^content-type: text/event-stream' "$T/h" || fail "tools/call: not an SSE response"
post nosession '{"jsonrpc":"2.0","id":4,"method":"tools/list"}'
expect_code 400 "without a session"
post badsession '{"jsonrpc":"2.0","id":5,"method":"tools/list"}' -H 'Mcp-Session-Id: nope'
expect_code 404 "unknown session"
post version '{"jsonrpc":"2.0","id":6,"method":"tools/list"}' -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 1999-01-01'
expect_code 400 "unsupported protocol version"
post origin "$INIT" -H 'Origin: http://evil.example'
expect_code 403 "foreign Origin"
post origin-ok "$INIT" -H 'Origin: http://localhost:3000'
expect_code 200 "loopback Origin"
post malformed '{not json' -H "Mcp-Session-Id: $SID"
expect_code 400 "malformed JSON"
grep -q '"code":-32700' "$T/b" || fail "malformed JSON: not -32700"
CODE=$(curl -s -o /dev/null -w '%{http_code}' "$URL")
expect_code 405 "GET"
CODE=$(curl -s -o /dev/null -w '%{http_code}' "${URL%/mcp}/other" -d '{}')
expect_code 404 "other path"
CODE=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Mcp-Session-Id: $SID" "$URL")
expect_code 200 "DELETE"
post after-delete '{"jsonrpc":"2.0","id":7,"method":"tools/list"}' -H "Mcp-Session-Id: $SID"
expect_code 404 "after DELETE"

kill -TERM $SERVER
i=0
while kill -0 $SERVER 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -0 $SERVER 2>/dev/null && fail "SIGTERM did not stop the server"

# stdio: end of input is a clean exit, and stdout carries only protocol.
printf '%s\n' "$INIT" | "$EXECBOX" mcp --runtime "$RUNTIME" >"$T/out" 2>"$T/err"
RC=$?
expect_rc 0 "stdio EOF"
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    m = json.loads(line); assert m["jsonrpc"] == "2.0"
' "$T/out" || fail "stdio: stdout has something that is not a JSON-RPC message"

[ "$FAILURES" -eq 0 ] || exit 1
echo "ok [mcp_http, runtime $RUNTIME]"
