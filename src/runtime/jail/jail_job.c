/* The job of a pooled sandbox: what one execution needs (argv of each
 * step, environment, code, rlimits and, for the Python fast path, the
 * message for the waiting interpreter), written by the parent into a
 * sealed memfd that travels to the sandbox with the job message. The
 * waiting init maps it privately and points into it: it runs in a raw
 * clone of a possibly multithreaded process and may not allocate.
 *
 * Layout: a jail_job_wire header; NUL-terminated strings (the code's file
 * name, then per step its path and argv, then the environment); the code;
 * the interpreter's message; and a zeroed area where the init builds the
 * eb_step array and the argv/envp pointer arrays. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/syscalls.h"
#include "core/util.h"
#include "runtime/jail/jail.h"

#define JAIL_JOB_MAGIC 0x424a4245u /* "EBJB" */
/* The interpreter's message goes over a SOCK_SEQPACKET socket in one
 * datagram; larger argv/environments take the cold path. */
#define JAIL_ZMSG_MAX (128 * 1024)

typedef struct jail_job_wire {
  uint32_t magic;
  uint32_t n_steps;
  uint32_t argc[2];
  uint32_t envc;
  uint32_t reserved;
  jail_rlimits rl;
  uint64_t strings_off, strings_len;
  uint64_t code_off, code_len;
  uint64_t zmsg_off, zmsg_len;
  uint64_t ptrs_off, ptrs_len;
  uint64_t total;
} jail_job_wire;

static size_t strv_len(char *const *v) {
  size_t n = 0;
  while (v != NULL && v[n] != NULL)
    n++;
  return n;
}

/* Appends s and its NUL at *p. */
static char *put_str(char *p, const char *s) {
  size_t n = strlen(s) + 1;
  memcpy(p, s, n);
  return p + n;
}

static bool env_affects_startup(const char *entry) {
  static const char *const prefixes[] = {"PYTHON", "LC_", "LANG=", "LANGUAGE=", "HOME="};
  for (size_t i = 0; i < EB_ARRAY_SIZE(prefixes); i++)
    if (strncmp(entry, prefixes[i], strlen(prefixes[i])) == 0)
      return true;
  return false;
}

/* argc, argv, environment: each NUL-terminated. */
static size_t python_message_size(const eb_plan *plan) {
  char *const *argv = plan->argvs[plan->n_steps - 1];
  size_t argc = strv_len(argv);
  char head[32];
  size_t total = (size_t)snprintf(head, sizeof(head), "%zu", argc) + 1;
  for (size_t i = 0; i < argc; i++)
    total += strlen(argv[i]) + 1;
  for (size_t i = 0; plan->envp[i] != NULL; i++)
    total += strlen(plan->envp[i]) + 1;
  return total;
}

bool jail_python_fast_ok(const eb_plan *plan, const eb_exec_request *req) {
  if (strcmp(plan->lang->name, "python") != 0 || plan->n_steps != 1)
    return false;
  char *const *argv = plan->argvs[0];
  if (strv_len(argv) < 3 || strcmp(argv[0], "python3") != 0 || strcmp(argv[1], "-u") != 0 ||
      strcmp(argv[2], plan->lang->file_name) != 0)
    return false;
  /* The interpreter read these at its start-up, before the request was
   * known: a request that sets them runs cold, where they take effect. */
  for (size_t i = 0; req->env != NULL && req->env[i] != NULL; i++)
    if (env_affects_startup(req->env[i]))
      return false;
  return python_message_size(plan) <= JAIL_ZMSG_MAX;
}

char *jail_python_message(const eb_plan *plan, size_t *len) {
  char *const *argv = plan->argvs[plan->n_steps - 1];
  size_t argc = strv_len(argv);
  char head[32];
  snprintf(head, sizeof(head), "%zu", argc);
  size_t total = python_message_size(plan);
  if (total > JAIL_ZMSG_MAX)
    return NULL;
  char *msg = malloc(total);
  if (msg == NULL)
    return NULL;
  char *p = put_str(msg, head);
  for (size_t i = 0; i < argc; i++)
    p = put_str(p, argv[i]);
  for (size_t i = 0; plan->envp[i] != NULL; i++)
    p = put_str(p, plan->envp[i]);
  *len = total;
  return msg;
}

