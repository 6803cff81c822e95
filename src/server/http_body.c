#include "server/http_body.h"

#include <stdlib.h>
#include <string.h>

bool eb_http_body_collect(void **state, const char *upload, size_t *upload_size, size_t max,
                          eb_http_body **body, enum MHD_Result *ret) {
  eb_http_body *b = *state;
  if (b == NULL) { /* headers only so far */
    b = calloc(1, sizeof(*b));
    *ret = b != NULL ? MHD_YES : MHD_NO;
    *state = b;
    return false;
  }
  if (*upload_size > 0) {
    if (!b->too_large) {
      if (b->len + *upload_size > max) {
        b->too_large = true;
      } else {
        char *grown = realloc(b->body, b->len + *upload_size + 1);
        if (grown == NULL) {
          *ret = MHD_NO;
          return false;
        }
        b->body = grown;
        memcpy(b->body + b->len, upload, *upload_size);
        b->len += *upload_size;
        b->body[b->len] = '\0';
      }
    }
    *upload_size = 0;
    *ret = MHD_YES;
    return false;
  }
  *body = b;
  return true;
}

void eb_http_body_completed(void *cls, struct MHD_Connection *c, void **state,
                            enum MHD_RequestTerminationCode code) {
  (void)cls;
  (void)c;
  (void)code;
  eb_http_body *b = *state;
  if (b != NULL) {
    free(b->body);
    free(b);
  }
  *state = NULL;
}
