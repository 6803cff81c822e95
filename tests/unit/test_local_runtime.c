/* The local runtime through the public API. */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <execbox/execbox.h>

static int setup(void **state) {
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  if (eb_runtime_new("local", &rt, &err) < 0) {
    fprintf(stderr, "eb_runtime_new(local): %s\n", err->msg);
    eb_error_free(err);
    return -1;
  }
  *state = rt;
  return 0;
}

static int teardown(void **state) {
  eb_runtime_free(*state);
  return 0;
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* Runs req; the execution itself must succeed (whatever the program did). */
static void run_ok(eb_runtime *rt, eb_ctx *ctx, const eb_exec_request *req, eb_exec_result *res) {
  eb_error *err = NULL;
  memset(res, 0, sizeof(*res));
  int r = eb_runtime_execute(rt, ctx, req, res, &err);
  if (r < 0) {
    fail_msg("execute %s `%s` failed: %s (code %d)", req->language, req->code,
             err ? err->msg : "(no error)", err ? err->code : 0);
  }
  assert_null(err);
  /* Buffers always present and NUL-terminated. */
  assert_non_null(res->output);
  assert_non_null(res->stdout_data);
  assert_non_null(res->stderr_data);
  assert_int_equal(res->output[res->output_len], '\0');
  assert_int_equal(res->output_len, res->stdout_len + res->stderr_len);
}

static void run_sh(eb_runtime *rt, const char *code, eb_exec_result *res) {
  eb_exec_request req = {.language = "sh", .code = code};
  run_ok(rt, NULL, &req, res);
}

static void skip_unless(const char *language) {
  char *why = NULL;
  const eb_language *lang = eb_language_find(language);
  assert_non_null(lang);
  if (!eb_language_available(lang, &why)) {
    fprintf(stderr, "skipping: %s\n", why ? why : language);
    free(why);
    skip();
  }
}

static void test_exit_zero(void **state) {
  eb_exec_result res;
  run_sh(*state, "echo hi", &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_int_equal(res.exit_code, 0);
  assert_int_equal(res.signal, 0);
  assert_string_equal(res.stdout_data, "hi\n");
  assert_string_equal(res.output, "hi\n");
  assert_false(res.truncated);
  assert_true(res.duration_ms >= 0);
  assert_true(res.cpu_ms >= 0);
  eb_exec_result_clear(&res);
}

static void test_exit_code_passthrough(void **state) {
  int codes[] = {1, 7, 42, 255};
  for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
    char code[32];
    snprintf(code, sizeof(code), "exit %d", codes[i]);
    eb_exec_result res;
    run_sh(*state, code, &res);
    assert_int_equal(res.status, EB_STATUS_NONZERO_EXIT);
    assert_int_equal(res.exit_code, codes[i]);
    assert_int_equal(res.signal, 0);
    eb_exec_result_clear(&res);
  }
}

static void test_killed_by_signal(void **state) {
  eb_exec_result res;
  run_sh(*state, "kill -9 $$", &res);
  assert_int_equal(res.status, EB_STATUS_KILLED);
  assert_int_equal(res.signal, 9);
  assert_int_equal(res.exit_code, 128 + 9);
  eb_exec_result_clear(&res);
}

static void test_stdout_stderr(void **state) {
  eb_exec_result res;
  run_sh(*state, "echo out; echo err >&2", &res);
  assert_string_equal(res.stdout_data, "out\n");
  assert_string_equal(res.stderr_data, "err\n");
  assert_int_equal(res.output_len, 8);
  assert_non_null(strstr(res.output, "out\n"));
  assert_non_null(strstr(res.output, "err\n"));
  eb_exec_result_clear(&res);
}

static void test_python(void **state) {
  skip_unless("python");
  eb_exec_result res;
  memset(&res, 0, sizeof(res)); /* execute() frees what a result holds */
  eb_error *err = NULL;
  assert_int_equal(eb_execute(*state, NULL, "py", "print(6*7)", &res, &err), 0);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_string_equal(res.stdout_data, "42\n");
  eb_exec_result_clear(&res);
}

static void test_stdin_data(void **state) {
  const char input[] = "hello world\nsecond line\n";
  eb_exec_request req = {.language = "sh",
                         .code = "read first; echo \"got:$first\"; cat",
                         .stdin_data = input,
                         .stdin_len = sizeof(input) - 1};
  eb_exec_result res;
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_string_equal(res.stdout_data, "got:hello world\nsecond line\n");
  eb_exec_result_clear(&res);
}

static void test_stdin_large(void **state) {
  /* Much more than a pipe holds: the supervisor must feed it while it reads output. */
  size_t n = 4u << 20;
  char *input = malloc(n);
  assert_non_null(input);
  memset(input, 'x', n);
  eb_exec_request req = {.language = "sh", .code = "wc -c", .stdin_data = input, .stdin_len = n};
  eb_exec_result res;
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_int_equal(atol(res.stdout_data), (long)n);
  eb_exec_result_clear(&res);
  free(input);
}

static void test_stdin_not_read(void **state) {
  /* The program exits without reading: no SIGPIPE may reach this process. */
  size_t n = 4u << 20;
  char *input = malloc(n);
  assert_non_null(input);
  memset(input, 'y', n);
  eb_exec_request req = {.language = "sh", .code = "exec 0<&-; echo closed", .stdin_data = input,
                         .stdin_len = n};
  eb_exec_result res;
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_string_equal(res.stdout_data, "closed\n");
  eb_exec_result_clear(&res);
  free(input);
}

static void test_no_stdin_is_dev_null(void **state) {
  eb_exec_result res;
  run_sh(*state, "cat; echo \"rc=$?\"", &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_string_equal(res.stdout_data, "rc=0\n");
  eb_exec_result_clear(&res);
}

static void test_env_additions(void **state) {
  const char *env[] = {"FOO=bar", "WITH_EQ=a=b", "EMPTY=", NULL};
  eb_exec_request req = {.language = "sh",
                         .code = "printf '%s|%s|%s|%s' \"$FOO\" \"$WITH_EQ\" \"${EMPTY-unset}\" "
                                 "\"${EB_TEST_HOST_SECRET-unset}\"",
                         .env = env};
  /* The host environment does not leak in. */
  setenv("EB_TEST_HOST_SECRET", "leaked", 1);
  eb_exec_result res;
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_string_equal(res.stdout_data, "bar|a=b||unset");
  eb_exec_result_clear(&res);
}

static void test_env_clean_basics(void **state) {
  eb_exec_result res;
  run_sh(*state, "test \"$HOME\" = \"$(pwd)\" && test \"$TMPDIR\" = \"$HOME\" && echo \"$PATH\"",
         &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_non_null(strstr(res.stdout_data, "/usr/bin"));
  eb_exec_result_clear(&res);
}

static void test_env_invalid_entry(void **state) {
  const char *env[] = {"NOEQUALS", NULL};
  eb_exec_request req = {.language = "sh", .code = "true", .env = env};
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  eb_error *err = NULL;
  assert_true(eb_runtime_execute(*state, NULL, &req, &res, &err) < 0);
  assert_non_null(err);
  assert_int_equal(err->code, EB_ERR_USAGE);
  eb_error_free(err);
  eb_exec_result_clear(&res);
}

static void test_args(void **state) {
  const char *args[] = {"a b", "c", "", "$HOME", NULL};
  eb_exec_request req = {.language = "sh", .code = "echo $#; printf '[%s]' \"$@\"", .args = args};
  eb_exec_result res;
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_string_equal(res.stdout_data, "4\n[a b][c][][$HOME]");
  eb_exec_result_clear(&res);
}

static void test_code_len(void **state) {
  /* code_len counts: the rest of the buffer is not part of the program. */
  const char code[] = "echo one\nexit 3\n";
  eb_exec_request req = {.language = "sh", .code = code, .code_len = 9};
  eb_exec_result res;
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_string_equal(res.stdout_data, "one\n");
  eb_exec_result_clear(&res);
}

static void test_workdir_is_removed(void **state) {
  eb_exec_result res;
  run_sh(*state, "mkdir -p d/e && echo x > d/e/f && ln -s / root-link && chmod 000 d && pwd", &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  char *dir = strdup(res.stdout_data);
  dir[strcspn(dir, "\n")] = '\0';
  assert_true(strlen(dir) > 1);
  struct stat st;
  assert_int_equal(lstat(dir, &st), -1);
  assert_int_equal(errno, ENOENT);
  free(dir);
  eb_exec_result_clear(&res);
}

static void test_c_program(void **state) {
  skip_unless("c");
  eb_exec_result res;
  eb_exec_request req = {.language = "c",
                         .code = "#include <stdio.h>\nint main(void){ printf(\"%d\\n\", 6*7); "
                                 "return 3; }\n"};
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_NONZERO_EXIT);
  assert_int_equal(res.exit_code, 3);
  assert_string_equal(res.stdout_data, "42\n");
  eb_exec_result_clear(&res);
}

static void test_c_compile_error(void **state) {
  skip_unless("c");
  eb_exec_result res;
  eb_exec_request req = {.language = "c",
                         .code = "int main(void) { return undeclared_thing_xyz; }\n"};
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_COMPILE_ERROR);
  assert_int_not_equal(res.exit_code, 0);
  if (strstr(res.output, "undeclared_thing_xyz") == NULL)
    fail_msg("compiler message missing from output: %s", res.output);
  eb_exec_result_clear(&res);
}

static void test_unknown_language(void **state) {
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  eb_error *err = NULL;
  assert_true(eb_execute(*state, NULL, "cobol", "DISPLAY 'HI'.", &res, &err) < 0);
  assert_non_null(err);
  assert_int_equal(err->code, EB_ERR_LANGUAGE_UNKNOWN);
  assert_non_null(strstr(err->msg, "cobol"));
  eb_error_free(err);
  eb_exec_result_clear(&res);
}

static void test_missing_arguments(void **state) {
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  eb_error *err = NULL;
  assert_true(eb_execute(*state, NULL, NULL, "true", &res, &err) < 0);
  assert_int_equal(err->code, EB_ERR_USAGE);
  eb_error_free(err);
  err = NULL;
  assert_true(eb_execute(*state, NULL, "sh", NULL, &res, &err) < 0);
  assert_int_equal(err->code, EB_ERR_USAGE);
  eb_error_free(err);
  err = NULL;
  assert_true(eb_runtime_execute(NULL, NULL, NULL, &res, &err) < 0);
  assert_non_null(err);
  eb_error_free(err);
  eb_exec_result_clear(&res);
}

static void test_unknown_runtime(void **state) {
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  assert_true(eb_runtime_new("no-such-runtime", &rt, &err) < 0);
  assert_int_equal(err->code, EB_ERR_RUNTIME_UNKNOWN);
  assert_null(rt);
  eb_error_free(err);
}

static void expect_refused(eb_runtime *rt, eb_limits limits) {
  eb_exec_request req = {.language = "sh", .code = "true", .limits = limits};
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  eb_error *err = NULL;
  int r = eb_runtime_execute(rt, NULL, &req, &res, &err);
  assert_true(r < 0);
  assert_non_null(err);
  assert_int_equal(err->code, EB_ERR_LIMIT_UNSUPPORTED);
  assert_int_equal(r, -EB_ERR_LIMIT_UNSUPPORTED);
  eb_error_free(err);
  eb_exec_result_clear(&res);
}

static void test_limits_refused(void **state) {
  expect_refused(*state, (eb_limits){.pids = 10});
  expect_refused(*state, (eb_limits){.network = EB_NETWORK_NONE});
  expect_refused(*state, (eb_limits){.tmp_bytes = 1 << 20});
}

static void test_limits_accepted(void **state) {
  /* What local can enforce runs; explicit host network is allowed. */
  eb_exec_request req = {.language = "sh",
                         .code = "true",
                         .limits = {.wall_ms = 5000,
                                    .cpu_ms = 2000,
                                    .memory_bytes = 256LL << 20,
                                    .output_bytes = 1000,
                                    .file_size_bytes = 1 << 20,
                                    .open_files = 64,
                                    .network = EB_NETWORK_HOST}};
  eb_exec_result res;
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  eb_exec_result_clear(&res);
}

static void test_file_size_limit(void **state) {
  eb_exec_request req = {.language = "sh",
                         .code = "head -c 100000 /dev/zero > big; echo \"rc=$?\"; wc -c < big",
                         .limits = {.file_size_bytes = 4096}};
  eb_exec_result res;
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_null(strstr(res.stdout_data, "rc=0"));
  assert_non_null(strstr(res.stdout_data, "4096"));
  eb_exec_result_clear(&res);
}

static void test_wall_timeout(void **state) {
  eb_exec_request req = {.language = "sh", .code = "echo started; sleep 30",
                         .limits = {.wall_ms = 300}};
  eb_exec_result res;
  int64_t start = eb_now_ns();
  run_ok(*state, NULL, &req, &res);
  int64_t ms = (eb_now_ns() - start) / 1000000;
  print_message("timeout after %lld ms\n", (long long)ms);
  assert_int_equal(res.status, EB_STATUS_TIMEOUT);
  assert_string_equal(res.stdout_data, "started\n");
  assert_true(ms < 10000);
  eb_exec_result_clear(&res);
}

static void test_ctx_deadline_is_timeout(void **state) {
  eb_ctx *ctx = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_ctx_new(NULL, 300, &ctx, &err), 0);
  eb_exec_request req = {.language = "sh", .code = "sleep 30", .limits = {.wall_ms = 60000}};
  eb_exec_result res;
  int64_t start = eb_now_ns();
  run_ok(*state, ctx, &req, &res);
  int64_t ms = (eb_now_ns() - start) / 1000000;
  assert_int_equal(res.status, EB_STATUS_TIMEOUT);
  assert_true(ms < 10000);
  eb_exec_result_clear(&res);
  eb_ctx_free(ctx);
}

static void test_output_limit(void **state) {
  eb_exec_request req = {.language = "sh", .code = "yes 0123456789", .limits = {.output_bytes = 1000}};
  eb_exec_result res;
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_OUTPUT_LIMIT);
  assert_true(res.truncated);
  assert_int_equal(res.output_len, 1000);
  assert_int_equal(res.stdout_len, 1000);
  assert_memory_equal(res.output, "0123456789\n0123456789\n", 22);
  eb_exec_result_clear(&res);
}

