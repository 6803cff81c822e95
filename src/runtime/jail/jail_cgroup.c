/* cgroup limits for the jail: v2 first (a child group per execution under
 * a parent execbox may write: as root under the root group, as a user under
 * the subtree systemd delegates to user@UID.service), v1 as the fallback
 * (memory, pids and cpu hierarchies, writable by root only). Where neither
 * is possible the jail falls back to rlimits and says so. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "core/util.h"
#include "runtime/jail/jail.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define CGROUP_ROOT "/sys/fs/cgroup"
/* Stale groups of crashed execbox processes older than this are removed. */
#define STALE_GROUP_SECONDS 10

static const char *const v1_controllers[3] = {"memory", "pids", "cpu"};

static int write_file(const char *dir, const char *file, const char *value) {
  char path[4096];
  if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return -1;
  ssize_t w = eb_write_all(fd, value, strlen(value));
  int saved = errno;
  close(fd);
  errno = saved;
  return w < 0 ? -1 : 0;
}

static int read_file(const char *dir, const char *file, char *buf, size_t size) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t r = eb_read_retry(fd, buf, size - 1);
  close(fd);
  if (r < 0)
    return -1;
  buf[r] = '\0';
  return 0;
}

static bool file_exists(const char *dir, const char *file) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  return access(path, F_OK) == 0;
}

/* Removes empty groups left by execbox processes that were killed before
 * they could clean up: groups named after a pid that no longer exists. rmdir
 * fails on a group that still has processes, and the age check spares a
 * group another execbox (perhaps in another pid namespace) has just created
 * and not yet entered. */
static void remove_stale_groups(const char *parent) {
  DIR *d = opendir(parent);
  if (d == NULL)
    return;
  time_t now = time(NULL);
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (strncmp(de->d_name, "run-", 4) != 0)
      continue;
    pid_t owner = (pid_t)atoi(de->d_name + 4);
    if (owner <= 0 || kill(owner, 0) == 0 || errno != ESRCH)
      continue;
    struct stat st;
    if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
        now - st.st_mtime > STALE_GROUP_SECONDS)
      unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
  }
  closedir(d);
}

static bool controllers_present(const char *dir, const char *needed) {
  char buf[512];
  if (read_file(dir, "cgroup.controllers", buf, sizeof(buf)) < 0)
    return false;
  char copy[128];
  snprintf(copy, sizeof(copy), "%s", needed);
  for (char *save = NULL, *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    const char *p = buf;
    bool found = false;
    size_t len = strlen(tok);
    while ((p = strstr(p, tok)) != NULL) {
      if ((p == buf || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\n' || p[len] == '\0')) {
        found = true;
        break;
      }
      p += len;
    }
    if (!found)
      return false;
  }
  return true;
}

/* v2: picks the parent group and enables memory, pids and cpu below it. */
static char *detect_v2(char **why) {
  const char *override = getenv("EXECBOX_CGROUP_PARENT");
  char *base = NULL;
  if (override != NULL && override[0] == '/') {
    base = strdup(override);
  } else if (geteuid() == 0) {
    base = strdup(CGROUP_ROOT);
  } else {
    /* A user's delegated subtree: the user@UID.service group containing us. */
    char self[4096];
    if (read_file("/proc/self", "cgroup", self, sizeof(self)) < 0 || strncmp(self, "0::", 3) != 0) {
      *why = strdup("cannot read /proc/self/cgroup");
      return NULL;
    }
    char *nl = strchr(self, '\n');
    if (nl)
      *nl = '\0';
    char marker[64];
    snprintf(marker, sizeof(marker), "/user@%u.service", (unsigned)geteuid());
    char *m = strstr(self + 3, marker);
    if (m == NULL) {
      *why = strdup("cgroup v2 without a delegated user@UID.service subtree (run under a "
                    "systemd user session or as root, or set EXECBOX_CGROUP_PARENT)");
      return NULL;
    }
    m[strlen(marker)] = '\0';
    if (asprintf(&base, "%s%s", CGROUP_ROOT, self + 3) < 0)
      base = NULL;
  }
  if (base == NULL) {
    *why = strdup("out of memory");
    return NULL;
  }
  if (!controllers_present(base, "memory pids")) {
    if (asprintf(why, "cgroup v2 at %s lacks the memory and pids controllers", base) < 0)
      *why = NULL;
    free(base);
    return NULL;
  }
  /* Enable the controllers for base's children; cpu is optional. */
  if (write_file(base, "cgroup.subtree_control", "+memory +pids") < 0 && errno != EBUSY) {
    if (asprintf(why, "cannot enable controllers in %s: %s", base, strerror(errno)) < 0)
      *why = NULL;
    free(base);
    return NULL;
  }
  write_file(base, "cgroup.subtree_control", "+cpu");
  char *parent = NULL;
  if (asprintf(&parent, "%s/execbox", base) < 0)
    parent = NULL;
  free(base);
  if (parent == NULL)
    return NULL;
  if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
    if (asprintf(why, "cannot create %s: %s", parent, strerror(errno)) < 0)
      *why = NULL;
    free(parent);
    return NULL;
  }
  if (write_file(parent, "cgroup.subtree_control", "+memory +pids") < 0) {
    if (asprintf(why, "cannot enable controllers in %s: %s", parent, strerror(errno)) < 0)
      *why = NULL;
    free(parent);
    return NULL;
  }
  write_file(parent, "cgroup.subtree_control", "+cpu"); /* optional: see env->cpu */
  remove_stale_groups(parent);
  return parent;
}

