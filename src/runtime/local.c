/* The local runtime: fork/exec on the host, for trusted code and development.
 * It isolates nothing; it bounds time, output and (through rlimits) CPU, file
 * size, open files and, when asked, address space. Its child is the leader of
 * a new session, so killing the process group ends everything it started
 * there; a program that starts a session of its own escapes that kill (the
 * jail runtime's pid namespace does not let anything escape). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/fsutil.h"
#include "core/syscalls.h"
#include "core/util.h"
#include "runtime/plan.h"
#include "runtime/runtimes.h"

/* The child's own pid too: before its setsid() it leads no group yet, and
 * a kill must not miss it. */
static void local_kill_tree(void *arg) {
  pid_t pgid = *(pid_t *)arg;
  kill(-pgid, SIGKILL);
  kill(pgid, SIGKILL);
}

static int set_rlimit(int resource, rlim_t value) {
  struct rlimit rl = {value, value};
  return setrlimit(resource, &rl);
}

/* Refuse what the local runtime cannot enforce rather than run weaker. */
static int local_check_limits(const eb_limits *l, eb_error **err) {
  if (l->network == EB_NETWORK_NONE)
    return eb_error_set(err, EB_ERR_LIMIT_UNSUPPORTED,
                        "the local runtime cannot cut off the network; use the jail runtime");
  if (l->pids > 0)
    return eb_error_set(err, EB_ERR_LIMIT_UNSUPPORTED,
                        "the local runtime cannot limit the number of processes; use the jail runtime");
  if (l->cpu_milli > 0)
    return eb_error_set(err, EB_ERR_LIMIT_UNSUPPORTED,
                        "the local runtime cannot limit CPU bandwidth; use the jail runtime");
  if (l->tmp_bytes > 0)
    return eb_error_set(err, EB_ERR_LIMIT_UNSUPPORTED,
                        "the local runtime cannot limit the work dir's size; use the jail runtime");
  return 0;
}

static int local_execute(eb_runtime *rt, eb_ctx *ctx, const eb_exec_request *req,
                         eb_exec_result *res, eb_error **err) {
  int64_t start = eb_now_ns();
  int ret = local_check_limits(&req->limits, err);
  if (ret < 0)
    return ret;

  cleanup_free char *workdir = NULL;
  eb_plan plan;
  memset(&plan, 0, sizeof(plan));
  int fds[4] = {-1, -1, -1, -1};
  eb_child child = {.pid = -1, .pidfd = -1, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
                    .report_fd = -1};
  cleanup_close int dirfd = -1;

  ret = eb_make_workdir(&workdir, err);
  if (ret < 0)
    return ret;
  ret = eb_plan_build(req, workdir, workdir, &plan, err);
  if (ret < 0)
    goto out;
  dirfd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    ret = eb_error_set(err, errno, "open work dir `%s`", workdir);
    goto out;
  }
  ret = eb_plan_write_code(&plan, req, dirfd, err);
  if (ret < 0)
    goto out;
  ret = eb_plan_pipes(req, &child, fds, err);
  if (ret < 0)
    goto out;

  int64_t cpu_s = req->limits.cpu_ms > 0 ? (req->limits.cpu_ms + 999) / 1000
                                         : (plan.limits.wall_ms + 999) / 1000 + 1;
  pid_t parent = getpid();
  /* No host signal handler may run in the child before it resets them. */
  sigset_t all, saved_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &saved_mask);
  pid_t pid = fork();
  int fork_errno = errno;
  if (pid != 0)
    pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
  errno = fork_errno;
  if (pid < 0) {
    ret = eb_error_set(err, errno, "fork");
    eb_child_close_fds(&child);
    goto out;
  }
  if (pid == 0) {
    int keep[5] = {fds[0], fds[1], fds[2], fds[3], dirfd};
    if (eb_child_keep_only_fds(keep, 5) < 0)
      eb_child_fail(fds[3] > 2 ? fds[3] : 2, errno, "close inherited fds");
    int rep = keep[3];
    eb_child_reset_signals(); /* then unblocks what the parent blocked */
    /* Own session and process group: the whole tree can be killed at once,
     * and the program has no controlling terminal. */
    if (setsid() < 0)
      eb_child_fail(rep, errno, "setsid");
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
      eb_child_fail(rep, errno, "set parent-death signal");
    if (getppid() != parent)
      _exit(127);
    /* Nothing but 0-2 reaches the program: the kept fds are close-on-exec. */
    if (eb_child_setup_stdio(keep[0], keep[1], keep[2]) < 0)
      eb_child_fail(rep, errno, "set up stdin, stdout and stderr");
    if (set_rlimit(RLIMIT_CORE, 0) < 0 || set_rlimit(RLIMIT_CPU, (rlim_t)cpu_s) < 0 ||
        set_rlimit(RLIMIT_FSIZE, (rlim_t)plan.limits.file_size_bytes) < 0 ||
        set_rlimit(RLIMIT_NOFILE, (rlim_t)plan.limits.open_files) < 0)
      eb_child_fail(rep, errno, "setrlimit");
    /* RLIMIT_AS only when asked: language runtimes such as node reserve far
     * more address space than they use, so a default cap would break them. */
    if (req->limits.memory_bytes > 0 && set_rlimit(RLIMIT_AS, (rlim_t)req->limits.memory_bytes) < 0)
      eb_child_fail(rep, errno, "setrlimit RLIMIT_AS");
    if (fchdir(keep[4]) < 0)
      eb_child_fail(rep, errno, "chdir to work dir");
    eb_child_exec_steps(rep, plan.steps, plan.n_steps, plan.envp);
  }
  eb_plan_close_fds(fds);
  child.pid = pid;
  child.pidfd = eb_pidfd_open(pid);
  child.kill_tree = local_kill_tree;
  child.kill_arg = &child.pid;
  ret = eb_plan_supervise(&plan, ctx, req, &child, res, err);

out:
  eb_plan_close_fds(fds);
  eb_plan_free(&plan);
  if (workdir != NULL) {
    eb_error *rm_err = NULL;
    if (eb_rmtree(workdir, &rm_err) < 0 && ret == 0)
      ret = eb_error_propagate(err, steal_pointer(&rm_err));
    eb_error_free(rm_err);
  }
  res->duration_ms = (eb_now_ns() - start) / 1000000;
  return ret;
}

static int local_probe(eb_runtime *rt, char **detail, eb_error **err) {
  *detail = strdup("no isolation; rlimits for cpu, file size, open files (address space on request)");
  return 0;
}

static void local_destroy(eb_runtime *rt) { free(rt); }

const eb_runtime_ops eb_local_ops = {
    .name = "local",
    .description = "processes on the host, for trusted code (no isolation)",
    .execute = local_execute,
    .destroy = local_destroy,
    .probe = local_probe,
};

int eb_local_runtime_new(eb_runtime **out, eb_error **err) {
  eb_runtime *rt = calloc(1, sizeof(*rt));
  if (rt == NULL)
    return eb_error_set(err, ENOMEM, "allocate local runtime");
  rt->ops = &eb_local_ops;
  *out = rt;
  return 0;
}