typedef struct canceller {
  eb_ctx *ctx;
  int delay_ms;
} canceller;

static void *cancel_later(void *arg) {
  canceller *c = arg;
  usleep((useconds_t)c->delay_ms * 1000);
  eb_ctx_cancel(c->ctx);
  return NULL;
}

static void test_cancel_from_thread(void **state) {
  eb_ctx *parent = NULL, *ctx = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_ctx_new(NULL, 0, &parent, &err), 0);
  assert_int_equal(eb_ctx_new(parent, 60000, &ctx, &err), 0);
  canceller c = {.ctx = parent, .delay_ms = 100}; /* the parent: reaches the child */
  pthread_t th;
  int64_t start = eb_now_ns();
  assert_int_equal(pthread_create(&th, NULL, cancel_later, &c), 0);
  eb_exec_request req = {.language = "sh", .code = "sleep 30"};
  eb_exec_result res;
  run_ok(*state, ctx, &req, &res);
  int64_t ms = (eb_now_ns() - start) / 1000000;
  pthread_join(th, NULL);
  print_message("cancelled `sleep 30` returned after %lld ms (cancel sent at 100 ms)\n",
                (long long)ms);
  assert_int_equal(res.status, EB_STATUS_CANCELLED);
  assert_true(ms < 10000); /* not a benchmark: only "it did not run its course" */
  eb_exec_result_clear(&res);
  eb_ctx_free(ctx);
  eb_ctx_free(parent);
}