/* Does the host have swap at all? (Then a memory limit must bound it too.) */
static bool host_has_swap(void) {
  char buf[4096];
  if (read_file("/proc", "meminfo", buf, sizeof(buf)) < 0)
    return true; /* unknown: assume the worse */
  const char *p = strstr(buf, "SwapTotal:");
  return p == NULL || strtoll(p + 10, NULL, 10) > 0;
}

void jail_cgroup_detect(jail_cgroup_env *env) {
  memset(env, 0, sizeof(*env));
  const char *disable = getenv("EXECBOX_JAIL_CGROUPS");
  if (disable != NULL && strcmp(disable, "off") == 0) {
    env->why_not = strdup("cgroups turned off by EXECBOX_JAIL_CGROUPS=off");
    return;
  }
  struct statfs sf;
  if (statfs(CGROUP_ROOT, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC) {
    env->parent_v2 = detect_v2(&env->why_not);
    if (env->parent_v2 != NULL) {
      env->mode = JAIL_CGROUP_V2;
      char buf[256];
      env->cpu = read_file(env->parent_v2, "cgroup.subtree_control", buf, sizeof(buf)) == 0 &&
                 strstr(buf, "cpu") != NULL;
      env->swap_unbounded = host_has_swap() && !file_exists(env->parent_v2, "memory.swap.max");
    }
    return;
  }
  /* v1: one hierarchy per controller. */
  for (int i = 0; i < 3; i++) {
    char base[256];
    snprintf(base, sizeof(base), CGROUP_ROOT "/%s", v1_controllers[i]);
    if (access(base, W_OK) < 0) {
      if (asprintf(&env->why_not, "cgroup v1 %s hierarchy is not writable (%s)%s", v1_controllers[i],
                   strerror(errno), geteuid() != 0 ? "; v1 is delegated to root only" : "") < 0)
        env->why_not = NULL;
      jail_cgroup_env_free(env);
      return;
    }
    if (asprintf(&env->parent_v1[i], "%s/execbox", base) < 0) {
      jail_cgroup_env_free(env);
      return;
    }
    if (mkdir(env->parent_v1[i], 0755) < 0 && errno != EEXIST) {
      if (asprintf(&env->why_not, "cannot create %s: %s", env->parent_v1[i], strerror(errno)) < 0)
        env->why_not = NULL;
      jail_cgroup_env_free(env);
      return;
    }
    remove_stale_groups(env->parent_v1[i]);
  }
  env->memsw = file_exists(env->parent_v1[0], "memory.memsw.limit_in_bytes");
  env->cpu = true; /* the cpu hierarchy is required above */
  env->swap_unbounded = host_has_swap() && !env->memsw;
  env->mode = JAIL_CGROUP_V1;
}

void jail_cgroup_env_free(jail_cgroup_env *env) {
  free(env->parent_v2);
  for (int i = 0; i < 3; i++)
    free(env->parent_v1[i]);
  char *why = env->why_not;
  memset(env, 0, sizeof(*env));
  env->why_not = why;
}

static atomic_uint group_counter;

int jail_cgroup_name(const jail_cgroup_env *env, jail_cgroup *cg, eb_error **err) {
  memset(cg, 0, sizeof(*cg));
  cg->mode = env->mode;
  char name[64];
  snprintf(name, sizeof(name), "run-%d-%u", (int)getpid(), atomic_fetch_add(&group_counter, 1));
  if (env->mode == JAIL_CGROUP_V2 && asprintf(&cg->path_v2, "%s/%s", env->parent_v2, name) < 0) {
    cg->path_v2 = NULL;
    return eb_error_set(err, ENOMEM, "cgroup path");
  }
  if (env->mode == JAIL_CGROUP_V1) {
    for (int i = 0; i < 3; i++) {
      if (asprintf(&cg->path_v1[i], "%s/%s", env->parent_v1[i], name) < 0 ||
          asprintf(&cg->tasks_v1[i], "%s/%s/tasks", env->parent_v1[i], name) < 0) {
        cg->tasks_v1[i] = NULL;
        return eb_error_set(err, ENOMEM, "cgroup path");
      }
    }
  }
  return 0;
}

int jail_cgroup_make(const jail_cgroup_env *env, jail_cgroup *cg, eb_error **err) {
  cg->memory = cg->pids = cg->cpu_milli = -1; /* unknown: the first configure writes all */
  cg->dir_fd = cg->tasks_fd[0] = cg->tasks_fd[1] = cg->tasks_fd[2] = -1;
  if (env->mode == JAIL_CGROUP_V2) {
    if (mkdir(cg->path_v2, 0755) < 0)
      return eb_error_set(err, errno, "create cgroup `%s`", cg->path_v2);
    /* No swap: the limit is the limit. */
    if (write_file(cg->path_v2, "memory.swap.max", "0") < 0 && errno != ENOENT)
      return eb_error_set(err, errno, "set memory.swap.max");
    return 0;
  }
  if (env->mode == JAIL_CGROUP_V1) {
    for (int i = 0; i < 3; i++)
      if (mkdir(cg->path_v1[i], 0755) < 0)
        return eb_error_set(err, errno, "create cgroup `%s`", cg->path_v1[i]);
    write_file(cg->path_v1[0], "memory.swappiness", "0");
    if (write_file(cg->path_v1[2], "cpu.cfs_period_us", "100000") < 0)
      return eb_error_set(err, errno, "set cpu.cfs_period_us");
    return 0;
  }
  return eb_error_set(err, EB_ERR_LIMIT_UNSUPPORTED, "no cgroups available");
}

int jail_cgroup_configure(const jail_cgroup_env *env, const eb_limits *l, jail_cgroup *cg,
                          eb_error **err) {
  char val[64];
  const char *dir_mem = cg->mode == JAIL_CGROUP_V2 ? cg->path_v2 : cg->path_v1[0];
  const char *dir_pids = cg->mode == JAIL_CGROUP_V2 ? cg->path_v2 : cg->path_v1[1];
  const char *dir_cpu = cg->mode == JAIL_CGROUP_V2 ? cg->path_v2 : cg->path_v1[2];
  if (cg->memory != l->memory_bytes) {
    snprintf(val, sizeof(val), "%lld", (long long)l->memory_bytes);
    if (cg->mode == JAIL_CGROUP_V2) {
      if (write_file(dir_mem, "memory.max", val) < 0)
        return eb_error_set(err, errno, "set memory.max");
    } else {
      /* v1 keeps memory <= memory+swap at every step: raise memsw first,
       * lower it last. */
      bool raising = cg->memory >= 0 && l->memory_bytes > cg->memory;
      if (env->memsw && raising && write_file(dir_mem, "memory.memsw.limit_in_bytes", val) < 0)
        return eb_error_set(err, errno, "set memory.memsw.limit_in_bytes");
      if (write_file(dir_mem, "memory.limit_in_bytes", val) < 0)
        return eb_error_set(err, errno, "set memory.limit_in_bytes");
      if (env->memsw && !raising && write_file(dir_mem, "memory.memsw.limit_in_bytes", val) < 0)
        return eb_error_set(err, errno, "set memory.memsw.limit_in_bytes");
    }
    cg->memory = l->memory_bytes;
  }
  if (cg->pids != l->pids) {
    snprintf(val, sizeof(val), "%lld", (long long)l->pids);
    if (write_file(dir_pids, "pids.max", val) < 0)
      return eb_error_set(err, errno, "set pids.max");
    cg->pids = l->pids;
  }
  int64_t cpu_milli = env->cpu ? l->cpu_milli : 0; /* explicit requests were refused earlier */
  if (cg->cpu_milli != cpu_milli) {
    if (cg->mode == JAIL_CGROUP_V2) {
      if (cpu_milli > 0)
        snprintf(val, sizeof(val), "%lld 100000", (long long)cpu_milli * 100);
      else
        snprintf(val, sizeof(val), "max 100000");
      if (write_file(dir_cpu, "cpu.max", val) < 0)
        return eb_error_set(err, errno, "set cpu.max (is the cpu controller delegated?)");
    } else {
      snprintf(val, sizeof(val), "%lld", cpu_milli > 0 ? (long long)cpu_milli * 100 : -1LL);
      if (write_file(dir_cpu, "cpu.cfs_quota_us", val) < 0)
        return eb_error_set(err, errno, "set cpu.cfs_quota_us");
    }
    cg->cpu_milli = cpu_milli;
  }
  return 0;
}

int jail_cgroup_add(const jail_cgroup *cg, pid_t pid, eb_error **err) {
  char val[32];
  snprintf(val, sizeof(val), "%d", (int)pid);
  if (cg->mode == JAIL_CGROUP_V2) {
    if (write_file(cg->path_v2, "cgroup.procs", val) < 0)
      return eb_error_set(err, errno, "move sandbox into cgroup `%s`", cg->path_v2);
  } else if (cg->mode == JAIL_CGROUP_V1) {
    for (int i = 0; i < 3; i++)
      if (write_file(cg->path_v1[i], "cgroup.procs", val) < 0)
        return eb_error_set(err, errno, "move sandbox into cgroup `%s`", cg->path_v1[i]);
  }
  return 0;
}

int jail_cgroup_open_v2(jail_cgroup *cg, int *fd, eb_error **err) {
  if (cg->dir_fd < 0) {
    cg->dir_fd = open(cg->path_v2, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cg->dir_fd < 0)
      return eb_error_set(err, errno, "open cgroup `%s`", cg->path_v2);
  }
  *fd = cg->dir_fd;
  return 0;
}

int jail_cgroup_open_tasks_v1(jail_cgroup *cg, int fds[3], eb_error **err) {
  for (int i = 0; i < 3; i++) {
    if (cg->tasks_fd[i] < 0) {
      cg->tasks_fd[i] = open(cg->tasks_v1[i], O_WRONLY | O_CLOEXEC);
      if (cg->tasks_fd[i] < 0)
        return eb_error_set(err, errno, "open `%s`", cg->tasks_v1[i]);
    }
    fds[i] = cg->tasks_fd[i];
  }
  return 0;
}

static int kill_listed(const char *dir) {
  char buf[65536];
  if (read_file(dir, "cgroup.procs", buf, sizeof(buf)) < 0)
    return 0;
  int n = 0;
  for (char *p = buf; *p;) {
    char *end;
    long pid = strtol(p, &end, 10);
    if (end == p)
      break;
    if (pid > 0) {
      kill((pid_t)pid, SIGKILL);
      n++;
    }
    p = end;
    while (*p == '\n')
      p++;
  }
  return n;
}

static long long read_key(const char *dir, const char *file, const char *key) {
  char buf[4096];
  if (read_file(dir, file, buf, sizeof(buf)) < 0)
    return -1;
  size_t len = strlen(key);
  for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
    if (strncmp(line, key, len) == 0 && line[len] == ' ')
      return atoll(line + len + 1);
  return -1;
}

long long jail_cgroup_oom_count(const jail_cgroup *cg) {
  long long n = -1;
  if (cg->mode == JAIL_CGROUP_V2)
    n = read_key(cg->path_v2, "memory.events", "oom_kill");
  else if (cg->mode == JAIL_CGROUP_V1)
    n = read_key(cg->path_v1[0], "memory.oom_control", "oom_kill");
  return n < 0 ? 0 : n;
}

int64_t jail_cgroup_cpu_usage_us(const jail_cgroup *cg) {
  char buf[64];
  if (cg->mode == JAIL_CGROUP_V2) {
    long long usec = read_key(cg->path_v2, "cpu.stat", "usage_usec");
    return usec >= 0 ? usec : -1;
  }
  if (cg->mode == JAIL_CGROUP_V1 && cg->path_v1[2] != NULL &&
      read_file(cg->path_v1[2], "cpuacct.usage", buf, sizeof(buf)) == 0)
    return atoll(buf) / 1000; /* ns */
  return -1;
}

static int remove_group(const char *dir, eb_error **err) {
  /* Normally empty already (the pid namespace died with its init). If not,
   * kill what is there and retry while it empties. */
  for (int attempt = 0; attempt < 200; attempt++) {
    if (rmdir(dir) == 0 || errno == ENOENT)
      return 0;
    if (errno != EBUSY)
      break;
    if (attempt == 0 && write_file(dir, "cgroup.kill", "1") == 0)
      continue;
    kill_listed(dir);
    struct timespec ts = {0, 5 * 1000000};
    nanosleep(&ts, NULL);
  }
  return eb_error_set(err, errno, "remove cgroup `%s`", dir);
}

int jail_cgroup_destroy(jail_cgroup *cg, eb_error **err) {
  int ret = 0;
  int fds[4] = {cg->dir_fd, cg->tasks_fd[0], cg->tasks_fd[1], cg->tasks_fd[2]};
  for (int i = 0; i < 4; i++)
    if (fds[i] > 0)
      close(fds[i]);
  if (cg->path_v2 != NULL && remove_group(cg->path_v2, err) < 0)
    ret = -1;
  for (int i = 0; i < 3; i++)
    if (cg->path_v1[i] != NULL && remove_group(cg->path_v1[i], err) < 0)
      ret = -1;
  free(cg->path_v2);
  for (int i = 0; i < 3; i++) {
    free(cg->path_v1[i]);
    free(cg->tasks_v1[i]);
  }
  memset(cg, 0, sizeof(*cg));
  return ret;
}
