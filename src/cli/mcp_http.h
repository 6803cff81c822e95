/* The Streamable HTTP transport of `execbox mcp --http`. */
#ifndef EB_CLI_MCP_HTTP_H
#define EB_CLI_MCP_HTTP_H

#include <execbox/mcp.h>

/* Serves MCP at http://LISTEN/mcp until SIGINT or SIGTERM. Returns an exit
 * status. opts->runtime is borrowed. */
int mcp_http_serve(const char *listen, const eb_mcp_options *opts);

#endif
