/* The Anthropic Messages wire format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm_internal.h"
#include "core/util.h"

#define ANTHROPIC_VERSION "2023-06-01"

/* The blocks of one of our messages in Anthropic's terms. Tool results are
 * user content; consecutive messages of the same side are merged, since the
 * API wants user and assistant turns to alternate. */
static void append_blocks(json_t *blocks, const eb_message *m) {
  if (m->role == EB_ROLE_TOOL) {
    json_t *b = json_pack("{s:s, s:s, s:s}", "type", "tool_result", "tool_use_id",
                          m->tool_call_id ? m->tool_call_id : "", "content",
                          m->content ? m->content : "");
    if (m->is_error)
      json_object_set_new(b, "is_error", json_true());
    json_array_append_new(blocks, b);
    return;
  }
  if (m->content != NULL && m->content[0] != '\0')
    json_array_append_new(blocks, json_pack("{s:s, s:s}", "type", "text", "text", m->content));
  else if (m->n_tool_calls == 0) /* an empty reply still needs a block */
    json_array_append_new(blocks, json_pack("{s:s, s:s}", "type", "text", "text", "(no answer)"));
  for (size_t i = 0; i < m->n_tool_calls; i++) {
    const eb_tool_call *t = &m->tool_calls[i];
    json_t *input = t->arguments ? json_loads(t->arguments, 0, NULL) : NULL;
    if (!json_is_object(input)) { /* a malformed call is echoed with an empty input */
      json_decref(input);
      input = json_object();
    }
    json_array_append_new(blocks, json_pack("{s:s, s:s, s:s, s:o}", "type", "tool_use", "id",
                                            t->id, "name", t->name, "input", input));
  }
}

static json_t *build(const llm_client *c, const eb_llm_request *req, bool stream) {
  json_t *msgs = json_array();
  json_t *current = NULL;
  const char *current_role = NULL;
  for (size_t i = 0; i < req->conv->n; i++) {
    const eb_message *m = &req->conv->messages[i];
    const char *role = m->role == EB_ROLE_ASSISTANT ? "assistant" : "user";
    if (current == NULL || strcmp(role, current_role) != 0) {
      current = json_array();
      json_array_append_new(msgs, json_pack("{s:s, s:o}", "role", role, "content", current));
      current_role = role;
    }
    append_blocks(current, m);
  }
  json_t *o = json_pack("{s:s, s:i, s:o, s:b}", "model", c->model, "max_tokens", c->max_tokens,
                        "messages", msgs, "stream", stream);
  if (req->system != NULL)
    json_object_set_new(o, "system", json_string(req->system));
  if (req->n_tools > 0) {
    json_t *tools = json_array();
    for (size_t i = 0; i < req->n_tools; i++)
      json_array_append_new(tools, json_pack("{s:s, s:s, s:o}", "name", req->tools[i]->name,
                                             "description", req->tools[i]->description,
                                             "input_schema", llm_tool_schema(req->tools[i])));
    json_object_set_new(o, "tools", tools);
    if (req->tools_disabled)
      json_object_set_new(o, "tool_choice", json_pack("{s:s}", "type", "none"));
  }
  return o;
}

static void headers(const llm_client *c, const char *out[5], char *buf, size_t size) {
  snprintf(buf, size, "x-api-key: %s", c->api_key ? c->api_key : "");
  out[0] = buf;
  out[1] = "anthropic-version: " ANTHROPIC_VERSION;
  out[2] = NULL;
}

