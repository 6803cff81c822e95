/* The docker runtime's warm pool: containers made ahead of time, per
 * container configuration (image + limits: the create body is the key), by
 * a background thread that refills each kind back to its size; each
 * container is used once. The same thread removes used containers off the
 * caller's path.
 *
 * A kind is registered by the first request that asks for it (which runs
 * cold); at most DOCKER_POOL_MAX_KINDS kinds are kept, a new one taking the
 * slot of the kind used least recently. A kind whose creation fails (a
 * missing image, say) is retried with a growing delay, up to 30 s, and
 * rests after 5 failures in a row until a request asks for it again. */
#ifndef EB_RUNTIME_DOCKER_POOL_H
#define EB_RUNTIME_DOCKER_POOL_H

#include <stdbool.h>

#include <execbox/context.h>
#include <execbox/error.h>
#include <execbox/runtime.h>

#define DOCKER_POOL_MAX_KINDS 8
#define DOCKER_POOL_MAX_SIZE 64

/* How the pool makes and ends containers (the runtime's own functions). */
typedef struct docker_pool_ops {
  /* Creates a container from body; *id malloc'd. */
  int (*create)(void *user, eb_ctx *ctx, const char *body, const char *image, char **id,
                eb_error **err);
  /* Starts it (started mode). */
  int (*start)(void *user, eb_ctx *ctx, const char *id, const char *image, eb_error **err);
  /* Kills and removes it; failures are the runtime's to report. */
  void (*remove)(void *user, const char *id);
} docker_pool_ops;

typedef struct docker_pool docker_pool;

/* Starts the pool's thread. size: containers per kind; started: park them
 * started (EB_DOCKER_POOL_STARTED). ops and user must outlive the pool. */
int docker_pool_new(const docker_pool_ops *ops, void *user, int size, bool started,
                    docker_pool **out, eb_error **err);

/* A ready container for body: returns true with *id (malloc'd, the
 * caller's to use once and hand to docker_pool_discard() or remove) and
 * *started. false when none is ready; the kind is registered then, so that
 * the pool fills it for the next request. */
bool docker_pool_take(docker_pool *p, const char *body, const char *image, char **id,
                      bool *started);

/* Hands a used container to the background thread for removal (takes id). */
void docker_pool_discard(docker_pool *p, char *id);

/* Counters for eb_runtime_pool_stats() (fast is always 0). */
void docker_pool_stats(docker_pool *p, eb_pool_stats *st);

/* Stops the thread (an in-flight creation is cancelled) and removes every
 * container the pool holds or was asked to remove, before returning. */
void docker_pool_free(docker_pool *p);

#endif
