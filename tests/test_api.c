/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. The public API's edges: error codes and ws_strerror, option
 * validation, NULL arguments, WS_WORKERS, ws_current_worker/ws_current_pool,
 * calls that would wait for themselves (WS_EDEADLK), the stats report, and
 * several pools side by side (a task of one pool submitting to another).
 * ctest runs every part but env at once (`api`: no argument), and env with
 * three environments (api_env_bad, api_env_range, api_env_good).
 */
#include "test.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

static void strerror_table(void)
{
  static const int codes[] = {WS_OK,        WS_EINVAL,    WS_ENOMEM,  WS_ESHUTDOWN,
                              WS_ETIMEDOUT, WS_ECANCELED, WS_EBUSY,   WS_EDEADLK,
                              WS_ESYS,      WS_ENOTSUP,   WS_ECLOSED, WS_EAGAIN};
  const char *foreign = ws_strerror(12345);
  ASSERT(foreign != NULL);
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    const char *m = ws_strerror(codes[i]);
    ASSERT(m != NULL && *m != '\0');
    ASSERT(strcmp(m, foreign) != 0);
    ASSERT(codes[i] == WS_OK || WS_IS_ERROR(codes[i]));
    for (size_t j = 0; j < i; j++)
      ASSERT(strcmp(m, ws_strerror(codes[j])) != 0);
  }
  /* The two spaces (wsched.h, "Error codes"): what tasks commonly return
     (small integers, -errno) is outside the library's band, and
     ws_strerror says so instead of naming a library condition. */
  static const int user[] = {
      1, -1, -2, -3, -4, -5, 42, -4095, INT_MIN, INT_MAX, WS_ERR_MIN - 1, WS_ERR_MAX + 1};
  for (size_t i = 0; i < sizeof user / sizeof user[0]; i++) {
    ASSERT(!WS_IS_ERROR(user[i]));
    ASSERT_STREQ(ws_strerror(user[i]), foreign);
  }
  ASSERT(strstr(foreign, "not a wsched code") != NULL);
  /* Inside the band but unassigned: the library's, unknown. */
  ASSERT(WS_IS_ERROR(-20100));
  ASSERT(strcmp(ws_strerror(-20100), foreign) != 0);
}

static int noop(void *arg);

/* The header this test was compiled with and the library it runs with are
   the same version, and the macros agree with each other. */
static void version(void)
{
  ASSERT_EQ(ws_version(), WS_VERSION);
  ASSERT_EQ(WS_VERSION, WS_VERSION_MAJOR * 10000 + WS_VERSION_MINOR * 100 + WS_VERSION_PATCH);
  ASSERT(WS_VERSION_MINOR < 100 && WS_VERSION_PATCH < 100);
}

/* ws_options_t as a program built against an older, smaller header sees it:
   the fields up to spare_idle_ms, nothing after. Its size tells the library
   which fields it has; the rest (schedtrace_ms, pin) take their defaults. */
typedef struct old_options {
  size_t size;
  unsigned workers;
  ws_deque_kind_t deque;
  ws_steal_policy_t steal;
  unsigned steal_batch;
  unsigned spin_rounds;
  uint64_t seed;
  size_t stack_size;
  unsigned max_spares;
  unsigned spare_idle_ms;
} old_options_t;

