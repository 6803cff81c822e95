/* The MCP server core, message by message, on the local runtime: what a
 * client would see for each kind of message. (The official SDK client
 * drives the real binary in tests/mcp/.) */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <execbox/execbox.h>

#include "runner.h"

typedef struct inbox {
  pthread_mutex_t lock;
  pthread_cond_t more;
  json_t *messages; /* array */
} inbox;

static void collect(void *user, const char *message, const char *related, bool final) {
  (void)related;
  (void)final;
  inbox *in = user;
  if (message == NULL)
    return; /* the end of a cancelled call */
  json_t *j = json_loads(message, 0, NULL);
  assert_non_null(j);
  pthread_mutex_lock(&in->lock);
  json_array_append_new(in->messages, j);
  pthread_cond_broadcast(&in->more);
  pthread_mutex_unlock(&in->lock);
}

typedef struct fixture {
  inbox in;
  eb_runtime *rt;
  eb_mcp *mcp;
} fixture;

static fixture *start(int max_concurrent) {
  fixture *f = calloc(1, sizeof(*f));
  pthread_mutex_init(&f->in.lock, NULL);
  pthread_cond_init(&f->in.more, NULL);
  f->in.messages = json_array();
  eb_error *err = NULL;
  assert_int_equal(eb_runtime_new("local", &f->rt, &err), 0);
  eb_mcp_options o = {.runtime = f->rt, .max_concurrent = max_concurrent,
                      .max_message_bytes = 1 << 20, .progress_interval_ms = 200};
  assert_int_equal(eb_mcp_new(&o, collect, &f->in, &f->mcp, &err), 0);
  return f;
}

static void stop(fixture *f) {
  eb_mcp_free(f->mcp);
  eb_runtime_free(f->rt);
  json_decref(f->in.messages);
  free(f);
}

static void send(fixture *f, const char *msg) { eb_mcp_handle(f->mcp, msg, strlen(msg)); }

/* Waits (up to 10 s) for the message answering id; returns a new ref. */
static json_t *response(fixture *f, json_int_t id) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&f->in.lock);
  for (;;) {
    size_t i;
    json_t *m;
    json_array_foreach(f->in.messages, i, m) {
      if (json_integer_value(json_object_get(m, "id")) == id && json_object_get(m, "id")) {
        json_incref(m);
        pthread_mutex_unlock(&f->in.lock);
        return m;
      }
    }
    if (pthread_cond_timedwait(&f->in.more, &f->in.lock, &until) != 0)
      break;
  }
  pthread_mutex_unlock(&f->in.lock);
  fail_msg("no response to request %lld", (long long)id);
  return NULL;
}

static size_t count(fixture *f) {
  pthread_mutex_lock(&f->in.lock);
  size_t n = json_array_size(f->in.messages);
  pthread_mutex_unlock(&f->in.lock);
  return n;
}

