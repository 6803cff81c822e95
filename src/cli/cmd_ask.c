/* execbox ask / execbox chat: an agent that answers by running code. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <termios.h>
#include <unistd.h>

#include "cli/cli.h"

enum { CLI_EXIT_LLM = 69 }; /* the model could not be reached or refused */

static eb_ctx *volatile ask_ctx;
static volatile sig_atomic_t ask_signal;

static void on_signal(int sig) {
  ask_signal = sig;
  if (ask_ctx != NULL)
    eb_ctx_cancel(ask_ctx);
}

typedef struct ask_options {
  const char *model, *runtime, *system;
  int64_t timeout_ms, tool_timeout_ms;
  int max_iterations;
  bool yes, autonomous, stream, no_pool;
} ask_options;

/* ------------------------------------------------------------ terminal */

typedef struct spinner {
  pthread_t thread;
  atomic_bool stop;
  bool running;
  int64_t start;
} spinner;

static void *spin(void *arg) {
  spinner *s = arg;
  static const char frames[] = "|/-\\";
  for (int i = 0; !atomic_load(&s->stop); i++) {
    fprintf(stderr, "\r  %c running %.1f s ", frames[i % 4], (double)(eb_now_ns() - s->start) / 1e9);
    fflush(stderr);
    struct timespec ts = {0, 100 * 1000000L};
    nanosleep(&ts, NULL);
  }
  fputs("\r\033[K", stderr);
  return NULL;
}

static void spinner_start(spinner *s) {
  if (s->running || !isatty(STDERR_FILENO))
    return;
  atomic_store(&s->stop, false);
  s->start = eb_now_ns();
  s->running = pthread_create(&s->thread, NULL, spin, s) == 0;
}

static void spinner_stop(spinner *s) {
  if (!s->running)
    return;
  atomic_store(&s->stop, true);
  pthread_join(s->thread, NULL);
  s->running = false;
}

typedef struct ui {
  spinner spin;
  bool printed_text;   /* something of the answer went to stdout */
  bool text_ends_nl;
  int tty;             /* /dev/tty for approvals, or -1 */
} ui;

/* Writes text to stderr with control characters made visible (\n and \t
 * kept): what the user approves must be what runs, not what escape
 * sequences or carriage returns make the terminal show. */
static void show_text(const char *t) {
  for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
    if (*p == '\n' || *p == '\t' || (*p >= 0x20 && *p != 0x7f))
      fputc(*p, stderr);
    else
      fprintf(stderr, "\\x%02x", *p);
  }
}

/* Shows a code run: language, then the code. */
static void show_call(const char *name, const char *args) {
  json_t *j = json_loads(args ? args : "", 0, NULL);
  const char *lang = json_string_value(json_object_get(j, "language"));
  const char *code = json_string_value(json_object_get(j, "code"));
  if (strcmp(name, "execute_code") == 0 && lang != NULL && code != NULL) {
    size_t n = strlen(code);
    fputs("\n--- ", stderr);
    show_text(lang);
    fputs(" ---\n", stderr);
    show_text(code);
    fputs(n > 0 && code[n - 1] == '\n' ? "" : "\n", stderr);
  } else {
    fputs("\n--- ", stderr);
    show_text(name);
    fputs(" ---\n", stderr);
    show_text(args ? args : "");
    fputc('\n', stderr);
  }
  json_decref(j);
}

static void show_result(const eb_event *ev) {
  json_t *j = json_loads(ev->text ? ev->text : "", 0, NULL);
  const char *error = json_string_value(json_object_get(j, "error"));
  if (ev->is_error || error != NULL) {
    fprintf(stderr, "--- not run: %s\n", error ? error : (ev->text ? ev->text : "error"));
  } else {
    json_t *code = json_object_get(j, "exit_code");
    fprintf(stderr, "--- exit %lld in %.2f s%s%s%s\n", (long long)json_integer_value(code),
            (double)ev->duration_ms / 1000.0,
            json_is_true(json_object_get(j, "timed_out")) ? ", timed out" : "",
            json_is_true(json_object_get(j, "truncated")) ? ", output truncated" : "",
            json_string_value(json_object_get(j, "status")) &&
                    !json_is_true(json_object_get(j, "timed_out"))
                ? ", killed"
                : "");
  }
  json_decref(j);
}

