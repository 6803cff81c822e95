#!/bin/sh
# `execbox ask` and `execbox chat` end to end against the scripted fake
# provider (tests/fixtures/fake_llm.py), both wire formats.
#   ask_cli.sh EXECBOX FIXTURES_DIR
. "$(dirname "$0")/lib.sh" "$1"
FIXTURES=${2:?fixtures dir}
SERVER_PID=

# serve SCRIPT_JSON: starts the fake provider; sets PORT.
serve() {
  stop_server
  printf '%s' "$1" >"$T/script.json"
  rm -f "$T/port" "$T/log.jsonl"
  python3 "$FIXTURES/fake_llm.py" --script "$T/script.json" --port 0 --port-file "$T/port" \
    --log "$T/log.jsonl" &
  SERVER_PID=$!
  i=0
  while [ ! -s "$T/port" ] && [ $i -lt 200 ]; do sleep 0.025; i=$((i + 1)); done
  PORT=$(cat "$T/port")
}
stop_server() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; fi
  SERVER_PID=
}
trap 'stop_server; rm -rf "$T"' EXIT

TOOL_THEN_ANSWER='{"steps": [
 {"reply": {"text": "Let me compute.", "tool_calls": [{"id": "c1", "name": "execute_code",
   "arguments": {"language": "python", "code": "print(6*7)"}}]}},
 {"reply": {"text": "The program printed 42."}, "expect": {"last_tool_result_contains": "42"}}]}'

for provider in openai anthropic; do
  serve "$TOOL_THEN_ANSWER"
  if [ $provider = openai ]; then
    env="OPENAI_BASE_URL=http://127.0.0.1:$PORT/v1 OPENAI_API_KEY=sk-test"
  else
    env="ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT ANTHROPIC_API_KEY=sk-test"
  fi
  # shellcheck disable=SC2086
  env $env SANDBOX_ENV="$RUNTIME" "$EXECBOX" ask --yes --model $provider:test "what is 6*7" \
    </dev/null >"$T/out" 2>"$T/err"
  RC=$?
  expect_rc 0 "ask ($provider)"
  expect_in out "Let me compute." "ask ($provider) streams the text"
  expect_in out "The program printed 42." "ask ($provider) answer"
  expect_in err "--- python ---" "ask ($provider) shows the language"
  expect_in err "print(6*7)" "ask ($provider) shows the code"
  expect_in err "--- exit 0 in" "ask ($provider) shows the result line"
  python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 2, len(lines)
assert all(not l["expect_failures"] and not l["protocol_errors"] for l in lines), lines
assert lines[0]["stream"] is True
' "$T/log.jsonl" || fail "ask ($provider): the provider saw unexpected requests"
done

# chat keeps the conversation across turns.
serve '{"steps": [
 {"reply": {"text": "Hello! Ask me anything."}},
 {"reply": {"tool_calls": [{"id": "c1", "name": "execute_code",
   "arguments": {"language": "sh", "code": "echo $((2+3))"}}]},
  "expect": {"messages_count": 4}},
 {"reply": {"text": "It is 5."}, "expect": {"last_tool_result_contains": "5"}}]}'
printf 'hi\nwhat is 2+3?\n' | OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" OPENAI_API_KEY=sk-test \
  SANDBOX_ENV="$RUNTIME" "$EXECBOX" chat --yes --model openai:test >"$T/out" 2>"$T/err"
RC=$?
expect_rc 0 "chat"
expect_in out "Hello! Ask me anything." "chat turn 1"
expect_in out "It is 5." "chat turn 2"
python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 3 and not any(l["expect_failures"] for l in lines), lines
' "$T/log.jsonl" || fail "chat: the second turn did not carry the first"

# No terminal and no --yes: stop at once with a clear message.
serve "$TOOL_THEN_ANSWER"
OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" OPENAI_API_KEY=sk-test \
  setsid "$EXECBOX" ask --model openai:test "q" </dev/null >"$T/out" 2>"$T/err"
RC=$?
expect_rc 64 "ask without a terminal"
expect_in err "pass --yes" "ask without a terminal"
[ ! -s "$T/log.jsonl" ] || fail "ask without a terminal still called the model"

# A missing key: one line, exit 69, no crash.
env -u OPENAI_API_KEY "$EXECBOX" ask --yes --model openai:test "q" </dev/null >"$T/out" 2>"$T/err"
RC=$?
expect_rc 69 "missing key"
expect_in err "OPENAI_API_KEY" "missing key"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "missing key: more than one line on stderr"

# An unreachable endpoint: exit 69 after the retries, no hang.
stop_server
OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" OPENAI_API_KEY=sk-test \
  "$EXECBOX" ask --yes --model openai:test "q" </dev/null >"$T/out" 2>"$T/err"
RC=$?
expect_rc 69 "unreachable endpoint"
expect_in err "execbox: " "unreachable endpoint"

# No model at all: usage error.
env -u EXECBOX_MODEL "$EXECBOX" ask --yes "q" </dev/null >"$T/out" 2>"$T/err"
RC=$?
expect_rc 64 "no model"
expect_in err "--model" "no model"

[ "$FAILURES" -eq 0 ] || exit 1
echo "ok [ask_cli, runtime $RUNTIME]"
