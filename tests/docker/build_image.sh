#!/bin/sh
# Builds the image the docker runtime's tests run in, without a registry:
# a minimal Debian bookworm with python3 (debootstrap --variant=minbase),
# imported with `docker import`. An image of that name that already exists
# is reused, so only the first run on a machine pays the ~1 minute.
#
#   tests/docker/build_image.sh [IMAGE]      default: execbox-test-python:bookworm
#   DOCKER=podman tests/docker/build_image.sh   the same into Podman's storage
#
# Needs root, debootstrap and a reachable Debian archive: the mirror is the
# one apt uses on this machine (else debootstrap's default).
set -eu
image=${1:-${EXECBOX_TEST_IMAGE:-execbox-test-python:bookworm}}
docker=${DOCKER:-docker}

if $docker image inspect "$image" >/dev/null 2>&1; then
  echo "build_image: $image exists, reused"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "build_image: debootstrap is not installed" >&2; exit 1; }

# The Debian mirror apt is configured with (deb822 or one-line sources).
mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
  awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }')
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list 2>/dev/null |
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }')
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/execbox-image.XXXXXX")
trap 'rm -rf "$root"' EXIT
echo "build_image: debootstrap bookworm into $root${mirror:+ from $mirror}"
# shellcheck disable=SC2086
debootstrap --variant=minbase --include=python3-minimal bookworm "$root" $mirror >"$root.log" 2>&1 || {
  tail -20 "$root.log" >&2
  rm -f "$root.log"
  exit 1
}
rm -f "$root.log"
# Nothing the tests need from apt's caches.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | $docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["python3"]' - "$image" >/dev/null
echo "build_image: $image imported"
