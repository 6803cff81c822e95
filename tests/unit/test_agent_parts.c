/* Unit tests of the agent's building blocks that need no server: the SSE
 * parser, output capping, the execute_code tool's result, Retry-After
 * parsing and the two wire formats' request bodies. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include <execbox/execbox.h>

#include "core/http.h"
#include "agent/llm_internal.h"
#include "agent/sse.h"
#include "runner.h"

typedef struct collected {
  char events[16][64];
  char data[16][256];
  int n;
} collected;

static int collect(void *user, const char *event, const char *data, size_t len) {
  collected *c = user;
  if (c->n < 16) {
    snprintf(c->events[c->n], sizeof(c->events[0]), "%s", event);
    snprintf(c->data[c->n], sizeof(c->data[0]), "%.*s", (int)len, data);
    c->n++;
  }
  return 0;
}

static void test_sse_events_split_anywhere(void **state) {
  (void)state;
  const char *stream = "event: message_start\r\ndata: {\"a\":1}\r\n\r\n: keep-alive\n\n"
                       "data: line1\ndata: line2\n\nevent: x\ndata:no-space\n\n";
  /* Feed the same stream in every chunk size: results must not change. */
  for (size_t chunk = 1; chunk <= strlen(stream); chunk++) {
    collected c = {0};
    eb_sse p;
    eb_sse_init(&p, 4096, collect, &c);
    for (size_t off = 0; off < strlen(stream); off += chunk) {
      size_t n = strlen(stream) - off < chunk ? strlen(stream) - off : chunk;
      assert_int_equal(eb_sse_feed(&p, stream + off, n), 0);
    }
    assert_int_equal(eb_sse_finish(&p), 0);
    eb_sse_free(&p);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.events[0], "message_start");
    assert_string_equal(c.data[0], "{\"a\":1}");
    assert_string_equal(c.events[1], "message");
    assert_string_equal(c.data[1], "line1\nline2");
    assert_string_equal(c.events[2], "x");
    assert_string_equal(c.data[2], "no-space");
  }
}

static void test_sse_final_event_without_blank_line(void **state) {
  (void)state;
  collected c = {0};
  eb_sse p;
  eb_sse_init(&p, 4096, collect, &c);
  assert_int_equal(eb_sse_feed(&p, "data: [DONE]", 12), 0);
  assert_int_equal(c.n, 0);
  assert_int_equal(eb_sse_finish(&p), 0);
  assert_int_equal(c.n, 1);
  assert_string_equal(c.data[0], "[DONE]");
  eb_sse_free(&p);
}

static void test_sse_oversized_event_stops(void **state) {
  (void)state;
  collected c = {0};
  eb_sse p;
  eb_sse_init(&p, 64, collect, &c);
  char big[200];
  memset(big, 'x', sizeof(big));
  assert_int_equal(eb_sse_feed(&p, "data: ", 6), 0);
  assert_int_equal(eb_sse_feed(&p, big, sizeof(big)), -1);
  assert_int_equal(eb_sse_feed(&p, "\n\n", 2), -1);
  assert_int_equal(c.n, 0);
  eb_sse_free(&p);
}

static void test_cap_output_keeps_head_and_tail(void **state) {
  (void)state;
  char text[1000];
  for (int i = 0; i < 1000; i++)
    text[i] = (char)('a' + i % 26);
  size_t omitted = 0;
  char *out = eb_cap_output(text, sizeof(text), 100, &omitted);
  assert_non_null(out);
  assert_int_equal(omitted, 900);
  assert_memory_equal(out, text, 50);
  assert_non_null(strstr(out, "[... 900 bytes omitted ...]"));
  size_t n = strlen(out);
  assert_memory_equal(out + n - 50, text + 950, 50);
  free(out);
  out = eb_cap_output("short", 5, 100, &omitted);
  assert_string_equal(out, "short");
  assert_int_equal(omitted, 0);
  free(out);
}

static void test_cap_output_never_splits_utf8(void **state) {
  (void)state;
  /* 300 two-byte characters; a cut at an odd offset would split one. */
  char text[600];
  for (int i = 0; i < 300; i++) {
    text[2 * i] = (char)0xC3;
    text[2 * i + 1] = (char)0xA9; /* é */
  }
  char *out = eb_cap_output(text, sizeof(text), 101, NULL);
  assert_non_null(out);
  json_t *j = json_string(out); /* jansson rejects invalid UTF-8 */
  assert_non_null(j);
  json_decref(j);
  free(out);
}