int jail_job_pack(const eb_plan *plan, const eb_exec_request *req, const jail_rlimits *rl,
                  bool fast, int *fd, eb_error **err) {
  *fd = -1;
  jail_job_wire w;
  memset(&w, 0, sizeof(w));
  w.magic = JAIL_JOB_MAGIC;
  w.n_steps = (uint32_t)plan->n_steps;
  w.rl = *rl;
  size_t strings = strlen(plan->lang->file_name) + 1;
  size_t ptrs = 0;
  for (size_t i = 0; i < plan->n_steps; i++) {
    w.argc[i] = (uint32_t)strv_len(plan->steps[i].argv);
    strings += strlen(plan->steps[i].path) + 1;
    for (size_t j = 0; j < w.argc[i]; j++)
      strings += strlen(plan->steps[i].argv[j]) + 1;
    ptrs += w.argc[i] + 1;
  }
  w.envc = (uint32_t)strv_len(plan->envp);
  for (size_t i = 0; i < w.envc; i++)
    strings += strlen(plan->envp[i]) + 1;
  ptrs += w.envc + 1;

  cleanup_free char *zmsg = NULL;
  size_t zlen = 0;
  if (fast && (zmsg = jail_python_message(plan, &zlen)) == NULL)
    return eb_error_set(err, ENOMEM, "python fast path: build the message");

  w.strings_off = sizeof(w);
  w.strings_len = strings;
  w.code_off = w.strings_off + strings;
  w.code_len = req->code_len ? req->code_len : strlen(req->code);
  w.zmsg_off = w.code_off + w.code_len;
  w.zmsg_len = zlen;
  w.ptrs_off = (w.zmsg_off + w.zmsg_len + 15) & ~(uint64_t)15;
  w.ptrs_len = 2 * sizeof(eb_step) + ptrs * sizeof(char *);
  w.total = w.ptrs_off + w.ptrs_len;

  cleanup_free char *head = malloc(sizeof(w) + strings);
  if (head == NULL)
    return eb_error_set(err, ENOMEM, "pack the job");
  memcpy(head, &w, sizeof(w));
  char *p = put_str(head + sizeof(w), plan->lang->file_name);
  for (size_t i = 0; i < plan->n_steps; i++) {
    p = put_str(p, plan->steps[i].path);
    for (size_t j = 0; j < w.argc[i]; j++)
      p = put_str(p, plan->steps[i].argv[j]);
  }
  for (size_t i = 0; i < w.envc; i++)
    p = put_str(p, plan->envp[i]);

  int m = memfd_create("execbox-job", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (m < 0)
    return eb_error_set(err, errno, "memfd_create for the job");
  struct iovec iov[3] = {{head, sizeof(w) + strings}, {(void *)req->code, w.code_len},
                         {zmsg, zlen}};
  size_t want = sizeof(w) + strings + w.code_len + zlen;
  ssize_t n;
  do
    n = writev(m, iov, zlen > 0 ? 3 : 2);
  while (n < 0 && errno == EINTR);
  /* Short writes to a memfd happen only when memory runs out. */
  if (n != (ssize_t)want || ftruncate(m, (off_t)w.total) < 0 ||
      fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
    int saved = n < 0 ? errno : errno ? errno : ENOSPC;
    close(m);
    return eb_error_set(err, saved, "write the job");
  }
  *fd = m;
  return 0;
}

/* The next NUL-terminated string in [*p, end), or NULL. */
static const char *next_str(const char **p, const char *end) {
  const char *s = *p;
  const char *nul = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
  if (nul == NULL)
    return NULL;
  *p = nul + 1;
  return s;
}

static bool in_bounds(uint64_t off, uint64_t len, uint64_t size) {
  return off <= size && len <= size - off;
}

int jail_job_unpack(int fd, jail_job *job) {
  struct stat st;
  if (fstat(fd, &st) < 0)
    return -1;
  uint64_t size = (uint64_t)st.st_size;
  if (size < sizeof(jail_job_wire)) {
    errno = EPROTO;
    return -1;
  }
  char *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (base == MAP_FAILED)
    return -1;
  jail_job_wire w;
  memcpy(&w, base, sizeof(w));
  uint64_t ptrs = (uint64_t)w.argc[0] + 1 + (w.n_steps > 1 ? (uint64_t)w.argc[1] + 1 : 0) +
                  (uint64_t)w.envc + 1;
  if (w.magic != JAIL_JOB_MAGIC || w.n_steps < 1 || w.n_steps > 2 || w.total != size ||
      !in_bounds(w.strings_off, w.strings_len, size) || !in_bounds(w.code_off, w.code_len, size) ||
      !in_bounds(w.zmsg_off, w.zmsg_len, size) || !in_bounds(w.ptrs_off, w.ptrs_len, size) ||
      w.ptrs_off % 16 != 0 || w.argc[0] > (1u << 20) || w.argc[1] > (1u << 20) ||
      w.envc > (1u << 20) || w.ptrs_len < 2 * sizeof(eb_step) + ptrs * sizeof(char *)) {
    munmap(base, size);
    errno = EPROTO;
    return -1;
  }
  const char *p = base + w.strings_off, *end = p + w.strings_len;
  eb_step *steps = (eb_step *)(void *)(base + w.ptrs_off);
  char **arr = (char **)(void *)(steps + 2);
  memset(job, 0, sizeof(*job));
  job->file_name = next_str(&p, end);
  bool ok = job->file_name != NULL && strchr(job->file_name, '/') == NULL;
  for (uint32_t i = 0; ok && i < w.n_steps; i++) {
    steps[i].path = next_str(&p, end);
    steps[i].argv = arr;
    ok = steps[i].path != NULL;
    for (uint32_t j = 0; ok && j < w.argc[i]; j++)
      ok = (*arr++ = (char *)next_str(&p, end)) != NULL;
    *arr++ = NULL;
  }
  job->envp = arr;
  for (uint32_t i = 0; ok && i < w.envc; i++)
    ok = (*arr++ = (char *)next_str(&p, end)) != NULL;
  *arr = NULL;
  if (!ok) {
    munmap(base, size);
    errno = EPROTO;
    return -1;
  }
  job->steps = steps;
  job->n_steps = w.n_steps;
  job->code = base + w.code_off;
  job->code_len = w.code_len;
  job->zmsg = w.zmsg_len > 0 ? base + w.zmsg_off : NULL;
  job->zmsg_len = w.zmsg_len;
  job->rl = w.rl;
  return 0;
}
