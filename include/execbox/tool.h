/* Tools an agent can call, and the execute_code tool.
 *
 * A tool has a name, a description for the model, a JSON Schema of its
 * parameters, and an execute function that takes the arguments as a JSON
 * text and returns its result as a JSON text. A tool that ran and produced
 * a result (even "the program exited 1") returns 0; it returns < 0 only when
 * it could not do its job (bad arguments, sandbox failure) — the agent turns
 * that into a message the model can react to. */
#ifndef EXECBOX_TOOL_H
#define EXECBOX_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <execbox/context.h>
#include <execbox/error.h>
#include <execbox/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eb_tool eb_tool;

typedef struct eb_tool_ops {
  /* Runs the tool. args_json: the model's arguments (borrowed). On success
   * *result_json is a malloc'd JSON text the caller frees. ctx carries the
   * per-attempt deadline and cancellation. */
  int (*execute)(eb_tool *tool, eb_ctx *ctx, const char *args_json, char **result_json,
                 eb_error **err);
  /* Frees impl (optional). */
  void (*destroy)(eb_tool *tool);
} eb_tool_ops;

struct eb_tool {
  const char *name;        /* owned by the tool */
  const char *description; /* owned by the tool */
  const char *parameters;  /* JSON Schema (object) as text, owned by the tool */
  bool requires_approval;  /* ask the approval policy before each call */
  const eb_tool_ops *ops;
  void *impl;
};

/* Options of the execute_code tool. Zero fields take the defaults. */
typedef struct eb_execute_code_options {
  size_t output_cap;  /* bytes of output sent to the model (default 16 KiB): head and tail
                         kept, the middle replaced by a note of how many bytes were left out */
  eb_limits limits;   /* limits of each execution (the runtime's defaults where zero) */
  bool no_pool;       /* do not start the runtime's warm pool (see below) */
} eb_execute_code_options;

#define EB_DEFAULT_TOOL_OUTPUT_CAP (16u * 1024u)

/* Creates the execute_code tool on top of rt (borrowed: rt must outlive the
 * tool). Its parameters are {language, code}, language an enum of the
 * languages usable with rt; its result is compact JSON
 * {"exit_code":N,"output":"..."} plus "truncated", "timed_out" and "status"
 * only when they say something. It requires approval. Unless opts->no_pool,
 * it starts rt's warm pool (eb_runtime_enable_pool() with the environment's
 * settings; EXECBOX_POOL=off turns it off): an agent runs code many times.
 * The caller frees the tool with eb_tool_free(). */
EB_EXPORT int eb_execute_code_tool_new(eb_runtime *rt, const eb_execute_code_options *opts,
                                       eb_tool **out, eb_error **err);

/* Frees a tool made by eb_execute_code_tool_new() (or any tool whose ops
 * free it in destroy). NULL is accepted. */
EB_EXPORT void eb_tool_free(eb_tool *tool);

/* Caps text for a model: returns a malloc'd copy of at most cap bytes of
 * content (plus a short note) keeping the head and the tail and replacing
 * the middle with "[... N bytes omitted ...]". Never splits a UTF-8
 * sequence. *omitted receives the number of bytes left out (may be NULL). */
EB_EXPORT char *eb_cap_output(const char *text, size_t len, size_t cap, size_t *omitted);

#ifdef __cplusplus
}
#endif
#endif
