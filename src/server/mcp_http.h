/* The Streamable HTTP transport of `execbox mcp --http`. */
#ifndef EB_SERVER_MCP_HTTP_H
#define EB_SERVER_MCP_HTTP_H

#include <microhttpd.h>
#include <stdbool.h>

#include <execbox/mcp.h>

/* The transport, to mount at /mcp of another libmicrohttpd server. */
typedef struct eb_mcp_http eb_mcp_http;
eb_mcp_http *eb_mcp_http_new(const eb_mcp_options *opts);
/* Handles one complete request to /mcp (body collected by the caller). */
enum MHD_Result eb_mcp_http_handle(eb_mcp_http *h, struct MHD_Connection *c, const char *method,
                                   const char *body, size_t len, bool too_large);
/* Cancels every call of every session (before stopping the daemon). */
void eb_mcp_http_cancel_all(eb_mcp_http *h);
void eb_mcp_http_free(eb_mcp_http *h);

/* Serves MCP at http://LISTEN/mcp until SIGINT or SIGTERM. Returns an exit
 * status. opts->runtime is borrowed. */
int mcp_http_serve(const char *listen, const eb_mcp_options *opts);

#endif
