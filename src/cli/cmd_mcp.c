/* execbox mcp: the MCP server over stdio (one JSON-RPC message per line). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <execbox/mcp.h>

#include "cli/cli.h"
#include "server/mcp_http.h"

static void mcp_usage(FILE *f) {
  fputs("usage: execbox mcp [OPTIONS]\n"
        "\n"
        "Serves the execute_code tool over the Model Context Protocol on stdin/stdout\n"
        "(newline-delimited JSON-RPC); logs go to stderr. See docs/mcp.md for client\n"
        "configuration.\n"
        "\n"
        "options:\n"
        "  -r, --runtime NAME       sandbox runtime (default $SANDBOX_ENV, else jail)\n"
        "  -t, --timeout DURATION   wall-clock limit of each execution (default 30s)\n"
        "  -m, --memory SIZE        memory limit of each execution\n"
        "      --output-limit SIZE  output returned per call (default 16K, head and tail kept)\n"
        "      --max-concurrent N   executions at once (default 4)\n"
        "      --no-pool            no warm sandboxes (EXECBOX_POOL sets how many, default 4)\n"
        "      --http ADDR:PORT     serve Streamable HTTP at http://ADDR:PORT/mcp instead\n"
        "                           (loopback only unless you bind another address)\n"
        "  -h, --help               show this help\n",
        f);
}

/* SIGTERM, SIGINT, SIGHUP: stop reading and shut down cleanly (running
 * code killed, cgroups removed) instead of dying mid-flight; clients stop
 * stdio servers this way. */
static volatile sig_atomic_t stop_signal;
static void on_stop(int sig) { stop_signal = sig; }

static void send_line(void *user, const char *message, const char *related, bool final) {
  (void)user;
  (void)related;
  (void)final;
  if (message == NULL)
    return; /* a cancelled call: nothing to send */
  /* One message per line: the JSON text has no raw newlines. */
  fputs(message, stdout);
  fputc('\n', stdout);
  fflush(stdout);
}

int cmd_mcp(int argc, char **argv) {
  static const struct option opts[] = {
      {"runtime", required_argument, NULL, 'r'},      {"timeout", required_argument, NULL, 't'},
      {"memory", required_argument, NULL, 'm'},       {"output-limit", required_argument, NULL, 'O'},
      {"max-concurrent", required_argument, NULL, 'C'}, {"help", no_argument, NULL, 'h'},
      {"http", required_argument, NULL, 'H'},         {"no-pool", no_argument, NULL, 'P'},
      {NULL, 0, NULL, 0}};
  eb_mcp_options o;
  memset(&o, 0, sizeof(o));
  const char *runtime = NULL, *http = NULL;
  bool no_pool = false;
  int64_t output_limit = 0;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "r:t:m:h", opts, NULL)) != -1) {
    switch (c) {
    case 'r': runtime = optarg; break;
    case 't':
      if (cli_parse_duration_ms(optarg, &o.limits.wall_ms) < 0) {
        cli_errorf("invalid --timeout `%s`", optarg);
        return CLI_EXIT_USAGE;
      }
      break;
    case 'm':
      if (cli_parse_size(optarg, &o.limits.memory_bytes) < 0) {
        cli_errorf("invalid --memory `%s`", optarg);
        return CLI_EXIT_USAGE;
      }
      break;
    case 'O':
      if (cli_parse_size(optarg, &output_limit) < 0) {
        cli_errorf("invalid --output-limit `%s`", optarg);
        return CLI_EXIT_USAGE;
      }
      o.output_cap = (size_t)output_limit;
      break;
    case 'C': {
      char *end = NULL;
      long v = strtol(optarg, &end, 10);
      if (end == optarg || *end != '\0' || v < 1 || v > 256) {
        cli_errorf("invalid --max-concurrent `%s` (1 to 256)", optarg);
        return CLI_EXIT_USAGE;
      }
      o.max_concurrent = (int)v;
      break;
    }
    case 'H': http = optarg; break;
    case 'P': no_pool = true; break;
    case 'h': mcp_usage(stdout); return 0;
    default: mcp_usage(stderr); return CLI_EXIT_USAGE;
    }
  }
  if (optind < argc) {
    cli_errorf("unexpected argument `%s` (see `execbox mcp --help`)", argv[optind]);
    return CLI_EXIT_USAGE;
  }
  /* A client that goes away must not kill us with SIGPIPE mid-write. */
  signal(SIGPIPE, SIG_IGN);
  eb_error *err = NULL;
  eb_runtime *rt = NULL;
  eb_mcp *mcp = NULL;
  if (eb_runtime_new(runtime, &rt, &err) < 0) {
    cli_errorf("%s", err->msg);
    eb_error_free(err);
    return CLI_EXIT_USAGE;
  }
  o.runtime = rt;
  if (cli_start_pool(rt, no_pool) != 0) {
    eb_runtime_free(rt);
    return CLI_EXIT_USAGE;
  }
  if (http != NULL) {
    int status = mcp_http_serve(http, &o);
    eb_runtime_free(rt);
    return status;
  }
  if (eb_mcp_new(&o, send_line, NULL, &mcp, &err) < 0) {
    cli_errorf("%s", err->msg);
    eb_error_free(err);
    eb_runtime_free(rt);
    return CLI_EXIT_FAILURE;
  }
  fprintf(stderr, "execbox: MCP server on stdio (runtime %s)\n", rt->ops->name);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_stop; /* no SA_RESTART: the blocked read returns */
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  /* Lines are read with a bound: an endless line must not fill memory.
   * The core refuses oversized messages; past the bound the rest of the
   * line is skipped and one oversized message stands for it. */
  size_t max = 4u << 20, cap = 64 * 1024, n = 0;
  char *line = malloc(cap + 1);
  bool overflow = false;
  int ch;
  while (line != NULL && !stop_signal && (ch = getchar()) != EOF) {
    if (ch != '\n') {
      if (n < max + 1) {
        if (n == cap) {
          char *bigger = realloc(line, cap * 2 + 1);
          if (bigger == NULL)
            break;
          line = bigger;
          cap *= 2;
        }
        line[n++] = (char)ch;
      } else {
        overflow = true;
      }
      continue;
    }
    while (n > 0 && line[n - 1] == '\r')
      n--;
    if (n > 0 || overflow)
      eb_mcp_handle(mcp, line, overflow ? max + 1 : n); /* > max: refused as too large */
    n = 0;
    overflow = false;
  }
  /* End of input or a stop signal: the client is gone. Running code is
   * killed. */
  free(line);
  if (stop_signal)
    fprintf(stderr, "execbox: stopping (signal %d)\n", (int)stop_signal);
  eb_mcp_free(mcp);
  eb_runtime_free(rt);
  return 0;
}