static void on_event(void *user, const eb_event *ev) {
  ui *u = user;
  switch (ev->type) {
  case EB_EVENT_TEXT_DELTA:
    if (ev->len > 0) {
      fwrite(ev->text, 1, ev->len, stdout);
      fflush(stdout);
      u->printed_text = true;
      u->text_ends_nl = ev->text[ev->len - 1] == '\n';
    }
    break;
  case EB_EVENT_TOOL_CALL_ARGS:
    if (u->printed_text && !u->text_ends_nl) {
      fputc('\n', stdout);
      fflush(stdout);
      u->text_ends_nl = true;
    }
    show_call(ev->tool_name, ev->text);
    break;
  case EB_EVENT_TOOL_CALL_END: spinner_start(&u->spin); break;
  case EB_EVENT_TOOL_RESULT:
    spinner_stop(&u->spin);
    show_result(ev);
    break;
  case EB_EVENT_RUN_FINISH:
    /* A non-streaming reply arrives whole. */
    if (!u->printed_text && ev->len > 0) {
      fwrite(ev->text, 1, ev->len, stdout);
      u->text_ends_nl = ev->text[ev->len - 1] == '\n';
      u->printed_text = true;
    }
    if (u->printed_text && !u->text_ends_nl)
      fputc('\n', stdout);
    fflush(stdout);
    break;
  case EB_EVENT_RUN_ERROR: spinner_stop(&u->spin); break;
  default: break;
  }
}

/* Asks on the terminal (not stdin, which may be a pipe). */
static bool approve(void *user, const char *tool, const char *args) {
  ui *u = user;
  (void)args; /* already shown by on_event */
  if (u->tty < 0)
    return false;
  /* Keys typed before the question (while the model was thinking) must
   * not answer it. */
  tcflush(u->tty, TCIFLUSH);
  dprintf(u->tty, "Run this %s? [y/N] ", strcmp(tool, "execute_code") == 0 ? "code" : "call");
  char line[64];
  size_t n = 0;
  for (;;) { /* one whole line, however long */
    char ch;
    ssize_t r = read(u->tty, &ch, 1);
    if (r <= 0 || ch == '\n')
      break;
    if (n < sizeof(line) - 1)
      line[n++] = ch;
  }
  line[n] = '\0';
  while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
    line[--n] = '\0';
  return strcasecmp(line, "y") == 0 || strcasecmp(line, "yes") == 0;
}

/* ---------------------------------------------------------------- setup */

static void ask_usage(FILE *f, bool chat) {
  fprintf(f,
          "usage: execbox %s [OPTIONS]%s\n"
          "\n"
          "%s\n"
          "\n"
          "options:\n"
          "  -m, --model PROVIDER:NAME  model (default $EXECBOX_MODEL); providers openai, anthropic, ollama\n"
          "  -r, --runtime NAME         sandbox runtime (default $SANDBOX_ENV, else jail)\n"
          "  -t, --timeout DURATION     time for the whole answer (default 5m, 60m with --autonomous)\n"
          "      --tool-timeout DURATION  time for one code run (default 2m)\n"
          "      --max-iterations N     model calls with tools before a final answer (default 5)\n"
          "  -y, --yes                  run code without asking\n"
          "      --autonomous           no approvals, 60 min default timeout\n"
          "      --system TEXT          replace the system prompt\n"
          "      --no-stream            wait for whole replies instead of streaming\n"
          "      --no-pool              no warm sandboxes: build each one when code runs\n"
          "  -h, --help                 show this help\n"
          "\n"
          "environment: OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,\n"
          "OLLAMA_HOST, EXECBOX_MODEL, SANDBOX_ENV, EXECBOX_POOL (warm sandboxes per kind, default 4).\n"
          "exit status: 0 answered; 64 usage; 69 the model failed (key, endpoint, quota, ...);\n"
          "124 timeout; 125 execbox failure; 130 interrupted.\n",
          chat ? "chat" : "ask", chat ? "" : " PROMPT...",
          chat ? "A conversation with an agent that answers by running code in a sandbox.\n"
                 "Type a message and Enter; /exit or end of input quits."
               : "Asks one question; the agent answers by running code in a sandbox. The answer\n"
                 "streams to stdout; each code run is shown on stderr as it happens.");
}

