/* The docker runtime's parts that need no daemon: the multiplexed stream
 * decoder, the container configuration, the bootstrap script, DOCKER_HOST
 * parsing and the configuration from options and the environment. The
 * runtime against a real daemon is tested in tests/docker/. */
#include "runner.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <execbox/docker.h>

#include "core/capture.h"
#include "runtime/docker/docker_api.h"
#include "runtime/docker/docker_mux.h"
#include "runtime/docker/docker_pool.h"
#include "runtime/docker/docker_spec.h"

/* ------------------------------------------------------------------ mux */

typedef struct collected {
  eb_buf out, err, sys;
  int calls;
} collected;

static int collect(void *user, int stream, const char *data, size_t len) {
  collected *c = user;
  c->calls++;
  eb_buf *b = stream == DOCKER_STREAM_STDOUT ? &c->out : stream == DOCKER_STREAM_STDERR ? &c->err
                                                                                        : &c->sys;
  return eb_buf_append(b, data, len);
}

static void collected_free(collected *c) {
  free(c->out.data);
  free(c->err.data);
  free(c->sys.data);
}

/* A frame: stream, three zero bytes, big-endian length, payload. */
static size_t frame(char *dst, int stream, const char *payload) {
  size_t n = strlen(payload);
  dst[0] = (char)stream;
  dst[1] = dst[2] = dst[3] = 0;
  dst[4] = (char)(n >> 24);
  dst[5] = (char)(n >> 16);
  dst[6] = (char)(n >> 8);
  dst[7] = (char)n;
  memcpy(dst + 8, payload, n);
  return 8 + n;
}

static size_t sample_stream(char *buf) {
  size_t n = 0;
  n += frame(buf + n, DOCKER_STREAM_STDOUT, "hello ");
  n += frame(buf + n, DOCKER_STREAM_STDERR, "warning\n");
  n += frame(buf + n, DOCKER_STREAM_STDOUT, "");
  n += frame(buf + n, DOCKER_STREAM_STDOUT, "world\n");
  n += frame(buf + n, DOCKER_STREAM_SYSTEMERR, "daemon says no");
  return n;
}

static void test_mux_decodes_frames(void **state) {
  char buf[256];
  size_t n = sample_stream(buf);
  collected c = {0};
  docker_mux m;
  docker_mux_init(&m);
  assert_int_equal(docker_mux_feed(&m, buf, n, collect, &c), 0);
  assert_true(docker_mux_at_boundary(&m));
  assert_string_equal(c.out.data, "hello world\n");
  assert_string_equal(c.err.data, "warning\n");
  assert_string_equal(c.sys.data, "daemon says no");
  collected_free(&c);
}

static void test_mux_any_split(void **state) {
  char buf[256];
  size_t n = sample_stream(buf);
  /* Every chunk size, so that headers and payloads split everywhere. */
  for (size_t chunk = 1; chunk <= n; chunk++) {
    collected c = {0};
    docker_mux m;
    docker_mux_init(&m);
    for (size_t off = 0; off < n; off += chunk) {
      size_t k = n - off < chunk ? n - off : chunk;
      assert_int_equal(docker_mux_feed(&m, buf + off, k, collect, &c), 0);
    }
    assert_true(docker_mux_at_boundary(&m));
    assert_string_equal(c.out.data, "hello world\n");
    assert_string_equal(c.err.data, "warning\n");
    collected_free(&c);
  }
}

static void test_mux_partial_is_not_boundary(void **state) {
  char buf[64];
  size_t n = frame(buf, DOCKER_STREAM_STDOUT, "abcdef");
  collected c = {0};
  docker_mux m;
  docker_mux_init(&m);
  assert_int_equal(docker_mux_feed(&m, buf, 5, collect, &c), 0);
  assert_false(docker_mux_at_boundary(&m));
  assert_int_equal(docker_mux_feed(&m, buf + 5, n - 7, collect, &c), 0);
  assert_false(docker_mux_at_boundary(&m));
  assert_int_equal(docker_mux_feed(&m, buf + n - 2, 2, collect, &c), 0);
  assert_true(docker_mux_at_boundary(&m));
  assert_string_equal(c.out.data, "abcdef");
  collected_free(&c);
}

