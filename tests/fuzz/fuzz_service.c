/* libFuzzer target: what crosses the wire between execbox serve and the
 * remote runtime — a POST /v1/execute body as the server parses it, and a
 * result object as the remote runtime parses it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <execbox/execbox.h>

#include "server/request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  eb_limits max = {.wall_ms = 60000, .memory_bytes = 1LL << 30, .output_bytes = 1 << 20};
  eb_parsed_request p;
  const char *detail = NULL;
  if (eb_parse_execute_request((const char *)data, size, &max, &p, &detail) == EB_PARSE_OK &&
      (p.req.language == NULL || p.req.code == NULL || p.req.limits.wall_ms > max.wall_ms))
    __builtin_trap(); /* an accepted request is complete and within bounds */
  eb_parsed_request_free(&p);

  eb_exec_result res;
  eb_error *err = NULL;
  if (eb_exec_result_from_json((const char *)data, size, &res, &err) == 0) {
    char *again = eb_exec_result_to_json(&res); /* and back */
    free(again);
    eb_exec_result_clear(&res);
  }
  eb_error_free(err);
  return 0;
}
