/* The jail's warm pool: sandboxes built ahead of time by a background
 * thread, each one a jail init that has done every step that does not
 * depend on the execution (namespaces, root file system, cgroup, no
 * capabilities, seccomp) and waits on its control socket for exactly one
 * job. After that job it is destroyed like any sandbox; nothing of one
 * execution can reach the next.
 *
 * Two kinds: plain sandboxes run any language as the cold path does, only
 * without building the sandbox first; Python sandboxes also hold a started
 * interpreter (zygote.py) that runs the code as `python3 -u main.py` would,
 * so that its start-up is off the critical path too.
 *
 * A kind is kept at `size` sandboxes (building or ready) once something
 * asked for it, and drained when nothing has used it for `idle_ms`. An
 * execution that finds none ready runs cold: it never waits for a build. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/util.h"
#include "runtime/jail/jail.h"

enum { KIND_PLAIN = 0, KIND_PYTHON = 1, KINDS = 2 };
/* Smallest memory limit a Python request may have to run in the waiting
 * interpreter. */
#define JAIL_FAST_MIN_MEMORY (64LL << 20)
static const char *const kind_names[KINDS] = {"plain", "python"};

typedef struct warm {
  jail_sandbox sb;
  uint64_t id; /* tells a slot from a later one that reuses its fd number */
  int kind;
  bool ready;
} warm;

struct jail_pool {
  jail_runtime *jr;
  pthread_mutex_t lock;
  pthread_cond_t changed; /* a build ended (enable with wait) */
  pthread_t thread;
  bool thread_started, stop;
  int wake_fd; /* eventfd: wakes the thread to refill, drain or stop */
  int size;
  int64_t idle_ms;
  warm *slots; /* building and ready */
  size_t n_slots;
  uint64_t next_id;
  bool wanted[KINDS];
  int64_t last_use_ns[KINDS];
  int fails[KINDS];       /* consecutive failed builds */
  int64_t retry_ns[KINDS]; /* after a failure, no build before this */
  char why[KINDS][160];    /* the last failure */
  eb_limits limits;        /* what sandboxes are built with: the defaults */
  eb_plan python;          /* the interpreter's command and environment */
  bool have_python;
  eb_pool_stats st;
};

static void pool_wake(jail_pool *p) {
  uint64_t one = 1;
  ssize_t w = write(p->wake_fd, &one, sizeof(one));
  (void)w;
}

static size_t count_kind(const jail_pool *p, int kind, bool ready_only) {
  size_t n = 0;
  for (size_t i = 0; i < p->n_slots; i++)
    if (p->slots[i].kind == kind && (!ready_only || p->slots[i].ready))
      n++;
  return n;
}

/* Removes slot i (lock held) and returns it. */
static warm take_slot(jail_pool *p, size_t i) {
  warm w = p->slots[i];
  p->slots[i] = p->slots[--p->n_slots];
  return w;
}

/* Builds one sandbox of kind (lock released meanwhile). */
static void start_build(jail_pool *p, int kind) {
  uint64_t id = ++p->next_id;
  pthread_mutex_unlock(&p->lock);
  jail_start_opts o = {.limits = &p->limits, .fds = {-1, -1, -1, -1}};
  if (kind == KIND_PYTHON) {
    o.python_path = p->python.steps[0].path;
    o.python_envp = p->python.envp;
  }
  jail_sandbox sb;
  eb_error *err = NULL;
  int r = jail_sandbox_start(p->jr, &o, &sb, &err);
  pthread_mutex_lock(&p->lock);
  if (r < 0) {
    p->st.failed++;
    p->fails[kind]++;
    snprintf(p->why[kind], sizeof(p->why[kind]), "%s", err ? err->msg : "unknown error");
    eb_error_free(err);
    return;
  }
  if (p->n_slots >= (size_t)p->size * KINDS) { /* never more than allowed */
    pthread_mutex_unlock(&p->lock);
    jail_sandbox_discard(p->jr, &sb);
    pthread_mutex_lock(&p->lock);
    return;
  }
  p->slots[p->n_slots++] = (warm){.sb = sb, .id = id, .kind = kind, .ready = false};
}

/* What a building sandbox said on its control socket: 'R' when ready, or
 * the report of the step that failed. */
