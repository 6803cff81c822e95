/* The remote runtime: executions run by an `execbox serve` service over
 * HTTP, with the same result model. EXECBOX_REMOTE_URL lists one or more
 * servers (comma-separated), EXECBOX_REMOTE_TOKEN is the bearer token.
 *
 * The caller's deadline travels as the execution's wall limit, and
 * cancelling aborts the request, which makes the server kill the code. The
 * next server is tried only when a request provably never reached one (the
 * connection failed) or was turned away unrun (429, 503): code a server
 * accepted is never run twice. */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/http.h"
#include "core/util.h"
#include "runtime/runtimes.h"

#define MAX_URLS 16
/* The server is told to stop the code this much before the caller's
 * deadline, so that its answer (status timeout) still arrives in time. */
#define DEADLINE_MARGIN_MS 250
#define MAX_BUSY_RETRIES 5

typedef struct remote {
  char *urls[MAX_URLS];
  int n;
  char *token;
} remote;

static json_t *request_json(const eb_exec_request *req, int64_t wall_ms) {
  json_t *o = json_pack("{s:s, s:s%}", "language", req->language ? req->language : "", "code",
                        req->code ? req->code : "",
                        req->code ? (req->code_len ? req->code_len : strlen(req->code)) : 0);
  if (o == NULL)
    return NULL;
  if (req->stdin_data != NULL)
    json_object_set_new(o, "stdin", json_stringn(req->stdin_data, req->stdin_len));
  if (req->args != NULL) {
    json_t *a = json_array();
    for (const char *const *p = req->args; *p; p++)
      json_array_append_new(a, json_string(*p));
    json_object_set_new(o, "args", a);
  }
  if (req->env != NULL) {
    json_t *e = json_array();
    for (const char *const *p = req->env; *p; p++)
      json_array_append_new(e, json_string(*p));
    json_object_set_new(o, "env", e);
  }
  const eb_limits *l = &req->limits;
  json_t *lim = json_object();
  if (wall_ms > 0)
    json_object_set_new(lim, "wall_ms", json_integer(wall_ms));
  if (l->cpu_ms > 0)
    json_object_set_new(lim, "cpu_ms", json_integer(l->cpu_ms));
  if (l->memory_bytes > 0)
    json_object_set_new(lim, "memory_bytes", json_integer(l->memory_bytes));
  if (l->pids > 0)
    json_object_set_new(lim, "pids", json_integer(l->pids));
  if (l->output_bytes > 0)
    json_object_set_new(lim, "output_bytes", json_integer(l->output_bytes));
  if (l->file_size_bytes > 0)
    json_object_set_new(lim, "file_size_bytes", json_integer(l->file_size_bytes));
  if (l->tmp_bytes > 0)
    json_object_set_new(lim, "tmp_bytes", json_integer(l->tmp_bytes));
  if (l->cpu_milli > 0)
    json_object_set_new(lim, "cpu_milli", json_integer(l->cpu_milli));
  if (l->network == EB_NETWORK_HOST)
    json_object_set_new(lim, "network", json_string("host"));
  json_object_set_new(o, "limits", lim);
  return o;
}

/* The server's error message, from {"error":{"message":...}}. */
static const char *server_message(json_t *body) {
  const char *m = json_string_value(json_object_get(json_object_get(body, "error"), "message"));
  return m ? m : "no message";
}

/* Sleeps ms unless ctx ends first; true if the time passed. */
static bool wait_or_end(eb_ctx *ctx, int64_t ms) {
  int fds[32];
  int n = eb_ctx_cancel_fds(ctx, fds, 32);
  struct pollfd p[32];
  for (int i = 0; i < n && i < 32; i++)
    p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
  int64_t left = eb_ctx_remaining_ms(ctx);
  if (left >= 0 && left < ms)
    return false;
  return poll(p, (nfds_t)(n < 32 ? n : 32), (int)ms) == 0;
}

