/* execbox mcp --http: the MCP Streamable HTTP transport (libmicrohttpd).
 *
 * POST /mcp carries one JSON-RPC message. Notifications and responses get
 * 202. A request gets its response as JSON, or — for tools/call when the
 * client accepts text/event-stream — as an SSE stream that carries the
 * call's progress notifications and then its response. Sessions: initialize
 * creates one (Mcp-Session-Id header), each with its own MCP core; DELETE
 * ends it. GET is 405 (no server-initiated stream). Origin is checked
 * against loopback; the default bind is loopback. */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <execbox/mcp.h>

#include "server/http_body.h"
#include "server/mcp_http.h"

#define MAX_BODY (4u << 20)
#define MAX_SESSIONS 256

typedef struct stream {
  struct stream *next;
  char *id;           /* JSON text of the request id */
  char **queue;       /* messages to deliver, in order */
  size_t n, cap, sent;
  size_t offset;      /* bytes of queue[sent] already written */
  bool done;          /* the final message is queued */
  bool abandoned;     /* the client went away */
  pthread_cond_t more;
  struct session *session;
} stream;

typedef struct session {
  struct session *next;
  char id[40];
  eb_mcp *mcp;
  pthread_mutex_t lock; /* streams */
  stream *streams;
  int refs;             /* requests and streams using it */
  bool deleted;         /* unlinked by DELETE: freed when refs drops to 0 */
  int64_t last_used;
  struct eb_mcp_http *server;
} session;

struct eb_mcp_http {
  eb_mcp_options opts;
  pthread_mutex_t lock; /* sessions */
  session *sessions;
  int n_sessions;
};
typedef struct eb_mcp_http http_server;

typedef eb_http_body request;

/* ------------------------------------------------------------ sessions */

static void session_send(void *user, const char *message, const char *related, bool final) {
  session *s = user;
  pthread_mutex_lock(&s->lock);
  for (stream *st = s->streams; st != NULL; st = st->next) {
    if (related == NULL || strcmp(st->id, related) != 0 || st->done)
      continue;
    if (message == NULL) { /* cancelled: the request ends without a response */
      st->done = true;
      pthread_cond_broadcast(&st->more);
      break;
    }
    if (st->n == st->cap) {
      size_t cap = st->cap ? st->cap * 2 : 4;
      char **q = realloc(st->queue, cap * sizeof(char *));
      if (q == NULL)
        break;
      st->queue = q;
      st->cap = cap;
    }
    st->queue[st->n] = strdup(message);
    if (st->queue[st->n] != NULL)
      st->n++;
    st->done = final;
    pthread_cond_broadcast(&st->more);
    break;
  }
  pthread_mutex_unlock(&s->lock); /* no stream: the client is gone; drop it */
}

static session *session_new(http_server *h, eb_error **err) {
  session *s = calloc(1, sizeof(*s));
  if (s == NULL)
    return NULL;
  unsigned char rnd[16];
  if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
    free(s);
    return NULL;
  }
  for (int i = 0; i < 16; i++)
    snprintf(s->id + 2 * i, 3, "%02x", rnd[i]);
  pthread_mutex_init(&s->lock, NULL);
  s->server = h;
  s->last_used = eb_now_ns();
  if (eb_mcp_new(&h->opts, session_send, s, &s->mcp, err) < 0) {
    pthread_mutex_destroy(&s->lock);
    free(s);
    return NULL;
  }
  return s;
}

static void session_free(session *s) {
  eb_mcp_free(s->mcp); /* cancels its calls (none: nothing references it) */
  pthread_mutex_destroy(&s->lock);
  free(s);
}

/* Finds a session and takes a reference. */
static session *session_get(http_server *h, const char *id) {
  pthread_mutex_lock(&h->lock);
  session *s = h->sessions;
  while (s != NULL && strcmp(s->id, id) != 0)
    s = s->next;
  if (s != NULL)
    s->refs++;
  pthread_mutex_unlock(&h->lock);
  return s;
}