static void options_layout(void)
{
  ws_pool_t *p;
  ws_options_t o;
  /* The old layout sits at the front of a buffer whose tail holds
     garbage where the newer fields would be: none of it may be read. */
  union {
    old_options_t old;
    unsigned char bytes[sizeof(ws_options_t) + 64];
  } buf;
  memset(&buf, 0xFF, sizeof buf);
  ws_options_init_sized((ws_options_t *)&buf.old, sizeof buf.old);
  ASSERT_EQ(buf.old.size, sizeof(old_options_t));
  ASSERT_EQ(buf.old.workers, 0);
  ASSERT_EQ(buf.bytes[sizeof buf.old], 0xFF); /* init stopped at the old size */
  buf.old.workers = 3;
  buf.old.steal = WS_STEAL_HALF;
  ASSERT_OK(ws_pool_create(&p, (ws_options_t *)&buf.old));
  ASSERT_EQ(ws_pool_workers(p), 3);
  char desc[1024];
  ASSERT_GT(ws_pool_describe(p, desc, sizeof desc), 0);
  ASSERT(strstr(desc, "not pinned") != NULL); /* pin: its default, not 0xFF.. */
  ASSERT_OK(ws_join(p, noop, NULL, noop, NULL));
  ASSERT_OK(ws_pool_destroy(p));
  /* Sizes no header ever had: 0 (ws_options_init never called), too small
     for `size` itself, and larger than the library's own layout (a newer
     header than the library). */
  ws_options_init(&o);
  ASSERT_EQ(o.size, sizeof(ws_options_t));
  o.size = 0;
  ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);
  o.size = sizeof o.size - 1;
  ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);
  o.size = sizeof o + 8;
  ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);
  ASSERT(p == NULL);
  /* The smallest layout, `size` alone, is all defaults. */
  o.size = sizeof o.size;
  o.workers = 100000; /* beyond that size: never read */
  ASSERT_OK(ws_pool_create(&p, &o));
  ASSERT_OK(ws_pool_destroy(p));
}

static void options(void)
{
  ws_options_t o;
  ws_pool_t *p = (ws_pool_t *)&o;
  memset(&o, 0xAB, sizeof o);
  ws_options_init(&o);
  ASSERT_EQ(o.workers, 0);
  ASSERT_EQ(o.deque, WS_DEQUE_DEFAULT);
  ASSERT_EQ(o.steal, WS_STEAL_DEFAULT);
  ASSERT_EQ(o.spin_rounds, 0);
  ASSERT_EQ(ws_pool_create(NULL, &o), WS_EINVAL);
  ASSERT(ws_options_check(&o) == NULL);
  ASSERT(ws_options_check(NULL) == NULL);
  o.workers = WS_MAX_WORKERS + 1;
  ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);
  ASSERT(p == NULL);
  /* Each invalid field is named by ws_options_check, and the pool refuses
     exactly what it names. */
  static const char *const named[] = {"workers",     "deque",           "steal",
                                      "steal_batch", "spin_rounds",     "max_spares",
                                      "order",       "park_stack_size", "size"};
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++) {
    ws_options_init(&o);
    switch (i) {
    case 0:
      o.workers = WS_MAX_WORKERS + 1;
      break;
    case 1:
      o.deque = (ws_deque_kind_t)7;
      break;
    case 2:
      o.steal = (ws_steal_policy_t)9;
      break;
    case 3:
      o.steal_batch = 257;
      break;
    case 4:
      o.spin_rounds = 2000000;
      break;
    case 5:
      o.max_spares = WS_MAX_SPARES + 1;
      break;
    case 6:
      o.order = (ws_order_t)5;
      break;
    case 7:
      o.park_stack_size = ((size_t)1 << 30) + 1;
      break;
    default:
      o.size = 3;
      break;
    }
    const char *why = ws_options_check(&o);
    char want[64];
    snprintf(want, sizeof want, "ws_options_t.%s: ", named[i]);
    ASSERT(why != NULL && strncmp(why, want, strlen(want)) == 0);
    p = (ws_pool_t *)&o;
    ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);
    ASSERT(p == NULL);
  }
  ws_options_init(&o);
  o.spin_rounds = WS_SPIN_NONE;
  o.max_spares = WS_SPARES_NONE;
  ASSERT(ws_options_check(&o) == NULL);
  ws_options_init(&o);
  o.deque = (ws_deque_kind_t)7;
  ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);
  ws_options_init(&o);
  o.steal = (ws_steal_policy_t)9;
  ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);
  ws_options_init(&o);
  o.steal_batch = 5000;
  ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);
  /* The documented limit is the real one: 256 works, 257 is refused (it
     used to be accepted and silently clamped to 256). */
  o.steal_batch = 257;
  ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);
  o.steal_batch = 256;
  o.steal = WS_STEAL_HALF;
  ASSERT_OK(ws_pool_create(&p, &o));
  ASSERT_OK(ws_pool_destroy(p));
  ws_options_init(&o);
  o.spin_rounds = 2000000;
  ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);
  /* NULL options are the defaults; WS_SPIN_NONE is allowed. */
  ASSERT_OK(ws_pool_create(&p, NULL));
  ASSERT_GE(ws_pool_workers(p), 1);
  ASSERT_OK(ws_pool_destroy(p));
  ws_options_init(&o);
  o.spin_rounds = WS_SPIN_NONE;
  o.workers = 3;
  o.stack_size = 256 * 1024;
  ASSERT_OK(ws_pool_create(&p, &o));
  ASSERT_EQ(ws_pool_workers(p), 3);
  ASSERT_OK(ws_pool_destroy(p));
  /* Pinned workers run tasks like any others, and say so. */
  ws_options_init(&o);
  o.pin = 1;
  o.workers = 4;
  ASSERT_OK(ws_pool_create(&p, &o));
  char desc[1024];
  ASSERT_GT(ws_pool_describe(p, desc, sizeof desc), 0);
  ASSERT(strstr(desc, "4 workers") != NULL);
  ASSERT(strstr(desc, "pinned") != NULL && strstr(desc, "not pinned") == NULL);
  ASSERT_OK(ws_join(p, noop, NULL, noop, NULL));
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_EQ(ws_pool_describe(NULL, desc, sizeof desc), WS_EINVAL);
}

