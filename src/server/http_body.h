/* Collecting a request body in a libmicrohttpd access handler, within a
 * limit, for both HTTP front-ends (execbox serve, execbox mcp --http). */
#ifndef EB_SERVER_HTTP_BODY_H
#define EB_SERVER_HTTP_BODY_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct eb_http_body {
  char *body;
  size_t len;
  bool too_large; /* more than the limit arrived: the rest was dropped */
} eb_http_body;

/* The start of an access handler. Returns true when the body is complete
 * and the request can be answered (*body set); false with *ret set when
 * the handler must return *ret now (first call, a chunk taken, ENOMEM). */
bool eb_http_body_collect(void **state, const char *upload, size_t *upload_size, size_t max,
                          eb_http_body **body, enum MHD_Result *ret);

/* MHD_OPTION_NOTIFY_COMPLETED callback freeing the collected body. */
void eb_http_body_completed(void *cls, struct MHD_Connection *c, void **state,
                            enum MHD_RequestTerminationCode code);

#endif
