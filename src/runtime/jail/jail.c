/* The jail runtime: a daemon-less Linux namespace sandbox, the default.
 *
 * One execution is one clone() into new user, pid, mount, net, ipc and uts
 * namespaces (cgroup follows once the child sits in its own cgroup). The
 * child becomes pid 1 of its pid namespace (the "jail init"): it builds the
 * sandbox in jail_enter(), the single function that lists every step in
 * order, then forks the program and reaps until it exits. Killing the init
 * from the host kills everything in the namespace, so a timeout, a
 * cancellation or the death of execbox itself leaves nothing behind.
 *
 * The parent side compiles the seccomp filter once per runtime, creates the
 * execution's cgroup, writes the uid/gid maps and supervises the pipes. See
 * docs/security.md for the threat model. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "core/util.h"
#include "runtime/jail/jail.h"
#include "runtime/plan.h"
#include "runtime/runtimes.h"

/* Where the new root is assembled before pivot_root: a fresh tmpfs mounted
 * over this path in the child's private mount namespace only. */
#define JAIL_NEWROOT "/tmp"
#define JAIL_ROOT_TMPFS_OPTS "size=1m,nr_inodes=4096,mode=0755"
#define JAIL_STACK_BYTES (8LL << 20)

/* mount_setattr(2): glibc's <sys/mount.h> and <linux/mount.h> clash, so the
 * few definitions needed are repeated here. */
struct jail_mount_attr {
  uint64_t attr_set, attr_clr, propagation, userns_fd;
};
#define JAIL_MOUNT_ATTR_RDONLY 0x1
#define JAIL_MOUNT_ATTR_NOSUID 0x2
#define JAIL_MOUNT_ATTR_NODEV 0x4
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

#define JAIL_P_PIDFD 3 /* waitid's P_PIDFD (Linux 5.4), missing from older headers */

/* Everything the child needs, prepared by the parent: the child only reads
 * it (its copy of the parent's memory) and allocates nothing. */
typedef struct jail_child_args {
  const jail_runtime *jr;
  int64_t tmp_bytes;   /* size of /tmp, /dev/shm and the work dir */
  const jail_job *job; /* NULL: a pooled sandbox, which waits for its job */
  int fds[4];          /* cold: stdin (or -1), stdout, stderr, report */
  /* Our end of a socketpair with the parent: one byte when the id maps are
   * written, then one more with the `tasks` fds of a v1 group attached;
   * hang-up when the parent died. A pooled sandbox then reports on it and
   * receives its job through it. */
  int sync_fd;
  bool allow_setgroups;
  bool cgroup_limits; /* false: rlimits stand in for cgroups */
  /* Pooled, Python fast path: the interpreter to start ahead. */
  const char *python_path;
  char *const *python_envp;
} jail_child_args;

static int jail_send(int sock, const char *data, size_t len, const int *fds, int n);

/* ---------------------------------------------------------------- child */

#define CHILD_TRY(expr, what)                                                                     \
  do {                                                                                            \
    if ((expr) < 0)                                                                               \
      eb_child_fail(rep, errno, what);                                                            \
  } while (0)

static int path_join(char *out, size_t size, const char *a, const char *b) {
  int n = snprintf(out, size, "%s%s", a, b);
  if (n < 0 || (size_t)n >= size) {
    errno = ENAMETOOLONG;
    return -1;
  }
  return 0;
}

/* mkdir -p under the new root; components are created 0755. */
static int make_dirs(const char *path) {
  char buf[4096];
  if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
      return -1;
    *p = '/';
  }
  if (mkdir(buf, 0755) < 0 && errno != EEXIST)
    return -1;
  return 0;
}

static int make_file(const char *path) {
  char dir[4096];
  snprintf(dir, sizeof(dir), "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash != NULL && slash != dir) {
    *slash = '\0';
    if (make_dirs(dir) < 0)
      return -1;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    return -1;
  close(fd);
  return 0;
}

static int write_new_file(const char *path, const char *data, size_t len, mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return -1;
  ssize_t w = eb_write_all(fd, data, len);
  int saved = errno;
  close(fd);
  errno = saved;
  return w < 0 ? -1 : 0;
}

/* Makes a bind mount read-only, nosuid and nodev, recursively where the
 * kernel can (mount_setattr), else the top mount with the flags the kernel
 * locks in a user namespace (noexec, atime) carried over. */
static int make_readonly(const char *path) {
#ifdef __NR_mount_setattr
  struct jail_mount_attr attr = {
      .attr_set = JAIL_MOUNT_ATTR_RDONLY | JAIL_MOUNT_ATTR_NOSUID | JAIL_MOUNT_ATTR_NODEV};
  if (syscall(__NR_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof(attr)) == 0)
    return 0;
  if (errno != ENOSYS)
    return -1;
#endif
  struct statvfs sv;
  if (statvfs(path, &sv) < 0)
    return -1;
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV;
  if (sv.f_flag & ST_NOEXEC)
    flags |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME)
    flags |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME)
    flags |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME)
    flags |= MS_RELATIME;
  return mount(NULL, path, NULL, flags, NULL);
}

/* Read-only binds made so far: made read-only together (jail_seal_root). */
typedef struct jail_binds {
  char target[24][256];
  int n;
} jail_binds;

/* Binds host path src at dst inside the new root (it is made read-only with
 * the rest of the root afterwards). Symlinks on the host (e.g. /bin ->
 * usr/bin on merged-/usr systems) are recreated as symlinks. Missing
 * optional paths are skipped. */
static int bind_ro(jail_binds *binds, const char *src, const char *dst, bool optional) {
  char target[4096];
  if (path_join(target, sizeof(target), JAIL_NEWROOT, dst) < 0)
    return -1;
  struct stat st;
  if (lstat(src, &st) < 0)
    return optional && errno == ENOENT ? 0 : -1;
  if (S_ISLNK(st.st_mode)) {
    char link[4096];
    ssize_t n = readlink(src, link, sizeof(link) - 1);
    if (n < 0)
      return -1;
    link[n] = '\0';
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", target);
    char *slash = strrchr(dir, '/');
    if (slash != NULL) {
      *slash = '\0';
      if (make_dirs(dir) < 0)
        return -1;
    }
    if (symlink(link, target) < 0 && errno != EEXIST)
      return -1;
    return 0;
  }
  if (binds->n >= (int)EB_ARRAY_SIZE(binds->target) || strlen(target) >= sizeof(binds->target[0])) {
    errno = E2BIG;
    return -1;
  }
  if (S_ISDIR(st.st_mode) ? make_dirs(target) : make_file(target))
    return -1;
  if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) < 0)
    return -1;
  memcpy(binds->target[binds->n++], target, strlen(target) + 1); /* length checked above */
  return 0;
}

/* Makes the new root and every bind in it read-only, nosuid and nodev: in
 * one recursive mount_setattr where the kernel has it (5.12+), else one
 * remount per mount. */
static int jail_seal_root(const jail_binds *binds) {
#ifdef __NR_mount_setattr
  struct jail_mount_attr attr = {
      .attr_set = JAIL_MOUNT_ATTR_RDONLY | JAIL_MOUNT_ATTR_NOSUID | JAIL_MOUNT_ATTR_NODEV};
  if (syscall(__NR_mount_setattr, AT_FDCWD, JAIL_NEWROOT, AT_RECURSIVE, &attr, sizeof(attr)) == 0)
    return 0;
  if (errno != ENOSYS)
    return -1;
#endif
  for (int i = 0; i < binds->n; i++)
    if (make_readonly(binds->target[i]) < 0)
      return -1;
  return mount(NULL, JAIL_NEWROOT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
               NULL);
}


/* The system directories: read-only, and nothing else of the host. */
static const char *const system_dirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
/* The few /etc entries programs need. passwd, group and hosts are written
 * fresh for the sandbox user instead. */
static const char *const etc_entries[] = {
    "/etc/ld.so.cache", "/etc/nsswitch.conf", "/etc/localtime", "/etc/ssl", "/etc/alternatives",
};
static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom"};

static const char passwd_text[] =
    "root:x:0:0:root:/root:/usr/sbin/nologin\n"
    "sandbox:x:1000:1000:sandbox:" JAIL_WORKDIR ":/bin/sh\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char group_text[] = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n";
static const char hosts_text[] = "127.0.0.1 localhost sandbox\n::1 localhost ip6-localhost\n";

/* Builds the new root under JAIL_NEWROOT and pivots into it. Runs as the
 * sandbox uid, with full capabilities in the user namespace only. Order
 * matters: everything the read-only root holds (files, mount points) is
 * created first, the read-only binds are placed, the whole tree is sealed
 * read-only at once, and only then are the writable mounts put on top. */
