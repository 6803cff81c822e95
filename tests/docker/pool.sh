#!/bin/sh
# The warm pool under `execbox serve`: containers are made ahead (created,
# or started), each serves one execution, and stopping the server removes
# every one of them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../integration/serve_lib.sh"
command -v curl >/dev/null || skip "curl is not installed"

# count_containers STATUS: execbox containers in that state.
count_containers() {
  docker ps -aq --filter label=execbox --filter status="$1" | wc -l
}

# wait_count STATUS N: until exactly N are in that state (10 s at most).
wait_count() {
  i=0
  while [ "$(count_containers "$1")" -ne "$2" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
  [ "$(count_containers "$1")" -eq "$2" ] || fail "$3: $(count_containers "$1") containers $1, expected $2"
}

for mode in created started; do
  state=$mode
  [ $mode = started ] && state=running
  # serve_start looks for the URL in serve.err: not the previous server's.
  rm -f "$T/serve.err"
  EXECBOX_DOCKER_POOL=2 EXECBOX_DOCKER_POOL_MODE=$mode serve_start
  ids=""
  for i in 1 2 3 4; do
    body=$(curl -s "$URL/v1/execute" -d "{\"language\":\"python\",\"code\":\"import socket; print($i, socket.gethostname())\"}")
    case $body in
      *"\"stdout\":\"$i sandbox\\n\""*) ;;
      *) fail "pool $mode: execution $i: $body" ;;
    esac
    # The pool refills to 2 after each one.
    wait_count "$state" 2 "pool $mode after execution $i"
  done
  # The first execution registered its kind and ran cold; the others were warm.
  metrics=$(curl -s "$URL/metrics")
  case $metrics in
    *'execbox_pool_executions_total{sandbox="warm"} 3'*'execbox_pool_executions_total{sandbox="cold"} 1'*'execbox_pool_sandboxes{state="ready"} 2'*) ;;
    *) fail "pool $mode: metrics: $(echo "$metrics" | grep execbox_pool)" ;;
  esac
  serve_stop
  expect_no_container "pool $mode: after the server stopped"
done
finish