static void session_free(session *s);

static void session_put(http_server *h, session *s) {
  pthread_mutex_lock(&h->lock);
  bool last = --s->refs == 0 && s->deleted;
  s->last_used = eb_now_ns();
  pthread_mutex_unlock(&h->lock);
  if (last)
    session_free(s);
}

static stream *stream_open(session *s, const char *id) {
  stream *st = calloc(1, sizeof(*st));
  if (st == NULL)
    return NULL;
  st->id = strdup(id);
  st->session = s;
  pthread_cond_init(&st->more, NULL);
  pthread_mutex_lock(&s->lock);
  st->next = s->streams;
  s->streams = st;
  pthread_mutex_unlock(&s->lock);
  return st;
}

static void stream_close(stream *st) {
  session *s = st->session;
  pthread_mutex_lock(&s->lock);
  for (stream **p = &s->streams; *p != NULL; p = &(*p)->next)
    if (*p == st) {
      *p = st->next;
      break;
    }
  pthread_mutex_unlock(&s->lock);
  for (size_t i = 0; i < st->n; i++)
    free(st->queue[i]);
  free(st->queue);
  free(st->id);
  pthread_cond_destroy(&st->more);
  free(st);
}

/* ------------------------------------------------------------ responses */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
                             const char *body, const char *session_id) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
  if (r == NULL)
    return MHD_NO;
  if (type != NULL)
    MHD_add_response_header(r, "Content-Type", type);
  if (session_id != NULL)
    MHD_add_response_header(r, "Mcp-Session-Id", session_id);
  enum MHD_Result ret = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result rpc_error(struct MHD_Connection *c, unsigned status, int code,
                                 const char *message) {
  char body[512];
  json_t *j = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code", code,
                        "message", message);
  char *t = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  snprintf(body, sizeof(body), "%s", t ? t : "{}");
  free(t);
  json_decref(j);
  return reply(c, status, "application/json", body, NULL);
}

/* SSE body: waits for each message and writes it as an event. */
static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  stream *st = cls;
  session *s = st->session;
  pthread_mutex_lock(&s->lock);
  if (st->sent == st->n && !st->done && st->offset == 0) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 1;
    pthread_cond_timedwait(&st->more, &s->lock, &until);
    if (st->sent == st->n && !st->done) {
      /* Nothing for a second: a comment line keeps the stream alive and
       * shows whether the client is still there (a failed write ends the
       * response, and sse_done cancels the call). */
      pthread_mutex_unlock(&s->lock);
      static const char keepalive[] = ": keep-alive\n\n";
      size_t n = sizeof(keepalive) - 1 < max ? sizeof(keepalive) - 1 : max;
      memcpy(buf, keepalive, n);
      return (ssize_t)n;
    }
  }
  if (st->sent == st->n && st->done) {
    pthread_mutex_unlock(&s->lock);
    return MHD_CONTENT_READER_END_OF_STREAM;
  }
  char *msg = st->queue[st->sent];
  pthread_mutex_unlock(&s->lock);
  /* "event: message\ndata: <json>\n\n", possibly over several calls. */
  size_t need = strlen(msg) + 24;
  char *event = malloc(need);
  if (event == NULL)
    return MHD_CONTENT_READER_END_WITH_ERROR;
  int len = snprintf(event, need, "event: message\ndata: %s\n\n", msg);
  size_t left = (size_t)len - st->offset;
  size_t n = left < max ? left : max;
  memcpy(buf, event + st->offset, n);
  free(event);
  st->offset += n;
  if (st->offset == (size_t)len) {
    pthread_mutex_lock(&s->lock);
    st->sent++;
    st->offset = 0;
    pthread_mutex_unlock(&s->lock);
  }
  return (ssize_t)n;
}

