#include "agent/sse.h"

#include <stdlib.h>
#include <string.h>

void eb_sse_init(eb_sse *p, size_t max, eb_sse_event_fn fn, void *user) {
  memset(p, 0, sizeof(*p));
  p->max = max;
  p->fn = fn;
  p->user = user;
}

static int dispatch(eb_sse *p) {
  int r = 0;
  if (p->has_data) {
    const char *data = p->data.data ? p->data.data : "";
    size_t len = p->data.len;
    if (len > 0 && data[len - 1] == '\n') /* the spec drops the last newline */
      len--;
    char saved = p->data.data ? p->data.data[len] : 0;
    if (p->data.data)
      p->data.data[len] = '\0';
    r = p->fn(p->user, p->event[0] ? p->event : "message", data, len);
    if (p->data.data)
      p->data.data[len] = saved;
  }
  p->data.len = 0;
  p->has_data = false;
  p->event[0] = '\0';
  return r;
}

/* One complete line (without its terminator). */
static int line(eb_sse *p, const char *l, size_t n) {
  if (n == 0)
    return dispatch(p);
  if (l[0] == ':')
    return 0; /* comment, e.g. keep-alive */
  const char *colon = memchr(l, ':', n);
  size_t name_len = colon ? (size_t)(colon - l) : n;
  const char *value = colon ? colon + 1 : l + n;
  size_t value_len = colon ? n - name_len - 1 : 0;
  if (value_len > 0 && value[0] == ' ') {
    value++;
    value_len--;
  }
  if (name_len == 4 && memcmp(l, "data", 4) == 0) {
    if (p->data.len + value_len + 1 > p->max)
      return -1;
    if (eb_buf_append(&p->data, value, value_len) < 0 || eb_buf_append(&p->data, "\n", 1) < 0)
      return -1;
    p->has_data = true;
  } else if (name_len == 5 && memcmp(l, "event", 5) == 0) {
    size_t k = value_len < sizeof(p->event) - 1 ? value_len : sizeof(p->event) - 1;
    memcpy(p->event, value, k);
    p->event[k] = '\0';
  }
  /* id and retry are not used by LLM streams. */
  return 0;
}

int eb_sse_feed(eb_sse *p, const char *bytes, size_t len) {
  if (p->stopped)
    return -1;
  for (size_t i = 0; i < len; i++) {
    char c = bytes[i];
    if (c == '\n' && p->last_cr) {
      p->last_cr = false;
      continue; /* the \n of a \r\n split across chunks or lines */
    }
    p->last_cr = false;
    if (c == '\r' || c == '\n') {
      p->last_cr = c == '\r';
      int r = line(p, p->line.data ? p->line.data : "", p->line.len);
      p->line.len = 0;
      if (r < 0) {
        p->stopped = true;
        return -1;
      }
      continue;
    }
    if (p->line.len + 1 > p->max || eb_buf_append(&p->line, &c, 1) < 0) {
      p->stopped = true;
      return -1;
    }
  }
  return 0;
}

int eb_sse_finish(eb_sse *p) {
  if (p->stopped)
    return -1;
  if (p->line.len > 0) {
    int r = line(p, p->line.data, p->line.len);
    p->line.len = 0;
    if (r < 0)
      return -1;
  }
  return dispatch(p);
}

void eb_sse_free(eb_sse *p) {
  free(p->line.data);
  free(p->data.data);
  memset(p, 0, sizeof(*p));
}
