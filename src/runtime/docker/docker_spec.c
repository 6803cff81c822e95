#include "runtime/docker/docker_spec.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/capture.h"

static json_t *ulimit(const char *name, long long value) {
  return json_pack("{s:s, s:I, s:I}", "Name", name, "Soft", (json_int_t)value, "Hard",
                   (json_int_t)value);
}

char *docker_create_body(const docker_spec *spec) {
  const eb_limits *l = &spec->limits;
  char tmp_opts[160], work_opts[160], user[48], pid[24], start[24];
  /* exec: C programs are compiled into the work dir and run from there;
   * the tmpfs itself is what bounds what the program can write. */
  snprintf(tmp_opts, sizeof(tmp_opts), "rw,exec,nosuid,nodev,size=%lld,mode=1777",
           (long long)l->tmp_bytes);
  if (spec->podman)
    snprintf(work_opts, sizeof(work_opts), "rw,exec,nosuid,nodev,size=%lld,mode=1777",
             (long long)l->tmp_bytes);
  else
    snprintf(work_opts, sizeof(work_opts), "rw,exec,nosuid,nodev,size=%lld,uid=%u,gid=%u,mode=0700",
             (long long)l->tmp_bytes, spec->uid, spec->gid);
  snprintf(user, sizeof(user), "%u:%u", spec->uid, spec->gid);
  snprintf(pid, sizeof(pid), "%ld", spec->pid);
  snprintf(start, sizeof(start), "%lld", spec->start_time);

  json_t *ulimits = json_array();
  json_array_append_new(ulimits, ulimit("core", 0));
  json_array_append_new(ulimits, ulimit("nofile", l->open_files));
  json_array_append_new(ulimits, ulimit("fsize", l->file_size_bytes));
  /* RLIMIT_CPU only when asked: the wall limit is enforced from outside, and
   * a default tied to it would make every timeout a different container. */
  if (l->cpu_ms > 0)
    json_array_append_new(ulimits, ulimit("cpu", (l->cpu_ms + 999) / 1000));
  /* RLIMIT_NPROC counts every process of the uid on the host, so it is
   * generous: the pids limit is what bounds the container. */
  if (spec->podman)
    json_array_append_new(ulimits, ulimit("nproc", l->pids > 4096 ? l->pids : 4096));

  json_t *host = json_pack(
      "{s:s, s:I, s:I, s:I, s:I, s:b, s:{s:s, s:s}, s:I, s:[s], s:[s], s:b, s:o, s:b, s:b,"
      " s:{s:s}}",
      "NetworkMode", "none",
      "Memory", (json_int_t)l->memory_bytes,
      "MemorySwap", (json_int_t)l->memory_bytes, /* equal: no swap */
      "NanoCpus", (json_int_t)(l->cpu_milli * 1000000),
      "PidsLimit", (json_int_t)l->pids,
      "ReadonlyRootfs", 1,
      "Tmpfs", "/tmp", tmp_opts, DOCKER_WORKDIR, work_opts,
      "ShmSize", (json_int_t)l->tmp_bytes,
      "CapDrop", "ALL",
      "SecurityOpt", "no-new-privileges",
      /* An init as pid 1: the program gets ordinary signal semantics and
       * its orphans are reaped. */
      "Init", 1,
      "Ulimits", ulimits,
      "AutoRemove", 0, /* removed by us on every path, after its status is read */
      "Privileged", 0,
      "LogConfig", "Type", "none" /* output goes over attach only, never to disk */);
  json_t *body = json_pack(
      "{s:s, s:[], s:[s, s, s], s:s, s:s, s:s, s:[s, s, s, s, s], s:b, s:b, s:b, s:b, s:b,"
      " s:b, s:{s:s, s:s, s:s, s:s, s:s, s:s}, s:o}",
      "Image", spec->image,
      "Entrypoint", /* an empty list overrides the image's entrypoint */
      "Cmd", "/bin/sh", "-c", DOCKER_BOOT,
      "User", user,
      "WorkingDir", DOCKER_WORKDIR,
      "Hostname", "sandbox",
      "Env", "PATH=" EB_SANDBOX_PATH, "HOME=" DOCKER_WORKDIR, "TMPDIR=/tmp", "LANG=C.UTF-8",
      "PYTHONDONTWRITEBYTECODE=1",
      "OpenStdin", 1,
      "StdinOnce", 1, /* our half-close is the program's EOF */
      "AttachStdin", 1,
      "AttachStdout", 1,
      "AttachStderr", 1,
      "Tty", 0,
      "Labels", "execbox", spec->owner, "execbox.boot", spec->boot_id, "execbox.pidns",
      spec->pidns ? spec->pidns : "", "execbox.pid", pid, "execbox.start", start,
      "execbox.version", EXECBOX_VERSION,
      "HostConfig", host);
  if (body == NULL)
    return NULL;
  char *s = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref(body);
  return s;
}

