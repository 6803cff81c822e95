/* Contexts: a deadline plus a cancellation handle.
 *
 * A context may derive from a parent. The effective deadline of a child is
 * the earliest of its own and its parent's, and cancelling a parent cancels
 * every context derived from it, so a caller's per-run context always wins
 * over inner timeouts. A parent must outlive its children. */
#ifndef EXECBOX_CONTEXT_H
#define EXECBOX_CONTEXT_H

#include <stdint.h>
#include <execbox/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eb_ctx eb_ctx;

typedef enum eb_ctx_state {
  EB_CTX_ACTIVE = 0,
  EB_CTX_CANCELLED = 1, /* eb_ctx_cancel() was called on it or an ancestor */
  EB_CTX_DEADLINE = 2,  /* its effective deadline has passed */
} eb_ctx_state;

/* Creates a context. parent may be NULL. timeout_ms <= 0 means no deadline of
 * its own (it still inherits the parent's). The caller owns *out and frees it
 * with eb_ctx_free() before freeing the parent. */
EB_EXPORT int eb_ctx_new(const eb_ctx *parent, int64_t timeout_ms, eb_ctx **out, eb_error **err);

/* Frees a context. NULL is accepted. */
EB_EXPORT void eb_ctx_free(eb_ctx *ctx);

/* Cancels the context and, through it, all its descendants. Idempotent,
 * thread-safe and async-signal-safe (it may be called from a signal handler). */
EB_EXPORT void eb_ctx_cancel(eb_ctx *ctx);

/* The state of the context, looking at its ancestors too. */
EB_EXPORT eb_ctx_state eb_ctx_state_now(const eb_ctx *ctx);

/* Milliseconds until the effective deadline (0 if passed), or -1 if none. */
EB_EXPORT int64_t eb_ctx_remaining_ms(const eb_ctx *ctx);

/* Effective deadline on CLOCK_MONOTONIC in nanoseconds, or INT64_MAX. */
EB_EXPORT int64_t eb_ctx_deadline_ns(const eb_ctx *ctx);

/* The file descriptors that become readable when the context or an ancestor is
 * cancelled: writes at most max of them to fds and returns how many there
 * are. They remain owned by the contexts. Use them in poll() to wake up. */
EB_EXPORT int eb_ctx_cancel_fds(const eb_ctx *ctx, int *fds, int max);

/* CLOCK_MONOTONIC now, in nanoseconds. */
EB_EXPORT int64_t eb_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
