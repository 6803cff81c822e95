#include "core/process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "core/util.h"

/* How long to keep draining pipes after the child exited and its tree was
 * killed: a descendant that escaped the kill (it cannot, in the jail) must
 * not hold the execution open. */
#define DRAIN_GRACE_NS (100LL * 1000000LL)
/* After a kill, the child must be gone soon; if not, poll in steps. */
#define KILL_WAIT_STEP_MS 50

static void child_report(int fd, int kind, int err, const char *msg) {
  eb_child_report r;
  memset(&r, 0, sizeof(r));
  r.kind = kind;
  r.err = err;
  size_t i = 0;
  for (; msg[i] != '\0' && i < sizeof(r.msg) - 1; i++)
    r.msg[i] = msg[i];
  ssize_t w = write(fd, &r, sizeof(r));
  (void)w;
}

void eb_child_fail(int fd, int err, const char *msg) {
  child_report(fd, EB_REPORT_SETUP_FAILED, err, msg);
  _exit(127);
}

void eb_child_exec_steps(int report_fd, const eb_step *steps, size_t n, char *const envp[]) {
  for (size_t i = 0; i + 1 < n; i++) {
    pid_t pid = eb_raw_fork(); /* we may descend from a raw clone() */
    if (pid < 0)
      eb_child_fail(report_fd, errno, "fork compile step");
    if (pid == 0) {
      execve(steps[i].path, steps[i].argv, envp);
      eb_child_fail(report_fd, errno, "execve compile step");
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
      if (errno != EINTR)
        eb_child_fail(report_fd, errno, "wait for compile step");
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0) {
      child_report(report_fd, EB_REPORT_COMPILE_FAILED, code, "compile step failed");
      _exit(code);
    }
  }
  execve(steps[n - 1].path, steps[n - 1].argv, envp);
  eb_child_fail(report_fd, errno, "execve program");
}

int eb_child_report_error(const eb_child_report *r, eb_error **err) {
  char msg[sizeof(r->msg) + 1];
  memcpy(msg, r->msg, sizeof(r->msg));
  msg[sizeof(r->msg)] = '\0';
  if (r->err > 0 && r->err < EB_ERR_BASE)
    return eb_error_set(err, EB_ERR_SANDBOX, "sandbox setup: %s: %s", msg, strerror(r->err));
  return eb_error_set(err, EB_ERR_SANDBOX, "sandbox setup: %s", msg);
}

int eb_child_keep_only_fds(int *keep, size_t n) {
  int sorted[16];
  size_t m = 0;
  for (size_t i = 0; i < n && m < EB_ARRAY_SIZE(sorted); i++)
    if (keep[i] >= 0)
      sorted[m++] = keep[i];
  for (size_t i = 1; i < m; i++) /* insertion sort: a handful of fds */
    for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
      int t = sorted[j];
      sorted[j] = sorted[j - 1];
      sorted[j - 1] = t;
    }
  unsigned next = 0; /* lowest fd not yet dealt with */
  for (size_t i = 0; i <= m; i++) {
    unsigned kept = i < m ? (unsigned)sorted[i] : ~0U;
    if (i < m && kept < next)
      continue; /* a duplicate */
    if (kept > next && eb_close_range(next, i < m ? kept - 1 : ~0U) < 0) {
      if (errno != ENOSYS)
        return -1;
      long max = sysconf(_SC_OPEN_MAX);
      for (long fd = next; fd < (i < m ? (long)kept : max); fd++)
        close((int)fd);
    }
    next = kept + 1;
  }
  /* Lift kept fds out of 0-2, where the caller is about to dup2 stdio. */
  for (size_t i = 0; i < n; i++)
    if (keep[i] >= 0 && keep[i] <= 2) {
      int moved = fcntl(keep[i], F_DUPFD_CLOEXEC, 3);
      if (moved < 0)
        return -1;
      keep[i] = moved;
    }
  return 0;
}