static int exit_for(const eb_error *err) {
  switch (err->code) {
  case EB_ERR_USAGE: return CLI_EXIT_USAGE;
  case EB_ERR_TIMEOUT: return CLI_EXIT_TIMEOUT;
  case EB_ERR_CANCELLED: return ask_signal ? 128 + ask_signal : 130;
  case EB_ERR_LLM_AUTH:
  case EB_ERR_LLM_QUOTA:
  case EB_ERR_LLM_RATE_LIMIT:
  case EB_ERR_LLM_CONTEXT:
  case EB_ERR_LLM_PROVIDER:
  case EB_ERR_PROTOCOL: return CLI_EXIT_LLM;
  default: return CLI_EXIT_FAILURE;
  }
}

static int parse_options(int argc, char **argv, bool chat, ask_options *o) {
  static const struct option opts[] = {
      {"model", required_argument, NULL, 'm'},       {"runtime", required_argument, NULL, 'r'},
      {"timeout", required_argument, NULL, 't'},     {"tool-timeout", required_argument, NULL, 'T'},
      {"max-iterations", required_argument, NULL, 'I'}, {"yes", no_argument, NULL, 'y'},
      {"autonomous", no_argument, NULL, 'A'},        {"system", required_argument, NULL, 'S'},
      {"no-stream", no_argument, NULL, 'N'},         {"help", no_argument, NULL, 'h'},
      {"no-pool", no_argument, NULL, 'P'},
      {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof(*o));
  o->stream = true;
  optind = 1;
  int c;
  while ((c = getopt_long(argc, argv, "m:r:t:yh", opts, NULL)) != -1) {
    switch (c) {
    case 'm': o->model = optarg; break;
    case 'r': o->runtime = optarg; break;
    case 't':
      if (cli_parse_duration_ms(optarg, &o->timeout_ms) < 0) {
        cli_errorf("invalid --timeout `%s`", optarg);
        return CLI_EXIT_USAGE;
      }
      break;
    case 'T':
      if (cli_parse_duration_ms(optarg, &o->tool_timeout_ms) < 0) {
        cli_errorf("invalid --tool-timeout `%s`", optarg);
        return CLI_EXIT_USAGE;
      }
      break;
    case 'I': {
      char *end = NULL;
      long v = strtol(optarg, &end, 10);
      if (end == optarg || *end != '\0' || v < 1 || v > 100) {
        cli_errorf("invalid --max-iterations `%s` (1 to 100)", optarg);
        return CLI_EXIT_USAGE;
      }
      o->max_iterations = (int)v;
      break;
    }
    case 'y': o->yes = true; break;
    case 'A': o->autonomous = true; break;
    case 'S': o->system = optarg; break;
    case 'N': o->stream = false; break;
    case 'P': o->no_pool = true; break;
    case 'h': ask_usage(stdout, chat); return 0;
    default: ask_usage(stderr, chat); return CLI_EXIT_USAGE;
    }
  }
  if (o->model == NULL)
    o->model = getenv("EXECBOX_MODEL");
  if (o->model == NULL || o->model[0] == '\0') {
    cli_errorf("no model: use --model PROVIDER:NAME or set EXECBOX_MODEL (e.g. openai:gpt-4o-mini)");
    return CLI_EXIT_USAGE;
  }
  return -1; /* go on */
}

/* One agent turn on conv; prints the answer. Returns an exit status. */
static int turn(const eb_agent_config *cfg, eb_conversation *conv) {
  eb_ctx *ctx = NULL;
  eb_error *err = NULL;
  if (eb_ctx_new(NULL, 0, &ctx, &err) < 0) {
    cli_errorf("%s", err->msg);
    eb_error_free(err);
    return CLI_EXIT_FAILURE;
  }
  ask_ctx = ctx;
  char *answer = NULL;
  int r = eb_agent_run(cfg, ctx, conv, &answer, &err);
  ask_ctx = NULL;
  eb_ctx_free(ctx);
  int status = 0;
  if (r < 0) {
    fflush(stdout);
    cli_errorf("%s", err->msg);
    status = exit_for(err);
  }
  free(answer);
  eb_error_free(err);
  return status;
}

static int run_agent(int argc, char **argv, bool chat) {
  ask_options o;
  int status = parse_options(argc, argv, chat, &o);
  if (status >= 0)
    return status;
  if (!chat && optind >= argc) {
    cli_errorf("no question (see `execbox ask --help`)");
    return CLI_EXIT_USAGE;
  }
  ui u = {.tty = -1};
  bool need_approval = !o.yes && !o.autonomous;
  if (need_approval) {
    u.tty = open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (u.tty < 0) {
      cli_errorf("code runs need approval and there is no terminal to ask on: pass --yes "
                 "(or --autonomous) to run code without asking");
      return CLI_EXIT_USAGE;
    }
  }

  eb_error *err = NULL;
  eb_llm *llm = NULL;
  eb_runtime *rt = NULL;
  eb_tool *tool = NULL;
  eb_conversation conv = {0};
  char *prompt = NULL;
  status = 0;
  if (eb_llm_new_from_spec(o.model, o.stream, &llm, &err) < 0) {
    cli_errorf("%s", err->msg);
    status = err->code == EB_ERR_USAGE ? CLI_EXIT_USAGE : CLI_EXIT_LLM;
    goto out;
  }
  if (eb_runtime_new(o.runtime, &rt, &err) < 0) {
    cli_errorf("%s", err->msg);
    status = err->code == EB_ERR_RUNTIME_UNKNOWN ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
    goto out;
  }
  /* The pool first, with its prewarming; the tool then finds it running. */
  if ((status = cli_start_pool(rt, o.no_pool)) != 0)
    goto out;
  if (eb_execute_code_tool_new(rt, NULL, &tool, &err) < 0) {
    cli_errorf("%s", err->msg);
    status = CLI_EXIT_FAILURE;
    goto out;
  }
  eb_tool *tools[1] = {tool};
  eb_agent_config cfg = {
      .llm = llm,
      .tools = tools,
      .n_tools = 1,
      .system_prompt = o.system,
      .mode = o.autonomous ? EB_AGENT_AUTONOMOUS : EB_AGENT_INTERACTIVE,
      .run_timeout_ms = o.timeout_ms,
      .approval = need_approval ? EB_APPROVAL_REQUIRE_ALL : EB_APPROVAL_AUTO,
      .approve = approve,
      .approve_user = &u,
      .max_iterations = o.max_iterations,
      .tool_config = {.timeout_ms = o.tool_timeout_ms, .max_attempts = 1},
      .on_event = on_event,
      .event_user = &u,
  };
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  if (!chat) {
    size_t len = 0;
    for (int i = optind; i < argc; i++)
      len += strlen(argv[i]) + 1;
    prompt = calloc(1, len + 1);
    for (int i = optind; prompt != NULL && i < argc; i++) {
      if (i > optind)
        strcat(prompt, " ");
      strcat(prompt, argv[i]);
    }
    if (prompt == NULL || eb_conversation_add_user(&conv, prompt, &err) < 0) {
      cli_errorf("out of memory");
      status = CLI_EXIT_FAILURE;
      goto out;
    }
    status = turn(&cfg, &conv);
    goto out;
  }

  bool interactive = isatty(STDIN_FILENO);
  char *line = NULL;
  size_t cap = 0;
  for (;;) {
    if (interactive) {
      fputs("you> ", stderr);
      fflush(stderr);
    }
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0)
      break;
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
      line[--n] = '\0';
    if (n == 0)
      continue;
    if (strcmp(line, "/exit") == 0 || strcmp(line, "/quit") == 0)
      break;
    if (eb_conversation_add_user(&conv, line, &err) < 0) {
      cli_errorf("%s", err->msg);
      status = CLI_EXIT_FAILURE;
      break;
    }
    u.printed_text = false;
    status = turn(&cfg, &conv);
    if (status != 0 && status != CLI_EXIT_TIMEOUT && status != CLI_EXIT_LLM)
      break; /* interrupted or broken: stop; a failed turn can be retried */
    if (status != 0) {
      /* Drop the failed turn so the conversation stays well-formed. */
      while (conv.n > 0 && conv.messages[conv.n - 1].role != EB_ROLE_USER)
        eb_message_clear(&conv.messages[--conv.n]);
      if (conv.n > 0)
        eb_message_clear(&conv.messages[--conv.n]);
    }
  }
  free(line);

out:
  if (u.tty >= 0)
    close(u.tty);
  free(prompt);
  eb_conversation_clear(&conv);
  eb_tool_free(tool);
  eb_runtime_free(rt);
  eb_llm_free(llm);
  eb_error_free(err);
  return status;
}

int cmd_ask(int argc, char **argv) { return run_agent(argc, argv, false); }
int cmd_chat(int argc, char **argv) { return run_agent(argc, argv, true); }
