#!/bin/sh
# `cmake --install` honours a prefix, and a program built only from what was
# installed (headers, libexecbox, execbox.pc) works.
#   install_pkgconfig.sh BUILD_DIR SOURCE_DIR
set -u
build=$1 src=$2
prefix=$(mktemp -d /tmp/execbox-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL [install_pkgconfig]: $*"; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$prefix/install.log" 2>&1 || { cat "$prefix/install.log"; fail "cmake --install failed"; }
[ -x "$prefix/bin/execbox" ] || fail "no bin/execbox under the prefix"
[ -f "$prefix/include/execbox/execbox.h" ] || fail "no include/execbox/execbox.h"
pc=$(find "$prefix" -name execbox.pc | head -1)
[ -n "$pc" ] || fail "no execbox.pc"
libdir=$(dirname "$(dirname "$pc")")
ls "$libdir"/libexecbox.so* >/dev/null 2>&1 || fail "no shared library in $libdir"
[ -f "$libdir/libexecbox.a" ] || fail "no static library in $libdir"
got=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=prefix execbox)
[ "$(cd "$got" 2>/dev/null && pwd -P)" = "$(cd "$prefix" && pwd -P)" ] || fail "execbox.pc resolves the prefix to '$got', not $prefix"

flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs execbox) || fail "pkg-config cannot read execbox.pc"
${CC:-cc} ${EXTRA_CFLAGS:-} -std=c11 -o "$prefix/example" "$src/examples/code-execution/main.c" $flags || fail "the example does not build against the install"
cat >"$prefix/run.c" <<'CEOF'
#include <execbox/execbox.h>
#include <stdio.h>
int main(void) {
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  eb_exec_result res = {0};
  if (eb_runtime_new(NULL, &rt, &err) < 0 ||
      eb_execute(rt, NULL, "python", "import math\nprint(math.factorial(20))\n", &res, &err) < 0) {
    fprintf(stderr, "%s\n", err->msg);
    return 1;
  }
  fputs(res.output, stdout);
  eb_exec_result_clear(&res);
  eb_runtime_free(rt);
  return 0;
}
CEOF
${CC:-cc} ${EXTRA_CFLAGS:-} -std=c11 -o "$prefix/run" "$prefix/run.c" $flags || fail "a program does not build against the install"
out=$(SANDBOX_ENV=local LD_LIBRARY_PATH=$libdir "$prefix/run") || fail "the program exited non-zero: $out"
echo "$out" | grep -q '2432902008176640000' || fail "unexpected output: $out"
"$prefix/bin/execbox" --version | grep -q '^execbox ' || fail "installed execbox --version"
echo "ok [install_pkgconfig]"
