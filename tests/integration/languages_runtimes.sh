#!/bin/sh
# `execbox languages` and `execbox runtimes` list what is built in.
. "$(dirname "$0")/lib.sh"

eb languages
expect_rc 0 "languages"
for lang in python javascript bash sh c; do
  grep -q "^$lang " "$T/out" || { fail "languages: $lang not listed"; show; }
done
expect_in out "py" "languages (aliases)"
expect_in out ".py" "languages (extensions)"
grep -q '^sh .* yes' "$T/out" || { fail "languages: sh should be available"; show; }

eb languages --json
expect_rc 0 "languages --json"
python3 -c '
import json, sys
langs = {l["name"]: l for l in json.load(open(sys.argv[1]))}
assert {"python", "javascript", "bash", "sh", "c"} <= set(langs), langs
assert "py" in langs["python"]["aliases"]
assert ".py" in langs["python"]["extensions"]
assert langs["c"]["compiled"] is True and langs["python"]["compiled"] is False
assert langs["sh"]["available"] is True
for l in langs.values():
    assert l["available"] or l.get("reason"), l
' "$T/out" || { fail "languages --json"; show; }

eb runtimes
expect_rc 0 "runtimes"
grep -q '^local ' "$T/out" || { fail "runtimes: local not listed"; show; }

eb runtimes --json
expect_rc 0 "runtimes --json"
python3 -c '
import json, sys
rts = {r["name"]: r for r in json.load(open(sys.argv[1]))}
assert "local" in rts, rts
assert rts["local"]["usable"] is True
assert sum(1 for r in rts.values() if r["default"]) == 1
' "$T/out" || { fail "runtimes --json"; show; }

SANDBOX_ENV=local eb runtimes --json
expect_rc 0 "SANDBOX_ENV=local runtimes"
python3 -c '
import json, sys
rts = {r["name"]: r for r in json.load(open(sys.argv[1]))}
assert rts["local"]["default"] is True
' "$T/out" || { fail "SANDBOX_ENV=local makes local the default"; show; }
finish
