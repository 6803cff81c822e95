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

suite build -DCMAKE_BUILD_TYPE=RelWithDebInfo
suite build-asan -DCMAKE_BUILD_TYPE=Debug -DEXECBOX_SANITIZE=ON -DCMAKE_C_COMPILER=clang
echo
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
