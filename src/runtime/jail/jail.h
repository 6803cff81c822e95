/* The jail runtime's internal pieces. */
#ifndef EB_RUNTIME_JAIL_H
#define EB_RUNTIME_JAIL_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <execbox/error.h>
#include <execbox/runtime.h>

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
/* Kills what is left, closes its fds, removes the group. */
int jail_cgroup_destroy(jail_cgroup *cg, eb_error **err);

#endif
