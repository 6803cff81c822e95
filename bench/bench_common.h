/* What the benchmarks share: a clock, medians, and finding the binary a
 * sandbox would run. Header-only: each bench is one translation unit. */
#ifndef EB_BENCH_COMMON_H
#define EB_BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>
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

#endif
