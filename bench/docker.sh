#!/usr/bin/env bash
# The docker runtime against the docker CLI, interleaved in one run:
#   bench/docker.sh [BUILD_DIR] [RUNS] [IMAGE]
# Needs a running Docker daemon and the image (tests/docker/build_image.sh
# builds the default one). Prints a Markdown table for docs/performance.md.
set -eu
build=${1:-build}
runs=${2:-30}
image=${3:-execbox-test-python:bookworm}
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs, $(docker version -f 'Docker {{.Server.Version}}, API {{.Server.APIVersion}}' 2>/dev/null)"
"$build/bench_docker" --runs "$runs" --image "$image"
