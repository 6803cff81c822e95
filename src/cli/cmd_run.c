/* execbox run: run code and pass its output and exit status through. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/fsutil.h"

#define MAX_CODE_BYTES (16u << 20)
#define MAX_STDIN_BYTES (64u << 20)
#define MAX_ENV 64

static eb_ctx *volatile run_ctx;
static volatile sig_atomic_t run_signal;

static void on_signal(int sig) {
  run_signal = sig;
  if (run_ctx != NULL)
    eb_ctx_cancel(run_ctx);
}

static void run_usage(FILE *f) {
  fputs("usage: execbox run [OPTIONS] -c CODE [--] [ARGS...]\n"
        "       execbox run [OPTIONS] FILE|- [--] [ARGS...]\n"
        "\n"
        "Runs code in a sandbox and passes its output and exit status through.\n"
        "The code comes from -c, from FILE (language inferred from its extension),\n"
        "or from standard input with `-`.\n"
        "\n"
        "options:\n"
        "  -l, --language LANG     python, javascript, bash, sh, c (or an alias: py, js, node, shell)\n"
        "  -c, --code CODE         the code to run\n"
        "      --stdin FILE        feed FILE to the program's standard input (default: /dev/null)\n"
        "  -t, --timeout DURATION  wall-clock limit: 10, 2.5s, 500ms, 1m (default 30s)\n"
        "      --cpu DURATION      CPU-time limit\n"
        "  -m, --memory SIZE       memory limit: 256M, 1G\n"
        "      --output-limit SIZE cap on captured output; past it the program is killed (default 1M)\n"
        "      --pids N            process limit\n"
        "      --tmp-size SIZE     size of /tmp and the work dir\n"
        "      --network MODE      none or host\n"
        "  -e, --env NAME=VALUE    add an environment variable (repeatable)\n"
        "  -r, --runtime NAME      jail, local, docker, remote (default: $SANDBOX_ENV, else ",
        f);
  fputs(eb_runtime_resolve_name(NULL), f);
  fputs(")\n"
        "      --pull              docker runtime: pull the language's image if it is missing\n"
        "      --json              print the whole result as one JSON object\n"
        "  -h, --help              show this help\n"
        "\n"
        "exit status: the program's own; 124 timeout; 125 execbox or sandbox failure;\n"
        "127 language not available; 128+N killed by signal N; 130 interrupted; 64 usage error.\n"
        "\n"
        "A one-shot run builds its sandbox cold. EXECBOX_POOL=N runs it in a warm\n"
        "sandbox of the pool instead, built first (the path `ask`, `mcp` and `serve` use).\n",
        f);
}

static int usage_error(const char *fmt, ...) EB_PRINTF(1, 2);
static int usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("execbox: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs(" (see `execbox run --help`)\n", stderr);
  va_end(ap);
  return CLI_EXIT_USAGE;
}

static void report_status(const eb_exec_result *res, const eb_exec_request *req) {
  eb_limits l = req->limits;
  eb_limits_apply_defaults(&l);
  switch (res->status) {
  case EB_STATUS_TIMEOUT:
    cli_errorf("timed out after %.1f s; the program was killed", (double)res->duration_ms / 1000.0);
    break;
  case EB_STATUS_OUTPUT_LIMIT:
    cli_errorf("output limit of %lld bytes reached; the program was killed", (long long)l.output_bytes);
    break;
  case EB_STATUS_MEMORY_LIMIT:
    cli_errorf("memory limit of %lld bytes reached; the program was killed", (long long)l.memory_bytes);
    break;
  case EB_STATUS_KILLED: cli_errorf("the program was killed by signal %d (%s)", res->signal, strsignal(res->signal)); break;
  case EB_STATUS_CANCELLED: cli_errorf("cancelled; the program was killed"); break;
  case EB_STATUS_COMPILE_ERROR: cli_errorf("compilation failed (exit %d)", res->exit_code); break;
  case EB_STATUS_SANDBOX_ERROR: cli_errorf("the sandbox failed while running the program"); break;
  default: break;
  }
}

int cmd_run(int argc, char **argv) {
  static const struct option opts[] = {
      {"language", required_argument, NULL, 'l'}, {"code", required_argument, NULL, 'c'},
      {"stdin", required_argument, NULL, 'S'},    {"timeout", required_argument, NULL, 't'},
      {"cpu", required_argument, NULL, 'C'},      {"memory", required_argument, NULL, 'm'},
      {"output-limit", required_argument, NULL, 'O'}, {"pids", required_argument, NULL, 'P'},
      {"tmp-size", required_argument, NULL, 'T'}, {"network", required_argument, NULL, 'N'},
      {"env", required_argument, NULL, 'e'},      {"runtime", required_argument, NULL, 'r'},
      {"json", no_argument, NULL, 'j'},           {"help", no_argument, NULL, 'h'},
      {"pull", no_argument, NULL, 'p'},
      {NULL, 0, NULL, 0}};
  const char *language = NULL, *code_arg = NULL, *stdin_path = NULL, *runtime_name = NULL;
  const char *env[MAX_ENV + 1] = {NULL};
  size_t n_env = 0;
  bool json = false, pull = false;
  eb_exec_request req;
  memset(&req, 0, sizeof(req));

  optind = 1;
  int c;
  /* "+": stop at the first operand so program args after FILE are left alone. */
  while ((c = getopt_long(argc, argv, "+l:c:t:m:e:r:h", opts, NULL)) != -1) {
    switch (c) {
    case 'l': language = optarg; break;
    case 'c': code_arg = optarg; break;
    case 'S': stdin_path = optarg; break;
    case 't':
      if (cli_parse_duration_ms(optarg, &req.limits.wall_ms) < 0)
        return usage_error("invalid --timeout `%s`", optarg);
      break;
    case 'C':
      if (cli_parse_duration_ms(optarg, &req.limits.cpu_ms) < 0)
        return usage_error("invalid --cpu `%s`", optarg);
      break;
    case 'm':
      if (cli_parse_size(optarg, &req.limits.memory_bytes) < 0)
        return usage_error("invalid --memory `%s`", optarg);
      break;
    case 'O':
      if (cli_parse_size(optarg, &req.limits.output_bytes) < 0)
        return usage_error("invalid --output-limit `%s`", optarg);
      break;
    case 'T':
      if (cli_parse_size(optarg, &req.limits.tmp_bytes) < 0)
        return usage_error("invalid --tmp-size `%s`", optarg);
      break;
    case 'P': {
      char *end = NULL;
      long long v = strtoll(optarg, &end, 10);
      if (end == optarg || *end != '\0' || v < 1 || v > 1000000)
        return usage_error("invalid --pids `%s`", optarg);
      req.limits.pids = v;
      break;
    }
    case 'N':
      if (strcmp(optarg, "none") == 0)
        req.limits.network = EB_NETWORK_NONE;
      else if (strcmp(optarg, "host") == 0)
        req.limits.network = EB_NETWORK_HOST;
      else
        return usage_error("invalid --network `%s` (none or host)", optarg);
      break;
    case 'e':
      if (n_env >= MAX_ENV)
        return usage_error("too many --env options");
      if (strchr(optarg, '=') == NULL || optarg[0] == '=')
        return usage_error("--env `%s` is not NAME=VALUE", optarg);
      env[n_env++] = optarg;
      break;
    case 'r': runtime_name = optarg; break;
    case 'j': json = true; break;
    case 'p': pull = true; break;
    case 'h': run_usage(stdout); return 0;
    default: run_usage(stderr); return CLI_EXIT_USAGE;
    }
  }

  /* With -c every operand is an argument for the program; otherwise the
   * first one is FILE (or `-`). getopt may already have eaten a `--`. */
  const char *file = NULL;
  if (code_arg == NULL && optind < argc && strcmp(argv[optind], "--") != 0)
    file = argv[optind++];
  if (optind < argc && strcmp(argv[optind], "--") == 0)
    optind++;
  req.args = (const char *const *)(argv + optind);
  req.env = n_env > 0 ? env : NULL;

  if (code_arg == NULL && file == NULL)
    return usage_error("no code: use -c CODE, FILE or `-` for stdin");
  if (language == NULL && file != NULL && strcmp(file, "-") != 0) {
    const eb_language *lang = eb_language_for_path(file);
    if (lang == NULL)
      return usage_error("cannot infer the language of `%s`; use --language", file);
    language = eb_language_name(lang);
  }
  if (language == NULL)
    return usage_error("no language: use --language");
  if (file != NULL && stdin_path != NULL && strcmp(file, "-") == 0 && strcmp(stdin_path, "-") == 0)
    return usage_error("code and --stdin cannot both come from standard input");
  if (pull && strcmp(eb_runtime_resolve_name(runtime_name), "docker") != 0)
    return usage_error("--pull applies to the docker runtime only");

  eb_error *err = NULL;
  char *code_buf = NULL, *stdin_buf = NULL;
  size_t code_len = 0, stdin_len = 0;
  eb_runtime *rt = NULL;
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  int exit_status = CLI_EXIT_FAILURE;

  if (file != NULL) {
    if (eb_read_file(file, &code_buf, &code_len, MAX_CODE_BYTES, &err) < 0) {
      cli_errorf("%s", err->msg);
      exit_status = err->code == ENOENT || err->code == EACCES ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
      goto out;
    }
    req.code = code_buf;
    req.code_len = code_len;
  } else {
    req.code = code_arg;
  }
  if (stdin_path != NULL) {
    if (eb_read_file(stdin_path, &stdin_buf, &stdin_len, MAX_STDIN_BYTES, &err) < 0) {
      cli_errorf("--stdin: %s", err->msg);
      exit_status = CLI_EXIT_USAGE;
      goto out;
    }
    req.stdin_data = stdin_buf;
    req.stdin_len = stdin_len;
  }
  req.language = language;

  int made;
  if (pull) {
    /* Pulling only ever happens when asked for. */
    eb_docker_options dopts;
    eb_docker_options_init(&dopts);
    dopts.pull = 1;
    made = eb_docker_runtime_new(&dopts, &rt, &err);
  } else {
    made = eb_runtime_new(runtime_name, &rt, &err);
  }
  if (made < 0) {
    cli_errorf("%s", err->msg);
    exit_status = err->code == EB_ERR_RUNTIME_UNKNOWN ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
    goto out;
  }
  /* Only when asked: a pool pays off over many executions, not one. */
  eb_pool_options pool;
  int pool_set = eb_pool_options_from_env(&pool, &err);
  if (pool_set < 0) {
    cli_errorf("%s", err->msg);
    exit_status = CLI_EXIT_USAGE;
    goto out;
  }
  if (pool_set > 0 && pool.size > 0) {
    const char *prewarm[] = {language, NULL};
    pool.prewarm = prewarm;
    pool.wait = true;
    if (eb_runtime_enable_pool(rt, &pool, &err) < 0) {
      cli_errorf("%s", err->msg);
      goto out;
    }
  }
  eb_ctx *ctx = NULL;
  if (eb_ctx_new(NULL, 0, &ctx, &err) < 0) {
    cli_errorf("%s", err->msg);
    goto out;
  }
  run_ctx = ctx;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);

  int r = eb_runtime_execute(rt, ctx, &req, &res, &err);

  sa.sa_handler = SIG_DFL;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  run_ctx = NULL;
  eb_ctx_free(ctx);

  if (r < 0) {
    if (json) {
      json_t *o = json_pack("{s:{s:s, s:s}}", "error", "code", eb_error_code_name(err->code),
                            "message", err->msg ? err->msg : "");
      char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
      if (s != NULL)
        puts(s);
      free(s);
      json_decref(o);
    }
    cli_errorf("%s", err->msg);
    exit_status = cli_exit_for_error(err);
    goto out;
  }
  if (json) {
    char *s = eb_exec_result_to_json(&res);
    if (s == NULL) {
      cli_errorf("cannot encode the result as JSON");
      goto out;
    }
    puts(s);
    free(s);
  } else {
    fflush(stdout);
    if (fwrite(res.stdout_data, 1, res.stdout_len, stdout) != res.stdout_len ||
        fflush(stdout) != 0) {
      /* The reader went away (e.g. `| head`): not the program's failure. */
    }
    fwrite(res.stderr_data, 1, res.stderr_len, stderr);
  }
  report_status(&res, &req);
  exit_status = cli_exit_for_result(&res);
  if (res.status == EB_STATUS_CANCELLED && run_signal != 0)
    exit_status = 128 + run_signal;

out:
  eb_exec_result_clear(&res);
  eb_runtime_free(rt);
  eb_error_free(err);
  free(code_buf);
  free(stdin_buf);
  return exit_status;
}
