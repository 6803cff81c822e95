#!/bin/sh
# ctest entry for the MCP client tests: runs one driver against the real
# execbox binary, starting and stopping an HTTP server where needed.
#   run_ctest.sh EXECBOX MODE    MODE: sdk-stdio | sdk-http | conformance | inspector
# Needs `npm ci --prefix tests/mcp` (make check does it). Exit 77 (skip) only
# when node itself is missing.
set -u
EXECBOX=$1 MODE=$2
HERE=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "skip: node is not installed"; exit 77; }
[ -d "$HERE/node_modules/@modelcontextprotocol/sdk" ] ||
  { echo "FAIL: run 'npm ci --prefix tests/mcp' first (make check does)"; exit 1; }
T=$(mktemp -d /tmp/execbox-mcp.XXXXXX)
SERVER=
cleanup() {
  [ -n "$SERVER" ] && kill -9 "$SERVER" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

start_http() {
  "$EXECBOX" mcp --http 127.0.0.1:0 2>"$T/server.err" &
  SERVER=$!
  i=0
  while ! grep -q 'http://' "$T/server.err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  URL=$(grep -o 'http://[^ ]*' "$T/server.err" | head -1)
  [ -n "$URL" ] || { echo "FAIL: the HTTP server did not start"; cat "$T/server.err"; exit 1; }
}

# SIGTERM must stop the HTTP server promptly, whatever the calls did.
stop_http() {
  kill -TERM "$SERVER"
  i=0
  while kill -0 "$SERVER" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  if kill -0 "$SERVER" 2>/dev/null; then
    echo "FAIL: execbox mcp --http did not exit within 5 s of SIGTERM"
    return 1
  fi
  wait "$SERVER"
  SERVER=
  return 0
}

case "$MODE" in
sdk-stdio) node "$HERE/sdk_client.mjs" stdio -- "$EXECBOX" mcp ;;
sdk-http)
  start_http
  node "$HERE/sdk_client.mjs" http "$URL"
  rc=$?
  stop_http || rc=1
  exit $rc
  ;;
conformance)
  start_http
  "$HERE/conformance.sh" "$URL"
  rc=$?
  stop_http || rc=1
  exit $rc
  ;;
inspector) "$HERE/inspector_smoke.sh" "$EXECBOX" ;;
*) echo "unknown mode $MODE"; exit 2 ;;
esac
