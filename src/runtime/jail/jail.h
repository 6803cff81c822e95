/* The jail runtime's internal pieces. */
#ifndef EB_RUNTIME_JAIL_H
#define EB_RUNTIME_JAIL_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <pthread.h>

#include <execbox/error.h>
#include <execbox/runtime.h>

#include "core/process.h"
#include "runtime/plan.h"

/* The uid/gid the program runs as inside the sandbox. */
#define JAIL_INSIDE_ID 1000
/* The host id it maps to when execbox runs as root: an unprivileged one. */
#define JAIL_HOST_ID_AS_ROOT 65534
/* The work dir (cwd and HOME) inside the sandbox. */
#define JAIL_WORKDIR "/sandbox"

/* --- seccomp: compiled once in the parent, loaded in the child --- */
typedef struct jail_seccomp {
  struct sock_filter *filter; /* libseccomp's: the deny list */
  unsigned short len;
  struct sock_filter personality[16]; /* hand-written: personality() allowlist */
  unsigned short personality_len;
} jail_seccomp;

int jail_seccomp_compile(jail_seccomp *out, eb_error **err);
void jail_seccomp_free(jail_seccomp *s);

/* --- cgroups: one group per execution --- */
typedef enum jail_cgroup_mode {
  JAIL_CGROUP_NONE = 0, /* not available: rlimits are the fallback */
  JAIL_CGROUP_V2 = 2,
  JAIL_CGROUP_V1 = 1,
} jail_cgroup_mode;

typedef struct jail_cgroup_env {
  jail_cgroup_mode mode;
  char *parent_v2;         /* v2: the delegated parent dir */
  char *parent_v1[3];      /* v1: memory, pids, cpu parents */
  bool memsw;              /* v1: memory.memsw.* exists (swap can be limited) */
  bool cpu;                /* the cpu controller is available for quotas */
  bool swap_unbounded;     /* the host has swap that the groups cannot limit */
  char *why_not;           /* when NONE: the reason */
} jail_cgroup_env;

/* One execution's group. Groups are reused across executions (creating
 * and removing them is a large part of a cold start), so each remembers the
 * limits it carries, its OOM-kill count, and its open fds. */
typedef struct jail_cgroup {
  jail_cgroup_mode mode;
  char *path_v2;
  char *path_v1[3];
  char *tasks_v1[3];
  int64_t memory, pids, cpu_milli; /* as configured; -1: unknown */
  long long oom_count;             /* OOM kills seen when the group was handed out */
  int dir_fd;                      /* v2: O_PATH fd of the group, or -1 */
  int tasks_fd[3];                 /* v1: `tasks` files open for writing, or -1 */
} jail_cgroup;

/* Finds where execbox may create cgroups on this host. Never fails: mode
 * NONE with why_not set when there is no such place. */
void jail_cgroup_detect(jail_cgroup_env *env);
void jail_cgroup_env_free(jail_cgroup_env *env);

/* Names the group of one execution (paths only, nothing created yet). */
int jail_cgroup_name(const jail_cgroup_env *env, jail_cgroup *cg, eb_error **err);
/* Creates the named group's directories. */
int jail_cgroup_make(const jail_cgroup_env *env, jail_cgroup *cg, eb_error **err);
/* Applies the limits (cpu_milli <= 0: no quota), writing only what differs
 * from what the group carries already. */
int jail_cgroup_configure(const jail_cgroup_env *env, const eb_limits *limits, jail_cgroup *cg,
                          eb_error **err);
/* Moves pid into the group from outside: the slow path, since a migration
 * by pid takes the kernel's global threadgroup lock, which waits for an RCU
 * grace period (milliseconds). */
int jail_cgroup_add(const jail_cgroup *cg, pid_t pid, eb_error **err);
/* v2: an O_PATH fd of the group, for clone3(CLONE_INTO_CGROUP), which
 * places the child at birth at no such cost. */
int jail_cgroup_open_v2(jail_cgroup *cg, int *fd, eb_error **err);
/* v1: opens each hierarchy's `tasks` file for writing. The (single-
 * threaded) child writes "0" to them: moving only the calling thread skips
 * the global lock. */
int jail_cgroup_open_tasks_v1(jail_cgroup *cg, int fds[3], eb_error **err);
/* The fds returned by the two functions above stay owned by the group. */
/* How many times the kernel OOM-killed in the group so far. */
long long jail_cgroup_oom_count(const jail_cgroup *cg);
/* CPU time used in the group so far (v2 cpu.stat, v1 cpuacct.usage), in
 * microseconds; -1 when the host does not account it. */
int64_t jail_cgroup_cpu_usage_us(const jail_cgroup *cg);
/* Kills what is left, closes its fds, removes the group. */
int jail_cgroup_destroy(jail_cgroup *cg, eb_error **err);

/* --- one execution, as the init receives it --- */

/* The rlimits of the program (see setup_rlimits); data and nproc are < 0
 * when cgroups bound memory and processes instead. */
typedef struct jail_rlimits {
  long long cpu_s, fsize, nofile, data, nproc;
} jail_rlimits;

/* What the init needs to run one execution: in the cold path it points
 * into the parent's plan (the child's copy of it); in a pooled sandbox into
 * the job file the parent sent (jail_job_unpack). */
typedef struct jail_job {
  const eb_step *steps;
  size_t n_steps;
  char *const *envp;
  const char *file_name;
  const char *code;
  size_t code_len;
  jail_rlimits rl;
  /* Python fast path: the message for the waiting interpreter (argc, the
   * cold argv, then the environment, all NUL-terminated), or NULL. */
  const char *zmsg;
  size_t zmsg_len;
} jail_job;

