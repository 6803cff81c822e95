/* The CLI's argument helpers (src/cli/cli_args.c, compiled in). */
#include "runner.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "cli/cli.h"

static int64_t duration(const char *s) {
  int64_t ms = -12345;
  if (cli_parse_duration_ms(s, &ms) < 0)
    fail_msg("cli_parse_duration_ms(\"%s\") failed", s);
  return ms;
}

static void bad_duration(const char *s) {
  int64_t ms = -12345;
  if (cli_parse_duration_ms(s, &ms) == 0)
    fail_msg("cli_parse_duration_ms(\"%s\") accepted it as %lld ms", s ? s : "(null)",
             (long long)ms);
  assert_int_equal(ms, -12345); /* untouched on failure */
}

static int64_t size(const char *s) {
  int64_t b = -12345;
  if (cli_parse_size(s, &b) < 0)
    fail_msg("cli_parse_size(\"%s\") failed", s);
  return b;
}

static void bad_size(const char *s) {
  int64_t b = -12345;
  if (cli_parse_size(s, &b) == 0)
    fail_msg("cli_parse_size(\"%s\") accepted it as %lld bytes", s ? s : "(null)", (long long)b);
  assert_int_equal(b, -12345);
}

static void test_duration_units(void **state) {
  assert_int_equal(duration("10"), 10000); /* plain numbers are seconds */
  assert_int_equal(duration("1.5"), 1500);
  assert_int_equal(duration("2.5s"), 2500);
  assert_int_equal(duration("250ms"), 250);
  assert_int_equal(duration("2s"), 2000);
  assert_int_equal(duration("1m"), 60000);
  assert_int_equal(duration("1min"), 60000);
  assert_int_equal(duration("1h"), 3600000);
  assert_int_equal(duration("0.5"), 500);
  assert_int_equal(duration("1ms"), 1);
  assert_int_equal(duration("1.2ms"), 2); /* rounded up, never to less than asked */
  assert_int_equal(duration("0.0015"), 2);
  assert_int_equal(duration("30"), 30000);
}

static void test_duration_invalid(void **state) {
  bad_duration(NULL);
  bad_duration("");
  bad_duration("abc");
  bad_duration("s");
  bad_duration("-1");
  bad_duration("+1");
  bad_duration(" 1");
  bad_duration("1x");
  bad_duration("1 s");
  bad_duration("1s ");
  bad_duration("10sec");
  bad_duration("0");
  bad_duration("0s");
  bad_duration("0.5ms"); /* rounds to nothing */
  bad_duration("inf");
  bad_duration("nan");
  bad_duration("1e400");
  bad_duration("1e300h");
}

static void test_size_units(void **state) {
  assert_int_equal(size("512"), 512);
  assert_int_equal(size("1b"), 1);
  assert_int_equal(size("64k"), 65536);
  assert_int_equal(size("64K"), 65536);
  assert_int_equal(size("10kb"), 10240);
  assert_int_equal(size("10KiB"), 10240);
  assert_int_equal(size("128M"), 128LL << 20);
  assert_int_equal(size("2MiB"), 2LL << 20);
  assert_int_equal(size("1G"), 1LL << 30);
  assert_int_equal(size("1gb"), 1LL << 30);
  assert_int_equal(size("1.5GiB"), (3LL << 30) / 2);
  assert_int_equal(size("0.5k"), 512);
}

static void test_size_invalid(void **state) {
  bad_size(NULL);
  bad_size("");
  bad_size("k");
  bad_size("-1");
  bad_size("-1k");
  bad_size("+5");
  bad_size(" 5");
  bad_size("0");
  bad_size("0k");
  bad_size("5 k");
  bad_size("5x");
  bad_size("1T");
  bad_size("nan");
  bad_size("inf");
  bad_size("1e19"); /* does not fit in int64 */
  bad_size("100000000000G");
}

static int exit_for(eb_status status, int exit_code, int sig) {
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  res.status = status;
  res.exit_code = exit_code;
  res.signal = sig;
  return cli_exit_for_result(&res);
}

static void test_exit_for_result(void **state) {
  assert_int_equal(exit_for(EB_STATUS_OK, 0, 0), 0);
  assert_int_equal(exit_for(EB_STATUS_NONZERO_EXIT, 7, 0), 7);
  assert_int_equal(exit_for(EB_STATUS_NONZERO_EXIT, 1, 0), 1);
  assert_int_equal(exit_for(EB_STATUS_COMPILE_ERROR, 1, 0), 1);
  assert_int_equal(exit_for(EB_STATUS_TIMEOUT, 137, 9), CLI_EXIT_TIMEOUT);
  assert_int_equal(exit_for(EB_STATUS_TIMEOUT, 124, 0), 124);
  assert_int_equal(exit_for(EB_STATUS_SANDBOX_ERROR, 0, 0), CLI_EXIT_FAILURE);
  assert_int_equal(exit_for(EB_STATUS_CANCELLED, 137, 9), 130);
  assert_int_equal(exit_for(EB_STATUS_KILLED, 143, 15), 143);
  assert_int_equal(exit_for(EB_STATUS_KILLED, 137, 9), 137);
  assert_int_equal(exit_for(EB_STATUS_OUTPUT_LIMIT, 137, 9), 137);
  assert_int_equal(exit_for(EB_STATUS_MEMORY_LIMIT, 137, 9), 137);
  /* Killed for a limit but the signal is unknown: reads as SIGKILL. */
  assert_int_equal(exit_for(EB_STATUS_OUTPUT_LIMIT, 0, 0), 137);
  assert_int_equal(exit_for((eb_status)99, 0, 0), CLI_EXIT_FAILURE);
}

static void test_exit_for_error(void **state) {
  eb_error e = {.code = EB_ERR_USAGE, .msg = (char *)"x"};
  assert_int_equal(cli_exit_for_error(&e), CLI_EXIT_USAGE);
  e.code = EB_ERR_LANGUAGE_UNKNOWN;
  assert_int_equal(cli_exit_for_error(&e), CLI_EXIT_NOT_FOUND);
  e.code = EB_ERR_LANGUAGE_UNAVAILABLE;
  assert_int_equal(cli_exit_for_error(&e), CLI_EXIT_NOT_FOUND);
  e.code = EB_ERR_SANDBOX;
  assert_int_equal(cli_exit_for_error(&e), CLI_EXIT_FAILURE);
  e.code = EB_ERR_LIMIT_UNSUPPORTED;
  assert_int_equal(cli_exit_for_error(&e), CLI_EXIT_FAILURE);
  e.code = ENOMEM;
  assert_int_equal(cli_exit_for_error(&e), CLI_EXIT_FAILURE);
  assert_int_equal(cli_exit_for_error(NULL), CLI_EXIT_FAILURE);
}

static void test_exit_codes_documented(void **state) {
  assert_int_equal(CLI_EXIT_USAGE, 64);
  assert_int_equal(CLI_EXIT_TIMEOUT, 124);
  assert_int_equal(CLI_EXIT_FAILURE, 125);
  assert_int_equal(CLI_EXIT_CANNOT_EXEC, 126);
  assert_int_equal(CLI_EXIT_NOT_FOUND, 127);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_duration_units),
    cmocka_unit_test(test_duration_invalid),
    cmocka_unit_test(test_size_units),
    cmocka_unit_test(test_size_invalid),
    cmocka_unit_test(test_exit_for_result),
    cmocka_unit_test(test_exit_for_error),
    cmocka_unit_test(test_exit_codes_documented),
};

EB_TEST_MAIN(tests)
