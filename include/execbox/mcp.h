/* An MCP (Model Context Protocol) server exposing execute_code, independent
 * of the transport: feed it incoming JSON-RPC messages, it sends responses
 * and notifications through a callback. The stdio and Streamable HTTP
 * transports of `execbox mcp` are built on it. */
#ifndef EXECBOX_MCP_H
#define EXECBOX_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <execbox/error.h>
#include <execbox/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The newest protocol version spoken; older ones a client asks for
 * (2025-06-18, 2025-03-26, 2024-11-05) are accepted too. */
#define EB_MCP_PROTOCOL_VERSION "2025-11-25"

typedef struct eb_mcp eb_mcp;

/* Sends one JSON-RPC message (a compact JSON text, no newline) to the
 * client. related_id is the JSON text of the request id the message belongs
 * to (a response, or a progress notification of that request), or NULL;
 * final is true for the response that ends that request. A cancelled
 * request ends with message NULL and final true: nothing is to be sent, but
 * a transport waiting for the request's end can stop waiting. Called from
 * several threads, one message at a time (the server serialises calls). */
typedef void (*eb_mcp_send_fn)(void *user, const char *message, const char *related_id,
                               bool final);

typedef struct eb_mcp_options {
  eb_runtime *runtime;      /* borrowed: must outlive the server */
  eb_limits limits;         /* of every execution (runtime defaults where zero) */
  size_t output_cap;        /* bytes of output returned (default 16 KiB, head and tail kept) */
  int max_concurrent;       /* executions at once (default 4); more calls wait their turn */
  int max_pending;          /* calls in flight including waiting ones (default 64) */
  size_t max_message_bytes; /* larger messages are refused (default 4 MiB) */
  int progress_interval_ms; /* progress notifications while code runs (default 500) */
} eb_mcp_options;

EB_EXPORT int eb_mcp_new(const eb_mcp_options *opts, eb_mcp_send_fn send, void *user,
                         eb_mcp **out, eb_error **err);

/* Handles one incoming message (not NUL-terminated; copied). Thread-safe.
 * Requests that run code return at once; their response follows from a
 * worker thread. Returns false if the message was not a JSON-RPC request
 * or notification the server accepted (an error response was sent where
 * one could be). */
EB_EXPORT bool eb_mcp_handle(eb_mcp *mcp, const char *message, size_t len);

/* Cancels every call in flight (their code is killed, no response is
 * sent) without waiting. Thread-safe. */
EB_EXPORT void eb_mcp_cancel_all(eb_mcp *mcp);

/* Cancels every call in flight and waits for the workers; frees the server. */
EB_EXPORT void eb_mcp_free(eb_mcp *mcp);

/* Whether the last handled initialize negotiated a session (for HTTP). */
EB_EXPORT const char *eb_mcp_negotiated_version(eb_mcp *mcp);

#ifdef __cplusplus
}
#endif
#endif
