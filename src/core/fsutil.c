#include "core/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "core/util.h"

int eb_make_workdir(char **path, eb_error **err) {
  const char *base = getenv("TMPDIR");
  if (base == NULL || base[0] != '/')
    base = "/tmp";
  char *tmpl = NULL;
  if (asprintf(&tmpl, "%s/execbox-XXXXXX", base) < 0)
    return eb_error_set(err, ENOMEM, "allocate work dir name");
  if (mkdtemp(tmpl) == NULL) {
    int saved = errno;
    int r = eb_error_set(err, saved, "create work dir `%s`", tmpl);
    free(tmpl);
    return r;
  }
  *path = tmpl;
  return 0;
}

int eb_write_file_at(int dirfd, const char *name, const char *data, size_t len, mode_t mode,
                     eb_error **err) {
  cleanup_close int fd =
      openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    return eb_error_set(err, errno, "create `%s`", name);
  if (eb_write_all(fd, data, len) < 0)
    return eb_error_set(err, errno, "write `%s`", name);
  return 0;
}

/* Empties the directory open at dfd; depth bounds recursion on hostile trees. */
static int rmtree_fd(int dfd, int depth, eb_error **err) {
  if (depth > 512)
    return eb_error_set(err, ELOOP, "remove work dir: tree too deep");
  DIR *dir = fdopendir(dfd);
  if (dir == NULL) {
    int saved = errno;
    close(dfd);
    return eb_error_set(err, saved, "read work dir");
  }
  int ret = 0;
  struct dirent *de;
  for (;;) {
    errno = 0;
    de = readdir(dir);
    if (de == NULL)
      break;
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    if (unlinkat(dfd, de->d_name, 0) == 0 || errno == ENOENT)
      continue;
    if (errno != EISDIR && errno != EPERM) {
      ret = eb_error_set(err, errno, "remove `%s`", de->d_name);
      continue;
    }
    int child = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0 && errno == EACCES) {
      /* The program may have chmod'ed its own dir to 0; give it back. */
      if (fchmodat(dfd, de->d_name, 0700, 0) < 0) { /* opening will report it */ }
      child = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (child < 0) {
      ret = eb_error_set(err, errno, "open `%s`", de->d_name);
      continue;
    }
    if (fchmod(child, 0700) < 0) { /* removal will report what it cannot do */ }
    int r = rmtree_fd(child, depth + 1, err);
    if (r < 0)
      ret = r;
    if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
      ret = eb_error_set(err, errno, "remove dir `%s`", de->d_name);
  }
  closedir(dir);
  return ret;
}

int eb_rmtree(const char *path, eb_error **err) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES) {
    /* The program may have taken the permissions of its work dir away. */
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && chmod(path, 0700) == 0)
      fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) {
    if (errno == ENOENT)
      return 0;
    return eb_error_set(err, errno, "open work dir `%s`", path);
  }
  if (fchmod(fd, 0700) < 0) { /* removal will report what it cannot do */ }
  int r = rmtree_fd(fd, 0, err);
  if (rmdir(path) < 0 && errno != ENOENT && r == 0)
    r = eb_error_set(err, errno, "remove work dir `%s`", path);
  return r < 0 ? eb_error_wrap(err, "clean up `%s`", path) : 0;
}

int eb_read_file(const char *path, char **data, size_t *len, size_t max, eb_error **err) {
  int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return eb_error_set(err, errno, "open `%s`", path);
  size_t cap = 8192, n = 0;
  char *buf = malloc(cap);
  int ret = 0;
  if (buf == NULL) {
    ret = eb_error_set(err, ENOMEM, "read `%s`", path);
    goto out;
  }
  for (;;) {
    if (n + 1 >= cap) {
      char *p = realloc(buf, cap * 2);
      if (p == NULL) {
        ret = eb_error_set(err, ENOMEM, "read `%s`", path);
        goto out;
      }
      buf = p;
      cap *= 2;
    }
    ssize_t r = eb_read_retry(fd, buf + n, cap - n - 1);
    if (r < 0) {
      ret = eb_error_set(err, errno, "read `%s`", path);
      goto out;
    }
    if (r == 0)
      break;
    n += (size_t)r;
    if (n > max) {
      ret = eb_error_set(err, EFBIG, "read `%s`: larger than %zu bytes", path, max);
      goto out;
    }
  }
  buf[n] = '\0';
  *data = steal_pointer(&buf);
  *len = n;
out:
  free(buf);
  if (fd != STDIN_FILENO)
    close(fd);
  return ret;
}
