/* The agent loop. See include/execbox/agent.h for the contract. */
#include <execbox/agent.h>

#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/llm_internal.h"
#include "core/util.h"

#define DEFAULT_MAX_ITERATIONS 5
#define DEFAULT_INTERACTIVE_TIMEOUT_MS (5LL * 60 * 1000)
#define DEFAULT_AUTONOMOUS_TIMEOUT_MS (60LL * 60 * 1000)
#define DEFAULT_LLM_TIMEOUT_MS (2LL * 60 * 1000)
#define DEFAULT_LLM_ATTEMPTS 3
#define DEFAULT_TOOL_TIMEOUT_MS (2LL * 60 * 1000)

EB_EXPORT const char eb_default_system_prompt[] =
    "You are a careful assistant that answers by running real code. Whenever an answer depends on "
    "a computation, on data, or on a fact you can check with a program, call the execute_code "
    "tool with a short, self-contained script that prints its results, read the real output, and "
    "base your answer on it. Never make up output or pretend to have run code. If a script fails, "
    "read the error, fix the script and run it again. When you answer, explain what the output "
    "shows.";

typedef struct run_state {
  const eb_agent_config *cfg;
  int iteration;
} run_state;

static void emit(const run_state *st, eb_event ev) {
  if (st->cfg->on_event == NULL)
    return;
  ev.iteration = st->iteration;
  st->cfg->on_event(st->cfg->event_user, &ev);
}

static void on_text(void *user, const char *text, size_t len) {
  run_state *st = user;
  emit(st, (eb_event){.type = EB_EVENT_TEXT_DELTA, .text = text, .len = len});
}

static eb_tool *find_tool(const eb_agent_config *cfg, const char *name) {
  for (size_t i = 0; i < cfg->n_tools; i++)
    if (strcmp(cfg->tools[i]->name, name) == 0)
      return cfg->tools[i];
  return NULL;
}

static eb_exec_config tool_config(const eb_agent_config *cfg, const char *name) {
  eb_exec_config c = cfg->tool_config;
  for (size_t i = 0; i < cfg->n_tool_overrides; i++)
    if (cfg->tool_overrides[i].tool && strcmp(cfg->tool_overrides[i].tool, name) == 0)
      c = cfg->tool_overrides[i].config;
  if (c.timeout_ms == 0)
    c.timeout_ms = DEFAULT_TOOL_TIMEOUT_MS;
  if (c.max_attempts <= 0)
    c.max_attempts = 1;
  return c;
}

static bool approved(const eb_agent_config *cfg, const eb_tool *tool, const char *args) {
  if (!tool->requires_approval || cfg->approval == EB_APPROVAL_AUTO)
    return true;
  if (cfg->approval == EB_APPROVAL_ALLOWLIST)
    for (const char *const *a = cfg->allowlist; a != NULL && *a != NULL; a++)
      if (strcmp(*a, tool->name) == 0)
        return true;
  return cfg->approve != NULL && cfg->approve(cfg->approve_user, tool->name, args);
}

static char *error_result(const char *fmt, ...) EB_PRINTF(1, 2);
static char *error_result(const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  json_t *o = json_pack("{s:s}", "error", msg);
  char *s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  return s;
}

/* Runs one tool call; always produces a result text for the model (an
 * error result when the call could not be done). Returns < 0 only when the
 * run itself must stop (its context ended). */
