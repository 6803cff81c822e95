/* execbox runtimes: every runtime built in, whether it is usable here, and why not. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cmd_runtimes(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: execbox runtimes [--json]\n\nLists the runtimes built into execbox, which one is the\n"
             "default (SANDBOX_ENV, else jail), whether each is usable on this host, what it\n"
             "uses here (e.g. which limit mechanism), or why it cannot work.\n");
      return 0;
    } else {
      cli_errorf("unknown option `%s` (see `execbox runtimes --help`)", argv[i]);
      return CLI_EXIT_USAGE;
    }
  }
  const char *selected = eb_runtime_resolve_name(NULL);
  json_t *list = json_array();
  int any_unusable_default = 0;
  if (!json)
    printf("%-8s %-8s %-7s %s\n", "RUNTIME", "DEFAULT", "USABLE", "DETAIL");
  for (size_t i = 0; i < eb_runtime_registry_count(); i++) {
    const char *name = eb_runtime_registry_name(i);
    eb_runtime *rt = NULL;
    eb_error *err = NULL;
    char *detail = NULL;
    int r = eb_runtime_new(name, &rt, &err);
    if (r == 0)
      r = eb_runtime_probe(rt, &detail, &err);
    bool usable = r == 0;
    bool is_default = strcmp(name, selected) == 0;
    const char *text = usable ? (detail ? detail : "") : (err ? err->msg : "unusable");
    if (is_default && !usable)
      any_unusable_default = 1;
    if (json) {
      json_array_append_new(list, json_pack("{s:s, s:s, s:b, s:b, s:s}", "name", name, "description",
                                            eb_runtime_registry_description(i), "default",
                                            is_default, "usable", usable, "detail", text));
    } else {
      printf("%-8s %-8s %-7s %s\n", name, is_default ? "*" : "", usable ? "yes" : "no", text);
    }
    free(detail);
    eb_error_free(err);
    eb_runtime_free(rt);
  }
  if (json) {
    char *s = json_dumps(list, JSON_COMPACT | JSON_PRESERVE_ORDER);
    puts(s ? s : "[]");
    free(s);
  }
  json_decref(list);
  return any_unusable_default ? CLI_EXIT_FAILURE : 0;
}