static void test_retry_after_parsing(void **state) {
  (void)state;
  assert_int_equal(eb_http_parse_retry_after("2"), 2000);
  assert_int_equal(eb_http_parse_retry_after("0.25"), 250);
  assert_int_equal(eb_http_parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), -1);
  assert_int_equal(eb_http_parse_retry_after("-1"), -1);
}

static void test_execute_code_result_is_compact(void **state) {
  (void)state;
  eb_runtime *rt = NULL;
  eb_tool *tool = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_runtime_new("local", &rt, &err), 0);
  eb_execute_code_options o = {.output_cap = 64};
  assert_int_equal(eb_execute_code_tool_new(rt, &o, &tool, &err), 0);
  assert_string_equal(tool->name, "execute_code");
  json_t *schema = json_loads(tool->parameters, 0, NULL);
  json_t *langs = json_object_get(json_object_get(json_object_get(schema, "properties"),
                                                  "language"), "enum");
  assert_true(json_array_size(langs) >= 2); /* sh and bash at least */
  json_decref(schema);

  char *out = NULL;
  assert_int_equal(tool->ops->execute(tool, NULL, "{\"language\":\"sh\",\"code\":\"echo hi; exit 3\"}",
                                      &out, &err), 0);
  assert_string_equal(out, "{\"exit_code\":3,\"output\":\"hi\\n\"}");
  free(out);
  assert_int_equal(tool->ops->execute(tool, NULL,
                                      "{\"language\":\"sh\",\"code\":\"seq 1 1000\"}", &out, &err),
                   0);
  json_t *j = json_loads(out, 0, NULL);
  assert_true(json_is_true(json_object_get(j, "truncated")));
  assert_non_null(strstr(json_string_value(json_object_get(j, "output")), "bytes omitted"));
  json_decref(j);
  free(out);
  /* Bad arguments are an error (the agent turns it into a tool message). */
  assert_true(tool->ops->execute(tool, NULL, "{\"code\":\"x\"}", &out, &err) < 0);
  assert_int_equal(err->code, EB_ERR_USAGE);
  eb_error_free(err);
  eb_tool_free(tool);
  eb_runtime_free(rt);
}

/* A conversation with a tool round trip, as both wire formats encode it. */
static void make_conversation(eb_conversation *conv) {
  eb_error *err = NULL;
  assert_int_equal(eb_conversation_add_user(conv, "what is 6*7?", &err), 0);
  eb_message a = {.role = EB_ROLE_ASSISTANT, .n_tool_calls = 1};
  a.tool_calls = calloc(1, sizeof(eb_tool_call));
  a.tool_calls[0].id = strdup("call_1");
  a.tool_calls[0].name = strdup("execute_code");
  a.tool_calls[0].arguments = strdup("{\"language\":\"python\",\"code\":\"print(6*7)\"}");
  assert_int_equal(eb_conversation_push(conv, &a, &err), 0);
  eb_message t = {.role = EB_ROLE_TOOL, .content = strdup("{\"exit_code\":0,\"output\":\"42\\n\"}"),
                  .tool_call_id = strdup("call_1"), .tool_name = strdup("execute_code")};
  assert_int_equal(eb_conversation_push(conv, &t, &err), 0);
}

static void test_openai_request_body(void **state) {
  (void)state;
  eb_conversation conv = {0};
  make_conversation(&conv);
  eb_tool tool = {.name = "execute_code", .description = "d", .parameters = "{\"type\":\"object\"}"};
  eb_tool *tools[] = {&tool};
  eb_llm_request req = {.system = "sys", .conv = &conv, .tools = tools, .n_tools = 1,
                        .tools_disabled = true};
  llm_client c = {.wire = &llm_wire_openai, .model = "m"};
  json_t *b = llm_wire_openai.build(&c, &req, true);
  json_t *msgs = json_object_get(b, "messages");
  assert_int_equal(json_array_size(msgs), 4);
  assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 0), "role")), "system");
  json_t *asst = json_array_get(msgs, 2);
  assert_true(json_is_null(json_object_get(asst, "content")));
  json_t *call = json_array_get(json_object_get(asst, "tool_calls"), 0);
  assert_string_equal(json_string_value(json_object_get(json_object_get(call, "function"),
                                                        "arguments")),
                      "{\"language\":\"python\",\"code\":\"print(6*7)\"}");
  json_t *tool_msg = json_array_get(msgs, 3);
  assert_string_equal(json_string_value(json_object_get(tool_msg, "role")), "tool");
  assert_string_equal(json_string_value(json_object_get(tool_msg, "tool_call_id")), "call_1");
  assert_string_equal(json_string_value(json_object_get(b, "tool_choice")), "none");
  assert_true(json_is_true(json_object_get(b, "stream")));
  json_decref(b);
  eb_conversation_clear(&conv);
}

