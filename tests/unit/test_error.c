/* The error convention: eb_error_set, eb_error_wrap, eb_error_code_name. */
#include "runner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <execbox/error.h>

static void test_set_returns_minus_code(void **state) {
  eb_error *err = NULL;
  assert_int_equal(eb_error_set(&err, EB_ERR_USAGE, "bad %s", "thing"), -EB_ERR_USAGE);
  assert_non_null(err);
  assert_int_equal(err->code, EB_ERR_USAGE);
  /* execbox codes get no strerror suffix. */
  assert_string_equal(err->msg, "bad thing");
  eb_error_free(err);
}

static void test_set_errno_appends_strerror(void **state) {
  eb_error *err = NULL;
  assert_int_equal(eb_error_set(&err, ENOENT, "open `%s`", "/nope"), -ENOENT);
  assert_int_equal(err->code, ENOENT);
  char want[256];
  snprintf(want, sizeof(want), "open `/nope`: %s", strerror(ENOENT));
  assert_string_equal(err->msg, want);
  eb_error_free(err);

  err = NULL;
  assert_int_equal(eb_error_set(&err, EACCES, "x"), -EACCES);
  assert_non_null(strstr(err->msg, strerror(EACCES)));
  eb_error_free(err);
}

static void test_set_keeps_first_error(void **state) {
  eb_error *err = NULL;
  eb_error_set(&err, EB_ERR_SANDBOX, "first");
  eb_error *first = err;
  /* The return value still reports the new code. */
  assert_int_equal(eb_error_set(&err, ENOMEM, "second"), -ENOMEM);
  assert_ptr_equal(err, first);
  assert_int_equal(err->code, EB_ERR_SANDBOX);
  assert_string_equal(err->msg, "first");
  eb_error_free(err);
}

static void test_set_null_err(void **state) {
  assert_int_equal(eb_error_set(NULL, EINVAL, "nobody listens"), -EINVAL);
  assert_int_equal(eb_error_set(NULL, EB_ERR_PROTOCOL, "%d", 1), -EB_ERR_PROTOCOL);
}

static void test_set_nonpositive_code(void **state) {
  eb_error *err = NULL;
  assert_int_equal(eb_error_set(&err, 0, "zero"), -1);
  assert_non_null(err);
  assert_string_equal(err->msg, "zero"); /* no ": Success" */
  eb_error_free(err);
  err = NULL;
  assert_int_equal(eb_error_set(&err, -5, "negative"), -1);
  eb_error_free(err);
}

static void test_set_long_message(void **state) {
  char big[5000];
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  eb_error *err = NULL;
  eb_error_set(&err, EB_ERR_USAGE, "%s!", big);
  assert_int_equal(strlen(err->msg), sizeof(big));
  eb_error_free(err);
}

static void test_wrap_prefixes(void **state) {
  eb_error *err = NULL;
  eb_error_set(&err, ENOENT, "open `%s`", "f");
  assert_int_equal(eb_error_wrap(&err, "read config %d", 2), -ENOENT);
  assert_int_equal(eb_error_wrap(&err, "start"), -ENOENT);
  char want[256];
  snprintf(want, sizeof(want), "start: read config 2: open `f`: %s", strerror(ENOENT));
  assert_string_equal(err->msg, want);
  assert_int_equal(err->code, ENOENT);
  eb_error_free(err);
}

static void test_wrap_without_error(void **state) {
  eb_error *err = NULL;
  assert_int_equal(eb_error_wrap(&err, "context"), -1);
  assert_null(err);
  assert_int_equal(eb_error_wrap(NULL, "context"), -1);
}

static void test_wrap_nonpositive_code(void **state) {
  eb_error *err = NULL;
  eb_error_set(&err, 0, "base");
  assert_int_equal(eb_error_wrap(&err, "ctx"), -1);
  assert_string_equal(err->msg, "ctx: base");
  eb_error_free(err);
}

static void test_free_null(void **state) { eb_error_free(NULL); }

static void test_code_names(void **state) {
  assert_string_equal(eb_error_code_name(EB_ERR_USAGE), "usage");
  assert_string_equal(eb_error_code_name(EB_ERR_LANGUAGE_UNKNOWN), "language_unknown");
  assert_string_equal(eb_error_code_name(EB_ERR_LANGUAGE_UNAVAILABLE), "language_unavailable");
  assert_string_equal(eb_error_code_name(EB_ERR_RUNTIME_UNKNOWN), "runtime_unknown");
  assert_string_equal(eb_error_code_name(EB_ERR_RUNTIME_UNAVAILABLE), "runtime_unavailable");
  assert_string_equal(eb_error_code_name(EB_ERR_LIMIT_UNSUPPORTED), "limit_unsupported");
  assert_string_equal(eb_error_code_name(EB_ERR_SANDBOX), "sandbox");
  assert_string_equal(eb_error_code_name(EB_ERR_PROTOCOL), "protocol");
  assert_string_equal(eb_error_code_name(ENOENT), "ENOENT");
  assert_string_equal(eb_error_code_name(ENOMEM), "ENOMEM");
  assert_string_equal(eb_error_code_name(0), "unknown");
  assert_string_equal(eb_error_code_name(-1), "unknown");
  assert_string_equal(eb_error_code_name(EB_ERR_BASE + 999), "unknown");
  assert_non_null(eb_error_code_name(9999)); /* errno range, no such errno */
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_set_returns_minus_code),
    cmocka_unit_test(test_set_errno_appends_strerror),
    cmocka_unit_test(test_set_keeps_first_error),
    cmocka_unit_test(test_set_null_err),
    cmocka_unit_test(test_set_nonpositive_code),
    cmocka_unit_test(test_set_long_message),
    cmocka_unit_test(test_wrap_prefixes),
    cmocka_unit_test(test_wrap_without_error),
    cmocka_unit_test(test_wrap_nonpositive_code),
    cmocka_unit_test(test_free_null),
    cmocka_unit_test(test_code_names),
};

EB_TEST_MAIN(tests)
