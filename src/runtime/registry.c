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

EB_EXPORT int eb_runtime_execute(eb_runtime *rt, eb_ctx *ctx, const eb_exec_request *req,
                                 eb_exec_result *res, eb_error **err) {
  if (rt == NULL || req == NULL || res == NULL)
    return eb_error_set(err, EINVAL, "eb_runtime_execute: NULL argument");
  eb_exec_result_clear(res);
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