static int parse(json_t *body, eb_llm_response *res, eb_error **err) {
  json_t *content = json_object_get(body, "content");
  if (!json_is_array(content))
    return eb_error_set(err, EB_ERR_PROTOCOL, "reply without content");
  llm_stream s;
  memset(&s, 0, sizeof(s));
  int ret = 0;
  for (size_t i = 0; i < json_array_size(content); i++) {
    json_t *b = json_array_get(content, i);
    const char *type = json_string_value(json_object_get(b, "type"));
    if (type == NULL)
      continue;
    if (strcmp(type, "text") == 0) {
      const char *t = json_string_value(json_object_get(b, "text"));
      if (t != NULL && eb_buf_append(&s.text, t, strlen(t)) < 0)
        ret = eb_error_set(err, ENOMEM, "reply text");
    } else if (strcmp(type, "tool_use") == 0) {
      llm_partial_call *p = llm_stream_call(&s, (int)i);
      if (p == NULL) {
        ret = eb_error_set(err, ENOMEM, "tool calls");
        break;
      }
      const char *id = json_string_value(json_object_get(b, "id"));
      const char *name = json_string_value(json_object_get(b, "name"));
      p->id = strdup(id ? id : "");
      p->name = strdup(name ? name : "");
      json_t *input = json_object_get(b, "input");
      /* input should be an object; anything else is passed on as it is,
       * for the agent to report as malformed arguments. */
      char *args = json_is_string(input) ? strdup(json_string_value(input))
                   : input ? json_dumps(input, JSON_COMPACT | JSON_ENCODE_ANY)
                           : strdup("");
      if (args != NULL) {
        eb_buf_append(&p->args, args, strlen(args));
        free(args);
      }
    }
  }
  const char *stop = json_string_value(json_object_get(body, "stop_reason"));
  snprintf(s.stop_reason, sizeof(s.stop_reason), "%s", stop ? stop : "");
  if (ret == 0)
    ret = llm_stream_to_message(&s, res, err);
  llm_stream_free(&s);
  return ret;
}

static int stream_event(llm_stream *s, const char *event, json_t *data) {
  const char *type = json_string_value(json_object_get(data, "type"));
  if (type == NULL)
    type = event;
  if (strcmp(type, "error") == 0) {
    json_t *e = json_object_get(data, "error");
    const char *etype = json_string_value(json_object_get(e, "type"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    int code = etype && (strcmp(etype, "overloaded_error") == 0 || strcmp(etype, "api_error") == 0)
                   ? EB_ERR_LLM_PROVIDER
               : etype && strcmp(etype, "rate_limit_error") == 0 ? EB_ERR_LLM_RATE_LIMIT
                                                                 : EB_ERR_LLM_PROVIDER;
    eb_error_set(&s->error, code, "error in stream: %s: %s", etype ? etype : "error",
                 msg ? msg : "");
    return -1;
  }
  if (strcmp(type, "content_block_start") == 0) {
    json_t *b = json_object_get(data, "content_block");
    const char *btype = json_string_value(json_object_get(b, "type"));
    if (btype != NULL && strcmp(btype, "tool_use") == 0) {
      int index = (int)json_integer_value(json_object_get(data, "index"));
      llm_partial_call *p = llm_stream_call(s, index);
      if (p == NULL)
        return -1;
      const char *id = json_string_value(json_object_get(b, "id"));
      const char *name = json_string_value(json_object_get(b, "name"));
      free(p->id); /* a repeated start replaces, not leaks */
      free(p->name);
      p->id = strdup(id ? id : "");
      p->name = strdup(name ? name : "");
    }
  } else if (strcmp(type, "content_block_delta") == 0) {
    json_t *d = json_object_get(data, "delta");
    const char *dtype = json_string_value(json_object_get(d, "type"));
    if (dtype == NULL)
      return 0;
    if (strcmp(dtype, "text_delta") == 0) {
      const char *t = json_string_value(json_object_get(d, "text"));
      if (t != NULL && llm_stream_text(s, t, strlen(t)) < 0)
        return -1;
    } else if (strcmp(dtype, "input_json_delta") == 0) {
      int index = (int)json_integer_value(json_object_get(data, "index"));
      llm_partial_call *p = llm_stream_call(s, index);
      const char *part = json_string_value(json_object_get(d, "partial_json"));
      if (p == NULL || (part != NULL && llm_stream_add(s, &p->args, part, strlen(part)) < 0))
        return -1;
    }
  } else if (strcmp(type, "message_delta") == 0) {
    const char *stop = json_string_value(json_object_get(json_object_get(data, "delta"), "stop_reason"));
    if (stop != NULL)
      snprintf(s->stop_reason, sizeof(s->stop_reason), "%s", stop);
  } else if (strcmp(type, "message_stop") == 0) {
    s->done = true;
  }
  return 0;
}

static void error_info(json_t *body, const char **type, const char **message) {
  json_t *e = json_object_get(body, "error");
  *type = json_string_value(json_object_get(e, "type"));
  *message = json_string_value(json_object_get(e, "message"));
}

const llm_wire llm_wire_anthropic = {
    .name = "anthropic",
    .path = "/v1/messages",
    .build = build,
    .headers = headers,
    .parse = parse,
    .stream_event = stream_event,
    .error_info = error_info,
};