static void setup_root(const jail_child_args *a, int rep) {
  char opts[128], path[4096];
  jail_binds binds;
  binds.n = 0;

  /* Nothing we mount may propagate back to the host. */
  CHILD_TRY(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), "make mounts private");
  CHILD_TRY(mount("tmpfs", JAIL_NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, JAIL_ROOT_TMPFS_OPTS),
            "mount the new root tmpfs");

  /* Files of the root itself: /etc for the sandbox user, mount points. */
  CHILD_TRY(make_dirs(JAIL_NEWROOT "/etc"), "create /etc");
  CHILD_TRY(write_new_file(JAIL_NEWROOT "/etc/passwd", passwd_text, sizeof(passwd_text) - 1, 0644),
            "write /etc/passwd");
  CHILD_TRY(write_new_file(JAIL_NEWROOT "/etc/group", group_text, sizeof(group_text) - 1, 0644),
            "write /etc/group");
  CHILD_TRY(write_new_file(JAIL_NEWROOT "/etc/hosts", hosts_text, sizeof(hosts_text) - 1, 0644),
            "write /etc/hosts");
  CHILD_TRY(write_new_file(JAIL_NEWROOT "/etc/hostname", "sandbox\n", 8, 0644), "write /etc/hostname");
  CHILD_TRY(make_dirs(JAIL_NEWROOT "/proc"), "create /proc");
  CHILD_TRY(make_dirs(JAIL_NEWROOT "/dev/shm"), "create /dev/shm");
  for (size_t i = 0; i < EB_ARRAY_SIZE(dev_nodes); i++) {
    snprintf(path, sizeof(path), JAIL_NEWROOT "/dev/%s", dev_nodes[i]);
    CHILD_TRY(make_file(path), "create a /dev node");
  }
  CHILD_TRY(symlink("/proc/self/fd", JAIL_NEWROOT "/dev/fd"), "link /dev/fd");
  CHILD_TRY(symlink("/proc/self/fd/0", JAIL_NEWROOT "/dev/stdin"), "link /dev/stdin");
  CHILD_TRY(symlink("/proc/self/fd/1", JAIL_NEWROOT "/dev/stdout"), "link /dev/stdout");
  CHILD_TRY(symlink("/proc/self/fd/2", JAIL_NEWROOT "/dev/stderr"), "link /dev/stderr");
  CHILD_TRY(make_dirs(JAIL_NEWROOT "/tmp"), "create /tmp");
  CHILD_TRY(make_dirs(JAIL_NEWROOT JAIL_WORKDIR), "create the work dir");

  /* The host's system dirs and the few /etc entries programs need, and
   * the configured extra binds; nothing else of the host. */
  for (size_t i = 0; i < EB_ARRAY_SIZE(system_dirs); i++)
    CHILD_TRY(bind_ro(&binds, system_dirs[i], system_dirs[i], true), "bind a system dir");
  for (size_t i = 0; i < EB_ARRAY_SIZE(etc_entries); i++)
    CHILD_TRY(bind_ro(&binds, etc_entries[i], etc_entries[i], true), "bind an /etc entry");
  for (size_t i = 0; i < a->jr->n_binds; i++)
    CHILD_TRY(bind_ro(&binds, a->jr->binds[i].src, a->jr->binds[i].dst, false),
              "bind an extra dir (EXECBOX_JAIL_BINDS)");

  /* Seal: the root and all of the above read-only, nosuid, nodev. */
  CHILD_TRY(jail_seal_root(&binds), "make the new root read-only");

  /* A new /proc for the new pid namespace; /proc/sys read-only on top. */
  CHILD_TRY(mount("proc", JAIL_NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL),
            "mount /proc");
  CHILD_TRY(mount(JAIL_NEWROOT "/proc/sys", JAIL_NEWROOT "/proc/sys", NULL, MS_BIND | MS_REC, NULL),
            "bind /proc/sys");
  CHILD_TRY(make_readonly(JAIL_NEWROOT "/proc/sys"), "make /proc/sys read-only");

  /* A minimal /dev: a few host device nodes and a size-limited /dev/shm. */
  for (size_t i = 0; i < EB_ARRAY_SIZE(dev_nodes); i++) {
    char src[64];
    snprintf(src, sizeof(src), "/dev/%s", dev_nodes[i]);
    snprintf(path, sizeof(path), JAIL_NEWROOT "/dev/%s", dev_nodes[i]);
    CHILD_TRY(mount(src, path, NULL, MS_BIND, NULL), "bind a /dev node");
  }
  snprintf(opts, sizeof(opts), "size=%lld,mode=1777", (long long)a->tmp_bytes);
  CHILD_TRY(mount("tmpfs", JAIL_NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts),
            "mount /dev/shm");

  /* Scratch space: size-limited, gone with the sandbox. */
  CHILD_TRY(mount("tmpfs", JAIL_NEWROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts), "mount /tmp");
  snprintf(opts, sizeof(opts), "size=%lld,mode=0755,uid=%d,gid=%d", (long long)a->tmp_bytes,
           JAIL_INSIDE_ID, JAIL_INSIDE_ID);
  CHILD_TRY(mount("tmpfs", JAIL_NEWROOT JAIL_WORKDIR, "tmpfs", MS_NOSUID | MS_NODEV, opts),
            "mount the work dir");

  /* pivot_root, not chroot: the old root is detached, not just hidden. */
  CHILD_TRY(chdir(JAIL_NEWROOT), "chdir to the new root");
  CHILD_TRY(eb_pivot_root(".", "."), "pivot_root");
  CHILD_TRY(umount2(".", MNT_DETACH), "detach the old root");
  CHILD_TRY(chdir("/"), "chdir /");
}

static void bring_loopback_up(int rep) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    eb_child_fail(rep, errno, "socket for loopback");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof(ifr));
  snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
  if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
    eb_child_fail(rep, errno, "read loopback flags");
  ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
    eb_child_fail(rep, errno, "bring loopback up");
  close(s);
}

/* Sets a resource limit of pid (0: ourselves), soft and hard alike. */
static void set_limit(int rep, pid_t pid, int resource, long long value, const char *what) {
  struct rlimit rl = {(rlim_t)value, (rlim_t)value};
  if (prlimit(pid, resource, &rl, NULL) < 0)
    eb_child_fail(rep, errno, what);
}

/* The program's limits. A pooled Python interpreter gets them from the
 * init (pid) once its execution is known, before it receives the job. */
static void setup_rlimits(const jail_rlimits *rl, pid_t pid, int rep) {
  set_limit(rep, pid, RLIMIT_CORE, 0, "setrlimit core");
  set_limit(rep, pid, RLIMIT_CPU, rl->cpu_s, "setrlimit cpu");
  set_limit(rep, pid, RLIMIT_FSIZE, rl->fsize, "setrlimit fsize");
  set_limit(rep, pid, RLIMIT_NOFILE, rl->nofile, "setrlimit nofile");
  set_limit(rep, pid, RLIMIT_STACK, JAIL_STACK_BYTES, "setrlimit stack");
  /* No cgroups: RLIMIT_DATA bounds private writable memory (unlike
   * RLIMIT_AS it leaves alone the address space runtimes such as node
   * reserve without using), and RLIMIT_NPROC is counted per user
   * namespace, so it bounds this sandbox's processes alone. */
  if (rl->data >= 0)
    set_limit(rep, pid, RLIMIT_DATA, rl->data, "setrlimit data");
  if (rl->nproc >= 0)
    set_limit(rep, pid, RLIMIT_NPROC, rl->nproc, "setrlimit nproc");
}

void jail_rlimits_for(const eb_plan *plan, const eb_exec_request *req, bool cgroup_limits,
                      jail_rlimits *rl) {
  const eb_limits *l = &plan->limits;
  rl->cpu_s = req->limits.cpu_ms > 0 ? (req->limits.cpu_ms + 999) / 1000
                                     : (l->wall_ms + 999) / 1000 + 1;
  rl->fsize = l->file_size_bytes;
  rl->nofile = l->open_files;
  rl->data = cgroup_limits ? -1 : l->memory_bytes;
  rl->nproc = cgroup_limits ? -1 : l->pids;
}

static void drop_capabilities(int rep, int last_cap) {
  for (int cap = 0; cap <= last_cap; cap++)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
      eb_child_fail(rep, errno, "drop bounding capability");
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    eb_child_fail(rep, errno, "clear ambient capabilities");
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof(data));
  if (syscall(SYS_capset, &hdr, data) < 0)
    eb_child_fail(rep, errno, "clear capabilities");
}

/* Receives one message of up to len bytes and up to max fds passed with
 * it (*nfds of them). Returns the message length, or -1 if the parent is
 * gone. */
static ssize_t jail_recv(int sock, char *buf, size_t len, int *fds, int max, int *nfds) {
  struct iovec iov = {.iov_base = buf, .iov_len = len};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(8 * sizeof(int))];
  } control;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                       .msg_controllen = sizeof(control.buf)};
  ssize_t r;
  do
    r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  *nfds = 0;
  if (r <= 0)
    return -1;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
      continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (*nfds < max)
        fds[(*nfds)++] = fd;
      else
        close(fd);
    }
  }
  return r;
}

/* Reports the program's raw wait status with the CPU time and peak memory
 * of everything the init reaped (plus cpu_us and rss_kb of what it did
 * not), and ends the init: its exit kills whatever is left. */
