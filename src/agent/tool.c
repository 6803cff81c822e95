/* Tools: the execute_code tool and output capping. */
#include <execbox/tool.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/language_internal.h"
#include "core/utf8.h"
#include "core/util.h"

typedef struct execute_code_tool {
  eb_tool tool;
  eb_runtime *rt;
  eb_execute_code_options opts;
  char *parameters;
} execute_code_tool;

static const char execute_code_description[] =
    "Run a short, self-contained program in a fresh sandbox and get back its real output and exit "
    "code. Use it whenever the answer depends on a computation, data or a fact you can check by "
    "running code, instead of guessing. Write complete scripts that print their results to stdout "
    "(nothing is returned but what the program prints). Each call starts from scratch: no files, "
    "variables or installed packages carry over between calls, and there is no network. Keep "
    "output short; long output is cut in the middle. If the program fails (non-zero exit_code), "
    "read the error, fix the script and run it again.";

/* A UTF-8 continuation byte? Used so that cuts never split a sequence. */
static bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

EB_EXPORT char *eb_cap_output(const char *text, size_t len, size_t cap, size_t *omitted) {
  if (omitted != NULL)
    *omitted = 0;
  if (text == NULL)
    text = "";
  if (len <= cap) {
    char *copy = malloc(len + 1);
    if (copy != NULL) {
      memcpy(copy, text, len);
      copy[len] = '\0';
    }
    return copy;
  }
  size_t head = cap / 2, tail = cap - head;
  while (head > 0 && is_continuation((unsigned char)text[head]))
    head--;
  size_t tail_start = len - tail;
  while (tail_start < len && is_continuation((unsigned char)text[tail_start]))
    tail_start++;
  size_t left_out = tail_start - head;
  char note[96];
  int n = snprintf(note, sizeof(note), "\n[... %zu bytes omitted ...]\n", left_out);
  size_t out_len = head + (size_t)n + (len - tail_start);
  char *out = malloc(out_len + 1);
  if (out == NULL)
    return NULL;
  memcpy(out, text, head);
  memcpy(out + head, note, (size_t)n);
  memcpy(out + head + (size_t)n, text + tail_start, len - tail_start);
  out[out_len] = '\0';
  if (omitted != NULL)
    *omitted = left_out;
  return out;
}

/* The result the model sees: compact, with the extra fields only when they
 * say something. */
static char *result_json(const eb_exec_result *res, size_t cap) {
  size_t omitted = 0, clean_len = 0;
  /* Valid UTF-8 without NULs first (so the cap never cuts a character and
   * nothing is lost to a C string), then capped. */
  cleanup_free char *clean = eb_utf8_sanitize(res->output, res->output_len, false, &clean_len);
  cleanup_free char *output = clean ? eb_cap_output(clean, clean_len, cap, &omitted) : NULL;
  if (output == NULL)
    return NULL;
  json_t *o = json_object();
  json_object_set_new(o, "exit_code", json_integer(res->exit_code));
  json_t *out = json_string(output);
  json_object_set_new(o, "output", out ? out : json_string(""));
  if (res->truncated || omitted > 0)
    json_object_set_new(o, "truncated", json_true());
  if (res->status == EB_STATUS_TIMEOUT)
    json_object_set_new(o, "timed_out", json_true());
  if (res->status != EB_STATUS_OK && res->status != EB_STATUS_NONZERO_EXIT)
    json_object_set_new(o, "status", json_string(eb_status_name(res->status)));
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  return s;
}

static int execute_code(eb_tool *tool, eb_ctx *ctx, const char *args_json, char **result,
                        eb_error **err) {
  execute_code_tool *t = tool->impl;
  json_error_t jerr;
  json_t *args = json_loads(args_json ? args_json : "", 0, &jerr);
  if (args == NULL || !json_is_object(args)) {
    json_decref(args);
    return eb_error_set(err, EB_ERR_USAGE, "arguments are not a JSON object: %s",
                        args ? "not an object" : jerr.text);
  }
  const char *language = json_string_value(json_object_get(args, "language"));
  const char *code = json_string_value(json_object_get(args, "code"));
  int ret = 0;
  if (language == NULL || code == NULL) {
    ret = eb_error_set(err, EB_ERR_USAGE, "arguments need string fields \"language\" and \"code\"");
    goto out;
  }
  eb_exec_request req = {.language = language, .code = code, .limits = t->opts.limits};
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  ret = eb_runtime_execute(t->rt, ctx, &req, &res, err);
  if (ret == 0) {
    *result = result_json(&res, t->opts.output_cap);
    if (*result == NULL)
      ret = eb_error_set(err, ENOMEM, "encode the result");
  }
  eb_exec_result_clear(&res);
out:
  json_decref(args);
  return ret;
}

static void execute_code_destroy(eb_tool *tool) {
  execute_code_tool *t = tool->impl;
  free(t->parameters);
  free(t);
}

static const eb_tool_ops execute_code_ops = {
    .execute = execute_code,
    .destroy = execute_code_destroy,
};

EB_EXPORT int eb_execute_code_tool_new(eb_runtime *rt, const eb_execute_code_options *opts,
                                       eb_tool **out, eb_error **err) {
  if (rt == NULL)
    return eb_error_set(err, EINVAL, "execute_code needs a runtime");
  execute_code_tool *t = calloc(1, sizeof(*t));
  if (t == NULL)
    return eb_error_set(err, ENOMEM, "allocate execute_code");
  t->rt = rt;
  if (opts != NULL)
    t->opts = *opts;
  if (t->opts.output_cap == 0)
    t->opts.output_cap = EB_DEFAULT_TOOL_OUTPUT_CAP;

  /* The language enum lists what this host can run (docker or remote
   * runtimes would list their own). */
  json_t *langs = json_array();
  for (size_t i = 0; i < eb_language_count(); i++)
    if (eb_language_available(eb_language_at(i), NULL))
      json_array_append_new(langs, json_string(eb_language_name(eb_language_at(i))));
  json_t *schema = json_pack(
      "{s:s, s:{s:{s:s, s:o, s:s}, s:{s:s, s:s}}, s:[s,s], s:b}", "type", "object", "properties",
      "language", "type", "string", "enum", langs, "description", "Language of the program.",
      "code", "type", "string", "description",
      "The complete program. It must print what you want to see.", "required", "language",
      "code", "additionalProperties", 0);
  t->parameters = schema ? json_dumps(schema, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  json_decref(schema);
  if (t->parameters == NULL) {
    free(t);
    return eb_error_set(err, ENOMEM, "build the execute_code schema");
  }
  t->tool.name = "execute_code";
  t->tool.description = execute_code_description;
  t->tool.parameters = t->parameters;
  t->tool.requires_approval = true;
  t->tool.ops = &execute_code_ops;
  t->tool.impl = t;
  /* An agent calls this tool many times: the runtime keeps warm sandboxes
   * (EXECBOX_POOL; a pool already running is kept). That they cannot
   * start is no reason to fail: executions then run cold. */
  if (!t->opts.no_pool) {
    eb_error *pool_err = NULL;
    eb_runtime_enable_pool(rt, NULL, &pool_err);
    eb_error_free(pool_err);
  }
  *out = &t->tool;
  return 0;
}

EB_EXPORT void eb_tool_free(eb_tool *tool) {
  if (tool != NULL && tool->ops != NULL && tool->ops->destroy != NULL)
    tool->ops->destroy(tool);
}
