/* The agent and both LLM clients against the scripted fake provider
 * (tests/fixtures/fake_llm.py) on loopback. Each test starts its own server
 * with its own script and reads the server's request log to check what the
 * client sent. Code runs on the local runtime (fast; the jail has its own
 * tests). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <execbox/execbox.h>

#include "runner.h"

typedef struct server {
  pid_t pid;
  int port;
  char dir[256], log[300];
} server;

static const char *providers[] = {"openai", "anthropic"};

/* Starts the fake provider with script (JSON text). */
static void server_start(server *s, const char *script) {
  char *dir = eb_test_mkdtemp("execbox-agent");
  snprintf(s->dir, sizeof(s->dir), "%s", dir);
  free(dir);
  char script_path[300], port_path[300];
  snprintf(script_path, sizeof(script_path), "%s/script.json", s->dir);
  snprintf(port_path, sizeof(port_path), "%s/port", s->dir);
  snprintf(s->log, sizeof(s->log), "%s/log.jsonl", s->dir);
  FILE *f = fopen(script_path, "w");
  assert_non_null(f);
  fputs(script, f);
  fclose(f);
  s->pid = fork();
  assert_true(s->pid >= 0);
  if (s->pid == 0) {
    execlp("python3", "python3", EB_FIXTURES_DIR "/fake_llm.py", "--script", script_path,
           "--port", "0", "--port-file", port_path, "--log", s->log, (char *)NULL);
    _exit(127);
  }
  for (int i = 0; i < 200; i++) {
    FILE *p = fopen(port_path, "r");
    if (p != NULL) {
      int ok = fscanf(p, "%d", &s->port);
      fclose(p);
      if (ok == 1 && s->port > 0)
        return;
    }
    struct timespec ts = {0, 25 * 1000000L};
    nanosleep(&ts, NULL);
  }
  fail_msg("the fake LLM server did not start");
}

static void server_stop(server *s) {
  if (s->pid > 0) {
    kill(s->pid, SIGTERM);
    waitpid(s->pid, NULL, 0);
  }
  eb_test_rmtree(s->dir);
}

/* The logged requests, as a JSON array. */
static json_t *server_log(const server *s) {
  json_t *all = json_array();
  FILE *f = fopen(s->log, "r");
  if (f == NULL)
    return all;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    json_t *j = json_loads(line, 0, NULL);
    if (j != NULL) {
      /* The client must never send what the real service would reject. */
      json_t *pe = json_object_get(j, "protocol_errors");
      if (json_array_size(pe) > 0) {
        char *dump = json_dumps(pe, 0);
        fail_msg("protocol errors in request: %s", dump);
      }
      assert_int_equal(json_array_size(json_object_get(j, "expect_failures")), 0);
      json_array_append_new(all, j);
    }
  }
  free(line);
  fclose(f);
  return all;
}

static eb_llm *make_llm(const server *s, const char *provider, bool stream) {
  char base[128];
  if (strcmp(provider, "openai") == 0)
    snprintf(base, sizeof(base), "http://127.0.0.1:%d/v1", s->port);
  else
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", s->port);
  eb_llm_options o = {.provider = provider, .model = "test-model", .base_url = base,
                      .api_key = "sk-test", .stream = stream};
  eb_llm *llm = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_llm_new(&o, &llm, &err), 0);
  return llm;
}

typedef struct recorder {
  eb_event_type types[64];
  int n;
  int text_deltas;
  char results[8][1024];
  int n_results;
} recorder;

static void record(void *user, const eb_event *ev) {
  recorder *r = user;
  if (r->n < 64)
    r->types[r->n++] = ev->type;
  if (ev->type == EB_EVENT_TEXT_DELTA)
    r->text_deltas++;
  if (ev->type == EB_EVENT_TOOL_RESULT && r->n_results < 8)
    snprintf(r->results[r->n_results++], sizeof(r->results[0]), "%s", ev->text);
}

typedef struct fixture {
  eb_runtime *rt;
  eb_tool *tool;
  eb_llm *llm;
  eb_conversation conv;
  recorder rec;
  eb_agent_config cfg;
  eb_tool *tools[1];
} fixture;

