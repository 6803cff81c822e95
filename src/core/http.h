/* A small HTTP client over libcurl (LLM clients, the remote runtime): one POST of a JSON
 * body, cancellable through an eb_ctx (the context's cancel fds are polled
 * together with the socket, so cancelling stops a request at once). */
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

/* POSTs body (a GET when body is NULL) to url with the given header lines ("Name: value", NULL-
 * terminated). A 2xx body goes to on_body when it is given. Returns 0 when
 * a response arrived (whatever its status); < 0 with EB_ERR_CANCELLED,
 * EB_ERR_TIMEOUT (the context's deadline) or EB_ERR_LLM_PROVIDER (could not
 * connect, connection lost, ...). */
int eb_http_post(eb_ctx *ctx, const char *url, const char *const *headers, const char *body,
                 eb_http_body_fn on_body, void *user, eb_http_response *res, eb_error **err);

void eb_http_response_free(eb_http_response *res);

/* Parses a Retry-After value in seconds ("2", "1.5"); -1 if unusable. */
int64_t eb_http_parse_retry_after(const char *value);

#endif