/* Runs `sleep 2; echo ran > marker` under ctx and limits; a stopped program
 * never writes the marker. Returns the result's status. */
static eb_status run_marker_program(eb_runtime *rt, eb_ctx *ctx, int64_t wall_ms, int *ran) {
  char *dir = eb_test_mkdtemp("eb-marker");
  char *env_marker = NULL;
  assert_true(asprintf(&env_marker, "MARKER=%s/ran", dir) > 0);
  const char *env[] = {env_marker, NULL};
  eb_exec_request req = {.language = "sh", .code = "sleep 2; echo ran > \"$MARKER\"", .env = env,
                         .limits = {.wall_ms = wall_ms}};
  eb_exec_result res;
  int64_t start = eb_now_ns();
  run_ok(rt, ctx, &req, &res);
  print_message("returned after %lld ms with status %s\n",
                (long long)((eb_now_ns() - start) / 1000000), eb_status_name(res.status));
  eb_status status = res.status;
  *ran = eb_test_dir_entries(dir) > 0;
  eb_exec_result_clear(&res);
  eb_test_rmtree(dir);
  free(dir);
  free(env_marker);
  return status;
}

/* The stop must not depend on winning a race against the child's start: try
 * a few times (each try that goes right takes milliseconds). */
#define MARKER_TRIES 5

