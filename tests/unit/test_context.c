/* eb_ctx: deadlines, cancellation, cancel fds. */
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <execbox/context.h>

static eb_ctx *new_ctx(const eb_ctx *parent, int64_t timeout_ms) {
  eb_ctx *ctx = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_ctx_new(parent, timeout_ms, &ctx, &err), 0);
  assert_null(err);
  assert_non_null(ctx);
  return ctx;
}

static void sleep_ms(int ms) { usleep((useconds_t)ms * 1000); }

static void test_no_deadline(void **state) {
  eb_ctx *ctx = new_ctx(NULL, 0);
  assert_int_equal(eb_ctx_remaining_ms(ctx), -1);
  assert_true(eb_ctx_deadline_ns(ctx) == INT64_MAX);
  assert_int_equal(eb_ctx_state_now(ctx), EB_CTX_ACTIVE);
  eb_ctx *neg = new_ctx(NULL, -5); /* <= 0: no deadline of its own */
  assert_int_equal(eb_ctx_remaining_ms(neg), -1);
  eb_ctx *child = new_ctx(ctx, 0);
  assert_int_equal(eb_ctx_remaining_ms(child), -1);
  eb_ctx_free(child);
  eb_ctx_free(neg);
  eb_ctx_free(ctx);
  /* NULL is a context without deadline, never cancelled. */
  assert_int_equal(eb_ctx_remaining_ms(NULL), -1);
  assert_int_equal(eb_ctx_state_now(NULL), EB_CTX_ACTIVE);
  eb_ctx_free(NULL);
}

static void test_remaining_ms(void **state) {
  eb_ctx *ctx = new_ctx(NULL, 10000);
  int64_t left = eb_ctx_remaining_ms(ctx);
  assert_true(left > 5000 && left <= 10000);
  int64_t deadline = eb_ctx_deadline_ns(ctx);
  int64_t now = eb_now_ns();
  assert_true(deadline > now && deadline <= now + 10000LL * 1000000LL);
  eb_ctx_free(ctx);
}

static void test_huge_timeout_does_not_overflow(void **state) {
  eb_ctx *ctx = new_ctx(NULL, INT64_MAX);
  assert_true(eb_ctx_remaining_ms(ctx) == -1 || eb_ctx_remaining_ms(ctx) > 0);
  assert_int_equal(eb_ctx_state_now(ctx), EB_CTX_ACTIVE);
  eb_ctx_free(ctx);
}

static void test_deadline_passes(void **state) {
  eb_ctx *ctx = new_ctx(NULL, 20);
  assert_int_equal(eb_ctx_state_now(ctx), EB_CTX_ACTIVE);
  sleep_ms(60);
  assert_int_equal(eb_ctx_state_now(ctx), EB_CTX_DEADLINE);
  assert_int_equal(eb_ctx_remaining_ms(ctx), 0);
  eb_ctx_free(ctx);
}

static void test_child_inherits_earlier_parent_deadline(void **state) {
  eb_ctx *parent = new_ctx(NULL, 1000);
  eb_ctx *child = new_ctx(parent, 60000);
  assert_true(eb_ctx_deadline_ns(child) == eb_ctx_deadline_ns(parent));
  int64_t left = eb_ctx_remaining_ms(child);
  assert_true(left > 0 && left <= 1000);
  eb_ctx *grandchild = new_ctx(child, 0);
  assert_true(eb_ctx_deadline_ns(grandchild) == eb_ctx_deadline_ns(parent));
  eb_ctx_free(grandchild);
  eb_ctx_free(child);
  eb_ctx_free(parent);
}

