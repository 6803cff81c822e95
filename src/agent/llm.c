/* The LLM client core: construction from options or a "provider:model"
 * spec, the attempt loop with retries and backoff, error classification,
 * streaming glue, and conversation helpers. The wire formats live in
 * llm_openai.c and llm_anthropic.c. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/http.h"
#include "agent/llm_internal.h"
#include "agent/sse.h"
#include "core/util.h"

#define DEFAULT_MAX_TOKENS 4096
#define BACKOFF_BASE_MS 500
#define BACKOFF_MAX_MS 8000
#define MAX_SSE_EVENT (8u << 20)
/* A reply bigger than this, or with more tool calls, is not a model's: a
 * hostile or broken endpoint must not grow our memory without bound. */
#define MAX_REPLY_BYTES (16u << 20)
#define MAX_TOOL_CALLS 128

/* ------------------------------------------------------------ messages */

EB_EXPORT void eb_message_clear(eb_message *m) {
  if (m == NULL)
    return;
  free(m->content);
  for (size_t i = 0; i < m->n_tool_calls; i++) {
    free(m->tool_calls[i].id);
    free(m->tool_calls[i].name);
    free(m->tool_calls[i].arguments);
  }
  free(m->tool_calls);
  free(m->tool_call_id);
  free(m->tool_name);
  memset(m, 0, sizeof(*m));
}

EB_EXPORT void eb_conversation_clear(eb_conversation *conv) {
  if (conv == NULL)
    return;
  for (size_t i = 0; i < conv->n; i++)
    eb_message_clear(&conv->messages[i]);
  free(conv->messages);
  memset(conv, 0, sizeof(*conv));
}

int eb_conversation_push(eb_conversation *conv, eb_message *msg, eb_error **err) {
  if (conv->n == conv->cap) {
    size_t cap = conv->cap ? conv->cap * 2 : 8;
    eb_message *m = realloc(conv->messages, cap * sizeof(*m));
    if (m == NULL)
      return eb_error_set(err, ENOMEM, "grow the conversation");
    conv->messages = m;
    conv->cap = cap;
  }
  conv->messages[conv->n++] = *msg;
  memset(msg, 0, sizeof(*msg));
  return 0;
}

EB_EXPORT int eb_conversation_add_user(eb_conversation *conv, const char *text, eb_error **err) {
  eb_message m = {.role = EB_ROLE_USER, .content = strdup(text ? text : "")};
  if (m.content == NULL)
    return eb_error_set(err, ENOMEM, "copy the message");
  return eb_conversation_push(conv, &m, err);
}

/* -------------------------------------------------------------- streams */

llm_partial_call *llm_stream_call(llm_stream *s, int index) {
  for (size_t i = 0; i < s->n_calls; i++)
    if (s->calls[i].index == index)
      return &s->calls[i];
  if (s->n_calls >= MAX_TOOL_CALLS) {
    if (s->error == NULL)
      eb_error_set(&s->error, EB_ERR_PROTOCOL, "reply with more than %d tool calls", MAX_TOOL_CALLS);
    return NULL;
  }
  if (s->n_calls == s->cap_calls) {
    size_t cap = s->cap_calls ? s->cap_calls * 2 : 4;
    llm_partial_call *c = realloc(s->calls, cap * sizeof(*c));
    if (c == NULL)
      return NULL;
    s->calls = c;
    s->cap_calls = cap;
  }
  llm_partial_call *c = &s->calls[s->n_calls++];
  memset(c, 0, sizeof(*c));
  c->index = index;
  return c;
}

int llm_stream_add(llm_stream *s, eb_buf *b, const char *data, size_t len) {
  s->bytes += len;
  if (s->bytes > MAX_REPLY_BYTES) {
    if (s->error == NULL)
      eb_error_set(&s->error, EB_ERR_PROTOCOL, "reply larger than %u bytes", MAX_REPLY_BYTES);
    return -1;
  }
  return eb_buf_append(b, data, len);
}

int llm_stream_text(llm_stream *s, const char *text, size_t len) {
  if (len == 0)
    return 0;
  s->shown = true;
  s->bytes += len;
  if (s->bytes > MAX_REPLY_BYTES) {
    if (s->error == NULL)
      eb_error_set(&s->error, EB_ERR_PROTOCOL, "reply larger than %u bytes", MAX_REPLY_BYTES);
    return -1;
  }
  if (eb_buf_append(&s->text, text, len) < 0)
    return -1;
  if (s->on_text != NULL)
    s->on_text(s->user, text, len);
  return 0;
}

