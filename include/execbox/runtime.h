/* Runtimes: where code runs. An instance is {ops, impl}; ops is a const
 * table. Select one by name ("local", "jail") or through SANDBOX_ENV.
 *
 * Every runtime fails closed: a limit the caller explicitly asks for that the
 * runtime cannot enforce makes execute() fail with EB_ERR_LIMIT_UNSUPPORTED;
 * it never runs the code weaker than asked. */
#ifndef EXECBOX_RUNTIME_H
#define EXECBOX_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <execbox/context.h>
#include <execbox/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Network policy of an execution. */
typedef enum eb_network {
  EB_NETWORK_DEFAULT = 0, /* the runtime's own default (jail: none; local: host) */
  EB_NETWORK_NONE = 1,    /* explicitly no network: refused by runtimes that cannot isolate */
  EB_NETWORK_HOST = 2,    /* explicitly allowed */
} eb_network;

/* Limits of one execution. A zero field means "the runtime's default" (see
 * eb_limits_defaults()); a non-zero field is an explicit request the runtime
 * must enforce or refuse. */
typedef struct eb_limits {
  int64_t wall_ms;         /* wall-clock time */
  int64_t cpu_ms;          /* CPU time (RLIMIT_CPU, rounded up to seconds) */
  int64_t memory_bytes;    /* memory */
  int64_t pids;            /* processes/threads */
  int64_t output_bytes;    /* captured stdout+stderr; past it the program is killed */
  int64_t file_size_bytes; /* largest file the program may write */
  int64_t tmp_bytes;       /* size of /tmp and the work dir (sandboxing runtimes) */
  int64_t open_files;      /* RLIMIT_NOFILE */
  int64_t cpu_milli;       /* CPU bandwidth in thousandths of a CPU (1000 = one CPU) */
  eb_network network;
} eb_limits;

/* The defaults used for zero fields. */
#define EB_DEFAULT_WALL_MS 30000
#define EB_DEFAULT_MEMORY_BYTES (512LL << 20)
#define EB_DEFAULT_PIDS 256
#define EB_DEFAULT_OUTPUT_BYTES (1LL << 20)
#define EB_DEFAULT_FILE_SIZE_BYTES (64LL << 20)
#define EB_DEFAULT_TMP_BYTES (64LL << 20)
#define EB_DEFAULT_OPEN_FILES 256
#define EB_DEFAULT_CPU_MILLI 1000

/* The largest values eb_runtime_execute() accepts (EB_ERR_USAGE above):
 * 1024 CPUs, the kernel's highest pid count, 30 days. */
#define EB_MAX_CPU_MILLI (1024LL * 1000)
#define EB_MAX_PIDS 4194304LL
#define EB_MAX_WALL_MS (30LL * 24 * 3600 * 1000)

/* One execution. All pointers are borrowed for the duration of the call. */
typedef struct eb_exec_request {
  const char *language;    /* name or alias, e.g. "python" */
  const char *code;        /* source text */
  size_t code_len;         /* 0: strlen(code) */
  const char *stdin_data;  /* NULL: stdin is /dev/null */
  size_t stdin_len;
  const char *const *args; /* NULL-terminated extra argv for the program, or NULL */
  const char *const *env;  /* NULL-terminated "NAME=value" additions, or NULL */
  eb_limits limits;
} eb_exec_request;

typedef enum eb_status {
  EB_STATUS_OK = 0,        /* exited 0 */
  EB_STATUS_NONZERO_EXIT,  /* exited with a non-zero code */
  EB_STATUS_COMPILE_ERROR, /* the compile step failed; output holds the compiler's messages */
  EB_STATUS_TIMEOUT,       /* wall-clock limit or the context's deadline */
  EB_STATUS_MEMORY_LIMIT,  /* killed for exceeding its memory limit */
  EB_STATUS_OUTPUT_LIMIT,  /* killed for exceeding the output cap */
  EB_STATUS_KILLED,        /* ended by a signal (see signal) */
  EB_STATUS_CANCELLED,     /* the context was cancelled */
  EB_STATUS_SANDBOX_ERROR, /* the sandbox failed while running */
} eb_status;

/* The result of one execution. Buffers are malloc'd, NUL-terminated (the
 * lengths exclude the NUL) and owned by the result: free them with
 * eb_exec_result_clear(). */
typedef struct eb_exec_result {
  char *output;        /* stdout and stderr interleaved in arrival order */
  size_t output_len;
  char *stdout_data;
  size_t stdout_len;
  char *stderr_data;
  size_t stderr_len;
  int exit_code;       /* exit code, or 128+signal when killed by a signal */
  int signal;          /* terminating signal, 0 if none */
  eb_status status;
  bool truncated;      /* output was cut at the cap */
  int64_t duration_ms; /* wall time of the whole execution */
  int64_t cpu_ms;      /* user+system CPU time */
  int64_t max_rss_kb;  /* peak resident memory */
} eb_exec_result;

/* Stable lower-case name of a status ("ok", "timeout", "memory_limit", ...). */
EB_EXPORT const char *eb_status_name(eb_status status);

/* Frees the buffers and zeroes the result. Safe on a zeroed result. */
EB_EXPORT void eb_exec_result_clear(eb_exec_result *res);

/* The result as one compact JSON object (exit_code, signal, status, output,
 * stdout, stderr, truncated, duration_ms, cpu_ms, max_rss_kb). The caller
 * frees the string with free(). NULL on allocation failure. */
EB_EXPORT char *eb_exec_result_to_json(const eb_exec_result *res);

/* Parses a result object as eb_exec_result_to_json() writes it into *res
 * (buffers malloc'd, owned by res). Returns 0, or < 0 with EB_ERR_PROTOCOL. */