int eb_child_setup_stdio(int in, int out, int err) {
  if (in < 0) {
    /* 0-2 are free here, so /dev/null may land on 0 itself: then dup2
     * would be a no-op that leaves close-on-exec set. */
    in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0)
      return -1;
    if (in == 0)
      return fcntl(0, F_SETFD, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ? -1 : 0;
  }
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
    return -1;
  return 0;
}

void eb_child_close_fds(eb_child *c) {
  int *fds[5] = {&c->pidfd, &c->stdin_fd, &c->stdout_fd, &c->stderr_fd, &c->report_fd};
  for (int i = 0; i < 5; i++)
    if (*fds[i] >= 0) {
      close(*fds[i]);
      *fds[i] = -1;
    }
}

void eb_child_reset_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++)
    sigaction(sig, &sa, NULL); /* fails harmlessly for SIGKILL/SIGSTOP and RT gaps */
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

int eb_set_nonblock(int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
    return -1;
  return 0;
}

static void close_fd(int *fd) {
  if (*fd >= 0) {
    close(*fd);
    *fd = -1;
  }
}

/* Writes to the stdin pipe without letting SIGPIPE reach the host process:
 * the signal is blocked for this thread during the write and any pending
 * instance consumed before unblocking. */
static ssize_t write_nosigpipe(int fd, const char *data, size_t len) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  ssize_t w;
  do
    w = write(fd, data, len);
  while (w < 0 && errno == EINTR);
  int saved = errno;
  if (w < 0 && saved == EPIPE) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) > 0)
      ;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = saved;
  return w;
}

static bool child_has_exited(eb_child *c) {
  siginfo_t si;
  memset(&si, 0, sizeof(si));
  /* WNOWAIT: leave the zombie, so its pid (and process group id) stays
   * reserved until the tree has been killed. */
  if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
    return errno == ECHILD;
  return si.si_pid == c->pid;
}

typedef enum { STOP_NONE, STOP_TIMEOUT, STOP_CANCELLED, STOP_OUTPUT } stop_reason;

