/* execbox serve: the HTTP execution service (libmicrohttpd).
 *
 *   POST /v1/execute   run code; the result model as JSON
 *   GET  /v1/languages the languages usable here
 *   GET  /healthz      200 while serving, 503 while draining
 *   GET  /metrics      Prometheus text
 *
 * Bounded concurrency with a bounded queue (429 + Retry-After past it), a
 * body limit (413), bearer-token auth (401), a client that disconnects gets
 * its execution killed, SIGTERM drains. One JSON log line per request on
 * stderr. */
#include "server/service.h"
#include "server/http_body.h"
#include "server/mcp_http.h"
#include "server/request.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <execbox/execbox.h>

#define N_BUCKETS 10
static const double bucket_le[N_BUCKETS] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30};

typedef struct stat_key {
  char language[16];
  char status[16];
  long count;
} stat_key;

typedef struct service {
  eb_service_options o;
  eb_mcp_http *mcp; /* the MCP endpoint at /mcp */
  pthread_mutex_t lock;
  pthread_cond_t slot;
  int running, queued;
  long rejected;
  bool draining;
  stat_key stats[64];
  int n_stats;
  long hist[N_BUCKETS + 1];
  double hist_sum;
  long hist_count;
} service;

typedef eb_http_body request;

/* ------------------------------------------------------------- helpers */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
                             const char *body, const char *retry_after) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
  if (r == NULL)
    return MHD_NO;
  MHD_add_response_header(r, "Content-Type", type);
  if (retry_after != NULL)
    MHD_add_response_header(r, "Retry-After", retry_after);
  enum MHD_Result ret = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result reply_error(struct MHD_Connection *c, unsigned status, const char *code,
                                   const char *message, const char *retry_after) {
  json_t *j = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", message);
  char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(j);
  enum MHD_Result r = reply(c, status, "application/json", t ? t : "{}", retry_after);
  free(t);
  return r;
}

static void log_request(const char *method, const char *path, unsigned status, int64_t start,
                        const char *language, const char *exec_status) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  char ts[32];
  strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
  json_t *j = json_pack("{s:s, s:s, s:s, s:i, s:I}", "ts", ts, "method", method, "path", path,
                        "status", (int)status, "duration_ms",
                        (json_int_t)((eb_now_ns() - start) / 1000000));
  if (language != NULL)
    json_object_set_new(j, "language", json_string(language));
  if (exec_status != NULL)
    json_object_set_new(j, "exec_status", json_string(exec_status));
  char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(j);
  if (t != NULL) {
    fprintf(stderr, "%s\n", t);
    free(t);
  }
}

/* Constant-time comparison, so the token cannot be guessed byte by byte
 * from response times. */
static bool token_ok(const char *expected, const char *header) {
  if (expected == NULL)
    return true;
  if (header == NULL || strncmp(header, "Bearer ", 7) != 0)
    return false;
  const char *got = header + 7;
  size_t a = strlen(expected), b = strlen(got);
  unsigned char diff = (unsigned char)(a != b);
  for (size_t i = 0; i < a; i++)
    diff |= (unsigned char)(expected[i] ^ (i < b ? got[i] : 0));
  return diff == 0;
}

static void record(service *s, const char *language, const char *status, double secs) {
  pthread_mutex_lock(&s->lock);
  int i = 0;
  for (; i < s->n_stats; i++)
    if (strcmp(s->stats[i].language, language) == 0 && strcmp(s->stats[i].status, status) == 0)
      break;
  if (i == s->n_stats && s->n_stats < (int)(sizeof(s->stats) / sizeof(s->stats[0]))) {
    snprintf(s->stats[i].language, sizeof(s->stats[i].language), "%s", language);
    snprintf(s->stats[i].status, sizeof(s->stats[i].status), "%s", status);
    s->n_stats++;
  }
  if (i < s->n_stats)
    s->stats[i].count++;
  int b = 0;
  while (b < N_BUCKETS && secs > bucket_le[b])
    b++;
  s->hist[b]++;
  s->hist_sum += secs;
  s->hist_count++;
  pthread_mutex_unlock(&s->lock);
}

/* --------------------------------------------------------------- execute */

typedef struct watch {
  int fd;
  eb_ctx *ctx;
  int stop_pipe[2];
} watch;

/* Cancels the execution when the client hangs up. */
static void *watch_client(void *arg) {
  watch *w = arg;
  struct pollfd p[2] = {{.fd = w->fd, .events = POLLRDHUP}, {.fd = w->stop_pipe[0], .events = POLLIN}};
  for (;;) {
    int r = poll(p, 2, -1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r > 0 && (p[0].revents & (POLLRDHUP | POLLHUP | POLLERR)))
      eb_ctx_cancel(w->ctx);
    return NULL;
  }
}

