#include "runtime/docker/docker_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/util.h"

#define RETRY_MAX_MS 30000

typedef struct pool_kind {
  char *body;  /* the create body: the key */
  char *image; /* for messages */
  char *ready[DOCKER_POOL_MAX_SIZE];
  int n_ready;
  int failures;      /* consecutive failed creations */
  int64_t retry_ns;  /* not before this (CLOCK_MONOTONIC) */
  int64_t last_use_ns;  /* when a request last asked for this kind */
  int64_t last_fail_ns; /* when its last creation failed */
} pool_kind;

/* A kind whose creations failed this many times in a row rests until a
 * request asks for it again. */
#define DORMANT_AFTER_FAILURES 5

struct docker_pool {
  const docker_pool_ops *ops;
  void *user;
  int size;
  bool started;
  pthread_mutex_t mu;
  pthread_cond_t wake;
  pthread_t thread;
  bool stop;
  eb_ctx *ctx; /* the thread's calls; cancelled by docker_pool_free() */
  pool_kind kinds[DOCKER_POOL_MAX_KINDS];
  int n_kinds;
  char **doomed; /* containers to remove */
  size_t n_doomed, doomed_alloc;
  eb_pool_stats st; /* hits, misses, built, failed, discarded */
};

/* A kind that needs a container now, or NULL; *next_ns: when the earliest
 * delayed one may be retried. Under mu. */
static pool_kind *kind_to_fill(docker_pool *p, int64_t now, int64_t *next_ns) {
  *next_ns = INT64_MAX;
  for (int i = 0; i < p->n_kinds; i++) {
    pool_kind *k = &p->kinds[i];
    if (k->n_ready >= p->size)
      continue;
    if (k->failures >= DORMANT_AFTER_FAILURES && k->last_use_ns < k->last_fail_ns)
      continue;
    if (k->retry_ns <= now)
      return k;
    if (k->retry_ns < *next_ns)
      *next_ns = k->retry_ns;
  }
  return NULL;
}

static void *pool_main(void *arg) {
  docker_pool *p = arg;
  pthread_mutex_lock(&p->mu);
  while (!p->stop) {
    /* Removals first: they free what the next creations need. */
    if (p->n_doomed > 0) {
      char *id = p->doomed[--p->n_doomed];
      pthread_mutex_unlock(&p->mu);
      p->ops->remove(p->user, id);
      free(id);
      pthread_mutex_lock(&p->mu);
      continue;
    }
    int64_t next_ns;
    pool_kind *k = kind_to_fill(p, eb_now_ns(), &next_ns);
    if (k != NULL) {
      cleanup_free char *body = strdup(k->body);
      cleanup_free char *image = strdup(k->image);
      pthread_mutex_unlock(&p->mu);
      char *id = NULL;
      eb_error *err = NULL;
      int r = body && image ? p->ops->create(p->user, p->ctx, body, image, &id, &err) : -1;
      if (r == 0 && p->started && (r = p->ops->start(p->user, p->ctx, id, image, &err)) < 0) {
        p->ops->remove(p->user, id);
        free(id);
        id = NULL;
      }
      eb_error_free(err);
      pthread_mutex_lock(&p->mu);
      /* The kind may be gone or full by now (the pool is being freed). */
      k = NULL;
      for (int i = 0; body != NULL && i < p->n_kinds; i++)
        if (strcmp(p->kinds[i].body, body) == 0)
          k = &p->kinds[i];
      if (r == 0 && k != NULL && !p->stop && k->n_ready < p->size) {
        k->ready[k->n_ready++] = id;
        k->failures = 0;
        p->st.built++;
      } else if (r == 0) {
        p->st.discarded++;
        if (p->n_doomed < p->doomed_alloc)
          p->doomed[p->n_doomed++] = id;
        else {
          pthread_mutex_unlock(&p->mu);
          p->ops->remove(p->user, id);
          free(id);
          pthread_mutex_lock(&p->mu);
        }
      } else if (k != NULL) {
        p->st.failed++;
        k->last_fail_ns = eb_now_ns();
        /* 1 s, 2 s, 4 s ... 30 s: a missing image is not hammered. */
        int64_t ms = 1000LL << (k->failures < 5 ? k->failures : 5);
        if (ms > RETRY_MAX_MS)
          ms = RETRY_MAX_MS;
        k->failures++;
        k->retry_ns = eb_now_ns() + ms * 1000000;
      }
      continue;
    }
    if (next_ns == INT64_MAX) {
      pthread_cond_wait(&p->wake, &p->mu);
    } else {
      struct timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      int64_t wait_ns = next_ns - eb_now_ns();
      if (wait_ns < 0)
        wait_ns = 0;
      ts.tv_sec += (time_t)(wait_ns / 1000000000);
      ts.tv_nsec += (long)(wait_ns % 1000000000);
      if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
      }
      pthread_cond_timedwait(&p->wake, &p->mu, &ts);
    }
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

int docker_pool_new(const docker_pool_ops *ops, void *user, int size, bool started,
                    docker_pool **out, eb_error **err) {
  docker_pool *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return eb_error_set(err, ENOMEM, "allocate the warm pool");
  p->ops = ops;
  p->user = user;
  p->size = size < 1 ? 1 : size > DOCKER_POOL_MAX_SIZE ? DOCKER_POOL_MAX_SIZE : size;
  p->started = started;
  /* Room for every container the pool can hold plus as many in use. */
  p->doomed_alloc = (size_t)(2 * DOCKER_POOL_MAX_KINDS * p->size + 64);
  p->doomed = calloc(p->doomed_alloc, sizeof(char *));
  if (p->doomed == NULL || eb_ctx_new(NULL, 0, &p->ctx, err) < 0) {
    free(p->doomed);
    free(p);
    return eb_error_set(err, ENOMEM, "allocate the warm pool");
  }
  pthread_mutex_init(&p->mu, NULL);
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&p->wake, &ca);
  pthread_condattr_destroy(&ca);
  int r = pthread_create(&p->thread, NULL, pool_main, p);
  if (r != 0) {
    eb_ctx_free(p->ctx);
    pthread_cond_destroy(&p->wake);
    pthread_mutex_destroy(&p->mu);
    free(p->doomed);
    free(p);
    return eb_error_set(err, r, "start the warm pool's thread");
  }
  *out = p;
  return 0;
}

