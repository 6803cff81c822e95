/* libFuzzer target: what a provider may send back — whole replies and
 * stream events of both wire formats, and tool arguments — parsed as the
 * client and the agent parse them. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <execbox/execbox.h>

#include "agent/llm_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const llm_wire *wire = data[0] & 1 ? &llm_wire_anthropic : &llm_wire_openai;
  json_t *j = json_loadb((const char *)data + 1, size - 1, JSON_DECODE_ANY, NULL);
  if (j == NULL)
    return 0;
  eb_llm_response res;
  memset(&res, 0, sizeof(res));
  eb_error *err = NULL;
  if (wire->parse(j, &res, &err) == 0) {
    /* The agent then checks each call's arguments. */
    for (size_t i = 0; i < res.message.n_tool_calls; i++) {
      json_t *args = json_loads(res.message.tool_calls[i].arguments, JSON_DECODE_ANY, NULL);
      json_decref(args);
    }
  }
  eb_message_clear(&res.message);
  eb_error_free(err);
  err = NULL;

  llm_stream s;
  memset(&s, 0, sizeof(s));
  wire->stream_event(&s, data[0] & 2 ? "content_block_delta" : "message", j);
  wire->stream_event(&s, "message", j); /* the same event twice: appends */
  memset(&res, 0, sizeof(res));
  if (s.error == NULL)
    llm_stream_to_message(&s, &res, &err);
  eb_message_clear(&res.message);
  eb_error_free(err);
  llm_stream_free(&s);

  const char *type = NULL, *message = NULL;
  wire->error_info(j, &type, &message);
  json_decref(j);
  return 0;
}