static void fixture_init(fixture *f, const server *s, const char *provider, bool stream,
                         const eb_execute_code_options *opts) {
  memset(f, 0, sizeof(*f));
  eb_error *err = NULL;
  assert_int_equal(eb_runtime_new("local", &f->rt, &err), 0);
  assert_int_equal(eb_execute_code_tool_new(f->rt, opts, &f->tool, &err), 0);
  f->llm = make_llm(s, provider, stream);
  f->tools[0] = f->tool;
  f->cfg = (eb_agent_config){
      .llm = f->llm,
      .tools = f->tools,
      .n_tools = 1,
      .mode = EB_AGENT_AUTONOMOUS,
      .approval = EB_APPROVAL_AUTO,
      .llm_config = {.timeout_ms = 20000, .max_attempts = 3},
      .tool_config = {.timeout_ms = 20000, .max_attempts = 1},
      .on_event = record,
      .event_user = &f->rec,
  };
  assert_int_equal(eb_conversation_add_user(&f->conv, "What is 6*7? Run code.", &err), 0);
}

static void fixture_free(fixture *f) {
  eb_conversation_clear(&f->conv);
  eb_llm_free(f->llm);
  eb_tool_free(f->tool);
  eb_runtime_free(f->rt);
}

static const char *tool_call_step(const char *id, const char *code) {
  static char buf[2048];
  json_t *j = json_pack("{s:{s:[{s:s, s:s, s:{s:s, s:s}}]}}", "reply", "tool_calls", "id", id,
                        "name", "execute_code", "arguments", "language", "sh", "code", code);
  char *d = json_dumps(j, JSON_COMPACT);
  snprintf(buf, sizeof(buf), "%s", d);
  free(d);
  json_decref(j);
  return buf;
}

static int64_t ms_since(int64_t t0) { return (eb_now_ns() - t0) / 1000000; }

/* ------------------------------------------------------------------ tests */

/* The model asks for code, gets the real output, answers: both formats,
 * streamed and not; tool results carry the right id and the output. */
static void round_trip(bool stream) {
  for (size_t p = 0; p < 2; p++) {
    char script[4096];
    snprintf(script, sizeof(script),
             "{\"steps\": [%s, {\"reply\": {\"text\": \"The program printed 42, so 6*7 is 42.\"},"
             " \"expect\": {\"last_tool_result_contains\": \"42\", \"last_tool_result_id\": "
             "\"call_1\", \"stream\": %s, \"tools\": true}}]}",
             tool_call_step("call_1", "echo $((6*7))"), stream ? "true" : "false");
    server s;
    server_start(&s, script);
    fixture f;
    fixture_init(&f, &s, providers[p], stream, NULL);
    char *answer = NULL;
    eb_error *err = NULL;
    int r = eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err);
    if (r < 0)
      fail_msg("%s: %s", providers[p], err->msg);
    assert_string_equal(answer, "The program printed 42, so 6*7 is 42.");
    assert_int_equal(f.rec.n_results, 1);
    assert_string_equal(f.rec.results[0], "{\"exit_code\":0,\"output\":\"42\\n\"}");
    /* user, assistant(tool call), tool, assistant(answer) */
    assert_int_equal(f.conv.n, 4);
    assert_int_equal(f.conv.messages[2].role, EB_ROLE_TOOL);
    assert_string_equal(f.conv.messages[2].tool_call_id, "call_1");
    if (stream)
      assert_true(f.rec.text_deltas >= 2); /* the answer arrived in pieces */
    assert_int_equal(f.rec.types[0], EB_EVENT_RUN_START);
    assert_int_equal(f.rec.types[f.rec.n - 1], EB_EVENT_RUN_FINISH);
    json_t *log = server_log(&s);
    assert_int_equal(json_array_size(log), 2);
    json_decref(log);
    free(answer);
    fixture_free(&f);
    server_stop(&s);
  }
}

static void test_round_trip_plain(void **state) {
  (void)state;
  round_trip(false);
}

static void test_round_trip_streamed_deltas(void **state) {
  (void)state;
  round_trip(true);
}