static int remote_execute(eb_runtime *rt, eb_ctx *ctx, const eb_exec_request *req,
                          eb_exec_result *res, eb_error **err) {
  remote *r = rt->impl;
  int64_t wall = req->limits.wall_ms > 0 ? req->limits.wall_ms : EB_DEFAULT_WALL_MS;
  int64_t left = eb_ctx_remaining_ms(ctx);
  if (left >= 0 && left - DEADLINE_MARGIN_MS < wall)
    wall = left > 2 * DEADLINE_MARGIN_MS ? left - DEADLINE_MARGIN_MS : (left > 1 ? left / 2 : 1);
  json_t *j = request_json(req, wall);
  char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  if (body == NULL)
    return eb_error_set(err, ENOMEM, "encode the request");
  char auth[512];
  const char *headers[2] = {NULL, NULL};
  if (r->token != NULL) {
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", r->token);
    headers[0] = auth;
  }
  if (r->n == 0) {
    free(body);
    return eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE,
                        "no remote server: set EXECBOX_REMOTE_URL");
  }
  int ret = 0, busy_retries = 0;
  for (int i = 0; i < r->n; i++) {
    char url[1100];
    snprintf(url, sizeof(url), "%s/v1/execute", r->urls[i]);
    eb_http_response hr;
    eb_error *herr = NULL;
    int64_t t0 = eb_now_ns();
    ret = eb_http_post(ctx, url, headers, body, NULL, NULL, &hr, &herr);
    if (ret < 0) {
      bool next = hr.never_sent && i + 1 < r->n;
      if (herr->code == EB_ERR_TIMEOUT || herr->code == EB_ERR_CANCELLED) {
        /* The caller's deadline or cancellation: a result, as with any
         * runtime; dropping the connection made the server kill the code. */
        memset(res, 0, sizeof(*res));
        res->status = herr->code == EB_ERR_TIMEOUT ? EB_STATUS_TIMEOUT : EB_STATUS_CANCELLED;
        res->signal = 9;
        res->exit_code = 137;
        res->output = calloc(1, 1);
        res->stdout_data = calloc(1, 1);
        res->stderr_data = calloc(1, 1);
        res->duration_ms = (eb_now_ns() - t0) / 1000000;
        eb_error_free(herr);
        eb_http_response_free(&hr);
        ret = 0;
        break;
      }
      eb_http_response_free(&hr);
      if (next) {
        eb_error_free(herr);
        continue;
      }
      herr->code = EB_ERR_RUNTIME_UNAVAILABLE;
      ret = eb_error_propagate(err, herr);
      break;
    }
    json_t *jb = hr.body.data ? json_loadb(hr.body.data, hr.body.len, 0, NULL) : NULL;
    if (hr.status == 200) {
      ret = eb_exec_result_from_json(hr.body.data ? hr.body.data : "", hr.body.len, res, err);
      json_decref(jb);
      eb_http_response_free(&hr);
      break;
    }
    /* Turned away unrun: another server may take it, or this one once it
     * has a free slot (it said when); the code never ran, so it may be sent
     * again. */
    if (hr.status == 429 || hr.status == 503) {
      int64_t wait = hr.retry_after_ms >= 0 ? hr.retry_after_ms : 1000;
      json_decref(jb);
      eb_http_response_free(&hr);
      if (i + 1 < r->n)
        continue;
      if (busy_retries++ < MAX_BUSY_RETRIES && wait_or_end(ctx, wait)) {
        i = -1; /* start over with the first server */
        continue;
      }
      ret = eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE, "every server is busy (HTTP 429/503)");
      break;
    }
    int code = hr.status == 400 || hr.status == 413 ? EB_ERR_USAGE
               : hr.status == 422                   ? EB_ERR_LANGUAGE_UNAVAILABLE
               : hr.status == 401 || hr.status == 403 || hr.status == 429 || hr.status == 503
                   ? EB_ERR_RUNTIME_UNAVAILABLE
                   : EB_ERR_SANDBOX;
    ret = eb_error_set(err, code, "%s answered HTTP %ld: %s", r->urls[i], hr.status,
                       jb ? server_message(jb) : "no JSON body");
    json_decref(jb);
    eb_http_response_free(&hr);
    break;
  }
  free(body);
  return ret;
}

static int remote_probe(eb_runtime *rt, char **detail, eb_error **err) {
  remote *r = rt->impl;
  if (r->n == 0)
    return eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE,
                        "set EXECBOX_REMOTE_URL to one or more execbox serve URLs");
  eb_ctx *ctx = NULL;
  if (eb_ctx_new(NULL, 3000, &ctx, err) < 0)
    return -1;
  int up = 0;
  for (int i = 0; i < r->n; i++) {
    char url[1100];
    snprintf(url, sizeof(url), "%s/healthz", r->urls[i]);
    eb_http_response hr;
    eb_error *e = NULL;
    if (eb_http_post(ctx, url, NULL, NULL, NULL, NULL, &hr, &e) == 0 && hr.status == 200)
      up++;
    eb_error_free(e);
    eb_http_response_free(&hr);
  }
  eb_ctx_free(ctx);
  if (up == 0)
    return eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE, "no server answers at %s%s", r->urls[0],
                        r->n > 1 ? " (nor the others)" : "");
  if (asprintf(detail, "%d of %d server(s) healthy, first %s", up, r->n, r->urls[0]) < 0)
    *detail = NULL;
  return 0;
}

static void remote_destroy(eb_runtime *rt) {
  remote *r = rt->impl;
  if (r != NULL) {
    for (int i = 0; i < r->n; i++)
      free(r->urls[i]);
    free(r->token);
    free(r);
  }
  free(rt);
}

const eb_runtime_ops eb_remote_ops = {
    .name = "remote",
    .description = "an execbox serve service over HTTP (EXECBOX_REMOTE_URL)",
    .execute = remote_execute,
    .destroy = remote_destroy,
    .probe = remote_probe,
};

int eb_remote_runtime_new(eb_runtime **out, eb_error **err) {
  eb_runtime *rt = calloc(1, sizeof(*rt));
  remote *r = calloc(1, sizeof(*r));
  if (rt == NULL || r == NULL) {
    free(rt);
    free(r);
    return eb_error_set(err, ENOMEM, "allocate the remote runtime");
  }
  rt->ops = &eb_remote_ops;
  rt->impl = r;
  const char *urls = getenv("EXECBOX_REMOTE_URL");
  const char *token = getenv("EXECBOX_REMOTE_TOKEN");
  if (token != NULL && token[0] != '\0')
    r->token = strdup(token);
  if (urls != NULL) {
    cleanup_free char *copy = strdup(urls);
    for (char *save = NULL, *u = copy ? strtok_r(copy, ",", &save) : NULL; u && r->n < MAX_URLS;
         u = strtok_r(NULL, ",", &save)) {
      while (*u == ' ')
        u++;
      size_t n = strlen(u);
      while (n > 0 && (u[n - 1] == '/' || u[n - 1] == ' '))
        u[--n] = '\0';
      if (n == 0)
        continue;
      if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0) {
        int ret = eb_error_set(err, EB_ERR_USAGE, "EXECBOX_REMOTE_URL: `%s` is not an http(s) URL", u);
        remote_destroy(rt);
        return ret;
      }
      r->urls[r->n++] = strdup(u);
    }
  }
  *out = rt;
  return 0;
}
