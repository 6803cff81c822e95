/* A cmocka runner that gives every test its own process and a timeout
 * (STYLE.md §12, like libuv's runner): a test that crashes, hangs, leaks a
 * child or corrupts memory cannot take its neighbours down with it.
 *
 *   EB_TEST_MAIN(tests)   defines main() for a const struct CMUnitTest array.
 *
 * Command line: `test_x [NAME...]` runs only the named tests (fnmatch
 * patterns). Environment: EB_TEST_TIMEOUT (seconds per test, default 30),
 * EB_TEST_NOFORK=1 runs everything in-process (for a debugger). */
#ifndef EB_TEST_RUNNER_H
#define EB_TEST_RUNNER_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

int eb_test_run(const char *group, const struct CMUnitTest *tests, size_t n, int argc,
                char **argv);

#define EB_TEST_MAIN(tests)                                                                       \
  int main(int argc, char **argv) {                                                               \
    return eb_test_run(__FILE__, tests, sizeof(tests) / sizeof((tests)[0]), argc, argv);          \
  }

/* Helpers shared by several test files. */

/* Sorted list of the fds open in this process (excluding the one used to
 * list them). Returns the count; fills at most max. */
int eb_test_list_fds(int *fds, int max);

/* A fresh private directory under /tmp; the caller removes it with
 * eb_test_rmtree(). Aborts the test on failure. */
char *eb_test_mkdtemp(const char *prefix);
void eb_test_rmtree(const char *path);

/* Number of directory entries other than . and .. (-1 on error). */
int eb_test_dir_entries(const char *path);

/* Pids of live (non-zombie) processes whose parent is ppid, at most max. */
int eb_test_children_of(int ppid, int *pids, int max);

/* Pids of live processes whose command line contains needle, at most max. */
int eb_test_find_cmdline(const char *needle, int *pids, int max);

#endif
