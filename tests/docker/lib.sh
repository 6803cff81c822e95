# Shared helpers for the docker runtime's scenarios: tests/integration/lib.sh
# plus a reachable daemon, the test image and a check that no container is
# left behind. POSIX sh; sourced by each scenario:
#
#   . "$(dirname "$0")/lib.sh" "$@"      $1: path to the execbox binary
#
# A scenario is skipped (77) when no Docker daemon answers or the test image
# is missing — unless EXECBOX_REQUIRE_DOCKER=1 (set by scripts/check.sh when
# it runs the daemon), where that is a failure.

. "$(dirname "$0")/../integration/lib.sh" "$@"
RUNTIME=docker
EXECBOX_TEST_IMAGE=${EXECBOX_TEST_IMAGE:-execbox-test-python:bookworm}
export EXECBOX_DOCKER_IMAGE="$EXECBOX_TEST_IMAGE"
unset EXECBOX_DOCKER_POOL EXECBOX_DOCKER_POOL_MODE EXECBOX_DOCKER_PULL EXECBOX_DOCKER_USER
for v in $(env | sed -n 's/^\(EXECBOX_DOCKER_IMAGE_[A-Z]*\)=.*/\1/p'); do unset "$v"; done

unavailable() {
  if [ "${EXECBOX_REQUIRE_DOCKER:-0}" = 1 ]; then
    echo "FAIL [$SCENARIO]: $* (EXECBOX_REQUIRE_DOCKER=1)" >&2
    exit 1
  fi
  skip "$*"
}

command -v docker >/dev/null || unavailable "the docker CLI (used to check for leftovers) is not installed"
docker version >/dev/null 2>&1 || unavailable "no Docker daemon answers"
docker image inspect "$EXECBOX_TEST_IMAGE" >/dev/null 2>&1 ||
  unavailable "image $EXECBOX_TEST_IMAGE is missing (tests/docker/build_image.sh builds it)"

# Podman's compatibility API (DOCKER_HOST pointing at its socket) differs
# where noted in docs/runtimes.md.
PODMAN=0
docker version 2>/dev/null | grep -q 'Podman Engine' && PODMAN=1

# Containers of execbox's docker runtime (they carry the label `execbox`).
execbox_containers() {
  docker ps -aq --filter label=execbox 2>/dev/null
}

# expect_no_container WHAT: none is left, not even stopped or being removed.
expect_no_container() {
  left=$(execbox_containers | tr '\n' ' ')
  if [ -n "$left" ]; then
    fail "$1: containers left behind: $left"
    # shellcheck disable=SC2086
    docker rm -f $left >/dev/null 2>&1
  fi
}

# Scenarios start clean: a leftover of another run is not theirs to report.
stale=$(execbox_containers | tr '\n' ' ')
# shellcheck disable=SC2086
[ -z "$stale" ] || docker rm -f $stale >/dev/null 2>&1
