#include "runtime/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/capture.h"
#include "core/fsutil.h"
#include "core/util.h"

static char **argv_copy(const char *const *tmpl, const char *const *extra) {
  size_t n = 0, m = 0;
  while (tmpl[n] != NULL)
    n++;
  while (extra != NULL && extra[m] != NULL)
    m++;
  char **argv = calloc(n + m + 1, sizeof(char *));
  if (argv == NULL)
    return NULL;
  for (size_t i = 0; i < n + m; i++) {
    argv[i] = strdup(i < n ? tmpl[i] : extra[i - n]);
    if (argv[i] == NULL) {
      for (size_t k = 0; k < i; k++)
        free(argv[k]);
      free(argv);
      return NULL;
    }
  }
  return argv;
}

static void strv_free(char **v) {
  if (v == NULL)
    return;
  for (char **p = v; *p != NULL; p++)
    free(*p);
  free(v);
}

static int env_build(const eb_exec_request *req, const char *home, const char *tmp, char ***out,
                     eb_error **err) {
  size_t extra = 0;
  for (const char *const *e = req->env; e != NULL && *e != NULL; e++) {
    const char *eq = strchr(*e, '=');
    if (eq == NULL || eq == *e)
      return eb_error_set(err, EB_ERR_USAGE, "environment entry `%s` is not NAME=value", *e);
    extra++;
  }
  char **env = calloc(8 + extra, sizeof(char *));
  if (env == NULL)
    return eb_error_set(err, ENOMEM, "allocate environment");
  size_t n = 0;
  int ok = 1;
  ok &= asprintf(&env[n++], "PATH=%s", EB_SANDBOX_PATH) >= 0;
  ok &= asprintf(&env[n++], "HOME=%s", home) >= 0;
  ok &= asprintf(&env[n++], "TMPDIR=%s", tmp) >= 0;
  ok &= (env[n++] = strdup("LANG=C.UTF-8")) != NULL;
  ok &= (env[n++] = strdup("PYTHONDONTWRITEBYTECODE=1")) != NULL;
  for (const char *const *e = req->env; e != NULL && *e != NULL; e++)
    ok &= (env[n++] = strdup(*e)) != NULL;
  env[n] = NULL;
  if (!ok) {
    strv_free(env);
    return eb_error_set(err, ENOMEM, "allocate environment");
  }
  *out = env;
  return 0;
}

int eb_plan_build(const eb_exec_request *req, const char *home, const char *tmp, eb_plan *plan,
                  eb_error **err) {
  memset(plan, 0, sizeof(*plan));
  if (req->language == NULL || req->language[0] == '\0')
    return eb_error_set(err, EB_ERR_USAGE, "no language given");
  if (req->code == NULL)
    return eb_error_set(err, EB_ERR_USAGE, "no code given");
  plan->lang = eb_language_find(req->language);
  if (plan->lang == NULL)
    return eb_error_set(err, EB_ERR_LANGUAGE_UNKNOWN, "unknown language `%s`", req->language);
  plan->limits = req->limits;
  eb_limits_apply_defaults(&plan->limits);

  const char *const *tmpl[2] = {plan->lang->compile_argv, plan->lang->run_argv};
  int ret = 0;
  for (size_t i = 0; i < 2; i++) {
    if (tmpl[i] == NULL)
      continue;
    size_t k = plan->n_steps;
    if (strncmp(tmpl[i][0], "./", 2) == 0)
      plan->paths[k] = strdup(tmpl[i][0]);
    else
      plan->paths[k] = eb_find_program(tmpl[i][0]);
    if (plan->paths[k] == NULL) {
      ret = eb_error_set(err, EB_ERR_LANGUAGE_UNAVAILABLE,
                         "language `%s` is not available: `%s` not found on %s", plan->lang->name,
                         tmpl[i][0], EB_SANDBOX_PATH);
      goto fail;
    }
    plan->argvs[k] = argv_copy(tmpl[i], i == 1 ? req->args : NULL);
    if (plan->argvs[k] == NULL) {
      ret = eb_error_set(err, ENOMEM, "allocate argv");
      goto fail;
    }
    plan->steps[k].path = plan->paths[k];
    plan->steps[k].argv = plan->argvs[k];
    plan->n_steps++;
  }
  ret = env_build(req, home, tmp, &plan->envp, err);
  if (ret < 0)
    goto fail;
  return 0;
fail:
  eb_plan_free(plan);
  return ret;
}

