#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int selected(const char *name, int argc, char **argv) {
  if (argc < 2)
    return 1;
  for (int i = 1; i < argc; i++)
    if (fnmatch(argv[i], name, 0) == 0)
      return 1;
  return 0;
}

/* Waits for pid up to timeout_ms. Returns 1 and *status when it exited, 0 on timeout. */
static int wait_with_timeout(pid_t pid, int64_t timeout_ms, int *status) {
  int64_t end = mono_ms() + timeout_ms;
  int pidfd = -1;
#ifdef SYS_pidfd_open
  pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
  for (;;) {
    pid_t w = waitpid(pid, status, WNOHANG);
    if (w == pid) {
      if (pidfd >= 0)
        close(pidfd);
      return 1;
    }
    if (w < 0 && errno != EINTR) {
      perror("runner: waitpid");
      abort();
    }
    int64_t left = end - mono_ms();
    if (left <= 0)
      break;
    if (pidfd >= 0) {
      struct pollfd p = {.fd = pidfd, .events = POLLIN};
      poll(&p, 1, left > 1000 ? 1000 : (int)left);
    } else {
      struct timespec ts = {0, 5 * 1000000L};
      nanosleep(&ts, NULL);
    }
  }
  if (pidfd >= 0)
    close(pidfd);
  return 0;
}

int eb_test_run(const char *group, const struct CMUnitTest *tests, size_t n, int argc,
                char **argv) {
  const char *t = getenv("EB_TEST_TIMEOUT");
  int64_t timeout_s = t != NULL && atoi(t) > 0 ? atoi(t) : 30;
  const char *nofork = getenv("EB_TEST_NOFORK");
  int failed = 0, ran = 0;

  for (size_t i = 0; i < n; i++) {
    if (!selected(tests[i].name, argc, argv))
      continue;
    ran++;
    if (nofork != NULL && strcmp(nofork, "1") == 0) {
      if (_cmocka_run_group_tests(group, &tests[i], 1, NULL, NULL) != 0)
        failed++;
      continue;
    }
    fflush(stdout);
    fflush(stderr);
    int64_t start = mono_ms();
    pid_t pid = fork();
    if (pid < 0) {
      perror("runner: fork");
      return 2;
    }
    if (pid == 0) {
      /* Its own process group, so that a timeout can end what it started. */
      setpgid(0, 0);
      int rc = _cmocka_run_group_tests(group, &tests[i], 1, NULL, NULL);
      fflush(stdout);
      exit(rc == 0 ? 0 : 1);
    }
    int status = 0;
    const char *verdict;
    char detail[64] = "";
    if (!wait_with_timeout(pid, timeout_s * 1000, &status)) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      verdict = "TIMED OUT";
      snprintf(detail, sizeof(detail), " after %lld s", (long long)timeout_s);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      verdict = "PASSED";
    } else if (WIFEXITED(status)) {
      verdict = "FAILED";
      snprintf(detail, sizeof(detail), " (exit %d)", WEXITSTATUS(status));
    } else {
      verdict = "CRASHED";
      snprintf(detail, sizeof(detail), " (signal %d, %s)", WTERMSIG(status),
               strsignal(WTERMSIG(status)));
    }
    if (strcmp(verdict, "PASSED") != 0)
      failed++;
    printf("[ RUNNER ] %-40s %s%s in %lld ms\n", tests[i].name, verdict, detail,
           (long long)(mono_ms() - start));
    fflush(stdout);
  }
  if (ran == 0) {
    fprintf(stderr, "runner: no test matches the given names\n");
    return 2;
  }
  printf("[ RUNNER ] %s: %d of %d test(s) failed\n", group, failed, ran);
  return failed == 0 ? 0 : 1;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int eb_test_list_fds(int *fds, int max) {
  DIR *d = opendir("/proc/self/fd");
  assert_non_null(d);
  int self = dirfd(d), n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.')
      continue;
    int fd = atoi(de->d_name);
    if (fd == self)
      continue;
    if (n < max)
      fds[n] = fd;
    n++;
  }
  closedir(d);
  qsort(fds, (size_t)(n < max ? n : max), sizeof(int), cmp_int);
  return n;
}

char *eb_test_mkdtemp(const char *prefix) {
  char *path = NULL;
  assert_true(asprintf(&path, "/tmp/%s-XXXXXX", prefix) > 0);
  assert_non_null(mkdtemp(path));
  return path;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)ftw;
  if (flag == FTW_DP || flag == FTW_D || flag == FTW_DNR)
    return rmdir(path) < 0 && errno != ENOENT ? -1 : 0;
  return unlink(path) < 0 && errno != ENOENT ? -1 : 0;
}

void eb_test_rmtree(const char *path) {
  if (path != NULL)
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int eb_test_dir_entries(const char *path) {
  DIR *d = opendir(path);
  if (d == NULL)
    return -1;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
      n++;
  closedir(d);
  return n;
}

/* Reads /proc/<pid>/stat: state and ppid. Returns 0 or -1 (process gone). */
static int proc_stat(int pid, char *state, int *ppid) {
  char path[64], buf[512];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t r = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (r <= 0)
    return -1;
  buf[r] = '\0';
  /* comm may contain spaces and parentheses: parse after the last ')'. */
  char *p = strrchr(buf, ')');
  if (p == NULL || sscanf(p + 1, " %c %d", state, ppid) != 2)
    return -1;
  return 0;
}

static int for_each_pid(int (*fn)(int pid, const void *arg), const void *arg, int *pids, int max) {
  DIR *d = opendir("/proc");
  assert_non_null(d);
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] < '1' || de->d_name[0] > '9')
      continue;
    int pid = atoi(de->d_name);
    if (fn(pid, arg)) {
      if (n < max)
        pids[n] = pid;
      n++;
    }
  }
  closedir(d);
  return n;
}

static int is_live_child(int pid, const void *arg) {
  char state;
  int ppid;
  return proc_stat(pid, &state, &ppid) == 0 && ppid == *(const int *)arg && state != 'Z';
}

int eb_test_children_of(int ppid, int *pids, int max) {
  return for_each_pid(is_live_child, &ppid, pids, max);
}

static int cmdline_has(int pid, const void *arg) {
  char path[64], buf[4096];
  char state;
  int ppid;
  if (pid == getpid() || proc_stat(pid, &state, &ppid) < 0 || state == 'Z')
    return 0;
  snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t r = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (r <= 0)
    return 0;
  for (ssize_t i = 0; i < r; i++)
    if (buf[i] == '\0')
      buf[i] = ' ';
  buf[r] = '\0';
  return strstr(buf, (const char *)arg) != NULL;
}

int eb_test_find_cmdline(const char *needle, int *pids, int max) {
  return for_each_pid(cmdline_has, needle, pids, max);
}
