/* File-system helpers that never follow a path the sandboxed program could
 * have planted (symlinks in the work dir are removed, not followed). */
#ifndef EB_CORE_FSUTIL_H
#define EB_CORE_FSUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include <execbox/error.h>

/* Creates a private (0700) directory "<$TMPDIR or /tmp>/execbox-XXXXXX".
 * *path is malloc'd; the caller frees it and removes the dir (eb_rmtree). */
int eb_make_workdir(char **path, eb_error **err);

/* Creates name in dirfd (must not exist; never follows a symlink) with data. */
int eb_write_file_at(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
                     eb_error **err);

/* Removes a directory tree without following symlinks, fixing permissions the
 * program may have taken away. Returns 0 or < 0 with *err. */
int eb_rmtree(const char *path, eb_error **err);

/* Reads a whole file (or stdin for "-") into a malloc'd, NUL-terminated buffer. */
int eb_read_file(const char *path, char **data, size_t *len, size_t max, eb_error **err);

#endif
