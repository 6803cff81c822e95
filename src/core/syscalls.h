/* Syscall wrappers: static inline, ENOSYS where the kernel headers lack the
 * number, EINTR retried where the call is restartable. Every fd is O_CLOEXEC. */
#ifndef EB_CORE_SYSCALLS_H
#define EB_CORE_SYSCALLS_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static inline int eb_pidfd_open(pid_t pid) {
#ifdef __NR_pidfd_open
  return (int)syscall(__NR_pidfd_open, pid, 0);
#else
  errno = ENOSYS;
  return -1;
#endif
}

static inline int eb_pidfd_send_signal(int pidfd, int sig) {
#ifdef __NR_pidfd_send_signal
  return (int)syscall(__NR_pidfd_send_signal, pidfd, sig, NULL, 0);
#else
  errno = ENOSYS;
  return -1;
#endif
}

static inline int eb_close_range(unsigned first, unsigned last) {
#ifdef __NR_close_range
  return (int)syscall(__NR_close_range, first, last, 0U);
#else
  errno = ENOSYS;
  return -1;
#endif
}

static inline int eb_pivot_root(const char *new_root, const char *put_old) {
#ifdef __NR_pivot_root
  return (int)syscall(__NR_pivot_root, new_root, put_old);
#else
  errno = ENOSYS;
  return -1;
#endif
}

/* fork() without glibc: no atfork handlers, no malloc or stdio locks. For
 * children made by a raw clone() of a multithreaded process, where glibc's
 * view of the threads is stale and its fork() could wait forever on a lock
 * some other thread held at clone time. The child returns 0. */
static inline pid_t eb_raw_fork(void) {
  return (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
}

/* set*id without glibc: glibc's wrappers signal every thread it believes
 * the process has, which, after a raw clone(), never answer. */
static inline int eb_raw_setresuid(uid_t r, uid_t e, uid_t s) {
  return (int)syscall(SYS_setresuid, r, e, s);
}
static inline int eb_raw_setresgid(gid_t r, gid_t e, gid_t s) {
  return (int)syscall(SYS_setresgid, r, e, s);
}
static inline int eb_raw_setgroups(size_t n, const gid_t *list) {
  return (int)syscall(SYS_setgroups, n, list);
}

static inline ssize_t eb_write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;
  size_t done = 0;
  while (done < len) {
    ssize_t w = write(fd, p + done, len - done);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    done += (size_t)w;
  }
  return (ssize_t)done;
}

static inline ssize_t eb_read_retry(int fd, void *buf, size_t len) {
  ssize_t r;
  do
    r = read(fd, buf, len);
  while (r < 0 && errno == EINTR);
  return r;
}

#endif
