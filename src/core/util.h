/* Internal helpers: cleanup attributes and ownership transfer. */
#ifndef EB_CORE_UTIL_H
#define EB_CORE_UTIL_H

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static inline void eb_cleanup_freep(void *p) {
  void **pp = (void **)p;
  free(*pp);
}
static inline void eb_cleanup_closep(int *fd) {
  if (*fd >= 0) {
    int saved = errno;
    close(*fd);
    errno = saved;
  }
}

#define cleanup_free __attribute__((cleanup(eb_cleanup_freep)))
#define cleanup_close __attribute__((cleanup(eb_cleanup_closep)))

/* Hands ownership of a pointer over: returns it and clears the variable. */
static inline void *eb_steal_pointer(void *pp) {
  void **p = (void **)pp;
  void *v = *p;
  *p = NULL;
  return v;
}
#define steal_pointer(pp) eb_steal_pointer(pp)

static inline int eb_steal_fd(int *fd) {
  int v = *fd;
  *fd = -1;
  return v;
}

#define EB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define EB_MIN(a, b) ((a) < (b) ? (a) : (b))
#define EB_MAX(a, b) ((a) > (b) ? (a) : (b))

#define EB_INTERNAL __attribute__((visibility("hidden")))

#endif
