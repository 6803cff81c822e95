/* Bounded output capture (src/core/capture.h, internal). */
#include "runner.h"

#include <stdlib.h>
#include <string.h>

#include "core/capture.h"

static void append_ok(eb_capture *c, int stream, const char *s) {
  assert_int_equal(eb_capture_append(c, stream, s, strlen(s)), 0);
}

static void test_interleaves_in_arrival_order(void **state) {
  eb_capture c;
  eb_capture_init(&c, 1024);
  append_ok(&c, EB_STREAM_STDOUT, "out1 ");
  append_ok(&c, EB_STREAM_STDERR, "err1 ");
  append_ok(&c, EB_STREAM_STDOUT, "out2 ");
  append_ok(&c, EB_STREAM_STDERR, "err2");
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  assert_int_equal(eb_capture_finish(&c, &res), 0);
  assert_string_equal(res.output, "out1 err1 out2 err2");
  assert_int_equal(res.output_len, strlen("out1 err1 out2 err2"));
  assert_string_equal(res.stdout_data, "out1 out2 ");
  assert_int_equal(res.stdout_len, 10);
  assert_string_equal(res.stderr_data, "err1 err2");
  assert_int_equal(res.stderr_len, 9);
  assert_false(res.truncated);
  eb_capture_free(&c);
  eb_exec_result_clear(&res);
}

static void test_separate_streams(void **state) {
  eb_capture c;
  eb_capture_init(&c, 1024);
  append_ok(&c, EB_STREAM_STDERR, "only err");
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  assert_int_equal(eb_capture_finish(&c, &res), 0);
  assert_string_equal(res.output, "only err");
  assert_string_equal(res.stderr_data, "only err");
  assert_non_null(res.stdout_data); /* never NULL, even when empty */
  assert_string_equal(res.stdout_data, "");
  assert_int_equal(res.stdout_len, 0);
  eb_capture_free(&c);
  eb_exec_result_clear(&res);
}

static void test_binary_data_kept(void **state) {
  eb_capture c;
  eb_capture_init(&c, 1024);
  const char bin[] = {'a', '\0', 'b', '\xff', '\n'};
  assert_int_equal(eb_capture_append(&c, EB_STREAM_STDOUT, bin, sizeof(bin)), 0);
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  assert_int_equal(eb_capture_finish(&c, &res), 0);
  assert_int_equal(res.output_len, sizeof(bin));
  assert_memory_equal(res.output, bin, sizeof(bin));
  assert_int_equal(res.output[res.output_len], '\0');
  eb_capture_free(&c);
  eb_exec_result_clear(&res);
}

static void test_cap_exact_cut(void **state) {
  eb_capture c;
  eb_capture_init(&c, 10);
  assert_int_equal(eb_capture_append(&c, EB_STREAM_STDOUT, "123456", 6), 0);
  /* 4 bytes of room: "abcd" is kept, "ef" dropped. */
  assert_int_equal(eb_capture_append(&c, EB_STREAM_STDERR, "abcdef", 6), 1);
  assert_true(c.truncated);
  /* Once full, everything is dropped and reported. */
  assert_int_equal(eb_capture_append(&c, EB_STREAM_STDOUT, "x", 1), 1);
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  assert_int_equal(eb_capture_finish(&c, &res), 0);
  assert_int_equal(res.output_len, 10);
  assert_string_equal(res.output, "123456abcd");
  assert_string_equal(res.stdout_data, "123456");
  assert_string_equal(res.stderr_data, "abcd");
  assert_true(res.truncated);
  eb_capture_free(&c);
  eb_exec_result_clear(&res);
}

static void test_cap_reached_exactly_is_not_truncation(void **state) {
  eb_capture c;
  eb_capture_init(&c, 8);
  assert_int_equal(eb_capture_append(&c, EB_STREAM_STDOUT, "12345678", 8), 0);
  assert_false(c.truncated);
  assert_int_equal(eb_capture_append(&c, EB_STREAM_STDOUT, "", 0), 0);
  assert_false(c.truncated);
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  assert_int_equal(eb_capture_finish(&c, &res), 0);
  assert_false(res.truncated);
  assert_int_equal(res.output_len, 8);
  /* One more byte is one too many. */
  eb_capture_free(&c);
  eb_capture_init(&c, 8);
  assert_int_equal(eb_capture_append(&c, EB_STREAM_STDOUT, "123456789", 9), 1);
  assert_true(c.truncated);
  eb_capture_free(&c);
  eb_exec_result_clear(&res);
}

