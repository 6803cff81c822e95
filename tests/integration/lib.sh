# Shared helpers for the CLI scenarios. POSIX sh; sourced by each scenario:
#
#   . "$(dirname "$0")/lib.sh" "$@"      $1: path to the execbox binary
#
# RUNTIME selects the runtime every `run` uses (default: local).
# Exit status 77 marks a scenario as skipped (ctest SKIP_RETURN_CODE).

set -u

EXECBOX=${1:?usage: $0 PATH_TO_EXECBOX}
RUNTIME=${RUNTIME:-local}
SCENARIO=$(basename "$0" .sh)

[ -x "$EXECBOX" ] || { echo "$SCENARIO: $EXECBOX is not executable" >&2; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/execbox-it.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM

# A number unique to this scenario run, for `sleep` commands we look for later.
UNIQ=$$

FAILURES=0

fail() {
  echo "FAIL [$SCENARIO, runtime $RUNTIME]: $*" >&2
  FAILURES=$((FAILURES + 1))
}

skip() {
  echo "SKIP [$SCENARIO]: $*" >&2
  exit 77
}

# eb ARGS...: runs `execbox ARGS...` with stdin from /dev/null unless
# redirected by the caller; stdout in $T/out, stderr in $T/err, status in $RC.
eb() {
  "$EXECBOX" "$@" >"$T/out" 2>"$T/err"
  RC=$?
}

# ebrun ARGS...: `execbox run --runtime $RUNTIME ARGS...`.
ebrun() {
  eb run --runtime "$RUNTIME" "$@"
}

show() {
  echo "  exit status: $RC" >&2
  echo "  stdout: $(head -c 2000 "$T/out")" >&2
  echo "  stderr: $(head -c 2000 "$T/err")" >&2
}

expect_rc() {
  [ "$RC" -eq "$1" ] || { fail "${2:-command}: exit status $RC, expected $1"; show; }
}

expect_rc_not() {
  [ "$RC" -ne "$1" ] || { fail "${2:-command}: exit status $RC, expected anything else"; show; }
}

# expect_stdout TEXT [WHAT]: stdout is exactly TEXT plus one trailing newline.
expect_stdout() {
  printf '%s\n' "$1" >"$T/want"
  cmp -s "$T/want" "$T/out" || { fail "${2:-command}: stdout differs, expected: $1"; show; }
}

expect_stdout_empty() {
  [ ! -s "$T/out" ] || { fail "${1:-command}: stdout should be empty"; show; }
}

expect_stderr_empty() {
  [ ! -s "$T/err" ] || { fail "${1:-command}: stderr should be empty"; show; }
}

# expect_in FILE FIXED-STRING [WHAT]
expect_in() {
  grep -qF -- "$2" "$T/$1" || { fail "${3:-command}: $1 lacks \`$2\`"; show; }
}

expect_not_in() {
  if grep -qF -- "$2" "$T/$1"; then fail "${3:-command}: $1 contains \`$2\`"; show; fi
}

# language_available NAME: whether `execbox languages --json` says so.
language_available() {
  "$EXECBOX" languages --json | python3 -c '
import json, sys
langs = {l["name"]: l for l in json.load(sys.stdin)}
sys.exit(0 if langs.get(sys.argv[1], {}).get("available") else 1)' "$1"
}

# pids_matching PATTERN: pids of processes whose command line matches.
pids_matching() {
  pgrep -f -- "$1" || true
}

# expect_no_process PATTERN WHAT: no process matches PATTERN, after a short
# grace period for SIGKILLs already sent to take effect. Kills any found.
expect_no_process() {
  i=0
  while [ $i -lt 40 ]; do
    [ -z "$(pids_matching "$1")" ] && return 0
    sleep 0.05
    i=$((i + 1))
  done
  left=$(pids_matching "$1" | tr '\n' ' ')
  fail "$2: process \`$1\` still runs (pids $left)"
  # shellcheck disable=SC2086
  kill -9 $left 2>/dev/null
}

# proc_state PID: one-letter state from /proc, or "gone".
proc_state() {
  s=$(sed -n 's/^.*) \([A-Za-z]\) .*$/\1/p' "/proc/$1/stat" 2>/dev/null)
  echo "${s:-gone}"
}

# wait_exit PID SECONDS: waits until PID has exited (gone or zombie).
# Returns 0 if it did in time, 1 if it still runs.
wait_exit() {
  i=0
  n=$(($2 * 20))
  while [ $i -lt "$n" ]; do
    case $(proc_state "$1") in
      gone | Z) return 0 ;;
    esac
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}

finish() {
  if [ "$FAILURES" -gt 0 ]; then
    echo "$SCENARIO: $FAILURES check(s) failed" >&2
    exit 1
  fi
  echo "$SCENARIO: ok (runtime $RUNTIME)"
  exit 0
}
