# Starting and stopping `execbox serve` for the service tests. Sourced after
# lib.sh. serve_start [ARGS...] sets SERVE_PID and URL.
SERVE_PID=
serve_start() {
  "$EXECBOX" serve --runtime "$RUNTIME" -l 127.0.0.1:0 "$@" 2>"$T/serve.err" &
  SERVE_PID=$!
  i=0
  while ! grep -q 'http://' "$T/serve.err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  URL=$(grep -o 'http://[^ ]*' "$T/serve.err" | head -1)
  [ -n "$URL" ] || { fail "execbox serve did not start: $(cat "$T/serve.err")"; exit 1; }
}
serve_stop() {
  [ -n "$SERVE_PID" ] || return 0
  kill -TERM "$SERVE_PID" 2>/dev/null
  i=0
  while kill -0 "$SERVE_PID" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
  if kill -0 "$SERVE_PID" 2>/dev/null; then
    fail "execbox serve did not exit after SIGTERM"
    kill -9 "$SERVE_PID"
  fi
  wait "$SERVE_PID" 2>/dev/null
  SERVE_PID=
}
trap 'serve_stop; rm -rf "$T"' EXIT
