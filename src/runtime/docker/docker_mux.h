/* Docker's multiplexed stream: what attach (and logs) return for a container
 * without a TTY. Each frame is an 8-byte header — the stream (0 stdin,
 * 1 stdout, 2 stderr, 3 an error of the daemon's own), three zero bytes, the
 * payload's length as a big-endian 32-bit number — then the payload.
 *
 * The decoder is incremental: bytes may arrive in chunks of any size, and a
 * frame's payload is handed on piece by piece as it arrives, so nothing is
 * buffered beyond a partial header. */
#ifndef EB_RUNTIME_DOCKER_MUX_H
#define EB_RUNTIME_DOCKER_MUX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
  DOCKER_STREAM_STDIN = 0,
  DOCKER_STREAM_STDOUT = 1,
  DOCKER_STREAM_STDERR = 2,
  DOCKER_STREAM_SYSTEMERR = 3,
};

/* Receives a piece of a frame's payload. Returns 0 to go on, < 0 to stop
 * (docker_mux_feed() then returns that value). */
typedef int (*docker_mux_fn)(void *user, int stream, const char *data, size_t len);

typedef struct docker_mux {
  unsigned char header[8];
  size_t header_len; /* bytes of the current header seen so far */
  uint32_t left;     /* payload bytes of the current frame still to come */
  int stream;
  bool broken;       /* a malformed header was seen: everything after is refused */
} docker_mux;

void docker_mux_init(docker_mux *m);

/* Decodes len bytes. Returns 0, the callback's negative value, or -EPROTO
 * when a header is malformed (unknown stream, non-zero padding). */
int docker_mux_feed(docker_mux *m, const char *data, size_t len, docker_mux_fn fn, void *user);

/* True between frames (nothing partial pending): where a clean end of the
 * stream may fall. */
bool docker_mux_at_boundary(const docker_mux *m);

#endif