int eb_supervise(eb_ctx *ctx, eb_child *c, const eb_supervise_opts *o, eb_exec_result *res,
                 eb_error **err) {
  int ret = 0;
  int64_t start = eb_now_ns();
  int64_t deadline = eb_ctx_deadline_ns(ctx);
  if (o->wall_ms > 0 && start + o->wall_ms * 1000000LL < deadline)
    deadline = start + o->wall_ms * 1000000LL;

  stop_reason reason = STOP_NONE;
  bool exited = false;
  int64_t drain_until = 0;
  size_t stdin_off = 0;
  char buf[65536];

  if (c->stdin_fd >= 0) {
    eb_set_nonblock(c->stdin_fd);
    if (o->stdin_len == 0)
      close_fd(&c->stdin_fd);
  }
  size_t report_off = 0;
  bool by_report = false;
  eb_child_report pending, exit_report;
  memset(&exit_report, 0, sizeof(exit_report));
  c->reaped = false;
  if (o->report != NULL)
    memset(o->report, 0, sizeof(*o->report));
  if (o->exit_report != NULL)
    memset(o->exit_report, 0, sizeof(*o->exit_report));
  if (c->stdout_fd >= 0)
    eb_set_nonblock(c->stdout_fd);
  if (c->stderr_fd >= 0)
    eb_set_nonblock(c->stderr_fd);

  int ctx_fds[32];
  int n_ctx = eb_ctx_cancel_fds(ctx, ctx_fds, (int)EB_ARRAY_SIZE(ctx_fds));
  if (n_ctx > (int)EB_ARRAY_SIZE(ctx_fds))
    n_ctx = (int)EB_ARRAY_SIZE(ctx_fds);

#define STOP(r)                                                                                   \
  do {                                                                                            \
    if (reason == STOP_NONE) {                                                                    \
      reason = (r);                                                                               \
      c->kill_tree(c->kill_arg);                                                                  \
    }                                                                                             \
  } while (0)

  /* The state of the context may already be final. */
  if (eb_ctx_state_now(ctx) == EB_CTX_CANCELLED)
    STOP(STOP_CANCELLED);

  for (;;) {
    struct pollfd pfd[6 + EB_ARRAY_SIZE(ctx_fds)];
    int n = 0, i_out = -1, i_err = -1, i_in = -1, i_pid = -1, i_ctx = -1, i_rep = -1;
    if (c->report_fd >= 0) {
      i_rep = n;
      pfd[n++] = (struct pollfd){.fd = c->report_fd, .events = POLLIN};
    }
    if (c->stdout_fd >= 0) {
      i_out = n;
      pfd[n++] = (struct pollfd){.fd = c->stdout_fd, .events = POLLIN};
    }
    if (c->stderr_fd >= 0) {
      i_err = n;
      pfd[n++] = (struct pollfd){.fd = c->stderr_fd, .events = POLLIN};
    }
    if (c->stdin_fd >= 0 && !exited) {
      i_in = n;
      pfd[n++] = (struct pollfd){.fd = c->stdin_fd, .events = POLLOUT};
    }
    if (!exited && c->pidfd >= 0) {
      i_pid = n;
      pfd[n++] = (struct pollfd){.fd = c->pidfd, .events = POLLIN};
    }
    if (reason == STOP_NONE) {
      i_ctx = n;
      for (int k = 0; k < n_ctx; k++)
        pfd[n++] = (struct pollfd){.fd = ctx_fds[k], .events = POLLIN};
    }

    int64_t now = eb_now_ns();
    int timeout_ms = -1;
    if (exited) {
      if ((c->stdout_fd < 0 && c->stderr_fd < 0 && (by_report || c->report_fd < 0)) ||
          now >= drain_until)
        break;
      timeout_ms = (int)((drain_until - now + 999999) / 1000000);
    } else if (reason != STOP_NONE) {
      timeout_ms = KILL_WAIT_STEP_MS;
    } else if (deadline != INT64_MAX) {
      if (now >= deadline) {
        STOP(STOP_TIMEOUT);
        continue;
      }
      int64_t left = (deadline - now + 999999) / 1000000;
      timeout_ms = left > 60000 ? 60000 : (int)left;
    }
    if (c->pidfd < 0 && !exited && (timeout_ms < 0 || timeout_ms > 10))
      timeout_ms = 10; /* no pidfd: look for the exit periodically */

    int pr = poll(pfd, (nfds_t)n, timeout_ms);
    if (pr == 0 && reason != STOP_NONE && !exited)
      c->kill_tree(c->kill_arg); /* still there: a kill may have raced its start */
    if (pr < 0) {
      if (errno == EINTR)
        continue;
      ret = eb_error_set(err, errno, "poll on sandbox child");
      STOP(STOP_CANCELLED);
      break;
    }

    if (i_ctx >= 0) {
      for (int k = 0; k < n_ctx; k++)
        if (pfd[i_ctx + k].revents & POLLIN)
          STOP(STOP_CANCELLED);
    }
    if (reason == STOP_NONE && eb_now_ns() >= deadline)
      STOP(STOP_TIMEOUT);

    if (i_rep >= 0 && (pfd[i_rep].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t r = eb_read_retry(c->report_fd, (char *)&pending + report_off,
                                sizeof(pending) - report_off);
      if (r > 0) {
        report_off += (size_t)r;
        if (report_off == sizeof(pending)) {
          eb_child_report *dst = pending.kind == EB_REPORT_EXIT_STATUS ? o->exit_report : o->report;
          if (dst != NULL && dst->kind == EB_REPORT_NONE)
            *dst = pending;
          report_off = 0;
          if (pending.kind == EB_REPORT_EXIT_STATUS && c->exit_report_completes && !exited &&
              reason == STOP_NONE) {
            /* Everything in the sandbox is dead and reaped; only the
             * init's exit remains. Drain the output and finish. */
            exited = by_report = true;
            exit_report = pending;
            drain_until = eb_now_ns() + DRAIN_GRACE_NS;
            close_fd(&c->stdin_fd);
            close_fd(&c->report_fd);
          }
        }
      } else {
        close_fd(&c->report_fd); /* EOF: the final execve happened, or the child died */
      }
    }

    int streams[2] = {i_out, i_err};
    for (int s = 0; s < 2; s++) {
      int idx = streams[s];
      if (idx < 0 || !(pfd[idx].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      int *fdp = s == 0 ? &c->stdout_fd : &c->stderr_fd;
      ssize_t r = eb_read_retry(*fdp, buf, sizeof(buf));
      if (r > 0) {
        int cr = eb_capture_append(o->capture, s == 0 ? EB_STREAM_STDOUT : EB_STREAM_STDERR, buf,
                                   (size_t)r);
        if (cr < 0) {
          ret = eb_error_set(err, ENOMEM, "capture program output");
          STOP(STOP_CANCELLED);
        } else if (cr > 0) {
          STOP(STOP_OUTPUT);
        }
      } else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        close_fd(fdp);
      }
    }

    if (i_in >= 0 && (pfd[i_in].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = write_nosigpipe(c->stdin_fd, o->stdin_data + stdin_off, o->stdin_len - stdin_off);
      if (w > 0)
        stdin_off += (size_t)w;
      if ((w < 0 && errno != EAGAIN) || stdin_off >= o->stdin_len)
        close_fd(&c->stdin_fd); /* EOF for the program, or it stopped reading */
    }

    bool pid_ready = i_pid >= 0 && (pfd[i_pid].revents & POLLIN);
    if (!exited && (pid_ready || c->pidfd < 0 || reason != STOP_NONE) && child_has_exited(c)) {
      exited = true;
      /* End whatever the program left behind (`sleep 1000 &`), while the
       * zombie still pins the process group id. */
      c->kill_tree(c->kill_arg);
      drain_until = eb_now_ns() + DRAIN_GRACE_NS;
      close_fd(&c->stdin_fd);
    }
  }
#undef STOP

  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof(ru));
  pid_t w = c->pid;
  if (by_report) {
    status = exit_report.err;
    ru.ru_utime.tv_sec = (time_t)(exit_report.cpu_us / 1000000);
    ru.ru_utime.tv_usec = (suseconds_t)(exit_report.cpu_us % 1000000);
    ru.ru_maxrss = (long)exit_report.max_rss_kb;
  } else {
    do
      w = wait4(c->pid, &status, 0, &ru);
    while (w < 0 && errno == EINTR);
    c->reaped = w == c->pid;
  }
  close_fd(&c->stdin_fd);
  close_fd(&c->stdout_fd);
  close_fd(&c->stderr_fd);
  close_fd(&c->report_fd);
  if (c->reaped)
    close_fd(&c->pidfd);
  if (w < 0 && ret == 0)
    ret = eb_error_set(err, errno, "reap sandbox child %d", (int)c->pid);

  res->cpu_ms = (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
                (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
  res->max_rss_kb = ru.ru_maxrss;
  res->signal = 0;
  if (WIFEXITED(status)) {
    res->exit_code = WEXITSTATUS(status);
    res->status = res->exit_code == 0 ? EB_STATUS_OK : EB_STATUS_NONZERO_EXIT;
  } else if (WIFSIGNALED(status)) {
    res->signal = WTERMSIG(status);
    res->exit_code = 128 + res->signal;
    res->status = EB_STATUS_KILLED;
  }
  switch (reason) {
  case STOP_TIMEOUT: res->status = EB_STATUS_TIMEOUT; break;
  case STOP_CANCELLED: res->status = EB_STATUS_CANCELLED; break;
  case STOP_OUTPUT: res->status = EB_STATUS_OUTPUT_LIMIT; break;
  case STOP_NONE: break;
  }
  /* A deadline that belongs to the caller's context reads as a timeout too. */
  if (reason == STOP_CANCELLED && eb_ctx_state_now(ctx) == EB_CTX_DEADLINE)
    res->status = EB_STATUS_TIMEOUT;
  return ret;
}