static void test_mux_rejects_malformed_header(void **state) {
  char buf[64];
  size_t n = frame(buf, DOCKER_STREAM_STDOUT, "x");
  buf[0] = 7; /* no such stream */
  collected c = {0};
  docker_mux m;
  docker_mux_init(&m);
  assert_int_equal(docker_mux_feed(&m, buf, n, collect, &c), -EPROTO);
  assert_false(docker_mux_at_boundary(&m));
  /* Broken for good: later bytes are refused too. */
  n = frame(buf, DOCKER_STREAM_STDOUT, "x");
  assert_int_equal(docker_mux_feed(&m, buf, n, collect, &c), -EPROTO);
  assert_int_equal(c.calls, 0);

  docker_mux_init(&m);
  n = frame(buf, DOCKER_STREAM_STDOUT, "x");
  buf[2] = 1; /* padding must be zero */
  assert_int_equal(docker_mux_feed(&m, buf, n, collect, &c), -EPROTO);
  collected_free(&c);
}

static int refuse(void *user, int stream, const char *data, size_t len) { return -42; }

static void test_mux_callback_stops(void **state) {
  char buf[64];
  size_t n = frame(buf, DOCKER_STREAM_STDERR, "abc");
  docker_mux m;
  docker_mux_init(&m);
  assert_int_equal(docker_mux_feed(&m, buf, n, refuse, NULL), -42);
}

/* ------------------------------------------------------- create body */

static docker_spec sample_spec(void) {
  docker_spec s = {.image = "execbox-test-python:bookworm", .uid = 65534, .gid = 65534,
                   .owner = "boot/1/2/0", .boot_id = "boot", .pid = 1, .start_time = 2};
  eb_limits_apply_defaults(&s.limits);
  return s;
}

static json_t *body_of(const docker_spec *s) {
  char *body = docker_create_body(s);
  assert_non_null(body);
  json_error_t e;
  json_t *j = json_loads(body, 0, &e);
  assert_non_null(j);
  free(body);
  return j;
}

static const char *str_at(json_t *j, const char *k1, const char *k2) {
  json_t *v = json_object_get(j, k1);
  if (k2 != NULL)
    v = json_object_get(v, k2);
  return json_string_value(v);
}

static json_int_t int_at(json_t *j, const char *k1, const char *k2) {
  json_t *v = json_object_get(json_object_get(j, k1), k2);
  assert_true(json_is_integer(v));
  return json_integer_value(v);
}

static json_int_t ulimit_of(json_t *host, const char *name) {
  size_t i;
  json_t *u;
  json_array_foreach(json_object_get(host, "Ulimits"), i, u) {
    if (strcmp(json_string_value(json_object_get(u, "Name")), name) == 0) {
      assert_int_equal(json_integer_value(json_object_get(u, "Soft")),
                       json_integer_value(json_object_get(u, "Hard")));
      return json_integer_value(json_object_get(u, "Soft"));
    }
  }
  return -1;
}

