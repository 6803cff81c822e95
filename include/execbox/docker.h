/* The docker runtime: each execution in a fresh container of the Docker
 * Engine (or Podman's Docker-compatible service), driven over its API — no
 * docker CLI, no process spawned per call. See docs/runtimes.md.
 *
 * eb_runtime_new("docker", ...) (or SANDBOX_ENV=docker) configures it from
 * the environment; eb_docker_runtime_new() takes the same settings from C,
 * each NULL / negative field falling back to its environment variable, then
 * to the default. */
#ifndef EXECBOX_DOCKER_H
#define EXECBOX_DOCKER_H

#include <execbox/error.h>
#include <execbox/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the warm pool keeps ready. */
typedef enum eb_docker_pool_mode {
  EB_DOCKER_POOL_CREATED = 0, /* created, not started: saves the create call */
  EB_DOCKER_POOL_STARTED = 1, /* started and parked in the bootstrap, waiting for its code:
                                 saves the create and the start (the bulk of the cost) */
} eb_docker_pool_mode;

typedef struct eb_docker_options {
  /* The daemon: "unix:///PATH" or "tcp://HOST:PORT". NULL: $DOCKER_HOST, else
   * unix:///var/run/docker.sock. */
  const char *host;
  /* The image for every language. NULL: $EXECBOX_DOCKER_IMAGE, else a
   * default per language (python:3.12-slim, node:22-slim,
   * debian:bookworm-slim for bash and sh, gcc:14 for c). */
  const char *image;
  /* Per-language images, NULL-terminated "LANGUAGE=IMAGE" entries (names or
   * aliases: "python=myimage:1"); they win over image. NULL: the
   * $EXECBOX_DOCKER_IMAGE_<LANG> variables (LANG upper-cased: PYTHON,
   * JAVASCRIPT, BASH, SH, C). */
  const char *const *language_images;
  /* "UID[:GID]", numeric, never 0. NULL: $EXECBOX_DOCKER_USER, else
   * "65534:65534" (nobody). */
  const char *user;
  /* Containers kept ready per image and limits. < 0: $EXECBOX_DOCKER_POOL,
   * else 0 (no pool). At most 64. */
  int pool_size;
  /* An eb_docker_pool_mode; < 0: $EXECBOX_DOCKER_POOL_MODE ("created" or
   * "started"), else started. */
  int pool_mode;
  /* 1: pull an image that is not present (the only time the runtime pulls);
   * 0: never; < 0: $EXECBOX_DOCKER_PULL ("1"/"true"), else 0. */
  int pull;
} eb_docker_options;

/* Sets every field to "take it from the environment". */
EB_EXPORT void eb_docker_options_init(eb_docker_options *opts);

/* Creates a docker runtime (opts NULL: all from the environment). Strings
 * are copied. Contacts no daemon: that happens at the first execution or
 * probe. Fails with EB_ERR_USAGE for a malformed setting. The caller frees
 * *out with eb_runtime_free(), which also removes every container the
 * runtime still holds (the warm pool's). */
EB_EXPORT int eb_docker_runtime_new(const eb_docker_options *opts, eb_runtime **out,
                                    eb_error **err);

/* The image a docker runtime uses for language (name or alias): a static
 * string owned by the runtime, or NULL (not a docker runtime, unknown
 * language). */
EB_EXPORT const char *eb_docker_image(const eb_runtime *rt, const char *language);

#ifdef __cplusplus
}
#endif
#endif