static void test_precancelled_ctx_does_not_run_program(void **state) {
  /* A context already cancelled when execute() starts: the program must not
   * run to completion (nor for its default 30 s wall time). */
  for (int i = 0; i < MARKER_TRIES; i++) {
    eb_ctx *ctx = NULL;
    eb_error *err = NULL;
    assert_int_equal(eb_ctx_new(NULL, 0, &ctx, &err), 0);
    eb_ctx_cancel(ctx);
    int ran = 0;
    eb_status status = run_marker_program(*state, ctx, 0, &ran);
    eb_ctx_free(ctx);
    assert_int_equal(status, EB_STATUS_CANCELLED);
    if (ran)
      fail_msg("try %d: the program of a cancelled context ran to completion (it wrote its marker)",
               i + 1);
  }
}

static void test_expired_ctx_does_not_run_program(void **state) {
  /* A context whose deadline has passed, and a 500 ms wall limit: either must stop it. */
  for (int i = 0; i < MARKER_TRIES; i++) {
    eb_ctx *ctx = NULL;
    eb_error *err = NULL;
    assert_int_equal(eb_ctx_new(NULL, 1, &ctx, &err), 0);
    usleep(20 * 1000);
    int ran = 0;
    eb_status status = run_marker_program(*state, ctx, 500, &ran);
    eb_ctx_free(ctx);
    assert_int_equal(status, EB_STATUS_TIMEOUT);
    if (ran)
      fail_msg("try %d: the program ran to completion past its deadline and its 500 ms wall limit",
               i + 1);
  }
}

