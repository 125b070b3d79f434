/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * wsbench — runs the workload suite on wsched and reports.
 *
 *   wsbench [OPTION]... [WORKLOAD [SIZE]]     (wsbench --help: every option
 *                                             and workload, from the tables below)
 *
 * For every workload it runs, interleaved R times (so the ratios come from
 * one run on a noisy machine): the serial twin, a 1-worker pool and an
 * N-worker pool. It prints medians, the speedup of N workers over one, the
 * ratio to serial, the efficiency, and the N-worker pool's steal and park
 * counts per run. For a fork/join workload it also prints the greedy-scheduler
 * bound T1/N + Tinf, T1 the 1-worker time and Tinf = T1 / parallelism, the
 * parallelism from one extra profiled run on the N-worker pool (after the
 * timed ones), and the measured N-worker time over it. A workload whose
 * N-worker median is slower than its 1-worker one gets a warning line, with
 * how many repetitions were (issue #35). Every run checks
 * its answer; any wrong answer makes the exit status 1. --results prints one
 * machine-readable line per N-worker repetition instead (the format
 * bench/compare uses).
 */
#include "wsbench.h"

#include "hist.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const wb_workload *const workloads[] = {
    &wb_fib,      &wb_nqueens,   &wb_nqfirst,
#ifdef WSBENCH_HAVE_UTS
    &wb_uts_t1,   &wb_uts_t3,
#endif
    &wb_sort,     &wb_psort,     &wb_tri,        &wb_reduce,   &wb_fanout,  &wb_fanout_batch,
    &wb_storm,    &wb_avalanche, &wb_fib_submit, &wb_pingpong, &wb_service, &wb_service_bg,
    &wb_sleepers, &wb_chain,     &wb_switch,     &wb_chanpp,   &wb_chanbuf, &wb_sieve,
};
#define NWORKLOADS (sizeof workloads / sizeof workloads[0])

double wb_now_ms(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int profile_mode; /* --profile: wb_run_root profiles */
static ws_profile_t last_profile;

int wb_run_root(ws_pool_t *pool, ws_task_fn fn, void *arg)
{
  int rc, fn_rc = 0;
  if (profile_mode) {
    rc = ws_profile_run(pool, fn, arg, &last_profile, &fn_rc);
    return rc != 0 ? rc : fn_rc;
  }
  ws_group_t g; /* used from outside the pool: its child becomes a root task */
  ws_group_init(&g, pool);
  rc = ws_group_spawn(&g, fn, arg);
  if (rc == 0)
    rc = ws_group_wait(&g);
  return rc;
}

long wb_size_long(const char *size, long lo, long hi)
{
  char *end;
  errno = 0;
  long v = strtol(size, &end, 10);
  if (errno != 0 || end == size || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "wsbench: size '%s' is not a number in [%ld, %ld]\n", size, lo, hi);
    return -1;
  }
  return v;
}

typedef struct row {
  const wb_workload *w;
  const char *size;
  double serial, one, many; /* medians, ms */
  double steals, parks; /* N-worker pool, per run */
  double par; /* fork/join: the parallelism T1/Tinf of one profiled run; <= 0: none */
  int slower; /* repetitions whose N-worker time exceeded the same repetition's 1-worker one */
  int ok;
  char detail[96];
} row;

/* The greedy-scheduler bound T1/N + Tinf in ms. T1 is the measured 1-worker
   time and Tinf = T1 / parallelism: the profile's own T1 and Tinf include
   its timer reads (about 16x the work of fib on one worker, BENCHMARKS.md),
   so only their ratio is used. */
