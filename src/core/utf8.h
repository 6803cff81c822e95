/* Program output is bytes; JSON wants UTF-8 text. */
#ifndef EB_CORE_UTF8_H
#define EB_CORE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* A malloc'd, NUL-terminated copy of data where every byte sequence that is
 * not valid UTF-8 is replaced by U+FFFD, and so is every NUL unless
 * keep_nul (a NUL is valid JSON, \u0000, but cuts a C string short).
 * *out_len (may be NULL) receives its length. NULL on ENOMEM. */
char *eb_utf8_sanitize(const char *data, size_t len, bool keep_nul, size_t *out_len);

#endif
