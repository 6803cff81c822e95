/* The agent: a loop that lets a model answer by running real code.
 *
 * eb_agent_run() sends the conversation to the model with the tools, runs
 * the tool calls it asks for (with approval, per-attempt timeouts and
 * retries), returns every result to the model with its call id, and repeats
 * until the model answers in text or max_iterations is reached — then one
 * last call with the tools disabled. A tool failure, a timeout, an unknown
 * tool or malformed arguments become tool messages the model can react to;
 * the run fails only on an LLM failure, the run timeout or cancellation.
 *
 * Timeout layers: the caller's ctx (always wins) > run timeout > tool
 * timeout per attempt > the sandbox's wall time. */
#ifndef EXECBOX_AGENT_H
#define EXECBOX_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <execbox/context.h>
#include <execbox/error.h>
#include <execbox/llm.h>
#include <execbox/tool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum eb_agent_mode {
  EB_AGENT_INTERACTIVE = 0, /* default run timeout 5 min */
  EB_AGENT_AUTONOMOUS = 1,  /* default run timeout 60 min */
} eb_agent_mode;

typedef enum eb_approval_policy {
  EB_APPROVAL_REQUIRE_ALL = 0, /* every call of a tool that requires approval asks the handler */
  EB_APPROVAL_AUTO = 1,        /* never ask */
  EB_APPROVAL_ALLOWLIST = 2,   /* tools in the allowlist run; the others ask */
} eb_approval_policy;

/* Timeout and attempts of one operation (an LLM call, a tool call). */
typedef struct eb_exec_config {
  int64_t timeout_ms; /* per attempt; <= 0: none of its own */
  int max_attempts;   /* <= 0: 1. A tool is retried only when it failed or timed out, never
                         when it produced a result; with 1, code never runs twice. */
} eb_exec_config;

typedef struct eb_tool_override {
  const char *tool;
  eb_exec_config config;
} eb_tool_override;

typedef enum eb_event_type {
  EB_EVENT_RUN_START,
  EB_EVENT_TEXT_DELTA,      /* text, len */
  EB_EVENT_TOOL_CALL_START, /* tool_call_id, tool_name */
  EB_EVENT_TOOL_CALL_ARGS,  /* tool_call_id, tool_name, text = arguments JSON */
  EB_EVENT_TOOL_CALL_END,   /* the call is approved and about to run */
  EB_EVENT_TOOL_RESULT,     /* text = result JSON sent to the model, is_error, duration_ms */
  EB_EVENT_RUN_FINISH,      /* text = final answer */
  EB_EVENT_RUN_ERROR,       /* error */
} eb_event_type;

/* Everything is borrowed for the duration of the callback. */
typedef struct eb_event {
  eb_event_type type;
  int iteration;
  const char *text;
  size_t len;
  const char *tool_call_id;
  const char *tool_name;
  bool is_error;
  int64_t duration_ms;
  const eb_error *error;
} eb_event;

typedef void (*eb_event_fn)(void *user, const eb_event *event);
/* Returns true to run the call. */
typedef bool (*eb_approval_fn)(void *user, const char *tool_name, const char *arguments_json);

extern EB_EXPORT const char eb_default_system_prompt[];

typedef struct eb_agent_config {
  eb_llm *llm;                 /* borrowed */
  eb_tool *const *tools;       /* borrowed */
  size_t n_tools;
  const char *system_prompt;   /* NULL: eb_default_system_prompt */
  eb_agent_mode mode;
  int64_t run_timeout_ms;      /* 0: by mode */
  eb_approval_policy approval;
  const char *const *allowlist; /* NULL-terminated tool names, for EB_APPROVAL_ALLOWLIST */
  eb_approval_fn approve;      /* asked when approval is needed; NULL: refuse */
  void *approve_user;
  int max_iterations;          /* 0: 5 */
  eb_exec_config llm_config;   /* default: 2 min per attempt, 3 attempts */
  eb_exec_config tool_config;  /* default: 2 min per attempt, 1 attempt */
  const eb_tool_override *tool_overrides;
  size_t n_tool_overrides;
  eb_event_fn on_event;
  void *event_user;
} eb_agent_config;

/* Runs the agent on conv (which must end with a user message). The model's
 * messages and the tool results are appended to conv. On success *answer is
 * the final text (malloc'd, caller frees). ctx may be NULL. */
EB_EXPORT int eb_agent_run(const eb_agent_config *config, eb_ctx *ctx, eb_conversation *conv,
                           char **answer, eb_error **err);

#ifdef __cplusplus
}
#endif
#endif
