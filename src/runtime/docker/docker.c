/* The docker runtime: each execution in a fresh container of a Docker
 * Engine (or Podman's Docker-compatible service), over its API with
 * libcurl (docker_api.c): no docker CLI, no process spawned per call.
 *
 * One execution:
 *   1. a container (created now, or taken from the warm pool): network
 *      none, memory = memory+swap, CPU quota, pids limit, read-only root,
 *      size-limited tmpfs /tmp and work dir, all capabilities dropped,
 *      no-new-privileges, a non-root user, rlimits, an init as pid 1
 *      (docker_spec.c); its command is a bootstrap that reads the rest
 *      from stdin;
 *   2. attach (a hijacked connection: stdin one way, the multiplexed
 *      stdout/stderr the other), then start it — attached first, so no
 *      output is lost;
 *   3. send the script, the code and the request's stdin, then half-close:
 *      the program's stdin ends there (StdinOnce);
 *   4. decode the output into the result under the output cap, until the
 *      stream ends; the wall limit runs from the start;
 *   5. its exit status (wait; inspect for an OOM kill when it was killed);
 *   6. remove it — on every path: a timeout, a cancellation or the output
 *      cap kill it first, and an error of ours removes it too.
 *
 * Containers carry labels naming the process that made them; one left by an
 * execbox that died is removed by the next docker runtime on the host. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <unistd.h>

#include <execbox/docker.h>

#include "core/capture.h"
#include "core/http.h"
#include "core/language_internal.h"
#include "core/util.h"
#include "runtime/docker/docker_api.h"
#include "runtime/docker/docker_mux.h"
#include "runtime/docker/docker_pool.h"
#include "runtime/docker/docker_spec.h"
#include "runtime/runtimes.h"

#define MAX_LANGUAGES 16
#define DEFAULT_UID 65534
#define DEFAULT_GID 65534
/* Bounds of the daemon's own work (besides the caller's context). */
#define CREATE_TIMEOUT_MS 60000
#define START_TIMEOUT_MS 60000
#define SMALL_CALL_TIMEOUT_MS 30000
#define PULL_TIMEOUT_MS (15 * 60000)
#define PROBE_TIMEOUT_MS 3000
#define MAX_SYSTEM_ERROR 4096

typedef struct docker_runtime {
  docker_api api;
  char *images[MAX_LANGUAGES]; /* by index in the language table */
  unsigned uid, gid;
  bool pull;
  int pool_size;
  bool pool_size_set; /* by the C options or EXECBOX_DOCKER_POOL */
  bool pool_started;
  pthread_mutex_t mu; /* guards pool creation and the sweep */
  docker_pool *pool;
  bool pool_failed;
  bool swept;
  /* Who we are, in the containers' labels and names. */
  char boot_id[40];
  char pidns[32]; /* the inode of our pid namespace: pids mean something only in it */
  long pid;
  long long start_time;
  char owner[160];
  unsigned long instance; /* of docker runtimes in this process */
  atomic_ulong seq;       /* of containers of this runtime */
} docker_runtime;

static const struct {
  const char *language;
  const char *image;
} default_images[] = {
    {"python", "python:3.12-slim"},
    {"javascript", "node:22-slim"},
    {"bash", "debian:bookworm-slim"},
    {"sh", "debian:bookworm-slim"},
    {"c", "gcc:14"},
};

static atomic_ulong instances;

static size_t language_index(const eb_language *lang) {
  for (size_t i = 0; i < eb_language_count(); i++)
    if (eb_language_at(i) == lang)
      return i;
  return 0;
}

/* ------------------------------------------------------------ who we are */


/* When process pid started (field 22 of /proc/PID/stat, in clock ticks
 * since boot): with the boot id, what tells a process from a later one
 * with the same pid. -1 when there is no such process. */
static long long proc_start_time(long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "re");
  if (f == NULL)
    return -1;
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  buf[n] = '\0';
  fclose(f);
  /* Counted after the command's closing ')': it may hold blanks. */
  char *p = strrchr(buf, ')');
  for (int field = 2; p != NULL && field < 22; field++)
    p = strchr(p + 1, ' ');
  return p != NULL ? strtoll(p + 1, NULL, 10) : -1;
}

static void read_identity(docker_runtime *d) {
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
  if (f == NULL || fgets(d->boot_id, sizeof(d->boot_id), f) == NULL)
    snprintf(d->boot_id, sizeof(d->boot_id), "unknown");
  if (f != NULL)
    fclose(f);
  d->boot_id[strcspn(d->boot_id, "\n")] = '\0';
  /* "pid:[4026531836]": two execbox processes in different pid namespaces
   * (two containers sharing the daemon) see the same boot id, but not each
   * other's pids: each judges only containers made in its own namespace. */
  char link[64] = "";
  ssize_t ln = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
  link[ln > 0 ? ln : 0] = '\0';
  const char *open_br = strchr(link, '[');
  snprintf(d->pidns, sizeof(d->pidns), "%.*s", open_br ? (int)strcspn(open_br + 1, "]") : 7,
           open_br ? open_br + 1 : "unknown");
  d->pid = (long)getpid();
  d->start_time = EB_MAX(proc_start_time(d->pid), 0);
  d->instance = (unsigned long)atomic_fetch_add(&instances, 1);
  snprintf(d->owner, sizeof(d->owner), "%s/%ld/%lld/%lu", d->boot_id, d->pid, d->start_time,
           d->instance);
}

/* Whether the process that labelled a container still runs. */
static bool owner_alive(const char *pid_s, const char *start_s) {
  if (pid_s == NULL || start_s == NULL)
    return true; /* not ours to judge */
  errno = 0;
  long long start = proc_start_time(strtol(pid_s, NULL, 10));
  if (start < 0)
    return errno != ENOENT; /* hidden from us (hidepid=): not ours to judge */
  return start == strtoll(start_s, NULL, 10);
}

/* ------------------------------------------------------- container calls */

