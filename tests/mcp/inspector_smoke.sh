#!/usr/bin/env bash
# Smoke test with an independent client: the MCP Inspector's CLI mode calls
# execute_code once over stdio against `EXECBOX mcp`.
#
#   tests/mcp/inspector_smoke.sh path/to/execbox
#
# The sandbox runtime is whatever `EXECBOX mcp` picks by default or from
# SANDBOX_ENV (the Inspector passes our environment to the server). Needs
# `npm ci --prefix tests/mcp` first; runs offline from node_modules.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
inspector=$here/node_modules/.bin/mcp-inspector

if [ $# -ne 1 ]; then
  echo "usage: $0 path/to/execbox" >&2
  exit 2
fi
execbox=$1
if [ ! -x "$execbox" ]; then
  echo "not executable: $execbox" >&2
  exit 2
fi
if [ ! -x "$inspector" ]; then
  echo "missing $inspector: run npm ci --prefix tests/mcp" >&2
  exit 2
fi

# The server command goes first: inspector-cli takes `<target...>` and then
# options; --tool-arg values that are not valid JSON are passed as strings.
out=$(timeout 60 "$inspector" --cli "$execbox" mcp \
  --method tools/call --tool-name execute_code \
  --tool-arg language=python --tool-arg 'code=print(1+1)') || {
  rc=$?
  echo "not ok - inspector tools/call failed (exit $rc)"
  printf '%s\n' "$out"
  echo "0 passed, 1 failed"
  exit 1
}

# Judge the printed CallToolResult as JSON rather than by grep alone.
if RESULT="$out" node -e '
  const r = JSON.parse(process.env.RESULT);
  const sc = r.structuredContent ?? JSON.parse(r.content[0].text);
  const ok = r.isError !== true && sc.exit_code === 0 && sc.output.includes("2");
  if (!ok) { console.error("unexpected result:", JSON.stringify(r)); process.exit(1); }
'; then
  echo "ok - inspector tools/call execute_code print(1+1) -> exit_code 0, output 2"
  echo "1 passed, 0 failed"
else
  echo "not ok - inspector tools/call result is wrong"
  printf '%s\n' "$out"
  echo "0 passed, 1 failed"
  exit 1
fi
