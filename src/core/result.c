#include <execbox/runtime.h>

#include <errno.h>
#include <jansson.h>

#include "core/utf8.h"
#include <stdlib.h>
#include <string.h>

EB_EXPORT const char *eb_status_name(eb_status status) {
  switch (status) {
  case EB_STATUS_OK: return "ok";
  case EB_STATUS_NONZERO_EXIT: return "nonzero_exit";
  case EB_STATUS_COMPILE_ERROR: return "compile_error";
  case EB_STATUS_TIMEOUT: return "timeout";
  case EB_STATUS_MEMORY_LIMIT: return "memory_limit";
  case EB_STATUS_OUTPUT_LIMIT: return "output_limit";
  case EB_STATUS_KILLED: return "killed";
  case EB_STATUS_CANCELLED: return "cancelled";
  case EB_STATUS_SANDBOX_ERROR: return "sandbox_error";
  }
  return "unknown";
}

EB_EXPORT void eb_exec_result_clear(eb_exec_result *res) {
  if (res == NULL)
    return;
  free(res->output);
  free(res->stdout_data);
  free(res->stderr_data);
  memset(res, 0, sizeof(*res));
}

static json_t *string_or_empty(const char *s, size_t len) {
  /* Program output need not be UTF-8: jansson would refuse it. */
  size_t n = 0;
  char *clean = eb_utf8_sanitize(s, s ? len : 0, true, &n);
  json_t *j = clean ? json_stringn(clean, n) : NULL;
  free(clean);
  return j;
}

EB_EXPORT char *eb_exec_result_to_json(const eb_exec_result *res) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  json_object_set_new(o, "exit_code", json_integer(res->exit_code));
  json_object_set_new(o, "signal", json_integer(res->signal));
  json_object_set_new(o, "status", json_string(eb_status_name(res->status)));
  json_object_set_new(o, "output", string_or_empty(res->output, res->output_len));
  json_object_set_new(o, "stdout", string_or_empty(res->stdout_data, res->stdout_len));
  json_object_set_new(o, "stderr", string_or_empty(res->stderr_data, res->stderr_len));
  json_object_set_new(o, "truncated", json_boolean(res->truncated));
  json_object_set_new(o, "duration_ms", json_integer(res->duration_ms));
  json_object_set_new(o, "cpu_ms", json_integer(res->cpu_ms));
  json_object_set_new(o, "max_rss_kb", json_integer(res->max_rss_kb));
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  return s;
}

EB_EXPORT void eb_limits_apply_defaults(eb_limits *l) {
  if (l->wall_ms <= 0)
    l->wall_ms = EB_DEFAULT_WALL_MS;
  if (l->memory_bytes <= 0)
    l->memory_bytes = EB_DEFAULT_MEMORY_BYTES;
  if (l->pids <= 0)
    l->pids = EB_DEFAULT_PIDS;
  if (l->output_bytes <= 0)
    l->output_bytes = EB_DEFAULT_OUTPUT_BYTES;
  if (l->file_size_bytes <= 0)
    l->file_size_bytes = EB_DEFAULT_FILE_SIZE_BYTES;
  if (l->tmp_bytes <= 0)
    l->tmp_bytes = EB_DEFAULT_TMP_BYTES;
  if (l->open_files <= 0)
    l->open_files = EB_DEFAULT_OPEN_FILES;
  if (l->cpu_milli <= 0)
    l->cpu_milli = EB_DEFAULT_CPU_MILLI;
}

static char *copy_string(json_t *v, size_t *len) {
  const char *s = json_string_value(v);
  size_t n = s ? json_string_length(v) : 0;
  char *out = malloc(n + 1);
  if (out != NULL) {
    if (n > 0)
      memcpy(out, s, n);
    out[n] = '\0';
  }
  *len = n;
  return out;
}

EB_EXPORT int eb_exec_result_from_json(const char *text, size_t len, eb_exec_result *res,
                                       eb_error **err) {
  json_error_t jerr;
  json_t *o = json_loadb(text, len, 0, &jerr);
  if (!json_is_object(o) || !json_is_integer(json_object_get(o, "exit_code")) ||
      !json_is_string(json_object_get(o, "status"))) {
    json_decref(o);
    return eb_error_set(err, EB_ERR_PROTOCOL, "not an execution result: %s",
                        o ? "missing exit_code or status" : jerr.text);
  }
  memset(res, 0, sizeof(*res));
  res->exit_code = (int)json_integer_value(json_object_get(o, "exit_code"));
  res->signal = (int)json_integer_value(json_object_get(o, "signal"));
  const char *status = json_string_value(json_object_get(o, "status"));
  res->status = EB_STATUS_SANDBOX_ERROR;
  for (int s = EB_STATUS_OK; s <= EB_STATUS_SANDBOX_ERROR; s++)
    if (strcmp(status, eb_status_name((eb_status)s)) == 0)
      res->status = (eb_status)s;
  res->output = copy_string(json_object_get(o, "output"), &res->output_len);
  res->stdout_data = copy_string(json_object_get(o, "stdout"), &res->stdout_len);
  res->stderr_data = copy_string(json_object_get(o, "stderr"), &res->stderr_len);
  res->truncated = json_is_true(json_object_get(o, "truncated"));
  res->duration_ms = json_integer_value(json_object_get(o, "duration_ms"));
  res->cpu_ms = json_integer_value(json_object_get(o, "cpu_ms"));
  res->max_rss_kb = json_integer_value(json_object_get(o, "max_rss_kb"));
  json_decref(o);
  if (res->output == NULL || res->stdout_data == NULL || res->stderr_data == NULL) {
    eb_exec_result_clear(res);
    return eb_error_set(err, ENOMEM, "result");
  }
  return 0;
}