/* A non-zero exit is a result: the model gets it and sends a fixed script. */
static void test_failed_script_is_fixed(void **state) {
  (void)state;
  for (size_t p = 0; p < 2; p++) {
    char script[4096];
    char first[1024];
    snprintf(first, sizeof(first), "%s", tool_call_step("c1", "echo oops >&2; exit 3"));
    snprintf(script, sizeof(script),
             "{\"steps\": [%s, %s, {\"reply\": {\"text\": \"Fixed: 42.\"}, \"expect\": "
             "{\"last_tool_result_contains\": \"42\"}}]}",
             first, tool_call_step("c2", "echo 42"));
    server s;
    server_start(&s, script);
    fixture f;
    fixture_init(&f, &s, providers[p], true, NULL);
    char *answer = NULL;
    eb_error *err = NULL;
    assert_int_equal(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err), 0);
    assert_int_equal(f.rec.n_results, 2);
    assert_string_equal(f.rec.results[0], "{\"exit_code\":3,\"output\":\"oops\\n\"}");
    json_t *log = server_log(&s);
    /* The second request told the model about the exit code. */
    json_t *msgs = json_object_get(json_array_get(log, 1), "messages");
    char *dump = json_dumps(msgs, 0);
    assert_non_null(strstr(dump, "exit_code\\\":3"));
    free(dump);
    json_decref(log);
    free(answer);
    fixture_free(&f);
    server_stop(&s);
  }
}

/* 429 with Retry-After is waited out, then the call succeeds. */
static void test_rate_limit_waited_out(void **state) {
  (void)state;
  for (size_t p = 0; p < 2; p++) {
    server s;
    server_start(&s, "{\"steps\": [{\"status\": 429, \"headers\": {\"Retry-After\": \"1\"}},"
                     " {\"reply\": {\"text\": \"ok\"}}]}");
    fixture f;
    fixture_init(&f, &s, providers[p], false, NULL);
    char *answer = NULL;
    eb_error *err = NULL;
    int64_t t0 = eb_now_ns();
    assert_int_equal(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err), 0);
    assert_true(ms_since(t0) >= 950); /* it honoured the header (a lower bound only) */
    assert_string_equal(answer, "ok");
    json_t *log = server_log(&s);
    assert_int_equal(json_array_size(log), 2);
    json_decref(log);
    free(answer);
    fixture_free(&f);
    server_stop(&s);
  }
}

/* 5xx are retried up to max_attempts, then the run fails, classified. */
static void test_server_errors_retried_up_to_max(void **state) {
  (void)state;
  for (size_t p = 0; p < 2; p++) {
    server s;
    server_start(&s, "{\"steps\": [{\"status\": 500, \"headers\": {\"retry-after-ms\": \"10\"}},"
                     " {\"status\": 503, \"headers\": {\"retry-after-ms\": \"10\"}},"
                     " {\"status\": 502, \"headers\": {\"retry-after-ms\": \"10\"}},"
                     " {\"reply\": {\"text\": \"never reached\"}}]}");
    fixture f;
    fixture_init(&f, &s, providers[p], true, NULL);
    char *answer = NULL;
    eb_error *err = NULL;
    assert_true(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err) < 0);
    assert_int_equal(err->code, EB_ERR_LLM_PROVIDER);
    assert_non_null(strstr(err->msg, "after 3 attempts"));
    json_t *log = server_log(&s);
    assert_int_equal(json_array_size(log), 3);
    json_decref(log);
    eb_error_free(err);
    assert_null(answer);
    assert_int_equal(f.rec.types[f.rec.n - 1], EB_EVENT_RUN_ERROR);
    fixture_free(&f);
    server_stop(&s);
  }
}

/* A quota error is final: one request, no retry. */
static void test_quota_not_retried(void **state) {
  (void)state;
  const char *scripts[2] = {
      "{\"steps\": [{\"status\": 429, \"error_type\": \"insufficient_quota\", \"message\": "
      "\"You exceeded your current quota.\"}, {\"reply\": {\"text\": \"no\"}}]}",
      "{\"steps\": [{\"status\": 400, \"error_type\": \"invalid_request_error\", \"message\": "
      "\"Your credit balance is too low to access the API.\"}, {\"reply\": {\"text\": \"no\"}}]}",
  };
  for (size_t p = 0; p < 2; p++) {
    server s;
    server_start(&s, scripts[p]);
    fixture f;
    fixture_init(&f, &s, providers[p], false, NULL);
    char *answer = NULL;
    eb_error *err = NULL;
    assert_true(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err) < 0);
    assert_int_equal(err->code, EB_ERR_LLM_QUOTA);
    json_t *log = server_log(&s);
    assert_int_equal(json_array_size(log), 1);
    json_decref(log);
    eb_error_free(err);
    fixture_free(&f);
    server_stop(&s);
  }
}