static enum MHD_Result handle_execute(service *s, struct MHD_Connection *c, request *rq,
                                      int64_t start) {
  if (rq->too_large) {
    log_request("POST", "/v1/execute", 413, start, NULL, NULL);
    return reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "too_large", "request body too large", NULL);
  }
  eb_parsed_request p;
  const char *detail = NULL;
  eb_parse_status ps = eb_parse_execute_request(rq->body, rq->len, &s->o.max_limits, &p, &detail);
  const char *language = p.req.language ? p.req.language
                                        : json_string_value(json_object_get(p.json, "language"));
  if (ps != EB_PARSE_OK) {
    unsigned status = ps == EB_PARSE_LANGUAGE ? 422 : 400;
    const char *code = ps == EB_PARSE_LANGUAGE         ? "language_unavailable"
                       : ps == EB_PARSE_LIMIT_TOO_HIGH ? "limit_too_high"
                                                       : "invalid_request";
    char msg[200];
    snprintf(msg, sizeof(msg), "%s%s%.60s%s", detail, language && ps == EB_PARSE_LANGUAGE ? " (`" : "",
             language && ps == EB_PARSE_LANGUAGE ? language : "",
             language && ps == EB_PARSE_LANGUAGE ? "`)" : "");
    log_request("POST", "/v1/execute", status, start, language, NULL);
    eb_parsed_request_free(&p);
    return reply_error(c, status, code, msg, NULL);
  }
  eb_exec_request req = p.req;
  const eb_language *lang = eb_language_find(language);
  json_t *j = p.json;

  /* A slot, or a place in the queue, or 429. */
  pthread_mutex_lock(&s->lock);
  if (s->draining || (s->running >= s->o.max_concurrent && s->queued >= s->o.max_queue)) {
    bool draining = s->draining;
    s->rejected++;
    pthread_mutex_unlock(&s->lock);
    log_request("POST", "/v1/execute", draining ? 503 : 429, start, language, NULL);
    json_decref(j);
    return draining ? reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, "draining",
                                  "the server is shutting down", "1")
                    : reply_error(c, MHD_HTTP_TOO_MANY_REQUESTS, "busy",
                                  "all execution slots and the queue are full", "1");
  }
  s->queued++;
  while (s->running >= s->o.max_concurrent)
    pthread_cond_wait(&s->slot, &s->lock);
  s->queued--;
  s->running++;
  pthread_mutex_unlock(&s->lock);

  eb_ctx *ctx = NULL;
  eb_error *err = NULL;
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  int r = eb_ctx_new(NULL, 0, &ctx, &err);
  watch w = {.fd = -1, .ctx = ctx, .stop_pipe = {-1, -1}};
  pthread_t watcher;
  bool watching = false;
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (r == 0 && ci != NULL && pipe2(w.stop_pipe, O_CLOEXEC) == 0) {
    w.fd = ci->connect_fd;
    watching = pthread_create(&watcher, NULL, watch_client, &w) == 0;
  }
  if (r == 0)
    r = eb_runtime_execute(s->o.runtime, ctx, &req, &res, &err);
  if (watching) {
    ssize_t wr = write(w.stop_pipe[1], "x", 1);
    (void)wr;
    pthread_join(watcher, NULL);
  }
  if (w.stop_pipe[0] >= 0) {
    close(w.stop_pipe[0]);
    close(w.stop_pipe[1]);
  }
  eb_ctx_free(ctx);
  pthread_mutex_lock(&s->lock);
  s->running--;
  pthread_cond_broadcast(&s->slot);
  pthread_mutex_unlock(&s->lock);

  enum MHD_Result ret;
  if (r < 0) {
    unsigned status = err->code == EB_ERR_LIMIT_UNSUPPORTED || err->code == EB_ERR_USAGE ? 400
                      : err->code == EB_ERR_LANGUAGE_UNAVAILABLE ||
                              err->code == EB_ERR_LANGUAGE_UNKNOWN
                          ? 422
                          : 500;
    log_request("POST", "/v1/execute", status, start, language, NULL);
    record(s, language, "error", (double)(eb_now_ns() - start) / 1e9);
    ret = reply_error(c, status, eb_error_code_name(err->code), err->msg, NULL);
  } else {
    char *body = eb_exec_result_to_json(&res);
    log_request("POST", "/v1/execute", 200, start, language, eb_status_name(res.status));
    record(s, eb_language_name(lang), eb_status_name(res.status),
           (double)res.duration_ms / 1000.0);
    ret = reply(c, MHD_HTTP_OK, "application/json", body ? body : "{}", NULL);
    free(body);
  }
  eb_error_free(err);
  eb_exec_result_clear(&res);
  json_decref(j);
  return ret;
}

