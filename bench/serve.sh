#!/usr/bin/env bash
# execbox serve + the remote runtime against a direct library call (jail),
# in one run, and executions/s at concurrency 1, 2, 4, 8 both ways.
#   bench/serve.sh [BUILD_DIR] [RUNS]
set -eu
build=${1:-build}
runs=${2:-200}
log=$(mktemp)
"$build/execbox" serve -l 127.0.0.1:0 --max-concurrent 8 2>"$log" &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do grep -q 'http://' "$log" && break; sleep 0.05; done
export EXECBOX_REMOTE_URL=$(grep -o 'http://[^ ]*' "$log" | head -1)
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs; server $EXECBOX_REMOTE_URL"
"$build/bench_runtime" --runs "$runs" --runtimes jail,remote 2>/dev/null | sed "/^| cancellation/,$d"
echo
"$build/bench_runtime" --throughput jail
echo
"$build/bench_runtime" --throughput remote