/* Malformed arguments and an unknown tool reach the model as tool errors. */
static void test_bad_calls_become_tool_errors(void **state) {
  (void)state;
  for (size_t p = 0; p < 2; p++) {
    server s;
    server_start(&s,
                 "{\"steps\": ["
                 "{\"reply\": {\"tool_calls\": [{\"id\": \"c1\", \"name\": \"execute_code\","
                 " \"arguments\": \"{\\\"language\\\": \\\"sh\\\", \\\"code\"}]}},"
                 "{\"reply\": {\"tool_calls\": [{\"id\": \"c2\", \"name\": \"format_disk\","
                 " \"arguments\": {}}]}, \"expect\": {\"last_tool_result_contains\": "
                 "\"not a JSON object\"}},"
                 "{\"reply\": {\"text\": \"done\"}, \"expect\": {\"last_tool_result_contains\": "
                 "\"unknown tool\"}}]}");
    fixture f;
    fixture_init(&f, &s, providers[p], p == 1, NULL);
    char *answer = NULL;
    eb_error *err = NULL;
    int r = eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err);
    if (r < 0)
      fail_msg("%s: %s", providers[p], err->msg);
    assert_string_equal(answer, "done");
    assert_int_equal(f.rec.n_results, 2);
    assert_non_null(strstr(f.rec.results[0], "not a JSON object"));
    assert_non_null(strstr(f.rec.results[1], "unknown tool `format_disk`"));
    json_t *log = server_log(&s); /* also asserts the expectations held */
    json_decref(log);
    free(answer);
    fixture_free(&f);
    server_stop(&s);
  }
}

/* After max_iterations tool rounds, one final call with tools disabled. */
static void test_max_iterations_ends_without_tools(void **state) {
  (void)state;
  for (size_t p = 0; p < 2; p++) {
    char script[4096], a[1024], b[1024];
    snprintf(a, sizeof(a), "%s", tool_call_step("c1", "echo 1"));
    snprintf(b, sizeof(b), "%s", tool_call_step("c2", "echo 2"));
    snprintf(script, sizeof(script),
             "{\"steps\": [%s, %s, {\"reply\": {\"text\": \"final\"}, \"expect\": "
             "{\"tools_disabled\": true}}]}",
             a, b);
    server s;
    server_start(&s, script);
    fixture f;
    fixture_init(&f, &s, providers[p], false, NULL);
    f.cfg.max_iterations = 2;
    char *answer = NULL;
    eb_error *err = NULL;
    assert_int_equal(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err), 0);
    assert_string_equal(answer, "final");
    json_t *log = server_log(&s);
    assert_int_equal(json_array_size(log), 3);
    json_t *first = json_object_get(json_array_get(log, 0), "tool_choice");
    assert_true(json_is_null(first));
    json_decref(log);
    free(answer);
    fixture_free(&f);
    server_stop(&s);
  }
}

/* Timeout layer 4: the sandbox's wall time ends the program; the model gets
 * timed_out and the run goes on. */
static void test_sandbox_wall_time_is_a_result(void **state) {
  (void)state;
  char script[2048];
  snprintf(script, sizeof(script),
           "{\"steps\": [%s, {\"reply\": {\"text\": \"it timed out\"}, \"expect\": "
           "{\"last_tool_result_contains\": \"timed_out\"}}]}",
           tool_call_step("c1", "sleep 20"));
  server s;
  server_start(&s, script);
  eb_execute_code_options o = {.limits = {.wall_ms = 300}};
  fixture f;
  fixture_init(&f, &s, "openai", false, &o);
  char *answer = NULL;
  eb_error *err = NULL;
  int64_t t0 = eb_now_ns();
  assert_int_equal(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err), 0);
  assert_true(ms_since(t0) < 15000);
  assert_non_null(strstr(f.rec.results[0], "\"timed_out\":true"));
  assert_non_null(strstr(f.rec.results[0], "\"status\":\"timeout\""));
  json_decref(server_log(&s));
  free(answer);
  fixture_free(&f);
  server_stop(&s);
}

/* Timeout layer 3: the tool's per-attempt timeout stops the code; the model
 * gets an error; the run goes on. */