static double greedy_bound(const row *r, int nworkers)
{
  return r->one / nworkers + r->one / r->par;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double wb_median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The command line: one table gives getopt_long its options and --help its
   text, so that an option cannot be accepted without being described. Every
   option takes its value as `--opt value` or `--opt=value`. */
enum {
  OPT_WORKERS = 256,
  OPT_DEQUE,
  OPT_STEAL,
  OPT_ORDER,
  OPT_MIGRATE,
  OPT_SLICE,
  OPT_PIN,
  OPT_REPEAT,
  OPT_SMALL,
  OPT_RESULTS,
  OPT_SERIAL,
  OPT_IMPL,
  OPT_JSON,
  OPT_PROFILE,
  OPT_JOIN_COST,
  OPT_LIST,
  OPT_HELP = 'h',
};

static const struct wb_option {
  const char *name;
  int has_arg; /* no_argument or required_argument */
  int val;
  const char *arg; /* the value's name in --help, or NULL */
  const char *help; /* one line */
} wb_options[] = {
    {"workers", required_argument, OPT_WORKERS, "N",
     "the N-worker pool's size (default: every CPU usable)"},
    {"deque", required_argument, OPT_DEQUE, "lockfree|locked", "the workers' deques"},
    {"steal", required_argument, OPT_STEAL, "one|half", "how much a thief takes"},
    {"order", required_argument, OPT_ORDER, "lifo|fifo",
     "the pool's task order (ws_options_t.order)"},
    {"migrate", no_argument, OPT_MIGRATE, NULL,
     "parked tasks resume where readied (ws_options_t.migrate)"},
    {"slice", required_argument, OPT_SLICE, "N|none",
     "safe points before yielding to urgent work (0: 64)"},
    {"pin", no_argument, OPT_PIN, NULL, "pin worker i to the i-th CPU (ws_options_t.pin)"},
    {"repeat", required_argument, OPT_REPEAT, "R", "repetitions, interleaved (default 5)"},
    {"small", no_argument, OPT_SMALL, NULL, "each workload's small size (the CI smoke run)"},
    {"results", no_argument, OPT_RESULTS, NULL,
     "a RESULT line per N-worker run, no table (bench/compare)"},
    {"serial", no_argument, OPT_SERIAL, NULL, "RESULT lines for the serial twin, no pool"},
    {"impl", required_argument, OPT_IMPL, "NAME", "the RESULT lines' impl= (default wsched)"},
    {"json", required_argument, OPT_JSON, "FILE", "also write the table to FILE as JSON"},
    {"profile", no_argument, OPT_PROFILE, NULL,
     "work/span profile of a fork/join WORKLOAD, speedup 1..N"},
    {"join-cost", no_argument, OPT_JOIN_COST, NULL,
     "what a spawn/sync pair costs on one thread (fib SIZE)"},
    {"list", no_argument, OPT_LIST, NULL, "list the workloads and exit"},
    {"help", no_argument, OPT_HELP, NULL, "this text"},
};
#define NOPTIONS (sizeof wb_options / sizeof wb_options[0])

/* One line per workload: name, default size, what it measures. */
static void list_workloads(FILE *out, const char *indent)
{
  for (size_t k = 0; k < NWORKLOADS; k++)
    fprintf(out, "%s%-12s %-9s %s\n", indent, workloads[k]->name, workloads[k]->default_size,
            workloads[k]->about);
}

static void usage(FILE *out)
{
  fprintf(
      out,
      "usage: wsbench [OPTION]... [WORKLOAD [SIZE]]\n"
      "Runs every workload (or one) serially, on 1 worker and on N workers, R times\n"
      "interleaved, and prints medians; a workload whose N-worker median is slower\n"
      "than its 1-worker one gets a warning line. Every run checks its answer; a\n"
      "wrong one exits 1. SIZE may start with '-' (uts flags: wsbench uts \"-t 1 -d 6 -r 3\").\n"
      "\nOptions (--opt VALUE or --opt=VALUE):\n");
  for (size_t i = 0; i < NOPTIONS; i++) {
    const struct wb_option *o = &wb_options[i];
    char left[48];
    snprintf(left, sizeof left, "%s--%s%s%s", o->val == OPT_HELP ? "-h, " : "", o->name,
             o->arg != NULL ? " " : "", o->arg != NULL ? o->arg : "");
    fprintf(out, "  %-26s %s\n", left, o->help);
  }
  fprintf(out, "\nWorkloads (name, default size, what it measures):\n");
  list_workloads(out, "  ");
  fprintf(out,
          "\nservice and service-bg report sojourn percentiles p50, p90, p99, p99.9 and\n"
          "p99.99 from a log-bucketed histogram (HdrHistogram's layout): each is at most\n"
          "1/%u of its value above the exact percentile, never below; the max is exact.\n"
          "With --results they also print a LATENCY line per repetition.\n"
          "--profile writes a PNG too when gnuplot is installed; --join-cost runs fib 32\n"
          "(or fib SIZE) with R = 11 unless --repeat says otherwise.\n",
          WB_HIST_REL_ERR_DEN);
}

static long parse_long(const char *s, const char *what)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0) {
    fprintf(stderr, "wsbench: bad %s '%s'\n", what, s);
    exit(2);
  }
  return v;
}