static void env_workers(void)
{
  ws_pool_t *p;
  setenv("WS_WORKERS", "5", 1);
  ASSERT_OK(ws_pool_create(&p, NULL));
  ASSERT_EQ(ws_pool_workers(p), 5);
  ASSERT_OK(ws_pool_destroy(p));
  /* An explicit count wins over the environment. */
  p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ASSERT_EQ(ws_pool_workers(p), 2);
  ASSERT_OK(ws_pool_destroy(p));
  /* Garbage in the variable is ignored, and the pool says so. */
  unsetenv("WS_WORKERS");
  ASSERT_OK(ws_pool_create(&p, NULL));
  int n = ws_pool_workers(p);
  ASSERT_OK(ws_pool_destroy(p));
  static const char *const bad[] = {"lots", "0",  "-1", "1025",
                                    "3x",   " 4", "+4", "99999999999999999999999"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    setenv("WS_WORKERS", bad[i], 1);
    ASSERT_OK(ws_pool_create(&p, NULL));
    ASSERT_EQ(ws_pool_workers(p), n);
    char desc[2048], want[128];
    ws_pool_describe(p, desc, sizeof desc);
    snprintf(want, sizeof want, "; environment: WS_WORKERS=%s ignored (not an integer in 1..1024)",
             bad[i]);
    if (strstr(desc, want) == NULL || strstr(desc, " workers from the CPU count;") == NULL)
      TEST_FAIL("WS_WORKERS=%s: describe says \"%s\"", bad[i], desc);
    ASSERT_OK(ws_pool_destroy(p));
  }
  /* Set but not consulted: the options chose. */
  p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  char desc[2048];
  ws_pool_describe(p, desc, sizeof desc);
  ASSERT(strstr(desc, "2 workers from the options;") != NULL);
  ASSERT(strstr(desc, "WS_WORKERS") == NULL);
  ASSERT_OK(ws_pool_destroy(p));
  setenv("WS_WORKERS", "5", 1);
  ASSERT_OK(ws_pool_create(&p, NULL));
  ws_pool_describe(p, desc, sizeof desc);
  ASSERT(strstr(desc, "5 workers from WS_WORKERS=5;") != NULL);
  ASSERT(strstr(desc, "environment") == NULL);
  ASSERT_OK(ws_pool_destroy(p));
  unsetenv("WS_WORKERS");
}

/* --- the environment, as ctest sets it (tests/CMakeLists.txt) ------------------ */

/* Every variable wsched reads, with what an ignored value's note says. */
static const struct {
  const char *name, *why;
} env_vars[] = {
    {"WS_WORKERS", "not an integer in 1..1024"},
    {"WS_SCHEDTRACE", "not an integer in 0..4294967295"},
    {"WS_TRACE_EVENTS", "not an integer in 16..4294967295"},
    {"WS_TOPOLOGY", NULL}, /* the reason depends on hwloc */
    {"WS_NO_MEMBARRIER", "not an integer in 0..1"},
};

/* WS_TEST_ENV_BAD lists the variables ctest set to unusable values (the
   others are unset or valid). Each must be reported exactly once on stderr,
   however many pools read it, and named by every pool's description; the
   pools still work. The captured stderr is copied to the real one, where
   ctest matches it too. */
