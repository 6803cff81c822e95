/* libFuzzer target: Docker's multiplexed stream decoder on arbitrary bytes,
 * fed in chunks whose sizes the input itself chooses. Whatever the
 * chunking, the decoder must hand on exactly the same payload bytes, in
 * the same order and to the same streams, as when fed everything at once. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/capture.h"
#include "runtime/docker/docker_mux.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct sink {
  eb_buf bytes; /* stream number, then the byte, for each payload byte */
} sink;

static int collect(void *user, int stream, const char *d, size_t len) {
  sink *s = user;
  if (stream < DOCKER_STREAM_STDIN || stream > DOCKER_STREAM_SYSTEMERR)
    __builtin_trap();
  for (size_t i = 0; i < len; i++) {
    char pair[2] = {(char)stream, d[i]};
    if (eb_buf_append(&s->bytes, pair, 2) < 0)
      return -ENOMEM;
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t chunk = (size_t)data[0] % 13 + 1;
  const char *in = (const char *)data + 1;
  size_t len = size - 1;

  sink whole = {{0}}, pieces = {{0}};
  docker_mux a, b;
  docker_mux_init(&a);
  docker_mux_init(&b);
  int ra = docker_mux_feed(&a, in, len, collect, &whole);
  int rb = 0;
  for (size_t off = 0; off < len && rb == 0; off += chunk)
    rb = docker_mux_feed(&b, in + off, len - off < chunk ? len - off : chunk, collect, &pieces);
  if ((ra < 0) != (rb < 0) || whole.bytes.len != pieces.bytes.len ||
      (whole.bytes.len > 0 && memcmp(whole.bytes.data, pieces.bytes.data, whole.bytes.len) != 0))
    __builtin_trap();
  if (whole.bytes.len / 2 > len) /* never more payload than input */
    __builtin_trap();
  free(whole.bytes.data);
  free(pieces.bytes.data);
  return 0;
}