void jail_rlimits_for(const eb_plan *plan, const eb_exec_request *req, bool cgroup_limits,
                      jail_rlimits *rl);
/* Parent: writes the job into a new sealed memfd (*fd, close-on-exec).
 * With fast, includes the message for a waiting Python interpreter. */
int jail_job_pack(const eb_plan *plan, const eb_exec_request *req, const jail_rlimits *rl,
                  bool fast, int *fd, eb_error **err);
/* Init: maps the job file privately and points job into it. No malloc
 * (this runs in a raw clone of a multithreaded process). -1 with errno. */
int jail_job_unpack(int fd, jail_job *job);
/* The message for the Python fast path, built from the plan; NULL when
 * the request cannot take it (see jail_python_fast_ok). */
char *jail_python_message(const eb_plan *plan, size_t *len);
/* Whether a request may run in a waiting interpreter with the same
 * semantics as a cold `python3 -u main.py`. */
bool jail_python_fast_ok(const eb_plan *plan, const eb_exec_request *req);

/* --- the runtime --- */

typedef struct jail_bind {
  char *src, *dst;
} jail_bind;

/* An init whose program has finished but which may still be tearing its
 * namespaces down: reaped (and its cgroup removed) later, off the caller's
 * critical path. */
typedef struct jail_pending {
  pid_t pid;
  int pidfd;
  jail_cgroup cgroup;
} jail_pending;

/* How many empty cgroups a runtime keeps for reuse. */
#define JAIL_IDLE_GROUPS 8

struct jail_pool;

typedef struct jail_runtime {
  /* Where this process keeps its argv and environment strings: the init,
   * a copy of this process, wipes them so that /proc/1/cmdline inside the
   * sandbox shows nothing of the host's command line (API keys, code). */
  uintptr_t arg_start, arg_end, env_start, env_end;
  pthread_mutex_t lock; /* guards pending and idle */
  jail_pending *pending;
  size_t n_pending, cap_pending;
  jail_cgroup idle[JAIL_IDLE_GROUPS];
  size_t n_idle;
  /* Reaps finished inits in the background, so that a runtime left idle
   * keeps no zombie and its groups return to the pool. Started on first use. */
  pthread_t reaper;
  bool reaper_started, reaper_stop;
  pthread_cond_t reaper_wake;
  jail_seccomp seccomp;
  jail_cgroup_env cgroups;
  int last_cap;
  jail_bind *binds; /* extra read-only binds (EXECBOX_JAIL_BINDS) */
  size_t n_binds;
  struct jail_pool *pool; /* warm sandboxes (jail_pool.c), NULL when off */
} jail_runtime;

/* A started jail init: cold (already running its job) or pooled (built,
 * waiting for one on ctl_fd). */
typedef struct jail_sandbox {
  pid_t pid;
  int pidfd;
  int ctl_fd; /* the parent's end of the control socket */
  jail_cgroup cgroup;
  int64_t cpu_base_us; /* pooled: the group's CPU time when it became ready, or -1 */
} jail_sandbox;

typedef struct jail_start_opts {
  const eb_limits *limits; /* defaults applied: cgroup and tmpfs sizes */
  const jail_job *job;     /* cold: the execution; NULL: build and wait */
  int fds[4];              /* cold: stdin (or -1), stdout, stderr, report */
  /* Pooled Python: the interpreter to start ahead, and its environment. */
  const char *python_path;
  char *const *python_envp;
} jail_start_opts;

/* Clones an init into new namespaces and its cgroup. A pooled one reports
 * on ctl_fd: one byte 'R' when ready, or an eb_child_report. */
int jail_sandbox_start(jail_runtime *jr, const jail_start_opts *o, jail_sandbox *sb,
                       eb_error **err);
/* Kills a sandbox; its reaping and its cgroup go to the background. */
void jail_sandbox_discard(jail_runtime *jr, jail_sandbox *sb);
/* After the init reported: reaps it in the background, cgroup included. */
void jail_sandbox_finish(jail_runtime *jr, jail_sandbox *sb, bool reaped);

/* Pooled: hands req to the waiting sandbox sb (fast: to its Python
 * interpreter) and supervises it. Returns 1 when the sandbox turned out
 * dead before anything ran (sb is discarded; try another), 2 when it
 * cannot take this request's limits (discarded; run it cold). */
int jail_run_warm(jail_runtime *jr, eb_ctx *ctx, const eb_exec_request *req, const eb_plan *plan,
                  jail_sandbox *sb, bool fast, eb_exec_result *res, eb_error **err);

int jail_cgroup_checkout(jail_runtime *jr, const eb_limits *limits, jail_cgroup *cg,
                         eb_error **err);
void jail_kill_init(pid_t pid, int pidfd);

/* --- the warm pool (jail_pool.c) --- */

typedef struct jail_pool jail_pool;
int jail_pool_new(jail_runtime *jr, const eb_pool_options *opts, jail_pool **out, eb_error **err);
/* Drains: stops the refill thread, kills every idle sandbox. */
void jail_pool_free(jail_pool *pool);
/* Runs req in a pooled sandbox. Returns 1 when none was usable (the caller
 * runs it cold), else as execute(). */
int jail_pool_execute(jail_pool *pool, eb_ctx *ctx, const eb_exec_request *req, eb_plan *plan,
                      eb_exec_result *res, eb_error **err);
void jail_pool_stats(jail_pool *pool, eb_pool_stats *st);
/* One line on the pool's settings and failing builds, into buf. */
int jail_pool_describe(jail_pool *pool, char *buf, size_t len);

#endif