/* The kind for body, registered if new. When all slots are taken, the
 * kind used least recently gives its slot up (its containers are removed),
 * so that the kinds in use now are the ones kept. Under mu. */
static pool_kind *kind_for(docker_pool *p, const char *body, const char *image) {
  int64_t now = eb_now_ns();
  for (int i = 0; i < p->n_kinds; i++)
    if (strcmp(p->kinds[i].body, body) == 0) {
      p->kinds[i].last_use_ns = now;
      return &p->kinds[i];
    }
  pool_kind *k = NULL;
  if (p->n_kinds == DOCKER_POOL_MAX_KINDS) {
    k = &p->kinds[0];
    for (int i = 1; i < p->n_kinds; i++)
      if (p->kinds[i].last_use_ns < k->last_use_ns)
        k = &p->kinds[i];
    for (int i = 0; i < k->n_ready; i++) {
      if (p->n_doomed < p->doomed_alloc) {
        p->doomed[p->n_doomed++] = k->ready[i];
        p->st.discarded++;
      } else {
        free(k->ready[i]); /* cannot happen: room for every container the pool holds */
      }
    }
    free(k->body);
    free(k->image);
  } else {
    k = &p->kinds[p->n_kinds++];
  }
  memset(k, 0, sizeof(*k));
  k->body = strdup(body);
  k->image = strdup(image);
  k->last_use_ns = now;
  if (k->body == NULL || k->image == NULL) {
    /* Out of memory: give the slot back (the last kind moves into it). */
    free(k->body);
    free(k->image);
    *k = p->kinds[--p->n_kinds];
    return NULL;
  }
  return k;
}

bool docker_pool_take(docker_pool *p, const char *body, const char *image, char **id,
                      bool *started) {
  bool took = false;
  pthread_mutex_lock(&p->mu);
  pool_kind *k = kind_for(p, body, image);
  if (k != NULL && k->n_ready > 0) {
    /* The oldest first: a started one has waited longest. */
    *id = k->ready[0];
    memmove(k->ready, k->ready + 1, (size_t)(k->n_ready - 1) * sizeof(char *));
    k->n_ready--;
    *started = p->started;
    took = true;
  }
  if (took)
    p->st.hits++;
  else
    p->st.misses++;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->mu);
  return took;
}

void docker_pool_discard(docker_pool *p, char *id) {
  pthread_mutex_lock(&p->mu);
  if (!p->stop && p->n_doomed < p->doomed_alloc) {
    p->doomed[p->n_doomed++] = id;
    id = NULL;
    pthread_cond_signal(&p->wake);
  }
  pthread_mutex_unlock(&p->mu);
  if (id != NULL) { /* the queue is full or closing: remove it here */
    p->ops->remove(p->user, id);
    free(id);
  }
}

void docker_pool_free(docker_pool *p) {
  if (p == NULL)
    return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->mu);
  eb_ctx_cancel(p->ctx);
  pthread_join(p->thread, NULL);
  for (size_t i = 0; i < p->n_doomed; i++) {
    p->ops->remove(p->user, p->doomed[i]);
    free(p->doomed[i]);
  }
  for (int i = 0; i < p->n_kinds; i++) {
    for (int j = 0; j < p->kinds[i].n_ready; j++) {
      p->ops->remove(p->user, p->kinds[i].ready[j]);
      free(p->kinds[i].ready[j]);
    }
    free(p->kinds[i].body);
    free(p->kinds[i].image);
  }
  free(p->doomed);
  eb_ctx_free(p->ctx);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

void docker_pool_stats(docker_pool *p, eb_pool_stats *st) {
  pthread_mutex_lock(&p->mu);
  *st = p->st;
  st->ready = 0;
  for (int i = 0; i < p->n_kinds; i++)
    st->ready += p->kinds[i].n_ready;
  st->building = 0; /* one at a time, not counted */
  pthread_mutex_unlock(&p->mu);
}