static void test_anthropic_request_body(void **state) {
  (void)state;
  eb_conversation conv = {0};
  make_conversation(&conv);
  eb_error *err = NULL;
  /* A second tool result in a row must merge into the same user turn. */
  eb_message t2 = {.role = EB_ROLE_TOOL, .content = strdup("oops"), .tool_call_id = strdup("c2"),
                   .tool_name = strdup("execute_code"), .is_error = true};
  assert_int_equal(eb_conversation_push(&conv, &t2, &err), 0);
  eb_tool tool = {.name = "execute_code", .description = "d", .parameters = "{\"type\":\"object\"}"};
  eb_tool *tools[] = {&tool};
  eb_llm_request req = {.system = "sys", .conv = &conv, .tools = tools, .n_tools = 1};
  llm_client c = {.wire = &llm_wire_anthropic, .model = "m", .max_tokens = 100};
  json_t *b = llm_wire_anthropic.build(&c, &req, false);
  assert_string_equal(json_string_value(json_object_get(b, "system")), "sys");
  json_t *msgs = json_object_get(b, "messages");
  assert_int_equal(json_array_size(msgs), 3); /* user, assistant, user (2 results) */
  json_t *use = json_array_get(json_object_get(json_array_get(msgs, 1), "content"), 0);
  assert_string_equal(json_string_value(json_object_get(use, "type")), "tool_use");
  assert_string_equal(json_string_value(json_object_get(json_object_get(use, "input"), "code")),
                      "print(6*7)");
  json_t *results = json_object_get(json_array_get(msgs, 2), "content");
  assert_int_equal(json_array_size(results), 2);
  assert_true(json_is_true(json_object_get(json_array_get(results, 1), "is_error")));
  assert_non_null(json_object_get(json_array_get(json_object_get(b, "tools"), 0), "input_schema"));
  assert_null(json_object_get(b, "tool_choice"));
  json_decref(b);
  eb_conversation_clear(&conv);
}

static void test_llm_new_needs_a_key(void **state) {
  (void)state;
  unsetenv("OPENAI_API_KEY");
  eb_llm *llm = NULL;
  eb_error *err = NULL;
  assert_true(eb_llm_new_from_spec("openai:gpt-x", false, &llm, &err) < 0);
  assert_int_equal(err->code, EB_ERR_LLM_AUTH);
  assert_non_null(strstr(err->msg, "OPENAI_API_KEY"));
  eb_error_free(err);
  err = NULL;
  assert_true(eb_llm_new_from_spec("nope", false, &llm, &err) < 0);
  assert_int_equal(err->code, EB_ERR_USAGE);
  eb_error_free(err);
  err = NULL;
  /* ollama needs none. */
  assert_int_equal(eb_llm_new_from_spec("ollama:llama3.2", false, &llm, &err), 0);
  eb_llm_free(llm);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sse_events_split_anywhere),
    cmocka_unit_test(test_sse_final_event_without_blank_line),
    cmocka_unit_test(test_sse_oversized_event_stops),
    cmocka_unit_test(test_cap_output_keeps_head_and_tail),
    cmocka_unit_test(test_cap_output_never_splits_utf8),
    cmocka_unit_test(test_retry_after_parsing),
    cmocka_unit_test(test_execute_code_result_is_compact),
    cmocka_unit_test(test_openai_request_body),
    cmocka_unit_test(test_anthropic_request_body),
    cmocka_unit_test(test_llm_new_needs_a_key),
};

EB_TEST_MAIN(tests)