static __attribute__((noreturn)) void report_exit(int rep, int status, int64_t cpu_us,
                                                  int64_t rss_kb) {
  struct rusage ru;
  memset(&ru, 0, sizeof(ru));
  getrusage(RUSAGE_CHILDREN, &ru);
  eb_child_report r;
  memset(&r, 0, sizeof(r));
  r.kind = EB_REPORT_EXIT_STATUS;
  r.err = status;
  r.cpu_us = (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec +
             ru.ru_stime.tv_usec + cpu_us;
  r.max_rss_kb = EB_MAX(ru.ru_maxrss, rss_kb);
  ssize_t w = write(rep, &r, sizeof(r));
  (void)w;
  _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* The jail init's last job: reap everything, and when the program has
 * exited report its raw wait status and leave. Its exit kills whatever the
 * program left running in the namespace. */
static __attribute__((noreturn)) void init_reap(int rep, pid_t program) {
  /* The output pipes must reach EOF when the sandbox's processes are gone,
   * not when the init is: keep nothing but the report pipe. */
  {
    int keep[1] = {rep};
    if (eb_child_keep_only_fds(keep, 1) < 0)
      eb_child_fail(rep, errno, "close the init's fds");
    rep = keep[0];
  }
  int program_status = 0;
  for (;;) {
    int st;
    pid_t p = waitpid(-1, &st, 0);
    if (p == program) {
      program_status = st;
      break;
    }
    if (p < 0 && errno != EINTR)
      eb_child_fail(rep, errno, "wait for the program");
  }
  /* The program is done: end whatever it left behind and reap it all, so
   * that the report below means "nothing of this execution runs any more".
   * The init's own exit (namespace teardown) need not delay the result. */
  kill(-1, SIGKILL);
  while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
    ;
  report_exit(rep, program_status, 0, 0);
}

/* Forks the program (compile steps first, for C) and reaps. A single step
 * goes straight to execve: vfork spares copying the page tables of what
 * is, after all, a copy of the host process. glibc's fork() is avoided:
 * after a raw clone() its locks may be held by threads that do not exist
 * here. */
static __attribute__((noreturn)) void run_program(const jail_job *job, int rep) {
  pid_t program = job->n_steps == 1 ? vfork() : eb_raw_fork();
  if (program < 0)
    eb_child_fail(rep, errno, "fork the program");
  if (program == 0) {
    /* rlimits (and the rlimit fallback when there are no cgroups) bind the
     * program and what it starts, not the init. */
    setup_rlimits(&job->rl, 0, rep);
    CHILD_TRY(chdir(JAIL_WORKDIR), "chdir to the work dir");
    eb_child_exec_steps(rep, job->steps, job->n_steps, job->envp);
  }
  init_reap(rep, program);
}

static void write_code(const jail_job *job, int rep) {
  char path[512];
  snprintf(path, sizeof(path), JAIL_WORKDIR "/%s", job->file_name);
  CHILD_TRY(write_new_file(path, job->code, job->code_len, 0644),
            "write the code into the work dir");
}

/* The zygote's source (src/runtime/jail/zygote.py), embedded at build time. */
#include "jail_zygote_py.h"

/* Pooled, Python fast path: starts the interpreter that will run this
 * sandbox's one execution, and waits until it has imported what it
 * preloads. It inherits everything the program would (credentials, no
 * capabilities, seccomp, cgroup, /dev/null streams); its rlimits come
 * with the job. Returns its pid; *sock is our end of its socket (its fd 3). */
static pid_t start_python(const jail_child_args *a, int rep, int *sock) {
  int sv[2];
  CHILD_TRY(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
            "python fast path: socketpair");
  static const char *const argv[] = {"python3", "-u", "-c", jail_zygote_source, NULL};
  pid_t pid = vfork();
  if (pid < 0)
    eb_child_fail(rep, errno, "python fast path: fork");
  if (pid == 0) {
    /* vfork shares memory, not the fd table: these touch only the child's. */
    if ((sv[1] == 3 ? fcntl(3, F_SETFD, 0) : dup2(sv[1], 3)) < 0 ||
        setrlimit(RLIMIT_STACK, &(struct rlimit){JAIL_STACK_BYTES, JAIL_STACK_BYTES}) < 0 ||
        chdir(JAIL_WORKDIR) < 0)
      _exit(127);
    execve(a->python_path, (char *const *)argv, a->python_envp);
    _exit(127);
  }
  close(sv[1]);
  char byte = 0;
  struct pollfd p[2] = {{.fd = sv[0], .events = POLLIN}, {.fd = a->sync_fd, .events = POLLRDHUP}};
  int r;
  do
    r = poll(p, 2, 60000);
  while (r < 0 && errno == EINTR);
  if (p[1].revents != 0)
    _exit(127); /* the parent is gone */
  if (r <= 0 || eb_read_retry(sv[0], &byte, 1) != 1 || byte != 'R')
    eb_child_fail(rep, r == 0 ? ETIMEDOUT : EPROTO,
                  "python fast path: the interpreter did not start");
  *sock = sv[0];
  return pid;
}

/* CPU time (its own and its reaped children's) and peak memory of a live
 * process of the sandbox, from /proc. */
static void proc_usage(pid_t pid, int64_t *cpu_us, int64_t *rss_kb) {
  char path[64], buf[2048];
  *cpu_us = *rss_kb = 0;
  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? eb_read_retry(fd, buf, sizeof(buf) - 1) : -1;
  if (fd >= 0)
    close(fd);
  char *p = n > 0 ? (buf[n] = '\0', strrchr(buf, ')')) : NULL;
  long tck = sysconf(_SC_CLK_TCK);
  if (p != NULL && tck > 0) {
    /* Fields 14-17 (utime, stime, cutime, cstime); p is at the end of 2. */
    long long ticks = 0;
    p++;
    for (int field = 3; field <= 17 && *p; field++) {
      while (*p == ' ')
        p++;
      if (field >= 14)
        ticks += strtoll(p, NULL, 10);
      while (*p && *p != ' ')
        p++;
    }
    *cpu_us = ticks * 1000000 / tck;
  }
  snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  n = fd >= 0 ? eb_read_retry(fd, buf, sizeof(buf) - 1) : -1;
  if (fd >= 0)
    close(fd);
  if (n > 0) {
    buf[n] = '\0';
    /* At the start of a line: the Name: line above is the program's to set. */
    char *hwm = strstr(buf, "\nVmHWM:");
    if (hwm != NULL)
      *rss_kb = strtoll(hwm + 7, NULL, 10);
  }
}

/* CPU time and the largest peak memory of every process of the sandbox
 * but us, from /proc (read with getdents64: no allocation here). Each
 * process counts with the children it reaped; the caller stopped them all
 * first, so the figures hold still. */
static void sandbox_usage(int64_t *cpu_us, int64_t *rss_kb) {
  *cpu_us = *rss_kb = 0;
  int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  char buf[4096];
  long n;
  while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
    for (long off = 0; off < n;) {
      /* struct linux_dirent64: ino, off, reclen, type, name */
      unsigned short reclen;
      memcpy(&reclen, buf + off + 16, sizeof(reclen));
      const char *name = buf + off + 19;
      off += reclen;
      char *end = NULL;
      long pid = strtol(name, &end, 10);
      if (pid <= 1 || *end != '\0')
        continue;
      int64_t cpu, rss;
      proc_usage((pid_t)pid, &cpu, &rss);
      *cpu_us += cpu;
      *rss_kb = EB_MAX(*rss_kb, rss);
    }
  }
  close(fd);
}

/* Python fast path: the interpreter tells us its exit status once its
 * shutdown is done, then waits to be killed: the sandbox ends at once,
 * without waiting for the kernel to free a large process's memory. The
 * message can only end the execution, as an exit would. An interpreter
 * that dies without a word (os._exit, a signal) is reaped as any program.
 * Meanwhile orphans re-parented to us are reaped as they exit, as
 * init_reap() does, so that they neither pile up against the process limit
 * nor go uncounted. */
static __attribute__((noreturn)) void python_wait(int rep, pid_t zygote, int zsock) {
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  for (;;) {
    /* Reap whatever has exited; the interpreter among them ends the wait. */
    int st;
    pid_t p;
    while ((p = waitpid(-1, &st, WNOHANG)) > 0)
      if (p == zygote) {
        if (zsock >= 0)
          close(zsock);
        kill(-1, SIGKILL);
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
          ;
        report_exit(rep, st, 0, 0);
      }
    struct pollfd pf[2] = {{.fd = sfd, .events = POLLIN}, {.fd = zsock, .events = POLLIN}};
    /* Without a signalfd, look for exits every 10 ms. */
    int r = poll(pf, 2, sfd >= 0 ? -1 : 10);
    if (r < 0 && errno != EINTR)
      eb_child_fail(rep, errno, "python fast path: wait for the interpreter");
    if (r <= 0)
      continue;
    if (pf[0].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        ;
    }
    if (zsock < 0 || pf[1].revents == 0)
      continue;
    char msg[16];
    ssize_t n = recv(zsock, msg, sizeof(msg) - 1, MSG_DONTWAIT);
    if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) {
      close(zsock); /* hung up: only its exit can end it now */
      zsock = -1;
      continue;
    }
    if (n < 2 || msg[0] != 'D')
      continue;
    msg[n] = '\0';
    char *end = NULL;
    long status = strtol(msg + 1, &end, 10);
    if (*end != '\0' || status < 0 || status > 255)
      continue;
    /* Stop everything, count what it used, report, end it: stopped, the
     * sandbox's processes cannot run on, and the report goes out before
     * the kernel starts tearing the interpreter down. */
    int64_t cpu_us, rss_kb;
    kill(-1, SIGSTOP);
    sandbox_usage(&cpu_us, &rss_kb);
    report_exit(rep, (int)status << 8, cpu_us, rss_kb);
  }
}