static void test_create_body_safety_flags(void **state) {
  docker_spec s = sample_spec();
  json_t *j = body_of(&s);
  json_t *host = json_object_get(j, "HostConfig");
  assert_string_equal(str_at(j, "Image", NULL), "execbox-test-python:bookworm");
  assert_string_equal(str_at(j, "User", NULL), "65534:65534");
  assert_string_equal(str_at(j, "WorkingDir", NULL), DOCKER_WORKDIR);
  assert_string_equal(str_at(host, "NetworkMode", NULL), "none");
  assert_true(json_is_true(json_object_get(host, "ReadonlyRootfs")));
  assert_true(json_is_true(json_object_get(host, "Init")));
  assert_true(json_is_false(json_object_get(host, "AutoRemove")));
  assert_true(json_is_false(json_object_get(host, "Privileged")));
  assert_string_equal(json_string_value(json_array_get(json_object_get(host, "CapDrop"), 0)), "ALL");
  assert_string_equal(json_string_value(json_array_get(json_object_get(host, "SecurityOpt"), 0)),
                      "no-new-privileges");
  /* Memory and memory+swap equal: no swap. */
  assert_int_equal(int_at(j, "HostConfig", "Memory"), EB_DEFAULT_MEMORY_BYTES);
  assert_int_equal(int_at(j, "HostConfig", "MemorySwap"), EB_DEFAULT_MEMORY_BYTES);
  assert_int_equal(int_at(j, "HostConfig", "NanoCpus"), 1000000000LL);
  assert_int_equal(int_at(j, "HostConfig", "PidsLimit"), EB_DEFAULT_PIDS);
  assert_non_null(strstr(str_at(host, "Tmpfs", "/tmp"), "size=67108864"));
  const char *work = str_at(host, "Tmpfs", DOCKER_WORKDIR);
  assert_non_null(strstr(work, "size=67108864"));
  assert_non_null(strstr(work, "uid=65534,gid=65534"));
  assert_non_null(strstr(work, "nosuid"));
  assert_int_equal(ulimit_of(host, "nofile"), EB_DEFAULT_OPEN_FILES);
  assert_int_equal(ulimit_of(host, "fsize"), EB_DEFAULT_FILE_SIZE_BYTES);
  assert_int_equal(ulimit_of(host, "core"), 0);
  assert_int_equal(ulimit_of(host, "cpu"), -1); /* only when asked */
  /* The bootstrap reads its orders from stdin, which ends with ours. */
  assert_string_equal(json_string_value(json_array_get(json_object_get(j, "Cmd"), 2)), DOCKER_BOOT);
  assert_int_equal(json_array_size(json_object_get(j, "Entrypoint")), 0);
  assert_true(json_is_true(json_object_get(j, "OpenStdin")));
  assert_true(json_is_true(json_object_get(j, "StdinOnce")));
  assert_true(json_is_false(json_object_get(j, "Tty")));
  assert_string_equal(str_at(j, "Labels", "execbox"), "boot/1/2/0");
  json_decref(j);
}

static void test_create_body_limits(void **state) {
  docker_spec s = sample_spec();
  s.limits = (eb_limits){.memory_bytes = 128LL << 20, .cpu_milli = 500, .pids = 32,
                         .tmp_bytes = 1 << 20, .cpu_ms = 1500, .open_files = 64,
                         .file_size_bytes = 4096};
  eb_limits_apply_defaults(&s.limits);
  s.uid = 1000;
  s.gid = 100;
  json_t *j = body_of(&s);
  json_t *host = json_object_get(j, "HostConfig");
  assert_int_equal(int_at(j, "HostConfig", "Memory"), 128LL << 20);
  assert_int_equal(int_at(j, "HostConfig", "MemorySwap"), 128LL << 20);
  assert_int_equal(int_at(j, "HostConfig", "NanoCpus"), 500000000LL);
  assert_int_equal(int_at(j, "HostConfig", "PidsLimit"), 32);
  assert_int_equal(int_at(j, "HostConfig", "ShmSize"), 1 << 20);
  assert_non_null(strstr(str_at(host, "Tmpfs", "/tmp"), "size=1048576"));
  assert_non_null(strstr(str_at(host, "Tmpfs", DOCKER_WORKDIR), "uid=1000,gid=100"));
  assert_int_equal(ulimit_of(host, "cpu"), 2); /* 1.5 s rounded up */
  assert_int_equal(ulimit_of(host, "nofile"), 64);
  assert_int_equal(ulimit_of(host, "fsize"), 4096);
  assert_string_equal(str_at(j, "User", NULL), "1000:100");
  json_decref(j);
}

static void test_create_body_for_podman(void **state) {
  docker_spec s = sample_spec();
  s.podman = true;
  json_t *j = body_of(&s);
  json_t *host = json_object_get(j, "HostConfig");
  const char *work = str_at(host, "Tmpfs", DOCKER_WORKDIR);
  assert_null(strstr(work, "uid="));
  assert_non_null(strstr(work, "mode=1777"));
  assert_int_equal(ulimit_of(host, "nproc"), 4096);
  json_decref(j);
  s.podman = false;
  j = body_of(&s);
  assert_int_equal(ulimit_of(json_object_get(j, "HostConfig"), "nproc"), -1);
  json_decref(j);
}

