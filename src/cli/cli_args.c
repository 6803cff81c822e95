#include "cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void cli_errorf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("execbox: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static int parse_number(const char *s, double *v, const char **rest) {
  if (s == NULL || *s == '\0' || isspace((unsigned char)*s) || *s == '-' || *s == '+')
    return -1;
  char *end = NULL;
  errno = 0;
  double d = strtod(s, &end);
  if (errno != 0 || end == s || !isfinite(d) || d < 0)
    return -1;
  *v = d;
  *rest = end;
  return 0;
}

int cli_parse_duration_ms(const char *s, int64_t *ms) {
  double v;
  const char *unit;
  if (parse_number(s, &v, &unit) < 0)
    return -1;
  double mult;
  if (*unit == '\0' || strcmp(unit, "s") == 0)
    mult = 1000;
  else if (strcmp(unit, "ms") == 0)
    mult = 1;
  else if (strcmp(unit, "m") == 0 || strcmp(unit, "min") == 0)
    mult = 60000;
  else if (strcmp(unit, "h") == 0)
    mult = 3600000;
  else
    return -1;
  double r = v * mult;
  if (r > 9.2e15 || r < 1)
    return -1;
  *ms = (int64_t)ceil(r);
  return 0;
}

int cli_parse_size(const char *s, int64_t *bytes) {
  double v;
  const char *unit;
  if (parse_number(s, &v, &unit) < 0)
    return -1;
  double mult;
  if (*unit == '\0' || strcasecmp(unit, "b") == 0)
    mult = 1;
  else if (strcasecmp(unit, "k") == 0 || strcasecmp(unit, "kb") == 0 || strcasecmp(unit, "kib") == 0)
    mult = 1024.0;
  else if (strcasecmp(unit, "m") == 0 || strcasecmp(unit, "mb") == 0 || strcasecmp(unit, "mib") == 0)
    mult = 1024.0 * 1024;
  else if (strcasecmp(unit, "g") == 0 || strcasecmp(unit, "gb") == 0 || strcasecmp(unit, "gib") == 0)
    mult = 1024.0 * 1024 * 1024;
  else
    return -1;
  double r = v * mult;
  if (r > 9.2e18 || r < 1)
    return -1;
  *bytes = (int64_t)r;
  return 0;
}

int cli_exit_for_error(const eb_error *err) {
  if (err == NULL)
    return CLI_EXIT_FAILURE;
  switch (err->code) {
  case EB_ERR_USAGE: return CLI_EXIT_USAGE;
  case EB_ERR_LANGUAGE_UNKNOWN:
  case EB_ERR_LANGUAGE_UNAVAILABLE: return CLI_EXIT_NOT_FOUND;
  default: return CLI_EXIT_FAILURE;
  }
}

int cli_exit_for_result(const eb_exec_result *res) {
  switch (res->status) {
  case EB_STATUS_OK: return 0;
  case EB_STATUS_NONZERO_EXIT:
  case EB_STATUS_COMPILE_ERROR: return res->exit_code;
  case EB_STATUS_TIMEOUT: return CLI_EXIT_TIMEOUT;
  case EB_STATUS_SANDBOX_ERROR: return CLI_EXIT_FAILURE;
  case EB_STATUS_CANCELLED: return 130;
  case EB_STATUS_MEMORY_LIMIT:
  case EB_STATUS_OUTPUT_LIMIT:
  case EB_STATUS_KILLED: return 128 + (res->signal > 0 ? res->signal : 9);
  }
  return CLI_EXIT_FAILURE;
}

int cli_start_pool(eb_runtime *rt, bool off) {
  if (off) {
    /* What would start a pool later (the execute_code tool) reads it too. */
    setenv("EXECBOX_POOL", "off", 1);
    return 0;
  }
  eb_pool_options o;
  eb_error *err = NULL;
  if (eb_pool_options_from_env(&o, &err) < 0) {
    cli_errorf("%s", err->msg);
    eb_error_free(err);
    return CLI_EXIT_USAGE;
  }
  static const char *const prewarm[] = {"python", "sh", NULL};
  o.prewarm = prewarm;
  if (eb_runtime_enable_pool(rt, &o, &err) < 0) {
    cli_errorf("warm sandboxes unavailable, executions run cold: %s", err->msg);
    eb_error_free(err);
  }
  return 0;
}