static void test_tool_timeout_is_a_tool_error(void **state) {
  (void)state;
  char script[2048];
  snprintf(script, sizeof(script),
           "{\"steps\": [%s, {\"reply\": {\"text\": \"the tool timed out\"}, \"expect\": "
           "{\"last_tool_result_contains\": \"timed out after\"}}]}",
           tool_call_step("c1", "sleep 20"));
  server s;
  server_start(&s, script);
  fixture f;
  fixture_init(&f, &s, "anthropic", false, NULL);
  f.cfg.tool_config.timeout_ms = 300;
  char *answer = NULL;
  eb_error *err = NULL;
  int64_t t0 = eb_now_ns();
  assert_int_equal(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err), 0);
  assert_true(ms_since(t0) < 15000);
  assert_non_null(strstr(f.rec.results[0], "execute_code timed out after 0.3 s"));
  json_decref(server_log(&s));
  free(answer);
  fixture_free(&f);
  server_stop(&s);
}

/* Timeout layer 2: the run timeout ends the run, even in a slow model call. */
static void test_run_timeout_ends_the_run(void **state) {
  (void)state;
  server s;
  server_start(&s, "{\"steps\": [{\"reply\": {\"text\": \"too late\"}, \"delay\": 10}]}");
  fixture f;
  fixture_init(&f, &s, "openai", true, NULL);
  f.cfg.run_timeout_ms = 400;
  char *answer = NULL;
  eb_error *err = NULL;
  int64_t t0 = eb_now_ns();
  assert_true(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err) < 0);
  assert_true(ms_since(t0) < 5000);
  assert_int_equal(err->code, EB_ERR_TIMEOUT);
  assert_non_null(strstr(err->msg, "run timeout"));
  eb_error_free(err);
  fixture_free(&f);
  server_stop(&s);
}

/* Timeout layer 1: the caller's deadline wins over a longer run timeout. */
static void test_caller_deadline_wins(void **state) {
  (void)state;
  char script[2048];
  snprintf(script, sizeof(script), "{\"steps\": [%s, {\"reply\": {\"text\": \"x\"}}]}",
           tool_call_step("c1", "sleep 20"));
  server s;
  server_start(&s, script);
  fixture f;
  fixture_init(&f, &s, "anthropic", true, NULL);
  f.cfg.run_timeout_ms = 60000;
  eb_ctx *ctx = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_ctx_new(NULL, 500, &ctx, &err), 0);
  char *answer = NULL;
  int64_t t0 = eb_now_ns();
  assert_true(eb_agent_run(&f.cfg, ctx, &f.conv, &answer, &err) < 0);
  assert_true(ms_since(t0) < 5000);
  assert_int_equal(err->code, EB_ERR_TIMEOUT);
  assert_non_null(strstr(err->msg, "caller's deadline"));
  eb_error_free(err);
  eb_ctx_free(ctx);
  fixture_free(&f);
  server_stop(&s);
}

typedef struct canceller {
  eb_ctx *ctx;
  int delay_ms;
} canceller;