static void test_create_body_is_a_stable_key(void **state) {
  docker_spec a = sample_spec(), b = sample_spec();
  char *ja = docker_create_body(&a), *jb = docker_create_body(&b);
  assert_string_equal(ja, jb);
  b.limits.memory_bytes *= 2;
  char *jc = docker_create_body(&b);
  assert_string_not_equal(ja, jc);
  free(ja);
  free(jb);
  free(jc);
}

/* ---------------------------------------------------------- boot script */

static char *script_for(const char *language, size_t code_len, const char *const *args,
                        const char *const *env) {
  char *script = NULL;
  size_t len = 0;
  eb_error *err = NULL;
  int r = docker_boot_script(eb_language_find(language), code_len, args, env,
                             "0123456789abcdef0123456789abcdef", &script, &len, &err);
  if (r < 0)
    fprintf(stderr, "%s\n", err->msg);
  assert_int_equal(r, 0);
  assert_int_equal(strlen(script), len);
  return script;
}

/* Runs the script's `set --` line in sh and prints the arguments, one per
 * line, as the program would receive them. */
static char *args_seen(const char *script) {
  const char *set = strstr(script, "set --");
  assert_non_null(set);
  const char *end = strstr(set, "\nexec \"$@\"\n"); /* arguments may hold newlines */
  assert_non_null(end);
  char *path = eb_test_mkdtemp("docker-args");
  char file[512];
  snprintf(file, sizeof(file), "%s/s.sh", path);
  FILE *f = fopen(file, "w");
  assert_non_null(f);
  fprintf(f, "%.*s\nfor a in \"$@\"; do printf '[%%s]\\n' \"$a\"; done\n", (int)(end - set), set);
  fclose(f);
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "sh %s", file);
  FILE *p = popen(cmd, "r");
  assert_non_null(p);
  static char out[4096];
  size_t n = fread(out, 1, sizeof(out) - 1, p);
  out[n] = '\0';
  pclose(p);
  eb_test_rmtree(path);
  free(path);
  return out;
}

static void test_script_quotes_args(void **state) {
  const char *args[] = {"plain", "two words", "it's", "$(touch /tmp/pwned)", "`x`", "a\nb", "",
                        NULL};
  char *s = script_for("python", 10, args, NULL);
  assert_string_equal(args_seen(s), "[python3]\n[-u]\n[main.py]\n[plain]\n[two words]\n[it's]\n"
                                    "[$(touch /tmp/pwned)]\n[`x`]\n[a\nb]\n[]\n");
  assert_non_null(strstr(s, "dd of=main.py bs=10 count=1 iflag=fullblock"));
  assert_non_null(strstr(s, "command -v 'python3'"));
  assert_non_null(strstr(s, "exec \"$@\""));
  /* The acknowledgement comes first. */
  assert_int_equal(strncmp(s, "printf '%s\\n' '0123456789abcdef0123456789abcdef'\n", 49), 0);
  free(s);
}

static void test_script_env_and_compile(void **state) {
  const char *env[] = {"GREETING=it's me", "EMPTY=", NULL};
  char *s = script_for("c", 0, NULL, env);
  assert_non_null(strstr(s, "export GREETING='it'\\''s me'\n"));
  assert_non_null(strstr(s, "export EMPTY=''\n"));
  assert_non_null(strstr(s, ": >main.c"));
  assert_non_null(strstr(s, "'cc' '-O2'"));
  assert_non_null(strstr(s, "|| m compile $?"));
  assert_null(strstr(s, "command -v './main'")); /* made by the compile step */
  free(s);
}

static void test_script_refuses_bad_env_names(void **state) {
  const char *bad[][2] = {{"A-B=1", NULL}, {"1X=1", NULL}, {"=x", NULL}, {"NOEQUALS", NULL},
                          {"A;rm=1", NULL}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char *script = NULL;
    size_t len = 0;
    eb_error *err = NULL;
    assert_true(docker_boot_script(eb_language_find("sh"), 1, NULL, bad[i], "n", &script, &len,
                                   &err) < 0);
    assert_int_equal(err->code, EB_ERR_USAGE);
    eb_error_free(err);
  }
}

/* ------------------------------------------------------------ the host */

