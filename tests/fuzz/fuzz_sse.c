/* libFuzzer target: the SSE parser on arbitrary bytes, fed in chunks whose
 * sizes the input itself chooses. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent/sse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(void *user, const char *event, const char *d, size_t len) {
  size_t *n = user;
  *n += len + strlen(event);
  if (len > 0 && d[len] != '\0') /* the data must be NUL-terminated */
    __builtin_trap();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t chunk = (size_t)data[0] % 17 + 1, total = 0;
  eb_sse p;
  eb_sse_init(&p, 4096, count, &total);
  for (size_t off = 1; off < size; off += chunk) {
    size_t n = size - off < chunk ? size - off : chunk;
    if (eb_sse_feed(&p, (const char *)data + off, n) < 0)
      break;
  }
  eb_sse_finish(&p);
  eb_sse_free(&p);
  return 0;
}