static void build_answer(jail_pool *p, warm *w, bool *discard) {
  union {
    char byte;
    eb_child_report report;
  } msg;
  memset(&msg, 0, sizeof(msg));
  ssize_t n = read(w->sb.ctl_fd, &msg, sizeof(msg));
  if (n == 1 && msg.byte == 'R') {
    w->ready = true;
    /* What the group used so far (the build, the interpreter's start-up) is
     * not the execution's: its CPU time is counted from here. */
    w->sb.cpu_base_us = jail_cgroup_cpu_usage_us(&w->sb.cgroup);
    p->st.built++;
    p->fails[w->kind] = 0;
    return;
  }
  p->st.failed++;
  p->fails[w->kind]++;
  if (n == (ssize_t)sizeof(msg.report) && msg.report.kind == EB_REPORT_SETUP_FAILED) {
    msg.report.msg[sizeof(msg.report.msg) - 1] = '\0';
    snprintf(p->why[w->kind], sizeof(p->why[w->kind]), "%s: %s", msg.report.msg,
             strerror(msg.report.err));
  } else {
    snprintf(p->why[w->kind], sizeof(p->why[w->kind]), "the sandbox ended while being built");
  }
  *discard = true;
}

static void *pool_main(void *arg) {
  jail_pool *p = arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL); /* the host's signals go elsewhere */
  warm gone[2 * EB_MAX_POOL_SIZE * KINDS];
  pthread_mutex_lock(&p->lock);
  while (!p->stop) {
    int64_t now = eb_now_ns();
    size_t n_gone = 0;
    int64_t timeout_ms = 1000;
    /* Drain kinds nobody used for idle_ms; they come back on demand. */
    for (int k = 0; k < KINDS; k++) {
      if (!p->wanted[k])
        continue;
      int64_t idle_left = p->last_use_ns[k] + p->idle_ms * 1000000 - now;
      if (idle_left > 0) {
        timeout_ms = EB_MIN(timeout_ms, idle_left / 1000000 + 1);
        continue;
      }
      p->wanted[k] = false;
      for (size_t i = p->n_slots; i-- > 0;)
        if (p->slots[i].kind == k)
          gone[n_gone++] = take_slot(p, i);
    }
    p->st.discarded += n_gone;
    /* Refill: one build per kind per round, so that takers get the lock. */
    bool more = false;
    for (int k = 0; k < KINDS; k++) {
      if (!p->wanted[k] || count_kind(p, k, false) >= (size_t)p->size)
        continue;
      if (p->fails[k] > 0 && now < p->retry_ns[k]) {
        timeout_ms = EB_MIN(timeout_ms, (p->retry_ns[k] - now) / 1000000 + 1);
        continue;
      }
      start_build(p, k);
      if (p->fails[k] > 0) /* back off: 50 ms, doubling, at most 10 s */
        p->retry_ns[k] = eb_now_ns() + EB_MIN(50LL << EB_MIN(p->fails[k], 8), 10000) * 1000000;
      more = more || count_kind(p, k, false) < (size_t)p->size;
    }
    /* Watch the wake fd and every sandbox's control socket. */
    struct pollfd pfd[1 + EB_MAX_POOL_SIZE * KINDS];
    uint64_t ids[1 + EB_MAX_POOL_SIZE * KINDS];
    nfds_t n = 0;
    pfd[n++] = (struct pollfd){.fd = p->wake_fd, .events = POLLIN};
    for (size_t i = 0; i < p->n_slots; i++) {
      ids[n] = p->slots[i].id;
      pfd[n++] = (struct pollfd){.fd = p->slots[i].sb.ctl_fd, .events = POLLIN};
    }
    pthread_mutex_unlock(&p->lock);
    for (size_t i = 0; i < n_gone; i++)
      jail_sandbox_discard(p->jr, &gone[i].sb);
    int r = poll(pfd, n, more ? 0 : (int)timeout_ms);
    pthread_mutex_lock(&p->lock);
    n_gone = 0;
    if (r <= 0)
      continue;
    if (pfd[0].revents & POLLIN) {
      uint64_t v;
      ssize_t rd = read(p->wake_fd, &v, sizeof(v));
      (void)rd;
    }
    bool changed = false;
    for (nfds_t j = 1; j < n; j++) {
      if (pfd[j].revents == 0)
        continue;
      /* A slot taken meanwhile is its taker's: leave it alone. */
      size_t i = 0;
      while (i < p->n_slots && p->slots[i].id != ids[j])
        i++;
      if (i == p->n_slots)
        continue;
      bool discard = false;
      if (!p->slots[i].ready) {
        build_answer(p, &p->slots[i], &discard);
        changed = true;
      } else {
        discard = true; /* a ready sandbox only speaks when it died */
        p->st.discarded++;
      }
      if (discard)
        gone[n_gone++] = take_slot(p, i);
    }
    if (changed)
      pthread_cond_broadcast(&p->changed);
    if (n_gone > 0) {
      pthread_mutex_unlock(&p->lock);
      for (size_t i = 0; i < n_gone; i++)
        jail_sandbox_discard(p->jr, &gone[i].sb);
      pthread_mutex_lock(&p->lock);
    }
  }
  /* Shutdown: drain everything. */
  size_t n_gone = 0;
  while (p->n_slots > 0)
    gone[n_gone++] = take_slot(p, p->n_slots - 1);
  p->st.discarded += n_gone;
  pthread_cond_broadcast(&p->changed);
  pthread_mutex_unlock(&p->lock);
  for (size_t i = 0; i < n_gone; i++)
    jail_sandbox_discard(p->jr, &gone[i].sb);
  return NULL;
}