#if defined(__SANITIZE_ADDRESS__)
#define JAIL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JAIL_SANITIZED 1
#endif
#endif

/* A pooled init waits for minutes as a copy-on-write copy of the host
 * process: every page the host writes meanwhile would be copied for it.
 * Once built it needs nothing of the host's data, so it unmaps what holds
 * it: large private anonymous writable mappings (the heap, other threads'
 * stacks and arenas, big allocations), except the stack it runs on (with
 * this thread's TLS) and those that continue a file's data segment (a
 * library's .bss). Sanitizer builds keep everything: their shadow memory
 * is such a mapping. */
static void drop_host_memory(void) {
#ifndef JAIL_SANITIZED
  static const size_t max_ranges = 1024;
  uintptr_t ranges[1024][2];
  size_t n_ranges = 0;
  char buf[65536];
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  size_t len = 0;
  ssize_t r;
  while (len < sizeof(buf) - 1 && (r = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
    len += (size_t)r;
  close(fd);
  buf[len] = '\0';
  uintptr_t here = (uintptr_t)&buf, tls = (uintptr_t)&errno;
  uintptr_t prev_end = 0;
  bool prev_file = false;
  for (char *line = buf; line != NULL && *line;) {
    char *next = strchr(line, '\n');
    if (next != NULL)
      *next++ = '\0';
    else if (len == sizeof(buf) - 1)
      break; /* a line cut by the buffer: leave the rest alone */
    char *p = line;
    uintptr_t start = (uintptr_t)strtoull(p, &p, 16);
    uintptr_t end = (uintptr_t)strtoull(p + 1, &p, 16);
    char perms[5] = "";
    if (*p == ' ')
      memcpy(perms, p + 1, 4);
    /* p is at the blank before the permissions: skip them, the offset and
     * the device to reach the inode; the path follows. */
    for (int field = 0; field < 3 && p != NULL; field++)
      p = strchr(p + 1, ' ');
    unsigned long long inode = p != NULL ? strtoull(p, &p, 10) : 1;
    while (p != NULL && *p == ' ')
      p++;
    bool anon = inode == 0 && (p == NULL || *p == '\0' || strcmp(p, "[heap]") == 0 ||
                               strncmp(p, "[anon", 5) == 0 || strcmp(p, "[stack]") == 0);
    bool ours = (here >= start && here < end) || (tls >= start && tls < end);
    /* Small ones stay: besides a library's .bss, the dynamic loader keeps
     * its own records (those lazy symbol binding reads) in small
     * anonymous mappings. What costs the host is large. */
    bool large = end - start >= ((uintptr_t)1 << 20);
    if (anon && large && perms[0] == 'r' && perms[1] == 'w' && perms[3] == 'p' && !ours &&
        (!(prev_file && prev_end == start) || strcmp(p, "[heap]") == 0) && n_ranges < max_ranges) {
      ranges[n_ranges][0] = start;
      ranges[n_ranges][1] = end;
      n_ranges++;
    }
    prev_file = inode != 0;
    prev_end = end;
    line = next;
  }
  for (size_t i = 0; i < n_ranges; i++)
    munmap((void *)ranges[i][0], ranges[i][1] - ranges[i][0]);
#endif
}

/* A pooled sandbox, built and sealed: report ready, wait for one job,
 * run it. The job arrives as one message on the control socket: 'J', then
 * '1' when there is stdin, with the job file, the report pipe, stdout,
 * stderr and stdin attached. We acknowledge it with 'A' before anything of
 * it runs, so that the parent can tell a sandbox that died while idle (and
 * retry elsewhere) from an execution that failed. */
static __attribute__((noreturn)) void jail_pooled(const jail_child_args *a) {
  int ctl = a->sync_fd;
  /* Idle streams: /dev/null on 0, 1 and 2 (all three are closed here). */
  for (int i = 0; i < 3; i++)
    if (open("/dev/null", O_RDWR) != i)
      eb_child_fail(ctl, errno ? errno : EBADF, "open /dev/null");
  int zsock = -1;
  pid_t zygote = a->python_path != NULL ? start_python(a, ctl, &zsock) : -1;
  /* From here on nothing of the host's memory is used (a points to it). */
  drop_host_memory();
  if (eb_write_all(ctl, "R", 1) < 0)
    _exit(127);

  for (;;) {
    struct pollfd p[2] = {{.fd = ctl, .events = POLLIN}, {.fd = zsock, .events = POLLRDHUP}};
    int r = poll(p, zsock >= 0 ? 2 : 1, -1);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 || (zsock >= 0 && p[1].revents != 0))
      _exit(126); /* the interpreter died while idle: the parent discards us */
    if (p[0].revents & POLLIN)
      break;
    if (p[0].revents != 0)
      _exit(127); /* the parent is gone */
  }
  char msg[2];
  int fds[5], n = 0;
  ssize_t len = jail_recv(ctl, msg, sizeof(msg), fds, 5, &n);
  if (len != 2 || msg[0] != 'J' || n != (msg[1] == '1' ? 5 : 4))
    _exit(127);
  int rep = fds[1];
  jail_job job;
  if (jail_job_unpack(fds[0], &job) < 0)
    eb_child_fail(rep, errno, "read the job");
  close(fds[0]);
  write_code(&job, rep);
  int in = msg[1] == '1' ? fds[4] : open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in < 0)
    eb_child_fail(rep, errno, "open /dev/null");
  if (zygote > 0) {
    /* The interpreter gets the job before we acknowledge it: one that died
     * meanwhile makes us leave without a word, and the parent hands the job
     * to another sandbox. */
    if (job.zmsg == NULL)
      eb_child_fail(rep, EPROTO, "python fast path: no message for the interpreter");
    struct pollfd zp = {.fd = zsock, .events = POLLRDHUP};
    if (poll(&zp, 1, 0) != 0)
      _exit(126);
    setup_rlimits(&job.rl, zygote, rep);
    int streams[3] = {in, fds[2], fds[3]};
    if (jail_send(zsock, job.zmsg, job.zmsg_len, streams, 3) < 0)
      _exit(126);
    if (eb_write_all(ctl, "A", 1) < 0)
      _exit(127);
    close(ctl);
    close(in);
    close(fds[2]);
    close(fds[3]);
    python_wait(rep, zygote, zsock);
  }
  if (eb_write_all(ctl, "A", 1) < 0)
    _exit(127);
  close(ctl);
  CHILD_TRY(eb_child_setup_stdio(in, fds[2], fds[3]), "set up stdin, stdout and stderr");
  run_program(&job, rep);
}

/* The sandbox, step by step. Runs as pid 1 of the new pid namespace, inside
 * the new user, mount, net, ipc and uts namespaces. Any failure is reported
 * on the report pipe and ends the child: a half-built sandbox never runs
 * code. A pooled sandbox (no job yet) does every step that does not depend
 * on the execution, reports ready, and does the rest in jail_pooled(). */
