/* execbox: the command-line front-end. A table of subcommands, one file each. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const cli_command commands[] = {
    {"run", "run code in a sandbox and print its output", cmd_run},
    {"ask", "ask a question; an agent answers by running code", cmd_ask},
    {"chat", "a conversation with an agent that runs code", cmd_chat},
    {"mcp", "serve execute_code to MCP clients (stdio or HTTP)", cmd_mcp},
    {"serve", "run code for remote clients over HTTP", cmd_serve},
    {"languages", "list the languages and whether they are usable here", cmd_languages},
    {"runtimes", "list the runtimes and whether they are usable here", cmd_runtimes},
};

static void usage(FILE *f) {
  fprintf(f, "usage: execbox [--help] [--version] COMMAND [ARGS]\n\n"
             "Run code written by an LLM (or you) in a fast, fail-closed sandbox.\n\ncommands:\n");
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\nRun `execbox COMMAND --help` for a command's options.\n"
             "The runtime is chosen with --runtime or SANDBOX_ENV (default: %s).\n",
          eb_runtime_resolve_name(NULL));
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return CLI_EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
    printf("execbox %s\n", eb_version());
    return 0;
  }
  for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
    if (strcmp(argv[1], commands[i].name) == 0)
      return commands[i].run(argc - 1, argv + 1);
  cli_errorf("unknown command `%s` (see `execbox --help`)", argv[1]);
  return CLI_EXIT_USAGE;
}