static int run_tool_call(run_state *st, eb_ctx *run_ctx, const eb_tool_call *call, char **result,
                         bool *is_error, eb_error **err) {
  const eb_agent_config *cfg = st->cfg;
  *is_error = true;
  *result = NULL;
  eb_tool *tool = find_tool(cfg, call->name);
  if (tool == NULL) {
    *result = error_result("unknown tool `%s`; the available tools are: %s", call->name,
                           cfg->n_tools > 0 ? cfg->tools[0]->name : "none");
    return 0;
  }
  const char *args = call->arguments && call->arguments[0] ? call->arguments : "{}";
  json_error_t jerr;
  json_t *parsed = json_loads(args, JSON_DECODE_ANY, &jerr);
  bool ok_args = json_is_object(parsed);
  json_decref(parsed);
  if (!ok_args) {
    *result = error_result("the arguments are not a JSON object (%s): %s",
                           parsed ? "wrong type" : jerr.text, args);
    return 0;
  }
  if (!approved(cfg, tool, args)) {
    *result = error_result("the user declined to run this %s call; do not retry it, answer "
                           "without it or ask the user",
                           tool->name);
    return 0;
  }
  emit(st, (eb_event){.type = EB_EVENT_TOOL_CALL_END, .tool_call_id = call->id,
                      .tool_name = call->name});
  eb_exec_config tc = tool_config(cfg, tool->name);
  for (int attempt = 1; attempt <= tc.max_attempts; attempt++) {
    eb_ctx *actx = NULL;
    int r = eb_ctx_new(run_ctx, tc.timeout_ms, &actx, err);
    if (r < 0)
      return r;
    eb_error *terr = NULL;
    char *out = NULL;
    r = tool->ops->execute(tool, actx, args, &out, &terr);
    eb_ctx_state attempt_state = eb_ctx_state_now(actx);
    eb_ctx_free(actx);
    eb_ctx_state run_state_now = eb_ctx_state_now(run_ctx);
    if (run_state_now != EB_CTX_ACTIVE) {
      /* The run (or the caller) ended while the tool ran: that ends the run. */
      free(out);
      eb_error_free(terr);
      return eb_error_set(err, run_state_now == EB_CTX_CANCELLED ? EB_ERR_CANCELLED : EB_ERR_TIMEOUT,
                          "%s while %s was running",
                          run_state_now == EB_CTX_CANCELLED ? "cancelled" : "run timed out",
                          tool->name);
    }
    if (attempt_state == EB_CTX_DEADLINE) {
      /* This attempt's own timeout fired: the tool layer's, not the
       * sandbox's wall time (which comes back as a result). */
      free(out);
      eb_error_free(terr);
      char secs[32];
      snprintf(secs, sizeof(secs), "%.1f", (double)tc.timeout_ms / 1000.0);
      if (attempt < tc.max_attempts)
        continue;
      *result = error_result("%s timed out after %s s and was stopped", tool->name, secs);
      return 0;
    }
    if (r == 0) {
      *result = out;
      *is_error = false;
      return 0;
    }
    if (attempt < tc.max_attempts) {
      eb_error_free(terr);
      continue;
    }
    *result = error_result("%s failed: %s", tool->name, terr ? terr->msg : "unknown error");
    eb_error_free(terr);
    return 0;
  }
  return 0;
}

static int llm_call(run_state *st, eb_ctx *run_ctx, eb_conversation *conv, bool tools_disabled,
                    eb_llm_response *res, eb_error **err) {
  const eb_agent_config *cfg = st->cfg;
  eb_llm_request req = {
      .system = cfg->system_prompt ? cfg->system_prompt : eb_default_system_prompt,
      .conv = conv,
      .tools = cfg->tools,
      .n_tools = cfg->n_tools,
      .tools_disabled = tools_disabled,
      .max_attempts = cfg->llm_config.max_attempts > 0 ? cfg->llm_config.max_attempts
                                                       : DEFAULT_LLM_ATTEMPTS,
      .attempt_timeout_ms = cfg->llm_config.timeout_ms != 0 ? cfg->llm_config.timeout_ms
                                                            : DEFAULT_LLM_TIMEOUT_MS,
      .on_text = on_text,
      .user = st,
  };
  return eb_llm_generate(cfg->llm, run_ctx, &req, res, err);
}

static int fail(run_state *st, eb_ctx *run_ctx, eb_ctx *caller, int r, eb_error **err) {
  /* Name the layer that ended the run. */
  if (*err != NULL && ((*err)->code == EB_ERR_TIMEOUT || (*err)->code == EB_ERR_CANCELLED)) {
    if (eb_ctx_state_now(caller) == EB_CTX_CANCELLED)
      (*err)->code = EB_ERR_CANCELLED;
    else if (eb_ctx_state_now(caller) == EB_CTX_DEADLINE)
      eb_error_wrap(err, "the caller's deadline passed");
    else if (eb_ctx_state_now(run_ctx) == EB_CTX_DEADLINE)
      eb_error_wrap(err, "the agent's run timeout passed");
  }
  emit(st, (eb_event){.type = EB_EVENT_RUN_ERROR, .error = *err});
  return r;
}