static void *cancel_later(void *arg) {
  canceller *c = arg;
  struct timespec ts = {c->delay_ms / 1000, (c->delay_ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
  eb_ctx_cancel(c->ctx);
  return NULL;
}

/* Cancelling the caller's context mid-tool kills the running code. */
static void test_cancel_mid_tool_kills_code(void **state) {
  (void)state;
  char marker[64], code[128], script[2048];
  snprintf(marker, sizeof(marker), "987.7%d", (int)getpid());
  snprintf(code, sizeof(code), "sleep %s", marker);
  snprintf(script, sizeof(script), "{\"steps\": [%s, {\"reply\": {\"text\": \"x\"}}]}",
           tool_call_step("c1", code));
  server s;
  server_start(&s, script);
  fixture f;
  fixture_init(&f, &s, "openai", true, NULL);
  eb_ctx *ctx = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_ctx_new(NULL, 0, &ctx, &err), 0);
  canceller c = {.ctx = ctx, .delay_ms = 700};
  pthread_t t;
  pthread_create(&t, NULL, cancel_later, &c);
  char *answer = NULL;
  int64_t t0 = eb_now_ns();
  assert_true(eb_agent_run(&f.cfg, ctx, &f.conv, &answer, &err) < 0);
  pthread_join(t, NULL);
  assert_true(ms_since(t0) < 10000);
  assert_int_equal(err->code, EB_ERR_CANCELLED);
  int pids[4];
  assert_int_equal(eb_test_find_cmdline(marker, pids, 4), 0); /* the code is gone */
  eb_error_free(err);
  eb_ctx_free(ctx);
  fixture_free(&f);
  server_stop(&s);
}

/* max_attempts 1 never re-runs code; 2 re-runs it only after a timeout. */
static void test_max_attempts_one_never_reruns(void **state) {
  (void)state;
  for (int attempts = 1; attempts <= 2; attempts++) {
    char *dir = eb_test_mkdtemp("execbox-attempts");
    char code[512], script[2048];
    snprintf(code, sizeof(code), "echo run >> %s/count; sleep 20", dir);
    snprintf(script, sizeof(script), "{\"steps\": [%s, {\"reply\": {\"text\": \"x\"}}]}",
             tool_call_step("c1", code));
    server s;
    server_start(&s, script);
    fixture f;
    fixture_init(&f, &s, "openai", false, NULL);
    f.cfg.tool_config = (eb_exec_config){.timeout_ms = 300, .max_attempts = attempts};
    char *answer = NULL;
    eb_error *err = NULL;
    assert_int_equal(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err), 0);
    char path[300];
    snprintf(path, sizeof(path), "%s/count", dir);
    FILE *cf = fopen(path, "r");
    assert_non_null(cf);
    int lines = 0;
    for (int ch; (ch = fgetc(cf)) != EOF;)
      lines += ch == '\n';
    fclose(cf);
    assert_int_equal(lines, attempts);
    free(answer);
    fixture_free(&f);
    server_stop(&s);
    eb_test_rmtree(dir);
    free(dir);
  }
}

static bool refuse(void *user, const char *tool, const char *args) {
  (void)tool;
  (void)args;
  (*(int *)user)++;
  return false;
}

/* A refused approval is a tool message; the code does not run. */
static void test_refused_approval_does_not_run(void **state) {
  (void)state;
  char *dir = eb_test_mkdtemp("execbox-approval");
  char code[512], script[2048];
  snprintf(code, sizeof(code), "touch %s/ran", dir);
  snprintf(script, sizeof(script),
           "{\"steps\": [%s, {\"reply\": {\"text\": \"ok, not running it\"}, \"expect\": "
           "{\"last_tool_result_contains\": \"declined\"}}]}",
           tool_call_step("c1", code));
  server s;
  server_start(&s, script);
  fixture f;
  fixture_init(&f, &s, "anthropic", true, NULL);
  int asked = 0;
  f.cfg.approval = EB_APPROVAL_REQUIRE_ALL;
  f.cfg.approve = refuse;
  f.cfg.approve_user = &asked;
  char *answer = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err), 0);
  assert_int_equal(asked, 1);
  char path[300];
  snprintf(path, sizeof(path), "%s/ran", dir);
  assert_int_equal(access(path, F_OK), -1);
  json_decref(server_log(&s));
  free(answer);
  fixture_free(&f);
  server_stop(&s);
  eb_test_rmtree(dir);
  free(dir);
}

/* A malformed reply is a classified protocol error, not a crash. */
static void test_malformed_reply_is_protocol_error(void **state) {
  (void)state;
  for (size_t p = 0; p < 2; p++) {
    server s;
    server_start(&s, "{\"steps\": [{\"raw\": \"{not json\"}]}");
    fixture f;
    fixture_init(&f, &s, providers[p], false, NULL);
    f.cfg.llm_config.max_attempts = 1;
    char *answer = NULL;
    eb_error *err = NULL;
    assert_true(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err) < 0);
    assert_int_equal(err->code, EB_ERR_PROTOCOL);
    eb_error_free(err);
    fixture_free(&f);
    server_stop(&s);
  }
}

