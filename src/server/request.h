/* Parsing a POST /v1/execute body into an execution request (no HTTP
 * here, so that it can be fuzzed on its own). */
#ifndef EB_SERVER_REQUEST_H
#define EB_SERVER_REQUEST_H

#include <jansson.h>
#include <stddef.h>

#include <execbox/runtime.h>

typedef struct eb_parsed_request {
  eb_exec_request req; /* points into json, args and env */
  json_t *json;
  const char *args[65], *env[65];
} eb_parsed_request;

typedef enum eb_parse_status {
  EB_PARSE_OK = 0,
  EB_PARSE_INVALID,        /* 400: not an object with string language and code */
  EB_PARSE_LIMIT_TOO_HIGH, /* 400: a limit above the server's maximum */
  EB_PARSE_LANGUAGE,       /* 422: unknown or unavailable language */
} eb_parse_status;

/* Parses body within max (the server's maximum wall_ms, memory_bytes,
 * output_bytes). On any status, *detail (static or in out) names what was
 * wrong; out->json holds the document when not NULL (free with
 * eb_parsed_request_free). */
eb_parse_status eb_parse_execute_request(const char *body, size_t len, const eb_limits *max,
                                         eb_parsed_request *out, const char **detail);
void eb_parsed_request_free(eb_parsed_request *p);

#endif
