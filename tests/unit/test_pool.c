/* The jail's warm pool and its Python fast path: the same results as a
 * cold sandbox, nothing carried from one execution to the next, a pool
 * that survives its sandboxes being killed while idle, stays within its
 * size and drains. Needs user namespaces (skipped without them). */
#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <execbox/execbox.h>

typedef struct pool_env {
  eb_runtime *cold, *warm;
} pool_env;

static void sleep_ms(int ms) {
  struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static eb_runtime *new_jail(void) {
  eb_runtime *rt = NULL;
  eb_error *err = NULL;
  if (eb_runtime_new("jail", &rt, &err) < 0) {
    print_error("jail: %s\n", err->msg);
    eb_error_free(err);
    return NULL;
  }
  char *detail = NULL;
  if (eb_runtime_probe(rt, &detail, &err) < 0) {
    print_error("jail unusable here: %s\n", err->msg);
    eb_error_free(err);
    eb_runtime_free(rt);
    return NULL;
  }
  free(detail);
  return rt;
}

static int start_pool(eb_runtime *rt, int size, int64_t idle_ms, const char *const *prewarm) {
  eb_pool_options o = {.size = size, .idle_ms = idle_ms, .prewarm = prewarm, .wait = true};
  eb_error *err = NULL;
  if (eb_runtime_enable_pool(rt, &o, &err) != 0) {
    print_error("enable_pool: %s\n", err ? err->msg : "no pool");
    eb_error_free(err);
    return -1;
  }
  return 0;
}

/* Until the pool holds `ready` sandboxes (at most 10 s). */
static void wait_ready(eb_runtime *rt, int ready) {
  eb_pool_stats st;
  for (int i = 0; i < 1000; i++) {
    assert_int_equal(eb_runtime_pool_stats(rt, &st), 0);
    if (st.ready >= ready)
      return;
    sleep_ms(10);
  }
  fail_msg("the pool did not refill to %d (ready %d, building %d)", ready, st.ready, st.building);
}

static int setup(void **state) {
  pool_env *e = calloc(1, sizeof(*e));
  e->cold = new_jail();
  e->warm = new_jail();
  if (e->cold == NULL || e->warm == NULL) {
    eb_runtime_free(e->cold);
    eb_runtime_free(e->warm);
    free(e);
    return -1;
  }
  const char *prewarm[] = {"python", "sh", NULL};
  if (start_pool(e->warm, 2, 0, prewarm) < 0)
    return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  pool_env *e = *state;
  eb_runtime_free(e->cold);
  eb_runtime_free(e->warm);
  free(e);
  return 0;
}

static void run(eb_runtime *rt, eb_ctx *ctx, const eb_exec_request *req, eb_exec_result *res) {
  eb_error *err = NULL;
  memset(res, 0, sizeof(*res));
  int r = eb_runtime_execute(rt, ctx, req, res, &err);
  if (r < 0)
    fail_msg("execute: %s", err->msg);
}

static uint64_t fast_count(eb_runtime *rt) {
  eb_pool_stats st;
  assert_int_equal(eb_runtime_pool_stats(rt, &st), 0);
  return st.fast;
}

typedef struct script {
  const char *name, *code, *stdin_data;
  const char *args[3];
  const char *env[3];
} script;

/* Each script runs cold and in a waiting interpreter: status, exit code,
 * signal, stdout and stderr must be the same. (Positional entries: the
 * fields left out are NULL.) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const script scripts[] = {
    {"print", "print('hello')\n"},
    {"exit code", "import sys\nsys.exit(3)\n"},
    {"exit message", "import sys\nsys.exit('bye now')\n"},
    {"exit None", "raise SystemExit\n"},
    {"exit builtin", "exit(4)\n"},
    {"exit big", "import sys\nsys.exit(2**40 + 7)\n"},
    {"traceback", "def f():\n    raise ValueError('bad')\ndef g():\n    f()\ng()\n"},
    {"chained", "try:\n    1/0\nexcept Exception as e:\n    raise KeyError('k') from e\n"},
    {"context", "try:\n    [][1]\nexcept Exception:\n    {}['x']\n"},
    {"syntax error", "x = (\n"},
    {"indentation", "if True:\nprint(1)\n"},
    {"keyboard interrupt", "raise KeyboardInterrupt\n"},
    {"stdin", "import sys\ndata = sys.stdin.read()\nprint(len(data), data.upper())\n",
     "some input\nline two\n"},
    {"input", "print(input('? '))\nprint(input())\n", "first\nsecond\n"},
    {"argv", "import sys\nprint(sys.argv, sys.orig_argv)\n", NULL, {"a b", "--c", NULL}},
    {"main module",
     "import sys, __main__\nprint(__name__, __file__, sys.path[0], __spec__, __package__,\n"
     "      type(__loader__).__name__, __main__ is sys.modules['__main__'],\n"
     "      sorted(globals()), __builtins__.__name__, __cached__)\n"},
    {"large output", "import sys\nfor i in range(3000):\n    print('%05d' % i, 'x' * 60)\n"
                     "sys.stderr.write('e' * 70000)\n"},
    {"fork", "import os\npid = os.fork()\nif pid == 0:\n    print('child')\nelse:\n"
             "    os.waitpid(pid, 0)\n    print('parent')\n"},
    {"threads", "import threading, time\ndef late():\n    time.sleep(0.2)\n    print('thread')\n"
                "threading.Thread(target=late).start()\nprint('main')\n"},
    {"atexit and del", "import atexit\natexit.register(print, 'at exit')\nclass A:\n"
                       "    def __del__(self):\n        print('del')\na = A()\nprint('end')\n"},
    {"warning", "import warnings\nwarnings.warn('careful')\n"},
    {"pickle main class", "import pickle\nclass P:\n    x = 5\n"
                          "print(pickle.loads(pickle.dumps(P())).x)\n"},
    {"os._exit", "import os\nprint('before', flush=True)\nos._exit(5)\n"},
    {"getsource", "import inspect\ndef f():\n    return 1\nprint(inspect.getsource(f))\n"},
    {"environment", "import os\nprint(sorted(os.environ.items()))\n", NULL, {NULL},
     {"FOO=bar", "TZ=Asia/Tokyo", NULL}},
    {"time zone", "import time\nprint(time.strftime('%Z', time.localtime(0)))\n", NULL, {NULL},
     {"TZ=Asia/Tokyo", NULL}},
    {"subprocess", "import subprocess\nprint(subprocess.run(['echo', 'sub'], capture_output=True,"
                   " text=True).stdout, end='')\n"},
    {"multiprocessing", "import multiprocessing as mp\ndef sq(x):\n    return x * x\n"
                        "if __name__ == '__main__':\n    with mp.Pool(2) as p:\n"
                        "        print(p.map(sq, range(5)))\n"},
    {"killed by signal", "import os, signal\nprint('x', flush=True)\n"
                         "os.kill(os.getpid(), signal.SIGKILL)\n"},
    {"unicode", "print('héllo wörld ✓')\n"},
    {"std streams",
     "import sys\nfor s in (sys.stdin, sys.stdout, sys.stderr):\n"
     "    print(s.name, s.mode, s.encoding, s.errors, s.line_buffering, s.write_through,\n"
     "          s.seekable(), type(s.buffer).__name__, s is sys.__stdin__ or s is sys.__stdout__\n"
     "          or s is sys.__stderr__)\ntry:\n    sys.stdin.tell()\nexcept Exception as e:\n"
     "    print(type(e).__name__)\n", "input\n"},
    {"orphans", "import subprocess\nfor i in range(300):\n"
                "    subprocess.run(['sh', '-c', 'true & exit 0'], check=True)\nprint('all')\n"},
    {"stderr then stdout", "import sys\nsys.stderr.write('err\\n')\nprint('out')\n"},
    {"recursion", "import sys\nprint(sys.getrecursionlimit())\ndef r(n):\n    return r(n + 1)\n"
                  "try:\n    r(0)\nexcept RecursionError:\n    print('deep')\n"},
};
#pragma GCC diagnostic pop

static void test_fast_path_matches_cold(void **state) {
  pool_env *e = *state;
  for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
    const script *s = &scripts[i];
    eb_exec_request req = {.language = "python", .code = s->code, .args = s->args,
                           .env = s->env, .stdin_data = s->stdin_data,
                           .stdin_len = s->stdin_data ? strlen(s->stdin_data) : 0};
    eb_exec_result cold, warm;
    run(e->cold, NULL, &req, &cold);
    wait_ready(e->warm, 4);
    uint64_t before = fast_count(e->warm);
    run(e->warm, NULL, &req, &warm);
    if (fast_count(e->warm) != before + 1)
      fail_msg("[%s] did not run in a waiting interpreter", s->name);
    if (cold.status != warm.status || cold.exit_code != warm.exit_code ||
        cold.signal != warm.signal || strcmp(cold.stdout_data, warm.stdout_data) != 0 ||
        strcmp(cold.stderr_data, warm.stderr_data) != 0)
      fail_msg("[%s] differs:\n cold: %s exit %d signal %d\n  stdout: %.600s\n  stderr: %.600s\n"
               " fast: %s exit %d signal %d\n  stdout: %.600s\n  stderr: %.600s",
               s->name, eb_status_name(cold.status), cold.exit_code, cold.signal,
               cold.stdout_data, cold.stderr_data, eb_status_name(warm.status), warm.exit_code,
               warm.signal, warm.stdout_data, warm.stderr_data);
    eb_exec_result_clear(&cold);
    eb_exec_result_clear(&warm);
  }
}

/* What one execution leaves (files, environment, a module attribute, a
 * background process) is never seen by the next. */
static void test_nothing_carries_over(void **state) {
  pool_env *e = *state;
  static const char leave_py[] =
      "import os, json, subprocess\n"
      "open('/tmp/left', 'w').write('x')\nopen('/sandbox/left', 'w').write('x')\n"
      "open('/dev/shm/left', 'w').write('x')\n"
      "os.environ['LEFT'] = '1'\njson.LEFT = 1\n"
      "subprocess.Popen(['sleep', '31.4159'], start_new_session=True)\n"
      "print('left')\n";
  static const char check_py[] =
      "import os, json\n"
      "seen = [p for p in ('/tmp/left', '/sandbox/left', '/dev/shm/left') if os.path.exists(p)]\n"
      "if 'LEFT' in os.environ: seen.append('env')\n"
      "if hasattr(json, 'LEFT'): seen.append('module')\n"
      "for pid in os.listdir('/proc'):\n"
      "    if pid.isdigit():\n"
      "        try:\n"
      "            if b'31.4159' in open('/proc/%s/cmdline' % pid, 'rb').read(): seen.append('proc')\n"
      "        except OSError: pass\n"
      "print('seen', seen)\n";
  static const char leave_sh[] = "echo x > /tmp/left; echo x > left; (sleep 31.4159 &) ; echo left\n";
  static const char check_sh[] =
      "ls /tmp/left left 2>/dev/null; cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' ' |"
      " grep -c '31[.]4159'\n"; /* a pattern that does not match its own grep */
  for (int round = 0; round < 3; round++) {
    eb_exec_result res;
    eb_exec_request leave = {.language = "python", .code = leave_py};
    eb_exec_request check = {.language = "python", .code = check_py};
    run(e->warm, NULL, &leave, &res);
    assert_string_equal(res.stdout_data, "left\n");
    eb_exec_result_clear(&res);
    run(e->warm, NULL, &check, &res);
    assert_string_equal(res.stdout_data, "seen []\n");
    eb_exec_result_clear(&res);
    eb_exec_request leave2 = {.language = "sh", .code = leave_sh};
    eb_exec_request check2 = {.language = "sh", .code = check_sh};
    run(e->warm, NULL, &leave2, &res);
    assert_string_equal(res.stdout_data, "left\n");
    eb_exec_result_clear(&res);
    run(e->warm, NULL, &check2, &res);
    assert_string_equal(res.stdout_data, "0\n");
    eb_exec_result_clear(&res);
  }
  /* Nor does anything of them run on the host. */
  FILE *p = popen("pgrep -f '^sleep 31.4159' | wc -l", "r");
  char line[32] = "";
  assert_non_null(fgets(line, sizeof(line), p));
  pclose(p);
  assert_string_equal(line, "0\n");
}

/* Pids of this process's children named comm (the sandboxes' inits), or,
 * with parent_comm, of grandchildren under such a child. */
static int find_children(pid_t parent, const char *comm, pid_t *out, int max) {
  DIR *d = opendir("/proc");
  int n = 0;
  struct dirent *de;
  while (d != NULL && (de = readdir(d)) != NULL && n < max) {
    char path[300], buf[512];
    snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
    FILE *f = fopen(path, "re");
    if (f == NULL)
      continue;
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[len] = '\0';
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (open == NULL || close == NULL)
      continue;
    *close = '\0';
    int ppid = 0;
    char st = 0;
    if (sscanf(close + 2, "%c %d", &st, &ppid) == 2 && ppid == parent && st != 'Z' &&
        strcmp(open + 1, comm) == 0)
      out[n++] = atoi(de->d_name);
  }
  if (d != NULL)
    closedir(d);
  return n;
}

static void expect_runs(eb_runtime *rt, const char *language, const char *code, const char *out) {
  eb_exec_request req = {.language = language, .code = code};
  eb_exec_result res;
  run(rt, NULL, &req, &res);
  if (res.status != EB_STATUS_OK || strcmp(res.stdout_data, out) != 0)
    fail_msg("%s: %s exit %d: %s%s", language, eb_status_name(res.status), res.exit_code,
             res.stdout_data, res.stderr_data);
  eb_exec_result_clear(&res);
}

/* Sandboxes killed while idle (the init, or only its waiting interpreter)
 * are replaced; executions meanwhile still succeed. */
static void test_survives_killed_idle_sandboxes(void **state) {
  pool_env *e = *state;
  wait_ready(e->warm, 4);
  pid_t inits[16];
  int n = find_children(getpid(), "execbox-init", inits, 16);
  assert_int_equal(n, 4);
  /* Kill the interpreters of the Python ones, and the inits of the rest. */
  int killed_python = 0;
  for (int i = 0; i < n; i++) {
    pid_t py[2];
    if (find_children(inits[i], "python3", py, 2) == 1) {
      kill(py[0], SIGKILL);
      killed_python++;
    } else {
      kill(inits[i], SIGKILL);
    }
  }
  assert_int_equal(killed_python, 2);
  /* Dead (a zombie, or reaped), not merely signalled: a kill that lands
   * while an execution starts is a kill during that execution. */
  for (int i = 0; i < n; i++) {
    pid_t py[2];
    for (int w = 0; w < 500; w++) {
      char path[64], buf[256] = "";
      snprintf(path, sizeof(path), "/proc/%d/stat", (int)inits[i]);
      FILE *f = fopen(path, "re");
      size_t len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
      if (f)
        fclose(f);
      buf[len] = '\0';
      char *close = strrchr(buf, ')');
      bool init_gone = close == NULL || close[2] == 'Z';
      if (init_gone || find_children(inits[i], "python3", py, 2) == 0)
        break;
      sleep_ms(2);
    }
  }
  expect_runs(e->warm, "python", "print(6 * 7)\n", "42\n");
  expect_runs(e->warm, "sh", "echo ok\n", "ok\n");
  wait_ready(e->warm, 4);
  uint64_t before = fast_count(e->warm);
  expect_runs(e->warm, "python", "print('again')\n", "again\n");
  assert_int_equal(fast_count(e->warm), before + 1);
  /* And with nothing killed, none is thrown away. */
  eb_pool_stats st;
  eb_runtime_pool_stats(e->warm, &st);
  assert_true(st.discarded >= 4);
}

typedef struct burst {
  eb_runtime *rt;
  int failures;
  int max_held;
} burst;

static void *burst_worker(void *arg) {
  burst *b = arg;
  for (int i = 0; i < 15; i++) {
    eb_exec_request req = {.language = i % 2 ? "python" : "sh",
                           .code = i % 2 ? "print('p')\n" : "echo s\n"};
    eb_exec_result res = {0};
    eb_error *err = NULL;
    if (eb_runtime_execute(b->rt, NULL, &req, &res, &err) < 0 || res.status != EB_STATUS_OK ||
        strcmp(res.stdout_data, i % 2 ? "p\n" : "s\n") != 0)
      __atomic_add_fetch(&b->failures, 1, __ATOMIC_SEQ_CST);
    eb_pool_stats st;
    eb_runtime_pool_stats(b->rt, &st);
    int held = st.ready + st.building;
    int cur = __atomic_load_n(&b->max_held, __ATOMIC_SEQ_CST);
    while (held > cur && !__atomic_compare_exchange_n(&b->max_held, &cur, held, false,
                                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
      ;
    eb_exec_result_clear(&res);
    eb_error_free(err);
  }
  return NULL;
}

/* Concurrent executions: all succeed, the pool never holds more than its
 * size per kind, and freeing the runtime leaves no sandbox behind. */
static void test_bounded_and_drains(void **state) {
  pool_env *e = *state;
  burst b = {.rt = e->warm};
  pthread_t t[6];
  for (int i = 0; i < 6; i++)
    pthread_create(&t[i], NULL, burst_worker, &b);
  for (int i = 0; i < 6; i++)
    pthread_join(t[i], NULL);
  assert_int_equal(b.failures, 0);
  assert_true(b.max_held <= 4); /* size 2, two kinds */
  eb_pool_stats st;
  eb_runtime_pool_stats(e->warm, &st);
  assert_true(st.hits > 0);
  eb_runtime_free(e->warm);
  e->warm = NULL;
  pid_t left[4];
  assert_int_equal(find_children(getpid(), "execbox-init", left, 4), 0);
}

/* A kind nobody uses for idle_ms is drained, and comes back on demand. */
static void test_idle_drain(void **state) {
  (void)state;
  eb_runtime *rt = new_jail();
  assert_non_null(rt);
  const char *prewarm[] = {"sh", NULL};
  assert_int_equal(start_pool(rt, 2, 300, prewarm), 0);
  wait_ready(rt, 2);
  sleep_ms(1200);
  eb_pool_stats st;
  eb_runtime_pool_stats(rt, &st);
  assert_int_equal(st.ready + st.building, 0);
  pid_t left[4];
  assert_int_equal(find_children(getpid(), "execbox-init", left, 4), 0);
  expect_runs(rt, "sh", "echo back\n", "back\n"); /* cold, and wanted again */
  wait_ready(rt, 2);
  eb_runtime_free(rt);
}

/* Limits hold in pooled sandboxes and in the waiting interpreter; what the
 * pool cannot serve as asked runs cold. */
static void test_limits_and_fallbacks(void **state) {
  pool_env *e = *state;
  eb_exec_result res;
  wait_ready(e->warm, 4);
  uint64_t fast = fast_count(e->warm);

  eb_exec_request timeout = {.language = "python", .code = "while True: pass\n",
                             .limits = {.wall_ms = 500}};
  run(e->warm, NULL, &timeout, &res);
  assert_int_equal(res.status, EB_STATUS_TIMEOUT);
  eb_exec_result_clear(&res);

  eb_exec_request memory = {.language = "python",
                            .code = "x = bytearray(300 << 20)\nprint('allocated')\n",
                            .limits = {.memory_bytes = 64LL << 20}};
  wait_ready(e->warm, 4); /* each of these must find a waiting interpreter */
  run(e->warm, NULL, &memory, &res);
  assert_int_equal(res.status, EB_STATUS_MEMORY_LIMIT);
  eb_exec_result_clear(&res);

  eb_exec_request output = {.language = "python", .code = "while True: print('y' * 1000)\n",
                            .limits = {.output_bytes = 10000}};
  wait_ready(e->warm, 4); /* each of these must find a waiting interpreter */
  run(e->warm, NULL, &output, &res);
  assert_int_equal(res.status, EB_STATUS_OUTPUT_LIMIT);
  assert_true(res.truncated);
  eb_exec_result_clear(&res);

  eb_exec_request files = {.language = "python",
                           .code = "import resource\nprint(resource.getrlimit(resource.RLIMIT_NOFILE),"
                                   " resource.getrlimit(resource.RLIMIT_FSIZE))\n",
                           .limits = {.open_files = 40, .file_size_bytes = 1 << 20}};
  wait_ready(e->warm, 4); /* each of these must find a waiting interpreter */
  run(e->warm, NULL, &files, &res);
  assert_string_equal(res.stdout_data, "(40, 40) (1048576, 1048576)\n");
  eb_exec_result_clear(&res);
  assert_int_equal(fast_count(e->warm), fast + 4);

  /* CPU time counts processes left running at the end; the peak memory
   * reported is not the program's to choose. */
  wait_ready(e->warm, 4);
  eb_exec_request busy = {.language = "python",
                          .code = "import subprocess, time\n"
                                  "open('/proc/self/comm', 'w').write('VmHWM: 99999999')\n"
                                  "ps = [subprocess.Popen(['sh', '-c', 'while :; do :; done'])"
                                  " for i in range(2)]\ntime.sleep(0.6)\n"};
  run(e->warm, NULL, &busy, &res);
  assert_int_equal(res.status, EB_STATUS_OK);
  if (res.cpu_ms < 300 || res.max_rss_kb >= 99999999 || res.max_rss_kb <= 0)
    fail_msg("cpu_ms %lld, max_rss_kb %lld", (long long)res.cpu_ms, (long long)res.max_rss_kb);
  eb_exec_result_clear(&res);
  assert_int_equal(fast_count(e->warm), fast + 5);

  /* Cancellation kills the waiting interpreter's program too. */
  wait_ready(e->warm, 4);
  eb_ctx *ctx = NULL;
  eb_error *err = NULL;
  assert_int_equal(eb_ctx_new(NULL, 300, &ctx, &err), 0);
  eb_exec_request sleep = {.language = "python", .code = "import time\ntime.sleep(30)\n"};
  run(e->warm, ctx, &sleep, &res);
  assert_int_equal(res.status, EB_STATUS_TIMEOUT);
  assert_true(res.duration_ms < 5000);
  eb_exec_result_clear(&res);
  eb_ctx_free(ctx);

  /* Start-up settings of the interpreter: a cold run, same semantics. */
  wait_ready(e->warm, 4);
  fast = fast_count(e->warm);
  const char *env[] = {"PYTHONHASHSEED=0", NULL};
  eb_exec_request hashseed = {.language = "python", .code = "print(hash('abc'))\n", .env = env};
  eb_exec_result cold;
  run(e->cold, NULL, &hashseed, &cold);
  run(e->warm, NULL, &hashseed, &res);
  assert_string_equal(res.stdout_data, cold.stdout_data);
  assert_int_equal(fast_count(e->warm), fast);
  eb_exec_result_clear(&res);
  eb_exec_result_clear(&cold);

  /* Another size of /tmp: a sandbox of its own. */
  eb_pool_stats before, after;
  eb_runtime_pool_stats(e->warm, &before);
  eb_exec_request tmp = {.language = "sh", .code = "df -k /tmp | tail -1 | awk '{print $2}'\n",
                         .limits = {.tmp_bytes = 8 << 20}};
  run(e->warm, NULL, &tmp, &res);
  assert_string_equal(res.stdout_data, "8192\n");
  eb_exec_result_clear(&res);
  eb_runtime_pool_stats(e->warm, &after);
  assert_int_equal(after.misses, before.misses + 1);
}

/* The execute_code tool starts its runtime's pool: an agent calls it many
 * times. Not when asked not to, nor with EXECBOX_POOL=off. */
static void test_tool_starts_pool(void **state) {
  (void)state;
  eb_error *err = NULL;
  eb_pool_stats st;
  for (int variant = 0; variant < 3; variant++) {
    eb_runtime *rt = new_jail();
    assert_non_null(rt);
    if (variant == 2)
      setenv("EXECBOX_POOL", "off", 1);
    eb_execute_code_options o = {.no_pool = variant == 1};
    eb_tool *tool = NULL;
    assert_int_equal(eb_execute_code_tool_new(rt, &o, &tool, &err), 0);
    assert_int_equal(eb_runtime_pool_stats(rt, &st), variant == 0 ? 0 : 1);
    char *out = NULL;
    assert_int_equal(tool->ops->execute(tool, NULL, "{\"language\":\"python\",\"code\":\"print(3)\"}",
                                        &out, &err),
                     0);
    assert_non_null(strstr(out, "\"output\":\"3\\n\""));
    free(out);
    eb_tool_free(tool);
    eb_runtime_free(rt);
    unsetenv("EXECBOX_POOL");
  }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_tool_starts_pool),
    cmocka_unit_test_setup_teardown(test_fast_path_matches_cold, setup, teardown),
    cmocka_unit_test_setup_teardown(test_nothing_carries_over, setup, teardown),
    cmocka_unit_test_setup_teardown(test_survives_killed_idle_sandboxes, setup, teardown),
    cmocka_unit_test_setup_teardown(test_bounded_and_drains, setup, teardown),
    cmocka_unit_test(test_idle_drain),
    cmocka_unit_test_setup_teardown(test_limits_and_fallbacks, setup, teardown),
};

EB_TEST_MAIN(tests)
