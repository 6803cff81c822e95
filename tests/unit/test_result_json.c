/* eb_exec_result_to_json, eb_status_name, eb_exec_result_clear,
 * eb_limits_apply_defaults. JSON is checked by parsing it back. */
#include "runner.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include <execbox/runtime.h>

static const char *const KEYS[] = {"exit_code", "signal",   "status",      "output", "stdout",
                                   "stderr",    "truncated", "duration_ms", "cpu_ms", "max_rss_kb"};
#define N_KEYS (sizeof(KEYS) / sizeof(KEYS[0]))

/* Parses s strictly (embedded NULs allowed, they are legal JSON escapes). */
static json_t *parse(const char *s) {
  assert_non_null(s);
  json_error_t jerr;
  json_t *j = json_loads(s, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &jerr);
  if (j == NULL)
    fail_msg("invalid JSON (%s at %d): %s", jerr.text, jerr.position, s);
  assert_true(json_is_object(j));
  return j;
}

static void set_field(char **field, size_t *len, const char *data, size_t n) {
  *field = malloc(n + 1);
  assert_non_null(*field);
  memcpy(*field, data, n);
  (*field)[n] = '\0';
  *len = n;
}

static void test_round_trip(void **state) {
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  set_field(&res.output, &res.output_len, "out\nerr\n", 8);
  set_field(&res.stdout_data, &res.stdout_len, "out\n", 4);
  set_field(&res.stderr_data, &res.stderr_len, "err\n", 4);
  res.exit_code = 137;
  res.signal = 9;
  res.status = EB_STATUS_OUTPUT_LIMIT;
  res.truncated = true;
  res.duration_ms = 1234;
  res.cpu_ms = 56;
  res.max_rss_kb = 7890;

  char *s = eb_exec_result_to_json(&res);
  json_t *j = parse(s);
  assert_int_equal(json_object_size(j), N_KEYS);
  for (size_t i = 0; i < N_KEYS; i++)
    if (json_object_get(j, KEYS[i]) == NULL)
      fail_msg("key %s missing in %s", KEYS[i], s);
  assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 137);
  assert_int_equal(json_integer_value(json_object_get(j, "signal")), 9);
  assert_string_equal(json_string_value(json_object_get(j, "status")), "output_limit");
  assert_string_equal(json_string_value(json_object_get(j, "output")), "out\nerr\n");
  assert_string_equal(json_string_value(json_object_get(j, "stdout")), "out\n");
  assert_string_equal(json_string_value(json_object_get(j, "stderr")), "err\n");
  assert_true(json_is_true(json_object_get(j, "truncated")));
  assert_int_equal(json_integer_value(json_object_get(j, "duration_ms")), 1234);
  assert_int_equal(json_integer_value(json_object_get(j, "cpu_ms")), 56);
  assert_int_equal(json_integer_value(json_object_get(j, "max_rss_kb")), 7890);
  /* Compact: one line. */
  assert_null(strchr(s, '\n'));
  json_decref(j);
  free(s);
  eb_exec_result_clear(&res);
}

static void test_zeroed_result(void **state) {
  eb_exec_result res;
  memset(&res, 0, sizeof(res)); /* NULL buffers */
  char *s = eb_exec_result_to_json(&res);
  json_t *j = parse(s);
  assert_string_equal(json_string_value(json_object_get(j, "status")), "ok");
  assert_string_equal(json_string_value(json_object_get(j, "output")), "");
  assert_string_equal(json_string_value(json_object_get(j, "stdout")), "");
  assert_string_equal(json_string_value(json_object_get(j, "stderr")), "");
  assert_true(json_is_false(json_object_get(j, "truncated")));
  assert_int_equal(json_integer_value(json_object_get(j, "exit_code")), 0);
  json_decref(j);
  free(s);
}

static void test_escapes(void **state) {
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  const char text[] = "quote\" backslash\\ tab\t ctrl\x01 unicode \xc3\xa9\xe2\x82\xac";
  set_field(&res.output, &res.output_len, text, sizeof(text) - 1);
  char *s = eb_exec_result_to_json(&res);
  json_t *j = parse(s);
  assert_string_equal(json_string_value(json_object_get(j, "output")), text);
  json_decref(j);
  free(s);
  eb_exec_result_clear(&res);
}

static void test_embedded_nul(void **state) {
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  const char data[] = {'a', '\0', 'b'};
  set_field(&res.output, &res.output_len, data, sizeof(data));
  set_field(&res.stdout_data, &res.stdout_len, data, sizeof(data));
  char *s = eb_exec_result_to_json(&res);
  json_t *j = parse(s);
  json_t *out = json_object_get(j, "output");
  assert_true(json_is_string(out));
  /* Valid JSON; the bytes around the NUL survive. */
  const char *v = json_string_value(out);
  size_t n = json_string_length(out);
  assert_int_equal(n, 3);
  assert_int_equal(v[0], 'a');
  assert_int_equal(v[2], 'b');
  json_decref(j);
  free(s);
  eb_exec_result_clear(&res);
}