/* The response is gone (complete, or the client disconnected). */
static void sse_done(void *cls) {
  stream *st = cls;
  session *s = st->session;
  pthread_mutex_lock(&s->lock);
  bool finished = st->done && st->sent == st->n;
  pthread_mutex_unlock(&s->lock);
  if (!finished) {
    /* The client went away mid-call: cancel it (kills the code). */
    char note[256];
    snprintf(note, sizeof(note),
             "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":"
             "{\"requestId\":%s,\"reason\":\"client disconnected\"}}",
             st->id);
    eb_mcp_handle(s->mcp, note, strlen(note));
  }
  stream_close(st);
  session_put(s->server, s); /* the stream's reference */
}

/* ------------------------------------------------------------- handler */

static bool origin_allowed(const char *origin) {
  if (origin == NULL)
    return true; /* not a browser */
  static const char *const ok[] = {"http://localhost", "http://127.0.0.1", "http://[::1]",
                                   "https://localhost", "https://127.0.0.1", "https://[::1]"};
  for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
    size_t n = strlen(ok[i]);
    if (strncmp(origin, ok[i], n) == 0 && (origin[n] == '\0' || origin[n] == ':'))
      return true;
  }
  return false;
}

static bool version_supported(const char *v) {
  static const char *const known[] = {EB_MCP_PROTOCOL_VERSION, "2025-06-18", "2025-03-26",
                                      "2024-11-05"};
  for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
    if (strcmp(v, known[i]) == 0)
      return true;
  return false;
}

static enum MHD_Result handle_post(http_server *h, struct MHD_Connection *c, request *rq) {
  const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
  const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
  json_t *msg = json_loadb(rq->body ? rq->body : "", rq->len, 0, NULL);
  if (msg == NULL)
    return rpc_error(c, MHD_HTTP_BAD_REQUEST, -32700, "parse error: malformed JSON");
  const char *method = json_string_value(json_object_get(msg, "method"));
  json_t *id = json_object_get(msg, "id");
  if (!json_is_object(msg) || (id != NULL && !json_is_string(id) && !json_is_integer(id))) {
    json_decref(msg);
    return rpc_error(c, MHD_HTTP_BAD_REQUEST, -32600,
                     "not a JSON-RPC message (one object; id a string or an integer)");
  }
  bool is_request = method != NULL && id != NULL;
  bool is_init = is_request && strcmp(method, "initialize") == 0;
  enum MHD_Result ret;

