/* One execution through the docker runtime — cold, and with each kind of
 * warm pool — against the docker CLI doing the same
 * (`docker run --rm --network none --memory 128m IMAGE python3 -c
 * 'print(1+1)'`), measured in one run with the cases interleaved
 * round-robin. Prints medians and ratios to the CLI; never a verdict.
 *
 * After every execution the bench waits (--settle, default 500 ms) before
 * the next one, so that what a case leaves to do in the background — the
 * pool refilling, the daemon cleaning up, removals — never lands inside
 * another case's measurement. That is also how an agent uses a sandbox:
 * between two executions there is a model call. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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

typedef struct bench_case {
  const char *label;
  eb_runtime *rt; /* NULL: the docker CLI */
  double *samples;
  int failures;
} bench_case;

static const char *docker_cli = "docker";
static const char *image = "execbox-test-python:bookworm";

static int run_cli(void) {
  char *argv[] = {(char *)docker_cli, "run", "--rm", "--network", "none", "--memory", "128m",
                  (char *)image, "python3", "-c", "print(1+1)", NULL};
  return spawn_quiet(docker_cli, argv, true);
}

static int run_case(bench_case *c) {
  if (c->rt == NULL)
    return run_cli();
  eb_exec_result res = {0};
  eb_error *err = NULL;
  int r = eb_execute(c->rt, NULL, "python", "print(1+1)\n", &res, &err);
  if (r < 0) {
    fprintf(stderr, "bench: %s: %s\n", c->label, err->msg);
    eb_error_free(err);
    return -1;
  }
  r = res.status == EB_STATUS_OK && strcmp(res.stdout_data, "2\n") == 0 ? 0 : -1;
  if (r < 0)
    fprintf(stderr, "bench: %s: status %s, output %s\n", c->label, eb_status_name(res.status),
            res.output);
  eb_exec_result_clear(&res);
  return r;
}

static void settle(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static eb_runtime *docker_runtime(int pool, int mode) {
  eb_docker_options o;
  eb_docker_options_init(&o);
  o.image = image;
  o.pool_size = pool;
  o.pool_mode = mode;
  o.pull = 0;
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  if (eb_docker_runtime_new(&o, &rt, &err) < 0) {
    fprintf(stderr, "bench: %s\n", err->msg);
    exit(125);
  }
  return rt;
}

int main(int argc, char **argv) {
  int runs = 30, settle_ms = 500;
  static const struct option opts[] = {{"runs", required_argument, NULL, 'n'},
                                       {"image", required_argument, NULL, 'i'},
                                       {"docker", required_argument, NULL, 'd'},
                                       {"settle", required_argument, NULL, 's'},
                                       {"help", no_argument, NULL, 'h'},
                                       {NULL, 0, NULL, 0}};
  int o;
  while ((o = getopt_long(argc, argv, "n:i:d:s:h", opts, NULL)) != -1) {
    switch (o) {
    case 'n': runs = atoi(optarg); break;
    case 'i': image = optarg; break;
    case 'd': docker_cli = optarg; break;
    case 's': settle_ms = atoi(optarg); break;
    case 'h':
      printf("usage: bench_docker [--runs N] [--image IMAGE] [--docker CLI] [--settle MS]\n"
             "Times `docker run --rm --network none --memory 128m IMAGE python3 -c "
             "'print(1+1)'`\nagainst the same through the docker runtime: cold, with a pool of "
             "created\ncontainers, with a pool of started ones. Prints medians and ratios.\n");
      return 0;
    default: return 64;
    }
  }
  if (runs < 3 || settle_ms < 0) {
    fprintf(stderr, "bench: --runs must be at least 3\n");
    return 64;
  }
  bench_case cases[] = {
      {.label = "docker CLI `docker run --rm --network none --memory 128m`"},
      {.label = "execbox docker, cold", .rt = docker_runtime(0, EB_DOCKER_POOL_CREATED)},
      {.label = "execbox docker, pool of created containers",
       .rt = docker_runtime(2, EB_DOCKER_POOL_CREATED)},
      {.label = "execbox docker, pool of started containers",
       .rt = docker_runtime(2, EB_DOCKER_POOL_STARTED)},
  };
  int n = (int)(sizeof(cases) / sizeof(cases[0]));
  for (int i = 0; i < n; i++) {
    cases[i].samples = calloc((size_t)runs, sizeof(double));
    /* Warm-up: checks the case works and registers the pools' kinds. */
    if (run_case(&cases[i]) < 0)
      cases[i].failures++;
    settle(2000);
  }
  for (int r = 0; r < runs; r++) {
    for (int i = 0; i < n; i++) {
      double t0 = now_ms();
      if (run_case(&cases[i]) < 0)
        cases[i].failures++;
      cases[i].samples[r] = now_ms() - t0;
      settle(settle_ms);
    }
    if ((r + 1) % 10 == 0)
      fprintf(stderr, "bench: %d/%d rounds\n", r + 1, runs);
  }
  double med[8];
  for (int i = 0; i < n; i++)
    med[i] = median(cases[i].samples, runs);
  printf("image %s, %d runs per case (interleaved, %d ms settle)\n\n", image, runs, settle_ms);
  printf("| case | median ms | min ms | max ms | ratio to the CLI | failures |\n"
         "|---|---|---|---|---|---|\n");
  int fail = 0;
  for (int i = 0; i < n; i++) {
    printf("| %s | %.1f | %.1f | %.1f | %.2fx | %d |\n", cases[i].label, med[i],
           cases[i].samples[0], cases[i].samples[runs - 1], med[i] / med[0], cases[i].failures);
    fail |= cases[i].failures > 0;
  }
  printf("\npool of created containers saves %.1f ms per execution over cold (%.0f%%); "
         "pool of started ones saves %.1f ms (%.0f%%)\n",
         med[1] - med[2], 100 * (med[1] - med[2]) / med[1], med[1] - med[3],
         100 * (med[1] - med[3]) / med[1]);
  for (int i = 0; i < n; i++) {
    eb_runtime_free(cases[i].rt);
    free(cases[i].samples);
  }
  return fail ? 1 : 0;
}
