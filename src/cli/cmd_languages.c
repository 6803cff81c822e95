/* execbox languages: the language table and what is usable here. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void join(char *out, size_t size, const char *const *items) {
  out[0] = '\0';
  for (const char *const *p = items; *p != NULL; p++) {
    if (p != items)
      strncat(out, ",", size - strlen(out) - 1);
    strncat(out, *p, size - strlen(out) - 1);
  }
}

int cmd_languages(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      printf("usage: execbox languages [--json]\n\nLists the languages execbox knows, their aliases and\n"
             "file extensions, and whether their toolchain is installed on this host.\n");
      return 0;
    } else {
      cli_errorf("unknown option `%s` (see `execbox languages --help`)", argv[i]);
      return CLI_EXIT_USAGE;
    }
  }
  json_t *list = json_array();
  if (!json)
    printf("%-11s %-22s %-14s %s\n", "LANGUAGE", "ALIASES", "EXTENSIONS", "AVAILABLE");
  for (size_t i = 0; i < eb_language_count(); i++) {
    const eb_language *lang = eb_language_at(i);
    char *why = NULL;
    bool ok = eb_language_available(lang, &why);
    if (json) {
      json_t *aliases = json_array(), *exts = json_array();
      for (const char *const *a = eb_language_aliases(lang); *a; a++)
        json_array_append_new(aliases, json_string(*a));
      for (const char *const *e = eb_language_extensions(lang); *e; e++)
        json_array_append_new(exts, json_string(*e));
      json_t *o = json_pack("{s:s, s:o, s:o, s:b, s:b}", "name", eb_language_name(lang), "aliases",
                            aliases, "extensions", exts, "compiled", eb_language_is_compiled(lang),
                            "available", ok);
      if (!ok && why)
        json_object_set_new(o, "reason", json_string(why));
      json_array_append_new(list, o);
    } else {
      char aliases[128], exts[128];
      join(aliases, sizeof(aliases), eb_language_aliases(lang));
      join(exts, sizeof(exts), eb_language_extensions(lang));
      printf("%-11s %-22s %-14s %s%s%s\n", eb_language_name(lang), aliases, exts, ok ? "yes" : "no",
             ok ? "" : " - ", ok ? "" : (why ? why : "unknown reason"));
    }
    free(why);
  }
  if (json) {
    char *s = json_dumps(list, JSON_COMPACT | JSON_PRESERVE_ORDER);
    puts(s ? s : "[]");
    free(s);
  }
  json_decref(list);
  return 0;
}