EB_EXPORT int eb_agent_run(const eb_agent_config *cfg, eb_ctx *ctx, eb_conversation *conv,
                           char **answer, eb_error **err) {
  if (cfg == NULL || cfg->llm == NULL || conv == NULL || answer == NULL)
    return eb_error_set(err, EINVAL, "eb_agent_run: missing llm, conversation or answer");
  if (conv->n == 0 || conv->messages[conv->n - 1].role != EB_ROLE_USER)
    return eb_error_set(err, EB_ERR_USAGE, "the conversation must end with a user message");
  *answer = NULL;
  run_state st = {.cfg = cfg};
  int64_t run_timeout = cfg->run_timeout_ms != 0 ? cfg->run_timeout_ms
                        : cfg->mode == EB_AGENT_AUTONOMOUS ? DEFAULT_AUTONOMOUS_TIMEOUT_MS
                                                           : DEFAULT_INTERACTIVE_TIMEOUT_MS;
  eb_ctx *run_ctx = NULL;
  int r = eb_ctx_new(ctx, run_timeout, &run_ctx, err);
  if (r < 0)
    return r;
  int max_iter = cfg->max_iterations > 0 ? cfg->max_iterations : DEFAULT_MAX_ITERATIONS;
  emit(&st, (eb_event){.type = EB_EVENT_RUN_START});

  for (st.iteration = 1;; st.iteration++) {
    bool last = st.iteration > max_iter; /* one more call, without tools */
    eb_llm_response res;
    r = llm_call(&st, run_ctx, conv, last, &res, err);
    if (r < 0) {
      r = fail(&st, run_ctx, ctx, r, err);
      break;
    }
    eb_message msg = res.message;
    memset(&res.message, 0, sizeof(res.message));
    size_t n_calls = last ? 0 : msg.n_tool_calls;
    if (last && msg.n_tool_calls > 0) {
      /* The model ignored tool_choice none: keep its text only. */
      for (size_t i = 0; i < msg.n_tool_calls; i++) {
        free(msg.tool_calls[i].id);
        free(msg.tool_calls[i].name);
        free(msg.tool_calls[i].arguments);
      }
      free(msg.tool_calls);
      msg.tool_calls = NULL;
      msg.n_tool_calls = 0;
    }
    char *text = msg.content ? strdup(msg.content) : strdup("");
    r = eb_conversation_push(conv, &msg, err);
    if (r < 0 || text == NULL) {
      free(text);
      eb_message_clear(&msg);
      r = fail(&st, run_ctx, ctx, r < 0 ? r : eb_error_set(err, ENOMEM, "answer"), err);
      break;
    }
    if (n_calls == 0) {
      *answer = text;
      emit(&st, (eb_event){.type = EB_EVENT_RUN_FINISH, .text = text, .len = strlen(text)});
      r = 0;
      break;
    }
    free(text);
    /* Answer every call of this response, in order, with its id. The calls
     * are copied first: pushing tool messages may move the conversation. */
    size_t assistant_at = conv->n - 1;
    for (size_t i = 0; i < n_calls && r == 0; i++) {
      eb_tool_call call = conv->messages[assistant_at].tool_calls[i];
      cleanup_free char *id = strdup(call.id), *name = strdup(call.name);
      cleanup_free char *arguments = strdup(call.arguments ? call.arguments : "");
      if (id == NULL || name == NULL || arguments == NULL) {
        r = eb_error_set(err, ENOMEM, "tool call");
        break;
      }
      eb_tool_call c = {.id = id, .name = name, .arguments = arguments};
      emit(&st, (eb_event){.type = EB_EVENT_TOOL_CALL_START, .tool_call_id = id, .tool_name = name});
      emit(&st, (eb_event){.type = EB_EVENT_TOOL_CALL_ARGS, .tool_call_id = id, .tool_name = name,
                           .text = arguments, .len = strlen(arguments)});
      int64_t t0 = eb_now_ns();
      char *result = NULL;
      bool is_error = false;
      r = run_tool_call(&st, run_ctx, &c, &result, &is_error, err);
      if (r < 0)
        break;
      if (result == NULL) {
        r = eb_error_set(err, ENOMEM, "tool result");
        break;
      }
      emit(&st, (eb_event){.type = EB_EVENT_TOOL_RESULT, .tool_call_id = id, .tool_name = name,
                           .text = result, .len = strlen(result), .is_error = is_error,
                           .duration_ms = (eb_now_ns() - t0) / 1000000});
      eb_message tm = {.role = EB_ROLE_TOOL, .content = result, .tool_call_id = strdup(id),
                       .tool_name = strdup(name), .is_error = is_error};
      if (tm.tool_call_id == NULL || tm.tool_name == NULL) {
        eb_message_clear(&tm);
        r = eb_error_set(err, ENOMEM, "tool message");
        break;
      }
      r = eb_conversation_push(conv, &tm, err);
      if (r < 0)
        eb_message_clear(&tm);
    }
    if (r < 0) {
      r = fail(&st, run_ctx, ctx, r, err);
      break;
    }
  }
  eb_ctx_free(run_ctx);
  return r;
}
