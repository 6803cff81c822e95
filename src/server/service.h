/* The HTTP execution service behind `execbox serve`. */
#ifndef EB_SERVER_SERVICE_H
#define EB_SERVER_SERVICE_H

#include <stddef.h>

#include <execbox/runtime.h>

typedef struct eb_service_options {
  eb_runtime *runtime;   /* borrowed */
  const char *host;      /* IPv4 address to bind */
  int port;              /* 0: any free port (printed on stderr) */
  const char *token;     /* bearer token, or NULL for none */
  int max_concurrent;    /* executions at once */
  int max_queue;         /* requests waiting for a slot; more get 429 */
  size_t max_body_bytes; /* larger bodies get 413 */
  eb_limits max_limits;  /* the most a request may ask for (wall_ms, memory, output) */
} eb_service_options;

/* Serves until SIGINT/SIGTERM, then drains. Returns an exit status. */
int eb_service_run(const eb_service_options *opts);

#endif