static __attribute__((noreturn)) void jail_enter(const jail_child_args *in_args) {
  /* The parent blocked every signal around the clone: drop the host's
   * handlers before unblocking, so none of its code runs here. */
  eb_child_reset_signals();
  jail_child_args copy = *in_args;
  jail_child_args *a = &copy;
  const bool pooled = a->job == NULL;
  char buf;

  /* Before anything: drop every fd but ours. The parent's other threads may
   * have had pipes of other executions open when we were cloned. */
  {
    int keep[5] = {a->fds[0], a->fds[1], a->fds[2], a->fds[3], a->sync_fd};
    if (eb_child_keep_only_fds(keep, 5) < 0)
      eb_child_fail(pooled ? a->sync_fd : a->fds[3] > 2 ? a->fds[3] : 2, errno,
                    "close inherited fds");
    for (int i = 0; i < 4; i++)
      a->fds[i] = keep[i];
    a->sync_fd = keep[4];
  }
  /* Where failures go: the report pipe, or for a pooled sandbox the
   * control socket until its job brings a report pipe. */
  int rep = pooled ? a->sync_fd : a->fds[3];
  prctl(PR_SET_NAME, "execbox-init", 0, 0, 0); /* tells it apart from execbox in ps */

  /* 1. Wait for the parent to write our uid/gid maps: they give the
   *    sandbox uid its meaning. */
  if (eb_read_retry(a->sync_fd, &buf, 1) != 1)
    _exit(127); /* the parent is gone */

  /* 2. Credentials: the unprivileged sandbox user, no supplementary groups
   *    of the host. The uid was never 0 in this namespace, so the change
   *    keeps our namespace capabilities for the setup below. */
  if (a->allow_setgroups)
    CHILD_TRY(eb_raw_setgroups(0, NULL), "drop supplementary groups");
  CHILD_TRY(eb_raw_setresgid(JAIL_INSIDE_ID, JAIL_INSIDE_ID, JAIL_INSIDE_ID), "setresgid");
  CHILD_TRY(eb_raw_setresuid(JAIL_INSIDE_ID, JAIL_INSIDE_ID, JAIL_INSIDE_ID), "setresuid");

  /* 3. Die with execbox. A credential change clears the parent-death signal,
   *    so it is set after step 2; the sync socket then tells whether the
   *    parent died in between. */
  CHILD_TRY(prctl(PR_SET_PDEATHSIG, SIGKILL), "set the parent-death signal");
  struct pollfd pfd = {.fd = a->sync_fd, .events = POLLRDHUP};
  if (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLRDHUP)))
    _exit(127);

  /* 4. A new session: no controlling terminal, so no TIOCSTI into the
   *    caller's terminal (the ioctl is also denied by seccomp). */
  CHILD_TRY(setsid(), "setsid");

  /* 5. The file system: fresh root, read-only system dirs, new /proc,
   *    minimal /dev, size-limited /tmp and work dir, pivot_root. */
  setup_root(a, rep);

  /* 6. The code, written by the sandbox user into its work dir (pooled:
   *    once the job has come). */
  if (!pooled)
    write_code(a->job, rep);
  /* Nothing of the host's command line or environment shows in /proc/1
   * (the request may point into them: wiped only once the code is out). */
  if (a->jr->arg_end > a->jr->arg_start)
    memset((void *)a->jr->arg_start, 0, a->jr->arg_end - a->jr->arg_start);
  if (a->jr->env_end > a->jr->env_start)
    memset((void *)a->jr->env_start, 0, a->jr->env_end - a->jr->env_start);

  /* 7. Into our cgroup before anything can fork. v2: clone3 placed us there
   *    at birth (or the parent moved us). v1: the parent sends the `tasks`
   *    files of our group, and we move our only thread ourselves, which the
   *    kernel does without its global lock. */
  {
    int tasks[3] = {-1, -1, -1}, n = 0;
    if (jail_recv(a->sync_fd, &buf, 1, tasks, 3, &n) < 0)
      _exit(127); /* the parent is gone or failed; it knows why */
    for (int i = 0; i < n; i++) {
      CHILD_TRY(eb_write_all(tasks[i], "0", 1), "enter the cgroup");
      close(tasks[i]);
    }
  }

  /* 8. A cgroup namespace, now that we sit in our own cgroup: the program
   *    sees its group as the root and nothing of the host's tree. */
  CHILD_TRY(unshare(CLONE_NEWCGROUP), "unshare the cgroup namespace");

  /* 9. Standard streams: the pipes to the parent, /dev/null for stdin when
   *    there is no input; the fds kept at the start are close-on-exec. */
  if (!pooled)
    CHILD_TRY(eb_child_setup_stdio(a->fds[0], a->fds[1], a->fds[2]),
              "set up stdin, stdout and stderr");

  /* 10. Network: the new namespace has only loopback; bring it up. */
  bring_loopback_up(rep);

  /* 11. Host name of the uts namespace. */
  CHILD_TRY(sethostname("sandbox", 7), "sethostname");

  /* 12. No privilege can be gained through execve (setuid binaries, file
   *     capabilities); also required for an unprivileged seccomp filter. */
  CHILD_TRY(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "set no_new_privs");

  /* 13. Drop every capability: bounding, ambient, inheritable, permitted,
   *     effective. */
  drop_capabilities(rep, a->jr->last_cap);

  /* 14. seccomp, compiled in the parent, loaded last. The init itself is
   *     filtered too: nothing in the sandbox runs unfiltered from here. */
  struct sock_fprog prog = {.len = a->jr->seccomp.len, .filter = a->jr->seccomp.filter};
  CHILD_TRY(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0), "load the seccomp filter");
  struct sock_fprog pers = {.len = a->jr->seccomp.personality_len,
                            .filter = (struct sock_filter *)a->jr->seccomp.personality};
  CHILD_TRY(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &pers, 0, 0),
            "load the personality filter");

  /* 15. Run the program and reap (pooled: once the job has come). */
  if (pooled)
    jail_pooled(a);
  run_program(a->job, rep);
}

/* --------------------------------------------------------------- parent */

static int write_proc_file(pid_t pid, const char *file, const char *text, eb_error **err) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return eb_error_set(err, errno, "open %s", path);
  ssize_t w = eb_write_all(fd, text, strlen(text));
  int saved = errno;
  close(fd);
  if (w < 0)
    return eb_error_set(err, saved, "write %s", path);
  return 0;
}

/* Maps the sandbox uid/gid to an unprivileged host id: ourselves when we
 * are a user, nobody when we are root. Never host root. */
static int write_id_maps(pid_t pid, bool *allow_setgroups, eb_error **err) {
  char map[64];
  uid_t host_uid = geteuid() == 0 ? JAIL_HOST_ID_AS_ROOT : geteuid();
  gid_t host_gid = geteuid() == 0 ? JAIL_HOST_ID_AS_ROOT : getegid();
  *allow_setgroups = geteuid() == 0;
  if (!*allow_setgroups && write_proc_file(pid, "setgroups", "deny", err) < 0)
    return -1;
  snprintf(map, sizeof(map), "%d %u 1\n", JAIL_INSIDE_ID, (unsigned)host_uid);
  if (write_proc_file(pid, "uid_map", map, err) < 0)
    return -1;
  snprintf(map, sizeof(map), "%d %u 1\n", JAIL_INSIDE_ID, (unsigned)host_gid);
  if (write_proc_file(pid, "gid_map", map, err) < 0)
    return -1;
  return 0;
}

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* clone3's argument (linux/sched.h, repeated: glibc's headers lag). */
struct jail_clone_args {
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
      set_tid_size, cgroup;
};

/* Creates the jail init in its namespaces, fork-like (the child returns 0).
 * With a cgroup v2 fd, clone3(CLONE_INTO_CGROUP) places it in the group at
 * birth, which costs nothing; where the kernel lacks that, a plain clone()
 * and *attach_from_parent set. */
static pid_t jail_clone(int cgroup_v2_fd, bool *attach_from_parent) {
  const uint64_t flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWNET |
                         CLONE_NEWIPC | CLONE_NEWUTS;
  *attach_from_parent = false;
#ifdef SYS_clone3
  if (cgroup_v2_fd >= 0) {
    struct jail_clone_args ca;
    memset(&ca, 0, sizeof(ca));
    ca.flags = flags | CLONE_INTO_CGROUP;
    ca.exit_signal = SIGCHLD;
    ca.cgroup = (uint64_t)cgroup_v2_fd;
    long pid = syscall(SYS_clone3, &ca, sizeof(ca));
    if (pid >= 0 || (errno != ENOSYS && errno != E2BIG && errno != EINVAL))
      return (pid_t)pid;
  }
#endif
  *attach_from_parent = cgroup_v2_fd >= 0;
  return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

/* Sends one message of len bytes with n fds attached. -1 with errno. */
static int jail_send(int sock, const char *data, size_t len, const int *fds, int n) {
  struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(8 * sizeof(int))];
  } control;
  memset(&control, 0, sizeof(control));
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (n > 8) {
    errno = EINVAL;
    return -1;
  }
  if (n > 0) {
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
    memcpy(CMSG_DATA(c), fds, (size_t)n * sizeof(int));
  }
  ssize_t w;
  do
    w = sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return -1;
  if ((size_t)w != len) {
    errno = EPROTO;
    return -1;
  }
  return 0;
}

typedef struct jail_kill_target {
  pid_t init_pid;
  int init_pidfd;
} jail_kill_target;

/* SIGKILL to the jail init ends the whole pid namespace: the kernel kills
 * every process in it, and the init is not reported dead before they all
 * are. (The cgroup is emptied once more when it is removed.) */
void jail_kill_init(pid_t pid, int pidfd) {
  if (pidfd < 0 || eb_pidfd_send_signal(pidfd, SIGKILL) < 0)
    kill(pid, SIGKILL);
}

static void jail_kill_tree(void *arg) {
  jail_kill_target *t = arg;
  jail_kill_init(t->init_pid, t->init_pidfd);
}

static int jail_check_limits(const jail_runtime *jr, const eb_limits *l, eb_error **err) {
  if (l->network == EB_NETWORK_HOST)
    return eb_error_set(err, EB_ERR_LIMIT_UNSUPPORTED,
                        "the jail runtime has no route out: host network is not available");
  if (jr->cgroups.mode == JAIL_CGROUP_NONE && l->cpu_milli > 0)
    return eb_error_set(err, EB_ERR_LIMIT_UNSUPPORTED,
                        "a CPU limit needs cgroups, which are unavailable: %s",
                        jr->cgroups.why_not ? jr->cgroups.why_not : "unknown reason");
  if (jr->cgroups.mode != JAIL_CGROUP_NONE && !jr->cgroups.cpu && l->cpu_milli > 0)
    return eb_error_set(err, EB_ERR_LIMIT_UNSUPPORTED,
                        "a CPU limit needs the cgroup cpu controller, which is not delegated here");
  if (jr->cgroups.swap_unbounded && l->memory_bytes > 0)
    return eb_error_set(err, EB_ERR_LIMIT_UNSUPPORTED,
                        "a memory limit cannot be enforced: this host has swap and its cgroups "
                        "cannot limit it (enable swap accounting, or turn swap off)");
  return 0;
}

/* Hands out a cgroup for one execution carrying limits: an idle one when
 * there is one, else a new one. */
