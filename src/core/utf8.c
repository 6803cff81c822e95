#include "core/utf8.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, nothing past U+10FFFF), or 0 if it is not one. */
static size_t valid_sequence(const unsigned char *p, size_t left) {
  unsigned char c = p[0];
  if (c >= 0x01 && c < 0x80)
    return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0)
      lo = 0xA0;
    if (c == 0xED)
      hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0)
      lo = 0x90;
    if (c == 0xF4)
      hi = 0x8F;
  } else {
    return 0; /* NUL, a continuation byte, C0, C1, F5-FF */
  }
  if (left < n || p[1] < lo || p[1] > hi)
    return 0;
  for (size_t i = 2; i < n; i++)
    if ((p[i] & 0xC0) != 0x80)
      return 0;
  return n;
}

char *eb_utf8_sanitize(const char *data, size_t len, bool keep_nul, size_t *out_len) {
  /* Worst case every byte becomes the 3-byte replacement. */
  char *out = malloc(len * 3 + 1);
  if (out == NULL)
    return NULL;
  const unsigned char *p = (const unsigned char *)(data ? data : "");
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    size_t n = p[i] == 0 && keep_nul ? 1 : valid_sequence(p + i, len - i);
    if (n > 0) {
      memcpy(out + o, p + i, n);
      o += n;
      i += n;
    } else {
      memcpy(out + o, "\xEF\xBF\xBD", 3);
      o += 3;
      i++;
    }
  }
  out[o] = '\0';
  if (out_len != NULL)
    *out_len = o;
  return out;
}