static void url_escape(const char *s, char *out, size_t size) {
  static const char hex[] = "0123456789ABCDEF";
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0' && o + 4 < size; p++) {
    if (isalnum(*p) || strchr("-._~", *p) != NULL) {
      out[o++] = (char)*p;
    } else {
      out[o++] = '%';
      out[o++] = hex[*p >> 4];
      out[o++] = hex[*p & 15];
    }
  }
  out[o] = '\0';
}

/* A short call on /containers/ID[suffix] under a context of its own: the
 * caller's may be cancelled already, and a kill or a removal must still
 * happen. */
static int detached_call(docker_runtime *d, const char *method, const char *id,
                         const char *suffix, long *status, json_t **reply, eb_error **err) {
  eb_ctx *ctx = NULL;
  if (eb_ctx_new(NULL, SMALL_CALL_TIMEOUT_MS, &ctx, err) < 0)
    return -1;
  char path[512];
  snprintf(path, sizeof(path), "/containers/%s%s", id, suffix);
  int r = docker_api_call(&d->api, ctx, method, path, NULL, SMALL_CALL_TIMEOUT_MS, status, reply,
                          err);
  eb_ctx_free(ctx);
  return r;
}

/* Kills (when force) and removes a container. */
static int container_remove(docker_runtime *d, const char *id, eb_error **err) {
  long status = 0;
  json_t *reply = NULL;
  int r = detached_call(d, "DELETE", id, "?force=1&v=1", &status, &reply, err);
  /* 404: already gone. 409 "removal already in progress": the daemon does it. */
  if (r == 0 && status != 204 && status != 404 && status != 409)
    r = eb_error_set(err, EB_ERR_SANDBOX, "remove container %.12s: %s (HTTP %ld)", id,
                     docker_api_message(reply), status);
  json_decref(reply);
  return r;
}

static void pool_remove(void *user, const char *id) {
  eb_error *err = NULL;
  container_remove(user, id, &err);
  eb_error_free(err);
}

static int container_kill(docker_runtime *d, const char *id) {
  long status = 0;
  return detached_call(d, "POST", id, "/kill", &status, NULL, NULL);
}

static int image_missing(docker_runtime *d, const char *image, eb_error **err) {
  return eb_error_set(err, EB_ERR_LANGUAGE_UNAVAILABLE,
                      "image `%s` is not present in the Docker daemon at %s: pull it "
                      "(`execbox run --pull`, EXECBOX_DOCKER_PULL=1, `docker pull`), build or "
                      "`docker import` it, or choose another with EXECBOX_DOCKER_IMAGE[_<LANG>]",
                      image, d->api.host);
}

/* POST /images/create: the daemon pulls, streaming progress; a failure
 * arrives in that stream as {"error": ...} under HTTP 200. */
static int image_pull(docker_runtime *d, eb_ctx *ctx, const char *image, eb_error **err) {
  char escaped[1024], path[1200];
  url_escape(image, escaped, sizeof(escaped));
  snprintf(path, sizeof(path), "/images/create?fromImage=%s", escaped);
  /* The reply is a sequence of JSON objects: read them ourselves. */
  int r = docker_api_negotiate(&d->api, ctx, err);
  if (r < 0)
    return r;
  cleanup_free char *url = NULL;
  if (asprintf(&url, "%s/v%s%s", d->api.base, d->api.version, path) < 0)
    return eb_error_set(err, ENOMEM, "allocate a URL");
  eb_http_request req = {.method = "POST", .url = url, .unix_socket = d->api.socket_path,
                         .timeout_ms = PULL_TIMEOUT_MS,
                         .transport_error = EB_ERR_RUNTIME_UNAVAILABLE};
  eb_http_response res;
  r = eb_http_do(ctx, &req, &res, err);
  if (r < 0) {
    eb_error_wrap(err, "pull image `%s`", image);
    eb_http_response_free(&res);
    return r;
  }
  const char *failure = NULL;
  json_t *last_error = NULL;
  if (res.body.data != NULL) {
    json_error_t jerr;
    size_t off = 0;
    while (off < res.body.len) {
      json_t *o = json_loadb(res.body.data + off, res.body.len - off,
                             JSON_DISABLE_EOF_CHECK, &jerr);
      if (o == NULL)
        break;
      off += jerr.position;
      if (json_object_get(o, "error") != NULL || json_object_get(o, "message") != NULL) {
        json_decref(last_error);
        last_error = o;
      } else {
        json_decref(o);
      }
    }
  }
  if (last_error != NULL) {
    failure = json_string_value(json_object_get(last_error, "error"));
    if (failure == NULL)
      failure = json_string_value(json_object_get(last_error, "message"));
  }
  if (res.status != 200 || failure != NULL)
    r = eb_error_set(err, EB_ERR_LANGUAGE_UNAVAILABLE, "pull image `%s` from %s: %s (HTTP %ld)",
                     image, d->api.host, failure ? failure : "failed", res.status);
  json_decref(last_error);
  eb_http_response_free(&res);
  return r;
}

/* Creates a container from body. The call itself is not cut short by the
 * caller's context — the daemon might finish a create we stopped listening
 * to, leaving a container nobody knows — but is bounded on its own (a few
 * ms normally); a context that ended meanwhile is honoured right after,
 * removing what was made. The unique name lets even a create that timed
 * out be found and removed. Pulls a missing image when told to. */
