/* A small HTTP client over libcurl (LLM clients, the remote runtime, the
 * Docker Engine API): one request, cancellable through an eb_ctx (the
 * context's cancel fds are polled together with the socket, so cancelling
 * stops a request at once). */
#ifndef EB_CORE_HTTP_H
#define EB_CORE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <execbox/context.h>
#include <execbox/error.h>

#include "core/capture.h"

/* Receives the body of a 2xx response as it arrives. Returns 0 to go on,
 * < 0 to abort the transfer. */
typedef int (*eb_http_body_fn)(void *user, const char *data, size_t len);

typedef struct eb_http_response {
  long status;            /* 0 when no response arrived */
  eb_buf body;            /* the body, unless it went to the stream callback */
  int64_t retry_after_ms; /* from retry-after-ms or Retry-After; -1 if absent */
  bool never_sent;        /* the connection failed before anything was sent */
} eb_http_response;

/* One request. Pointers are borrowed for the duration of the call. */
typedef struct eb_http_request {
  const char *method;             /* NULL: POST when there is a body, else GET */
  const char *url;
  const char *unix_socket;        /* connect to this socket instead of the URL's host */
  const char *const *headers;     /* "Name: value" lines, NULL-terminated, or NULL */
  const char *body;               /* NULL: no body */
  size_t body_len;                /* 0: strlen(body) */
  const char *content_type;       /* NULL: application/json */
  int64_t timeout_ms;             /* bound of the whole request besides the context's; 0: none */
  int transport_error;            /* code for "could not connect / connection lost"; 0:
                                     EB_ERR_LLM_PROVIDER */
  eb_http_body_fn on_body;        /* receives a 2xx body as it arrives, or NULL */
  void *user;
} eb_http_request;

/* Performs req. Returns 0 when a response arrived (whatever its status); < 0
 * with EB_ERR_CANCELLED, EB_ERR_TIMEOUT (the context's deadline) or
 * req->transport_error (could not connect, connection lost, timeout_ms
 * passed, ...). */
int eb_http_do(eb_ctx *ctx, const eb_http_request *req, eb_http_response *res, eb_error **err);

/* POSTs body (a GET when body is NULL) to url with the given header lines ("Name: value", NULL-
 * terminated). A 2xx body goes to on_body when it is given. Returns 0 when
 * a response arrived (whatever its status); < 0 with EB_ERR_CANCELLED,
 * EB_ERR_TIMEOUT (the context's deadline) or EB_ERR_LLM_PROVIDER (could not
 * connect, connection lost, ...). */
int eb_http_post(eb_ctx *ctx, const char *url, const char *const *headers, const char *body,
                 eb_http_body_fn on_body, void *user, eb_http_response *res, eb_error **err);

void eb_http_response_free(eb_http_response *res);

/* libcurl's global initialisation, once per process (thread-safe); for
 * callers that use libcurl directly. */
void eb_http_global_init(void);

/* Parses a Retry-After value in seconds ("2", "1.5"); -1 if unusable. */
int64_t eb_http_parse_retry_after(const char *value);

#endif