static void test_leftover_processes_killed(void **state) {
  char code[128], needle[64];
  snprintf(needle, sizeof(needle), "sleep 1000.%d1", (int)getpid());
  snprintf(code, sizeof(code), "%s & echo started", needle);
  eb_exec_result res;
  run_sh(*state, code, &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_string_equal(res.stdout_data, "started\n");
  eb_exec_result_clear(&res);
  /* SIGKILL was sent before execute() returned; give the kernel a moment to finish it. */
  int pids[8], n = 0;
  for (int i = 0; i < 100; i++) {
    n = eb_test_find_cmdline(needle, pids, 8);
    if (n == 0)
      break;
    usleep(20 * 1000);
  }
  if (n > 0) {
    for (int i = 0; i < n && i < 8; i++)
      kill(pids[i], SIGKILL);
    fail_msg("`%s` left behind by the program still runs (pid %d)", needle, pids[0]);
  }
}

static void test_output_exactly_at_cap(void **state) {
  eb_exec_request req = {.language = "sh", .code = "head -c 1000 /dev/zero | tr '\\000' a",
                         .limits = {.output_bytes = 1000}};
  eb_exec_result res;
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_false(res.truncated);
  assert_int_equal(res.output_len, 1000);
  eb_exec_result_clear(&res);

  req.code = "head -c 1001 /dev/zero | tr '\\000' a";
  run_ok(*state, NULL, &req, &res);
  assert_int_equal(res.status, EB_STATUS_OUTPUT_LIMIT);
  assert_true(res.truncated);
  assert_int_equal(res.output_len, 1000);
  eb_exec_result_clear(&res);
}

static void test_output_interleaved_in_arrival_order(void **state) {
  /* Pauses between the writes so that each arrives on its own. */
  eb_exec_result res;
  run_sh(*state, "echo 1; sleep 0.1; echo 2 >&2; sleep 0.1; echo 3; sleep 0.1; echo 4 >&2", &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_string_equal(res.output, "1\n2\n3\n4\n");
  assert_string_equal(res.stdout_data, "1\n3\n");
  assert_string_equal(res.stderr_data, "2\n4\n");
  eb_exec_result_clear(&res);
}

static void test_no_host_fd_reaches_program(void **state) {
  int leaked = open("/dev/null", O_RDONLY); /* deliberately without O_CLOEXEC */
  assert_true(leaked >= 0);
  int high = dup2(leaked, 77);
  assert_int_equal(high, 77);
  eb_exec_result res;
  /* ls lists 0-2 and the fd it reads the directory with. */
  run_sh(*state, "ls /proc/self/fd | sort -n | tr '\\n' ' '", &res);
  close(leaked);
  close(high);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_string_equal(res.stdout_data, "0 1 2 3 ");
  eb_exec_result_clear(&res);
}

typedef struct worker {
  eb_runtime *rt;
  int id;
  int failures;
  char why[256];
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  for (int i = 0; i < 25 && w->failures == 0; i++) {
    char code[128], want_out[64], want_err[64], input[32];
    snprintf(code, sizeof(code), "read x; echo \"out-$x\"; echo \"err-$x\" >&2; exit %d", w->id);
    snprintf(input, sizeof(input), "%d-%d\n", w->id, i);
    snprintf(want_out, sizeof(want_out), "out-%d-%d\n", w->id, i);
    snprintf(want_err, sizeof(want_err), "err-%d-%d\n", w->id, i);
    eb_exec_request req = {.language = "sh", .code = code, .stdin_data = input,
                           .stdin_len = strlen(input)};
    eb_exec_result res;
    memset(&res, 0, sizeof(res));
    eb_error *err = NULL;
    if (eb_runtime_execute(w->rt, NULL, &req, &res, &err) < 0) {
      snprintf(w->why, sizeof(w->why), "run %d: %s", i, err->msg);
      w->failures++;
    } else if (res.exit_code != w->id || strcmp(res.stdout_data, want_out) != 0 ||
               strcmp(res.stderr_data, want_err) != 0) {
      snprintf(w->why, sizeof(w->why), "run %d: exit %d, stdout `%s`, stderr `%s`", i,
               res.exit_code, res.stdout_data, res.stderr_data);
      w->failures++;
    }
    eb_error_free(err);
    eb_exec_result_clear(&res);
  }
  return NULL;
}

static void test_concurrent_executions(void **state) {
  /* One runtime shared by threads: no crosstalk between their executions. */
  worker w[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){.rt = *state, .id = i + 1};
    assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++)
    if (w[i].failures > 0)
      fail_msg("thread %d: %s", w[i].id, w[i].why);
}

typedef struct async_run {
  eb_runtime *rt;
  eb_exec_request req;
  eb_exec_result res;
  int rc;
  char why[256];
} async_run;

static void *async_run_main(void *arg) {
  async_run *a = arg;
  eb_error *err = NULL;
  memset(&a->res, 0, sizeof(a->res));
  a->rc = eb_runtime_execute(a->rt, NULL, &a->req, &a->res, &err);
  if (a->rc < 0)
    snprintf(a->why, sizeof(a->why), "%s", err->msg);
  eb_error_free(err);
  return NULL;
}

static void test_concurrent_compile_holds_no_foreign_pipe(void **state) {
  /* Execution B feeds 1 MiB to `wc -c`. Meanwhile execution A compiles C,
   * and its compiler is kept waiting (it reads an #include from a FIFO the
   * test controls). A's waiting process must not hold B's pipes: B's
   * program must see the end of its input and finish. */
  skip_unless("c");
  char *dir = eb_test_mkdtemp("eb-fifo");
  char *fifo = NULL, *code_a = NULL;
  assert_true(asprintf(&fifo, "%s/fifo", dir) > 0);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  assert_true(asprintf(&code_a, "#include \"%s\"\n", fifo) > 0);

  size_t n = 1u << 20;
  char *input = malloc(n);
  assert_non_null(input);
  memset(input, 'b', n);
  async_run b = {.rt = *state,
                 .req = {.language = "sh", .code = "sleep 1; wc -c", .stdin_data = input,
                         .stdin_len = n, .limits = {.wall_ms = 5000}}};
  async_run a = {.rt = *state, .req = {.language = "c", .code = code_a,
                                       .limits = {.wall_ms = 30000}}};
  pthread_t tb, ta;
  assert_int_equal(pthread_create(&tb, NULL, async_run_main, &b), 0);
  usleep(200 * 1000); /* B is running, its supervisor still writing stdin */
  assert_int_equal(pthread_create(&ta, NULL, async_run_main, &a), 0);

  /* Wait until A's compiler has the FIFO open (then A has forked). */
  int wfd = -1;
  for (int i = 0; i < 500 && wfd < 0; i++) {
    wfd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (wfd < 0)
      usleep(10 * 1000);
  }
  if (wfd < 0)
    print_message("the compiler never opened the FIFO; the race was not set up\n");

  pthread_join(tb, NULL);
  /* Release A. */
  if (wfd >= 0) {
    const char main_fn[] = "int main(void) { return 0; }\n";
    assert_int_equal(write(wfd, main_fn, sizeof(main_fn) - 1), (ssize_t)sizeof(main_fn) - 1);
    close(wfd);
  }
  pthread_join(ta, NULL);
  free(input);
  free(code_a);
  unlink(fifo);
  free(fifo);
  eb_test_rmtree(dir);
  free(dir);

  eb_status a_status = a.res.status, b_status = b.res.status;
  long b_count = b.rc == 0 ? atol(b.res.stdout_data) : -1;
  print_message("B: status %s after %lld ms, stdout `%s`\n", eb_status_name(b_status),
                (long long)b.res.duration_ms, b.rc == 0 ? b.res.stdout_data : "");
  eb_exec_result_clear(&a.res);
  eb_exec_result_clear(&b.res);
  if (a.rc < 0)
    fail_msg("A failed: %s", a.why);
  if (b.rc < 0)
    fail_msg("B failed: %s", b.why);
  if (b_status != EB_STATUS_OK)
    fail_msg("B's program never saw the end of its stdin while A compiled (status %s): A's "
             "compile-step process holds B's stdin pipe",
             eb_status_name(b_status));
  assert_int_equal(b_count, (long)n);
  assert_int_equal(a_status, EB_STATUS_OK);
}

/* In a child process: as an unprivileged user, runs a program that takes
 * every permission away from its own work dir. Exit 0: cleaned up; 1: the
 * execution failed; 2: the work dir was left behind; 3: setup failed. */
static void unprivileged_chmod_child(const char *tmpdir) {
  if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0))
    _exit(3);
  setenv("TMPDIR", tmpdir, 1);
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  if (eb_runtime_new("local", &rt, &err) < 0)
    _exit(3);
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  int r = eb_execute(rt, NULL, "sh", "mkdir sub && chmod 0 sub && chmod 0 . && echo done", &res,
                     &err);
  if (r < 0) {
    fprintf(stderr, "execution failed: %s\n", err->msg);
    _exit(1);
  }
  if (eb_test_dir_entries(tmpdir) != 0) {
    fprintf(stderr, "work dir left behind in %s\n", tmpdir);
    _exit(2);
  }
  _exit(0);
}

