/* Per-execution cost of execbox's runtimes against a bare spawn of the same
 * program (and, optionally, bubblewrap), measured in one run with the cases
 * interleaved round-robin so that machine noise hits all of them alike.
 * Prints medians and ratios; never a pass/fail verdict. */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <time.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <execbox/execbox.h>

#include "bench_common.h"

extern char **environ;

typedef struct bench_case {
  const char *label;
  const char *runtime;      /* NULL: bare spawn of argv */
  const char *language;     /* for runtime cases */
  const char *code;
  const char *const *argv;  /* for bare cases */
  eb_runtime *rt;
  double *samples;
  int failures;
} bench_case;

static int run_bare(const char *const *argv) {
  char path[256];
  return spawn_quiet(resolve(argv[0], path, sizeof(path)), (char *const *)argv, false);
}

static int run_case(bench_case *c) {
  if (c->runtime == NULL)
    return run_bare(c->argv);
  eb_exec_result res = {0};
  eb_error *err = NULL;
  int r = eb_execute(c->rt, NULL, c->language, c->code, &res, &err);
  if (r < 0) {
    fprintf(stderr, "bench: %s: %s\n", c->label, err->msg);
    eb_error_free(err);
    return -1;
  }
  r = res.status == EB_STATUS_OK ? 0 : -1;
  eb_exec_result_clear(&res);
  return r;
}

/* Cancellation latency: time from eb_ctx_cancel() to eb_runtime_execute()
 * returning, for a program that would otherwise sleep 30 s. */
typedef struct cancel_job {
  eb_runtime *rt;
  eb_ctx *ctx;
  double returned_ms;
  int status;
} cancel_job;

static void *cancel_worker(void *arg) {
  cancel_job *j = arg;
  eb_exec_result res = {0};
  eb_error *err = NULL;
  j->status = -1;
  if (eb_execute(j->rt, j->ctx, "sh", "sleep 30\n", &res, &err) == 0)
    j->status = (int)res.status;
  j->returned_ms = now_ms();
  eb_exec_result_clear(&res);
  eb_error_free(err);
  return NULL;
}

static void bench_cancel(eb_runtime *rt, const char *name, int runs) {
  double *lat = calloc((size_t)runs, sizeof(double));
  int bad = 0;
  for (int i = 0; i < runs; i++) {
    cancel_job j = {.rt = rt};
    eb_error *err = NULL;
    if (eb_ctx_new(NULL, 0, &j.ctx, &err) < 0) {
      eb_error_free(err);
      bad++;
      continue;
    }
    pthread_t t;
    pthread_create(&t, NULL, cancel_worker, &j);
    struct timespec wait = {0, 100 * 1000000L}; /* let it start */
    nanosleep(&wait, NULL);
    double t0 = now_ms();
    eb_ctx_cancel(j.ctx);
    pthread_join(t, NULL);
    lat[i] = j.returned_ms - t0;
    if (j.status != EB_STATUS_CANCELLED)
      bad++;
    eb_ctx_free(j.ctx);
  }
  double med = median(lat, runs), max = lat[runs - 1];
  printf("| %s cancel -> return | %.3f | %.3f | %d |\n", name, med, max, bad);
  free(lat);
}

/* Throughput of `sh true` with 1, 2, 4 and 8 threads sharing one runtime. */
static int bench_throughput(const char *runtime, double seconds) {
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  if (eb_runtime_new(runtime, &rt, &err) < 0) {
    fprintf(stderr, "bench: %s\n", err->msg);
    return 125;
  }
  printf("| %s concurrency | executions/s | failures |\n|---|---|---|\n", runtime);
  int fail = 0;
  for (int c = 1; c <= 8; c *= 2) {
    long failed = 0;
    double rate = throughput_at(rt, "sh", "true\n", c, seconds, &failed);
    printf("| %d | %.0f | %ld |\n", c, rate, failed);
    fail |= failed > 0;
  }
  eb_runtime_free(rt);
  return fail ? 1 : 0;
}

static const char *const bwrap_sh[] = {BWRAP_PREFIX, "sh", "-c", "true", NULL};
static const char *const bwrap_py[] = {BWRAP_PREFIX, "python3", "-c", "pass", NULL};

