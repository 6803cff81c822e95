/* The MCP server core: JSON-RPC 2.0 messages in, responses and
 * notifications out, execute_code calls run on worker threads with
 * progress and cancellation. Transports live in the front-end. */
#include <execbox/mcp.h>

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <execbox/context.h>
#include <execbox/execbox.h>
#include <execbox/tool.h>

#include "core/utf8.h"
#include "core/util.h"

#define DEFAULT_MAX_CONCURRENT 4
#define DEFAULT_MAX_PENDING 64
#define DEFAULT_MAX_MESSAGE (4u << 20)
#define DEFAULT_PROGRESS_MS 500

/* JSON-RPC error codes. */
enum {
  RPC_PARSE_ERROR = -32700,
  RPC_INVALID_REQUEST = -32600,
  RPC_METHOD_NOT_FOUND = -32601,
  RPC_INVALID_PARAMS = -32602,
  RPC_INTERNAL_ERROR = -32603,
};

static const char *const supported_versions[] = {EB_MCP_PROTOCOL_VERSION, "2025-06-18",
                                                 "2025-03-26", "2024-11-05"};

static const char instructions[] =
    "execbox runs code in a fresh, isolated sandbox and returns its real output. Call "
    "execute_code with a short, self-contained program that prints its results whenever an "
    "answer depends on a computation or on data; never guess what code would print. There is no "
    "network and nothing persists between calls.";

typedef struct call {
  struct call *next;
  char *id;        /* JSON text of the request id */
  json_t *token;   /* progressToken, or NULL */
  eb_ctx *ctx;
  char *language, *code;
  int64_t started; /* 0 while waiting for a slot */
  int progress_sent;
  bool cancelled;
  bool finished; /* its response (or end) is sent: no progress after it */
  struct eb_mcp *mcp;
} call;

struct eb_mcp {
  eb_mcp_options o;
  eb_tool *tool; /* for the description and the input schema */
  eb_mcp_send_fn send;
  void *user;
  pthread_mutex_t lock;     /* calls, counters, version */
  pthread_mutex_t send_lock;
  pthread_cond_t changed;   /* a slot freed, a worker ended, shutting down */
  call *calls;
  int running, pending;
  bool stopping;
  pthread_t ticker;
  bool ticker_started;
  char version[16];
};

/* ------------------------------------------------------------- sending */

static void send_json(eb_mcp *m, json_t *msg, const char *related, bool final) {
  char *text = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
  json_decref(msg);
  if (text == NULL)
    return;
  pthread_mutex_lock(&m->send_lock);
  m->send(m->user, text, related, final);
  pthread_mutex_unlock(&m->send_lock);
  free(text);
}

/* id: a borrowed JSON value or NULL for null. */
static void send_error(eb_mcp *m, json_t *id, int code, const char *message) {
  json_t *msg = json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
                          id ? id : json_null(), "error", "code", code, "message", message);
  char *related = id ? json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  send_json(m, msg, related, true);
  free(related);
}

static void send_result(eb_mcp *m, json_t *id, json_t *result) {
  json_t *msg = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
  char *related = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
  send_json(m, msg, related, true);
  free(related);
}

/* --------------------------------------------------------------- tools */

static json_t *output_schema(void) {
  return json_pack(
      "{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s}, s:{s:s, s:s},"
      " s:{s:s, s:s}}, s:[s,s,s,s,s]}",
      "type", "object", "properties",
      "exit_code", "type", "integer", "description", "the program's exit code (128+N if killed by signal N)",
      "output", "type", "string", "description", "stdout and stderr interleaved, capped (head and tail kept)",
      "status", "type", "string", "description",
      "ok, nonzero_exit, compile_error, timeout, memory_limit, output_limit, killed, cancelled",
      "truncated", "type", "boolean", "description", "output was cut",
      "duration_ms", "type", "integer", "description", "wall time of the execution",
      "timed_out", "type", "boolean", "description", "the time limit ended the program",
      "required", "exit_code", "output", "status", "truncated", "duration_ms");
}