static void test_host_parsing(void **state) {
  docker_api api;
  eb_error *err = NULL;
  unsetenv("DOCKER_HOST");
  unsetenv("DOCKER_TLS_VERIFY");
  assert_int_equal(docker_api_init(&api, NULL, &err), 0);
  assert_string_equal(api.socket_path, "/var/run/docker.sock");
  assert_string_equal(api.base, "http://docker");
  docker_api_free(&api);

  setenv("DOCKER_HOST", "unix:///run/user/1000/podman/podman.sock", 1);
  assert_int_equal(docker_api_init(&api, NULL, &err), 0);
  assert_string_equal(api.socket_path, "/run/user/1000/podman/podman.sock");
  docker_api_free(&api);

  assert_int_equal(docker_api_init(&api, "tcp://127.0.0.1", &err), 0);
  assert_null(api.socket_path);
  assert_string_equal(api.base, "http://127.0.0.1:2375");
  docker_api_free(&api);
  assert_int_equal(docker_api_init(&api, "tcp://localhost:2376/", &err), 0);
  assert_string_equal(api.base, "http://localhost:2376");
  assert_string_equal(api.host_header, "localhost:2376");
  docker_api_free(&api);

  assert_true(docker_api_init(&api, "ssh://user@host", &err) < 0);
  assert_int_equal(err->code, EB_ERR_USAGE);
  eb_error_free(err);
  err = NULL;
  docker_api_free(&api);
  assert_true(docker_api_init(&api, "unix://relative.sock", &err) < 0);
  eb_error_free(err);
  err = NULL;
  docker_api_free(&api);

  setenv("DOCKER_TLS_VERIFY", "1", 1);
  assert_true(docker_api_init(&api, "tcp://127.0.0.1:2376", &err) < 0);
  assert_int_equal(err->code, EB_ERR_RUNTIME_UNAVAILABLE);
  assert_non_null(strstr(err->msg, "TLS"));
  eb_error_free(err);
  docker_api_free(&api);
  unsetenv("DOCKER_TLS_VERIFY");
  unsetenv("DOCKER_HOST");
}

/* ------------------------------------------------------- configuration */

static void clear_env(void) {
  const char *vars[] = {"EXECBOX_DOCKER_IMAGE", "EXECBOX_DOCKER_IMAGE_PYTHON",
                        "EXECBOX_DOCKER_IMAGE_SH", "EXECBOX_DOCKER_USER", "EXECBOX_DOCKER_POOL",
                        "EXECBOX_DOCKER_POOL_MODE", "EXECBOX_DOCKER_PULL", "DOCKER_HOST"};
  for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
    unsetenv(vars[i]);
}

static void test_images_from_defaults_env_and_options(void **state) {
  clear_env();
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_runtime_new("docker", &rt, &err), 0);
  assert_string_equal(eb_docker_image(rt, "python"), "python:3.12-slim");
  assert_string_equal(eb_docker_image(rt, "js"), "node:22-slim");
  assert_string_equal(eb_docker_image(rt, "c"), "gcc:14");
  assert_null(eb_docker_image(rt, "cobol"));
  eb_runtime_free(rt);

  setenv("EXECBOX_DOCKER_IMAGE", "all:1", 1);
  setenv("EXECBOX_DOCKER_IMAGE_PYTHON", "py:2", 1);
  assert_int_equal(eb_runtime_new("docker", &rt, &err), 0);
  assert_string_equal(eb_docker_image(rt, "py"), "py:2");
  assert_string_equal(eb_docker_image(rt, "sh"), "all:1");
  eb_runtime_free(rt);

  /* Options win; per-language entries win over the image for all. */
  eb_docker_options o;
  eb_docker_options_init(&o);
  const char *per_language[] = {"sh=shell:3", NULL};
  o.image = "opt:1";
  o.language_images = per_language;
  assert_int_equal(eb_docker_runtime_new(&o, &rt, &err), 0);
  assert_string_equal(eb_docker_image(rt, "python"), "opt:1");
  assert_string_equal(eb_docker_image(rt, "sh"), "shell:3");
  eb_runtime_free(rt);

  /* Not a docker runtime. */
  assert_int_equal(eb_runtime_new("local", &rt, &err), 0);
  assert_null(eb_docker_image(rt, "python"));
  eb_runtime_free(rt);
  clear_env();
}