static void test_initialize_negotiates_versions(void **state) {
  (void)state;
  fixture *f = start(0);
  send(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
          "\"2024-11-05\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
  json_t *r = response(f, 1);
  json_t *res = json_object_get(r, "result");
  assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")), "2024-11-05");
  assert_string_equal(json_string_value(json_object_get(json_object_get(res, "serverInfo"), "name")),
                      "execbox");
  assert_non_null(json_object_get(json_object_get(res, "capabilities"), "tools"));
  json_decref(r);
  send(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
          "\"1999-01-01\"}}");
  r = response(f, 2);
  assert_string_equal(json_string_value(json_object_get(json_object_get(r, "result"),
                                                        "protocolVersion")),
                      EB_MCP_PROTOCOL_VERSION);
  json_decref(r);
  /* A notification is never answered. */
  size_t before = count(f);
  send(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  send(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
  json_decref(response(f, 3));
  assert_int_equal(count(f), before + 1);
  stop(f);
}

static void test_tools_list_schemas(void **state) {
  (void)state;
  fixture *f = start(0);
  send(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
  json_t *r = response(f, 1);
  json_t *tool = json_array_get(json_object_get(json_object_get(r, "result"), "tools"), 0);
  assert_string_equal(json_string_value(json_object_get(tool, "name")), "execute_code");
  json_t *in = json_object_get(tool, "inputSchema");
  assert_string_equal(json_string_value(json_object_get(in, "type")), "object");
  assert_int_equal(json_array_size(json_object_get(in, "required")), 2);
  json_t *out = json_object_get(tool, "outputSchema");
  assert_non_null(json_object_get(json_object_get(out, "properties"), "exit_code"));
  json_t *ann = json_object_get(tool, "annotations");
  assert_true(json_is_false(json_object_get(ann, "readOnlyHint")));
  assert_true(json_is_false(json_object_get(ann, "openWorldHint")));
  json_decref(r);
  stop(f);
}

static void test_call_results(void **state) {
  (void)state;
  fixture *f = start(0);
  send(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
          "\"execute_code\",\"arguments\":{\"language\":\"sh\",\"code\":\"echo 42\"}}}");
  send(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
          "\"execute_code\",\"arguments\":{\"language\":\"sh\",\"code\":\"echo bad >&2; exit 3\"}}}");
  send(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
          "\"execute_code\",\"arguments\":{\"language\":\"cobol\",\"code\":\"x\"}}}");
  send(f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"nope\"}}");
  json_t *r = response(f, 1);
  json_t *res = json_object_get(r, "result");
  json_t *sc = json_object_get(res, "structuredContent");
  assert_true(json_is_false(json_object_get(res, "isError")));
  assert_int_equal(json_integer_value(json_object_get(sc, "exit_code")), 0);
  assert_string_equal(json_string_value(json_object_get(sc, "output")), "42\n");
  assert_string_equal(json_string_value(json_object_get(sc, "status")), "ok");
  /* The text block is the same JSON. */
  json_t *text = json_loads(json_string_value(json_object_get(
                                json_array_get(json_object_get(res, "content"), 0), "text")),
                            0, NULL);
  assert_true(json_equal(text, sc));
  json_decref(text);
  json_decref(r);
  r = response(f, 2);
  res = json_object_get(r, "result");
  assert_true(json_is_false(json_object_get(res, "isError"))); /* a failing program is a result */
  assert_int_equal(json_integer_value(json_object_get(json_object_get(res, "structuredContent"),
                                                      "exit_code")),
                   3);
  json_decref(r);
  r = response(f, 3);
  res = json_object_get(r, "result");
  assert_true(json_is_true(json_object_get(res, "isError")));
  assert_non_null(strstr(json_string_value(json_object_get(
                             json_array_get(json_object_get(res, "content"), 0), "text")),
                         "cobol"));
  json_decref(r);
  r = response(f, 4);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
  json_decref(r);
  stop(f);
}

static void test_protocol_errors(void **state) {
  (void)state;
  fixture *f = start(0);
  send(f, "{not json");
  send(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/list\"}");
  send(f, "[{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}]");
  send(f, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":[1]}");
  char *big = malloc((2 << 20) + 1);
  memset(big, ' ', 2 << 20);
  big[2 << 20] = '\0';
  send(f, big);
  free(big);
  json_t *r = response(f, 7);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32601);
  json_decref(r);
  r = response(f, 9);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32602);
  json_decref(r);
  /* The id-less errors: parse error, batch, too large. */
  int parse = 0, invalid = 0;
  size_t i;
  json_t *m;
  json_array_foreach(f->in.messages, i, m) {
    if (!json_is_null(json_object_get(m, "id")))
      continue;
    json_int_t code = json_integer_value(json_object_get(json_object_get(m, "error"), "code"));
    parse += code == -32700;
    invalid += code == -32600;
  }
  assert_int_equal(parse, 1);
  assert_int_equal(invalid, 2);
  stop(f);
}

static void test_progress_and_cancellation(void **state) {
  (void)state;
  fixture *f = start(0);
  char marker[64], msg[512];
  snprintf(marker, sizeof(marker), "987.8%d", (int)getpid());
  snprintf(msg, sizeof(msg),
           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
           "\"execute_code\",\"arguments\":{\"language\":\"sh\",\"code\":\"sleep %s\"},"
           "\"_meta\":{\"progressToken\":\"tok\"}}}",
           marker);
  send(f, msg);
  struct timespec ts = {0, 900 * 1000000L};
  nanosleep(&ts, NULL);
  int pids[4];
  assert_int_equal(eb_test_find_cmdline(marker, pids, 4), 1); /* it runs */
  send(f, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
          "{\"requestId\":1,\"reason\":\"test\"}}");
  send(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
  json_decref(response(f, 2));
  for (int i = 0; i < 100 && eb_test_find_cmdline(marker, pids, 4) > 0; i++)
    nanosleep(&(struct timespec){0, 20 * 1000000L}, NULL);
  assert_int_equal(eb_test_find_cmdline(marker, pids, 4), 0); /* killed */
  nanosleep(&(struct timespec){0, 300 * 1000000L}, NULL);
  int progress = 0, answered = 0;
  size_t i;
  json_t *m;
  pthread_mutex_lock(&f->in.lock);
  json_array_foreach(f->in.messages, i, m) {
    const char *method = json_string_value(json_object_get(m, "method"));
    if (method && strcmp(method, "notifications/progress") == 0) {
      assert_string_equal(json_string_value(json_object_get(json_object_get(m, "params"),
                                                            "progressToken")),
                          "tok");
      progress++;
    }
    answered += json_integer_value(json_object_get(m, "id")) == 1;
  }
  pthread_mutex_unlock(&f->in.lock);
  assert_true(progress >= 1);
  assert_int_equal(answered, 0); /* a cancelled call gets no response */
  stop(f);
}

static void test_concurrency_bounded_and_matched(void **state) {
  (void)state;
  fixture *f = start(2);
  int64_t t0 = eb_now_ns();
  for (int i = 1; i <= 3; i++) {
    char msg[256];
    snprintf(msg, sizeof(msg),
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":"
             "\"execute_code\",\"arguments\":{\"language\":\"sh\",\"code\":\"sleep 0.6; echo %d\"}}}",
             i, i);
    send(f, msg);
  }
  for (int i = 1; i <= 3; i++) {
    json_t *r = response(f, i);
    char want[8];
    snprintf(want, sizeof(want), "%d\n", i);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(r, "result"), "structuredContent"),
                            "output")),
                        want);
    json_decref(r);
  }
  /* Two at a time: the third waited for a slot (a lower bound only). */
  assert_true((eb_now_ns() - t0) / 1000000 >= 1100);
  stop(f);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_initialize_negotiates_versions),
    cmocka_unit_test(test_tools_list_schemas),
    cmocka_unit_test(test_call_results),
    cmocka_unit_test(test_protocol_errors),
    cmocka_unit_test(test_progress_and_cancellation),
    cmocka_unit_test(test_concurrency_bounded_and_matched),
};

EB_TEST_MAIN(tests)