void llm_stream_free(llm_stream *s) {
  free(s->text.data);
  for (size_t i = 0; i < s->n_calls; i++) {
    free(s->calls[i].id);
    free(s->calls[i].name);
    free(s->calls[i].args.data);
  }
  free(s->calls);
  eb_error_free(s->error);
  memset(s, 0, sizeof(*s));
}

int llm_stream_to_message(llm_stream *s, eb_llm_response *res, eb_error **err) {
  eb_message *m = &res->message;
  m->role = EB_ROLE_ASSISTANT;
  if (s->text.len > 0) {
    m->content = steal_pointer(&s->text.data);
    s->text.len = s->text.alloc = 0;
  }
  if (s->n_calls > 0) {
    m->tool_calls = calloc(s->n_calls, sizeof(eb_tool_call));
    if (m->tool_calls == NULL)
      return eb_error_set(err, ENOMEM, "tool calls");
    for (size_t i = 0; i < s->n_calls; i++) {
      llm_partial_call *c = &s->calls[i];
      eb_tool_call *t = &m->tool_calls[m->n_tool_calls++];
      t->id = c->id ? steal_pointer(&c->id) : strdup("");
      t->name = c->name ? steal_pointer(&c->name) : strdup("");
      t->arguments = c->args.data ? steal_pointer(&c->args.data) : strdup("");
      c->args.len = c->args.alloc = 0;
      if (t->id == NULL || t->name == NULL || t->arguments == NULL)
        return eb_error_set(err, ENOMEM, "tool calls");
    }
  }
  snprintf(res->stop_reason, sizeof(res->stop_reason), "%s", s->stop_reason);
  return 0;
}

typedef struct stream_ctx {
  llm_client *client;
  llm_stream *stream;
  eb_sse sse;
} stream_ctx;

static int on_sse_event(void *user, const char *event, const char *data, size_t len) {
  stream_ctx *sc = user;
  if (strcmp(data, "[DONE]") == 0) {
    sc->stream->done = true;
    return 0;
  }
  json_error_t jerr;
  json_t *j = json_loadb(data, len, 0, &jerr);
  if (j == NULL) {
    eb_error_set(&sc->stream->error, EB_ERR_PROTOCOL, "malformed stream event: %s", jerr.text);
    return -1;
  }
  int r = sc->client->wire->stream_event(sc->stream, event, j);
  json_decref(j);
  return r;
}

static int on_stream_body(void *user, const char *data, size_t len) {
  stream_ctx *sc = user;
  return eb_sse_feed(&sc->sse, data, len);
}

/* -------------------------------------------------------- classification */

static bool contains_ci(const char *hay, const char *needle) {
  return hay != NULL && strcasestr(hay, needle) != NULL;
}

/* Turns an HTTP error into a classified error; says whether to retry. */
static int classify(const llm_client *c, const eb_http_response *hr, bool *retry, eb_error **err) {
  json_t *body = hr->body.data ? json_loadb(hr->body.data, hr->body.len, 0, NULL) : NULL;
  const char *type = NULL, *message = NULL;
  if (body != NULL)
    c->wire->error_info(body, &type, &message);
  char fallback[160];
  if (message == NULL) {
    snprintf(fallback, sizeof(fallback), "%.*s", hr->body.len > 150 ? 150 : (int)hr->body.len,
             hr->body.data ? hr->body.data : "");
    message = fallback;
  }
  long st = hr->status;
  int code;
  *retry = false;
  if (contains_ci(type, "insufficient_quota") || contains_ci(type, "billing") ||
      contains_ci(message, "exceeded your current quota") || contains_ci(message, "credit balance") ||
      contains_ci(message, "spend limit") || contains_ci(message, "billing")) {
    code = EB_ERR_LLM_QUOTA; /* retrying cannot help */
  } else if (st == 401 || st == 403 || contains_ci(type, "authentication") ||
             contains_ci(type, "permission")) {
    code = EB_ERR_LLM_AUTH;
  } else if (contains_ci(type, "context_length") || contains_ci(message, "context length") ||
             contains_ci(message, "context window") || contains_ci(message, "prompt is too long") ||
             contains_ci(message, "maximum context")) {
    code = EB_ERR_LLM_CONTEXT;
  } else if (st == 429) {
    code = EB_ERR_LLM_RATE_LIMIT;
    *retry = true;
  } else {
    code = EB_ERR_LLM_PROVIDER;
    *retry = st == 408 || st == 409 || st >= 500;
  }
  int r = eb_error_set(err, code, "%s returned HTTP %ld%s%s: %s", c->provider, st,
                       type ? " " : "", type ? type : "", message);
  json_decref(body);
  return r;
}

