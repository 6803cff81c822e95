/* What every process-based runtime (local, jail) does around its own spawn:
 * resolve the language, check the request, build argv and the clean
 * environment, then supervise the child and turn what it reports into a
 * result. */
#ifndef EB_RUNTIME_PLAN_H
#define EB_RUNTIME_PLAN_H

#include <stdbool.h>

#include <execbox/runtime.h>

#include "core/language_internal.h"
#include "core/process.h"

typedef struct eb_plan {
  const eb_language *lang;
  eb_limits limits; /* defaults applied */
  eb_step steps[2]; /* compile (if any), then run */
  size_t n_steps;
  char *paths[2];
  char **argvs[2];
  char **envp;
} eb_plan;

/* Builds the plan for req. home is HOME and the work dir as the program sees
 * it, tmp its TMPDIR. Fails with EB_ERR_LANGUAGE_UNKNOWN/_UNAVAILABLE or
 * EB_ERR_USAGE (bad env entries). */
int eb_plan_build(const eb_exec_request *req, const char *home, const char *tmp, eb_plan *plan,
                  eb_error **err);
void eb_plan_free(eb_plan *plan);

/* Writes the request's code into the work dir open at dirfd. */
int eb_plan_write_code(const eb_plan *plan, const eb_exec_request *req, int dirfd, eb_error **err);

/* Supervises child under the plan's limits, filling res (output, status,
 * compile errors). A setup failure reported by the child becomes an error. */
int eb_plan_supervise(const eb_plan *plan, eb_ctx *ctx, const eb_exec_request *req,
                      eb_child *child, eb_exec_result *res, eb_error **err);

/* Makes the child's pipes: stdin (only when there is stdin data; else the
 * child opens /dev/null), stdout, stderr and the report pipe. Parent ends
 * are stored in child; the child's ends in child_fds[0..3] (-1 for none). */
int eb_plan_pipes(const eb_exec_request *req, eb_child *child, int child_fds[4], eb_error **err);
void eb_plan_close_fds(int fds[4]);

#endif