static void test_child_keeps_its_own_earlier_deadline(void **state) {
  eb_ctx *parent = new_ctx(NULL, 60000);
  eb_ctx *child = new_ctx(parent, 1000);
  assert_true(eb_ctx_deadline_ns(child) < eb_ctx_deadline_ns(parent));
  int64_t left = eb_ctx_remaining_ms(child);
  assert_true(left > 0 && left <= 1000);
  /* A parent without a deadline does not remove the child's. */
  eb_ctx *free_parent = new_ctx(NULL, 0);
  eb_ctx *child2 = new_ctx(free_parent, 1000);
  assert_true(eb_ctx_remaining_ms(child2) > 0 && eb_ctx_remaining_ms(child2) <= 1000);
  eb_ctx_free(child2);
  eb_ctx_free(free_parent);
  eb_ctx_free(child);
  eb_ctx_free(parent);
}

static void test_child_deadline_state_from_parent(void **state) {
  eb_ctx *parent = new_ctx(NULL, 20);
  eb_ctx *child = new_ctx(parent, 0);
  sleep_ms(60);
  assert_int_equal(eb_ctx_state_now(child), EB_CTX_DEADLINE);
  eb_ctx_free(child);
  eb_ctx_free(parent);
}

static void test_parent_cancel_cancels_child(void **state) {
  eb_ctx *parent = new_ctx(NULL, 0);
  eb_ctx *child = new_ctx(parent, 60000);
  eb_ctx *grandchild = new_ctx(child, 0);
  assert_int_equal(eb_ctx_state_now(grandchild), EB_CTX_ACTIVE);
  eb_ctx_cancel(parent);
  assert_int_equal(eb_ctx_state_now(parent), EB_CTX_CANCELLED);
  assert_int_equal(eb_ctx_state_now(child), EB_CTX_CANCELLED);
  assert_int_equal(eb_ctx_state_now(grandchild), EB_CTX_CANCELLED);
  eb_ctx_free(grandchild);
  eb_ctx_free(child);
  eb_ctx_free(parent);
}

static void test_child_cancel_leaves_parent(void **state) {
  eb_ctx *parent = new_ctx(NULL, 0);
  eb_ctx *child = new_ctx(parent, 0);
  eb_ctx *sibling = new_ctx(parent, 0);
  eb_ctx_cancel(child);
  assert_int_equal(eb_ctx_state_now(child), EB_CTX_CANCELLED);
  assert_int_equal(eb_ctx_state_now(parent), EB_CTX_ACTIVE);
  assert_int_equal(eb_ctx_state_now(sibling), EB_CTX_ACTIVE);
  eb_ctx_free(sibling);
  eb_ctx_free(child);
  eb_ctx_free(parent);
}

static void test_cancel_wins_over_deadline(void **state) {
  eb_ctx *ctx = new_ctx(NULL, 10);
  sleep_ms(30);
  eb_ctx_cancel(ctx);
  assert_int_equal(eb_ctx_state_now(ctx), EB_CTX_CANCELLED);
  eb_ctx_free(ctx);
}

static int readable(int fd) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  int r = poll(&p, 1, 0);
  assert_true(r >= 0);
  return r == 1 && (p.revents & POLLIN);
}

