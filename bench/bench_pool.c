/* Warm sandboxes against cold ones and against the alternatives, in one
 * run with the cases interleaved round-robin so that machine noise hits
 * all of them alike. Prints medians, overheads and ratios; never a
 * pass/fail verdict.
 *
 *   jail overhead with the pool: pooled `sh -c true` minus a bare spawn of it
 *   execute_code: JSON {"language":"python","code":"print(1+1)"} in, JSON
 *     result out, through the library, against a bare cold
 *     `python3 -c 'print(1+1)'`
 *   throughput: trivial jailed executions per second, threads sharing one
 *     pooled runtime
 *   bubblewrap and `docker run` running the same python, for comparison */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <execbox/execbox.h>

#include "bench_common.h"

extern char **environ;

/* Spawns argv with stdout on a pipe, reads it all, waits. */
static int run_bare(const char *const *argv) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0)
    return -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], 1);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  char path[256];
  pid_t pid;
  int r = posix_spawn(&pid, resolve(argv[0], path, sizeof(path)), &fa, NULL,
                      (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  if (r != 0) {
    close(p[0]);
    return -1;
  }
  char buf[4096];
  while (read(p[0], buf, sizeof(buf)) > 0)
    ;
  close(p[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

typedef enum { BARE, EXEC, TOOL } case_kind;

typedef struct bench_case {
  const char *label;
  case_kind kind;
  const char *const *argv; /* BARE */
  eb_runtime *rt;          /* EXEC */
  eb_tool *tool;           /* TOOL */
  eb_runtime *tool_rt;     /* the tool's runtime */
  const char *language, *code;
  int every;               /* run on every Nth round only (slow cases) */
  double *samples;
  int n, failures;
} bench_case;

static int run_case(bench_case *c) {
  if (c->kind == BARE)
    return run_bare(c->argv);
  eb_error *err = NULL;
  int r;
  if (c->kind == EXEC) {
    eb_exec_result res = {0};
    r = eb_execute(c->rt, NULL, c->language, c->code, &res, &err);
    if (r == 0 && res.status != EB_STATUS_OK)
      r = -1;
    eb_exec_result_clear(&res);
  } else {
    char *out = NULL;
    r = c->tool->ops->execute(c->tool, NULL,
                              "{\"language\":\"python\",\"code\":\"print(1+1)\"}", &out, &err);
    if (r == 0 && (out == NULL || strstr(out, "\"output\":\"2\\n\"") == NULL))
      r = -1;
    free(out);
  }
  if (err != NULL) {
    fprintf(stderr, "bench: %s: %s\n", c->label, err->msg);
    eb_error_free(err);
  }
  return r;
}

static eb_runtime *jail_runtime(bool pool, int size) {
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  if (eb_runtime_new("jail", &rt, &err) < 0) {
    fprintf(stderr, "bench: %s\n", err->msg);
    exit(125);
  }
  if (pool) {
    const char *prewarm[] = {"python", "sh", NULL};
    eb_pool_options o = {.size = size, .prewarm = prewarm, .wait = true};
    if (eb_runtime_enable_pool(rt, &o, &err) < 0) {
      fprintf(stderr, "bench: %s\n", err->msg);
      exit(125);
    }
  }
  return rt;
}

static void throughput(eb_runtime *rt, const char *label, const char *language, const char *code,
                       double seconds) {
  for (int c = 1; c <= 8; c *= 2) {
    long failed = 0;
    double rate = throughput_at(rt, language, code, c, seconds, &failed);
    printf("| %s | %d | %.0f | %ld |\n", label, c, rate, failed);
  }
}

int main(int argc, char **argv) {
  int runs = 200, docker_runs = 20, pool_size = 4;
  double tp_seconds = 3.0;
  bool with_bwrap = false;
  const char *docker_image = NULL;
  static const struct option opts[] = {
      {"runs", required_argument, NULL, 'n'},  {"docker", required_argument, NULL, 'd'},
      {"docker-runs", required_argument, NULL, 'D'}, {"bwrap", no_argument, NULL, 'b'},
      {"pool", required_argument, NULL, 'p'},  {"seconds", required_argument, NULL, 's'},
      {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
  int o;
  while ((o = getopt_long(argc, argv, "n:d:D:bp:s:h", opts, NULL)) != -1) {
    switch (o) {
    case 'n': runs = atoi(optarg); break;
    case 'd': docker_image = optarg; break;
    case 'D': docker_runs = atoi(optarg); break;
    case 'b': with_bwrap = true; break;
    case 'p': pool_size = atoi(optarg); break;
    case 's': tp_seconds = atof(optarg); break;
    case 'h':
      printf("usage: bench_pool [--runs N] [--pool SIZE] [--seconds S] [--bwrap]\n"
             "                  [--docker IMAGE [--docker-runs N]]\n"
             "Warm jail sandboxes against cold ones, a bare spawn, bubblewrap and docker run:\n"
             "overhead, execute_code latency and throughput. Prints Markdown tables.\n");
      return 0;
    default: return 64;
    }
  }
  if (runs < 5 || pool_size < 1 || pool_size > EB_MAX_POOL_SIZE || docker_runs < 1) {
    fprintf(stderr, "bench: --runs >= 5, --pool 1..%d, --docker-runs >= 1\n", EB_MAX_POOL_SIZE);
    return 64;
  }

  eb_runtime *cold = jail_runtime(false, 0), *warm = jail_runtime(true, pool_size);
  eb_tool *tool_cold = NULL, *tool_warm = NULL;
  eb_error *err = NULL;
  eb_execute_code_options no_pool = {.no_pool = true};
  if (eb_execute_code_tool_new(cold, &no_pool, &tool_cold, &err) < 0 ||
      eb_execute_code_tool_new(warm, NULL, &tool_warm, &err) < 0) {
    fprintf(stderr, "bench: %s\n", err->msg);
    return 125;
  }
  static const char *const sh_argv[] = {"sh", "-c", "true", NULL};
  static const char *const py_argv[] = {"python3", "-c", "print(1+1)", NULL};
  static const char *const bwrap_py[] = {BWRAP_PREFIX, "python3", "-c", "print(1+1)", NULL};
  const char *docker_argv[] = {"docker", "run", "--rm", "--network", "none", "--memory", "128m",
                               docker_image, "python3", "-c", "print(1+1)", NULL};
  bench_case cases[12];
  int n = 0;
  cases[n++] = (bench_case){.label = "bare sh -c true", .kind = BARE, .argv = sh_argv};
  cases[n++] = (bench_case){.label = "jail cold: sh", .kind = EXEC, .rt = cold,
                            .language = "sh", .code = "true\n"};
  cases[n++] = (bench_case){.label = "jail pool: sh", .kind = EXEC, .rt = warm,
                            .language = "sh", .code = "true\n"};
  cases[n++] = (bench_case){.label = "bare python3 -c 'print(1+1)'", .kind = BARE,
                            .argv = py_argv};
  cases[n++] = (bench_case){.label = "jail cold: python print(1+1)", .kind = EXEC, .rt = cold,
                            .language = "python", .code = "print(1+1)\n"};
  cases[n++] = (bench_case){.label = "jail pool: python print(1+1)", .kind = EXEC, .rt = warm,
                            .language = "python", .code = "print(1+1)\n"};
  cases[n++] = (bench_case){.label = "execute_code cold (JSON in/out)", .kind = TOOL,
                            .tool = tool_cold, .tool_rt = cold};
  cases[n++] = (bench_case){.label = "execute_code pool (JSON in/out)", .kind = TOOL,
                            .tool = tool_warm, .tool_rt = warm};
  if (with_bwrap)
    cases[n++] = (bench_case){.label = "bwrap python3 -c 'print(1+1)'", .kind = BARE,
                              .argv = bwrap_py};
  if (docker_image != NULL)
    cases[n++] = (bench_case){.label = "docker run --rm --network none --memory 128m",
                              .kind = BARE, .argv = docker_argv,
                              .every = runs / docker_runs > 0 ? runs / docker_runs : 1};
  for (int i = 0; i < n; i++)
    cases[i].samples = calloc((size_t)runs, sizeof(double));

  /* Warm-up: page cache, the pool's first builds. */
  for (int i = 0; i < n; i++)
    if (cases[i].every == 0)
      for (int k = 0; k < 3; k++)
        run_case(&cases[i]);
  for (int r = 0; r < runs; r++)
    for (int i = 0; i < n; i++) {
      bench_case *c = &cases[i];
      if (c->every > 1 && r % c->every != 0)
        continue;
      /* A pooled case is timed with its pool refilled, as an agent calling
       * now and then finds it: what a burst costs is the throughput below. */
      eb_runtime *pooled = c->kind == EXEC ? c->rt : c->kind == TOOL ? c->tool_rt : NULL;
      eb_pool_stats st;
      for (int w = 0; w < 250 && pooled != NULL && eb_runtime_pool_stats(pooled, &st) == 0 &&
                      st.ready < 2 * pool_size;
           w++) {
        struct timespec ms = {0, 2000000};
        nanosleep(&ms, NULL);
      }
      double t0 = now_ms();
      if (run_case(c) < 0)
        c->failures++;
      c->samples[c->n++] = now_ms() - t0;
    }

  double med[12];
  printf("| case | median ms | runs | failures |\n|---|---|---|---|\n");
  for (int i = 0; i < n; i++) {
    med[i] = median(cases[i].samples, cases[i].n);
    printf("| %s | %.3f | %d | %d |\n", cases[i].label, med[i], cases[i].n, cases[i].failures);
  }
  printf("\n| figure | value | goal |\n|---|---|---|\n");
  printf("| jail overhead over a bare spawn, sh, with the pool | %.3f ms | <= 1 ms |\n",
         med[2] - med[0]);
  printf("| jail overhead over a bare spawn, sh, cold | %.3f ms | |\n", med[1] - med[0]);
  printf("| jail pool python / bare cold python | %.3fx | |\n", med[5] / med[3]);
  printf("| execute_code (pool) / bare cold python3 -c 'print(1+1)' | %.3fx | <= 0.2x |\n",
         med[7] / med[3]);
  printf("| execute_code (cold jail) / bare cold python | %.3fx | |\n", med[6] / med[3]);
  for (int i = 8; i < n; i++)
    printf("| execute_code (pool) / %s | %.3fx | |\n", cases[i].label, med[7] / med[i]);

  printf("\n| runtime, program | concurrency | executions/s | failures |\n|---|---|---|---|\n");
  throughput(warm, "jail pool, sh true", "sh", "true\n", tp_seconds);
  throughput(warm, "jail pool, python pass", "python", "pass\n", tp_seconds);
  throughput(cold, "jail cold, sh true", "sh", "true\n", tp_seconds);
  eb_pool_stats st;
  if (eb_runtime_pool_stats(warm, &st) == 0)
    printf("\npool: %llu hits (%llu fast path), %llu misses, %llu built, %llu failed, "
           "%llu discarded\n",
           (unsigned long long)st.hits, (unsigned long long)st.fast,
           (unsigned long long)st.misses, (unsigned long long)st.built,
           (unsigned long long)st.failed, (unsigned long long)st.discarded);
  eb_tool_free(tool_cold);
  eb_tool_free(tool_warm);
  eb_runtime_free(cold);
  eb_runtime_free(warm);
  for (int i = 0; i < n; i++)
    free(cases[i].samples);
  return 0;
}
