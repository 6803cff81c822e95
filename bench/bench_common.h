/* What the benchmarks share: a clock, medians, and finding the binary a
 * sandbox would run. Header-only: each bench is one translation unit. */
#ifndef EB_BENCH_COMMON_H
#define EB_BENCH_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <execbox/execbox.h>

static inline double now_ms(void) { return (double)eb_now_ns() / 1e6; }

static inline int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts v in place; 0 for an empty set. */
static inline double median(double *v, int n) {
  if (n == 0)
    return 0;
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Programs are looked up on the same PATH the sandboxes use, so that a
 * bare spawn runs the very binary execbox runs (not, say, a pyenv shim). */
static inline const char *resolve(const char *name, char *buf, size_t size) {
  static const char *const dirs[] = {"/usr/local/bin", "/usr/bin", "/bin"};
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
    snprintf(buf, size, "%s/%s", dirs[i], name);
    if (access(buf, X_OK) == 0)
      return buf;
  }
  return name;
}

/* Spawns file (looked up on PATH with search_path) with argv, stdout to
 * /dev/null, and waits: 0 when it exited 0. */
static inline int spawn_quiet(const char *file, char *const *argv, bool search_path) {
  extern char **environ;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int r = search_path ? posix_spawnp(&pid, file, &fa, NULL, argv, environ)
                      : posix_spawn(&pid, file, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (r != 0)
    return -1;
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Throughput: executions per second of language/code with c threads (at
 * most 8) sharing one runtime, for seconds; *failed counts the others. */
typedef struct tp_job {
  eb_runtime *rt;
  const char *language, *code;
  double until_ms;
  long done, failed;
} tp_job;

static inline void *tp_worker(void *arg) {
  tp_job *j = arg;
  while (now_ms() < j->until_ms) {
    eb_exec_result res = {0};
    eb_error *err = NULL;
    if (eb_execute(j->rt, NULL, j->language, j->code, &res, &err) == 0 &&
        res.status == EB_STATUS_OK)
      j->done++;
    else
      j->failed++;
    eb_exec_result_clear(&res);
    eb_error_free(err);
  }
  return NULL;
}

static inline double throughput_at(eb_runtime *rt, const char *language, const char *code, int c,
                                   double seconds, long *failed) {
  tp_job jobs[8];
  pthread_t t[8];
  c = c < 1 ? 1 : c > 8 ? 8 : c;
  double start = now_ms();
  for (int i = 0; i < c; i++) {
    jobs[i] = (tp_job){.rt = rt, .language = language, .code = code,
                       .until_ms = start + seconds * 1000};
    pthread_create(&t[i], NULL, tp_worker, &jobs[i]);
  }
  long done = 0;
  *failed = 0;
  for (int i = 0; i < c; i++) {
    pthread_join(t[i], NULL);
    done += jobs[i].done;
    *failed += jobs[i].failed;
  }
  return (double)done / ((now_ms() - start) / 1000.0);
}

/* bubblewrap with binds equivalent to the jail's: read-only /usr and the
 * merged-/usr links, ld.so.cache, a new /proc, a minimal /dev, tmpfs /tmp
 * and work dir, every namespace unshared. */
#define BWRAP_PREFIX                                                                              \
  "bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr", "--symlink",        \
      "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",      \
      "--symlink", "usr/sbin", "/sbin", "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",      \
      "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/work", "--chdir", "/work"

#endif