/* The kind a language's sandbox is. */
static int kind_of(const jail_pool *p, const char *language) {
  const eb_language *lang = eb_language_find(language);
  return p->have_python && lang != NULL && strcmp(lang->name, "python") == 0 ? KIND_PYTHON
                                                                              : KIND_PLAIN;
}

int jail_pool_new(jail_runtime *jr, const eb_pool_options *opts, jail_pool **out,
                  eb_error **err) {
  jail_pool *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return eb_error_set(err, ENOMEM, "allocate the pool");
  p->jr = jr;
  p->size = opts->size;
  p->idle_ms = opts->idle_ms > 0 ? opts->idle_ms : EB_DEFAULT_POOL_IDLE_MS;
  eb_limits_apply_defaults(&p->limits);
  pthread_mutex_init(&p->lock, NULL);
  pthread_cond_init(&p->changed, NULL);
  p->slots = calloc((size_t)p->size * KINDS, sizeof(*p->slots));
  p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (p->slots == NULL || p->wake_fd < 0) {
    int saved = p->slots == NULL ? ENOMEM : errno;
    jail_pool_free(p);
    return eb_error_set(err, saved, "set up the pool");
  }
  /* The interpreter's command and environment, as a cold run has them.
   * Without python3 there is no Python kind: python runs in plain ones. */
  eb_exec_request probe = {.language = "python", .code = "pass"};
  eb_error *no_python = NULL;
  p->have_python = eb_plan_build(&probe, JAIL_WORKDIR, "/tmp", &p->python, &no_python) == 0 &&
                   jail_python_fast_ok(&p->python, &probe);
  eb_error_free(no_python);
  int64_t now = eb_now_ns();
  for (size_t i = 0; opts->prewarm != NULL && opts->prewarm[i] != NULL; i++) {
    if (eb_language_find(opts->prewarm[i]) == NULL) {
      jail_pool_free(p);
      return eb_error_set(err, EB_ERR_LANGUAGE_UNKNOWN, "prewarm: unknown language `%s`",
                          opts->prewarm[i]);
    }
    int k = kind_of(p, opts->prewarm[i]);
    p->wanted[k] = true;
    p->last_use_ns[k] = now;
  }
  if (pthread_create(&p->thread, NULL, pool_main, p) != 0) {
    jail_pool_free(p);
    return eb_error_set(err, EAGAIN, "start the pool thread");
  }
  p->thread_started = true;
  if (opts->wait) {
    /* Until every prewarmed kind is full, or its builds fail. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&p->lock);
    for (;;) {
      bool done = true;
      for (int k = 0; k < KINDS; k++)
        if (p->wanted[k] && p->fails[k] == 0 && count_kind(p, k, true) < (size_t)p->size)
          done = false;
      if (done || pthread_cond_timedwait(&p->changed, &p->lock, &until) == ETIMEDOUT)
        break;
    }
    pthread_mutex_unlock(&p->lock);
  }
  *out = p;
  return 0;
}

void jail_pool_free(jail_pool *p) {
  if (p == NULL)
    return;
  if (p->thread_started) {
    pthread_mutex_lock(&p->lock);
    p->stop = true;
    pthread_mutex_unlock(&p->lock);
    pool_wake(p);
    pthread_join(p->thread, NULL);
  }
  if (p->wake_fd >= 0)
    close(p->wake_fd);
  eb_plan_free(&p->python);
  free(p->slots);
  pthread_cond_destroy(&p->changed);
  pthread_mutex_destroy(&p->lock);
  free(p);
}

int jail_pool_execute(jail_pool *p, eb_ctx *ctx, const eb_exec_request *req, eb_plan *plan,
                      eb_exec_result *res, eb_error **err) {
  /* Sandboxes are built with the default sizes of /tmp and the work dir;
   * other sizes need a sandbox of their own. */
  bool fits = plan->limits.tmp_bytes == p->limits.tmp_bytes;
  /* The waiting interpreter already uses about 12 MiB of the group's
   * memory: under a tight limit Python starts cold in a plain sandbox. */
  bool fast = fits && p->have_python && jail_python_fast_ok(plan, req) &&
              plan->limits.memory_bytes >= JAIL_FAST_MIN_MEMORY;
  int want = fast ? KIND_PYTHON : KIND_PLAIN;
  pthread_mutex_lock(&p->lock);
  if (!p->wanted[want])
    pool_wake(p);
  p->wanted[want] = true;
  p->last_use_ns[want] = eb_now_ns();
  for (int attempt = 0; fits && attempt < 4; attempt++) {
    /* A Python sandbox for the fast path; else a plain one will do. */
    size_t i = p->n_slots;
    for (int pass = fast ? 0 : 1; pass < 2 && i == p->n_slots; pass++)
      for (i = 0; i < p->n_slots; i++)
        if (p->slots[i].ready && p->slots[i].kind == (pass == 0 ? KIND_PYTHON : KIND_PLAIN))
          break;
    if (i == p->n_slots)
      break;
    warm w = take_slot(p, i);
    /* The replacement is built once this execution is done, unless the
     * kind ran dry: cloning a sandbox briefly locks this process's memory
     * map, which would slow down the execution under way. */
    bool dry = count_kind(p, w.kind, true) == 0;
    pthread_mutex_unlock(&p->lock);
    if (dry)
      pool_wake(p);
    bool in_interpreter = w.kind == KIND_PYTHON;
    int r = jail_run_warm(p->jr, ctx, req, plan, &w.sb, in_interpreter, res, err);
    if (!dry)
      pool_wake(p);
    pthread_mutex_lock(&p->lock);
    if (r == 2) {
      p->st.discarded++;
      break; /* not for this request: cold */
    }
    if (r != 1) {
      p->st.hits++;
      if (in_interpreter)
        p->st.fast++;
      pthread_mutex_unlock(&p->lock);
      return r;
    }
    p->st.discarded++; /* it died while idle: try the next */
  }
  p->st.misses++;
  pthread_mutex_unlock(&p->lock);
  return 1;
}

void jail_pool_stats(jail_pool *p, eb_pool_stats *st) {
  pthread_mutex_lock(&p->lock);
  *st = p->st;
  st->ready = st->building = 0;
  for (size_t i = 0; i < p->n_slots; i++) {
    if (p->slots[i].ready)
      st->ready++;
    else
      st->building++;
  }
  pthread_mutex_unlock(&p->lock);
}

/* The last build failure of each kind, for `execbox runtimes` and logs. */
int jail_pool_describe(jail_pool *p, char *buf, size_t len) {
  pthread_mutex_lock(&p->lock);
  int n = snprintf(buf, len, "warm pool: %d per kind, drained after %lld ms idle%s", p->size,
                   (long long)p->idle_ms, p->have_python ? "" : " (no python3: no fast path)");
  for (int k = 0; k < KINDS; k++)
    if (p->fails[k] > 0 && n >= 0 && (size_t)n < len)
      n += snprintf(buf + n, len - (size_t)n, "; %s sandboxes failing: %s", kind_names[k],
                    p->why[k]);
  pthread_mutex_unlock(&p->lock);
  return n;
}
