/* Errors: one convention for the whole library.
 *
 * A function that can fail returns an int: 0 on success, a negative value on
 * failure, and takes `eb_error **err` as its last parameter. On failure it
 * allocates *err (the caller owns it and frees it with eb_error_free()).
 * Context is added on the way up with eb_error_wrap(); the front-end prints
 * the message once. A user's program that exits non-zero is NOT an error: it
 * is a result (see eb_exec_result). See docs/errors.md. */
#ifndef EXECBOX_ERROR_H
#define EXECBOX_ERROR_H

#include <execbox/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Codes below EB_ERR_BASE are errno values; the message then ends with
 * strerror(code). Codes above it are execbox's own. */
enum {
  EB_ERR_BASE = 10000,
  EB_ERR_USAGE,                /* the caller asked for something invalid */
  EB_ERR_LANGUAGE_UNKNOWN,     /* no such language in the table */
  EB_ERR_LANGUAGE_UNAVAILABLE, /* known, but its toolchain is not installed here */
  EB_ERR_RUNTIME_UNKNOWN,      /* no runtime of that name */
  EB_ERR_RUNTIME_UNAVAILABLE,  /* the runtime cannot work on this host */
  EB_ERR_LIMIT_UNSUPPORTED,    /* a requested limit cannot be enforced: refused */
  EB_ERR_SANDBOX,              /* the sandbox could not be set up */
  EB_ERR_PROTOCOL,             /* malformed data from a peer */
  EB_ERR_TIMEOUT,              /* a deadline passed */
  EB_ERR_CANCELLED,            /* the context was cancelled */
  EB_ERR_LLM_RATE_LIMIT,       /* the provider throttled us (429) and retries ran out */
  EB_ERR_LLM_QUOTA,            /* quota or spend limit reached: never retried */
  EB_ERR_LLM_AUTH,             /* missing, wrong or unauthorized API key (401/403) */
  EB_ERR_LLM_CONTEXT,          /* the conversation exceeds the model's context window */
  EB_ERR_LLM_PROVIDER,         /* any other provider-side failure (5xx, 4xx, unreachable) */
  EB_ERR_DENIED,               /* an approval was refused */
};

typedef struct eb_error {
  int code;  /* errno value or EB_ERR_* */
  char *msg; /* human readable, one line, no trailing newline */
} eb_error;

/* Fills *err (if err is non-NULL and *err is NULL; an existing error is kept,
 * the first failure being the interesting one) and returns -code (or -1 when
 * code <= 0). errno-range codes append ": strerror(code)". */
EB_EXPORT int eb_error_set(eb_error **err, int code, const char *fmt, ...) EB_PRINTF(3, 4);

/* Prefixes the message of *err with "<context>: ". Returns -(*err)->code,
 * or -1 if there is no error to wrap. */
EB_EXPORT int eb_error_wrap(eb_error **err, const char *fmt, ...) EB_PRINTF(2, 3);

/* Moves src into *err (taking ownership of src) unless *err is already set,
 * in which case src is freed. Returns -src->code (or -1). */
EB_EXPORT int eb_error_propagate(eb_error **err, eb_error *src);

/* Frees an error; NULL is accepted. */
EB_EXPORT void eb_error_free(eb_error *err);

/* Static name of a code ("usage", "language_unavailable", "ENOENT", ...). */
EB_EXPORT const char *eb_error_code_name(int code);

#ifdef __cplusplus
}
#endif
#endif
