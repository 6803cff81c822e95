/* Many executions in one process leave nothing behind: no fd, no child,
 * no zombie, no work dir, no leftover process. */
#include "runner.h"

#include <errno.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <execbox/execbox.h>

#define MAX_FDS 1024

typedef struct leak_env {
  eb_runtime *rt;
  char *tmpdir;
  int fds[MAX_FDS];
  int n_fds;
} leak_env;

static void describe_fd(int fd) {
  char path[64], target[512];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, target, sizeof(target) - 1);
  target[n > 0 ? n : 0] = '\0';
  print_error("  fd %d -> %s\n", fd, target);
}

static int setup(void **state) {
  leak_env *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return -1;
  /* A private TMPDIR: every work dir the runtime makes lands here. */
  e->tmpdir = eb_test_mkdtemp("eb-leaks");
  setenv("TMPDIR", e->tmpdir, 1);
  eb_error *err = NULL;
  if (eb_runtime_new("local", &e->rt, &err) < 0) {
    print_error("eb_runtime_new: %s\n", err->msg);
    return -1;
  }
  e->n_fds = eb_test_list_fds(e->fds, MAX_FDS);
  *state = e;
  return 0;
}

static int teardown(void **state) {
  leak_env *e = *state;
  eb_runtime_free(e->rt);
  eb_test_rmtree(e->tmpdir);
  free(e->tmpdir);
  free(e);
  return 0;
}

/* The fds open now are exactly those open at setup. Sanitizer runtimes
 * open their fds before main(), so they are in both sets. */
static void assert_same_fds(const leak_env *e) {
  int now[MAX_FDS];
  int n = eb_test_list_fds(now, MAX_FDS);
  int differ = n != e->n_fds || memcmp(now, e->fds, sizeof(int) * (size_t)n) != 0;
  if (!differ)
    return;
  print_error("open fds: %d before, %d after\n", e->n_fds, n);
  for (int i = 0; i < n && i < MAX_FDS; i++) {
    int known = 0;
    for (int j = 0; j < e->n_fds; j++)
      known |= e->fds[j] == now[i];
    if (!known)
      describe_fd(now[i]);
  }
  fail_msg("file descriptors leaked");
}

static void assert_no_children(void) {
  errno = 0;
  pid_t w = waitpid(-1, NULL, WNOHANG);
  if (w != -1 || errno != ECHILD)
    fail_msg("waitpid(-1, WNOHANG) = %d (%s): a child or zombie remains", (int)w, strerror(errno));
  int pids[16];
  int n = eb_test_children_of(getpid(), pids, 16);
  if (n > 0)
    fail_msg("%d process(es) still have this test as parent, e.g. pid %d", n, pids[0]);
}

static void assert_tmpdir_empty(const leak_env *e) {
  int n = eb_test_dir_entries(e->tmpdir);
  if (n != 0)
    fail_msg("%d entr%s left in the private TMPDIR %s", n, n == 1 ? "y" : "ies", e->tmpdir);
}

static void assert_no_process_matching(const char *needle) {
  int pids[16], n = 0;
  /* SIGKILL is sent before execute() returns; the kernel may need a moment. */
  for (int i = 0; i < 100; i++) {
    n = eb_test_find_cmdline(needle, pids, 16);
    if (n == 0)
      return;
    usleep(20 * 1000);
  }
  for (int i = 0; i < n && i < 16; i++)
    kill(pids[i], SIGKILL);
  fail_msg("%d process(es) `%s` left behind still run, e.g. pid %d", n, needle, pids[0]);
}

static void run_expect(leak_env *e, eb_ctx *ctx, const eb_exec_request *req, eb_status want,
                       int iteration) {
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  eb_error *err = NULL;
  if (eb_runtime_execute(e->rt, ctx, req, &res, &err) < 0)
    fail_msg("iteration %d: `%s` failed: %s", iteration, req->code, err->msg);
  if (res.status != want)
    fail_msg("iteration %d: `%s` ended with %s, expected %s; output: %s", iteration, req->code,
             eb_status_name(res.status), eb_status_name(want), res.output);
  eb_exec_result_clear(&res);
}

