/* execbox command line: shared declarations. */
#ifndef EB_CLI_H
#define EB_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include <execbox/execbox.h>

/* Exit statuses of the CLI (see docs/cli.md). */
enum {
  CLI_EXIT_USAGE = 64,
  CLI_EXIT_TIMEOUT = 124,
  CLI_EXIT_FAILURE = 125, /* execbox or the sandbox failed */
  CLI_EXIT_CANNOT_EXEC = 126,
  CLI_EXIT_NOT_FOUND = 127, /* language unknown or not installed */
};

typedef struct cli_command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
} cli_command;

int cmd_run(int argc, char **argv);
int cmd_languages(int argc, char **argv);
int cmd_runtimes(int argc, char **argv);
int cmd_ask(int argc, char **argv);
int cmd_chat(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* Parses "10", "1.5", "250ms", "2s", "1m" into milliseconds (plain numbers
 * are seconds). Returns 0 or -1. */
int cli_parse_duration_ms(const char *s, int64_t *ms);

/* Parses "512", "64k", "128M", "1G", "1.5GiB" into bytes. Returns 0 or -1. */
int cli_parse_size(const char *s, int64_t *bytes);

/* The exit status for an execution error / a result. */
int cli_exit_for_error(const eb_error *err);
int cli_exit_for_result(const eb_exec_result *res);

/* Long-lived commands (ask, chat, mcp, serve): starts the runtime's warm
 * pool (python and plain sandboxes), configured by EXECBOX_POOL and
 * EXECBOX_POOL_IDLE_MS, unless off (--no-pool). A pool that cannot start
 * is reported and executions run cold. Returns 0, or CLI_EXIT_USAGE for a
 * malformed environment variable. */
int cli_start_pool(eb_runtime *rt, bool off);

/* Prints "execbox: <msg>" on stderr. */
void cli_errorf(const char *fmt, ...) EB_PRINTF(1, 2);

#endif