int main(int argc, char **argv) {
  int runs = 300;
  const char *runtimes = "local";
  int with_bwrap = 0;
  const char *throughput = NULL;
  static const struct option opts[] = {{"runs", required_argument, NULL, 'n'},
                                       {"throughput", required_argument, NULL, 't'},
                                       {"runtimes", required_argument, NULL, 'r'},
                                       {"bwrap", no_argument, NULL, 'b'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int o;
  while ((o = getopt_long(argc, argv, "n:r:bt:h", opts, NULL)) != -1) {
    switch (o) {
    case 'n': runs = atoi(optarg); break;
    case 'r': runtimes = optarg; break;
    case 'b': with_bwrap = 1; break;
    case 't': throughput = optarg; break;
    case 'h':
      printf("usage: bench_runtime [--runs N] [--runtimes local,jail] [--bwrap]\n"
             "       bench_runtime --throughput RUNTIME   executions/s at concurrency 1, 2, 4, 8\n"
             "Times one execution of `sh -c true` and `python3 -c pass` through each runtime\n"
             "against a bare spawn of the same program (and bubblewrap with --bwrap);\n"
             "prints medians and ratios.\n");
      return 0;
    default: return 64;
    }
  }
  if (throughput != NULL)
    return bench_throughput(throughput, 3.0);
  if (runs < 5) {
    fprintf(stderr, "bench: --runs must be at least 5\n");
    return 64;
  }

  bench_case cases[16];
  int n = 0;
  static const char *const sh_argv[] = {"sh", "-c", "true", NULL};
  static const char *const py_argv[] = {"python3", "-c", "pass", NULL};
  cases[n++] = (bench_case){.label = "bare sh -c true", .argv = sh_argv};
  cases[n++] = (bench_case){.label = "bare python3 -c pass", .argv = py_argv};
  if (with_bwrap) {
    cases[n++] = (bench_case){.label = "bwrap sh -c true", .argv = bwrap_sh};
    cases[n++] = (bench_case){.label = "bwrap python3 -c pass",
                              .argv = bwrap_py};
  }
  char *list = strdup(runtimes);
  for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && n < 14;
       tok = strtok_r(NULL, ",", &save)) {
    eb_runtime *rt = NULL;
    eb_error *err = NULL;
    if (eb_runtime_new(tok, &rt, &err) < 0) {
      fprintf(stderr, "bench: %s\n", err->msg);
      return 125;
    }
    char *l1 = NULL, *l2 = NULL;
    if (asprintf(&l1, "%s sh true", tok) < 0 || asprintf(&l2, "%s python pass", tok) < 0)
      return 125;
    cases[n++] = (bench_case){.label = l1, .runtime = tok, .language = "sh", .code = "true\n", .rt = rt};
    cases[n++] = (bench_case){.label = l2, .runtime = tok, .language = "python", .code = "pass\n", .rt = rt};
  }
  for (int i = 0; i < n; i++) {
    cases[i].samples = calloc((size_t)runs, sizeof(double));
    if (run_case(&cases[i]) < 0) /* warm-up; also checks the case works */
      cases[i].failures++;
  }
  for (int r = 0; r < runs; r++) {
    for (int i = 0; i < n; i++) {
      double t0 = now_ms();
      if (run_case(&cases[i]) < 0)
        cases[i].failures++;
      cases[i].samples[r] = now_ms() - t0;
    }
    if ((r + 1) % 50 == 0)
      fprintf(stderr, "bench: %d/%d rounds\n", r + 1, runs);
  }
  double med[16];
  for (int i = 0; i < n; i++)
    med[i] = median(cases[i].samples, runs);
  printf("runs per case: %d (interleaved)\n\n", runs);
  printf("| case | median ms | ratio to bare | overhead ms | failures |\n|---|---|---|---|---|\n");
  for (int i = 0; i < n; i++) {
    /* The bare baseline of the same program: even index 0 = sh, 1 = python. */
    int is_py = strstr(cases[i].label, "python") != NULL;
    double base = med[is_py ? 1 : 0];
    printf("| %s | %.3f | %.2fx | %.3f | %d |\n", cases[i].label, med[i], med[i] / base,
           med[i] - base, cases[i].failures);
  }
  printf("\n| cancellation | median ms | max ms | not cancelled |\n|---|---|---|---|\n");
  for (int i = 0; i < n; i++)
    if (cases[i].rt != NULL && (i == 0 || cases[i - 1].rt != cases[i].rt))
      bench_cancel(cases[i].rt, cases[i].runtime, 20);
  if (with_bwrap) {
    for (int i = 4; i < n; i++) {
      int is_py = strstr(cases[i].label, "python") != NULL;
      double base = med[is_py ? 1 : 0], bw = med[is_py ? 3 : 2];
      printf("\n%s: overhead over bare spawn is %.2fx bubblewrap's (%.3f ms vs %.3f ms)",
             cases[i].label, (med[i] - base) / (bw - base), med[i] - base, bw - base);
    }
    printf("\n");
  }
  int fail = 0;
  for (int i = 0; i < n; i++) {
    fail |= cases[i].failures > 0;
    /* Each runtime appears in two cases (sh, python); free it once. */
    if (cases[i].rt != NULL && (i + 1 >= n || cases[i + 1].rt != cases[i].rt))
      eb_runtime_free(cases[i].rt);
    free(cases[i].samples);
  }
  free(list);
  return fail ? 1 : 0;
}