static int container_create(void *user, eb_ctx *ctx, const char *body, const char *image,
                            char **id, eb_error **err) {
  docker_runtime *d = user;
  char name[256], path[320];
  snprintf(name, sizeof(name), "execbox-%.8s-%s-%ld-%lld-%lu-%lu", d->boot_id, d->pidns, d->pid,
           d->start_time, d->instance, (unsigned long)atomic_fetch_add(&d->seq, 1));
  snprintf(path, sizeof(path), "/containers/create?name=%s", name);
  *id = NULL;
  for (int attempt = 0;; attempt++) {
    long status = 0;
    json_t *reply = NULL;
    int r = docker_api_negotiate(&d->api, ctx, err);
    if (r < 0)
      return r;
    eb_ctx *create_ctx = NULL;
    if (eb_ctx_new(NULL, CREATE_TIMEOUT_MS, &create_ctx, err) < 0)
      return -1;
    r = docker_api_call(&d->api, create_ctx, "POST", path, body, 0, &status, &reply, err);
    eb_ctx_free(create_ctx);
    if (r < 0) {
      /* The daemon may have made it before we stopped listening. */
      if ((*err)->code == EB_ERR_TIMEOUT)
        container_remove(d, name, NULL);
      return r;
    }
    eb_ctx_state st = eb_ctx_state_now(ctx);
    if (st != EB_CTX_ACTIVE) {
      json_decref(reply);
      container_remove(d, name, NULL);
      return eb_error_set(err, st == EB_CTX_CANCELLED ? EB_ERR_CANCELLED : EB_ERR_TIMEOUT,
                          "creating the container: %s",
                          st == EB_CTX_CANCELLED ? "cancelled" : "timed out");
    }
    if (status == 404 && attempt == 0 && d->pull) {
      json_decref(reply);
      r = image_pull(d, ctx, image, err);
      if (r < 0)
        return r;
      continue;
    }
    if (status == 404) {
      json_decref(reply);
      return image_missing(d, image, err);
    }
    const char *cid = json_string_value(json_object_get(reply, "Id"));
    if (status != 201 || cid == NULL) {
      r = eb_error_set(err, EB_ERR_SANDBOX, "create a container from `%s`: %s (HTTP %ld)", image,
                       docker_api_message(reply), status);
      json_decref(reply);
      return r;
    }
    *id = strdup(cid);
    /* The daemon warns when it drops a limit (no swap accounting, no pids
     * controller, no CFS quota...): fail closed rather than run weaker. */
    json_t *warnings = json_object_get(reply, "Warnings");
    if (json_array_size(warnings) > 0) {
      const char *w = json_string_value(json_array_get(warnings, 0));
      r = eb_error_set(err, EB_ERR_LIMIT_UNSUPPORTED,
                       "the Docker daemon at %s would not apply every limit: %s", d->api.host,
                       w ? w : "(no text)");
      json_decref(reply);
      container_remove(d, *id ? *id : name, NULL);
      free(*id);
      *id = NULL;
      return r;
    }
    json_decref(reply);
    return *id != NULL ? 0 : eb_error_set(err, ENOMEM, "copy the container id");
  }
}

/* POST /containers/{id}/start; *status is the daemon's answer (0 if none). */
static int start_call(docker_runtime *d, eb_ctx *ctx, const char *id, const char *image,
                      long *status, eb_error **err) {
  char path[320];
  snprintf(path, sizeof(path), "/containers/%s/start", id);
  json_t *reply = NULL;
  int r = docker_api_call(&d->api, ctx, "POST", path, NULL, START_TIMEOUT_MS, status, &reply,
                          err);
  if (r == 0 && *status != 204 && *status != 304)
    r = eb_error_set(err, EB_ERR_SANDBOX, "start a container of `%s`: %s (HTTP %ld)", image,
                     docker_api_message(reply), *status);
  json_decref(reply);
  return r;
}

static int container_start(void *user, eb_ctx *ctx, const char *id, const char *image,
                           eb_error **err) {
  long status = 0;
  return start_call(user, ctx, id, image, &status, err);
}

static const docker_pool_ops pool_ops = {
    .create = container_create,
    .start = container_start,
    .remove = pool_remove,
};

/* Removes containers left by docker runtimes of processes that died on
 * this host (a kill -9, a crash): once per runtime, before its first
 * execution. Best effort. */
static void sweep_orphans(docker_runtime *d, eb_ctx *ctx) {
  char filter[256], escaped[600], path[700];
  snprintf(filter, sizeof(filter), "{\"label\":[\"execbox.boot=%s\",\"execbox.pidns=%s\"]}",
           d->boot_id, d->pidns);
  url_escape(filter, escaped, sizeof(escaped));
  snprintf(path, sizeof(path), "/containers/json?all=1&filters=%s", escaped);
  long status = 0;
  json_t *list = NULL;
  if (docker_api_call(&d->api, ctx, "GET", path, NULL, SMALL_CALL_TIMEOUT_MS, &status, &list,
                      NULL) < 0 ||
      status != 200) {
    json_decref(list);
    return;
  }
  size_t i;
  json_t *c;
  json_array_foreach(list, i, c) {
    json_t *labels = json_object_get(c, "Labels");
    const char *id = json_string_value(json_object_get(c, "Id"));
    if (id != NULL &&
        !owner_alive(json_string_value(json_object_get(labels, "execbox.pid")),
                     json_string_value(json_object_get(labels, "execbox.start"))))
      container_remove(d, id, NULL);
  }
  json_decref(list);
}

/* ------------------------------------------------------------ execution */

typedef struct run_io {
  eb_capture *cap;
  const char *ack; /* "NONCE\n": the first stdout bytes, from the bootstrap */
  size_t ack_len, ack_seen;
  bool ack_wrong;
  bool over_cap;
  eb_buf system_error; /* stream 3: the daemon's own complaints */
} run_io;

static int on_frame(void *user, int stream, const char *data, size_t len) {
  run_io *io = user;
  if (stream == DOCKER_STREAM_STDOUT && io->ack_seen < io->ack_len && !io->ack_wrong) {
    size_t k = len < io->ack_len - io->ack_seen ? len : io->ack_len - io->ack_seen;
    if (memcmp(data, io->ack + io->ack_seen, k) != 0) {
      io->ack_wrong = true;
    } else {
      io->ack_seen += k;
      data += k;
      len -= k;
    }
  }
  if (len == 0 || stream == DOCKER_STREAM_STDIN)
    return 0;
  if (stream == DOCKER_STREAM_SYSTEMERR) {
    size_t room = MAX_SYSTEM_ERROR - io->system_error.len;
    return eb_buf_append(&io->system_error, data, len < room ? len : room) < 0 ? -ENOMEM : 0;
  }
  int r = eb_capture_append(io->cap, stream == DOCKER_STREAM_STDERR ? EB_STREAM_STDERR
                                                                    : EB_STREAM_STDOUT,
                            data, len);
  if (r < 0)
    return -ENOMEM;
  if (r > 0)
    io->over_cap = true;
  return 0;
}

