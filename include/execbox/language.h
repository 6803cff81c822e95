/* Languages: one table (python, javascript, bash, sh, c) with aliases and
 * file-extension detection. Entries are static: never freed by the caller. */
#ifndef EXECBOX_LANGUAGE_H
#define EXECBOX_LANGUAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <execbox/error.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eb_language eb_language;

/* Looks a language up by name or alias, case-insensitively ("py", "node").
 * Returns a static entry or NULL. */
EB_EXPORT const eb_language *eb_language_find(const char *name);

/* Infers the language from a file name's extension ("x.py"). NULL if none. */
EB_EXPORT const eb_language *eb_language_for_path(const char *path);

/* Iterates the table: 0 <= i < eb_language_count(). */
EB_EXPORT size_t eb_language_count(void);
EB_EXPORT const eb_language *eb_language_at(size_t i);

/* Static strings owned by the table. */
EB_EXPORT const char *eb_language_name(const eb_language *lang);
EB_EXPORT const char *eb_language_file_name(const eb_language *lang);
/* NULL-terminated static arrays. */
EB_EXPORT const char *const *eb_language_aliases(const eb_language *lang);
EB_EXPORT const char *const *eb_language_extensions(const eb_language *lang);
EB_EXPORT bool eb_language_is_compiled(const eb_language *lang);

/* Is the language's toolchain installed on this host (looked up on the
 * sandbox PATH)? Returns true if so; otherwise false and, if why is non-NULL,
 * a malloc'd explanation the caller frees. */
EB_EXPORT bool eb_language_available(const eb_language *lang, char **why);

#ifdef __cplusplus
}
#endif
#endif
