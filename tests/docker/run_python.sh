#!/bin/sh
# A python run in a container: output, stderr, exit status, stdin, arguments,
# environment, JSON, and code of 1 MiB with stdin of 4 MiB.
. "$(dirname "$0")/lib.sh"

ebrun -l python -c 'print(6*7)'
expect_rc 0 "python print"
expect_stdout 42 "python print"
expect_stderr_empty "python print"

ebrun -l py -c 'import sys; print("to stderr", file=sys.stderr); print("to stdout")'
expect_rc 0 "stderr passthrough"
expect_stdout "to stdout" "stderr passthrough"
expect_in err "to stderr" "stderr passthrough"

ebrun -l python -c 'raise ValueError("boom")'
expect_rc 1 "python exception"
expect_in err "ValueError: boom" "python exception"

printf 'line one\nline two\n' >"$T/in"
ebrun -l python --stdin "$T/in" -c 'import sys; print(len(sys.stdin.read().splitlines()))'
expect_stdout 2 "stdin"
ebrun -l python -c 'import sys; print(repr(sys.stdin.read()))'
expect_stdout "''" "no stdin is EOF"

ebrun -l sh -e "GREETING=it's here" -c 'echo "$GREETING|$1|$2|$HOME|$(pwd)"' -- one 'two words'
expect_stdout "it's here|one|two words|/sandbox|/sandbox" "env and args"

ebrun --json -l python -c 'import sys; print("o"); print("e", file=sys.stderr)'
expect_rc 0 "--json"
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "ok" and r["exit_code"] == 0, r
assert r["stdout"] == "o\n" and r["stderr"] == "e\n", r
assert sorted(r["output"].splitlines()) == ["e", "o"], r
' "$T/out" || { fail "--json result"; show; }

# Code up to 1 MiB (past what argv or the environment could carry), and
# megabytes of stdin after it.
python3 -c '
import sys
body = "x = 1\n" * ((1 << 20) // 6 - 20)
open(sys.argv[1], "w").write(body + "import sys\nprint(len(open(\"main.py\").read()), len(sys.stdin.buffer.read()))\n")
open(sys.argv[2], "wb").write(b"y" * (4 << 20))' "$T/big.py" "$T/big.in"
size=$(wc -c <"$T/big.py")
ebrun --stdin "$T/big.in" "$T/big.py"
expect_rc 0 "1 MiB of code"
expect_stdout "$size $((4 << 20))" "1 MiB of code"
expect_no_container "after the runs"
finish
