#include "runtime/docker/docker_mux.h"

#include <errno.h>
#include <string.h>

void docker_mux_init(docker_mux *m) { memset(m, 0, sizeof(*m)); }

bool docker_mux_at_boundary(const docker_mux *m) {
  return !m->broken && m->header_len == 0 && m->left == 0;
}

int docker_mux_feed(docker_mux *m, const char *data, size_t len, docker_mux_fn fn, void *user) {
  if (m->broken)
    return -EPROTO;
  while (len > 0) {
    if (m->left == 0) {
      size_t take = sizeof(m->header) - m->header_len;
      if (take > len)
        take = len;
      memcpy(m->header + m->header_len, data, take);
      m->header_len += take;
      data += take;
      len -= take;
      if (m->header_len < sizeof(m->header))
        return 0;
      m->header_len = 0;
      const unsigned char *h = m->header;
      if (h[0] > DOCKER_STREAM_SYSTEMERR || h[1] != 0 || h[2] != 0 || h[3] != 0) {
        m->broken = true;
        return -EPROTO;
      }
      m->stream = h[0];
      m->left = (uint32_t)h[4] << 24 | (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];
      continue; /* an empty frame is legal: nothing to hand on */
    }
    size_t take = m->left < len ? m->left : len;
    m->left -= (uint32_t)take;
    int r = fn(user, m->stream, data, take);
    if (r < 0)
      return r;
    data += take;
    len -= take;
  }
  return 0;
}
