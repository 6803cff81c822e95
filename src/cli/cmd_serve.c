/* execbox serve: the HTTP execution service. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/fsutil.h"
#include "server/service.h"

static void serve_usage(FILE *f) {
  fputs("usage: execbox serve [OPTIONS]\n"
        "\n"
        "Runs code for remote clients over HTTP (see docs/server.md):\n"
        "  POST /v1/execute, GET /v1/languages, GET /healthz, GET /metrics\n"
        "\n"
        "options:\n"
        "  -l, --listen ADDR:PORT   address to bind (default 127.0.0.1:8080)\n"
        "      --token-file FILE    bearer token clients must send (or EXECBOX_TOKEN)\n"
        "  -r, --runtime NAME       sandbox runtime (default $SANDBOX_ENV, else jail)\n"
        "      --max-concurrent N   executions at once (default: number of CPUs)\n"
        "      --max-queue N        requests waiting for a slot before 429 (default 4 x slots)\n"
        "      --max-body SIZE      largest request body (default 2M)\n"
        "      --max-timeout DURATION  longest wall limit a request may ask for (default 5m)\n"
        "      --max-memory SIZE    largest memory limit a request may ask for (default 2G)\n"
        "      --max-pids N         largest process limit a request may ask for (default 1024;\n"
        "                           CPU limits may not exceed this host's CPUs)\n"
        "      --no-pool            no warm sandboxes (EXECBOX_POOL sets how many, default 4)\n"
        "  -h, --help               show this help\n"
        "\n"
        "A non-loopback address needs a token. SIGTERM stops accepting, finishes what\n"
        "runs, then exits.\n",
        f);
}

int cmd_serve(int argc, char **argv) {
  static const struct option opts[] = {
      {"listen", required_argument, NULL, 'l'},        {"token-file", required_argument, NULL, 'T'},
      {"runtime", required_argument, NULL, 'r'},       {"max-concurrent", required_argument, NULL, 'C'},
      {"max-queue", required_argument, NULL, 'Q'},     {"max-body", required_argument, NULL, 'B'},
      {"max-timeout", required_argument, NULL, 'W'},   {"max-memory", required_argument, NULL, 'M'},
      {"help", no_argument, NULL, 'h'},                {"no-pool", no_argument, NULL, 'P'},
      {"max-pids", required_argument, NULL, 'p'},
      {NULL, 0, NULL, 0}};
  bool no_pool = false;
  const char *listen = "127.0.0.1:8080", *token_file = NULL, *runtime = NULL;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  eb_service_options o = {.max_concurrent = cpus > 0 ? (int)cpus : 2, .max_queue = -1,
                          .max_body_bytes = 2u << 20,
                          .max_limits = {.wall_ms = 5 * 60 * 1000, .memory_bytes = 2LL << 30,
                                         .output_bytes = 16LL << 20, .pids = 1024,
                                         .cpu_milli = (cpus > 0 ? cpus : 1) * 1000LL}};
  int64_t v64;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "l:r:h", opts, NULL)) != -1) {
    char *end = NULL;
    long v;
    switch (c) {
    case 'l': listen = optarg; break;
    case 'T': token_file = optarg; break;
    case 'r': runtime = optarg; break;
    case 'p':
      v = strtol(optarg, &end, 10);
      if (end == optarg || *end != '\0' || v < 1 || v > EB_MAX_PIDS) {
        cli_errorf("invalid --max-pids `%s`", optarg);
        return CLI_EXIT_USAGE;
      }
      o.max_limits.pids = v;
      break;
    case 'C':
    case 'Q':
      v = strtol(optarg, &end, 10);
      if (end == optarg || *end != '\0' || v < (c == 'C' ? 1 : 0) || v > 4096) {
        cli_errorf("invalid --%s `%s`", c == 'C' ? "max-concurrent" : "max-queue", optarg);
        return CLI_EXIT_USAGE;
      }
      if (c == 'C')
        o.max_concurrent = (int)v;
      else
        o.max_queue = (int)v;
      break;
    case 'B':
      if (cli_parse_size(optarg, &v64) < 0) {
        cli_errorf("invalid --max-body `%s`", optarg);
        return CLI_EXIT_USAGE;
      }
      o.max_body_bytes = (size_t)v64;
      break;
    case 'W':
      if (cli_parse_duration_ms(optarg, &o.max_limits.wall_ms) < 0) {
        cli_errorf("invalid --max-timeout `%s`", optarg);
        return CLI_EXIT_USAGE;
      }
      break;
    case 'M':
      if (cli_parse_size(optarg, &o.max_limits.memory_bytes) < 0) {
        cli_errorf("invalid --max-memory `%s`", optarg);
        return CLI_EXIT_USAGE;
      }
      break;
    case 'P': no_pool = true; break;
    case 'h': serve_usage(stdout); return 0;
    default: serve_usage(stderr); return CLI_EXIT_USAGE;
    }
  }
  if (o.max_queue < 0)
    o.max_queue = 4 * o.max_concurrent;
  char host[64];
  const char *colon = strrchr(listen, ':');
  char *end = NULL;
  long port = colon ? strtol(colon + 1, &end, 10) : -1;
  if (colon == NULL || (size_t)(colon - listen) >= sizeof(host) || end == colon + 1 || *end != '\0' ||
      port < 0 || port > 65535) {
    cli_errorf("--listen `%s` is not ADDR:PORT", listen);
    return CLI_EXIT_USAGE;
  }
  snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
  o.host = host;
  o.port = (int)port;

  char *token = NULL;
  size_t token_len = 0;
  eb_error *err = NULL;
  if (token_file != NULL) {
    if (eb_read_file(token_file, &token, &token_len, 4096, &err) < 0) {
      cli_errorf("--token-file: %s", err->msg);
      eb_error_free(err);
      return CLI_EXIT_USAGE;
    }
    while (token_len > 0 && (token[token_len - 1] == '\n' || token[token_len - 1] == '\r'))
      token[--token_len] = '\0';
  } else if (getenv("EXECBOX_TOKEN") != NULL && getenv("EXECBOX_TOKEN")[0] != '\0') {
    token = strdup(getenv("EXECBOX_TOKEN"));
  }
  if (token != NULL && token[0] == '\0') {
    free(token);
    token = NULL;
  }
  bool loopback = strncmp(host, "127.", 4) == 0;
  if (token == NULL && !loopback) {
    cli_errorf("serving on %s without a token would let anyone there run code: set "
               "--token-file or EXECBOX_TOKEN", host);
    return CLI_EXIT_USAGE;
  }
  o.token = token;
  eb_runtime *rt = NULL;
  if (eb_runtime_new(runtime, &rt, &err) < 0) {
    cli_errorf("%s", err->msg);
    eb_error_free(err);
    free(token);
    return CLI_EXIT_USAGE;
  }
  o.runtime = rt;
  if (cli_start_pool(rt, no_pool) != 0) {
    eb_runtime_free(rt);
    free(token);
    return CLI_EXIT_USAGE;
  }
  int status = eb_service_run(&o);
  eb_runtime_free(rt);
  free(token);
  return status;
}
