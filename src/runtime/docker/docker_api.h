/* A client of the Docker Engine API (also Podman's Docker-compatible API)
 * over libcurl: a unix socket (the default, or DOCKER_HOST=unix://PATH) or
 * plain TCP (DOCKER_HOST=tcp://HOST:PORT). The API version is negotiated
 * once from GET /version. No process is spawned: every call is one HTTP
 * request, and every failure a typed eb_error:
 *
 *   daemon unreachable, too old, TLS asked for  EB_ERR_RUNTIME_UNAVAILABLE
 *   the context's deadline / cancellation       EB_ERR_TIMEOUT / EB_ERR_CANCELLED
 *   an API error                                the caller's choice, with the
 *                                               daemon's own message */
#ifndef EB_RUNTIME_DOCKER_API_H
#define EB_RUNTIME_DOCKER_API_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <execbox/context.h>
#include <execbox/error.h>

/* The oldest API version used: NanoCpus, Init and PidsLimit need 1.25. */
#define DOCKER_API_MIN_MAJOR 1
#define DOCKER_API_MIN_MINOR 25
/* The newest one asked for: nothing newer is needed. */
#define DOCKER_API_MAX_MAJOR 1
#define DOCKER_API_MAX_MINOR 45

#define DOCKER_DEFAULT_HOST "unix:///var/run/docker.sock"

typedef struct docker_api {
  char *host;        /* as configured, for messages */
  char *socket_path; /* unix socket, or NULL for TCP */
  char *base;        /* "http://docker" (unix) or "http://HOST:PORT" */
  char *host_header; /* Host: of hand-written requests */
  pthread_mutex_t mu; /* guards the negotiation */
  bool negotiated;
  char version[16];  /* "1.41" once negotiated */
  char engine[96];   /* the daemon's name and version, for `execbox runtimes` */
  bool podman;       /* Podman's compatibility API (it differs in small ways) */
} docker_api;

/* Parses host (NULL or "": $DOCKER_HOST, else the default socket). Fails
 * with EB_ERR_USAGE for a scheme other than unix:// or tcp://, and with
 * EB_ERR_RUNTIME_UNAVAILABLE when DOCKER_TLS_VERIFY asks for TLS, which this
 * client does not speak. */
int docker_api_init(docker_api *api, const char *host, eb_error **err);
void docker_api_free(docker_api *api);

/* GET /version once (thread-safe, idempotent): picks the daemon's API
 * version, capped at DOCKER_API_MAX. */
int docker_api_negotiate(docker_api *api, eb_ctx *ctx, eb_error **err);

/* One call of the versioned API: method ("GET", "POST", "DELETE"), path
 * after the version ("/containers/create"), body (JSON) or NULL, a bound in
 * ms besides ctx's (0: none). Returns 0 when the daemon answered, with its
 * HTTP status in *status and the reply parsed into *reply (NULL when it is
 * empty or not JSON; the caller decrefs it). reply may be NULL. */
int docker_api_call(docker_api *api, eb_ctx *ctx, const char *method, const char *path,
                    const char *body, int64_t timeout_ms, long *status, json_t **reply,
                    eb_error **err);

/* The daemon's explanation in an error reply ({"message": ...}), or a
 * placeholder. Borrowed from reply. */
const char *docker_api_message(const json_t *reply);

/* A hijacked attach connection: after the daemon's 101/200 answer the
 * socket carries the container's stdin one way and the multiplexed
 * stdout/stderr the other. */
typedef struct docker_stream {
  void *curl;    /* CURL * in connect-only mode */
  int fd;        /* its socket, for poll() and the half-close */
  char *pending; /* stream bytes that arrived with the answer's headers */
  size_t pending_len;
} docker_stream;

/* POST /containers/{id}/attach?stream=1&stdin=1&stdout=1&stderr=1 with an
 * upgrade. On an HTTP error returns -1 with *status set and the daemon's
 * message in *err (code EB_ERR_SANDBOX); *status is 0 for other failures. */
int docker_attach(docker_api *api, eb_ctx *ctx, const char *id, docker_stream *s, long *status,
                  eb_error **err);

/* Non-blocking send/receive on the stream: 0 with *n bytes moved (*n == 0
 * from recv means the daemon closed its side), 1 when the socket is not
 * ready, < 0 with err when the connection broke. */
int docker_stream_send(docker_stream *s, const char *data, size_t len, size_t *n, eb_error **err);
int docker_stream_recv(docker_stream *s, char *buf, size_t size, size_t *n, eb_error **err);

/* Ends our side: the container's stdin reaches EOF (StdinOnce). */
void docker_stream_close_write(docker_stream *s);
void docker_stream_close(docker_stream *s);

#endif