typedef enum stop_reason { STOP_NONE, STOP_TIMEOUT, STOP_CANCELLED, STOP_OUTPUT } stop_reason;

/* Why run_ctx (derived from the caller's ctx, with the wall limit) ended. */
static stop_reason stop_for(eb_ctx *ctx, eb_ctx *run_ctx) {
  if (eb_ctx_state_now(ctx) == EB_CTX_CANCELLED)
    return STOP_CANCELLED;
  return eb_ctx_state_now(run_ctx) != EB_CTX_ACTIVE ? STOP_TIMEOUT : STOP_NONE;
}

typedef struct input_part {
  const char *data;
  size_t len;
} input_part;

/* Pumps input into the stream and its output into io until the stream ends
 * or run_ctx does. */
static int pump(docker_stream *s, eb_ctx *ctx, eb_ctx *run_ctx, input_part *in, size_t n_in,
                run_io *io, stop_reason *stop, eb_error **err) {
  docker_mux mux;
  docker_mux_init(&mux);
  size_t part = 0, off = 0;
  bool write_closed = false;
  char buf[65536];
  int ctx_fds[32];
  int n_ctx = eb_ctx_cancel_fds(run_ctx, ctx_fds, 32);
  if (n_ctx > 32)
    n_ctx = 32;
  for (;;) {
    while (part < n_in && off == in[part].len) {
      part++;
      off = 0;
    }
    if (part == n_in && !write_closed) {
      docker_stream_close_write(s);
      write_closed = true;
    }
    /* Bytes that came with the attach answer are read before polling. */
    bool readable = s->pending_len > 0;
    bool writable = false;
    if (!readable) {
      struct pollfd p[33];
      p[0] = (struct pollfd){.fd = s->fd, .events = (short)(POLLIN | (write_closed ? 0 : POLLOUT))};
      for (int i = 0; i < n_ctx; i++)
        p[1 + i] = (struct pollfd){.fd = ctx_fds[i], .events = POLLIN};
      int64_t left = eb_ctx_remaining_ms(run_ctx);
      int wait_ms = left < 0 || left > 1000 ? 1000 : (int)left + 1;
      int r = poll(p, (nfds_t)(1 + n_ctx), wait_ms);
      if (r < 0 && errno != EINTR)
        return eb_error_set(err, errno, "poll on the container's stream");
      if ((*stop = stop_for(ctx, run_ctx)) != STOP_NONE)
        return 0;
      if (r <= 0)
        continue;
      readable = (p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
      writable = (p[0].revents & (POLLOUT | POLLERR)) != 0;
    }
    if (writable && !write_closed) {
      size_t n = 0;
      eb_error *werr = NULL;
      int r = docker_stream_send(s, in[part].data + off, in[part].len - off, &n, &werr);
      if (r < 0) {
        /* The container stopped reading (it ended): its output tells. */
        eb_error_free(werr);
        docker_stream_close_write(s);
        write_closed = true;
      } else {
        off += n;
      }
    }
    if (readable) {
      size_t n = 0;
      int r = docker_stream_recv(s, buf, sizeof(buf), &n, err);
      if (r < 0)
        return r;
      if (r == 1)
        continue;
      if (n == 0) {
        /* The daemon closed the stream: the container's output ended,
         * between two frames unless the connection broke. */
        if (!docker_mux_at_boundary(&mux))
          return eb_error_set(err, EB_ERR_PROTOCOL,
                              "the daemon's output stream ended in the middle of a frame");
        break;
      }
      r = docker_mux_feed(&mux, buf, n, on_frame, io);
      if (r == -ENOMEM)
        return eb_error_set(err, ENOMEM, "capture the program's output");
      if (r < 0)
        return eb_error_set(err, EB_ERR_PROTOCOL, "the daemon's output stream is malformed");
      if (io->over_cap) {
        *stop = STOP_OUTPUT;
        return 0;
      }
    }
  }
  *stop = STOP_NONE;
  return 0;
}

/* After the stream: the exit status (and whether the OOM killer did it). */
static int container_status(docker_runtime *d, eb_ctx *run_ctx, const char *id, int *code,
                            bool *oom, eb_error **err) {
  char path[320];
  snprintf(path, sizeof(path), "/containers/%s/wait", id);
  long status = 0;
  json_t *reply = NULL;
  int r = docker_api_call(&d->api, run_ctx, "POST", path, NULL, 0, &status, &reply, err);
  if (r < 0)
    return r;
  json_t *sc = json_object_get(reply, "StatusCode");
  if (status != 200 || !json_is_integer(sc)) {
    r = eb_error_set(err, EB_ERR_SANDBOX, "wait for container %.12s: %s (HTTP %ld)", id,
                     docker_api_message(reply), status);
    json_decref(reply);
    return r;
  }
  *code = (int)json_integer_value(sc);
  json_decref(reply);
  *oom = false;
  if (*code != 137)
    return 0;
  snprintf(path, sizeof(path), "/containers/%s/json", id);
  r = docker_api_call(&d->api, run_ctx, "GET", path, NULL, SMALL_CALL_TIMEOUT_MS, &status, &reply,
                      err);
  if (r < 0)
    return r;
  *oom = json_is_true(json_object_get(json_object_get(reply, "State"), "OOMKilled"));
  json_decref(reply);
  return 0;
}

/* The bootstrap's last words, NONCE ":" WHAT at the very end of stdout:
 * returns WHAT (pointing into res) after cutting the marker out of stdout
 * and output, or NULL. */
static const char *take_marker(eb_exec_result *res, const char *nonce, char *what,
                               size_t what_size) {
  size_t nl = strlen(nonce);
  if (res->stdout_data == NULL)
    return NULL;
  char *found = NULL;
  for (char *p = res->stdout_data; (p = memmem(p, res->stdout_len - (size_t)(p - res->stdout_data),
                                               nonce, nl)) != NULL;
       p++)
    found = p;
  if (found == NULL || found[nl] != ':' || memchr(found, '\n', res->stdout_len -
                                                  (size_t)(found - res->stdout_data)) != NULL)
    return NULL;
  size_t marker_len = res->stdout_len - (size_t)(found - res->stdout_data);
  snprintf(what, what_size, "%.*s", (int)(marker_len - nl - 1), found + nl + 1);
  res->stdout_len -= marker_len;
  res->stdout_data[res->stdout_len] = '\0';
  if (res->output_len >= marker_len &&
      memcmp(res->output + res->output_len - marker_len, nonce, nl) == 0) {
    res->output_len -= marker_len;
    res->output[res->output_len] = '\0';
  }
  return what;
}

static void set_killed(eb_exec_result *res, eb_status status) {
  res->status = status;
  res->signal = 9;
  res->exit_code = 137;
}

/* Runs the container id (started already when started): attach, start,
 * stream, status. Returns 1 when a pooled container turned out unusable
 * (gone, not running: the caller runs cold instead), < 0 on an error. */
static int run_container(docker_runtime *d, eb_ctx *ctx, const char *id, bool started,
                         bool pooled, const char *image, const eb_limits *limits,
                         input_part *in, size_t n_in, const char *nonce, eb_exec_result *res,
                         eb_error **err) {
  docker_stream s;
  long status = 0;
  eb_error *aerr = NULL;
  int r = docker_attach(&d->api, ctx, id, &s, &status, &aerr);
  if (r < 0) {
    if (pooled && (status == 404 || status == 409)) {
      eb_error_free(aerr);
      return 1;
    }
    return eb_error_propagate(err, aerr);
  }
  if (!started) {
    r = start_call(d, ctx, id, image, &status, &aerr);
    if (r < 0) {
      docker_stream_close(&s);
      if (pooled && status == 404) {
        eb_error_free(aerr);
        return 1;
      }
      return eb_error_propagate(err, aerr);
    }
  }

  /* The wall limit counts from the start. */
  eb_ctx *run_ctx = NULL;
  r = eb_ctx_new(ctx, limits->wall_ms, &run_ctx, err);
  if (r < 0) {
    docker_stream_close(&s);
    return r;
  }
  eb_capture cap;
  eb_capture_init(&cap, (size_t)limits->output_bytes);
  char ack[DOCKER_NONCE_LEN + 2];
  snprintf(ack, sizeof(ack), "%s\n", nonce);
  run_io io = {.cap = &cap, .ack = ack, .ack_len = strlen(ack)};
  stop_reason stop = STOP_NONE;
  r = pump(&s, ctx, run_ctx, in, n_in, &io, &stop, err);
  docker_stream_close(&s);
  int code = 0;
  bool oom = false;
  if (r == 0 && stop == STOP_NONE) {
    eb_error *werr = NULL;
    r = container_status(d, run_ctx, id, &code, &oom, &werr);
    if (r < 0 && (werr->code == EB_ERR_TIMEOUT || werr->code == EB_ERR_CANCELLED)) {
      /* Its streams closed but it runs on (it closed its own stdout). */
      stop = stop_for(ctx, run_ctx);
      if (stop == STOP_NONE)
        stop = STOP_TIMEOUT;
      eb_error_free(werr);
      r = 0;
    } else if (r < 0) {
      eb_error_propagate(err, werr);
    }
  }
  eb_ctx_free(run_ctx);
  if (r == 0 && stop != STOP_NONE)
    container_kill(d, id); /* now, not when it is removed */
  if (r == 0 && eb_capture_finish(&cap, res) < 0)
    r = eb_error_set(err, ENOMEM, "collect the output");
  eb_capture_free(&cap);
  if (r < 0) {
    free(io.system_error.data);
    return r;
  }

  switch (stop) {
  case STOP_TIMEOUT: set_killed(res, EB_STATUS_TIMEOUT); break;
  case STOP_CANCELLED: set_killed(res, EB_STATUS_CANCELLED); break;
  case STOP_OUTPUT: set_killed(res, EB_STATUS_OUTPUT_LIMIT); break;
  case STOP_NONE:
    if (oom) {
      set_killed(res, EB_STATUS_MEMORY_LIMIT);
    } else if (code > 128 && code < 128 + 32) {
      /* The init reports a program killed by signal N as 128+N; an exit
       * with such a code reads the same (see docs/runtimes.md). */
      res->exit_code = code;
      res->signal = code - 128;
      res->status = EB_STATUS_KILLED;
    } else {
      res->exit_code = code;
      res->status = code == 0 ? EB_STATUS_OK : EB_STATUS_NONZERO_EXIT;
    }
    break;
  }
  if (stop == STOP_NONE && (io.ack_wrong || io.ack_seen < io.ack_len)) {
    /* The bootstrap never ran: no /bin/sh or dd in the image, or the
     * daemon could not run the command. */
    int n = res->stderr_len > 300 ? 300 : (int)res->stderr_len;
    r = eb_error_set(err, EB_ERR_SANDBOX,
                     "image `%s` could not run the bootstrap (it needs /bin/sh and dd): exit "
                     "status %d%s%.*s%s%s",
                     image, code, n > 0 ? ": " : "", n, res->stderr_data,
                     io.system_error.len > 0 ? "; daemon: " : "",
                     io.system_error.len > 0 ? io.system_error.data : "");
    free(io.system_error.data);
    return r;
  }
  free(io.system_error.data);
  char what[128];
  const char *marker = stop == STOP_NONE ? take_marker(res, nonce, what, sizeof(what)) : NULL;
  if (marker != NULL && strcmp(marker, "compile") == 0) {
    res->status = EB_STATUS_COMPILE_ERROR;
  } else if (marker != NULL && strncmp(marker, "missing ", 8) == 0) {
    return eb_error_set(err, EB_ERR_LANGUAGE_UNAVAILABLE, "image `%s` has no `%s` on its PATH",
                        image, marker + 8);
  } else if (marker != NULL && strncmp(marker, "setup ", 6) == 0) {
    int n = res->stderr_len > 300 ? 300 : (int)res->stderr_len;
    return eb_error_set(err, EB_ERR_SANDBOX, "in the container of `%s`: %s failed%s%.*s", image,
                        marker + 6, n > 0 ? ": " : "", n, res->stderr_data);
  }
  return 0;
}

/* Refuses what the docker runtime cannot do rather than run weaker. */
static int check_request(const eb_exec_request *req, eb_error **err) {
  if (req->language == NULL || req->language[0] == '\0')
    return eb_error_set(err, EB_ERR_USAGE, "no language given");
  if (req->code == NULL)
    return eb_error_set(err, EB_ERR_USAGE, "no code given");
  if (req->limits.network == EB_NETWORK_HOST)
    return eb_error_set(err, EB_ERR_LIMIT_UNSUPPORTED,
                        "containers run with network none: network access cannot be granted");
  return 0;
}

static int make_nonce(char out[DOCKER_NONCE_LEN + 1], eb_error **err) {
  unsigned char raw[DOCKER_NONCE_LEN / 2];
  size_t got = 0;
  while (got < sizeof(raw)) {
    ssize_t n = getrandom(raw + got, sizeof(raw) - got, 0);
    if (n < 0 && errno != EINTR)
      return eb_error_set(err, errno, "getrandom");
    if (n > 0)
      got += (size_t)n;
  }
  for (size_t i = 0; i < sizeof(raw); i++)
    snprintf(out + 2 * i, 3, "%02x", raw[i]);
  return 0;
}

/* The pool, started with the first execution that can use it. */
static docker_pool *get_pool(docker_runtime *d) {
  pthread_mutex_lock(&d->mu);
  if (d->pool == NULL && !d->pool_failed && d->pool_size > 0 &&
      docker_pool_new(&pool_ops, d, d->pool_size, d->pool_started, &d->pool, NULL) < 0)
    d->pool_failed = true;
  docker_pool *p = d->pool;
  pthread_mutex_unlock(&d->mu);
  return p;
}

static int docker_execute(eb_runtime *rt, eb_ctx *ctx, const eb_exec_request *req,
                          eb_exec_result *res, eb_error **err) {
  docker_runtime *d = rt->impl;
  int64_t t0 = eb_now_ns();
  int ret = check_request(req, err);
  if (ret < 0)
    return ret;
  const eb_language *lang = eb_language_find(req->language);
  if (lang == NULL)
    return eb_error_set(err, EB_ERR_LANGUAGE_UNKNOWN, "unknown language `%s`", req->language);
  const char *image = d->images[language_index(lang)];
  eb_limits limits = req->limits;
  eb_limits_apply_defaults(&limits);
  size_t code_len = req->code_len ? req->code_len : strlen(req->code);

  char nonce[DOCKER_NONCE_LEN + 1];
  ret = make_nonce(nonce, err);
  if (ret < 0)
    return ret;
  cleanup_free char *script = NULL;
  size_t script_len = 0;
  ret = docker_boot_script(lang, code_len, req->args, req->env, nonce, &script, &script_len, err);
  if (ret < 0)
    return ret;
  char script_head[32];
  snprintf(script_head, sizeof(script_head), "%zu\n", script_len);
  input_part in[4] = {{script_head, strlen(script_head)},
                      {script, script_len},
                      {req->code, code_len},
                      {req->stdin_data, req->stdin_data ? req->stdin_len : 0}};

  ret = docker_api_negotiate(&d->api, ctx, err);
  if (ret < 0)
    return ret;
  pthread_mutex_lock(&d->mu);
  bool sweep = !d->swept;
  d->swept = true;
  pthread_mutex_unlock(&d->mu);
  if (sweep)
    sweep_orphans(d, ctx);

  docker_spec spec = {.image = image, .uid = d->uid, .gid = d->gid, .limits = limits,
                      .podman = d->api.podman, .owner = d->owner,
                      .boot_id = d->boot_id, .pidns = d->pidns, .pid = d->pid,
                      .start_time = d->start_time};
  cleanup_free char *body = docker_create_body(&spec);
  if (body == NULL)
    return eb_error_set(err, ENOMEM, "encode the container's configuration");

  docker_pool *pool = get_pool(d);
  char *id = NULL;
  bool started = false, pooled = false;
  eb_error *run_err = NULL;
  if (pool != NULL)
    pooled = docker_pool_take(pool, body, image, &id, &started);
  for (;;) {
    if (id == NULL) {
      pooled = started = false;
      ret = container_create(d, ctx, body, image, &id, &run_err);
      if (ret < 0)
        break;
    }
    ret = run_container(d, ctx, id, started, pooled, image, &limits, in, 4, nonce, res, &run_err);
    if (ret == 1) { /* a pooled container that died meanwhile: run cold */
      container_remove(d, id, NULL);
      free(id);
      id = NULL;
      eb_exec_result_clear(res);
      continue;
    }
    break;
  }
  if (id != NULL) {
    if (pool != NULL) {
      docker_pool_discard(pool, steal_pointer(&id));
    } else {
      eb_error *rm_err = NULL;
      if (container_remove(d, id, &rm_err) < 0 && ret == 0)
        ret = eb_error_propagate(&run_err, steal_pointer(&rm_err));
      eb_error_free(rm_err);
      free(id);
    }
  }
  if (ret < 0 && (run_err->code == EB_ERR_CANCELLED || run_err->code == EB_ERR_TIMEOUT)) {
    /* The caller's deadline or cancellation before the program ran (a
     * slow create or start): a result, as with every runtime. */
    eb_exec_result_clear(res);
    eb_capture cap;
    eb_capture_init(&cap, 0);
    if (eb_capture_finish(&cap, res) == 0) {
      set_killed(res, run_err->code == EB_ERR_CANCELLED ? EB_STATUS_CANCELLED : EB_STATUS_TIMEOUT);
      eb_error_free(steal_pointer(&run_err));
      ret = 0;
    }
    eb_capture_free(&cap);
  }
  if (ret < 0) {
    eb_error_propagate(err, steal_pointer(&run_err));
    eb_exec_result_clear(res);
  }
  res->duration_ms = (eb_now_ns() - t0) / 1000000;
  return ret;
}

static int docker_probe(eb_runtime *rt, char **detail, eb_error **err) {
  docker_runtime *d = rt->impl;
  eb_ctx *ctx = NULL;
  if (eb_ctx_new(NULL, PROBE_TIMEOUT_MS, &ctx, err) < 0)
    return -1;
  int r = docker_api_negotiate(&d->api, ctx, err);
  const char *py = d->images[language_index(eb_language_find("python"))];
  bool have_py = false;
  if (r == 0) {
    char escaped[1024], path[1100];
    url_escape(py, escaped, sizeof(escaped));
    snprintf(path, sizeof(path), "/images/%s/json", escaped);
    long status = 0;
    if (docker_api_call(&d->api, ctx, "GET", path, NULL, PROBE_TIMEOUT_MS, &status, NULL, NULL) ==
            0 &&
        status == 200)
      have_py = true;
  }
  eb_ctx_free(ctx);
  if (r < 0)
    return r;
  char pool[64] = "no warm pool";
  if (d->pool_size > 0)
    snprintf(pool, sizeof(pool), "warm pool of %d (%s)", d->pool_size,
             d->pool_started ? "started" : "created");
  if (asprintf(detail, "%s (API %s) at %s; python image `%s`%s; %s", d->api.engine,
               d->api.version, d->api.host, py, have_py ? "" : " NOT PRESENT", pool) < 0)
    *detail = NULL;
  return 0;
}

static void docker_destroy(eb_runtime *rt) {
  docker_runtime *d = rt->impl;
  if (d != NULL) {
    docker_pool_free(d->pool);
    for (size_t i = 0; i < MAX_LANGUAGES; i++)
      free(d->images[i]);
    docker_api_free(&d->api);
    pthread_mutex_destroy(&d->mu);
    free(d);
  }
  free(rt);
}

/* eb_runtime_enable_pool (long-lived commands): a pool of opts->size
 * containers per kind, unless EXECBOX_DOCKER_POOL or the C options chose a
 * size already. Kinds (image and limits) register with their first request,
 * so prewarm and wait have nothing to act on. */
static int docker_enable_pool(eb_runtime *rt, const eb_pool_options *opts, eb_error **err) {
  (void)err;
  docker_runtime *d = rt->impl;
  pthread_mutex_lock(&d->mu);
  if (d->pool == NULL && !d->pool_size_set)
    d->pool_size = EB_MIN(opts->size, DOCKER_POOL_MAX_SIZE);
  pthread_mutex_unlock(&d->mu);
  return 0;
}

static int docker_pool_stats_op(eb_runtime *rt, eb_pool_stats *st) {
  docker_runtime *d = rt->impl;
  pthread_mutex_lock(&d->mu);
  docker_pool *p = d->pool;
  if (p != NULL)
    docker_pool_stats(p, st);
  pthread_mutex_unlock(&d->mu);
  return p != NULL ? 0 : 1;
}

const eb_runtime_ops eb_docker_ops = {
    .name = "docker",
    .description = "a fresh container per execution, over the Docker Engine API (DOCKER_HOST)",
    .execute = docker_execute,
    .destroy = docker_destroy,
    .probe = docker_probe,
    .enable_pool = docker_enable_pool,
    .pool_stats = docker_pool_stats_op,
};

/* ---------------------------------------------------------- configuration */

EB_EXPORT void eb_docker_options_init(eb_docker_options *opts) {
  memset(opts, 0, sizeof(*opts));
  opts->pool_size = -1;
  opts->pool_mode = -1;
  opts->pull = -1;
}

static int parse_user(const char *s, unsigned *uid, unsigned *gid, eb_error **err) {
  char *end = NULL;
  errno = 0;
  unsigned long u = strtoul(s, &end, 10), g;
  if (end == s || errno != 0 || u > 0x7fffffffUL)
    goto bad;
  if (*end == ':') {
    const char *gs = end + 1;
    g = strtoul(gs, &end, 10);
    if (end == gs || errno != 0 || g > 0x7fffffffUL)
      goto bad;
  } else {
    g = u;
  }
  if (*end != '\0')
    goto bad;
  if (u == 0 || g == 0)
    return eb_error_set(err, EB_ERR_USAGE,
                        "docker user `%s`: the docker runtime never runs code as root", s);
  *uid = (unsigned)u;
  *gid = (unsigned)g;
  return 0;
bad:
  return eb_error_set(err, EB_ERR_USAGE, "docker user `%s` is not a numeric UID[:GID]", s);
}

static int parse_bool_env(const char *name, bool *out, eb_error **err) {
  const char *v = getenv(name);
  if (v == NULL || v[0] == '\0')
    return 0;
  if (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0)
    *out = true;
  else if (strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0)
    *out = false;
  else
    return eb_error_set(err, EB_ERR_USAGE, "%s=`%s`: expected 1 or 0", name, v);
  return 0;
}

static int set_image(docker_runtime *d, const eb_language *lang, const char *image,
                     const char *where, eb_error **err) {
  if (image[0] == '\0' || strpbrk(image, " \t\n\"\\") != NULL)
    return eb_error_set(err, EB_ERR_USAGE, "%s: `%s` is not an image reference", where, image);
  size_t i = language_index(lang);
  free(d->images[i]);
  d->images[i] = strdup(image);
  return d->images[i] ? 0 : eb_error_set(err, ENOMEM, "copy an image name");
}

static int configure(docker_runtime *d, const eb_docker_options *o, eb_error **err) {
  int r = docker_api_init(&d->api, o->host, err);
  if (r < 0)
    return r;
  /* Images: the per-language ones win over the one for all, which wins
   * over the defaults. */
  const char *all = o->image ? o->image : getenv("EXECBOX_DOCKER_IMAGE");
  if (all != NULL && all[0] == '\0')
    all = NULL;
  for (size_t i = 0; i < eb_language_count() && i < MAX_LANGUAGES; i++) {
    const eb_language *lang = eb_language_at(i);
    const char *image = all;
    for (size_t k = 0; image == NULL && k < EB_ARRAY_SIZE(default_images); k++)
      if (strcmp(default_images[k].language, lang->name) == 0)
        image = default_images[k].image;
    if (image == NULL)
      image = "debian:bookworm-slim";
    if ((r = set_image(d, lang, image, all ? "EXECBOX_DOCKER_IMAGE" : "default image", err)) < 0)
      return r;
    if (o->language_images == NULL) {
      char var[64];
      snprintf(var, sizeof(var), "EXECBOX_DOCKER_IMAGE_%s", lang->name);
      for (char *p = var; *p; p++)
        *p = (char)toupper((unsigned char)*p);
      const char *v = getenv(var);
      if (v != NULL && v[0] != '\0' && (r = set_image(d, lang, v, var, err)) < 0)
        return r;
    }
  }
  for (const char *const *e = o->language_images; e != NULL && *e != NULL; e++) {
    const char *eq = strchr(*e, '=');
    char name[64];
    snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - *e) : 0, *e);
    const eb_language *lang = eq ? eb_language_find(name) : NULL;
    if (lang == NULL)
      return eb_error_set(err, EB_ERR_USAGE,
                          "docker language image `%s` is not LANGUAGE=IMAGE with a known language",
                          *e);
    if ((r = set_image(d, lang, eq + 1, "docker language image", err)) < 0)
      return r;
  }

  const char *user = o->user ? o->user : getenv("EXECBOX_DOCKER_USER");
  d->uid = DEFAULT_UID;
  d->gid = DEFAULT_GID;
  if (user != NULL && user[0] != '\0' && (r = parse_user(user, &d->uid, &d->gid, err)) < 0)
    return r;

  d->pool_size = o->pool_size;
  d->pool_size_set = o->pool_size >= 0;
  if (d->pool_size < 0) {
    const char *v = getenv("EXECBOX_DOCKER_POOL");
    d->pool_size = 0;
    if (v != NULL && v[0] != '\0') {
      d->pool_size_set = true;
      char *end = NULL;
      long n = strtol(v, &end, 10);
      if (end == v || *end != '\0' || n < 0 || n > DOCKER_POOL_MAX_SIZE)
        return eb_error_set(err, EB_ERR_USAGE, "EXECBOX_DOCKER_POOL=`%s`: expected 0 to %d", v,
                            DOCKER_POOL_MAX_SIZE);
      d->pool_size = (int)n;
    }
  } else if (d->pool_size > DOCKER_POOL_MAX_SIZE) {
    return eb_error_set(err, EB_ERR_USAGE, "docker pool size %d: at most %d", d->pool_size,
                        DOCKER_POOL_MAX_SIZE);
  }
  if (o->pool_mode >= 0) {
    if (o->pool_mode != EB_DOCKER_POOL_CREATED && o->pool_mode != EB_DOCKER_POOL_STARTED)
      return eb_error_set(err, EB_ERR_USAGE, "docker pool mode %d is unknown", o->pool_mode);
    d->pool_started = o->pool_mode == EB_DOCKER_POOL_STARTED;
  } else {
    /* Started by default: creating ahead saves about 8 ms of the 200-300
     * a container costs, starting ahead most of the rest. */
    d->pool_started = true;
    const char *v = getenv("EXECBOX_DOCKER_POOL_MODE");
    if (v != NULL && v[0] != '\0') {
      if (strcmp(v, "created") == 0)
        d->pool_started = false;
      else if (strcmp(v, "started") != 0)
        return eb_error_set(err, EB_ERR_USAGE,
                            "EXECBOX_DOCKER_POOL_MODE=`%s`: expected created or started", v);
    }
  }
  if (o->pull >= 0)
    d->pull = o->pull > 0;
  else if ((r = parse_bool_env("EXECBOX_DOCKER_PULL", &d->pull, err)) < 0)
    return r;
  return 0;
}

