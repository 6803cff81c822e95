/* The OpenAI-compatible Chat Completions wire format (OpenAI, Ollama,
 * llama.cpp server, vLLM, OpenRouter, ...). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm_internal.h"
#include "core/util.h"

static json_t *message_json(const eb_message *m) {
  switch (m->role) {
  case EB_ROLE_USER:
    return json_pack("{s:s, s:s}", "role", "user", "content", m->content ? m->content : "");
  case EB_ROLE_TOOL:
    return json_pack("{s:s, s:s, s:s}", "role", "tool", "tool_call_id",
                     m->tool_call_id ? m->tool_call_id : "", "content",
                     m->content ? m->content : "");
  case EB_ROLE_ASSISTANT: {
    json_t *o = json_pack("{s:s}", "role", "assistant");
    /* null is allowed only beside tool calls */
    json_object_set_new(o, "content", m->content       ? json_string(m->content)
                                      : m->n_tool_calls ? json_null()
                                                        : json_string(""));
    if (m->n_tool_calls > 0) {
      json_t *calls = json_array();
      for (size_t i = 0; i < m->n_tool_calls; i++) {
        const eb_tool_call *t = &m->tool_calls[i];
        json_array_append_new(calls, json_pack("{s:s, s:s, s:{s:s, s:s}}", "id", t->id, "type",
                                               "function", "function", "name", t->name,
                                               "arguments", t->arguments ? t->arguments : ""));
      }
      json_object_set_new(o, "tool_calls", calls);
    }
    return o;
  }
  }
  return NULL;
}

static json_t *build(const llm_client *c, const eb_llm_request *req, bool stream) {
  json_t *msgs = json_array();
  if (req->system != NULL)
    json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", "system", "content", req->system));
  for (size_t i = 0; i < req->conv->n; i++)
    json_array_append_new(msgs, message_json(&req->conv->messages[i]));
  json_t *o = json_pack("{s:s, s:o, s:b}", "model", c->model, "messages", msgs, "stream", stream);
  if (req->n_tools > 0) {
    json_t *tools = json_array();
    for (size_t i = 0; i < req->n_tools; i++)
      json_array_append_new(tools, json_pack("{s:s, s:{s:s, s:s, s:o}}", "type", "function",
                                             "function", "name", req->tools[i]->name,
                                             "description", req->tools[i]->description,
                                             "parameters", llm_tool_schema(req->tools[i])));
    json_object_set_new(o, "tools", tools);
    if (req->tools_disabled)
      json_object_set_new(o, "tool_choice", json_string("none"));
  }
  return o;
}

static void headers(const llm_client *c, const char *out[5], char *buf, size_t size) {
  int n = 0;
  if (c->api_key != NULL) {
    snprintf(buf, size, "Authorization: Bearer %s", c->api_key);
    out[n++] = buf;
  }
  out[n] = NULL;
}

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

static int parse(json_t *body, eb_llm_response *res, eb_error **err) {
  json_t *choice = json_array_get(json_object_get(body, "choices"), 0);
  json_t *msg = json_object_get(choice, "message");
  if (!json_is_object(msg))
    return eb_error_set(err, EB_ERR_PROTOCOL, "reply without choices[0].message");
  eb_message *m = &res->message;
  m->role = EB_ROLE_ASSISTANT;
  const char *content = json_string_value(json_object_get(msg, "content"));
  if (content != NULL && content[0] != '\0')
    m->content = strdup(content);
  json_t *calls = json_object_get(msg, "tool_calls");
  size_t n = json_array_size(calls);
  if (n > 0) {
    m->tool_calls = calloc(n, sizeof(eb_tool_call));
    if (m->tool_calls == NULL)
      return eb_error_set(err, ENOMEM, "tool calls");
    for (size_t i = 0; i < n; i++) {
      json_t *c = json_array_get(calls, i), *f = json_object_get(c, "function");
      eb_tool_call *t = &m->tool_calls[m->n_tool_calls++];
      t->id = dup_or_empty(json_string_value(json_object_get(c, "id")));
      t->name = dup_or_empty(json_string_value(json_object_get(f, "name")));
      json_t *args = json_object_get(f, "arguments");
      /* Some servers send an object instead of the documented string. */
      t->arguments = json_is_string(args) ? strdup(json_string_value(args))
                     : args ? json_dumps(args, JSON_COMPACT)
                            : strdup("");
    }
  }
  snprintf(res->stop_reason, sizeof(res->stop_reason), "%s",
           json_string_value(json_object_get(choice, "finish_reason"))
               ? json_string_value(json_object_get(choice, "finish_reason"))
               : "");
  return 0;
}

static int stream_event(llm_stream *s, const char *event, json_t *data) {
  json_t *error = json_object_get(data, "error");
  if (error != NULL) {
    const char *msg = json_string_value(json_object_get(error, "message"));
    eb_error_set(&s->error, EB_ERR_LLM_PROVIDER, "error in stream: %s", msg ? msg : "unknown");
    return -1;
  }
  json_t *choice = json_array_get(json_object_get(data, "choices"), 0);
  if (choice == NULL)
    return 0; /* e.g. a usage-only chunk */
  json_t *delta = json_object_get(choice, "delta");
  const char *text = json_string_value(json_object_get(delta, "content"));
  if (text != NULL && llm_stream_text(s, text, strlen(text)) < 0)
    return -1;
  json_t *calls = json_object_get(delta, "tool_calls");
  for (size_t i = 0; i < json_array_size(calls); i++) {
    json_t *c = json_array_get(calls, i), *f = json_object_get(c, "function");
    json_t *idx = json_object_get(c, "index");
    llm_partial_call *p = llm_stream_call(s, idx ? (int)json_integer_value(idx) : (int)i);
    if (p == NULL)
      return -1;
    const char *id = json_string_value(json_object_get(c, "id"));
    const char *name = json_string_value(json_object_get(f, "name"));
    const char *args = json_string_value(json_object_get(f, "arguments"));
    if (id != NULL && p->id == NULL)
      p->id = strdup(id);
    if (name != NULL && p->name == NULL)
      p->name = strdup(name);
    if (args != NULL && llm_stream_add(s, &p->args, args, strlen(args)) < 0)
      return -1;
  }
  const char *finish = json_string_value(json_object_get(choice, "finish_reason"));
  if (finish != NULL) {
    snprintf(s->stop_reason, sizeof(s->stop_reason), "%s", finish);
    /* Some servers end without [DONE]: a finish reason is enough. */
    s->done = true;
  }
  (void)event;
  return 0;
}

static void error_info(json_t *body, const char **type, const char **message) {
  json_t *e = json_object_get(body, "error");
  if (json_is_string(e)) { /* some compatible servers: {"error": "text"} */
    *message = json_string_value(e);
    return;
  }
  *message = json_string_value(json_object_get(e, "message"));
  *type = json_string_value(json_object_get(e, "code"));
  if (*type == NULL)
    *type = json_string_value(json_object_get(e, "type"));
}

const llm_wire llm_wire_openai = {
    .name = "openai",
    .path = "/chat/completions",
    .build = build,
    .headers = headers,
    .parse = parse,
    .stream_event = stream_event,
    .error_info = error_info,
};