static void test_thousand_runs_leave_nothing(void **state) {
  leak_env *e = *state;
  char leftover[64], timeout_code[128], leftover_code[128], needle_timeout[64];
  snprintf(leftover, sizeof(leftover), "sleep 1000.%d2", (int)getpid());
  snprintf(needle_timeout, sizeof(needle_timeout), "sleep 1000.%d3", (int)getpid());
  snprintf(leftover_code, sizeof(leftover_code), "%s & echo left", leftover);
  snprintf(timeout_code, sizeof(timeout_code), "%s & sleep 30", needle_timeout);

  int64_t start = eb_now_ns();
  eb_exec_request trivial = {.language = "sh", .code = "true"};
  for (int i = 0; i < 1000; i++)
    run_expect(e, NULL, &trivial, EB_STATUS_OK, i);
  print_message("1000 runs of `true` in %lld ms\n", (long long)((eb_now_ns() - start) / 1000000));

  eb_exec_request behind = {.language = "sh", .code = leftover_code};
  for (int i = 0; i < 5; i++)
    run_expect(e, NULL, &behind, EB_STATUS_OK, i);

  eb_exec_request slow = {.language = "sh", .code = timeout_code, .limits = {.wall_ms = 100}};
  for (int i = 0; i < 5; i++)
    run_expect(e, NULL, &slow, EB_STATUS_TIMEOUT, i);

  /* The caller's deadline instead of the wall limit. */
  for (int i = 0; i < 3; i++) {
    eb_ctx *ctx = NULL;
    eb_error *err = NULL;
    assert_int_equal(eb_ctx_new(NULL, 100, &ctx, &err), 0);
    eb_exec_request r = {.language = "sh", .code = "sleep 30"};
    run_expect(e, ctx, &r, EB_STATUS_TIMEOUT, i);
    eb_ctx_free(ctx);
  }

  eb_exec_request flood = {.language = "sh", .code = "yes", .limits = {.output_bytes = 4096}};
  for (int i = 0; i < 3; i++)
    run_expect(e, NULL, &flood, EB_STATUS_OUTPUT_LIMIT, i);

  /* Programs that make a mess of their work dir. */
  eb_exec_request mess = {.language = "sh",
                          .code = "mkdir -p a/b/c && touch a/b/c/f && ln -s /etc link && "
                                  "ln -s a/b loop && chmod 000 a/b && chmod 0 a"};
  for (int i = 0; i < 3; i++)
    run_expect(e, NULL, &mess, EB_STATUS_OK, i);

  /* stdin fed and closed early. */
  static char input[1 << 18];
  memset(input, 'z', sizeof(input));
  eb_exec_request feed = {.language = "sh", .code = "head -c 10 >/dev/null", .stdin_data = input,
                          .stdin_len = sizeof(input)};
  for (int i = 0; i < 3; i++)
    run_expect(e, NULL, &feed, EB_STATUS_OK, i);

  assert_same_fds(e);
  assert_no_children();
  assert_tmpdir_empty(e);
  assert_no_process_matching(leftover);
  assert_no_process_matching(needle_timeout);
}

static void test_failed_requests_leave_nothing(void **state) {
  /* Executions refused before or while setting up leak nothing either. */
  leak_env *e = *state;
  const char *bad_env[] = {"NOEQUALS", NULL};
  eb_exec_request reqs[] = {
      {.language = "cobol", .code = "x"},
      {.language = "sh", .code = "true", .env = bad_env},
      {.language = "sh", .code = "true", .limits = {.pids = 5}},
      {.language = NULL, .code = "true"},
  };
  for (int i = 0; i < 100; i++) {
    for (size_t k = 0; k < sizeof(reqs) / sizeof(reqs[0]); k++) {
      eb_exec_result res;
      memset(&res, 0, sizeof(res));
      eb_error *err = NULL;
      assert_true(eb_runtime_execute(e->rt, NULL, &reqs[k], &res, &err) < 0);
      eb_error_free(err);
      eb_exec_result_clear(&res);
    }
  }
  assert_same_fds(e);
  assert_no_children();
  assert_tmpdir_empty(e);
}