static json_t *tools_list(eb_mcp *m) {
  json_t *input = json_loads(m->tool->parameters, 0, NULL);
  json_t *tool = json_pack("{s:s, s:s, s:s, s:o, s:o, s:{s:s, s:b, s:b, s:b, s:b}}", "name",
                           "execute_code", "title", "Execute code", "description",
                           m->tool->description, "inputSchema", input ? input : json_object(),
                           "outputSchema", output_schema(), "annotations", "title",
                           "Execute code", "readOnlyHint", 0, "destructiveHint", 0,
                           "idempotentHint", 0, "openWorldHint", 0);
  return json_pack("{s:[o]}", "tools", tool);
}

/* A tools/call result: the structured object and the same as text. */
static json_t *call_result(json_t *structured, bool is_error) {
  char *text = json_dumps(structured, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_t *r = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text",
                        text ? text : "{}", "structuredContent", structured, "isError", is_error);
  free(text);
  return r;
}

/* An execution that could not happen: isError with a message (the spec's
 * "tool execution error", which the model can see). */
static json_t *error_result(const char *message) {
  return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", message,
                   "isError", 1);
}

static void call_free(call *c) {
  eb_ctx_free(c->ctx);
  json_decref(c->token);
  free(c->id);
  free(c->language);
  free(c->code);
  free(c);
}

static void finish_call(eb_mcp *m, call *c) {
  pthread_mutex_lock(&m->lock);
  for (call **p = &m->calls; *p != NULL; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      break;
    }
  if (c->started)
    m->running--;
  m->pending--;
  pthread_cond_broadcast(&m->changed);
  pthread_mutex_unlock(&m->lock);
  call_free(c);
}

static void *worker(void *arg) {
  call *c = arg;
  eb_mcp *m = c->mcp;
  /* Wait for a slot: at most max_concurrent executions at once. */
  pthread_mutex_lock(&m->lock);
  while (m->running >= m->o.max_concurrent && !c->cancelled && !m->stopping)
    pthread_cond_wait(&m->changed, &m->lock);
  bool go = !c->cancelled && !m->stopping;
  if (go) {
    m->running++;
    c->started = eb_now_ns();
  }
  pthread_mutex_unlock(&m->lock);

  json_t *result = NULL;
  if (go) {
    eb_exec_request req = {.language = c->language, .code = c->code, .limits = m->o.limits};
    eb_exec_result res;
    memset(&res, 0, sizeof(res));
    eb_error *err = NULL;
    if (eb_runtime_execute(m->o.runtime, c->ctx, &req, &res, &err) < 0) {
      result = error_result(err->msg);
    } else {
      size_t omitted = 0, clean_len = 0;
      char *clean = eb_utf8_sanitize(res.output, res.output_len, false, &clean_len);
      char *out = clean ? eb_cap_output(clean, clean_len, m->o.output_cap, &omitted) : NULL;
      free(clean);
      json_t *s = json_pack("{s:i, s:s?, s:s, s:b, s:I}", "exit_code", res.exit_code, "output",
                            out, "status", eb_status_name(res.status), "truncated",
                            res.truncated || omitted > 0, "duration_ms",
                            (json_int_t)res.duration_ms);
      if (s != NULL && res.status == EB_STATUS_TIMEOUT)
        json_object_set_new(s, "timed_out", json_true());
      free(out);
      result = s ? call_result(s, false) : error_result("could not encode the result");
    }
    eb_error_free(err);
    eb_exec_result_clear(&res);
  }
  /* A cancelled request gets no response at all. The send lock is held
   * from marking the call finished to sending, so that no progress
   * notification can follow the response. */
  pthread_mutex_lock(&m->send_lock);
  pthread_mutex_lock(&m->lock);
  bool cancelled = c->cancelled;
  c->finished = true;
  pthread_mutex_unlock(&m->lock);
  char *text = NULL;
  if (!cancelled && result != NULL) {
    json_t *id = json_loads(c->id, JSON_DECODE_ANY, NULL);
    json_t *msg = json_pack("{s:s, s:o, s:o}", "jsonrpc", "2.0", "id", id, "result", result);
    text = msg ? json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(msg);
  } else {
    json_decref(result);
  }
  /* NULL: the request is over without a response; transports stop waiting. */
  m->send(m->user, text, c->id, true);
  pthread_mutex_unlock(&m->send_lock);
  free(text);
  finish_call(m, c);
  return NULL;
}

