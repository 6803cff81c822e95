#!/bin/sh
# `--json` prints the whole result as one JSON object.
. "$(dirname "$0")/lib.sh"

# check_json PYTHON-EXPRESSION...: each expression, evaluated with `r` bound
# to the parsed object, must be true.
check_json() {
  python3 - "$T/out" "$@" <<'PY' || { fail "json: $*"; show; }
import json, sys
with open(sys.argv[1]) as f:
    text = f.read()
lines = [l for l in text.splitlines() if l.strip()]
assert len(lines) == 1, "expected one line of JSON, got %d" % len(lines)
r = json.loads(lines[0])
for expr in sys.argv[2:]:
    if not eval(expr):
        print("  not true: %s\n  in: %s" % (expr, lines[0][:500]), file=sys.stderr)
        sys.exit(1)
PY
}

ebrun --json -l sh -c 'echo out; echo err >&2; exit 3'
expect_rc 3 "run --json exit 3"
check_json 'set(r) >= {"exit_code","signal","status","output","stdout","stderr","truncated","duration_ms","cpu_ms","max_rss_kb"}' \
  'r["exit_code"] == 3' 'r["signal"] == 0' 'r["status"] == "nonzero_exit"' \
  'r["stdout"] == "out\n"' 'r["stderr"] == "err\n"' \
  'sorted(r["output"].splitlines()) == ["err", "out"]' \
  'r["truncated"] is False' 'isinstance(r["duration_ms"], int) and r["duration_ms"] >= 0' \
  'isinstance(r["cpu_ms"], int)' 'isinstance(r["max_rss_kb"], int)'
expect_stderr_empty "run --json exit 3"

ebrun --json -l sh -c 'printf "ok"'
expect_rc 0 "run --json ok"
check_json 'r["status"] == "ok"' 'r["exit_code"] == 0' 'r["stdout"] == "ok"'

# Binary output still gives valid JSON.
ebrun --json -l sh -c 'printf "a\000b\377c\n"'
expect_rc 0 "run --json binary"
check_json 'r["status"] == "ok"' 'r["stdout"].startswith("a")' 'r["stdout"].endswith("c\n")'

ebrun --json --timeout 300ms -l sh -c 'sleep 30'
expect_rc 124 "run --json timeout"
check_json 'r["status"] == "timeout"'

ebrun --json -l sh -c 'kill -9 $$'
expect_rc 137 "run --json killed"
check_json 'r["status"] == "killed"' 'r["signal"] == 9' 'r["exit_code"] == 137'

ebrun --json --output-limit 1k -l sh -c 'yes'
expect_rc 137 "run --json output limit"
check_json 'r["status"] == "output_limit"' 'r["truncated"] is True' 'len(r["output"]) == 1024'

# An execution error is reported as JSON too, with the message on stderr.
ebrun --json -l cobol -c 'x'
expect_rc 127 "run --json unknown language"
check_json '"error" in r' 'r["error"]["code"] == "language_unknown"'
expect_in err "cobol" "run --json unknown language"
finish