EB_EXPORT int eb_exec_result_from_json(const char *json, size_t len, eb_exec_result *res,
                                       eb_error **err);

/* Fills limits with the documented defaults for zero fields; explicit fields
 * are left alone. */
EB_EXPORT void eb_limits_apply_defaults(eb_limits *limits);

/* Warm sandboxes: a runtime that has them builds sandboxes ahead of time,
 * each used for exactly one execution and then destroyed, so that building
 * one is off the critical path. The jail runtime keeps two kinds: plain
 * sandboxes (any language) and sandboxes holding a started Python
 * interpreter (the Python fast path). See docs/runtimes.md. */
typedef struct eb_pool_options {
  int size;                   /* sandboxes kept ready per kind; 0: no pool */
  int64_t idle_ms;            /* a kind unused this long is drained; 0: the default */
  const char *const *prewarm; /* languages to prepare at once (NULL-terminated), or NULL */
  bool wait;                  /* return only once the prewarmed sandboxes are ready */
} eb_pool_options;

#define EB_DEFAULT_POOL_SIZE 4
#define EB_MAX_POOL_SIZE 64
#define EB_DEFAULT_POOL_IDLE_MS 300000

/* Defaults, then the environment: EXECBOX_POOL (a size; 0 or "off" turns
 * the pool off) and EXECBOX_POOL_IDLE_MS. Returns 1 when EXECBOX_POOL is
 * set, 0 when not, < 0 with EB_ERR_USAGE when a value is malformed. */
EB_EXPORT int eb_pool_options_from_env(eb_pool_options *opts, eb_error **err);

typedef struct eb_pool_stats {
  uint64_t hits;      /* executions that ran in a warm sandbox */
  uint64_t fast;      /* of those, in a waiting Python interpreter */
  uint64_t misses;    /* executions that found none ready and ran cold */
  uint64_t built;     /* sandboxes built */
  uint64_t failed;    /* builds that failed */
  uint64_t discarded; /* warm sandboxes destroyed unused (idle limit, death, shutdown) */
  int ready;          /* ready now */
  int building;       /* being built now */
} eb_pool_stats;

typedef struct eb_runtime eb_runtime;

typedef struct eb_runtime_ops {
  const char *name;
  const char *description;
  /* Runs one request. Fills *res on success (which includes a program that
   * failed, timed out or was killed). Returns < 0 with *err only when the
   * execution could not happen. */
  int (*execute)(eb_runtime *rt, eb_ctx *ctx, const eb_exec_request *req, eb_exec_result *res,
                 eb_error **err);
  /* Frees impl. */
  void (*destroy)(eb_runtime *rt);
  /* Optional: reports what the runtime uses on this host in *detail
   * (malloc'd, caller frees). Returns 0 if usable, < 0 with *err if not. */
  int (*probe)(eb_runtime *rt, char **detail, eb_error **err);
  /* Optional: warm sandboxes (see eb_runtime_enable_pool). */
  int (*enable_pool)(eb_runtime *rt, const eb_pool_options *opts, eb_error **err);
  int (*pool_stats)(eb_runtime *rt, eb_pool_stats *stats);
} eb_runtime_ops;

struct eb_runtime {
  const eb_runtime_ops *ops;
  void *impl;
};

/* Creates a runtime by name. name NULL or "" uses $SANDBOX_ENV, then the
 * default ("jail"). Unknown names fail with EB_ERR_RUNTIME_UNKNOWN. The caller
 * owns *out and frees it with eb_runtime_free(). */
EB_EXPORT int eb_runtime_new(const char *name, eb_runtime **out, eb_error **err);

/* Frees a runtime; NULL is accepted. No execution may still be running on
 * it (with the jail's pool, its sandboxes are destroyed here). */
EB_EXPORT void eb_runtime_free(eb_runtime *rt);

/* The name the registry would pick for name (resolving NULL via SANDBOX_ENV
 * and the default). Static string. */
EB_EXPORT const char *eb_runtime_resolve_name(const char *name);

/* The runtimes built in: 0 <= i < eb_runtime_registry_count(). Static names. */
EB_EXPORT size_t eb_runtime_registry_count(void);
EB_EXPORT const char *eb_runtime_registry_name(size_t i);
EB_EXPORT const char *eb_runtime_registry_description(size_t i);

/* Probes a runtime instance (see eb_runtime_ops.probe). */
EB_EXPORT int eb_runtime_probe(eb_runtime *rt, char **detail, eb_error **err);

/* Starts the runtime's warm pool with opts (NULL: eb_pool_options_from_env).
 * Call it before executions run concurrently; once the pool runs, later
 * calls change nothing and return 0. Returns 0 when the pool runs or opts
 * turn it off, 1 when this runtime has no pool
 * (nothing done), < 0 with *err on failure. With opts->wait, returns once
 * the prewarmed sandboxes are ready (or failed to build). */
EB_EXPORT int eb_runtime_enable_pool(eb_runtime *rt, const eb_pool_options *opts, eb_error **err);

/* Fills *stats. Returns 0, or 1 when rt has no pool running. */
EB_EXPORT int eb_runtime_pool_stats(eb_runtime *rt, eb_pool_stats *stats);

/* Runs req on rt under ctx (ctx may be NULL). *res must be zeroed or cleared
 * by the caller first; on success the caller owns its buffers. */
EB_EXPORT int eb_runtime_execute(eb_runtime *rt, eb_ctx *ctx, const eb_exec_request *req,
                                 eb_exec_result *res, eb_error **err);

/* Shorthand: run code in language with default limits. */
EB_EXPORT int eb_execute(eb_runtime *rt, eb_ctx *ctx, const char *language, const char *code,
                         eb_exec_result *res, eb_error **err);

#ifdef __cplusplus
}
#endif
#endif