static void test_invalid_utf8(void **state) {
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  /* A lone continuation byte, a truncated sequence, an overlong form and 0xff. */
  const char bad[] = "ok \x80 x \xe2\x82 y \xc0\xaf z \xff end";
  set_field(&res.output, &res.output_len, bad, sizeof(bad) - 1);
  set_field(&res.stderr_data, &res.stderr_len, bad, sizeof(bad) - 1);
  set_field(&res.stdout_data, &res.stdout_len, "fine", 4);
  char *s = eb_exec_result_to_json(&res);
  json_t *j = parse(s);
  const char *out = json_string_value(json_object_get(j, "output"));
  assert_non_null(out);
  /* The ASCII parts are kept; the result is valid UTF-8 (jansson checked). */
  assert_non_null(strstr(out, "ok "));
  assert_non_null(strstr(out, " end"));
  assert_non_null(json_string_value(json_object_get(j, "stderr")));
  assert_string_equal(json_string_value(json_object_get(j, "stdout")), "fine");
  json_decref(j);
  free(s);
  eb_exec_result_clear(&res);
}

static void test_invalid_utf8_and_nul(void **state) {
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  const char data[] = {'\xff', '\0', 'z'};
  set_field(&res.output, &res.output_len, data, sizeof(data));
  char *s = eb_exec_result_to_json(&res);
  json_t *j = parse(s);
  assert_true(json_is_string(json_object_get(j, "output")));
  json_decref(j);
  free(s);
  eb_exec_result_clear(&res);
}

static void test_status_names(void **state) {
  struct {
    eb_status status;
    const char *name;
  } cases[] = {
      {EB_STATUS_OK, "ok"},
      {EB_STATUS_NONZERO_EXIT, "nonzero_exit"},
      {EB_STATUS_COMPILE_ERROR, "compile_error"},
      {EB_STATUS_TIMEOUT, "timeout"},
      {EB_STATUS_MEMORY_LIMIT, "memory_limit"},
      {EB_STATUS_OUTPUT_LIMIT, "output_limit"},
      {EB_STATUS_KILLED, "killed"},
      {EB_STATUS_CANCELLED, "cancelled"},
      {EB_STATUS_SANDBOX_ERROR, "sandbox_error"},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    assert_string_equal(eb_status_name(cases[i].status), cases[i].name);
  /* Every status up to the last one has a distinct, non-"unknown" name. */
  for (int a = EB_STATUS_OK; a <= EB_STATUS_SANDBOX_ERROR; a++) {
    assert_string_not_equal(eb_status_name((eb_status)a), "unknown");
    for (int b = EB_STATUS_OK; b < a; b++)
      assert_string_not_equal(eb_status_name((eb_status)a), eb_status_name((eb_status)b));
  }
  assert_string_equal(eb_status_name((eb_status)99), "unknown");
}

static void test_status_in_json(void **state) {
  for (int st = EB_STATUS_OK; st <= EB_STATUS_SANDBOX_ERROR; st++) {
    eb_exec_result res;
    memset(&res, 0, sizeof(res));
    res.status = (eb_status)st;
    char *s = eb_exec_result_to_json(&res);
    json_t *j = parse(s);
    assert_string_equal(json_string_value(json_object_get(j, "status")),
                        eb_status_name((eb_status)st));
    json_decref(j);
    free(s);
  }
}

static void test_clear(void **state) {
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  eb_exec_result_clear(&res); /* zeroed: fine */
  set_field(&res.output, &res.output_len, "x", 1);
  res.exit_code = 3;
  eb_exec_result_clear(&res);
  assert_null(res.output);
  assert_int_equal(res.exit_code, 0);
  eb_exec_result_clear(&res); /* twice: fine */
  eb_exec_result_clear(NULL);
}

static void test_limits_defaults(void **state) {
  eb_limits l;
  memset(&l, 0, sizeof(l));
  eb_limits_apply_defaults(&l);
  assert_int_equal(l.wall_ms, EB_DEFAULT_WALL_MS);
  assert_int_equal(l.memory_bytes, EB_DEFAULT_MEMORY_BYTES);
  assert_int_equal(l.pids, EB_DEFAULT_PIDS);
  assert_int_equal(l.output_bytes, EB_DEFAULT_OUTPUT_BYTES);
  assert_int_equal(l.file_size_bytes, EB_DEFAULT_FILE_SIZE_BYTES);
  assert_int_equal(l.tmp_bytes, EB_DEFAULT_TMP_BYTES);
  assert_int_equal(l.open_files, EB_DEFAULT_OPEN_FILES);
  assert_int_equal(l.cpu_ms, 0); /* no default CPU limit */

  eb_limits explicit_limits = {.wall_ms = 5, .memory_bytes = 6, .pids = 7, .output_bytes = 8};
  eb_limits_apply_defaults(&explicit_limits);
  assert_int_equal(explicit_limits.wall_ms, 5);
  assert_int_equal(explicit_limits.memory_bytes, 6);
  assert_int_equal(explicit_limits.pids, 7);
  assert_int_equal(explicit_limits.output_bytes, 8);
  assert_int_equal(explicit_limits.open_files, EB_DEFAULT_OPEN_FILES);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_zeroed_result),
    cmocka_unit_test(test_escapes),
    cmocka_unit_test(test_embedded_nul),
    cmocka_unit_test(test_invalid_utf8),
    cmocka_unit_test(test_invalid_utf8_and_nul),
    cmocka_unit_test(test_status_names),
    cmocka_unit_test(test_status_in_json),
    cmocka_unit_test(test_clear),
    cmocka_unit_test(test_limits_defaults),
};

EB_TEST_MAIN(tests)
