/* LLM clients: one interface, two wire formats (OpenAI-compatible Chat
 * Completions — OpenAI, Ollama, llama.cpp server, vLLM, OpenRouter, ... —
 * and Anthropic Messages), streaming or not. Conversations are plain data
 * kept by the caller. */
#ifndef EXECBOX_LLM_H
#define EXECBOX_LLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <execbox/context.h>
#include <execbox/error.h>
#include <execbox/tool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum eb_role { EB_ROLE_USER, EB_ROLE_ASSISTANT, EB_ROLE_TOOL } eb_role;

typedef struct eb_tool_call {
  char *id;
  char *name;
  char *arguments; /* JSON text as the model sent it (may be malformed) */
} eb_tool_call;

/* One message. All strings are owned by the message. */
typedef struct eb_message {
  eb_role role;
  char *content;            /* text; NULL for an assistant message with only tool calls */
  eb_tool_call *tool_calls; /* assistant only */
  size_t n_tool_calls;
  char *tool_call_id;       /* tool only: the call answered */
  char *tool_name;          /* tool only */
  bool is_error;            /* tool only: the call failed */
} eb_message;

/* A conversation: owned by the caller, who keeps it across turns. */
typedef struct eb_conversation {
  eb_message *messages;
  size_t n, cap;
} eb_conversation;

/* Appends a user message (text copied). */
EB_EXPORT int eb_conversation_add_user(eb_conversation *conv, const char *text, eb_error **err);
/* Frees every message and resets to empty. */
EB_EXPORT void eb_conversation_clear(eb_conversation *conv);

typedef struct eb_llm eb_llm;

/* Receives streamed answer text as it arrives (not NUL-terminated). */
typedef void (*eb_llm_text_fn)(void *user, const char *text, size_t len);

typedef struct eb_llm_request {
  const char *system;           /* system prompt, or NULL */
  const eb_conversation *conv;
  eb_tool *const *tools;        /* offered tools (borrowed) */
  size_t n_tools;
  bool tools_disabled;          /* send the tools but forbid calling them (tool_choice none) */
  int max_attempts;             /* attempts per call (retries on 408/409/429/5xx); <= 0: 1 */
  int64_t attempt_timeout_ms;   /* per attempt; <= 0: the context's deadline only */
  eb_llm_text_fn on_text;       /* optional */
  void *user;
} eb_llm_request;

/* What one call returned: the assistant message (owned by the caller, who
 * usually moves it into the conversation) and why it stopped. */
typedef struct eb_llm_response {
  eb_message message;
  char stop_reason[32];
  int attempts; /* how many HTTP attempts it took */
} eb_llm_response;

typedef struct eb_llm_ops {
  const char *name; /* wire format: "openai" or "anthropic" */
  int (*generate)(eb_llm *llm, eb_ctx *ctx, const eb_llm_request *req, eb_llm_response *res,
                  eb_error **err);
  void (*destroy)(eb_llm *llm);
} eb_llm_ops;

struct eb_llm {
  const eb_llm_ops *ops;
  void *impl;
};

typedef struct eb_llm_options {
  const char *provider; /* "openai", "anthropic", "ollama" */
  const char *model;
  const char *base_url; /* NULL: from the environment, else the provider's default */
  const char *api_key;  /* NULL: from the environment (not needed for ollama) */
  bool stream;          /* use SSE streaming (default in the CLI) */
  int max_tokens;       /* 0: 4096 */
} eb_llm_options;

/* Creates a client. Strings are copied. Environment: OPENAI_BASE_URL,
 * OPENAI_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, OLLAMA_HOST. A
 * missing key fails here with EB_ERR_LLM_AUTH. */
EB_EXPORT int eb_llm_new(const eb_llm_options *opts, eb_llm **out, eb_error **err);

/* "openai:gpt-4o-mini", "anthropic:claude-sonnet-4-5", "ollama:llama3.2". */
EB_EXPORT int eb_llm_new_from_spec(const char *spec, bool stream, eb_llm **out, eb_error **err);

/* One call. Errors are classified: EB_ERR_LLM_RATE_LIMIT, _QUOTA, _AUTH,
 * _CONTEXT, _PROVIDER, EB_ERR_PROTOCOL (malformed reply), EB_ERR_TIMEOUT,
 * EB_ERR_CANCELLED. */
EB_EXPORT int eb_llm_generate(eb_llm *llm, eb_ctx *ctx, const eb_llm_request *req,
                              eb_llm_response *res, eb_error **err);

EB_EXPORT void eb_llm_free(eb_llm *llm);
EB_EXPORT void eb_message_clear(eb_message *msg);

#ifdef __cplusplus
}
#endif
#endif