/* An option's value it does not take: says so, returns the exit status. */
static int bad_value(const char *option, const char *takes, const char *v)
{
  fprintf(stderr, "wsbench: %s takes %s, not '%s'\n", option, takes, v);
  return 2;
}

static const wb_workload *find_workload(const char *name)
{
  for (size_t i = 0; i < NWORKLOADS; i++)
    if (strcmp(workloads[i]->name, name) == 0)
      return workloads[i];
  return NULL;
}

/* Whether entry i runs: every entry without a WORKLOAD argument; with one,
   every entry of that name, or only the first if a SIZE was given. */
static int selected(size_t i, const char *only, const char *size_arg)
{
  if (only == NULL)
    return 1;
  if (strcmp(workloads[i]->name, only) != 0)
    return 0;
  return size_arg == NULL || find_workload(only) == workloads[i];
}

static int progress_tty;

static void progress(const char *fmt, const char *name, const char *size, int rep, int reps)
{
  if (!progress_tty)
    return;
  fprintf(stderr, "\r\033[K");
  fprintf(stderr, fmt, name, size, rep, reps);
  fflush(stderr);
}

static int check(const wb_workload *w, const char *variant, int rc, const wb_result *r)
{
  if (rc != 0) {
    fprintf(stderr, "\nwsbench: %s (%s) could not run (out of memory)\n", w->name, variant);
    return 0;
  }
  if (!r->ok) {
    fprintf(stderr, "\nwsbench: WRONG ANSWER: %s (%s): %s\n", w->name, variant, r->detail);
    return 0;
  }
  return 1;
}

/* --profile: the work/span profile on N workers, then the measured speedup
   on 1..N workers next to the bounds the profile predicts. */
