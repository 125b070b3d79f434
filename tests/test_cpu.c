/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test (ws__cgroup_cpu_limit and friends, src/platform/topology.h).
 * The default worker count (src/platform/cpu.c, src/platform/linux/cpu.c):
 *   rule      — min(CPUs, ceil(limit)), at least 1, on made-up numbers;
 *   cgroup    — ws__cgroup_cpu_limit on the fake trees of
 *               tests/fixtures/cgroup (v2, v1, hybrid, namespaces, bind
 *               mounts, escaped mount points);
 *   malformed — generated trees with broken files give an error (or "no
 *               limit" where the file is merely absent), never a crash, and
 *               seeded random garbage is survived as well;
 *   default   — ws__default_workers and ws_pool_create follow WS_WORKERS
 *               first, then WS_CGROUP_ROOT's tree, capped by the affinity;
 *   machine   — on the real machine: whatever the cgroup says, the default
 *               is between 1 and the affinity count; the affinity list and
 *               pinning agree with the kernel.
 * The posix platform reads no cgroup quota and no affinity mask: cgroup,
 * malformed and default skip (exit 77), and machine checks its "none" and
 * "unknown" answers instead (src/platform/posix/cpu.c).
 * Usage: test_cpu FIXTURE_DIR [part]   (FIXTURE_DIR = tests/fixtures/cgroup)
 *        test_cpu --list
 */
#include "test.h"

#include "platform.h"
#include "topology.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *fixtures;

/* Doubles are compared to a relative 1e-9: the limit is one division. */
#define ASSERT_NEAR(a, b)                                                                          \
  do {                                                                                             \
    double a_ = (a), b_ = (b), d_ = a_ - b_;                                                       \
    if (!((d_ < 0 ? -d_ : d_) <= 1e-9 * (b_ < 0 ? -b_ : b_)))                                      \
      TEST_FAIL("%s == %s: %.17g vs %.17g", #a, #b, a_, b_);                                       \
  } while (0)

static unsigned min_u(unsigned a, unsigned b)
{
  return a < b ? a : b;
}

/* The affinity count as ws__default_workers caps it. */
static unsigned affinity_capped(void)
{
  return min_u(ws__affinity_count(), WS_MAX_WORKERS);
}

/* The cgroup parts need the linux platform's reader. */
static void need_cgroups(void)
{
  if (strcmp(ws__platform_name, "linux") != 0)
    test_skip("the posix platform reads no cgroup quota (WS_CGROUP_ROOT trees mean nothing)");
}

/* ------------------------------------------------------------------ */

static void rule(void)
{
  ASSERT_EQ(ws__workers_for_limit(64, 1.5), 2);
  ASSERT_EQ(ws__workers_for_limit(64, 0.2), 1);
  ASSERT_EQ(ws__workers_for_limit(64, 0.01), 1);
  ASSERT_EQ(ws__workers_for_limit(64, 4.0), 4);
  ASSERT_EQ(ws__workers_for_limit(64, 4.00001), 5);
  ASSERT_EQ(ws__workers_for_limit(64, 2.5), 3);
  ASSERT_EQ(ws__workers_for_limit(3, 2.5), 3);
  ASSERT_EQ(ws__workers_for_limit(4, 100.0), 4);
  ASSERT_EQ(ws__workers_for_limit(4, 4.0), 4);
  ASSERT_EQ(ws__workers_for_limit(4, 0.0), 4); /* no limit */
  ASSERT_EQ(ws__workers_for_limit(4, -1.0), 4); /* no limit */
  ASSERT_EQ(ws__workers_for_limit(4, NAN), 4);
  ASSERT_EQ(ws__workers_for_limit(0, 0.0), 1);
  ASSERT_EQ(ws__workers_for_limit(0, 0.5), 1);
  ASSERT_EQ(ws__workers_for_limit(1, 1e300), 1);
}

/* ------------------------------------------------------------------ */

static char *fixture(const char *name)
{
  static char buf[4096];
  int n = snprintf(buf, sizeof buf, "%s/%s", fixtures, name);
  ASSERT(n > 0 && (size_t)n < sizeof buf);
  return buf;
}

/* The tree `name` has a limit of `want` CPUs (want <= 0: none). */
static void expect_limit(const char *name, double want)
{
  double got = -42;
  int rc = ws__cgroup_cpu_limit(fixture(name), &got);
  if (want <= 0) {
    if (rc != 0)
      TEST_FAIL("%s: ws__cgroup_cpu_limit returned %d (cpus %g), want 0 (no limit)", name, rc, got);
    ASSERT_NEAR(got, -42); /* untouched */
  } else {
    if (rc != 1)
      TEST_FAIL("%s: ws__cgroup_cpu_limit returned %d, want 1 (limit %g)", name, rc, want);
    ASSERT_NEAR(got, want);
  }
}

static void cgroup(void)
{
  need_cgroups();
  expect_limit("v2-max", 0);
  expect_limit("v2-whole", 2.0);
  expect_limit("v2-fraction", 1.5);
  expect_limit("v2-tiny", 0.01);
  expect_limit("v2-nested", 2.5);
  expect_limit("v2-namespace", 3.0);
  expect_limit("v2-bindmount", 0.5);
  expect_limit("v2-escaped", 1.2);
  expect_limit("v1-quota", 2.5);
  expect_limit("v1-unlimited", 0);
  expect_limit("v1-bindmount", 4.0);
  expect_limit("hybrid", 0.75);
  expect_limit("hybrid-v1-unmounted", 3.0);
  /* No proc files at all: nothing to locate, no limit. */
  expect_limit("no-such-tree", 0);
}

/* ------------------------------------------------------------------ */
/* Generated trees                                                     */

static char scratch[4096]; /* the mkdtemp directory */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static void rm_tree(const char *dir)
{
  struct stat st;
  if (stat(dir, &st) == 0)
    ASSERT_EQ(nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* Writes len bytes of data to scratch/rel, creating the directories. */
static void put(const char *rel, const void *data, size_t len)
{
  char path[8192];
  snprintf(path, sizeof path, "%s/%s", scratch, rel);
  for (char *p = path + strlen(scratch) + 1; *p != '\0'; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST)
      TEST_FAIL("mkdir %s: %s", path, strerror(errno));
    *p = '/';
  }
  FILE *f = fopen(path, "wb");
  if (f == NULL)
    TEST_FAIL("fopen %s: %s", path, strerror(errno));
  ASSERT_EQ(fwrite(data, 1, len, f), len);
  ASSERT_EQ(fclose(f), 0);
}

static void puts_file(const char *rel, const char *text)
{
  put(rel, text, strlen(text));
}

#define V2_MOUNT "25 24 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"
#define V1_MOUNT                                                                                   \
  "32 30 0:28 / /sys/fs/cgroup/cpu rw,nosuid shared:5 - cgroup cgroup rw,cpu,cpuacct\n"

/* A fresh tree: the given /proc/self files (NULL: absent). */
static void tree(const char *cgroup_text, const char *mountinfo_text)
{
  rm_tree(scratch);
  ASSERT_EQ(mkdir(scratch, 0700), 0);
  if (cgroup_text != NULL)
    puts_file("proc/self/cgroup", cgroup_text);
  if (mountinfo_text != NULL)
    puts_file("proc/self/mountinfo", mountinfo_text);
}

static int limit_of_scratch(double *cpus)
{
  return ws__cgroup_cpu_limit(scratch, cpus);
}

/* The v2 tree with /app/cpu.max holding `text`: expect rc (and cpus). */
static void v2_max(const char *text, int want_rc, double want)
{
  double got = 0;
  tree("0::/app\n", V2_MOUNT);
  puts_file("sys/fs/cgroup/app/cpu.max", text);
  int rc = limit_of_scratch(&got);
  if (rc != want_rc)
    TEST_FAIL("cpu.max \"%s\": returned %d, want %d", text, rc, want_rc);
  if (rc == 1)
    ASSERT_NEAR(got, want);
}

/* The v1 tree with /app's quota and period (period NULL: absent). */
static void v1_quota(const char *quota, const char *period, int want_rc, double want)
{
  double got = 0;
  tree("3:cpu,cpuacct:/app\n", V1_MOUNT);
  puts_file("sys/fs/cgroup/cpu/app/cpu.cfs_quota_us", quota);
  if (period != NULL)
    puts_file("sys/fs/cgroup/cpu/app/cpu.cfs_period_us", period);
  int rc = limit_of_scratch(&got);
  if (rc != want_rc)
    TEST_FAIL("quota \"%s\" period \"%s\": returned %d, want %d", quota, period ? period : "(none)",
              rc, want_rc);
  if (rc == 1)
    ASSERT_NEAR(got, want);
}

/* A tree with the given /proc/self files and a 2-CPU cpu.max at /app. */
static void proc_files(const char *cgroup_text, const char *mountinfo_text, int want_rc)
{
  double got = 0;
  tree(cgroup_text, mountinfo_text);
  puts_file("sys/fs/cgroup/app/cpu.max", "200000 100000\n");
  int rc = limit_of_scratch(&got);
  if (rc != want_rc)
    TEST_FAIL("cgroup \"%s\" mountinfo \"%s\": returned %d, want %d",
              cgroup_text ? cgroup_text : "(none)", mountinfo_text ? mountinfo_text : "(none)", rc,
              want_rc);
  if (rc == 1)
    ASSERT_NEAR(got, 2.0);
}

static void make_scratch(void)
{
  const char *tmp = getenv("TMPDIR");
  snprintf(scratch, sizeof scratch, "%s/ws_test_cpu.XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
  ASSERT(mkdtemp(scratch) != NULL);
}

static void malformed(void)
{
  need_cgroups();
  make_scratch();

  /* The well-formed baseline, with and without the trailing newline. */
  v2_max("150000 100000\n", 1, 1.5);
  v2_max("150000 100000", 1, 1.5);
  v2_max("max 100000\n", 0, 0);
  /* Broken cpu.max files. */
  v2_max("", WS_EINVAL, 0);
  v2_max("\n", WS_EINVAL, 0);
  v2_max("max\n", WS_EINVAL, 0);
  v2_max("maximum 100000\n", WS_EINVAL, 0);
  v2_max("150000\n", WS_EINVAL, 0);
  v2_max("150000 0\n", WS_EINVAL, 0);
  v2_max("0 100000\n", WS_EINVAL, 0);
  v2_max("max 0\n", WS_EINVAL, 0);
  v2_max("-5 100000\n", WS_EINVAL, 0);
  v2_max("1.5 100000\n", WS_EINVAL, 0);
  v2_max("150000  100000\n", WS_EINVAL, 0);
  v2_max("150000 100000 7\n", WS_EINVAL, 0);
  v2_max("150000 100000\n\n", WS_EINVAL, 0);
  v2_max(" 150000 100000\n", WS_EINVAL, 0);
  v2_max("99999999999999999999 100000\n", WS_EINVAL, 0);
  v2_max("150000 9223372036854775808\n", WS_EINVAL, 0);
  v2_max("9223372036854775807 1\n", 1, 9223372036854775807.0);
  v2_max("100000000000000000000000000000000000000000000000000000000000 1\n", WS_EINVAL, 0);
  /* A NUL byte inside the file. */
  static const char with_nul[] = "15\0000 100000\n";
  tree("0::/app\n", V2_MOUNT);
  put("sys/fs/cgroup/app/cpu.max", with_nul, sizeof with_nul - 1);
  double cpus;
  ASSERT_EQ(limit_of_scratch(&cpus), WS_EINVAL);
  /* cpu.max that is a directory cannot be read. */
  tree("0::/app\n", V2_MOUNT);
  puts_file("sys/fs/cgroup/app/cpu.max/x", "");
  ASSERT_EQ(limit_of_scratch(&cpus), WS_ESYS);
  /* A broken file higher up is an error too: the walk reads every level. */
  tree("0::/app\n", V2_MOUNT);
  puts_file("sys/fs/cgroup/app/cpu.max", "150000 100000\n");
  puts_file("sys/fs/cgroup/cpu.max", "garbage\n");
  ASSERT_EQ(limit_of_scratch(&cpus), WS_EINVAL);
  /* A process cgroup directory that is gone: the levels above still count. */
  tree("0::/app/gone\n", V2_MOUNT);
  puts_file("sys/fs/cgroup/app/cpu.max", "150000 100000\n");
  ASSERT_EQ(limit_of_scratch(&cpus), 1);
  ASSERT_NEAR(cpus, 1.5);

  /* v1 quota and period. */
  v1_quota("250000\n", "100000\n", 1, 2.5);
  v1_quota("-1\n", NULL, 0, 0);
  v1_quota("-1\n", "100000\n", 0, 0);
  v1_quota("-2\n", "100000\n", WS_EINVAL, 0);
  v1_quota("-\n", "100000\n", WS_EINVAL, 0);
  v1_quota("0\n", "100000\n", WS_EINVAL, 0);
  v1_quota("abc\n", "100000\n", WS_EINVAL, 0);
  v1_quota("250000\n", NULL, WS_EINVAL, 0);
  v1_quota("250000\n", "0\n", WS_EINVAL, 0);
  v1_quota("250000\n", "x\n", WS_EINVAL, 0);
  v1_quota("250000 100000\n", "100000\n", WS_EINVAL, 0);

  /* /proc/self/cgroup. */
  proc_files("0::/app\n", V2_MOUNT, 1);
  proc_files("", V2_MOUNT, 0); /* empty: in no cgroup */
  proc_files(NULL, V2_MOUNT, 0); /* absent */
  proc_files("2:memory:/app\n", V2_MOUNT, 0); /* no cpu hierarchy */
  proc_files("garbage\n", V2_MOUNT, WS_EINVAL);
  proc_files("0:/app\n", V2_MOUNT, WS_EINVAL);
  proc_files(":cpu:/app\n", V2_MOUNT, WS_EINVAL);
  proc_files("x::/app\n", V2_MOUNT, WS_EINVAL);
  proc_files("0::app\n", V2_MOUNT, WS_EINVAL);
  proc_files("0::\n", V2_MOUNT, WS_EINVAL);
  proc_files("1:name=systemd:/\n\n0::/app\n", V2_MOUNT, 1); /* blank lines are skipped */
  proc_files("0::/../outside\n", V2_MOUNT, 0); /* outside our namespace */
  /* /proc/self/mountinfo. */
  proc_files("0::/app\n", NULL, 0);
  proc_files("0::/app\n", "", 0);
  proc_files("0::/app\n", "garbage\n", WS_EINVAL);
  proc_files("0::/app\n", "25 24 0:23 / /sys/fs/cgroup rw,nosuid cgroup2 cgroup2 rw\n", WS_EINVAL);
  proc_files("0::/app\n", "25 24 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2\n", WS_EINVAL);
  proc_files("0::/app\n", "25 24 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw extra\n", WS_EINVAL);
  proc_files("0::/app\n", "25 24 - / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", WS_EINVAL);
  proc_files("0::/app\n", "25 24 0:23 / /sys/fs/cg\\04 rw - cgroup2 cgroup2 rw\n", WS_EINVAL);
  proc_files("0::/app\n", "25 24 0:23 / /sys/fs/cg\\089 rw - cgroup2 cgroup2 rw\n", WS_EINVAL);
  proc_files("0::/app\n", "25 24 0:23 / /sys/fs/cg\\000 rw - cgroup2 cgroup2 rw\n", WS_EINVAL);
  proc_files("0::/app\n", "25 24 0:23 / sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", WS_EINVAL);
  proc_files("0::/app\n", "25 24 0:23 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n", 0);
  proc_files("0::/app\n", "25 24 0:23 /other /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", 0);
  proc_files("0::/app\n", "25 24 0:23 /ap /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", 0);
  /* A bind mount of /app itself on /sys/fs/cgroup/app: the longer root wins. */
  tree("0::/app\n", "25 24 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
                    "26 24 0:23 /app /elsewhere rw - cgroup2 cgroup2 rw\n");
  puts_file("elsewhere/cpu.max", "300000 100000\n");
  ASSERT_EQ(limit_of_scratch(&cpus), 1);
  ASSERT_NEAR(cpus, 3.0);
  /* 33 fields is more than a mount line can have. */
  proc_files("0::/app\n",
             "25 24 0:23 / /sys/fs/cgroup rw a b c d e f g h i j k l m n o p q r s t u v w x y z"
             " - cgroup2 cgroup2 rw\n",
             WS_EINVAL);

  /* Random garbage in each file in turn (the other two stay good): any
     outcome but a crash (ASan watches) or a nonsensical limit. */
  uint64_t seed = test_seed();
  static const char *const names[] = {"proc/self/cgroup", "proc/self/mountinfo",
                                      "sys/fs/cgroup/app/cpu.max"};
  static const char *const good[] = {"0::/app\n", V2_MOUNT, "150000 100000\n"};
  static const char alphabet[] = "0123456789 :-/\\\nmaxcpu,cgroup2";
  tree(good[0], good[1]);
  puts_file(names[2], good[2]);
  for (int i = 0; i < 2000 / TEST_SCALE_DIV; i++) {
    char junk[200];
    size_t len = test_rng(&seed) % sizeof junk;
    bool printable = (test_rng(&seed) & 1) != 0;
    for (size_t j = 0; j < len; j++) {
      uint64_t r = test_rng(&seed);
      junk[j] = printable ? alphabet[r % (sizeof alphabet - 1)] : (char)r;
    }
    put(names[i % 3], junk, len);
    cpus = -1;
    int rc = limit_of_scratch(&cpus);
    if (!(rc == 0 || rc == 1 || rc == WS_EINVAL || rc == WS_ESYS))
      TEST_FAIL("garbage in %s: returned %d", names[i % 3], rc);
    if (rc == 1 && !(cpus > 0 && isfinite(cpus)))
      TEST_FAIL("garbage in %s: limit %g", names[i % 3], cpus);
    puts_file(names[i % 3], good[i % 3]);
  }
  ASSERT_EQ(limit_of_scratch(&cpus), 1);
  ASSERT_NEAR(cpus, 1.5);

  rm_tree(scratch);
}

/* ------------------------------------------------------------------ */

static void expect_default(const char *workers, const char *tree_name, unsigned want)
{
  if (workers != NULL)
    ASSERT_EQ(setenv("WS_WORKERS", workers, 1), 0);
  else
    ASSERT_EQ(unsetenv("WS_WORKERS"), 0);
  if (tree_name != NULL)
    ASSERT_EQ(setenv("WS_CGROUP_ROOT", fixture(tree_name), 1), 0);
  else
    ASSERT_EQ(unsetenv("WS_CGROUP_ROOT"), 0);
  unsigned got = ws__default_workers();
  if (got != want)
    TEST_FAIL("WS_WORKERS=%s WS_CGROUP_ROOT=%s: %u workers, want %u", workers ? workers : "(unset)",
              tree_name ? tree_name : "(unset)", got, want);
}

static void defaults(void)
{
  need_cgroups();
  unsigned aff = affinity_capped();
  fprintf(stderr, "affinity: %u CPUs\n", ws__affinity_count());
  expect_default(NULL, "v2-max", aff);
  expect_default(NULL, "v2-whole", min_u(aff, 2));
  expect_default(NULL, "v2-fraction", min_u(aff, 2));
  expect_default(NULL, "v2-tiny", 1);
  expect_default(NULL, "v2-nested", min_u(aff, 3));
  expect_default(NULL, "v2-bindmount", 1);
  expect_default(NULL, "v1-quota", min_u(aff, 3));
  expect_default(NULL, "v1-unlimited", aff);
  expect_default(NULL, "hybrid", 1);
  expect_default(NULL, "no-such-tree", aff);
  /* WS_WORKERS wins over the quota; garbage in it is ignored. */
  expect_default("5", "v2-tiny", 5);
  expect_default("1024", "v2-tiny", 1024);
  expect_default("1025", "v2-tiny", 1);
  expect_default("0", "v2-tiny", 1);
  expect_default("lots", "v2-tiny", 1);
  expect_default("3x", "v2-tiny", 1);
  expect_default("-2", "v2-tiny", 1);
  expect_default("", "v2-tiny", 1);
  /* A malformed tree means "no cap", not a failure. */
  make_scratch();
  tree("0::/app\n", V2_MOUNT);
  puts_file("sys/fs/cgroup/app/cpu.max", "garbage\n");
  ASSERT_EQ(setenv("WS_CGROUP_ROOT", scratch, 1), 0);
  ASSERT_EQ(unsetenv("WS_WORKERS"), 0);
  ASSERT_EQ(ws__default_workers(), aff);
  rm_tree(scratch);

  /* End to end: a pool with default options follows the quota. */
  ws_pool_t *p;
  expect_default(NULL, "v2-tiny", 1);
  ASSERT_OK(ws_pool_create(&p, NULL));
  ASSERT_EQ(ws_pool_workers(p), 1);
  ASSERT_OK(ws_pool_destroy(p));
  expect_default(NULL, "v1-quota", min_u(aff, 3));
  ASSERT_OK(ws_pool_create(&p, NULL));
  ASSERT_EQ(ws_pool_workers(p), min_u(aff, 3));
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_EQ(unsetenv("WS_CGROUP_ROOT"), 0);
}

/* ------------------------------------------------------------------ */

typedef struct pin_check {
  int cpu;
  int rc;
  unsigned count_after;
  int list_after[2];
  int nlist_after;
  int ran_on;
} pin_check;

/* Runs in its own thread so the main thread keeps its mask. */
static void *pin_thread(void *arg)
{
  pin_check *c = arg;
  c->rc = ws__pin_self(c->cpu);
  c->count_after = ws__affinity_count();
  c->nlist_after = ws__affinity_list(c->list_after, 2);
  c->ran_on = sched_getcpu();
  return NULL;
}

static void machine(void)
{
  double cpus = -1;
  unsetenv("WS_CGROUP_ROOT");
  unsetenv("WS_WORKERS");
  int rc = ws__cgroup_cpu_limit(NULL, &cpus);
  unsigned aff = ws__affinity_count();
  unsigned def = ws__default_workers();
  fprintf(stderr, "this machine: affinity %u CPUs, cgroup limit %s%g (rc %d), default %u workers\n",
          aff, rc == 1 ? "" : "none ", rc == 1 ? cpus : 0.0, rc, def);
  ASSERT(rc == 0 || rc == 1);
  if (rc == 1)
    ASSERT(cpus > 0);
  ASSERT_GE(def, 1);
  ASSERT_LE(def, aff);
  ASSERT_EQ(def, rc == 1 ? ws__workers_for_limit(min_u(aff, WS_MAX_WORKERS), cpus)
                         : min_u(aff, WS_MAX_WORKERS));
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GE(aff, 1);
  if (online > 0)
    ASSERT_LE(aff, online);
  if (strcmp(ws__platform_name, "posix") == 0) {
    /* All online CPUs, none of them known by number, no pinning. */
    if (online > 0)
      ASSERT_EQ(aff, online);
    int one;
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(ws__affinity_list(&one, 1), 0);
    ASSERT_EQ(ws__pin_self(0), WS_ESYS);
    ASSERT_EQ(ws__pin_self(-1), WS_EINVAL);
    return;
  }

  /* The list holds the mask, in increasing order, and respects max. */
  int *list = calloc(aff + 1, sizeof *list);
  ASSERT(list != NULL);
  int n = ws__affinity_list(list, aff + 1);
  ASSERT_EQ(n, aff);
  for (int i = 1; i < n; i++)
    ASSERT_LT(list[i - 1], list[i]);
  ASSERT_EQ(ws__affinity_list(list, 1), 1);
  ASSERT_EQ(ws__affinity_list(list, 0), 0);
  n = ws__affinity_list(list, aff + 1);

  /* Pinning a thread to the last CPU of the mask. */
  pin_check c = {.cpu = list[n - 1]};
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, pin_thread, &c), 0);
  ASSERT_EQ(pthread_join(th, NULL), 0);
  ASSERT_OK(c.rc);
  ASSERT_EQ(c.count_after, 1);
  ASSERT_EQ(c.nlist_after, 1);
  ASSERT_EQ(c.list_after[0], list[n - 1]);
  ASSERT_EQ(c.ran_on, list[n - 1]);
  /* The main thread kept its mask. */
  ASSERT_EQ(ws__affinity_count(), aff);
  /* Bad CPUs. */
  c = (pin_check){.cpu = -1};
  ASSERT_EQ(pthread_create(&th, NULL, pin_thread, &c), 0);
  ASSERT_EQ(pthread_join(th, NULL), 0);
  ASSERT_EQ(c.rc, WS_EINVAL);
  c = (pin_check){.cpu = 1 << 20}; /* valid mask size, no such CPU */
  ASSERT_EQ(pthread_create(&th, NULL, pin_thread, &c), 0);
  ASSERT_EQ(pthread_join(th, NULL), 0);
  ASSERT_EQ(c.rc, WS_ESYS);
  ASSERT_EQ(c.count_after, aff);
  free(list);
}

static const test_part parts[] = {
    {"rule", rule, false},        {"cgroup", cgroup, false},   {"malformed", malformed, false},
    {"default", defaults, false}, {"machine", machine, false},
};

int main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "--list") == 0)
    return TEST_RUN(argc, argv, parts);
  if (argc < 2) {
    fprintf(stderr, "usage: %s FIXTURE_DIR [part], or %s --list\n", argv[0], argv[0]);
    return 2;
  }
  fixtures = argv[1];
  /* The runner sees "test_cpu [part]". */
  argv[1] = argv[0];
  return TEST_RUN(argc - 1, argv + 1, parts);
}