/* Progress for every running call that asked for it. */
static void *ticker(void *arg) {
  eb_mcp *m = arg;
  pthread_mutex_lock(&m->lock);
  while (!m->stopping) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)m->o.progress_interval_ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_cond_timedwait(&m->changed, &m->lock, &until);
    if (m->stopping)
      break;
    /* Collect under the lock, send without it. */
    json_t *batch = json_array();
    for (call *c = m->calls; c != NULL; c = c->next) {
      if (c->token == NULL || c->started == 0 || c->cancelled)
        continue;
      double secs = (double)(eb_now_ns() - c->started) / 1e9;
      if (secs * 1000 < m->o.progress_interval_ms * (c->progress_sent + 1) - 1)
        continue;
      c->progress_sent++;
      char message[64];
      snprintf(message, sizeof(message), "running for %.1f s", secs);
      json_t *n = json_pack("{s:s, s:s, s:{s:O, s:f, s:s}}", "jsonrpc", "2.0", "method",
                            "notifications/progress", "params", "progressToken", c->token,
                            "progress", secs, "message", message);
      json_array_append_new(batch, json_pack("{s:o, s:s}", "msg", n, "id", c->id));
    }
    pthread_mutex_unlock(&m->lock);
    size_t i;
    json_t *item;
    json_array_foreach(batch, i, item) {
      const char *id = json_string_value(json_object_get(item, "id"));
      char *text = json_dumps(json_object_get(item, "msg"),
                              JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
      pthread_mutex_lock(&m->send_lock);
      pthread_mutex_lock(&m->lock);
      bool live = false; /* still in flight and not answered */
      for (call *c = m->calls; c != NULL && !live; c = c->next)
        live = strcmp(c->id, id) == 0 && !c->finished && !c->cancelled;
      pthread_mutex_unlock(&m->lock);
      if (live && text != NULL)
        m->send(m->user, text, id, false);
      pthread_mutex_unlock(&m->send_lock);
      free(text);
    }
    json_decref(batch);
    pthread_mutex_lock(&m->lock);
  }
  pthread_mutex_unlock(&m->lock);
  return NULL;
}

/* ----------------------------------------------------------- dispatch */

static void handle_initialize(eb_mcp *m, json_t *id, json_t *params) {
  const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
  const char *version = EB_MCP_PROTOCOL_VERSION;
  for (size_t i = 0; asked != NULL && i < EB_ARRAY_SIZE(supported_versions); i++)
    if (strcmp(asked, supported_versions[i]) == 0)
      version = supported_versions[i]; /* a version the client asked for and we speak */
  pthread_mutex_lock(&m->lock);
  snprintf(m->version, sizeof(m->version), "%s", version);
  pthread_mutex_unlock(&m->lock);
  json_t *result = json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s, s:s}, s:s}", "protocolVersion",
                             version, "capabilities", "tools", "listChanged", 0, "serverInfo",
                             "name", "execbox", "title", "execbox code execution", "version",
                             eb_version(), "instructions", instructions);
  send_result(m, id, result);
}