/* ------------------------------------------------------------ the rest */

static enum MHD_Result handle_languages(struct MHD_Connection *c) {
  json_t *list = json_array();
  for (size_t i = 0; i < eb_language_count(); i++) {
    const eb_language *l = eb_language_at(i);
    json_array_append_new(list, json_pack("{s:s, s:b}", "name", eb_language_name(l), "available",
                                          eb_language_available(l, NULL)));
  }
  char *t = json_dumps(json_pack("{s:o}", "languages", list), JSON_COMPACT | JSON_PRESERVE_ORDER);
  enum MHD_Result r = reply(c, MHD_HTTP_OK, "application/json", t ? t : "{}", NULL);
  free(t);
  return r;
}

static enum MHD_Result handle_metrics(service *s, struct MHD_Connection *c) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f == NULL)
    return MHD_NO;
  pthread_mutex_lock(&s->lock);
  fprintf(f, "# HELP execbox_executions_total Executions by language and result status.\n"
             "# TYPE execbox_executions_total counter\n");
  for (int i = 0; i < s->n_stats; i++)
    fprintf(f, "execbox_executions_total{language=\"%s\",status=\"%s\"} %ld\n",
            s->stats[i].language, s->stats[i].status, s->stats[i].count);
  fprintf(f, "# HELP execbox_execution_duration_seconds Wall time of executions.\n"
             "# TYPE execbox_execution_duration_seconds histogram\n");
  long cum = 0;
  for (int b = 0; b < N_BUCKETS; b++) {
    cum += s->hist[b];
    fprintf(f, "execbox_execution_duration_seconds_bucket{le=\"%g\"} %ld\n", bucket_le[b], cum);
  }
  cum += s->hist[N_BUCKETS];
  fprintf(f, "execbox_execution_duration_seconds_bucket{le=\"+Inf\"} %ld\n", cum);
  fprintf(f, "execbox_execution_duration_seconds_sum %g\n", s->hist_sum);
  fprintf(f, "execbox_execution_duration_seconds_count %ld\n", s->hist_count);
  fprintf(f, "# HELP execbox_in_flight Executions running now.\n# TYPE execbox_in_flight gauge\n"
             "execbox_in_flight %d\n",
          s->running);
  fprintf(f, "# HELP execbox_queued Requests waiting for a slot.\n# TYPE execbox_queued gauge\n"
             "execbox_queued %d\n",
          s->queued);
  fprintf(f, "# HELP execbox_rejected_total Requests turned away (429/503).\n"
             "# TYPE execbox_rejected_total counter\nexecbox_rejected_total %ld\n",
          s->rejected);
  pthread_mutex_unlock(&s->lock);
  eb_pool_stats ps;
  if (eb_runtime_pool_stats(s->o.runtime, &ps) == 0)
    fprintf(f,
            "# HELP execbox_pool_executions_total Executions by how their sandbox was made.\n"
            "# TYPE execbox_pool_executions_total counter\n"
            "execbox_pool_executions_total{sandbox=\"warm\"} %llu\n"
            "execbox_pool_executions_total{sandbox=\"python_interpreter\"} %llu\n"
            "execbox_pool_executions_total{sandbox=\"cold\"} %llu\n"
            "# HELP execbox_pool_sandboxes Warm sandboxes now.\n# TYPE execbox_pool_sandboxes gauge\n"
            "execbox_pool_sandboxes{state=\"ready\"} %d\nexecbox_pool_sandboxes{state=\"building\"} %d\n"
            "# HELP execbox_pool_build_failures_total Warm sandboxes that failed to build.\n"
            "# TYPE execbox_pool_build_failures_total counter\nexecbox_pool_build_failures_total %llu\n",
            (unsigned long long)(ps.hits - ps.fast), (unsigned long long)ps.fast,
            (unsigned long long)ps.misses, ps.ready, ps.building, (unsigned long long)ps.failed);
  fclose(f);
  enum MHD_Result r = reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4", buf ? buf : "", NULL);
  free(buf);
  return r;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version,
                                      const char *upload, size_t *upload_size, void **state) {
  (void)version;
  service *s = cls;
  eb_http_body *rq = NULL;
  enum MHD_Result early;
  if (!eb_http_body_collect(state, upload, upload_size, s->o.max_body_bytes, &rq, &early))
    return early;
  int64_t start = eb_now_ns();
  bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
  if (strcmp(url, "/healthz") == 0 && get) {
    pthread_mutex_lock(&s->lock);
    bool draining = s->draining;
    pthread_mutex_unlock(&s->lock);
    return draining ? reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "application/json",
                            "{\"status\":\"draining\"}", NULL)
                    : reply(c, MHD_HTTP_OK, "application/json", "{\"status\":\"ok\"}", NULL);
  }
  if (strcmp(url, "/metrics") == 0 && get)
    return handle_metrics(s, c);
  /* Everything else needs the token. */
  if (!token_ok(s->o.token, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"))) {
    log_request(method, url, 401, start, NULL, NULL);
    struct MHD_Response *r = MHD_create_response_from_buffer(
        strlen("{\"error\":{\"code\":\"unauthorized\",\"message\":\"missing or wrong bearer token\"}}"),
        (void *)"{\"error\":{\"code\":\"unauthorized\",\"message\":\"missing or wrong bearer token\"}}",
        MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_UNAUTHORIZED, r);
    MHD_destroy_response(r);
    return ret;
  }
  if (strcmp(url, "/v1/execute") == 0 && post)
    return handle_execute(s, c, rq, start);
  if (strcmp(url, "/mcp") == 0) {
    return eb_mcp_http_handle(s->mcp, c, method, rq->body, rq->len, rq->too_large);
  }
  if (strcmp(url, "/v1/languages") == 0 && get)
    return handle_languages(c);
  bool known = strcmp(url, "/v1/execute") == 0 || strcmp(url, "/v1/languages") == 0;
  log_request(method, url, known ? 405 : 404, start, NULL, NULL);
  return reply_error(c, known ? MHD_HTTP_METHOD_NOT_ALLOWED : MHD_HTTP_NOT_FOUND,
                     known ? "method_not_allowed" : "not_found",
                     known ? "wrong method for this path" : "no such path", NULL);
}


