#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in package.json) against a Streamable HTTP server.
#
#   tests/mcp/conformance.sh http://127.0.0.1:PORT/mcp
#
# Needs `npm ci --prefix tests/mcp` first; runs offline from node_modules.
#
# Scenario selection. The package's server scenarios (`conformance list
# --server`) mostly target its own "everything" test server: they call
# fixture tools by fixed names (test_simple_text, test_image_content,
# test_error_handling, test_tool_with_progress, test_tool_with_logging,
# test_sampling, test_elicitation, json_schema_2020_12_tool, ...), read
# fixture resources/prompts (resources-*, prompts-*), or use optional
# capabilities (completion-complete, logging-set-level). execbox is a
# tools-only server with exactly one tool, execute_code, so those scenarios
# would fail by design, not because of a protocol bug. The ones that hold
# for any conforming tools server are:
#   server-initialize  initialize handshake + initialized notification
#   tools-list         tools/list shape: every tool has name, description,
#                      inputSchema
# execute_code behaviour itself (tool errors, progress, cancellation,
# concurrency) is covered by sdk_client.mjs instead.
# Override with CONFORMANCE_SCENARIOS="a b c" (e.g. add logging-set-level if
# the server ever declares the logging capability).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
conformance=$here/node_modules/.bin/conformance
scenarios=${CONFORMANCE_SCENARIOS:-"server-initialize tools-list"}

if [ $# -ne 1 ]; then
  echo "usage: $0 http://127.0.0.1:PORT/mcp" >&2
  exit 2
fi
url=$1
case $url in
  http://127.0.0.1:* | http://localhost:* | http://\[::1\]:*) ;;
  *) echo "refusing to test a non-loopback URL: $url" >&2; exit 2 ;;
esac
if [ ! -x "$conformance" ]; then
  echo "missing $conformance: run npm ci --prefix tests/mcp" >&2
  exit 2
fi

# The CLI writes results/<scenario>-<time>/checks.json into its working
# directory; keep that out of the tree (set CONFORMANCE_RESULTS to keep it).
work=${CONFORMANCE_RESULTS:-$(mktemp -d)}
mkdir -p "$work"
[ -z "${CONFORMANCE_RESULTS:-}" ] && trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2

passed=0
failed=0
for s in $scenarios; do
  log=$work/$s.log
  # Each scenario is one client session; the CLI exits 1 if any check failed.
  if timeout 120 "$conformance" server --url "$url" --scenario "$s" >"$log" 2>&1; then
    passed=$((passed + 1))
    echo "ok - conformance $s ($(grep -m1 '^Passed:' "$log"))"
  else
    rc=$?
    failed=$((failed + 1))
    echo "not ok - conformance $s: exit $rc, $(grep -m1 '^Passed:' "$log" || echo 'no summary')"
    # The failed checks' names and messages, then the tail of the raw log.
    sed -n '/=== Failed Checks ===/,$p' "$log" | head -40
    grep -q '=== Failed Checks ===' "$log" || tail -20 "$log"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
