/* The language table's internals, shared by the runtimes. */
#ifndef EB_CORE_LANGUAGE_INTERNAL_H
#define EB_CORE_LANGUAGE_INTERNAL_H

#include <execbox/language.h>

struct eb_language {
  const char *name;
  const char *const *aliases;
  const char *const *extensions;
  const char *file_name;           /* the code is written to this file in the work dir */
  const char *const *compile_argv; /* NULL for interpreted languages */
  const char *const *run_argv;     /* argv[0] is looked up on EB_SANDBOX_PATH */
};

/* PATH inside every sandbox, and the one used to find interpreters. */
#define EB_SANDBOX_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Resolves a program name on EB_SANDBOX_PATH (or checks an absolute or
 * relative path). Returns a malloc'd path, or NULL with errno set. */
char *eb_find_program(const char *name);

#endif