/* Waits ms unless ctx ends first. Returns 0, or < 0 with the reason. */
static int ctx_sleep(eb_ctx *ctx, int64_t ms, eb_error **err) {
  int64_t until = eb_now_ns() + ms * 1000000LL;
  int fds[32];
  int n = eb_ctx_cancel_fds(ctx, fds, 32);
  if (n > 32)
    n = 32; /* deeper chains are still seen by eb_ctx_state_now, once a second */
  struct pollfd pfd[32];
  for (int i = 0; i < n; i++)
    pfd[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
  for (;;) {
    eb_ctx_state st = eb_ctx_state_now(ctx);
    if (st == EB_CTX_CANCELLED)
      return eb_error_set(err, EB_ERR_CANCELLED, "cancelled while waiting to retry");
    if (st == EB_CTX_DEADLINE)
      return eb_error_set(err, EB_ERR_TIMEOUT, "timed out while waiting to retry");
    int64_t left = (until - eb_now_ns()) / 1000000LL;
    if (left <= 0)
      return 0;
    poll(pfd, (nfds_t)n, left > 1000 ? 1000 : (int)left + 1);
  }
}

/* ---------------------------------------------------------------- calls */

static int attempt(llm_client *c, eb_ctx *actx, const eb_llm_request *req, const char *body,
                   eb_llm_response *res, eb_http_response *hr, bool *shown, eb_error **err) {
  const char *hdr[5] = {NULL};
  char hbuf[4200]; /* fits keys of a few KiB */
  c->wire->headers(c, hdr, hbuf, sizeof(hbuf));
  if (!c->stream) {
    int r = eb_http_post(actx, c->url, hdr, body, NULL, NULL, hr, err);
    if (r < 0 || hr->status < 200 || hr->status >= 300)
      return r;
    json_error_t jerr;
    json_t *j = json_loadb(hr->body.data ? hr->body.data : "", hr->body.len, 0, &jerr);
    if (j == NULL)
      return eb_error_set(err, EB_ERR_PROTOCOL, "%s sent malformed JSON: %s", c->provider,
                          jerr.text);
    r = c->wire->parse(j, res, err);
    json_decref(j);
    return r;
  }
  llm_stream s;
  memset(&s, 0, sizeof(s));
  s.on_text = req->on_text;
  s.user = req->user;
  stream_ctx sc = {.client = c, .stream = &s};
  eb_sse_init(&sc.sse, MAX_SSE_EVENT, on_sse_event, &sc);
  int r = eb_http_post(actx, c->url, hdr, body, on_stream_body, &sc, hr, err);
  *shown = s.shown;
  if (r < 0 && s.error != NULL) { /* our own limit stopped the transfer: say which */
    eb_error_free(*err);
    *err = NULL;
    r = eb_error_propagate(err, steal_pointer(&s.error));
  }
  if (r == 0 && hr->status >= 200 && hr->status < 300) {
    if (s.error == NULL)
      eb_sse_finish(&sc.sse);
    if (s.error != NULL) {
      r = eb_error_propagate(err, steal_pointer(&s.error));
    } else if (!s.done) {
      r = eb_error_set(err, EB_ERR_PROTOCOL, "%s ended the stream early", c->provider);
    } else {
      r = llm_stream_to_message(&s, res, err);
    }
  }
  eb_sse_free(&sc.sse);
  llm_stream_free(&s);
  return r;
}

static int client_generate(eb_llm *llm, eb_ctx *ctx, const eb_llm_request *req,
                           eb_llm_response *res, eb_error **err) {
  llm_client *c = llm->impl;
  memset(res, 0, sizeof(*res));
  json_t *jbody = c->wire->build(c, req, c->stream);
  char *body = jbody ? json_dumps(jbody, JSON_COMPACT) : NULL;
  json_decref(jbody);
  if (body == NULL)
    return eb_error_set(err, ENOMEM, "encode the request");
  int max_attempts = req->max_attempts > 0 ? req->max_attempts : 1;
  int ret = 0;
  for (int n = 1;; n++) {
    res->attempts = n;
    eb_ctx *actx = NULL;
    ret = eb_ctx_new(ctx, req->attempt_timeout_ms, &actx, err);
    if (ret < 0)
      break;
    eb_http_response hr;
    eb_error *aerr = NULL;
    eb_message_clear(&res->message);
    bool shown = false;
    ret = attempt(c, actx, req, body, res, &hr, &shown, &aerr);
    bool retry = false;
    int64_t wait_ms = -1;
    if (ret == 0 && (hr.status < 200 || hr.status >= 300)) {
      ret = classify(c, &hr, &retry, &aerr);
      wait_ms = hr.retry_after_ms;
    } else if (ret < 0) {
      eb_ctx_state outer = eb_ctx_state_now(ctx);
      /* A timeout of this attempt alone, a lost connection or a malformed
       * reply may pass; the caller's cancellation or deadline does not. */
      retry = outer == EB_CTX_ACTIVE &&
              (aerr->code == EB_ERR_TIMEOUT || aerr->code == EB_ERR_LLM_PROVIDER ||
               aerr->code == EB_ERR_PROTOCOL);
      if (outer != EB_CTX_ACTIVE && aerr->code == EB_ERR_TIMEOUT)
        aerr->code = outer == EB_CTX_CANCELLED ? EB_ERR_CANCELLED : EB_ERR_TIMEOUT;
    }
    eb_http_response_free(&hr);
    eb_ctx_free(actx);
    if (ret == 0) {
      eb_error_free(aerr);
      break;
    }
    if (shown)
      retry = false; /* part of an answer is already out: a retry would repeat it */
    /* A wait the caller's deadline cannot cover is no retry: report why. */
    int64_t left = eb_ctx_remaining_ms(ctx);
    if (retry && wait_ms > 0 && left >= 0 && wait_ms >= left)
      retry = false;
    if (!retry || n >= max_attempts) {
      if (n > 1)
        eb_error_wrap(&aerr, "after %d attempts", n);
      ret = eb_error_propagate(err, aerr);
      break;
    }
    if (wait_ms < 0) {
      wait_ms = BACKOFF_BASE_MS << (n - 1 < 5 ? n - 1 : 5);
      if (wait_ms > BACKOFF_MAX_MS)
        wait_ms = BACKOFF_MAX_MS;
      wait_ms += rand() % (wait_ms / 4 + 1); /* spread retries of many clients */
    }
    eb_error_free(aerr);
    ret = ctx_sleep(ctx, wait_ms, err);
    if (ret < 0)
      break;
  }
  free(body);
  if (ret < 0)
    eb_message_clear(&res->message);
  return ret;
}

static void client_destroy(eb_llm *llm) {
  llm_client *c = llm->impl;
  if (c != NULL) {
    free(c->provider);
    free(c->model);
    free(c->base_url);
    free(c->api_key);
    free(c->url);
    free(c);
  }
  free(llm);
}

static const eb_llm_ops openai_ops = {.name = "openai", .generate = client_generate,
                                      .destroy = client_destroy};
static const eb_llm_ops anthropic_ops = {.name = "anthropic", .generate = client_generate,
                                         .destroy = client_destroy};

static const char *env_or(const char *name, const char *fallback) {
  const char *v = getenv(name);
  return v != NULL && v[0] != '\0' ? v : fallback;
}

EB_EXPORT int eb_llm_new(const eb_llm_options *o, eb_llm **out, eb_error **err) {
  if (o == NULL || o->provider == NULL || o->model == NULL || o->model[0] == '\0')
    return eb_error_set(err, EB_ERR_USAGE, "an LLM needs a provider and a model");
  const llm_wire *wire;
  const eb_llm_ops *ops;
  const char *base, *key = o->api_key, *key_env;
  if (strcmp(o->provider, "openai") == 0) {
    wire = &llm_wire_openai;
    ops = &openai_ops;
    base = o->base_url ? o->base_url : env_or("OPENAI_BASE_URL", "https://api.openai.com/v1");
    key_env = "OPENAI_API_KEY";
  } else if (strcmp(o->provider, "ollama") == 0) {
    wire = &llm_wire_openai;
    ops = &openai_ops;
    base = o->base_url ? o->base_url : env_or("OLLAMA_HOST", "http://127.0.0.1:11434");
    key_env = NULL; /* a local server needs none */
  } else if (strcmp(o->provider, "anthropic") == 0) {
    wire = &llm_wire_anthropic;
    ops = &anthropic_ops;
    base = o->base_url ? o->base_url : env_or("ANTHROPIC_BASE_URL", "https://api.anthropic.com");
    key_env = "ANTHROPIC_API_KEY";
  } else {
    return eb_error_set(err, EB_ERR_USAGE,
                        "unknown LLM provider `%s` (openai, anthropic or ollama)", o->provider);
  }
  if (key == NULL && key_env != NULL)
    key = env_or(key_env, NULL);
  if (key == NULL && key_env != NULL)
    return eb_error_set(err, EB_ERR_LLM_AUTH, "no API key for %s: set %s", o->provider, key_env);

  eb_llm *llm = calloc(1, sizeof(*llm));
  llm_client *c = calloc(1, sizeof(*c));
  if (llm == NULL || c == NULL) {
    free(llm);
    free(c);
    return eb_error_set(err, ENOMEM, "allocate the LLM client");
  }
  llm->ops = ops;
  llm->impl = c;
  c->wire = wire;
  c->stream = o->stream;
  c->max_tokens = o->max_tokens > 0 ? o->max_tokens : DEFAULT_MAX_TOKENS;
  c->provider = strdup(o->provider);
  c->model = strdup(o->model);
  c->api_key = key ? strdup(key) : NULL;
  size_t bl = strlen(base);
  while (bl > 0 && base[bl - 1] == '/')
    bl--;
  /* ollama speaks the OpenAI format under /v1. */
  const char *mid = strcmp(o->provider, "ollama") == 0 ? "/v1" : "";
  if (asprintf(&c->url, "%.*s%s%s", (int)bl, base, mid, wire->path) < 0)
    c->url = NULL;
  c->base_url = strndup(base, bl);
  if (c->provider == NULL || c->model == NULL || c->url == NULL || c->base_url == NULL ||
      (key != NULL && c->api_key == NULL)) {
    client_destroy(llm);
    return eb_error_set(err, ENOMEM, "allocate the LLM client");
  }
  if (strncmp(c->url, "http://", 7) != 0 && strncmp(c->url, "https://", 8) != 0) {
    int r = eb_error_set(err, EB_ERR_USAGE, "the %s endpoint `%s` is not an http(s) URL",
                         o->provider, c->base_url);
    client_destroy(llm);
    return r;
  }
  *out = llm;
  return 0;
}

EB_EXPORT int eb_llm_new_from_spec(const char *spec, bool stream, eb_llm **out, eb_error **err) {
  if (spec == NULL || strchr(spec, ':') == NULL)
    return eb_error_set(err, EB_ERR_USAGE,
                        "model `%s` is not PROVIDER:NAME (e.g. openai:gpt-4o-mini)",
                        spec ? spec : "");
  const char *colon = strchr(spec, ':');
  char provider[32];
  snprintf(provider, sizeof(provider), "%.*s", (int)(colon - spec), spec);
  eb_llm_options o = {.provider = provider, .model = colon + 1, .stream = stream};
  return eb_llm_new(&o, out, err);
}

EB_EXPORT int eb_llm_generate(eb_llm *llm, eb_ctx *ctx, const eb_llm_request *req,
                              eb_llm_response *res, eb_error **err) {
  return llm->ops->generate(llm, ctx, req, res, err);
}

EB_EXPORT void eb_llm_free(eb_llm *llm) {
  if (llm != NULL && llm->ops->destroy != NULL)
    llm->ops->destroy(llm);
}

json_t *llm_tool_schema(const eb_tool *tool) {
  json_t *s = tool->parameters ? json_loads(tool->parameters, 0, NULL) : NULL;
  if (s == NULL || !json_is_object(s)) {
    json_decref(s);
    s = json_pack("{s:s, s:{}}", "type", "object", "properties");
  }
  return s;
}
