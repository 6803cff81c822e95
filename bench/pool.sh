#!/usr/bin/env bash
# Warm sandboxes against cold ones, a bare spawn, bubblewrap and `docker run`,
# in one run (bench/bench_pool.c). Prints Markdown tables for
# docs/performance.md.
#   bench/pool.sh [BUILD_DIR] [RUNS] [DOCKER_IMAGE]
# DOCKER_IMAGE (a local image with python3) adds `docker run` when a Docker
# daemon answers; bubblewrap is included when installed.
set -eu
build=${1:-build}
runs=${2:-300}
image=${3:-}
args=(--runs "$runs")
if command -v bwrap >/dev/null; then
  args+=(--bwrap)
else
  echo "bench: bubblewrap not installed (apt-get install bubblewrap); comparing without it" >&2
fi
if [ -n "$image" ]; then
  if docker image inspect "$image" >/dev/null 2>&1; then
    args+=(--docker "$image" --docker-runs 20)
  else
    echo "bench: docker image $image not available; comparing without docker run" >&2
  fi
fi
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs, uid $(id -u)"
"$build/bench_pool" "${args[@]}"
