#include "core/language_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/util.h"

#define LIST(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The one table. Interpreted languages run the file written to the work dir;
 * python runs unbuffered (-u) so stdout and stderr interleave in the order
 * the program wrote them. C is compiled by the host's cc inside the same
 * sandbox, then run. */
static const struct eb_language languages[] = {
    {.name = "python",
     .aliases = LIST("py", "python3"),
     .extensions = LIST(".py"),
     .file_name = "main.py",
     .run_argv = LIST("python3", "-u", "main.py")},
    {.name = "javascript",
     .aliases = LIST("js", "node", "nodejs"),
     .extensions = LIST(".js", ".mjs", ".cjs"),
     .file_name = "main.js",
     .run_argv = LIST("node", "main.js")},
    {.name = "bash",
     .aliases = LIST("shell"),
     .extensions = LIST(".bash"),
     .file_name = "main.bash",
     .run_argv = LIST("bash", "main.bash")},
    {.name = "sh",
     .aliases = LIST("posix-sh"),
     .extensions = LIST(".sh"),
     .file_name = "main.sh",
     .run_argv = LIST("sh", "main.sh")},
    {.name = "c",
     .aliases = LIST("gcc", "cc"),
     .extensions = LIST(".c"),
     .file_name = "main.c",
     .compile_argv = LIST("cc", "-O2", "-std=gnu17", "-o", "main", "main.c", "-lm"),
     .run_argv = LIST("./main")},
};

EB_EXPORT size_t eb_language_count(void) { return EB_ARRAY_SIZE(languages); }

EB_EXPORT const eb_language *eb_language_at(size_t i) {
  return i < EB_ARRAY_SIZE(languages) ? &languages[i] : NULL;
}

EB_EXPORT const eb_language *eb_language_find(const char *name) {
  if (name == NULL)
    return NULL;
  for (size_t i = 0; i < EB_ARRAY_SIZE(languages); i++) {
    if (strcasecmp(languages[i].name, name) == 0)
      return &languages[i];
    for (const char *const *a = languages[i].aliases; *a != NULL; a++)
      if (strcasecmp(*a, name) == 0)
        return &languages[i];
  }
  return NULL;
}

EB_EXPORT const eb_language *eb_language_for_path(const char *path) {
  if (path == NULL)
    return NULL;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  if (dot == NULL || dot == base)
    return NULL;
  for (size_t i = 0; i < EB_ARRAY_SIZE(languages); i++)
    for (const char *const *e = languages[i].extensions; *e != NULL; e++)
      if (strcasecmp(*e, dot) == 0)
        return &languages[i];
  return NULL;
}

EB_EXPORT const char *eb_language_name(const eb_language *lang) { return lang->name; }
EB_EXPORT const char *eb_language_file_name(const eb_language *lang) { return lang->file_name; }
EB_EXPORT const char *const *eb_language_aliases(const eb_language *lang) { return lang->aliases; }
EB_EXPORT const char *const *eb_language_extensions(const eb_language *lang) {
  return lang->extensions;
}
EB_EXPORT bool eb_language_is_compiled(const eb_language *lang) {
  return lang->compile_argv != NULL;
}

char *eb_find_program(const char *name) {
  if (strchr(name, '/') != NULL) {
    if (access(name, X_OK) == 0)
      return strdup(name);
    return NULL;
  }
  const char *p = EB_SANDBOX_PATH;
  while (*p != '\0') {
    const char *colon = strchr(p, ':');
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    char *candidate = NULL;
    if (asprintf(&candidate, "%.*s/%s", (int)len, p, name) < 0)
      return NULL;
    if (access(candidate, X_OK) == 0)
      return candidate;
    free(candidate);
    p += len;
    if (*p == ':')
      p++;
  }
  errno = ENOENT;
  return NULL;
}

EB_EXPORT bool eb_language_available(const eb_language *lang, char **why) {
  const char *const *steps[2] = {lang->compile_argv, lang->run_argv};
  for (size_t i = 0; i < 2; i++) {
    const char *const *argv = steps[i];
    /* "./main" is produced by the compile step; nothing to find. */
    if (argv == NULL || strncmp(argv[0], "./", 2) == 0)
      continue;
    cleanup_free char *path = eb_find_program(argv[0]);
    if (path == NULL) {
      if (why != NULL && asprintf(why, "`%s` not found on %s", argv[0], EB_SANDBOX_PATH) < 0)
        *why = NULL;
      return false;
    }
  }
  return true;
}