static void test_compile_errors_leave_nothing(void **state) {
  leak_env *e = *state;
  char *why = NULL;
  if (!eb_language_available(eb_language_find("c"), &why)) {
    print_message("skipping: %s\n", why);
    free(why);
    skip();
  }
  eb_exec_request bad = {.language = "c", .code = "int main(void) { return nope; }"};
  for (int i = 0; i < 3; i++)
    run_expect(e, NULL, &bad, EB_STATUS_COMPILE_ERROR, i);
  assert_same_fds(e);
  assert_no_children();
  assert_tmpdir_empty(e);
}

/* In a child process (seccomp filters cannot be removed): makes every fork
 * fail with EAGAIN, as it does when the system or a cgroup is out of pids,
 * then runs code. Exits 0 if the execution failed cleanly and leaked no fd,
 * 1 if it leaked fds, 2 if it did not fail, 3 on a test setup error. */
static void fork_failure_child(leak_env *e) {
  scmp_filter_ctx f = seccomp_init(SCMP_ACT_ALLOW);
  if (f == NULL || seccomp_rule_add(f, SCMP_ACT_ERRNO(EAGAIN), SCMP_SYS(fork), 0) < 0 ||
      seccomp_rule_add(f, SCMP_ACT_ERRNO(EAGAIN), SCMP_SYS(vfork), 0) < 0 ||
      seccomp_rule_add(f, SCMP_ACT_ERRNO(EAGAIN), SCMP_SYS(clone), 0) < 0 ||
      seccomp_rule_add(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) < 0 ||
      seccomp_load(f) < 0)
    _exit(3);
  seccomp_release(f);
  int before[MAX_FDS], after[MAX_FDS];
  int nb = eb_test_list_fds(before, MAX_FDS);
  int failures = 0;
  for (int i = 0; i < 10; i++) {
    eb_exec_result res;
    memset(&res, 0, sizeof(res));
    eb_error *err = NULL;
    eb_exec_request req = {.language = "sh", .code = "true", .stdin_data = "x", .stdin_len = 1};
    if (eb_runtime_execute(e->rt, NULL, &req, &res, &err) < 0)
      failures++;
    eb_error_free(err);
    eb_exec_result_clear(&res);
  }
  int na = eb_test_list_fds(after, MAX_FDS);
  if (failures != 10)
    _exit(2);
  if (na != nb) {
    fprintf(stderr, "fork failures: %d fds before 10 failed executions, %d after\n", nb, na);
    int shown = 0;
    for (int i = 0; i < na && i < MAX_FDS && shown < 8; i++) {
      int known = 0;
      for (int j = 0; j < nb && j < MAX_FDS; j++)
        known |= before[j] == after[i];
      if (!known) {
        describe_fd(after[i]);
        shown++;
      }
    }
    _exit(1);
  }
  _exit(0);
}

static void test_fork_failure_leaks_nothing(void **state) {
  leak_env *e = *state;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    fork_failure_child(e);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  switch (WEXITSTATUS(status)) {
  case 0: break;
  case 1: fail_msg("a failed fork leaks the parent's ends of the pipes");
  case 2: fail_msg("execute() did not report the failed fork");
  default: fail_msg("could not install the seccomp filter (status %d)", WEXITSTATUS(status));
  }
  assert_tmpdir_empty(e);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_thousand_runs_leave_nothing, setup, teardown),
    cmocka_unit_test_setup_teardown(test_failed_requests_leave_nothing, setup, teardown),
    cmocka_unit_test_setup_teardown(test_compile_errors_leave_nothing, setup, teardown),
    cmocka_unit_test_setup_teardown(test_fork_failure_leaks_nothing, setup, teardown),
};

EB_TEST_MAIN(tests)