EB_EXPORT int eb_docker_runtime_new(const eb_docker_options *opts, eb_runtime **out,
                                    eb_error **err) {
  eb_docker_options from_env;
  if (opts == NULL) {
    eb_docker_options_init(&from_env);
    opts = &from_env;
  }
  eb_runtime *rt = calloc(1, sizeof(*rt));
  docker_runtime *d = calloc(1, sizeof(*d));
  if (rt == NULL || d == NULL) {
    free(rt);
    free(d);
    return eb_error_set(err, ENOMEM, "allocate the docker runtime");
  }
  rt->ops = &eb_docker_ops;
  rt->impl = d;
  pthread_mutex_init(&d->mu, NULL);
  read_identity(d);
  int r = configure(d, opts, err);
  if (r < 0) {
    docker_destroy(rt);
    return r;
  }
  *out = rt;
  return 0;
}

int eb_docker_runtime_new_default(eb_runtime **out, eb_error **err) {
  return eb_docker_runtime_new(NULL, out, err);
}

EB_EXPORT const char *eb_docker_image(const eb_runtime *rt, const char *language) {
  if (rt == NULL || rt->ops != &eb_docker_ops)
    return NULL;
  const eb_language *lang = eb_language_find(language);
  if (lang == NULL)
    return NULL;
  const docker_runtime *d = rt->impl;
  return d->images[language_index(lang)];
}
