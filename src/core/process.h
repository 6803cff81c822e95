/* Process helpers shared by the runtimes: reporting a failure from a forked
 * child before execve, and supervising a running child (pipes, deadline,
 * cancellation, output cap, reaping). */
#ifndef EB_CORE_PROCESS_H
#define EB_CORE_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <execbox/context.h>
#include <execbox/error.h>
#include <execbox/runtime.h>

#include "core/capture.h"

/* A failure report written by a child to its close-on-exec error pipe. */
typedef enum eb_report_kind {
  EB_REPORT_NONE = 0,
  EB_REPORT_SETUP_FAILED = 1,   /* the sandbox could not be built; err is errno */
  EB_REPORT_COMPILE_FAILED = 2, /* a compile step failed; err is its exit code (128+signal) */
  EB_REPORT_EXIT_STATUS = 3,    /* from a sandbox init: err is the program's raw wait status */
} eb_report_kind;

typedef struct eb_child_report {
  int kind;           /* eb_report_kind */
  int err;
  int64_t cpu_us;     /* EXIT_STATUS: CPU time of everything the init reaped */
  int64_t max_rss_kb; /* EXIT_STATUS: largest peak RSS among them */
  char msg[104];      /* what it was doing */
} eb_child_report;

/* One program to run inside the child: path to execve and its argv. */
typedef struct eb_step {
  const char *path;
  char *const *argv;
} eb_step;

/* In a forked child, after its sandbox is set up: runs steps[0..n-2] one by
 * one (fork, execve, wait) and execve()s the last one. A failing step reports
 * EB_REPORT_COMPILE_FAILED and exits with its code. Never returns. */
__attribute__((noreturn)) void eb_child_exec_steps(int report_fd, const eb_step *steps, size_t n,
                                                   char *const envp[]);

/* In a forked child: writes errno and msg to fd and _exit()s with 127.
 * Async-signal-safe. */
__attribute__((noreturn)) void eb_child_fail(int fd, int err, const char *msg);

/* Turns a setup-failure report into an error (< 0). */
int eb_child_report_error(const eb_child_report *r, eb_error **err);

/* In a forked child: closes every fd except those in keep (any order;
 * negative entries ignored; at most 16), then moves any kept fd that sits in
 * 0-2 above 2 (updating keep) so that stdio can be dup2'ed over them. Other
 * threads of the parent may have had pipes of their own executions open at
 * fork time: a child holding them would keep those executions from seeing
 * EOF. Async-signal-safe. */
int eb_child_keep_only_fds(int *keep, size_t n);

/* In a forked child, after eb_child_keep_only_fds(): makes in (or /dev/null
 * when in < 0), out and err the fds 0, 1 and 2, without close-on-exec. */
int eb_child_setup_stdio(int in, int out, int err);

/* In a forked child: default dispositions for every signal and an empty
 * signal mask, since both survive execve. */
void eb_child_reset_signals(void);

/* A running child to supervise. The supervisor owns the fds and closes them. */
typedef struct eb_child {
  pid_t pid;
  int pidfd;     /* -1 if pidfd_open is unavailable */
  int stdin_fd;  /* write end, -1 if none */
  int stdout_fd; /* read ends */
  int stderr_fd;
  int report_fd; /* read end of the child's close-on-exec report pipe, or -1 */
  /* Kills everything the execution started. Called on timeout, cancellation
   * and the output cap, and once more when pid has exited (before it is
   * reaped, so its pid cannot be reused meanwhile) to end leftovers. */
  void (*kill_tree)(void *arg);
  void *kill_arg;
  /* Set by a sandbox init that reports the program's end itself (after
   * killing and reaping everything else in the sandbox): the result is
   * complete at that report, and the init's own exit (namespace teardown)
   * is left to the caller to reap later. */
  bool exit_report_completes;
  bool reaped; /* out: false when the caller must still reap pid */
} eb_child;

/* Closes the parent's ends of a child's pipes (and its pidfd) when the
 * child could not be started or set up: no supervision will own them. */
void eb_child_close_fds(eb_child *child);

typedef struct eb_supervise_opts {
  const char *stdin_data;
  size_t stdin_len;
  int64_t wall_ms;     /* <= 0: none besides the context's */
  eb_capture *capture; /* receives the output */
  eb_child_report *report;      /* receives a setup/compile report, kind NONE if none */
  eb_child_report *exit_report; /* receives an EB_REPORT_EXIT_STATUS report, kind NONE if none */
} eb_supervise_opts;

/* Runs the loop until the child has exited and been reaped. Fills
 * res->exit_code, signal, status (ok, nonzero_exit, killed, timeout,
 * cancelled, output_limit), cpu_ms and max_rss_kb. Returns < 0 only when
 * supervision itself failed (the child is killed and reaped then too). */
int eb_supervise(eb_ctx *ctx, eb_child *child, const eb_supervise_opts *opts,
                 eb_exec_result *res, eb_error **err);

/* Sets fd non-blocking. */
int eb_set_nonblock(int fd);

#endif