void eb_plan_free(eb_plan *plan) {
  for (size_t i = 0; i < 2; i++) {
    free(plan->paths[i]);
    strv_free(plan->argvs[i]);
  }
  strv_free(plan->envp);
  memset(plan, 0, sizeof(*plan));
}

int eb_plan_write_code(const eb_plan *plan, const eb_exec_request *req, int dirfd, eb_error **err) {
  size_t len = req->code_len ? req->code_len : strlen(req->code);
  return eb_write_file_at(dirfd, plan->lang->file_name, req->code, len, 0644, err);
}

int eb_plan_pipes(const eb_exec_request *req, eb_child *child, int fds[4], eb_error **err) {
  int p[4][2] = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};
  child->stdin_fd = child->stdout_fd = child->stderr_fd = child->report_fd = -1;
  for (int i = 0; i < 4; i++) {
    fds[i] = -1;
    if (i == 0 && req->stdin_data == NULL)
      continue;
    if (pipe2(p[i], O_CLOEXEC) < 0) {
      int saved = errno;
      for (int k = 0; k < i; k++) {
        if (p[k][0] >= 0)
          close(p[k][0]);
        if (p[k][1] >= 0)
          close(p[k][1]);
      }
      return eb_error_set(err, saved, "create pipe");
    }
  }
  child->stdin_fd = p[0][1];
  fds[0] = p[0][0];
  child->stdout_fd = p[1][0];
  fds[1] = p[1][1];
  child->stderr_fd = p[2][0];
  fds[2] = p[2][1];
  child->report_fd = p[3][0];
  fds[3] = p[3][1];
  return 0;
}

void eb_plan_close_fds(int fds[4]) {
  for (int i = 0; i < 4; i++)
    if (fds[i] >= 0) {
      close(fds[i]);
      fds[i] = -1;
    }
}

int eb_plan_supervise(const eb_plan *plan, eb_ctx *ctx, const eb_exec_request *req,
                      eb_child *child, eb_exec_result *res, eb_error **err) {
  eb_capture cap;
  eb_capture_init(&cap, (size_t)plan->limits.output_bytes);
  eb_child_report report, exit_report;
  eb_supervise_opts opts = {
      .exit_report = &exit_report,
      .stdin_data = req->stdin_data,
      .stdin_len = req->stdin_data ? req->stdin_len : 0,
      .wall_ms = plan->limits.wall_ms,
      .capture = &cap,
      .report = &report,
  };
  int ret = eb_supervise(ctx, child, &opts, res, err);
  if (ret == 0 && report.kind == EB_REPORT_SETUP_FAILED)
    ret = eb_child_report_error(&report, err);
  if (ret == 0 && eb_capture_finish(&cap, res) < 0)
    ret = eb_error_set(err, ENOMEM, "collect output");
  eb_capture_free(&cap);
  if (ret < 0)
    return ret;
  /* A sandbox init exits with 128+N when the program was killed by signal
   * N; its report carries the real wait status. */
  if (exit_report.kind == EB_REPORT_EXIT_STATUS && res->status == EB_STATUS_NONZERO_EXIT &&
      WIFSIGNALED(exit_report.err)) {
    res->signal = WTERMSIG(exit_report.err);
    res->exit_code = 128 + res->signal;
    res->status = EB_STATUS_KILLED;
  }
  if (report.kind == EB_REPORT_COMPILE_FAILED && res->status == EB_STATUS_NONZERO_EXIT)
    res->status = EB_STATUS_COMPILE_ERROR;
  return 0;
}