static void test_workdir_removed_after_chmod_unprivileged(void **state) {
  /* A program may chmod its work dir to 0; execbox must still remove it,
   * and report the program's result, also when it runs unprivileged. */
  char *tmpdir = eb_test_mkdtemp("eb-chmod");
  if (geteuid() == 0)
    assert_int_equal(chown(tmpdir, 65534, 65534), 0);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    unprivileged_chmod_child(tmpdir);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  /* Clean up as root whatever is left (chmod back first). */
  char *cmd = NULL;
  assert_true(asprintf(&cmd, "chmod -R u+rwx '%s' 2>/dev/null; rm -rf '%s'", tmpdir, tmpdir) > 0);
  if (system(cmd) != 0) { /* best effort */ }
  free(cmd);
  free(tmpdir);
  assert_true(WIFEXITED(status));
  switch (WEXITSTATUS(status)) {
  case 0: break;
  case 1: fail_msg("`chmod 0 .` in the program made the execution fail (see stderr)");
  case 2: fail_msg("`chmod 0 .` in the program left its work dir behind");
  default: fail_msg("could not become an unprivileged user");
  }
}

static void test_duration_measured(void **state) {
  eb_exec_result res;
  run_sh(*state, "sleep 0.2", &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  assert_true(res.duration_ms >= 150);
  eb_exec_result_clear(&res);
}

static void test_result_cleared_before_use(void **state) {
  /* eb_runtime_execute clears a result that still holds a previous run's buffers. */
  eb_exec_result res;
  run_sh(*state, "echo first", &res);
  eb_error *err = NULL;
  eb_exec_request req = {.language = "sh", .code = "echo second"};
  assert_int_equal(eb_runtime_execute(*state, NULL, &req, &res, &err), 0);
  assert_string_equal(res.stdout_data, "second\n");
  eb_exec_result_clear(&res);
}

static void test_probe(void **state) {
  char *detail = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_runtime_probe(*state, &detail, &err), 0);
  assert_non_null(detail);
  free(detail);
  eb_runtime *rt = *state;
  assert_string_equal(rt->ops->name, "local");
}

