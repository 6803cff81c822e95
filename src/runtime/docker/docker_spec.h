/* What the docker runtime sends the daemon: the container's configuration
 * (POST /containers/create) and the bootstrap script that runs inside it.
 *
 * A container's command is fixed at creation, so that a container created
 * ahead of time (the warm pool) can serve any language and any request with
 * the same limits: it starts a tiny shell bootstrap (DOCKER_BOOT) that reads
 * a length-prefixed script from its stdin and evaluates it. That script,
 * built per execution, writes the code (which follows it on stdin) into the
 * work dir, exports the request's environment, compiles when the language
 * needs it and execs the program, whose stdin is whatever remains: the
 * request's stdin data, then EOF.
 *
 * The script reports through stdout, marked with a per-execution random
 * nonce the program never sees: NONCE "\n" first (the bootstrap ran), and
 * NONCE ":" WHAT as the very last bytes when it gives up before the program
 * ran ("compile" with the compiler's exit status, "missing PROGRAM" with 127,
 * "setup STEP" with 125). */
#ifndef EB_RUNTIME_DOCKER_SPEC_H
#define EB_RUNTIME_DOCKER_SPEC_H

#include <stddef.h>

#include <execbox/runtime.h>

#include "core/language_internal.h"

/* The container's command: sh -c DOCKER_BOOT. */
#define DOCKER_BOOT "read -r n && eval \"$(dd bs=\"$n\" count=1 iflag=fullblock 2>/dev/null)\""

/* The program's work dir and HOME, a tmpfs. */
#define DOCKER_WORKDIR "/sandbox"

#define DOCKER_NONCE_LEN 32 /* hex digits */

typedef struct docker_spec {
  const char *image;
  unsigned uid, gid;  /* the non-root user the program runs as */
  eb_limits limits;   /* defaults applied */
  /* Podman's compatibility API differs: it refuses tmpfs uid=/gid= options
   * (the work dir is then mode 1777 rather than the user's own 0700), and
   * without an explicit nproc rlimit it applies one of its own, above the
   * host's hard limit where root lacks CAP_SYS_RESOURCE. */
  bool podman;
  const char *owner;  /* labels that tell whose container it is (see docker.c) */
  const char *boot_id;
  const char *pidns; /* the pid namespace the pid is in (its inode), or NULL */
  long pid;
  long long start_time;
} docker_spec;

/* The body of POST /containers/create as compact JSON with sorted keys
 * (equal specs give equal strings: the pool's key). Malloc'd; NULL on
 * allocation failure. */
char *docker_create_body(const docker_spec *spec);

/* The script for one execution of code_len bytes of lang with args and env
 * (NAME=value entries; a NAME that is not a shell identifier is refused
 * with EB_ERR_USAGE). *out is malloc'd. */
int docker_boot_script(const eb_language *lang, size_t code_len, const char *const *args,
                       const char *const *env, const char *nonce, char **out, size_t *out_len,
                       eb_error **err);

#endif