int jail_cgroup_checkout(jail_runtime *jr, const eb_limits *limits, jail_cgroup *cg,
                         eb_error **err) {
  bool reused = false;
  pthread_mutex_lock(&jr->lock);
  if (jr->n_idle > 0) {
    *cg = jr->idle[--jr->n_idle];
    reused = true;
  }
  pthread_mutex_unlock(&jr->lock);
  int ret = 0;
  if (!reused) {
    ret = jail_cgroup_name(&jr->cgroups, cg, err);
    if (ret == 0)
      ret = jail_cgroup_make(&jr->cgroups, cg, err);
  }
  if (ret == 0)
    ret = jail_cgroup_configure(&jr->cgroups, limits, cg, err);
  return ret;
}

/* Takes back the (empty) cgroup of a finished execution. */
static void jail_cgroup_checkin(jail_runtime *jr, jail_cgroup *cg) {
  cg->oom_count = jail_cgroup_oom_count(cg);
  pthread_mutex_lock(&jr->lock);
  if (jr->n_idle < JAIL_IDLE_GROUPS) {
    jr->idle[jr->n_idle++] = *cg;
    memset(cg, 0, sizeof(*cg));
  }
  pthread_mutex_unlock(&jr->lock);
  if (cg->mode != JAIL_CGROUP_NONE) {
    eb_error *e = NULL;
    jail_cgroup_destroy(cg, &e); /* a failure leaves an empty group for the next GC */
    eb_error_free(e);
  }
}

/* Reaps finished inits and returns their cgroups; with block, waits for
 * all of them. */
static void jail_reap_pending(jail_runtime *jr, bool block) {
  jail_cgroup done[16];
  size_t n_done = 0;
  pthread_mutex_lock(&jr->lock);
  size_t keep = 0;
  for (size_t i = 0; i < jr->n_pending; i++) {
    jail_pending *p = &jr->pending[i];
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    int r;
    /* By pidfd where there is one: the pid alone could name another child
     * if the host application reaps children itself. */
    do
      r = p->pidfd >= 0 ? waitid(JAIL_P_PIDFD, (id_t)p->pidfd, &si, WEXITED | (block ? 0 : WNOHANG))
                        : waitid(P_PID, (id_t)p->pid, &si, WEXITED | (block ? 0 : WNOHANG));
    while (r < 0 && errno == EINTR);
    if (r == 0 && si.si_pid == 0) {
      jr->pending[keep++] = *p; /* still tearing down */
      continue;
    }
    if (p->pidfd >= 0)
      close(p->pidfd);
    done[n_done++] = p->cgroup;
    if (n_done == EB_ARRAY_SIZE(done))
      break;
  }
  /* Entries after a full `done` batch stay pending for the next call. */
  size_t scanned = keep + n_done;
  for (size_t i = scanned; i < jr->n_pending; i++)
    jr->pending[keep++] = jr->pending[i];
  jr->n_pending = keep;
  pthread_mutex_unlock(&jr->lock);
  for (size_t i = 0; i < n_done; i++)
    if (done[i].mode != JAIL_CGROUP_NONE)
      jail_cgroup_checkin(jr, &done[i]);
  if (block && keep > 0)
    jail_reap_pending(jr, true);
}

static void *jail_reaper(void *arg) {
  jail_runtime *jr = arg;
  for (;;) {
    struct pollfd p[64];
    nfds_t n = 0;
    pthread_mutex_lock(&jr->lock);
    while (jr->n_pending == 0 && !jr->reaper_stop)
      pthread_cond_wait(&jr->reaper_wake, &jr->lock);
    bool stop = jr->reaper_stop;
    for (size_t i = 0; i < jr->n_pending && n < 64; i++)
      if (jr->pending[i].pidfd >= 0)
        p[n++] = (struct pollfd){.fd = jr->pending[i].pidfd, .events = POLLIN};
    pthread_mutex_unlock(&jr->lock);
    if (stop)
      return NULL;
    /* A pidfd becomes readable when its init has exited. */
    poll(p, n, n > 0 ? 1000 : 50);
    jail_reap_pending(jr, false);
  }
}

static int jail_defer_reap(jail_runtime *jr, pid_t pid, int pidfd, jail_cgroup *cg) {
  pthread_mutex_lock(&jr->lock);
  if (jr->n_pending == jr->cap_pending) {
    size_t cap = jr->cap_pending ? jr->cap_pending * 2 : 8;
    jail_pending *np = realloc(jr->pending, cap * sizeof(*np));
    if (np == NULL) {
      pthread_mutex_unlock(&jr->lock);
      return -1;
    }
    jr->pending = np;
    jr->cap_pending = cap;
  }
  jr->pending[jr->n_pending].pid = pid;
  jr->pending[jr->n_pending].pidfd = pidfd;
  jr->pending[jr->n_pending].cgroup = *cg;
  jr->n_pending++;
  memset(cg, 0, sizeof(*cg));
  if (!jr->reaper_started)
    jr->reaper_started = pthread_create(&jr->reaper, NULL, jail_reaper, jr) == 0;
  pthread_cond_signal(&jr->reaper_wake);
  pthread_mutex_unlock(&jr->lock);
  return 0;
}

int jail_sandbox_start(jail_runtime *jr, const jail_start_opts *o, jail_sandbox *sb,
                       eb_error **err) {
  memset(sb, 0, sizeof(*sb));
  sb->pid = -1;
  sb->pidfd = -1;
  sb->ctl_fd = -1;
  sb->cpu_base_us = -1;
  int sync[2] = {-1, -1};
  int cgroup_fd = -1;
  int ret = 0;
  /* v2: the group must be ready before clone3 places the child in it. */
  if (jr->cgroups.mode == JAIL_CGROUP_V2) {
    if ((ret = jail_cgroup_checkout(jr, o->limits, &sb->cgroup, err)) < 0 ||
        (ret = jail_cgroup_open_v2(&sb->cgroup, &cgroup_fd, err)) < 0)
      goto fail;
  }
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sync) < 0) {
    ret = eb_error_set(err, errno, "create sync socket");
    goto fail;
  }

  jail_child_args args = {
      .jr = jr,
      .tmp_bytes = o->limits->tmp_bytes,
      .job = o->job,
      .fds = {o->fds[0], o->fds[1], o->fds[2], o->fds[3]},
      .sync_fd = sync[0],
      .allow_setgroups = geteuid() == 0,
      .cgroup_limits = jr->cgroups.mode != JAIL_CGROUP_NONE,
      .python_path = o->python_path,
      .python_envp = o->python_envp,
  };
  if (o->job == NULL)
    args.fds[0] = args.fds[1] = args.fds[2] = args.fds[3] = -1;
  bool attach_from_parent = false;
  /* No host signal handler may run in the child before it resets them. */
  sigset_t all, saved_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &saved_mask);
  pid_t pid = jail_clone(cgroup_fd, &attach_from_parent);
  int clone_errno = errno;
  if (pid != 0)
    pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
  if (pid < 0) {
    ret = eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE, "create namespaces (clone): %s%s",
                       strerror(clone_errno),
                       clone_errno == EPERM || clone_errno == ENOSPC
                           ? "; are user namespaces disabled? see `execbox runtimes`"
                           : "");
    goto fail;
  }
  if (pid == 0) {
    close(sync[1]);
    jail_enter(&args);
  }
  close(sync[0]);
  sync[0] = -1;
  sb->pid = pid;
  sb->pidfd = eb_pidfd_open(pid);
  sb->ctl_fd = sync[1];
  sync[1] = -1;

  /* Release the child as soon as its id maps are written; while it builds
   * its file system, make its v1 cgroup and hand that over. */
  bool allow_setgroups = false;
  ret = write_id_maps(pid, &allow_setgroups, err);
  if (ret == 0 && eb_write_all(sb->ctl_fd, "m", 1) < 0)
    ret = eb_error_set(err, errno, "release the sandbox child");
  int tasks[3] = {-1, -1, -1};
  if (ret == 0 && jr->cgroups.mode == JAIL_CGROUP_V1) {
    ret = jail_cgroup_checkout(jr, o->limits, &sb->cgroup, err);
    if (ret == 0)
      ret = jail_cgroup_open_tasks_v1(&sb->cgroup, tasks, err);
  }
  if (ret == 0 && attach_from_parent)
    ret = jail_cgroup_add(&sb->cgroup, pid, err);
  if (ret == 0 && jail_send(sb->ctl_fd, "c", 1, tasks, tasks[0] >= 0 ? 3 : 0) < 0)
    ret = eb_error_set(err, errno, "hand the cgroup over to the sandbox child");
  if (ret < 0) {
    jail_kill_init(pid, sb->pidfd);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
    goto fail;
  }
  return 0;

fail:
  /* cgroup_fd belongs to the group (kept open for its reuse). */
  if (sync[0] >= 0)
    close(sync[0]);
  if (sync[1] >= 0)
    close(sync[1]);
  if (sb->ctl_fd >= 0)
    close(sb->ctl_fd);
  if (sb->pidfd >= 0)
    close(sb->pidfd);
  sb->ctl_fd = sb->pidfd = sb->pid = -1;
  if (sb->cgroup.mode != JAIL_CGROUP_NONE) {
    eb_error *cg_err = NULL;
    jail_cgroup_destroy(&sb->cgroup, &cg_err);
    eb_error_free(cg_err);
  }
  return ret;
}

