#!/bin/sh
# What cannot run fails clearly: a missing image (named, with how to get
# it), an unreachable daemon, --pull off the docker runtime, an image
# without the interpreter.
. "$(dirname "$0")/lib.sh"

EXECBOX_DOCKER_IMAGE=execbox-test-no-such-image:0 ebrun -l python -c 'print(1)'
expect_rc 127 "missing image"
expect_in err "execbox-test-no-such-image:0" "missing image is named"
expect_in err "--pull" "missing image: how to get it"
expect_stdout_empty "missing image"

EXECBOX_DOCKER_IMAGE_PYTHON=execbox-test-no-such-image:0 ebrun --json -l python -c 'print(1)'
expect_rc 127 "missing per-language image (--json)"
expect_in out '"language_unavailable"' "missing image --json code"

DOCKER_HOST=unix:///nonexistent/execbox-test.sock ebrun -l python -c 'print(1)'
expect_rc 125 "unreachable daemon"
expect_in err "/nonexistent/execbox-test.sock" "unreachable daemon named"

eb run --pull --runtime local -l python -c 'print(1)'
expect_rc 64 "--pull on another runtime"

# The test image has no node: a clear error, not "not found" as output.
ebrun -l javascript -c 'console.log(1)'
expect_rc 127 "no interpreter in the image"
expect_in err "has no \`node\`" "no interpreter in the image"
expect_no_container "after the errors"

eb runtimes --json
python3 -c '
import json, sys
rts = {r["name"]: r for r in json.load(open(sys.argv[1]))}
assert rts["docker"]["usable"] is True, rts["docker"]
assert "API" in rts["docker"]["detail"], rts["docker"]
' "$T/out" || { fail "runtimes --json: docker"; show; }
finish
