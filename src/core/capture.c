#include "core/capture.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int eb_buf_append(eb_buf *b, const char *data, size_t len) {
  if (b->len + len + 1 > b->alloc) {
    size_t want = b->alloc ? b->alloc : 4096;
    while (want < b->len + len + 1)
      want *= 2;
    char *p = realloc(b->data, want);
    if (p == NULL)
      return -1;
    b->data = p;
    b->alloc = want;
  }
  memcpy(b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
  return 0;
}

void eb_capture_init(eb_capture *c, size_t cap) {
  memset(c, 0, sizeof(*c));
  c->cap = cap;
}

int eb_capture_append(eb_capture *c, int stream, const char *data, size_t len) {
  size_t room = c->cap > c->total ? c->cap - c->total : 0;
  size_t keep = len < room ? len : room;
  if (keep > 0) {
    eb_buf *side = stream == EB_STREAM_STDERR ? &c->err : &c->out;
    if (eb_buf_append(&c->output, data, keep) < 0 || eb_buf_append(side, data, keep) < 0)
      return -1;
    c->total += keep;
  }
  if (keep < len) {
    c->truncated = true;
    return 1;
  }
  return 0;
}

static char *buf_take(eb_buf *b, size_t *len) {
  if (b->data == NULL) {
    *len = 0;
    return calloc(1, 1);
  }
  char *d = b->data;
  *len = b->len;
  b->data = NULL;
  b->len = b->alloc = 0;
  return d;
}

int eb_capture_finish(eb_capture *c, eb_exec_result *res) {
  free(res->output);
  free(res->stdout_data);
  free(res->stderr_data);
  res->output = buf_take(&c->output, &res->output_len);
  res->stdout_data = buf_take(&c->out, &res->stdout_len);
  res->stderr_data = buf_take(&c->err, &res->stderr_len);
  res->truncated = c->truncated;
  if (res->output == NULL || res->stdout_data == NULL || res->stderr_data == NULL)
    return -1;
  return 0;
}

void eb_capture_free(eb_capture *c) {
  free(c->output.data);
  free(c->out.data);
  free(c->err.data);
  memset(c, 0, sizeof(*c));
}
