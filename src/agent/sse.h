/* A Server-Sent Events parser (the streaming format of both LLM APIs).
 * Fed arbitrary chunks; calls back once per complete event. */
#ifndef EB_AGENT_SSE_H
#define EB_AGENT_SSE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/capture.h"

/* event: the event's type ("message" when none was given); data: the data
 * lines joined by '\n', NUL-terminated. Returns 0 to go on, < 0 to stop. */
typedef int (*eb_sse_event_fn)(void *user, const char *event, const char *data, size_t len);

typedef struct eb_sse {
  eb_buf line, data;
  char event[64];
  bool has_data;
  bool last_cr;    /* the previous chunk ended with \r: a following \n belongs to it */
  bool stopped;    /* the callback asked to stop, or a limit was hit */
  size_t max;      /* longest line or event accepted */
  eb_sse_event_fn fn;
  void *user;
} eb_sse;

void eb_sse_init(eb_sse *p, size_t max, eb_sse_event_fn fn, void *user);
/* Returns 0, or -1 once stopped (by the callback or an oversized event). */
int eb_sse_feed(eb_sse *p, const char *bytes, size_t len);
/* Dispatches a pending event at end of stream (a final event without its
 * blank line). */
int eb_sse_finish(eb_sse *p);
void eb_sse_free(eb_sse *p);

#endif
