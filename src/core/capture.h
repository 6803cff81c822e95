/* Bounded output capture: stdout and stderr kept separately and interleaved
 * in arrival order, all under one byte cap. */
#ifndef EB_CORE_CAPTURE_H
#define EB_CORE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

#include <execbox/runtime.h>

typedef struct eb_buf {
  char *data;
  size_t len, alloc;
} eb_buf;

typedef struct eb_capture {
  eb_buf output, out, err;
  size_t cap;   /* max bytes over both streams */
  size_t total; /* bytes kept so far */
  bool truncated;
} eb_capture;

enum { EB_STREAM_STDOUT = 1, EB_STREAM_STDERR = 2 };

void eb_capture_init(eb_capture *c, size_t cap);

/* Appends bytes from a stream. Keeps at most the cap; returns 1 once the cap
 * has been exceeded (bytes were dropped), 0 otherwise, -1 on ENOMEM. */
int eb_capture_append(eb_capture *c, int stream, const char *data, size_t len);

/* Moves the buffers into res (NUL-terminated) and sets res->truncated. */
int eb_capture_finish(eb_capture *c, eb_exec_result *res);

void eb_capture_free(eb_capture *c);

/* Appends to a growable buffer, keeping a spare byte for the NUL. */
int eb_buf_append(eb_buf *b, const char *data, size_t len);

#endif
