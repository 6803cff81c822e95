#include <execbox/runtime.h>

#include <jansson.h>
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
  /* Program output need not be UTF-8: jansson replaces nothing, so invalid
   * sequences are rejected; fall back to a lossy copy in that case. */
  json_t *j = json_stringn(s ? s : "", s ? len : 0);
  if (j != NULL)
    return j;
  char *copy = malloc(len + 1);
  if (copy == NULL)
    return NULL;
  for (size_t i = 0; i < len; i++)
    copy[i] = ((unsigned char)s[i] < 0x80 && s[i] != '\0') ? s[i] : '?';
  copy[len] = '\0';
  j = json_stringn(copy, len);
  free(copy);
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
