#include <execbox/error.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int error_return(int code) { return code > 0 ? -code : -1; }

EB_EXPORT int eb_error_set(eb_error **err, int code, const char *fmt, ...) {
  if (err == NULL || *err != NULL)
    return error_return(code);
  eb_error *e = calloc(1, sizeof(*e));
  if (e == NULL)
    return error_return(code);
  e->code = code;
  char *text = NULL;
  va_list ap;
  va_start(ap, fmt);
  int n = vasprintf(&text, fmt, ap);
  va_end(ap);
  if (n < 0)
    text = NULL;
  if (text != NULL && code > 0 && code < EB_ERR_BASE) {
    char *full = NULL;
    if (asprintf(&full, "%s: %s", text, strerror(code)) >= 0) {
      free(text);
      text = full;
    }
  }
  e->msg = text != NULL ? text : strdup("(out of memory formatting error)");
  *err = e;
  return error_return(code);
}

EB_EXPORT int eb_error_wrap(eb_error **err, const char *fmt, ...) {
  if (err == NULL || *err == NULL)
    return -1;
  char *prefix = NULL;
  va_list ap;
  va_start(ap, fmt);
  int n = vasprintf(&prefix, fmt, ap);
  va_end(ap);
  if (n >= 0) {
    char *full = NULL;
    if (asprintf(&full, "%s: %s", prefix, (*err)->msg ? (*err)->msg : "") >= 0) {
      free((*err)->msg);
      (*err)->msg = full;
    }
    free(prefix);
  }
  return error_return((*err)->code);
}

EB_EXPORT int eb_error_propagate(eb_error **err, eb_error *src) {
  if (src == NULL)
    return -1;
  int r = error_return(src->code);
  if (err != NULL && *err == NULL)
    *err = src;
  else
    eb_error_free(src);
  return r;
}

EB_EXPORT void eb_error_free(eb_error *err) {
  if (err == NULL)
    return;
  free(err->msg);
  free(err);
}

EB_EXPORT const char *eb_error_code_name(int code) {
  switch (code) {
  case EB_ERR_USAGE: return "usage";
  case EB_ERR_LANGUAGE_UNKNOWN: return "language_unknown";
  case EB_ERR_LANGUAGE_UNAVAILABLE: return "language_unavailable";
  case EB_ERR_RUNTIME_UNKNOWN: return "runtime_unknown";
  case EB_ERR_RUNTIME_UNAVAILABLE: return "runtime_unavailable";
  case EB_ERR_LIMIT_UNSUPPORTED: return "limit_unsupported";
  case EB_ERR_SANDBOX: return "sandbox";
  case EB_ERR_PROTOCOL: return "protocol";
  case EB_ERR_TIMEOUT: return "timeout";
  case EB_ERR_CANCELLED: return "cancelled";
  case EB_ERR_LLM_RATE_LIMIT: return "rate_limit";
  case EB_ERR_LLM_QUOTA: return "quota";
  case EB_ERR_LLM_AUTH: return "auth";
  case EB_ERR_LLM_CONTEXT: return "context_exceeded";
  case EB_ERR_LLM_PROVIDER: return "provider";
  case EB_ERR_DENIED: return "denied";
  default: break;
  }
  if (code > 0 && code < EB_ERR_BASE) {
    const char *name = strerrorname_np(code);
    if (name != NULL)
      return name;
    return "errno";
  }
  return "unknown";
}
