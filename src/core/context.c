/* Contexts. Each context owns one eventfd that becomes readable when it is
 * cancelled; a waiter polls the fds of the whole ancestor chain, so
 * cancelling needs no list of children and stays async-signal-safe (an
 * atomic store and a write()). The effective deadline is computed once at
 * creation: deadlines never change afterwards. */
#include <execbox/context.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

struct eb_ctx {
  const eb_ctx *parent;
  int64_t deadline_ns; /* effective: min(own, parent's); INT64_MAX if none */
  int cancel_fd;
  atomic_int cancelled;
};

EB_EXPORT int64_t eb_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

EB_EXPORT int eb_ctx_new(const eb_ctx *parent, int64_t timeout_ms, eb_ctx **out, eb_error **err) {
  eb_ctx *ctx = calloc(1, sizeof(*ctx));
  if (ctx == NULL)
    return eb_error_set(err, ENOMEM, "allocate context");
  ctx->cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (ctx->cancel_fd < 0) {
    int saved = errno;
    free(ctx);
    return eb_error_set(err, saved, "create context eventfd");
  }
  ctx->parent = parent;
  ctx->deadline_ns = INT64_MAX;
  if (timeout_ms > 0) {
    int64_t now = eb_now_ns();
    if (timeout_ms > (INT64_MAX - now) / 1000000LL)
      ctx->deadline_ns = INT64_MAX;
    else
      ctx->deadline_ns = now + timeout_ms * 1000000LL;
  }
  if (parent != NULL && parent->deadline_ns < ctx->deadline_ns)
    ctx->deadline_ns = parent->deadline_ns;
  atomic_init(&ctx->cancelled, 0);
  *out = ctx;
  return 0;
}

EB_EXPORT void eb_ctx_free(eb_ctx *ctx) {
  if (ctx == NULL)
    return;
  close(ctx->cancel_fd);
  free(ctx);
}

EB_EXPORT void eb_ctx_cancel(eb_ctx *ctx) {
  if (ctx == NULL)
    return;
  if (atomic_exchange(&ctx->cancelled, 1) == 0) {
    int saved = errno;
    uint64_t one = 1;
    ssize_t w = write(ctx->cancel_fd, &one, sizeof(one));
    (void)w; /* an eventfd write of 1 cannot fail short of overflow */
    errno = saved;
  }
}

EB_EXPORT eb_ctx_state eb_ctx_state_now(const eb_ctx *ctx) {
  if (ctx == NULL)
    return EB_CTX_ACTIVE;
  for (const eb_ctx *c = ctx; c != NULL; c = c->parent)
    if (atomic_load(&((eb_ctx *)c)->cancelled))
      return EB_CTX_CANCELLED;
  if (ctx->deadline_ns != INT64_MAX && eb_now_ns() >= ctx->deadline_ns)
    return EB_CTX_DEADLINE;
  return EB_CTX_ACTIVE;
}

EB_EXPORT int64_t eb_ctx_deadline_ns(const eb_ctx *ctx) {
  return ctx == NULL ? INT64_MAX : ctx->deadline_ns;
}

EB_EXPORT int64_t eb_ctx_remaining_ms(const eb_ctx *ctx) {
  if (ctx == NULL || ctx->deadline_ns == INT64_MAX)
    return -1;
  int64_t left = ctx->deadline_ns - eb_now_ns();
  if (left <= 0)
    return 0;
  return (left + 999999) / 1000000;
}

EB_EXPORT int eb_ctx_cancel_fds(const eb_ctx *ctx, int *fds, int max) {
  int n = 0;
  for (const eb_ctx *c = ctx; c != NULL; c = c->parent) {
    if (n < max)
      fds[n] = c->cancel_fd;
    n++;
  }
  return n;
}
