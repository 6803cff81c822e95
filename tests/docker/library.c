/* The docker runtime through the library, against a real daemon: deadlines
 * and cancellation that land before the program runs, concurrent
 * executions sharing one runtime and its warm pool, and cleanup when the
 * runtime is freed. Exit 77 (skip) without a daemon or the test image,
 * unless EXECBOX_REQUIRE_DOCKER=1. Leftover containers are checked by the
 * calling ctest through `docker ps` (see CMakeLists.txt). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <execbox/execbox.h>

static int failures;

#define CHECK(cond, ...)                                                                          \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                        \
      fprintf(stderr, __VA_ARGS__);                                                               \
      fputc('\n', stderr);                                                                        \
      failures++;                                                                                 \
    }                                                                                             \
  } while (0)

static const char *image(void) {
  const char *i = getenv("EXECBOX_TEST_IMAGE");
  return i && i[0] ? i : "execbox-test-python:bookworm";
}

static eb_runtime *make_runtime(int pool, int mode) {
  eb_docker_options o;
  eb_docker_options_init(&o);
  o.image = image();
  o.pool_size = pool;
  o.pool_mode = mode;
  o.pull = 0;
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  if (eb_docker_runtime_new(&o, &rt, &err) < 0) {
    fprintf(stderr, "docker runtime: %s\n", err->msg);
    exit(1);
  }
  return rt;
}

/* A deadline shorter than a container's start: a timeout result, not an
 * error, and (checked by the caller) nothing left behind. */
static void deadline_before_the_program(eb_runtime *rt) {
  eb_ctx *ctx = NULL;
  eb_error *err = NULL;
  eb_ctx_new(NULL, 30, &ctx, &err);
  eb_exec_result res = {0};
  int r = eb_execute(rt, ctx, "python", "print(1)", &res, &err);
  CHECK(r == 0, "deadline: error %s", err ? err->msg : "?");
  CHECK(r != 0 || res.status == EB_STATUS_TIMEOUT, "deadline: status %s",
        eb_status_name(res.status));
  eb_exec_result_clear(&res);
  eb_error_free(err);
  eb_ctx_free(ctx);
}

typedef struct cancel_job {
  eb_runtime *rt;
  eb_ctx *ctx;
  int ret;
  eb_exec_result res;
} cancel_job;

static void *cancel_worker(void *arg) {
  cancel_job *j = arg;
  eb_error *err = NULL;
  j->ret = eb_execute(j->rt, j->ctx, "sh", "echo started; sleep 60", &j->res, &err);
  if (j->ret < 0)
    fprintf(stderr, "cancel: %s\n", err->msg);
  eb_error_free(err);
  return NULL;
}

/* Cancelled at several points: during create/attach/start, and running. */
static void cancel_anywhere(eb_runtime *rt) {
  const long delays_ms[] = {1, 20, 60, 150, 800};
  for (size_t i = 0; i < sizeof(delays_ms) / sizeof(delays_ms[0]); i++) {
    cancel_job j = {.rt = rt};
    eb_ctx_new(NULL, 0, &j.ctx, NULL);
    pthread_t t;
    pthread_create(&t, NULL, cancel_worker, &j);
    struct timespec ts = {0, delays_ms[i] * 1000000L};
    nanosleep(&ts, NULL);
    int64_t t0 = eb_now_ns();
    eb_ctx_cancel(j.ctx);
    pthread_join(t, NULL);
    int64_t ms = (eb_now_ns() - t0) / 1000000;
    CHECK(j.ret == 0 && j.res.status == EB_STATUS_CANCELLED, "cancel after %ld ms: ret %d status %s",
          delays_ms[i], j.ret, eb_status_name(j.res.status));
    CHECK(ms < 2000, "cancel after %ld ms took %lld ms to return", delays_ms[i], (long long)ms);
    eb_exec_result_clear(&j.res);
    eb_ctx_free(j.ctx);
  }
}

typedef struct par_job {
  eb_runtime *rt;
  int index, ok;
} par_job;

static void *par_worker(void *arg) {
  par_job *j = arg;
  for (int k = 0; k < 3; k++) {
    char code[128], want[64];
    snprintf(code, sizeof(code), "import sys; print(%d * 1000 + %d); sys.exit(%d)", j->index, k,
             j->index);
    snprintf(want, sizeof(want), "%d\n", j->index * 1000 + k);
    eb_exec_result res = {0};
    eb_error *err = NULL;
    if (eb_execute(j->rt, NULL, "python", code, &res, &err) == 0 && res.exit_code == j->index &&
        strcmp(res.stdout_data, want) == 0)
      j->ok++;
    else
      fprintf(stderr, "parallel %d/%d: %s %s\n", j->index, k, err ? err->msg : "",
              res.output ? res.output : "");
    eb_exec_result_clear(&res);
    eb_error_free(err);
  }
  return NULL;
}

/* Four threads, three executions each, one runtime: every result is its
 * own request's. */
static void parallel(eb_runtime *rt, const char *what) {
  par_job jobs[4];
  pthread_t t[4];
  for (int i = 0; i < 4; i++) {
    jobs[i] = (par_job){.rt = rt, .index = i + 1};
    pthread_create(&t[i], NULL, par_worker, &jobs[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(t[i], NULL);
    CHECK(jobs[i].ok == 3, "%s: thread %d: %d of 3 right", what, i + 1, jobs[i].ok);
  }
}

int main(void) {
  eb_runtime *probe_rt = make_runtime(0, 0);
  char *detail = NULL;
  eb_error *err = NULL;
  const char *require = getenv("EXECBOX_REQUIRE_DOCKER");
  bool required = require != NULL && strcmp(require, "1") == 0;
  if (eb_runtime_probe(probe_rt, &detail, &err) < 0 || strstr(detail, "NOT PRESENT") != NULL) {
    fprintf(stderr, "docker runtime unusable: %s\n", err ? err->msg : detail);
    return required ? 1 : 77;
  }
  free(detail);

  deadline_before_the_program(probe_rt);
  cancel_anywhere(probe_rt);
  parallel(probe_rt, "cold");
  eb_runtime_free(probe_rt);

  for (int mode = EB_DOCKER_POOL_CREATED; mode <= EB_DOCKER_POOL_STARTED; mode++) {
    eb_runtime *rt = make_runtime(3, mode);
    const char *what = mode == EB_DOCKER_POOL_CREATED ? "pool created" : "pool started";
    parallel(rt, what);
    cancel_anywhere(rt);
    deadline_before_the_program(rt);
    eb_runtime_free(rt); /* removes the pool's containers before returning */
  }
  if (failures > 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("docker library: ok\n");
  return 0;
}