static void expect_usage(const eb_docker_options *o, const char *needle) {
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  assert_true(eb_docker_runtime_new(o, &rt, &err) < 0);
  assert_null(rt);
  assert_int_equal(err->code, EB_ERR_USAGE);
  if (strstr(err->msg, needle) == NULL)
    fail_msg("`%s` lacks `%s`", err->msg, needle);
  eb_error_free(err);
}

static void test_bad_settings_refused(void **state) {
  clear_env();
  eb_docker_options o;
  eb_docker_options_init(&o);
  o.user = "0";
  expect_usage(&o, "root");
  o.user = "1000:0";
  expect_usage(&o, "root");
  o.user = "nobody";
  expect_usage(&o, "numeric");
  o.user = NULL;
  o.pool_size = 1000;
  expect_usage(&o, "at most");
  o.pool_size = -1;
  const char *bad_lang[] = {"cobol=x:1", NULL};
  o.language_images = bad_lang;
  expect_usage(&o, "cobol");
  o.language_images = NULL;
  o.image = "has space";
  expect_usage(&o, "image reference");
  o.image = NULL;

  setenv("EXECBOX_DOCKER_POOL", "lots", 1);
  expect_usage(NULL, "EXECBOX_DOCKER_POOL");
  setenv("EXECBOX_DOCKER_POOL", "2", 1);
  setenv("EXECBOX_DOCKER_POOL_MODE", "warm", 1);
  expect_usage(NULL, "EXECBOX_DOCKER_POOL_MODE");
  unsetenv("EXECBOX_DOCKER_POOL_MODE");
  setenv("EXECBOX_DOCKER_PULL", "maybe", 1);
  expect_usage(NULL, "EXECBOX_DOCKER_PULL");
  clear_env();
}

static void test_unreachable_daemon_is_typed(void **state) {
  clear_env();
  setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock", 1);
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_runtime_new("docker", &rt, &err), 0); /* no daemon contact yet */
  eb_exec_result res = {0};
  assert_true(eb_execute(rt, NULL, "python", "print(1)", &res, &err) < 0);
  assert_int_equal(err->code, EB_ERR_RUNTIME_UNAVAILABLE);
  assert_non_null(strstr(err->msg, "/nonexistent/docker.sock"));
  eb_error_free(err);
  err = NULL;
  char *detail = NULL;
  assert_true(eb_runtime_probe(rt, &detail, &err) < 0);
  assert_int_equal(err->code, EB_ERR_RUNTIME_UNAVAILABLE);
  eb_error_free(err);
  err = NULL;
  /* Refused before any daemon is asked. */
  eb_exec_request req = {.language = "python", .code = "1", .limits.network = EB_NETWORK_HOST};
  assert_true(eb_runtime_execute(rt, NULL, &req, &res, &err) < 0);
  assert_int_equal(err->code, EB_ERR_LIMIT_UNSUPPORTED);
  eb_error_free(err);
  eb_runtime_free(rt);
  clear_env();
}

/* ----------------------------------------------------------------- pool */

/* Pool operations that make no container: ids "c1", "c2", ...; removals
 * are recorded. */
typedef struct fake_daemon {
  pthread_mutex_t mu;
  int created, removed;
  char removed_ids[64][16];
} fake_daemon;

static int fake_create(void *user, eb_ctx *ctx, const char *body, const char *image, char **id,
                       eb_error **err) {
  (void)ctx, (void)body, (void)image, (void)err;
  fake_daemon *f = user;
  pthread_mutex_lock(&f->mu);
  int n = ++f->created;
  pthread_mutex_unlock(&f->mu);
  return asprintf(id, "c%d", n) < 0 ? -1 : 0;
}

static int fake_start(void *user, eb_ctx *ctx, const char *id, const char *image, eb_error **err) {
  (void)user, (void)ctx, (void)id, (void)image, (void)err;
  return 0;
}