void jail_sandbox_finish(jail_runtime *jr, jail_sandbox *sb, bool reaped) {
  if (sb->ctl_fd >= 0)
    close(sb->ctl_fd);
  sb->ctl_fd = -1;
  if (!reaped) {
    /* The init reported the end; its teardown finishes in the background. */
    if (jail_defer_reap(jr, sb->pid, sb->pidfd, &sb->cgroup) == 0)
      return;
    while (waitpid(sb->pid, NULL, 0) < 0 && errno == EINTR)
      ;
    if (sb->pidfd >= 0)
      close(sb->pidfd);
  }
  sb->pidfd = -1;
  if (sb->cgroup.mode != JAIL_CGROUP_NONE)
    jail_cgroup_checkin(jr, &sb->cgroup); /* empty: the sandbox is reaped */
}

void jail_sandbox_discard(jail_runtime *jr, jail_sandbox *sb) {
  jail_kill_init(sb->pid, sb->pidfd);
  jail_sandbox_finish(jr, sb, false);
}

/* Supervises a started sandbox running req (cold or pooled); finishes it. */
static int jail_supervise(jail_runtime *jr, eb_ctx *ctx, const eb_exec_request *req,
                          const eb_plan *plan, jail_sandbox *sb, eb_child *child,
                          long long oom_before, bool pooled, eb_exec_result *res,
                          eb_error **err) {
  jail_kill_target target = {.init_pid = sb->pid, .init_pidfd = sb->pidfd};
  child->pid = sb->pid;
  child->pidfd = sb->pidfd;
  child->kill_tree = jail_kill_tree;
  child->kill_arg = &target;
  child->exit_report_completes = true;
  int ret = eb_plan_supervise(plan, ctx, req, child, res, err);
  /* An OOM kill anywhere in the group (the compiler too, whose death only
   * shows as an exit code) makes the run a memory-limit one. */
  if (ret == 0 && sb->cgroup.mode != JAIL_CGROUP_NONE &&
      (res->status == EB_STATUS_KILLED || res->status == EB_STATUS_NONZERO_EXIT ||
       res->status == EB_STATUS_COMPILE_ERROR) &&
      jail_cgroup_oom_count(&sb->cgroup) > oom_before)
    res->status = EB_STATUS_MEMORY_LIMIT;
  if (child->reaped)
    sb->pidfd = -1; /* closed by the supervisor */
  /* A pooled sandbox acknowledges its job with 'A' before running any of
   * it. Without it the sandbox died while idle: nothing ran, and another
   * sandbox may take the job (1). */
  bool taken = true;
  if (pooled) {
    char ack = 0;
    taken = recv(sb->ctl_fd, &ack, 1, MSG_DONTWAIT) == 1 && ack == 'A';
    /* CPU time from the group, which counts every process of the
     * execution whatever became of it (the init's figures miss processes
     * killed at the end without being reaped). */
    int64_t used = sb->cpu_base_us >= 0 ? jail_cgroup_cpu_usage_us(&sb->cgroup) : -1;
    if (ret == 0 && used >= sb->cpu_base_us && sb->cpu_base_us >= 0)
      res->cpu_ms = (used - sb->cpu_base_us) / 1000;
  }
  if ((ret < 0 || !taken) && !child->reaped)
    jail_kill_init(sb->pid, sb->pidfd);
  jail_sandbox_finish(jr, sb, child->reaped);
  if (!taken) {
    eb_exec_result_clear(res);
    if (err != NULL) {
      eb_error_free(*err);
      *err = NULL;
    }
    return 1;
  }
  return ret;
}

/* One execution in a sandbox built for it. */
static int jail_run_cold(jail_runtime *jr, eb_ctx *ctx, const eb_exec_request *req,
                         const eb_plan *plan, eb_exec_result *res, eb_error **err) {
  jail_job job = {
      .steps = plan->steps,
      .n_steps = plan->n_steps,
      .envp = plan->envp,
      .file_name = plan->lang->file_name,
      .code = req->code,
      .code_len = req->code_len ? req->code_len : strlen(req->code),
  };
  jail_rlimits_for(plan, req, jr->cgroups.mode != JAIL_CGROUP_NONE, &job.rl);
  eb_child child = {.pid = -1, .pidfd = -1, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
                    .report_fd = -1};
  int fds[4] = {-1, -1, -1, -1};
  int ret = eb_plan_pipes(req, &child, fds, err);
  if (ret < 0)
    return ret;
  jail_start_opts o = {.limits = &plan->limits, .job = &job,
                       .fds = {fds[0], fds[1], fds[2], fds[3]}};
  jail_sandbox sb;
  ret = jail_sandbox_start(jr, &o, &sb, err);
  eb_plan_close_fds(fds);
  if (ret < 0) {
    eb_child_close_fds(&child);
    return ret;
  }
  /* The sync socket stays open until the end: the init reads a hang-up on
   * it as the death of execbox. */
  return jail_supervise(jr, ctx, req, plan, &sb, &child, sb.cgroup.oom_count, false, res, err);
}

/* Pooled: hands the job to a waiting sandbox and supervises it. Returns 1
 * (nothing ran, sb discarded) when the sandbox turned out dead or
 * unusable, so that the caller tries another. */
int jail_run_warm(jail_runtime *jr, eb_ctx *ctx, const eb_exec_request *req, const eb_plan *plan,
                  jail_sandbox *sb, bool fast, eb_exec_result *res, eb_error **err) {
  /* The limits of this execution on the sandbox's group: written only
   * where they differ from what it carries. */
  eb_error *soft = NULL;
  if (sb->cgroup.mode != JAIL_CGROUP_NONE &&
      jail_cgroup_configure(&jr->cgroups, &plan->limits, &sb->cgroup, &soft) < 0) {
    /* E.g. a memory limit below what the waiting interpreter uses: this
     * request needs a sandbox of its own. */
    eb_error_free(soft);
    jail_sandbox_discard(jr, sb);
    return 2;
  }
  /* The group's OOM kills when it was handed to this sandbox: one while
   * idle would have ended the sandbox, so this is also the count now. */
  long long oom_before = sb->cgroup.oom_count;
  jail_rlimits rl;
  jail_rlimits_for(plan, req, jr->cgroups.mode != JAIL_CGROUP_NONE, &rl);
  int job_fd = -1;
  int ret = jail_job_pack(plan, req, &rl, fast, &job_fd, err);
  if (ret < 0) {
    jail_sandbox_discard(jr, sb);
    return ret;
  }
  eb_child child = {.pid = -1, .pidfd = -1, .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1,
                    .report_fd = -1};
  int fds[4] = {-1, -1, -1, -1};
  ret = eb_plan_pipes(req, &child, fds, err);
  if (ret < 0) {
    close(job_fd);
    jail_sandbox_discard(jr, sb);
    return ret;
  }
  int send[5] = {job_fd, fds[3], fds[1], fds[2], fds[0]};
  int sent = jail_send(sb->ctl_fd, fds[0] >= 0 ? "J1" : "J0", 2, send, fds[0] >= 0 ? 5 : 4);
  close(job_fd);
  eb_plan_close_fds(fds);
  if (sent < 0) {
    eb_child_close_fds(&child);
    jail_sandbox_discard(jr, sb);
    return 1;
  }
  /* Wait for the acknowledgement (checked in jail_supervise): sleeping
   * here lets the sandbox run at once, which measured faster than starting
   * to supervise meanwhile. A sandbox that neither takes the job nor dies
   * within 5 s (or the request's wall time) is discarded. */
  struct pollfd p = {.fd = sb->ctl_fd, .events = POLLIN};
  int r;
  do
    r = poll(&p, 1, (int)EB_MIN(plan->limits.wall_ms, 5000));
  while (r < 0 && errno == EINTR);
  if (r == 0) {
    eb_child_close_fds(&child);
    jail_sandbox_discard(jr, sb);
    return 1;
  }
  return jail_supervise(jr, ctx, req, plan, sb, &child, oom_before, true, res, err);
}

static int jail_execute(eb_runtime *rt, eb_ctx *ctx, const eb_exec_request *req,
                        eb_exec_result *res, eb_error **err) {
  jail_runtime *jr = rt->impl;
  int64_t start = eb_now_ns();
  jail_reap_pending(jr, false);
  int ret = jail_check_limits(jr, &req->limits, err);
  if (ret < 0)
    return ret;
  eb_plan plan;
  ret = eb_plan_build(req, JAIL_WORKDIR, "/tmp", &plan, err);
  if (ret < 0)
    return ret;
  ret = 1;
  if (jr->pool != NULL)
    ret = jail_pool_execute(jr->pool, ctx, req, &plan, res, err);
  if (ret == 1)
    ret = jail_run_cold(jr, ctx, req, &plan, res, err);
  eb_plan_free(&plan);
  res->duration_ms = (eb_now_ns() - start) / 1000000;
  return ret;
}