/* Appends s single-quoted for the shell: 'it'\''s'. */
static int append_quoted(eb_buf *b, const char *s) {
  if (eb_buf_append(b, "'", 1) < 0)
    return -1;
  for (const char *p = s; *p != '\0'; p++) {
    int r = *p == '\'' ? eb_buf_append(b, "'\\''", 4) : eb_buf_append(b, p, 1);
    if (r < 0)
      return -1;
  }
  return eb_buf_append(b, "'", 1);
}

static int appendf(eb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int appendf(eb_buf *b, const char *fmt, ...) {
  char *s = NULL;
  va_list ap;
  va_start(ap, fmt);
  int n = vasprintf(&s, fmt, ap);
  va_end(ap);
  if (n < 0)
    return -1;
  int r = eb_buf_append(b, s, (size_t)n);
  free(s);
  return r;
}

static bool shell_name(const char *s, size_t len) {
  if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return false;
  }
  return true;
}

static int append_argv(eb_buf *b, const char *const *argv, const char *const *extra) {
  int ok = 0;
  for (const char *const *p = argv; *p != NULL; p++)
    ok |= eb_buf_append(b, " ", 1) | append_quoted(b, *p);
  for (const char *const *p = extra; p != NULL && *p != NULL; p++)
    ok |= eb_buf_append(b, " ", 1) | append_quoted(b, *p);
  return ok;
}

/* The checks that the image has a program: a clear error rather than sh's
 * "not found" as the program's output. */
static int append_require(eb_buf *b, const char *program) {
  if (strncmp(program, "./", 2) == 0)
    return 0;
  int ok = eb_buf_append(b, "command -v ", 11) | append_quoted(b, program);
  ok |= appendf(b, " >/dev/null 2>&1 || m 'missing %s' 127\n", program);
  return ok;
}

int docker_boot_script(const eb_language *lang, size_t code_len, const char *const *args,
                       const char *const *env, const char *nonce, char **out, size_t *out_len,
                       eb_error **err) {
  for (const char *const *e = env; e != NULL && *e != NULL; e++) {
    const char *eq = strchr(*e, '=');
    if (eq == NULL || !shell_name(*e, (size_t)(eq - *e)))
      return eb_error_set(err, EB_ERR_USAGE,
                          "environment entry `%s` is not NAME=value with NAME a shell identifier",
                          *e);
  }
  eb_buf b = {0};
  int ok = 0;
  /* The acknowledgement, then a helper that reports a step that failed as
   * the last bytes of stdout and exits. */
  ok |= appendf(&b, "printf '%%s\\n' '%s'\n", nonce);
  ok |= appendf(&b, "m() { printf '%%s:%%s' '%s' \"$1\"; exit \"$2\"; }\n", nonce);
  ok |= eb_buf_append(&b, "cd " DOCKER_WORKDIR " || m 'setup cd' 125\n",
                      strlen("cd " DOCKER_WORKDIR " || m 'setup cd' 125\n"));
  for (const char *const *e = env; e != NULL && *e != NULL; e++) {
    const char *eq = strchr(*e, '=');
    ok |= appendf(&b, "export %.*s=", (int)(eq - *e), *e) | append_quoted(&b, eq + 1) |
          eb_buf_append(&b, "\n", 1);
  }
  /* The code follows the script on stdin: exactly code_len bytes. */
  if (code_len > 0)
    ok |= appendf(&b, "dd of=%s bs=%zu count=1 iflag=fullblock 2>/dev/null || m 'setup write code' 125\n",
                  lang->file_name, code_len);
  else
    ok |= appendf(&b, ": >%s || m 'setup write code' 125\n", lang->file_name);
  if (lang->compile_argv != NULL) {
    ok |= append_require(&b, lang->compile_argv[0]);
    ok |= append_argv(&b, lang->compile_argv, NULL);
    ok |= eb_buf_append(&b, " || m compile $?\n", strlen(" || m compile $?\n"));
  }
  ok |= append_require(&b, lang->run_argv[0]);
  ok |= eb_buf_append(&b, "set --", 6) | append_argv(&b, lang->run_argv, args);
  ok |= eb_buf_append(&b, "\nexec \"$@\"\n", strlen("\nexec \"$@\"\n"));
  if (ok != 0) {
    free(b.data);
    return eb_error_set(err, ENOMEM, "build the bootstrap script");
  }
  *out = b.data;
  *out_len = b.len;
  return 0;
}