int eb_service_run(const eb_service_options *opts) {
  service s = {.o = *opts};
  eb_mcp_options mo = {.runtime = opts->runtime};
  s.mcp = eb_mcp_http_new(&mo);
  if (s.mcp == NULL) {
    fprintf(stderr, "execbox: out of memory\n");
    return 125;
  }
  pthread_mutex_init(&s.lock, NULL);
  pthread_cond_init(&s.slot, NULL);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opts->port)};
  if (inet_pton(AF_INET, opts->host, &addr.sin_addr) != 1) {
    fprintf(stderr, "execbox: --listen host `%s` is not an IPv4 address\n", opts->host);
    return 64;
  }
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);
  signal(SIGPIPE, SIG_IGN);
  struct MHD_Daemon *d = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG, 0, NULL,
      NULL, access_handler, &s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
      MHD_OPTION_NOTIFY_COMPLETED, eb_http_body_completed, NULL, MHD_OPTION_CONNECTION_TIMEOUT,
      (unsigned)3600, MHD_OPTION_CONNECTION_LIMIT, (unsigned)(opts->max_concurrent + opts->max_queue + 64),
      MHD_OPTION_END);
  if (d == NULL) {
    fprintf(stderr, "execbox: cannot listen on %s:%d: %s\n", opts->host, opts->port, strerror(errno));
    return 125;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  fprintf(stderr, "execbox: serving on http://%s:%u (runtime %s, %d slots, queue %d%s)\n",
          opts->host, info ? info->port : (unsigned)opts->port, opts->runtime->ops->name,
          opts->max_concurrent, opts->max_queue, opts->token ? ", token required" : "");
  fflush(stderr);
  int sig = 0;
  sigwait(&stop, &sig);
  /* Drain: refuse new work, let what runs finish, then stop. */
  pthread_mutex_lock(&s.lock);
  s.draining = true;
  int left = s.running + s.queued;
  pthread_mutex_unlock(&s.lock);
  fprintf(stderr, "execbox: draining (%d in flight) after signal %d\n", left, sig);
  MHD_quiesce_daemon(d);
  pthread_mutex_lock(&s.lock);
  while (s.running + s.queued > 0)
    pthread_cond_wait(&s.slot, &s.lock);
  pthread_mutex_unlock(&s.lock);
  /* The last responses may still be on their way out: give the open
   * connections a few seconds to finish before closing them. */
  for (int i = 0; i < 100; i++) {
    const union MHD_DaemonInfo *ci = MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    if (ci == NULL || ci->num_connections == 0)
      break;
    struct timespec ts = {0, 50 * 1000000L};
    nanosleep(&ts, NULL);
  }
  eb_mcp_http_cancel_all(s.mcp); /* MCP calls end too */
  MHD_stop_daemon(d);
  eb_mcp_http_free(s.mcp);
  fprintf(stderr, "execbox: stopped\n");
  return 0;
}
