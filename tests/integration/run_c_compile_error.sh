#!/bin/sh
# C: compiled, then run; a compile error exits non-zero and shows the compiler's message.
. "$(dirname "$0")/lib.sh"
language_available c || skip "no C compiler"

ebrun -l c -c '#include <stdio.h>
int main(void) { printf("%d\n", 6 * 7); return 0; }'
expect_rc 0 "run -l c"
expect_stdout 42 "run -l c"

ebrun -l c -c 'int main(void) { return undeclared_variable_xyz; }'
expect_rc_not 0 "run -l c with a compile error"
expect_in err "undeclared_variable_xyz" "run -l c with a compile error"
expect_in err "compil" "run -l c with a compile error"
expect_stdout_empty "run -l c with a compile error"

printf 'int main(void) { return 9; }\n' >"$T/prog.c"
ebrun "$T/prog.c"
expect_rc 9 "run prog.c"
finish
