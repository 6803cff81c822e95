/* Shared by the LLM client core (llm.c) and the two wire formats. */
#ifndef EB_AGENT_LLM_INTERNAL_H
#define EB_AGENT_LLM_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>

#include <execbox/llm.h>

#include "core/capture.h"

typedef struct llm_client llm_client;

/* A tool call being assembled from stream deltas. */
typedef struct llm_partial_call {
  int index;
  char *id, *name;
  eb_buf args;
} llm_partial_call;

/* The state of one streamed reply. */
typedef struct llm_stream {
  eb_buf text;
  llm_partial_call *calls;
  size_t n_calls, cap_calls;
  char stop_reason[32];
  bool done;       /* the stream said it was complete */
  bool shown;      /* answer text went to on_text */
  size_t bytes;    /* text and arguments so far, against the reply limit */
  eb_error *error; /* a failure inside the stream (error event, malformed chunk) */
  eb_llm_text_fn on_text;
  void *user;
} llm_stream;

/* The calls with this stream index, created if new. NULL on ENOMEM. */
llm_partial_call *llm_stream_call(llm_stream *s, int index);
/* Appends answer text and passes it to on_text. */
int llm_stream_text(llm_stream *s, const char *text, size_t len);
/* Appends to a buffer of the reply (tool arguments), within the reply limit. */
int llm_stream_add(llm_stream *s, eb_buf *b, const char *data, size_t len);

typedef struct llm_wire {
  const char *name;
  const char *path; /* appended to the base URL */
  /* The request body for req. Returns a json object (caller decrefs). */
  json_t *(*build)(const llm_client *c, const eb_llm_request *req, bool stream);
  /* Header lines beyond Content-Type (at most 4, static or in buf). */
  void (*headers)(const llm_client *c, const char *out[5], char *buf, size_t size);
  /* A complete (non-streamed) reply. */
  int (*parse)(json_t *body, eb_llm_response *res, eb_error **err);
  /* One SSE event of a streamed reply. Returns < 0 to stop (s->error set). */
  int (*stream_event)(llm_stream *s, const char *event, json_t *data);
  /* The provider's error type and message from an error body (borrowed from
   * body; either may be NULL). */
  void (*error_info)(json_t *body, const char **type, const char **message);
} llm_wire;

struct llm_client {
  const llm_wire *wire;
  char *provider, *model, *base_url, *api_key, *url;
  bool stream;
  int max_tokens;
};

extern const llm_wire llm_wire_openai;
extern const llm_wire llm_wire_anthropic;

/* Appends msg to conv, moving its contents (msg is zeroed). */
int eb_conversation_push(eb_conversation *conv, eb_message *msg, eb_error **err);

/* Helpers for building requests. */
json_t *llm_tool_schema(const eb_tool *tool); /* the parameters as a JSON object */

/* Frees what a stream state holds (text, partial calls, error). */
void llm_stream_free(llm_stream *s);

/* Makes a message's tool call list from partial calls (moves strings). */
int llm_stream_to_message(llm_stream *s, eb_llm_response *res, eb_error **err);

#endif
