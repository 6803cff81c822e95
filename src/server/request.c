#include "server/request.h"

#include <string.h>

#include <execbox/language.h>

static int64_t limit_field(json_t *limits, const char *name) {
  json_t *v = json_object_get(limits, name);
  return json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : 0;
}

eb_parse_status eb_parse_execute_request(const char *body, size_t len, const eb_limits *max,
                                         eb_parsed_request *out, const char **detail) {
  memset(out, 0, sizeof(*out));
  *detail = "body must be a JSON object with string fields language and code";
  out->json = json_loadb(body ? body : "", len, 0, NULL);
  json_t *j = out->json;
  const char *language = json_string_value(json_object_get(j, "language"));
  json_t *code = json_object_get(j, "code");
  if (!json_is_object(j) || language == NULL || !json_is_string(code))
    return EB_PARSE_INVALID;
  const eb_language *lang = eb_language_find(language);
  if (lang == NULL || !eb_language_available(lang, NULL)) {
    *detail = "the language is not available here";
    return EB_PARSE_LANGUAGE;
  }
  eb_exec_request *r = &out->req;
  r->language = language;
  r->code = json_string_value(code);
  r->code_len = json_string_length(code);
  json_t *lim = json_object_get(j, "limits");
  r->limits.wall_ms = limit_field(lim, "wall_ms");
  r->limits.cpu_ms = limit_field(lim, "cpu_ms");
  r->limits.memory_bytes = limit_field(lim, "memory_bytes");
  r->limits.pids = limit_field(lim, "pids");
  r->limits.output_bytes = limit_field(lim, "output_bytes");
  r->limits.file_size_bytes = limit_field(lim, "file_size_bytes");
  r->limits.tmp_bytes = limit_field(lim, "tmp_bytes");
  r->limits.cpu_milli = limit_field(lim, "cpu_milli");
  const char *network = json_string_value(json_object_get(lim, "network"));
  if (network != NULL && strcmp(network, "host") == 0)
    r->limits.network = EB_NETWORK_HOST;
  *detail = r->limits.wall_ms > max->wall_ms             ? "limits.wall_ms exceeds this server's maximum"
            : r->limits.memory_bytes > max->memory_bytes ? "limits.memory_bytes exceeds this server's maximum"
            : r->limits.output_bytes > max->output_bytes ? "limits.output_bytes exceeds this server's maximum"
            : r->limits.cpu_ms > max->wall_ms            ? "limits.cpu_ms exceeds this server's maximum"
            : max->pids > 0 && r->limits.pids > max->pids ? "limits.pids exceeds this server's maximum"
            : max->cpu_milli > 0 && r->limits.cpu_milli > max->cpu_milli
                ? "limits.cpu_milli exceeds this server's maximum"
                : NULL;
  if (*detail != NULL)
    return EB_PARSE_LIMIT_TOO_HIGH;
  if (r->limits.wall_ms == 0 && max->wall_ms < EB_DEFAULT_WALL_MS)
    r->limits.wall_ms = max->wall_ms;
  json_t *in = json_object_get(j, "stdin");
  if (json_is_string(in)) {
    r->stdin_data = json_string_value(in);
    r->stdin_len = json_string_length(in);
  }
  size_t n = 0, i;
  json_t *v;
  json_array_foreach(json_object_get(j, "args"), i, v) {
    if (n < 64 && json_is_string(v))
      out->args[n++] = json_string_value(v);
  }
  if (n > 0)
    r->args = out->args;
  n = 0;
  json_array_foreach(json_object_get(j, "env"), i, v) {
    if (n < 64 && json_is_string(v))
      out->env[n++] = json_string_value(v);
  }
  if (n > 0)
    r->env = out->env;
  return EB_PARSE_OK;
}

void eb_parsed_request_free(eb_parsed_request *p) {
  json_decref(p->json);
  memset(p, 0, sizeof(*p));
}