static void env_report(void)
{
  const char *bad = getenv("WS_TEST_ENV_BAD");
  ASSERT(bad != NULL);
  fflush(stderr);
  int saved = dup(2);
  FILE *cap = tmpfile();
  ASSERT(saved >= 0 && cap != NULL);
  ASSERT(dup2(fileno(cap), 2) >= 0);
  char desc[3][4096];
  int nworkers[3];
  for (int i = 0; i < 3; i++) {
    ws_options_t o;
    ws_options_init(&o);
    o.workers = i == 2 ? 2 : 0; /* WS_TOPOLOGY needs 2 workers, WS_WORKERS workers = 0 */
    ws_pool_t *p;
    ASSERT_OK(ws_pool_create(&p, &o));
    ASSERT_OK(ws_join(p, noop, NULL, noop, NULL));
    ASSERT_OK(ws_trace_start(p, 0)); /* reads WS_TRACE_EVENTS again */
    ASSERT_OK(ws_trace_stop(p, NULL));
    ws_pool_describe(p, desc[i], sizeof desc[i]);
    nworkers[i] = ws_pool_workers(p);
    ASSERT_OK(ws_pool_destroy(p));
  }
  fflush(stderr);
  ASSERT(dup2(saved, 2) >= 0);
  close(saved);
  static char out[16384];
  rewind(cap);
  size_t len = fread(out, 1, sizeof out - 1, cap);
  out[len] = '\0';
  fclose(cap);
  fputs(out, stderr);
  for (int i = 0; i < 3; i++)
    fprintf(stderr, "describe: %s\n", desc[i]);

  for (size_t k = 0; k < sizeof env_vars / sizeof env_vars[0]; k++) {
    const char *name = env_vars[k].name, *value = getenv(name);
    char key[160];
    snprintf(key, sizeof key, "%s=%s ignored (%s", name, value ? value : "",
             env_vars[k].why ? env_vars[k].why : "");
    bool want = strstr(bad, name) != NULL;
    /* stderr: "wsched: NAME=VALUE ignored (why); using ...", once. */
    int lines = 0;
    char line_key[200];
    snprintf(line_key, sizeof line_key, "wsched: %s", key);
    for (const char *at = out; (at = strstr(at, line_key)) != NULL; at++) {
      const char *eol = strchr(at, '\n');
      ASSERT(eol != NULL && strstr(at, "; using ") != NULL && strstr(at, "; using ") < eol);
      lines++;
    }
    if (lines != (want ? 1 : 0))
      TEST_FAIL("%s=%s: %d stderr reports, want %d", name, value ? value : "(unset)", lines,
                want ? 1 : 0);
    /* describe: every pool that consulted it. */
    for (int i = 0; i < 3; i++) {
      bool consulted = strcmp(name, "WS_WORKERS") == 0    ? i < 2
                       : strcmp(name, "WS_TOPOLOGY") == 0 ? nworkers[i] > 1 /* nothing to order */
                                                          : true;
      bool says = strstr(desc[i], key) != NULL;
      if (says != (want && consulted))
        TEST_FAIL("%s=%s: pool %d describe: \"%s\"", name, value ? value : "(unset)", i, desc[i]);
    }
  }
  if (strstr(bad, "WS_WORKERS") != NULL)
    ASSERT(strstr(desc[0], " workers from the CPU count;") != NULL);
  if (*bad == '\0') {
    ASSERT(strstr(out, "ignored") == NULL);
    ASSERT(strstr(desc[0], "environment") == NULL);
  }
}

static int noop(void *arg)
{
  (void)arg;
  return 0;
}

