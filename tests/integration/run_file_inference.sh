#!/bin/sh
# `execbox run FILE` infers the language from FILE's extension.
. "$(dirname "$0")/lib.sh"

printf 'echo "sh says $((6*7))"\n' >"$T/script.sh"
ebrun "$T/script.sh"
expect_rc 0 "run script.sh"
expect_stdout "sh says 42" "run script.sh"

if language_available python; then
  printf 'import sys\nprint("py", sys.argv[1:])\n' >"$T/prog.py"
  ebrun "$T/prog.py" -- a b
  expect_rc 0 "run prog.py"
  expect_stdout "py ['a', 'b']" "run prog.py -- a b"
  # Upper-case extensions work too.
  printf 'print("upper")\n' >"$T/UP.PY"
  ebrun "$T/UP.PY"
  expect_rc 0 "run UP.PY"
  expect_stdout upper "run UP.PY"
else
  echo "note: python not installed, .py not checked" >&2
fi

if language_available javascript; then
  printf 'console.log("js", 6*7)\n' >"$T/app.js"
  ebrun "$T/app.js"
  expect_rc 0 "run app.js"
  expect_stdout "js 42" "run app.js"
else
  echo "note: node not installed, .js not checked" >&2
fi

# --language wins over the extension.
printf 'echo overridden\n' >"$T/really-sh.py"
ebrun -l sh "$T/really-sh.py"
expect_rc 0 "run -l sh really-sh.py"
expect_stdout overridden "run -l sh really-sh.py"

# No extension and no --language: a usage error that says why.
printf 'echo hi\n' >"$T/noext"
ebrun "$T/noext"
expect_rc 64 "run noext"
expect_in err "language" "run noext"
expect_stdout_empty "run noext"

# A file that does not exist.
ebrun "$T/missing.py"
expect_rc 64 "run missing.py"
expect_in err "missing.py" "run missing.py"
finish