/* arg_start, arg_end, env_start, env_end: fields 48-51 of /proc/self/stat. */
static void read_arg_area(jail_runtime *jr) {
  char buf[2048];
  int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  ssize_t n = eb_read_retry(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0)
    return;
  buf[n] = '\0';
  char *p = strrchr(buf, ')'); /* the command name may hold spaces */
  if (p == NULL)
    return;
  unsigned long long v[4];
  int field = 2;
  char *save = NULL;
  for (char *tok = strtok_r(p + 1, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
    field++;
    if (field >= 48 && field <= 51)
      v[field - 48] = strtoull(tok, NULL, 10);
    if (field == 51) {
      jr->arg_start = (uintptr_t)v[0];
      jr->arg_end = (uintptr_t)v[1];
      jr->env_start = (uintptr_t)v[2];
      jr->env_end = (uintptr_t)v[3];
      return;
    }
  }
}

static int read_last_cap(void) {
  FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
  int v = -1;
  if (f != NULL) {
    if (fscanf(f, "%d", &v) != 1)
      v = -1;
    fclose(f);
  }
  return v >= 0 ? v : 63; /* unknown: try them all, EINVAL past the last is ignored */
}

static int parse_binds(jail_runtime *jr, eb_error **err) {
  const char *spec = getenv("EXECBOX_JAIL_BINDS");
  if (spec == NULL || spec[0] == '\0')
    return 0;
  cleanup_free char *copy = strdup(spec);
  if (copy == NULL)
    return eb_error_set(err, ENOMEM, "EXECBOX_JAIL_BINDS");
  for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *colon = strchr(tok, ':');
    const char *dst = tok;
    if (colon != NULL) {
      *colon = '\0';
      dst = colon + 1;
    }
    if (tok[0] != '/' || dst[0] != '/' || strstr(tok, "..") || strstr(dst, ".."))
      return eb_error_set(err, EB_ERR_USAGE,
                          "EXECBOX_JAIL_BINDS: `%s` is not SRC[:DST] with absolute paths", tok);
    if (strncmp(tok, JAIL_NEWROOT "/", strlen(JAIL_NEWROOT) + 1) == 0 || strcmp(tok, JAIL_NEWROOT) == 0)
      return eb_error_set(err, EB_ERR_USAGE,
                          "EXECBOX_JAIL_BINDS: `%s`: sources under " JAIL_NEWROOT
                          " cannot be bound (the new root is assembled there)", tok);
    if (strcmp(dst, "/") == 0 || strncmp(dst, "/proc", 5) == 0 || strncmp(dst, "/dev", 4) == 0 ||
        strncmp(dst, JAIL_WORKDIR, strlen(JAIL_WORKDIR)) == 0 || strncmp(dst, "/tmp", 4) == 0)
      return eb_error_set(err, EB_ERR_USAGE, "EXECBOX_JAIL_BINDS: cannot bind over `%s`", dst);
    jail_bind *nb = realloc(jr->binds, (jr->n_binds + 1) * sizeof(*nb));
    if (nb == NULL)
      return eb_error_set(err, ENOMEM, "EXECBOX_JAIL_BINDS");
    jr->binds = nb;
    jr->binds[jr->n_binds].src = strdup(tok);
    jr->binds[jr->n_binds].dst = strdup(dst);
    jr->n_binds++;
    if (access(tok, F_OK) < 0)
      return eb_error_set(err, errno, "EXECBOX_JAIL_BINDS: `%s`", tok);
  }
  return 0;
}

static void jail_destroy(eb_runtime *rt) {
  jail_runtime *jr = rt->impl;
  if (jr != NULL) {
    /* The pool first: its sandboxes go through the reaper below. */
    jail_pool_free(jr->pool);
    jr->pool = NULL;
    pthread_mutex_lock(&jr->lock);
    jr->reaper_stop = true;
    pthread_cond_signal(&jr->reaper_wake);
    bool started = jr->reaper_started;
    pthread_mutex_unlock(&jr->lock);
    if (started)
      pthread_join(jr->reaper, NULL);
    jail_reap_pending(jr, true);
    pthread_cond_destroy(&jr->reaper_wake);
    free(jr->pending);
    for (size_t i = 0; i < jr->n_idle; i++) {
      eb_error *e = NULL;
      jail_cgroup_destroy(&jr->idle[i], &e);
      eb_error_free(e);
    }
    pthread_mutex_destroy(&jr->lock);
    jail_seccomp_free(&jr->seccomp);
    jail_cgroup_env_free(&jr->cgroups);
    free(jr->cgroups.why_not);
    for (size_t i = 0; i < jr->n_binds; i++) {
      free(jr->binds[i].src);
      free(jr->binds[i].dst);
    }
    free(jr->binds);
    free(jr);
  }
  free(rt);
}

/* Usable here? Reads the kernel's switches for a precise reason, then runs
 * a real (trivial) execution: the only proof that every step works. */
static int jail_probe(eb_runtime *rt, char **detail, eb_error **err) {
  jail_runtime *jr = rt->impl;
  FILE *f = fopen("/proc/sys/user/max_user_namespaces", "re");
  int max_ns = -1;
  if (f != NULL) {
    if (fscanf(f, "%d", &max_ns) != 1)
      max_ns = -1;
    fclose(f);
  }
  if (max_ns == 0)
    return eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE,
                        "user namespaces are disabled (user.max_user_namespaces = 0); "
                        "raise it with sysctl, or use SANDBOX_ENV=docker");
  if (geteuid() != 0) {
    f = fopen("/proc/sys/kernel/unprivileged_userns_clone", "re");
    int v = 1;
    if (f != NULL) {
      if (fscanf(f, "%d", &v) != 1)
        v = 1;
      fclose(f);
    }
    if (v == 0)
      return eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE,
                          "unprivileged user namespaces are disabled "
                          "(kernel.unprivileged_userns_clone = 0); enable them or run as root");
    f = fopen("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "re");
    v = 0;
    if (f != NULL) {
      if (fscanf(f, "%d", &v) != 1)
        v = 0;
      fclose(f);
    }
    if (v == 1)
      return eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE,
                          "AppArmor restricts unprivileged user namespaces "
                          "(kernel.apparmor_restrict_unprivileged_userns = 1); "
                          "add an AppArmor profile granting `userns` to execbox, or run as root");
  }
  eb_exec_request req = {.language = "sh", .code = ":\n"};
  eb_exec_result res;
  memset(&res, 0, sizeof(res));
  if (jail_execute(rt, NULL, &req, &res, err) < 0)
    return eb_error_wrap(err, "trial run failed");
  int status = res.status;
  eb_exec_result_clear(&res);
  if (status != EB_STATUS_OK)
    return eb_error_set(err, EB_ERR_RUNTIME_UNAVAILABLE, "trial run ended with status %s",
                        eb_status_name(status));
  const char *mech = jr->cgroups.mode == JAIL_CGROUP_V2   ? "cgroup v2 (memory, pids, cpu)"
                     : jr->cgroups.mode == JAIL_CGROUP_V1 ? "cgroup v1 (memory, pids, cpu)"
                                                          : "rlimits (RLIMIT_DATA, RLIMIT_NPROC)";
  char pool[512] = "";
  if (jr->pool != NULL) {
    pool[0] = ';';
    pool[1] = ' ';
    jail_pool_describe(jr->pool, pool + 2, sizeof(pool) - 2);
  }
  if (asprintf(detail, "namespaces user,pid,mnt,net,ipc,uts,cgroup; seccomp %u+%u insns; limits: %s%s%s%s%s%s",
               jr->seccomp.len, jr->seccomp.personality_len, mech,
               jr->cgroups.mode != JAIL_CGROUP_NONE && !jr->cgroups.cpu ? " (no cpu quota: controller not delegated)" : "",
               jr->cgroups.swap_unbounded ? " (swap not limited: memory limits refused)" : "",
               jr->cgroups.mode == JAIL_CGROUP_NONE ? " - " : "",
               jr->cgroups.mode == JAIL_CGROUP_NONE && jr->cgroups.why_not ? jr->cgroups.why_not
                                                                           : "",
               pool) < 0)
    *detail = NULL;
  return 0;
}

static int jail_enable_pool(eb_runtime *rt, const eb_pool_options *opts, eb_error **err) {
  jail_runtime *jr = rt->impl;
  if (jr->pool != NULL)
    return 0; /* already running: the first caller's settings stay */
  return jail_pool_new(jr, opts, &jr->pool, err);
}

static int jail_pool_stats_op(eb_runtime *rt, eb_pool_stats *stats) {
  jail_runtime *jr = rt->impl;
  if (jr->pool == NULL)
    return 1;
  jail_pool_stats(jr->pool, stats);
  return 0;
}

const eb_runtime_ops eb_jail_ops = {
    .name = "jail",
    .description = "Linux namespace sandbox, no daemon (the default)",
    .execute = jail_execute,
    .destroy = jail_destroy,
    .probe = jail_probe,
    .enable_pool = jail_enable_pool,
    .pool_stats = jail_pool_stats_op,
};

int eb_jail_runtime_new(eb_runtime **out, eb_error **err) {
  eb_runtime *rt = calloc(1, sizeof(*rt));
  jail_runtime *jr = calloc(1, sizeof(*jr));
  if (rt == NULL || jr == NULL) {
    free(rt);
    free(jr);
    return eb_error_set(err, ENOMEM, "allocate jail runtime");
  }
  rt->ops = &eb_jail_ops;
  rt->impl = jr;
  pthread_mutex_init(&jr->lock, NULL);
  pthread_cond_init(&jr->reaper_wake, NULL);
  int ret = jail_seccomp_compile(&jr->seccomp, err);
  if (ret == 0)
    ret = parse_binds(jr, err);
  if (ret < 0) {
    jail_destroy(rt);
    return eb_error_wrap(err, "jail runtime");
  }
  jr->last_cap = read_last_cap();
  read_arg_area(jr);
  jail_cgroup_detect(&jr->cgroups);
  *out = rt;
  return 0;
}