/* Every call of one response is answered, in order, with its own id. */
static void test_several_calls_answered_in_order(void **state) {
  (void)state;
  for (size_t p = 0; p < 2; p++) {
    server s;
    server_start(&s, "{\"steps\": [{\"reply\": {\"tool_calls\": ["
                     "{\"id\": \"a1\", \"name\": \"execute_code\", \"arguments\": "
                     "{\"language\": \"sh\", \"code\": \"echo first\"}},"
                     "{\"id\": \"a2\", \"name\": \"execute_code\", \"arguments\": "
                     "{\"language\": \"sh\", \"code\": \"echo second\"}}]}},"
                     "{\"reply\": {\"text\": \"both ran\"}, \"expect\": "
                     "{\"last_tool_result_id\": \"a2\"}}]}");
    fixture f;
    fixture_init(&f, &s, providers[p], p == 0, NULL);
    char *answer = NULL;
    eb_error *err = NULL;
    assert_int_equal(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err), 0);
    assert_int_equal(f.conv.n, 5); /* user, assistant(2 calls), tool a1, tool a2, answer */
    assert_string_equal(f.conv.messages[2].tool_call_id, "a1");
    assert_non_null(strstr(f.conv.messages[2].content, "first"));
    assert_string_equal(f.conv.messages[3].tool_call_id, "a2");
    assert_non_null(strstr(f.conv.messages[3].content, "second"));
    /* Events: start, then per call START, ARGS, END, RESULT, then finish. */
    static const eb_event_type want[] = {
        EB_EVENT_RUN_START,       EB_EVENT_TOOL_CALL_START, EB_EVENT_TOOL_CALL_ARGS,
        EB_EVENT_TOOL_CALL_END,   EB_EVENT_TOOL_RESULT,     EB_EVENT_TOOL_CALL_START,
        EB_EVENT_TOOL_CALL_ARGS,  EB_EVENT_TOOL_CALL_END,   EB_EVENT_TOOL_RESULT};
    int k = 0;
    for (int i = 0; i < f.rec.n && k < (int)(sizeof(want) / sizeof(want[0])); i++)
      if (f.rec.types[i] != EB_EVENT_TEXT_DELTA) {
        assert_int_equal(f.rec.types[i], want[k]);
        k++;
      }
    assert_int_equal(k, (int)(sizeof(want) / sizeof(want[0])));
    json_decref(server_log(&s)); /* the provider saw every call answered */
    free(answer);
    fixture_free(&f);
    server_stop(&s);
  }
}

/* Errors are classified: a rejected key, a too-long conversation. */
static void test_errors_classified(void **state) {
  (void)state;
  struct {
    const char *script;
    int code;
  } cases[] = {
      {"{\"steps\": [{\"status\": 401}]}", EB_ERR_LLM_AUTH},
      {"{\"steps\": [{\"status\": 400, \"error_type\": \"context_length_exceeded\", "
       "\"message\": \"This model's maximum context length is 8192 tokens.\"}]}",
       EB_ERR_LLM_CONTEXT},
      {"{\"steps\": [{\"status\": 400, \"message\": \"prompt is too long: 300000 tokens\"}]}",
       EB_ERR_LLM_CONTEXT},
  };
  for (size_t p = 0; p < 2; p++)
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
      server s;
      server_start(&s, cases[c].script);
      fixture f;
      fixture_init(&f, &s, providers[p], false, NULL);
      char *answer = NULL;
      eb_error *err = NULL;
      assert_true(eb_agent_run(&f.cfg, NULL, &f.conv, &answer, &err) < 0);
      assert_int_equal(err->code, cases[c].code);
      json_t *log = server_log(&s);
      assert_int_equal(json_array_size(log), 1); /* none of these is retried */
      json_decref(log);
      eb_error_free(err);
      fixture_free(&f);
      server_stop(&s);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_several_calls_answered_in_order),
    cmocka_unit_test(test_errors_classified),
    cmocka_unit_test(test_round_trip_plain),
    cmocka_unit_test(test_round_trip_streamed_deltas),
    cmocka_unit_test(test_failed_script_is_fixed),
    cmocka_unit_test(test_rate_limit_waited_out),
    cmocka_unit_test(test_server_errors_retried_up_to_max),
    cmocka_unit_test(test_quota_not_retried),
    cmocka_unit_test(test_bad_calls_become_tool_errors),
    cmocka_unit_test(test_max_iterations_ends_without_tools),
    cmocka_unit_test(test_sandbox_wall_time_is_a_result),
    cmocka_unit_test(test_tool_timeout_is_a_tool_error),
    cmocka_unit_test(test_run_timeout_ends_the_run),
    cmocka_unit_test(test_caller_deadline_wins),
    cmocka_unit_test(test_cancel_mid_tool_kills_code),
    cmocka_unit_test(test_max_attempts_one_never_reruns),
    cmocka_unit_test(test_refused_approval_does_not_run),
    cmocka_unit_test(test_malformed_reply_is_protocol_error),
};

EB_TEST_MAIN(tests)