static void fake_remove(void *user, const char *id) {
  fake_daemon *f = user;
  pthread_mutex_lock(&f->mu);
  if (f->removed < 64)
    snprintf(f->removed_ids[f->removed], sizeof(f->removed_ids[0]), "%s", id);
  f->removed++;
  pthread_mutex_unlock(&f->mu);
}

static const docker_pool_ops fake_ops = {fake_create, fake_start, fake_remove};

static void wait_ready(docker_pool *p, int ready) {
  eb_pool_stats st;
  for (int i = 0; i < 500; i++) {
    docker_pool_stats(p, &st);
    if (st.ready >= ready)
      return;
    struct timespec ms = {0, 10 * 1000000};
    nanosleep(&ms, NULL);
  }
  fail_msg("pool did not fill to %d (ready %d)", ready, st.ready);
}

/* A kind registers with its first request (a miss), fills to the size, is
 * served from; with every slot taken the least recently used kind makes
 * room (its containers removed); freeing the pool removes the rest. */
static void test_pool_kinds_and_eviction(void **state) {
  (void)state;
  fake_daemon f = {.mu = PTHREAD_MUTEX_INITIALIZER};
  docker_pool *p = NULL;
  eb_error *err = NULL;
  assert_int_equal(docker_pool_new(&fake_ops, &f, 2, true, &p, &err), 0);
  char *id = NULL;
  bool started = false;
  assert_false(docker_pool_take(p, "body-0", "img", &id, &started));
  wait_ready(p, 2);
  assert_true(docker_pool_take(p, "body-0", "img", &id, &started));
  assert_true(started);
  free(id);
  /* Seven more kinds fill the 8 slots; kind 0 was used last of the first. */
  char body[32];
  for (int k = 1; k < DOCKER_POOL_MAX_KINDS; k++) {
    snprintf(body, sizeof(body), "body-%d", k);
    assert_false(docker_pool_take(p, body, "img", &id, &started));
    wait_ready(p, 2 * (k + 1));
  }
  assert_true(docker_pool_take(p, "body-0", "img", &id, &started)); /* kind 0: recent again */
  free(id);
  wait_ready(p, 2 * DOCKER_POOL_MAX_KINDS);
  /* A ninth kind: kind 1, the least recently used, gives its slot up. */
  int removed_before = f.removed;
  assert_false(docker_pool_take(p, "body-new", "img", &id, &started));
  for (int i = 0; i < 500 && f.removed < removed_before + 2; i++) {
    struct timespec ms = {0, 10 * 1000000};
    nanosleep(&ms, NULL);
  }
  assert_int_equal(f.removed, removed_before + 2);
  wait_ready(p, 2 * DOCKER_POOL_MAX_KINDS);
  assert_false(docker_pool_take(p, "body-1", "img", &id, &started)); /* it has to come back */
  assert_true(docker_pool_take(p, "body-0", "img", &id, &started));  /* kind 0 stayed */
  free(id);
  eb_pool_stats st;
  docker_pool_stats(p, &st);
  assert_int_equal(st.hits, 3);
  assert_true(st.misses >= 9);
  docker_pool_free(p);
  /* Every container made was either handed out (3) or removed. */
  assert_int_equal(f.created, f.removed + 3);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pool_kinds_and_eviction),
    cmocka_unit_test(test_mux_decodes_frames),
    cmocka_unit_test(test_mux_any_split),
    cmocka_unit_test(test_mux_partial_is_not_boundary),
    cmocka_unit_test(test_mux_rejects_malformed_header),
    cmocka_unit_test(test_mux_callback_stops),
    cmocka_unit_test(test_create_body_safety_flags),
    cmocka_unit_test(test_create_body_limits),
    cmocka_unit_test(test_create_body_for_podman),
    cmocka_unit_test(test_create_body_is_a_stable_key),
    cmocka_unit_test(test_script_quotes_args),
    cmocka_unit_test(test_script_env_and_compile),
    cmocka_unit_test(test_script_refuses_bad_env_names),
    cmocka_unit_test(test_host_parsing),
    cmocka_unit_test(test_images_from_defaults_env_and_options),
    cmocka_unit_test(test_bad_settings_refused),
    cmocka_unit_test(test_unreachable_daemon_is_typed),
};

EB_TEST_MAIN(tests)