static void test_cancel_fds_of_chain(void **state) {
  eb_ctx *parent = new_ctx(NULL, 0);
  eb_ctx *child = new_ctx(parent, 0);
  eb_ctx *grandchild = new_ctx(child, 0);

  int fds[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  assert_int_equal(eb_ctx_cancel_fds(grandchild, fds, 8), 3);
  assert_int_equal(eb_ctx_cancel_fds(parent, fds + 4, 4), 1);
  int parent_fd = fds[4];
  /* Three distinct valid fds, one of them the parent's. */
  int seen_parent = 0;
  for (int i = 0; i < 3; i++) {
    assert_true(fds[i] >= 0);
    assert_true(fcntl(fds[i], F_GETFD) >= 0);
    for (int j = 0; j < i; j++)
      assert_int_not_equal(fds[i], fds[j]);
    seen_parent |= fds[i] == parent_fd;
  }
  assert_true(seen_parent);
  /* Asking for fewer still reports how many there are. */
  int one = -1;
  assert_int_equal(eb_ctx_cancel_fds(grandchild, &one, 1), 3);
  assert_true(one >= 0);
  assert_int_equal(eb_ctx_cancel_fds(grandchild, NULL, 0), 3);

  for (int i = 0; i < 3; i++)
    assert_false(readable(fds[i]));
  eb_ctx_cancel(parent);
  /* The parent's fd, which is in the grandchild's set, wakes a poller. */
  assert_true(readable(parent_fd));
  struct pollfd p[3];
  for (int i = 0; i < 3; i++)
    p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
  assert_true(poll(p, 3, 1000) >= 1);

  eb_ctx_free(grandchild);
  eb_ctx_free(child);
  eb_ctx_free(parent);
}

static void test_cancel_fd_of_self(void **state) {
  eb_ctx *ctx = new_ctx(NULL, 0);
  int fd = -1;
  assert_int_equal(eb_ctx_cancel_fds(ctx, &fd, 1), 1);
  assert_false(readable(fd));
  eb_ctx_cancel(ctx);
  assert_true(readable(fd));
  eb_ctx_free(ctx);
}

static void test_cancel_idempotent(void **state) {
  eb_ctx *ctx = new_ctx(NULL, 0);
  int fd = -1;
  eb_ctx_cancel_fds(ctx, &fd, 1);
  eb_ctx_cancel(ctx);
  eb_ctx_cancel(ctx);
  eb_ctx_cancel(ctx);
  assert_int_equal(eb_ctx_state_now(ctx), EB_CTX_CANCELLED);
  assert_true(readable(fd));
  /* The eventfd counter is 1: cancel wrote once. */
  uint64_t v = 0;
  assert_int_equal(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
  assert_int_equal(v, 1);
  eb_ctx_free(ctx);
  eb_ctx_cancel(NULL); /* accepted */
}

static void test_cancel_preserves_errno(void **state) {
  eb_ctx *ctx = new_ctx(NULL, 0);
  errno = EDOM;
  eb_ctx_cancel(ctx);
  assert_int_equal(errno, EDOM);
  eb_ctx_free(ctx);
}

static void test_free_closes_fd(void **state) {
  int before[256], after[256];
  int nb = eb_test_list_fds(before, 256);
  eb_ctx *a = new_ctx(NULL, 0);
  eb_ctx *b = new_ctx(a, 100);
  eb_ctx_cancel(a);
  eb_ctx_free(b);
  eb_ctx_free(a);
  int na = eb_test_list_fds(after, 256);
  assert_int_equal(na, nb);
  assert_memory_equal(before, after, sizeof(int) * (size_t)nb);
}

static void test_fds_are_cloexec(void **state) {
  eb_ctx *ctx = new_ctx(NULL, 0);
  int fd = -1;
  eb_ctx_cancel_fds(ctx, &fd, 1);
  assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  eb_ctx_free(ctx);
}

static void test_now_monotonic(void **state) {
  int64_t a = eb_now_ns();
  int64_t b = eb_now_ns();
  assert_true(a > 0 && b >= a);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_no_deadline),
    cmocka_unit_test(test_remaining_ms),
    cmocka_unit_test(test_huge_timeout_does_not_overflow),
    cmocka_unit_test(test_deadline_passes),
    cmocka_unit_test(test_child_inherits_earlier_parent_deadline),
    cmocka_unit_test(test_child_keeps_its_own_earlier_deadline),
    cmocka_unit_test(test_child_deadline_state_from_parent),
    cmocka_unit_test(test_parent_cancel_cancels_child),
    cmocka_unit_test(test_child_cancel_leaves_parent),
    cmocka_unit_test(test_cancel_wins_over_deadline),
    cmocka_unit_test(test_cancel_fds_of_chain),
    cmocka_unit_test(test_cancel_fd_of_self),
    cmocka_unit_test(test_cancel_idempotent),
    cmocka_unit_test(test_cancel_preserves_errno),
    cmocka_unit_test(test_free_closes_fd),
    cmocka_unit_test(test_fds_are_cloexec),
    cmocka_unit_test(test_now_monotonic),
};

EB_TEST_MAIN(tests)
