/* The runtime registry: a table of names and constructors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <execbox/runtime.h>

#include "core/util.h"
#include "runtime/runtimes.h"

typedef struct registry_entry {
  const eb_runtime_ops *ops; /* name and description */
  int (*create)(eb_runtime **out, eb_error **err);
} registry_entry;

static const registry_entry registry[] = {
    {&eb_jail_ops, eb_jail_runtime_new},
    {&eb_local_ops, eb_local_runtime_new},
    {&eb_docker_ops, eb_docker_runtime_new_default},
    {&eb_remote_ops, eb_remote_runtime_new},
};

#define EB_DEFAULT_RUNTIME "jail"

EB_EXPORT size_t eb_runtime_registry_count(void) { return EB_ARRAY_SIZE(registry); }
EB_EXPORT const char *eb_runtime_registry_name(size_t i) {
  return i < EB_ARRAY_SIZE(registry) ? registry[i].ops->name : NULL;
}
EB_EXPORT const char *eb_runtime_registry_description(size_t i) {
  return i < EB_ARRAY_SIZE(registry) ? registry[i].ops->description : NULL;
}

EB_EXPORT const char *eb_runtime_resolve_name(const char *name) {
  if (name == NULL || name[0] == '\0')
    name = getenv("SANDBOX_ENV");
  if (name == NULL || name[0] == '\0')
    return EB_DEFAULT_RUNTIME;
  for (size_t i = 0; i < EB_ARRAY_SIZE(registry); i++)
    if (strcmp(registry[i].ops->name, name) == 0)
      return registry[i].ops->name;
  return name;
}

EB_EXPORT int eb_runtime_new(const char *name, eb_runtime **out, eb_error **err) {
  const char *resolved = eb_runtime_resolve_name(name);
  for (size_t i = 0; i < EB_ARRAY_SIZE(registry); i++)
    if (strcmp(registry[i].ops->name, resolved) == 0)
      return registry[i].create(out, err);
  return eb_error_set(err, EB_ERR_RUNTIME_UNKNOWN, "unknown runtime `%s` (see `execbox runtimes`)",
                      resolved);
}

EB_EXPORT void eb_runtime_free(eb_runtime *rt) {
  if (rt != NULL && rt->ops->destroy != NULL)
    rt->ops->destroy(rt);
}

EB_EXPORT int eb_runtime_probe(eb_runtime *rt, char **detail, eb_error **err) {
  *detail = NULL;
  if (rt->ops->probe == NULL)
    return 0;
  return rt->ops->probe(rt, detail, err);
}

/* A whole number in [min, max] from an environment variable. */
static int env_number(const char *name, long long min, long long max, long long *out,
                      eb_error **err) {
  const char *v = getenv(name);
  if (v == NULL || v[0] == '\0')
    return 0;
  char *end = NULL;
  errno = 0;
  long long n = strtoll(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || n < min || n > max)
    return eb_error_set(err, EB_ERR_USAGE, "%s=`%s`: expected a number from %lld to %lld", name,
                        v, min, max);
  *out = n;
  return 1;
}

EB_EXPORT int eb_pool_options_from_env(eb_pool_options *opts, eb_error **err) {
  memset(opts, 0, sizeof(*opts));
  opts->size = EB_DEFAULT_POOL_SIZE;
  opts->idle_ms = EB_DEFAULT_POOL_IDLE_MS;
  int set = 0;
  const char *v = getenv("EXECBOX_POOL");
  if (v != NULL && (strcmp(v, "off") == 0 || strcmp(v, "no") == 0)) {
    opts->size = 0;
    set = 1;
  } else {
    long long n = 0;
    int r = env_number("EXECBOX_POOL", 0, EB_MAX_POOL_SIZE, &n, err);
    if (r < 0)
      return r;
    if (r > 0) {
      opts->size = (int)n;
      set = 1;
    }
  }
  long long idle = 0;
  int r = env_number("EXECBOX_POOL_IDLE_MS", 1, 86400000LL * 365, &idle, err);
  if (r < 0)
    return r;
  if (r > 0)
    opts->idle_ms = idle;
  return set;
}

EB_EXPORT int eb_runtime_enable_pool(eb_runtime *rt, const eb_pool_options *opts, eb_error **err) {
  if (rt == NULL)
    return eb_error_set(err, EINVAL, "eb_runtime_enable_pool: NULL runtime");
  if (rt->ops->enable_pool == NULL)
    return 1;
  eb_pool_options from_env;
  if (opts == NULL) {
    if (eb_pool_options_from_env(&from_env, err) < 0)
      return -1;
    opts = &from_env;
  }
  if (opts->size < 0 || opts->size > EB_MAX_POOL_SIZE || opts->idle_ms < 0)
    return eb_error_set(err, EB_ERR_USAGE, "pool size must be 0 to %d, idle time >= 0",
                        EB_MAX_POOL_SIZE);
  if (opts->size == 0)
    return 0;
  int r = rt->ops->enable_pool(rt, opts, err);
  if (r < 0)
    eb_error_wrap(err, "%s runtime: warm pool", rt->ops->name);
  return r;
}

EB_EXPORT int eb_runtime_pool_stats(eb_runtime *rt, eb_pool_stats *stats) {
  memset(stats, 0, sizeof(*stats));
  if (rt == NULL || rt->ops->pool_stats == NULL)
    return 1;
  return rt->ops->pool_stats(rt, stats);
}

EB_EXPORT int eb_runtime_execute(eb_runtime *rt, eb_ctx *ctx, const eb_exec_request *req,
                                 eb_exec_result *res, eb_error **err) {
  if (rt == NULL || req == NULL || res == NULL)
    return eb_error_set(err, EINVAL, "eb_runtime_execute: NULL argument");
  eb_exec_result_clear(res);
  /* Beyond these no runtime can express the limit (products overflow, the
   * kernel's own maxima): refused, never passed on to wrap into "none". */
  const eb_limits *l = &req->limits;
  if (l->cpu_milli > EB_MAX_CPU_MILLI || l->pids > EB_MAX_PIDS || l->wall_ms > EB_MAX_WALL_MS ||
      l->cpu_ms > EB_MAX_WALL_MS || l->cpu_milli < 0 || l->pids < 0 || l->wall_ms < 0 ||
      l->cpu_ms < 0 || l->memory_bytes < 0 || l->output_bytes < 0 || l->file_size_bytes < 0 ||
      l->tmp_bytes < 0 || l->open_files < 0)
    return eb_error_set(err, EB_ERR_USAGE,
                        "limits out of range (cpu_milli at most %lld, pids at most %lld, times at "
                        "most %lld ms, none negative)",
                        (long long)EB_MAX_CPU_MILLI, (long long)EB_MAX_PIDS,
                        (long long)EB_MAX_WALL_MS);
  int r = rt->ops->execute(rt, ctx, req, res, err);
  if (r < 0)
    eb_error_wrap(err, "%s runtime", rt->ops->name);
  return r;
}

EB_EXPORT int eb_execute(eb_runtime *rt, eb_ctx *ctx, const char *language, const char *code,
                         eb_exec_result *res, eb_error **err) {
  eb_exec_request req = {.language = language, .code = code};
  return eb_runtime_execute(rt, ctx, &req, res, err);
}