static void null_args(void)
{
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_future_t *f = (ws_future_t *)&f;
  ASSERT_EQ(ws_submit(NULL, noop, NULL, &f), WS_EINVAL);
  ASSERT(f == NULL);
  f = (ws_future_t *)&f;
  ASSERT_EQ(ws_submit(p, NULL, NULL, &f), WS_EINVAL);
  ASSERT(f == NULL);
  ASSERT_EQ(ws_shutdown(NULL), WS_EINVAL);
  ASSERT_EQ(ws_await_termination(NULL, 0), WS_EINVAL);
  ASSERT_EQ(ws_pool_wait_idle(NULL, 0), WS_EINVAL);
  ASSERT_EQ(ws_pool_state(NULL), WS_EINVAL);
  ASSERT_EQ(ws_pool_workers(NULL), WS_EINVAL);
  ASSERT_EQ(ws_pool_destroy(NULL), WS_EINVAL);
  ws_stats_t st;
  ASSERT_EQ(ws_pool_stats(NULL, &st, NULL, 0), WS_EINVAL);
  ASSERT_EQ(ws_pool_stats(p, NULL, NULL, 0), WS_EINVAL);
  ASSERT_EQ(ws_pool_stats_print(NULL, stderr), WS_EINVAL);
  ASSERT_EQ(ws_pool_stats_print(p, NULL), WS_EINVAL);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- identity and self-waits, across two pools ------------------------------ */

static ws_pool_t *pa, *pb;
static _Atomic int b_ran;

static int in_b(void *arg)
{
  (void)arg;
  ASSERT(ws_current_pool() == pb);
  atomic_store(&b_ran, 1);
  return 0;
}

static int in_a(void *arg)
{
  (void)arg;
  int w = ws_current_worker();
  ASSERT_GE(w, 0);
  ASSERT_LT(w, ws_pool_workers(pa));
  ASSERT(ws_current_pool() == pa);
  ASSERT_EQ(ws_await_termination(pa, 0), WS_EDEADLK);
  ASSERT_EQ(ws_pool_wait_idle(pa, WS_FOREVER), WS_EDEADLK);
  ASSERT_EQ(ws_pool_destroy(pa), WS_EDEADLK);
  /* Another pool is "outside" for us: a root submission there, and waiting
     for it blocks this worker without helping pool b. */
  ws_future_t *f;
  ASSERT_OK(ws_submit(pb, in_b, NULL, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ws_future_release(f);
  ASSERT_OK(ws_pool_wait_idle(pb, WS_FOREVER));
  return 0;
}

static void identity(void)
{
  ASSERT_EQ(ws_current_worker(), -1);
  ASSERT(ws_current_pool() == NULL);
  pa = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  pb = make_pool(3, WS_DEQUE_LOCKED, WS_STEAL_HALF);
  ws_future_t *f;
  ASSERT_OK(ws_submit(pa, in_a, NULL, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
  ws_future_release(f);
  ASSERT_EQ(atomic_load(&b_ran), 1);
  ASSERT_OK(ws_pool_destroy(pa));
  ASSERT_OK(ws_pool_destroy(pb));
}

static void stats_print(void)
{
  ws_pool_t *p = make_pool(3, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  for (int i = 0; i < 100; i++)
    ASSERT_OK(ws_submit(p, noop, NULL, NULL));
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  FILE *f = tmpfile();
  ASSERT(f != NULL);
  ASSERT_OK(ws_pool_stats_print(p, f));
  rewind(f);
  char line[512];
  int lines = 0, saw_total = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    lines++;
    if (strncmp(line, " total", 6) == 0) {
      saw_total = 1;
      ASSERT(strstr(line, " 100 ") != NULL); /* 100 tasks run */
    }
  }
  fclose(f);
  ASSERT_EQ(lines, 2 + 3 + 1); /* header, column names, 3 workers, total */
  ASSERT(saw_total);
  ws_worker_stats_t per[8];
  ws_stats_t st;
  ASSERT_EQ(ws_pool_stats(p, &st, per, 8), 3);
  uint64_t sum = 0;
  for (int i = 0; i < 3; i++)
    sum += per[i].tasks_run;
  ASSERT_EQ(sum, 100);
  ASSERT_EQ(st.total.tasks_run, 100);
  ASSERT_EQ(st.submitted, 100);
  ASSERT_EQ(st.state, WS_POOL_ACCEPTING);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- the parts --------------------------------------------------------------- */

static const test_part parts[] = {
    {"strerror", strerror_table, false},
    {"options", options, false},
    {"options_layout", options_layout, false},
    {"version", version, false},
    {"env_workers", env_workers, false},
    {"null_args", null_args, false},
    {"identity", identity, false},
    {"stats_print", stats_print, false},
    /* Reads the environment its ctests set (api_env_*), WS_TEST_ENV_BAD
       among it: only when named. */
    {"env", env_report, true},
};

TEST_MAIN(parts)
