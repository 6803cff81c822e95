#!/usr/bin/env bash
# Runs the runtime benchmark: local and jail against a bare spawn of the same
# program and against bubblewrap, interleaved in one run. Prints a Markdown
# table of medians and ratios (paste it into docs/performance.md).
#   bench/run.sh [BUILD_DIR] [RUNS]
set -eu
build=${1:-build}
runs=${2:-300}
args=(--runs "$runs" --runtimes local,jail)
if command -v bwrap >/dev/null; then
  args+=(--bwrap)
else
  echo "bench: bubblewrap not installed (apt-get install bubblewrap); comparing without it" >&2
fi
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs, uid $(id -u)"
"$build/bench_runtime" "${args[@]}"