static void handle_call(eb_mcp *m, json_t *id, json_t *params) {
  const char *name = json_string_value(json_object_get(params, "name"));
  if (name == NULL) {
    send_error(m, id, RPC_INVALID_PARAMS, "tools/call needs params.name");
    return;
  }
  if (strcmp(name, "execute_code") != 0) {
    char msg[160];
    snprintf(msg, sizeof(msg), "unknown tool: %.100s", name);
    send_error(m, id, RPC_INVALID_PARAMS, msg);
    return;
  }
  json_t *args = json_object_get(params, "arguments");
  const char *language = json_string_value(json_object_get(args, "language"));
  const char *code = json_string_value(json_object_get(args, "code"));
  if (language == NULL || code == NULL) {
    send_result(m, id, error_result("execute_code needs string arguments \"language\" and \"code\""));
    return;
  }
  if (eb_language_find(language) == NULL ||
      !eb_language_available(eb_language_find(language), NULL)) {
    char msg[200];
    snprintf(msg, sizeof(msg), "language `%.60s` is not available; use one of the enum values", language);
    send_result(m, id, error_result(msg));
    return;
  }
  call *c = calloc(1, sizeof(*c));
  if (c == NULL) {
    send_error(m, id, RPC_INTERNAL_ERROR, "out of memory");
    return;
  }
  c->mcp = m;
  c->id = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
  c->language = strdup(language);
  c->code = strdup(code);
  json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
  c->token = token ? json_incref(token) : NULL;
  eb_error *err = NULL;
  if (c->id == NULL || c->language == NULL || c->code == NULL ||
      eb_ctx_new(NULL, 0, &c->ctx, &err) < 0) {
    eb_error_free(err);
    json_decref(c->token);
    free(c->id);
    free(c->language);
    free(c->code);
    free(c);
    send_error(m, id, RPC_INTERNAL_ERROR, "out of memory");
    return;
  }
  pthread_mutex_lock(&m->lock);
  bool full = m->pending >= m->o.max_pending || m->stopping;
  bool duplicate = false;
  for (call *o = m->calls; o != NULL && !duplicate; o = o->next)
    duplicate = strcmp(o->id, c->id) == 0;
  if (!full && !duplicate) {
    c->next = m->calls;
    m->calls = c;
    m->pending++;
  }
  pthread_mutex_unlock(&m->lock);
  if (full || duplicate) {
    call_free(c);
    send_error(m, id, duplicate ? RPC_INVALID_REQUEST : RPC_INTERNAL_ERROR,
               duplicate ? "a request with this id is already in flight"
                         : "too many calls in flight; retry later");
    return;
  }
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &attr, worker, c) != 0) {
    pthread_attr_destroy(&attr);
    send_error(m, id, RPC_INTERNAL_ERROR, "cannot start a worker");
    finish_call(m, c);
    return;
  }
  pthread_attr_destroy(&attr);
}

static void handle_cancelled(eb_mcp *m, json_t *params) {
  json_t *rid = json_object_get(params, "requestId");
  if (rid == NULL)
    return;
  char *key = json_dumps(rid, JSON_COMPACT | JSON_ENCODE_ANY);
  if (key == NULL)
    return;
  pthread_mutex_lock(&m->lock);
  for (call *c = m->calls; c != NULL; c = c->next)
    if (strcmp(c->id, key) == 0) {
      c->cancelled = true;
      eb_ctx_cancel(c->ctx); /* kills the code if it runs */
    }
  pthread_cond_broadcast(&m->changed); /* a waiting call gives up its turn */
  pthread_mutex_unlock(&m->lock);
  free(key);
}

EB_EXPORT bool eb_mcp_handle(eb_mcp *m, const char *message, size_t len) {
  if (len > m->o.max_message_bytes) {
    send_error(m, NULL, RPC_INVALID_REQUEST, "message too large");
    return false;
  }
  json_error_t jerr;
  json_t *msg = json_loadb(message, len, 0, &jerr);
  if (msg == NULL) {
    send_error(m, NULL, RPC_PARSE_ERROR, "parse error: malformed JSON");
    return false;
  }
  bool ok = true;
  json_t *id = json_object_get(msg, "id");
  json_t *method = json_object_get(msg, "method");
  json_t *params = json_object_get(msg, "params");
  if (!json_is_object(msg) || !json_is_string(json_object_get(msg, "jsonrpc")) ||
      strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0) {
    send_error(m, json_is_object(msg) && (json_is_string(id) || json_is_integer(id)) ? id : NULL,
               RPC_INVALID_REQUEST, json_is_array(msg) ? "batches are not supported"
                                                       : "not a JSON-RPC 2.0 message");
    ok = false;
  } else if (method == NULL) {
    /* A response from the client (we send no requests): nothing to do. */
  } else if (!json_is_string(method) ||
             (id != NULL && !json_is_string(id) && !json_is_integer(id))) {
    send_error(m, json_is_string(id) || json_is_integer(id) ? id : NULL, RPC_INVALID_REQUEST,
               "invalid request");
    ok = false;
  } else if (params != NULL && !json_is_object(params)) {
    if (id != NULL)
      send_error(m, id, RPC_INVALID_PARAMS, "params must be an object");
    ok = false;
  } else {
    const char *name = json_string_value(method);
    if (id == NULL) { /* notifications: never answered */
      if (strcmp(name, "notifications/cancelled") == 0)
        handle_cancelled(m, params);
    } else if (strcmp(name, "initialize") == 0) {
      handle_initialize(m, id, params);
    } else if (strcmp(name, "ping") == 0) {
      send_result(m, id, json_object());
    } else if (strcmp(name, "tools/list") == 0) {
      send_result(m, id, tools_list(m));
    } else if (strcmp(name, "tools/call") == 0) {
      handle_call(m, id, params);
    } else {
      send_error(m, id, RPC_METHOD_NOT_FOUND, "method not found");
      ok = false;
    }
  }
  json_decref(msg);
  return ok;
}

