#!/usr/bin/env bash
# Builds execbox and runs the whole test suite twice: a plain build (build/)
# and an AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan/).
# The last line is the total: "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0

suite() {
  local dir=$1
  shift
  echo "== $dir: configure and build"
  if ! cmake -S . -B "$dir" "$@" >"$dir.configure.log" 2>&1; then
    cat "$dir.configure.log"
    failed=$((failed + 1))
    return
  fi
  if ! cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1; then
    cat "$dir.build.log"
    failed=$((failed + 1))
    return
  fi
  echo "== $dir: tests"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" --timeout 600 2>&1 | tee "$dir/ctest.log"
  local line total nfail
  line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$dir/ctest.log" | tail -1)
  if [ -z "$line" ]; then
    echo "$dir: ctest printed no summary"
    failed=$((failed + 1))
    return
  fi
  nfail=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  total=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")
  passed=$((passed + total - nfail))
  failed=$((failed + nfail))
}

# The MCP tests drive the server with real clients from npm (pinned by the
# lock file). A failed install is a failure, not a skip. Debian's nodejs
# comes without npm (NodeSource's includes it): install it when missing.
if command -v node >/dev/null && ! command -v npm >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "== apt-get install -y npm"
  apt-get install -y npm >npm-apt.log 2>&1 || { cat npm-apt.log; failed=$((failed + 1)); }
fi
if command -v npm >/dev/null; then
  echo "== npm ci --prefix tests/mcp"
  if ! npm ci --prefix tests/mcp --no-audit --no-fund >npm.log 2>&1; then
    cat npm.log
    failed=$((failed + 1))
  fi
fi

# The docker runtime's tests need a Docker daemon and their image. As root
# with docker.io installed, start dockerd when none answers (and stop it, by
# its pid, at the end); then the tests must run: EXECBOX_REQUIRE_DOCKER=1
# turns their "skip" into a failure. dockerd is told to leave the host's
# network alone: the tests' containers all run with network none.
dockerd_pid=
stop_dockerd() {
  [ -n "$dockerd_pid" ] || return 0
  echo "== stopping dockerd (pid $dockerd_pid)"
  kill -TERM "$dockerd_pid" 2>/dev/null
  for _ in $(seq 300); do
    kill -0 "$dockerd_pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$dockerd_pid" 2>/dev/null; then
    echo "dockerd did not stop in 30 s; killing it"
    kill -KILL "$dockerd_pid" 2>/dev/null
  fi
  wait "$dockerd_pid" 2>/dev/null
  dockerd_pid=
}
trap stop_dockerd EXIT
if [ "$(id -u)" = 0 ] && command -v dockerd >/dev/null && command -v docker >/dev/null; then
  if ! docker version >/dev/null 2>&1; then
    echo "== starting dockerd (log: dockerd.log)"
    dockerd --bridge=none --iptables=false --ip-forward=false >dockerd.log 2>&1 &
    dockerd_pid=$!
    for _ in $(seq 300); do
      docker version >/dev/null 2>&1 && break
      kill -0 "$dockerd_pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  if docker version >/dev/null 2>&1; then
    export EXECBOX_REQUIRE_DOCKER=1
    echo "== tests/docker/build_image.sh"
    if ! tests/docker/build_image.sh >docker-image.log 2>&1; then
      cat docker-image.log
      failed=$((failed + 1))
    fi
  else
    echo "dockerd did not come up:"
    tail -20 dockerd.log
    failed=$((failed + 1))
  fi
fi

suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo
suite build-asan -DCMAKE_BUILD_TYPE=Debug -DEXECBOX_SANITIZE=ON -DCMAKE_C_COMPILER=clang
stop_dockerd
echo
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