static void test_cap_zero(void **state) {
  eb_capture c;
  eb_capture_init(&c, 0);
  assert_int_equal(eb_capture_append(&c, EB_STREAM_STDOUT, "a", 1), 1);
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  assert_int_equal(eb_capture_finish(&c, &res), 0);
  assert_int_equal(res.output_len, 0);
  assert_string_equal(res.output, "");
  assert_true(res.truncated);
  eb_capture_free(&c);
  eb_exec_result_clear(&res);
}

static void test_large_appends_grow(void **state) {
  size_t chunk = 5000, total = 0;
  char *data = malloc(chunk);
  assert_non_null(data);
  eb_capture c;
  eb_capture_init(&c, 1 << 20);
  for (int i = 0; i < 100; i++) {
    memset(data, 'a' + i % 26, chunk);
    assert_int_equal(eb_capture_append(&c, i % 2 ? EB_STREAM_STDERR : EB_STREAM_STDOUT, data, chunk),
                     0);
    total += chunk;
  }
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  assert_int_equal(eb_capture_finish(&c, &res), 0);
  assert_int_equal(res.output_len, total);
  assert_int_equal(res.stdout_len + res.stderr_len, total);
  assert_int_equal(strlen(res.output), total);
  for (int i = 0; i < 100; i++)
    assert_int_equal(res.output[(size_t)i * chunk], 'a' + i % 26);
  free(data);
  eb_capture_free(&c);
  eb_exec_result_clear(&res);
}

static void test_finish_nul_terminates_and_moves(void **state) {
  eb_capture c;
  eb_capture_init(&c, 100);
  append_ok(&c, EB_STREAM_STDOUT, "hello");
  char *kept = c.output.data;
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  /* Old buffers in res are released, not leaked (ASan would tell). */
  res.output = strdup("old");
  res.stdout_data = strdup("old");
  res.stderr_data = strdup("old");
  assert_int_equal(eb_capture_finish(&c, &res), 0);
  /* Moved, not copied: the capture no longer owns the buffers. */
  assert_ptr_equal(res.output, kept);
  assert_null(c.output.data);
  assert_null(c.out.data);
  assert_int_equal(c.output.len, 0);
  assert_int_equal(res.output[res.output_len], '\0');
  assert_int_equal(res.stdout_data[res.stdout_len], '\0');
  assert_int_equal(res.stderr_data[res.stderr_len], '\0');
  assert_string_equal(res.output, "hello");
  assert_string_equal(res.stderr_data, "");
  eb_capture_free(&c); /* nothing left to free twice */
  eb_exec_result_clear(&res);
  assert_null(res.output);
  assert_int_equal(res.output_len, 0);
}

static void test_finish_empty(void **state) {
  eb_capture c;
  eb_capture_init(&c, 100);
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  assert_int_equal(eb_capture_finish(&c, &res), 0);
  assert_non_null(res.output);
  assert_non_null(res.stdout_data);
  assert_non_null(res.stderr_data);
  assert_string_equal(res.output, "");
  assert_int_equal(res.output_len + res.stdout_len + res.stderr_len, 0);
  assert_false(res.truncated);
  eb_capture_free(&c);
  eb_exec_result_clear(&res);
}

static void test_buf_append(void **state) {
  eb_buf b = {0};
  assert_int_equal(eb_buf_append(&b, "ab", 2), 0);
  assert_int_equal(eb_buf_append(&b, "", 0), 0);
  assert_int_equal(eb_buf_append(&b, "c", 1), 0);
  assert_int_equal(b.len, 3);
  assert_true(b.alloc > b.len);
  assert_string_equal(b.data, "abc");
  free(b.data);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_interleaves_in_arrival_order),
    cmocka_unit_test(test_separate_streams),
    cmocka_unit_test(test_binary_data_kept),
    cmocka_unit_test(test_cap_exact_cut),
    cmocka_unit_test(test_cap_reached_exactly_is_not_truncation),
    cmocka_unit_test(test_cap_zero),
    cmocka_unit_test(test_large_appends_grow),
    cmocka_unit_test(test_finish_nul_terminates_and_moves),
    cmocka_unit_test(test_finish_empty),
    cmocka_unit_test(test_buf_append),
};

EB_TEST_MAIN(tests)