EB_EXPORT const char *eb_mcp_negotiated_version(eb_mcp *m) {
  return m->version[0] ? m->version : NULL;
}

EB_EXPORT int eb_mcp_new(const eb_mcp_options *opts, eb_mcp_send_fn send, void *user,
                         eb_mcp **out, eb_error **err) {
  if (opts == NULL || opts->runtime == NULL || send == NULL)
    return eb_error_set(err, EINVAL, "an MCP server needs a runtime and a send function");
  eb_mcp *m = calloc(1, sizeof(*m));
  if (m == NULL)
    return eb_error_set(err, ENOMEM, "allocate the MCP server");
  m->o = *opts;
  if (m->o.output_cap == 0)
    m->o.output_cap = EB_DEFAULT_TOOL_OUTPUT_CAP;
  if (m->o.max_concurrent <= 0)
    m->o.max_concurrent = DEFAULT_MAX_CONCURRENT;
  if (m->o.max_pending <= 0)
    m->o.max_pending = DEFAULT_MAX_PENDING;
  if (m->o.max_message_bytes == 0)
    m->o.max_message_bytes = DEFAULT_MAX_MESSAGE;
  if (m->o.progress_interval_ms <= 0)
    m->o.progress_interval_ms = DEFAULT_PROGRESS_MS;
  m->send = send;
  m->user = user;
  pthread_mutex_init(&m->lock, NULL);
  pthread_mutex_init(&m->send_lock, NULL);
  pthread_cond_init(&m->changed, NULL);
  int r = eb_execute_code_tool_new(m->o.runtime, NULL, &m->tool, err);
  if (r == 0 && pthread_create(&m->ticker, NULL, ticker, m) != 0)
    r = eb_error_set(err, EAGAIN, "start the progress thread");
  else if (r == 0)
    m->ticker_started = true;
  if (r < 0) {
    eb_mcp_free(m);
    return r;
  }
  *out = m;
  return 0;
}

EB_EXPORT void eb_mcp_cancel_all(eb_mcp *m) {
  pthread_mutex_lock(&m->lock);
  for (call *c = m->calls; c != NULL; c = c->next) {
    c->cancelled = true;
    eb_ctx_cancel(c->ctx);
  }
  pthread_cond_broadcast(&m->changed);
  pthread_mutex_unlock(&m->lock);
}

EB_EXPORT void eb_mcp_free(eb_mcp *m) {
  if (m == NULL)
    return;
  pthread_mutex_lock(&m->lock);
  m->stopping = true;
  for (call *c = m->calls; c != NULL; c = c->next) {
    c->cancelled = true;
    eb_ctx_cancel(c->ctx);
  }
  pthread_cond_broadcast(&m->changed);
  while (m->pending > 0)
    pthread_cond_wait(&m->changed, &m->lock);
  pthread_mutex_unlock(&m->lock);
  if (m->ticker_started)
    pthread_join(m->ticker, NULL);
  eb_tool_free(m->tool);
  pthread_cond_destroy(&m->changed);
  pthread_mutex_destroy(&m->send_lock);
  pthread_mutex_destroy(&m->lock);
  free(m);
}