static int run_profile(const wb_workload *w, const char *size, const ws_options_t *opt, int reps)
{
  ws_pool_t *pools[64];
  ws_options_t o = *opt;
  if (o.workers == 0) {
    ws_pool_t *probe;
    if (ws_pool_create(&probe, opt) != 0)
      return 2;
    o.workers = (unsigned)ws_pool_workers(probe);
    ws_pool_destroy(probe);
  }
  unsigned n = o.workers < 64 ? o.workers : 64;
  for (unsigned p = 1; p <= n; p++) {
    ws_options_t op = o;
    op.workers = p;
    if (ws_pool_create(&pools[p - 1], &op) != 0) {
      fprintf(stderr, "wsbench: cannot create a %u-worker pool\n", p);
      return 2;
    }
  }
  char where[768];
  ws_pool_describe(pools[n - 1], where, sizeof where);
  printf("wsbench --profile %s %s: %s\n\n", w->name, size, where);

  /* 1. The profile, on the N-worker pool. A preempted strand looks longer
     and can only lower the measured parallelism: keep the best of reps. */
  wb_result r;
  ws_profile_t pr;
  memset(&pr, 0, sizeof pr);
  int ok = 1;
  profile_mode = 1;
  for (int i = 0; i < reps; i++) {
    progress("%s %s: profiling, repetition %d/%d", w->name, size, i + 1, reps);
    memset(&r, 0, sizeof r);
    ok &= check(w, "profiled", w->parallel(pools[n - 1], size, &r), &r);
    if (last_profile.parallelism > pr.parallelism)
      pr = last_profile;
  }
  profile_mode = 0;
  printf("profile (best of %d runs on %u workers):\n", reps, n);
  ws_profile_print(&pr, stdout, n > 16 ? n : 16);

  /* 2. Measured, interleaved: median of reps runs on each worker count. */
  double *t = calloc((size_t)n * (size_t)reps, sizeof *t), med[64];
  for (int i = 0; i < reps; i++)
    for (unsigned p = 1; p <= n; p++) {
      progress("%s %s: measuring, repetition %d/%d", w->name, size, i + 1, reps);
      memset(&r, 0, sizeof r);
      ok &= check(w, "measured", w->parallel(pools[p - 1], size, &r), &r);
      t[(p - 1) * (size_t)reps + (size_t)i] = r.ms;
    }
  if (progress_tty)
    fprintf(stderr, "\r\033[K");
  double t1 = (double)pr.work_ns, tinf = (double)pr.span_ns;
  printf("\n%4s %12s %12s %14s %14s\n", "P", "median ms", "speedup", "greedy bound", "upper bound");
  for (unsigned p = 1; p <= n; p++) {
    med[p - 1] = wb_median(&t[(p - 1) * (size_t)reps], reps);
    double greedy = t1 / (t1 / p + tinf), upper = pr.parallelism < p ? pr.parallelism : p;
    printf("%4u %12.2f %11.2fx %13.2fx %13.2fx\n", p, med[p - 1], med[0] / med[p - 1], greedy,
           upper);
  }
  printf("speedup = median on 1 worker / median on P; greedy = T1/(T1/P + Tinf); upper = "
         "min(P, T1/Tinf)\n");

  /* 3. The chart: measured against predicted, for the worker counts here. */
  char dat[256], png[256];
  snprintf(dat, sizeof dat, "wsbench-profile-%s.dat", w->name);
  snprintf(png, sizeof png, "wsbench-profile-%s.png", w->name);
  FILE *f = fopen(dat, "w");
  if (f != NULL) {
    fprintf(f, "# P measured_speedup greedy_prediction upper_bound (%s %s)\n", w->name, size);
    for (unsigned p = 1; p <= n; p++)
      fprintf(f, "%u %.4f %.4f %.4f\n", p, med[0] / med[p - 1], t1 / (t1 / p + tinf),
              pr.parallelism < p ? pr.parallelism : (double)p);
    fclose(f);
    FILE *g = popen("gnuplot 2>/dev/null", "w");
    if (g != NULL) {
      fprintf(g,
              "set terminal pngcairo size 800,500\nset output '%s'\n"
              "set title 'wsched %s %s: measured vs predicted speedup (T1/Tinf = %.1f)'\n"
              "set xlabel 'workers P'\nset ylabel 'speedup over 1 worker'\nset key left top\n"
              "set xrange [0.5:%u.5]\nset xtics 1\nset yrange [0:*]\nset grid\n"
              "plot '%s' using 1:4 with lines lw 2 title 'upper bound min(P, T1/Tinf)', "
              "'' using 1:3 with linespoints lw 2 title 'greedy T1/(T1/P+Tinf)', "
              "'' using 1:2 with linespoints lw 2 pt 7 title 'measured'\n",
              png, w->name, size, pr.parallelism, n, dat);
      if (pclose(g) == 0)
        printf("chart: %s (data: %s)\n", png, dat);
      else
        printf("data: %s (gnuplot failed or is missing: apt-get install gnuplot-nox)\n", dat);
    }
  }
  free(t);
  for (unsigned p = 1; p <= n; p++)
    ws_pool_destroy(pools[p - 1]);
  if (!ok)
    fprintf(stderr, "wsbench: FAILED: at least one wrong answer\n");
  return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
  ws_options_t opt;
  int reps = 5, reps_given = 0, results = 0, small = 0, profile = 0, serial_only = 0;
  int join_cost = 0;
  const char *json = NULL, *only = NULL, *size_arg = NULL, *impl = NULL;

  ws_options_init(&opt);
  struct option longopts[NOPTIONS + 1];
  for (size_t i = 0; i < NOPTIONS; i++)
    longopts[i] =
        (struct option){wb_options[i].name, wb_options[i].has_arg, NULL, wb_options[i].val};
  longopts[NOPTIONS] = (struct option){NULL, 0, NULL, 0};
  /* "-": operands come back in order as 1, so that the argument right after
     the workload can be its size even when it starts with '-'. */
  int c;
  while ((c = getopt_long(argc, argv, "-h", longopts, NULL)) != -1) {
    const char *v = optarg;
    switch (c) {
    case 1:
      if (only == NULL) {
        only = v;
        if (optind < argc && argv[optind][0] == '-' && argv[optind][1] != '-' &&
            strcmp(argv[optind], "-h") != 0)
          size_arg = argv[optind++]; /* uts flags */
      } else if (size_arg == NULL) {
        size_arg = v;
      } else {
        fprintf(stderr, "wsbench: one WORKLOAD and one SIZE at most ('%s'); see --help\n", v);
        return 2;
      }
      break;
    case OPT_WORKERS:
      opt.workers = (unsigned)parse_long(v, "worker count");
      break;
    case OPT_DEQUE:
      if (!strcmp(v, "lockfree"))
        opt.deque = WS_DEQUE_LOCKFREE;
      else if (!strcmp(v, "locked"))
        opt.deque = WS_DEQUE_LOCKED;
      else
        return bad_value("--deque", "lockfree or locked", v);
      break;
    case OPT_STEAL:
      if (!strcmp(v, "one"))
        opt.steal = WS_STEAL_ONE;
      else if (!strcmp(v, "half"))
        opt.steal = WS_STEAL_HALF;
      else
        return bad_value("--steal", "one or half", v);
      break;
    case OPT_ORDER:
      if (!strcmp(v, "lifo"))
        opt.order = WS_ORDER_LIFO;
      else if (!strcmp(v, "fifo"))
        opt.order = WS_ORDER_FIFO;
      else
        return bad_value("--order", "lifo or fifo", v);
      break;
    case OPT_MIGRATE:
      opt.migrate = 1; /* parked tasks resume where they were readied */
      break;
    case OPT_SLICE:
      opt.slice = !strcmp(v, "none") ? WS_SLICE_NONE : (unsigned)parse_long(v, "slice");
      break;
    case OPT_PIN:
      opt.pin = 1; /* worker i on the i-th CPU of the affinity mask */
      break;
    case OPT_REPEAT:
      reps = (int)parse_long(v, "repeat count");
      reps_given = 1;
      if (reps < 1)
        reps = 1;
      break;
    case OPT_SMALL:
      small = 1;
      break;
    case OPT_RESULTS:
      results = 1;
      break;
    case OPT_SERIAL:
      serial_only = 1; /* --results for the serial twin (impl=serial-twin) */
      results = 1;
      break;
    case OPT_IMPL:
      impl = v; /* the RESULT lines' impl= (bench/compare's wsched-lifo) */
      break;
    case OPT_JSON:
      json = v;
      break;
    case OPT_PROFILE:
      profile = 1;
      break;
    case OPT_JOIN_COST:
      join_cost = 1;
      break;
    case OPT_LIST:
      list_workloads(stdout, "");
      return 0;
    case OPT_HELP:
      usage(stdout);
      return 0;
    default: /* getopt_long said what it refused */
      fprintf(stderr, "usage: wsbench [OPTION]... [WORKLOAD [SIZE]] (wsbench --help)\n");
      return 2;
    }
  }
  for (; optind < argc; optind++) { /* after "--": operands only */
    if (only == NULL)
      only = argv[optind];
    else if (size_arg == NULL)
      size_arg = argv[optind];
    else {
      fprintf(stderr, "wsbench: one WORKLOAD and one SIZE at most ('%s'); see --help\n",
              argv[optind]);
      return 2;
    }
  }
  if (only != NULL && find_workload(only) == NULL) {
    fprintf(stderr, "wsbench: no workload '%s' (see --list)\n", only);
    return 2;
  }
  if (size_arg != NULL && find_workload(only)->check_size(size_arg) != 0)
    return 2;
  progress_tty = isatty(2) && !results;
  if (join_cost) {
    if (only != NULL && strcmp(only, "fib") != 0) {
      fprintf(stderr, "wsbench: --join-cost measures fib only\n");
      return 2;
    }
    return wb_join_cost(size_arg != NULL ? size_arg : small ? "20" : "32", reps_given ? reps : 11);
  }
  if (profile) {
    if (only == NULL) {
      fprintf(stderr, "wsbench: --profile needs a WORKLOAD\n");
      return 2;
    }
    const wb_workload *w = find_workload(only);
    if (!w->forkjoin) {
      fprintf(stderr, "wsbench: %s is not a fork/join workload: nothing to profile\n", only);
      return 2;
    }
    return run_profile(w,
                       size_arg != NULL ? size_arg
                       : small          ? w->small_size
                                        : w->default_size,
                       &opt, reps);
  }

  ws_pool_t *many = NULL, *one = NULL;
  int rc = serial_only ? 0 : ws_pool_create(&many, &opt); /* --serial: no pool at all */
  if (rc != 0) {
    fprintf(stderr, "wsbench: cannot create the pool: %s\n", ws_strerror(rc));
    return 2;
  }
  int nworkers = many != NULL ? ws_pool_workers(many) : 1;
  if (!results) {
    ws_options_t o1 = opt;
    o1.workers = 1;
    if ((rc = ws_pool_create(&one, &o1)) != 0) {
      fprintf(stderr, "wsbench: cannot create the pool: %s\n", ws_strerror(rc));
      return 2;
    }
    char where[768];
    ws_pool_describe(many, where, sizeof where);
    printf("wsbench: %s\n", where);
    printf("wsbench: %d workers (%s deque, steal %s, %s order), %d repetitions, medians in ms\n",
           nworkers, opt.deque == WS_DEQUE_LOCKED ? "locked" : "lock-free",
           opt.steal == WS_STEAL_HALF ? "half" : "one",
           opt.order == WS_ORDER_FIFO ? "fifo" : "lifo", reps);
  }

  row rows[NWORKLOADS];
  int nrows = 0, all_ok = 1;
  double *ts = calloc((size_t)reps, sizeof *ts), *t1 = calloc((size_t)reps, sizeof *t1),
         *tn = calloc((size_t)reps, sizeof *tn);

  for (size_t k = 0; k < NWORKLOADS; k++) {
    const wb_workload *w = workloads[k];
    if (!selected(k, only, size_arg))
      continue;
    const char *size = size_arg != NULL ? size_arg : small ? w->small_size : w->default_size;
    row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    r->w = w;
    r->size = size;
    r->ok = 1;
    ws_stats_t before, after;
    if (many != NULL)
      ws_pool_stats(many, &before, NULL, 0);
    for (int i = 0; i < reps; i++) {
      wb_result res;
      if (results) {
        memset(&res, 0, sizeof res);
        int ok = serial_only ? check(w, "serial", w->serial(size, &res), &res)
                             : check(w, "parallel", w->parallel(many, size, &res), &res);
        const char *name = impl != NULL ? impl : serial_only ? "serial-twin" : "wsched";
        int nw = serial_only ? 1 : nworkers;
        printf("RESULT impl=%s workload=%s size=%s workers=%d ms=%.3f answer=%llu ok=%d%s%s\n",
               name, w->name, size, nw, res.ms, (unsigned long long)res.answer, ok,
               res.extra[0] ? " " : "", res.extra);
        if (res.latency[0])
          printf("LATENCY impl=%s workload=%s size=%s workers=%d us=%s\n", name, w->name, size, nw,
                 res.latency);
        fflush(stdout);
        r->ok &= ok;
        continue;
      }
      progress("%s %s: serial, repetition %d/%d", w->name, size, i + 1, reps);
      memset(&res, 0, sizeof res);
      r->ok &= check(w, "serial", w->serial(size, &res), &res);
      ts[i] = res.ms;
      progress("%s %s: 1 worker, repetition %d/%d", w->name, size, i + 1, reps);
      memset(&res, 0, sizeof res);
      r->ok &= check(w, "1 worker", w->parallel(one, size, &res), &res);
      t1[i] = res.ms;
      progress("%s %s: N workers, repetition %d/%d", w->name, size, i + 1, reps);
      memset(&res, 0, sizeof res);
      r->ok &= check(w, "N workers", w->parallel(many, size, &res), &res);
      tn[i] = res.ms;
      r->slower += tn[i] > t1[i];
      snprintf(r->detail, sizeof r->detail, "%s", res.detail);
    }
    if (many != NULL)
      ws_pool_stats(many, &after, NULL, 0);
    all_ok &= r->ok;
    if (results)
      continue;
    r->serial = wb_median(ts, reps);
    r->one = wb_median(t1, reps);
    r->many = wb_median(tn, reps);
    r->steals = (double)(after.total.steals - before.total.steals) / reps;
    r->parks = (double)(after.total.parks - before.total.parks) / reps;
    if (w->forkjoin) {
      /* The theory line: one profiled run on the N-worker pool, after the
         timed ones and their steal/park counts, so it disturbs neither.
         Greedy scheduling (Graham/Brent): T_N <= T1/N + Tinf. */
      wb_result res;
      progress("%s %s: profiling, repetition %d/%d", w->name, size, 1, 1);
      memset(&res, 0, sizeof res);
      memset(&last_profile, 0, sizeof last_profile);
      profile_mode = 1;
      int ok = check(w, "profiled", w->parallel(many, size, &res), &res);
      profile_mode = 0;
      r->ok &= ok;
      all_ok &= ok;
      if (ok && last_profile.work_ns > 0 && last_profile.span_ns > 0)
        r->par = (double)last_profile.work_ns / (double)last_profile.span_ns;
    }
  }
  if (progress_tty)
    fprintf(stderr, "\r\033[K");

  if (!results) {
    printf("%-12s %-9s %10s %10s %10s %10s %8s %8s %8s %6s %10s %9s  %s\n", "workload", "size",
           "serial", "1 worker", "N workers", "bound", "vs-bound", "speedup", "vs-ser", "eff",
           "steals/run", "parks/run", "answer");
    for (int i = 0; i < nrows; i++) {
      row *r = &rows[i];
      double sp = r->one / r->many, vs = r->serial / r->many;
      char bound[32] = "-", vsb[32] = "-";
      if (r->par > 0) {
        double b = greedy_bound(r, nworkers);
        snprintf(bound, sizeof bound, "%.2f", b);
        snprintf(vsb, sizeof vsb, "%.2fx", r->many / b);
      }
      printf(
          "%-12s %-9.9s %10.2f %10.2f %10.2f %10s %8s %7.2fx %7.2fx %5.0f%% %10.0f %9.0f  %s%s\n",
          r->w->name, r->size, r->serial, r->one, r->many, bound, vsb, sp, vs, 100 * sp / nworkers,
          r->steals, r->parks, r->ok ? "ok " : "WRONG ", r->detail);
    }
    printf("speedup = 1 worker / N workers; vs-ser = serial / N workers; eff = speedup / N\n");
    printf("bound = T1/N + Tinf (greedy-scheduler bound) with T1 = the 1-worker time and\n"
           "Tinf = T1 / parallelism, the parallelism (work/span) from one profiled N-worker run\n"
           "after the timed ones; vs-bound = N workers / bound; '-' = not a fork/join workload\n");
    /* More workers should never be slower (issue #35): say so when they were. */
    for (int i = 0; i < nrows; i++) {
      const row *r = &rows[i];
      if (nworkers > 1 && r->many > r->one)
        printf("wsbench: warning: %s %s: %d workers slower than 1 worker (median %.2f ms against "
               "%.2f; %d of %d repetitions)\n",
               r->w->name, r->size, nworkers, r->many, r->one, r->slower, reps);
    }
    for (int i = 0; i < nrows; i++)
      if (rows[i].w->latency) {
        printf("latencies (answer column): percentiles from a log-bucketed histogram, each at\n"
               "most 1/%u above the exact value, never below; max exact\n",
               WB_HIST_REL_ERR_DEN);
        break;
      }
  }

  if (json != NULL && !results) {
    FILE *f = fopen(json, "w");
    if (f == NULL) {
      fprintf(stderr, "wsbench: cannot write %s: %s\n", json, strerror(errno));
      all_ok = 0;
    } else {
      fprintf(f,
              "{\n  \"workers\": %d,\n  \"repeat\": %d,\n  \"deque\": \"%s\",\n"
              "  \"steal\": \"%s\",\n  \"order\": \"%s\",\n  \"workloads\": [\n",
              nworkers, reps, opt.deque == WS_DEQUE_LOCKED ? "locked" : "lockfree",
              opt.steal == WS_STEAL_HALF ? "half" : "one",
              opt.order == WS_ORDER_FIFO ? "fifo" : "lifo");
      for (int i = 0; i < nrows; i++) {
        row *r = &rows[i];
        char bound[32] = "null", vsb[32] = "null"; /* not fork/join: null */
        if (r->par > 0) {
          double b = greedy_bound(r, nworkers);
          snprintf(bound, sizeof bound, "%.3f", b);
          snprintf(vsb, sizeof vsb, "%.3f", r->many / b);
        }
        fprintf(f,
                "    {\"name\": \"%s\", \"size\": \"%s\", \"serial_ms\": %.3f, \"one_worker_ms\": "
                "%.3f, \"n_workers_ms\": %.3f, \"speedup\": %.3f, \"vs_serial\": %.3f, "
                "\"steals_per_run\": %.1f, \"parks_per_run\": %.1f, \"ok\": %s, "
                "\"answer\": \"%s\", \"bound_ms\": %s, \"vs_bound\": %s, \"slower_reps\": %d}%s\n",
                r->w->name, r->size, r->serial, r->one, r->many, r->one / r->many,
                r->serial / r->many, r->steals, r->parks, r->ok ? "true" : "false", r->detail,
                bound, vsb, r->slower, i + 1 < nrows ? "," : "");
      }
      fprintf(f, "  ]\n}\n");
      fclose(f);
    }
  }

  if (!results) {
    printf("\nN-worker pool after the runs:\n");
    ws_pool_stats_print(many, stdout);
  }
  free(ts);
  free(t1);
  free(tn);
  if (one != NULL)
    ws_pool_destroy(one);
  if (many != NULL)
    ws_pool_destroy(many);
  if (!all_ok)
    fprintf(stderr, "wsbench: FAILED: at least one wrong answer\n");
  return all_ok ? 0 : 1;
}