  session *s = NULL;
  if (is_init && sid == NULL) {
    eb_error *err = NULL;
    pthread_mutex_lock(&h->lock);
    session *evict = NULL;
    if (h->n_sessions >= MAX_SESSIONS) {
      /* Sessions are never ended by some clients: make room by ending the
       * one idle longest (nothing of it runs). */
      session **oldest = NULL;
      for (session **p = &h->sessions; *p != NULL; p = &(*p)->next)
        if ((*p)->refs == 0 && (oldest == NULL || (*p)->last_used < (*oldest)->last_used))
          oldest = p;
      if (oldest != NULL) {
        evict = *oldest;
        *oldest = evict->next;
        h->n_sessions--;
      }
    }
    bool full = h->n_sessions >= MAX_SESSIONS;
    pthread_mutex_unlock(&h->lock);
    if (evict != NULL)
      session_free(evict);
    s = full ? NULL : session_new(h, &err);
    eb_error_free(err);
    if (s == NULL) {
      json_decref(msg);
      return rpc_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, -32603, "cannot open a session");
    }
    pthread_mutex_lock(&h->lock);
    s->next = h->sessions;
    h->sessions = s;
    h->n_sessions++;
    s->refs++;
    pthread_mutex_unlock(&h->lock);
  } else if (sid == NULL) {
    json_decref(msg);
    return rpc_error(c, MHD_HTTP_BAD_REQUEST, -32600, "missing Mcp-Session-Id (initialize first)");
  } else if ((s = session_get(h, sid)) == NULL) {
    json_decref(msg);
    return rpc_error(c, MHD_HTTP_NOT_FOUND, -32600, "unknown or ended session");
  }

  if (!is_request) {
    /* Notifications and responses: accepted, nothing to return. */
    eb_mcp_handle(s->mcp, rq->body, rq->len);
    session_put(h, s);
    json_decref(msg);
    return reply(c, MHD_HTTP_ACCEPTED, NULL, "", NULL);
  }

  char *id_text = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
  stream *st = id_text ? stream_open(s, id_text) : NULL;
  free(id_text);
  if (st == NULL) {
    session_put(h, s);
    json_decref(msg);
    return rpc_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, -32603, "out of memory");
  }
  bool sse = strcmp(method, "tools/call") == 0 && accept != NULL &&
             strstr(accept, "text/event-stream") != NULL;
  eb_mcp_handle(s->mcp, rq->body, rq->len);
  json_decref(msg);

  if (sse) {
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_reader, st, sse_done);
    if (r == NULL) {
      stream_close(st);
      session_put(h, s);
      return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-cache");
    if (is_init)
      MHD_add_response_header(r, "Mcp-Session-Id", s->id);
    ret = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    /* The request's reference passes to the stream (released by sse_done). */
    return ret;
  }
  /* Plain JSON: wait for the response (progress notifications are dropped). */
  pthread_mutex_lock(&s->lock);
  while (!st->done)
    pthread_cond_wait(&st->more, &s->lock);
  char *body = st->n > 0 ? strdup(st->queue[st->n - 1]) : NULL;
  pthread_mutex_unlock(&s->lock);
  stream_close(st);
  if (body == NULL) /* cancelled: no response to give */
    ret = reply(c, MHD_HTTP_ACCEPTED, NULL, "", NULL);
  else
    ret = reply(c, MHD_HTTP_OK, "application/json", body, is_init ? s->id : NULL);
  free(body);
  session_put(h, s);
  return ret;
}

static enum MHD_Result handle_delete(http_server *h, struct MHD_Connection *c) {
  const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
  if (sid == NULL)
    return rpc_error(c, MHD_HTTP_BAD_REQUEST, -32600, "missing Mcp-Session-Id");
  pthread_mutex_lock(&h->lock);
  session *found = NULL;
  for (session **p = &h->sessions; *p != NULL; p = &(*p)->next)
    if (strcmp((*p)->id, sid) == 0) {
      found = *p;
      *p = found->next;
      h->n_sessions--;
      found->deleted = true;
      found->refs++; /* ours, for the cancellation below */
      break;
    }
  pthread_mutex_unlock(&h->lock);
  if (found == NULL)
    return rpc_error(c, MHD_HTTP_NOT_FOUND, -32600, "unknown or ended session");
  eb_mcp_cancel_all(found->mcp); /* its running code is killed; streams end */
  session_put(h, found);         /* freed now, or when its last stream ends */
  return reply(c, MHD_HTTP_OK, NULL, "", NULL);
}