/* Limits no runtime can express are refused before any runtime sees them
 * (a product that would wrap to 0 would read as "no limit"). */
static void test_limits_out_of_range(void **state) {
  const eb_limits bad[] = {
      {.cpu_milli = 288230376151711744LL}, {.cpu_milli = EB_MAX_CPU_MILLI + 1},
      {.pids = EB_MAX_PIDS + 1},           {.wall_ms = EB_MAX_WALL_MS + 1},
      {.memory_bytes = -1},                {.cpu_milli = -5},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    eb_exec_request req = {.language = "sh", .code = "true", .limits = bad[i]};
    eb_exec_result res = {0};
    eb_error *err = NULL;
    assert_true(eb_runtime_execute(*state, NULL, &req, &res, &err) < 0);
    assert_int_equal(err->code, EB_ERR_USAGE);
    eb_error_free(err);
  }
}

static const struct CMUnitTest tests[] = {
    TEST(test_limits_out_of_range),
    TEST(test_exit_zero),
    TEST(test_exit_code_passthrough),
    TEST(test_killed_by_signal),
    TEST(test_stdout_stderr),
    TEST(test_python),
    TEST(test_stdin_data),
    TEST(test_stdin_large),
    TEST(test_stdin_not_read),
    TEST(test_no_stdin_is_dev_null),
    TEST(test_env_additions),
    TEST(test_env_clean_basics),
    TEST(test_env_invalid_entry),
    TEST(test_args),
    TEST(test_code_len),
    TEST(test_workdir_is_removed),
    TEST(test_c_program),
    TEST(test_c_compile_error),
    TEST(test_unknown_language),
    TEST(test_missing_arguments),
    TEST(test_unknown_runtime),
    TEST(test_limits_refused),
    TEST(test_limits_accepted),
    TEST(test_file_size_limit),
    TEST(test_wall_timeout),
    TEST(test_ctx_deadline_is_timeout),
    TEST(test_output_limit),
    TEST(test_cancel_from_thread),
    TEST(test_precancelled_ctx_does_not_run_program),
    TEST(test_expired_ctx_does_not_run_program),
    TEST(test_leftover_processes_killed),
    TEST(test_output_exactly_at_cap),
    TEST(test_output_interleaved_in_arrival_order),
    TEST(test_no_host_fd_reaches_program),
    TEST(test_concurrent_executions),
    TEST(test_concurrent_compile_holds_no_foreign_pipe),
    TEST(test_workdir_removed_after_chmod_unprivileged),
    TEST(test_duration_measured),
    TEST(test_result_cleared_before_use),
    TEST(test_probe),
};

EB_TEST_MAIN(tests)