enum MHD_Result eb_mcp_http_handle(eb_mcp_http *h, struct MHD_Connection *c, const char *method,
                                   const char *body, size_t len, bool too_large) {
  request one = {.body = (char *)body, .len = len, .too_large = too_large};
  request *rq = &one;
  if (!origin_allowed(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin")))
    return rpc_error(c, MHD_HTTP_FORBIDDEN, -32600, "origin not allowed");
  const char *pv = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
  if (pv != NULL && !version_supported(pv))
    return rpc_error(c, MHD_HTTP_BAD_REQUEST, -32600, "unsupported MCP-Protocol-Version");
  if (strcmp(method, "POST") == 0) {
    if (rq->too_large)
      return rpc_error(c, MHD_HTTP_CONTENT_TOO_LARGE, -32600, "message too large");
    return handle_post(h, c, rq);
  }
  if (strcmp(method, "DELETE") == 0)
    return handle_delete(h, c);
  struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(r, "Allow", "POST, DELETE");
  enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
  MHD_destroy_response(r);
  return ret;
}

eb_mcp_http *eb_mcp_http_new(const eb_mcp_options *opts) {
  eb_mcp_http *h = calloc(1, sizeof(*h));
  if (h == NULL)
    return NULL;
  h->opts = *opts;
  pthread_mutex_init(&h->lock, NULL);
  return h;
}

void eb_mcp_http_cancel_all(eb_mcp_http *h) {
  pthread_mutex_lock(&h->lock);
  for (session *s = h->sessions; s != NULL; s = s->next)
    eb_mcp_cancel_all(s->mcp);
  pthread_mutex_unlock(&h->lock);
}

void eb_mcp_http_free(eb_mcp_http *h) {
  if (h == NULL)
    return;
  while (h->sessions != NULL) {
    session *s = h->sessions;
    h->sessions = s->next;
    session_free(s);
  }
  pthread_mutex_destroy(&h->lock);
  free(h);
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version,
                                      const char *upload, size_t *upload_size, void **state) {
  (void)version;
  http_server *h = cls;
  eb_http_body *rq = NULL;
  enum MHD_Result early;
  if (!eb_http_body_collect(state, upload, upload_size, MAX_BODY, &rq, &early))
    return early;
  if (strcmp(url, "/mcp") != 0)
    return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "not found\n", NULL);
  return eb_mcp_http_handle(h, c, method, rq->body, rq->len, rq->too_large);
}


int mcp_http_serve(const char *listen, const eb_mcp_options *opts) {
  char host[64];
  int port = 0;
  const char *colon = strrchr(listen, ':');
  if (colon == NULL || (size_t)(colon - listen) >= sizeof(host)) {
    fprintf(stderr, "execbox: --http `%s` is not ADDR:PORT (e.g. 127.0.0.1:8765)\n", listen);
    return 64;
  }
  snprintf(host, sizeof(host), "%.*s", (int)(colon - listen), listen);
  char *end = NULL;
  long p = strtol(colon + 1, &end, 10);
  struct sockaddr_in addr = {.sin_family = AF_INET};
  if (end == colon + 1 || *end != '\0' || p < 0 || p > 65535 ||
      inet_pton(AF_INET, host[0] ? host : "127.0.0.1", &addr.sin_addr) != 1) {
    fprintf(stderr, "execbox: --http `%s` is not IPv4-ADDR:PORT (e.g. 127.0.0.1:8765)\n", listen);
    return 64;
  }
  port = (int)p;
  addr.sin_port = htons((uint16_t)port);
  eb_mcp_http *hp = eb_mcp_http_new(opts);
  if (hp == NULL) {
    fprintf(stderr, "execbox: out of memory\n");
    return 125;
  }

  /* Signals are taken by sigwait below, in this thread only. */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);
  struct MHD_Daemon *d = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG, 0, NULL,
      NULL, access_handler, hp, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
      MHD_OPTION_NOTIFY_COMPLETED, eb_http_body_completed, NULL, MHD_OPTION_CONNECTION_TIMEOUT,
      (unsigned)600, MHD_OPTION_END);
  if (d == NULL) {
    fprintf(stderr, "execbox: cannot listen on %s: %s\n", listen, strerror(errno));
    eb_mcp_http_free(hp);
    return 125;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  fprintf(stderr, "execbox: MCP server on http://%s:%u/mcp\n", host[0] ? host : "127.0.0.1",
          info ? info->port : (unsigned)port);
  fflush(stderr);
  int sig = 0;
  sigwait(&stop, &sig);
  fprintf(stderr, "execbox: stopping (signal %d)\n", sig);
  /* End the calls first, so that no connection waits for one. */
  eb_mcp_http_cancel_all(hp);
  MHD_stop_daemon(d);
  eb_mcp_http_free(hp);
  return 0;
}
