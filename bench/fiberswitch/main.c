/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * fiberswitch: the bare cost of one context switch (issue #31's target: the
 * hand-written switch within 2x of Boost.Context's fcontext), between two
 * contexts on one thread that switch back and forth, nothing else:
 *
 *   wsched       ws__fiber_switch (src/platform/fiber.h): the canary check
 *                and the assembly (or, built with the posix platform,
 *                swapcontext)
 *   wsched-raw   ws__fiber_swap alone, the assembly (asm builds only)
 *   swapcontext  glibc's, two ucontexts (a sigprocmask system call each)
 *   fcontext     Boost.Context's jump_fcontext (when libboost-context is
 *                installed; built without it otherwise, and says so)
 *
 * Each of --procs processes (fork) times every method, in an order that
 * rotates from process to process, --rounds round trips per batch, best of
 * --batches batches; the table gives the median over the processes and
 * the lowest and highest. Every method's other side counts its switches,
 * and a count that differs from what the timing assumed fails the run
 * (exit 1), so the numbers are of switches that happened.
 *
 * --list names the methods built in. --count N --method M does N round
 * trips of one method, untimed, for
 * instruction counts (bench/fiberswitch/callgrind.sh runs it under
 * valgrind --tool=callgrind at two N and divides the difference).
 */
#include "fiber.h"
#include "stack.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#if defined(WS_HAVE_FCONTEXT)
/* Boost.Context's C entry points (boost/context/detail/fcontext.hpp
   declares them extern "C"; the header is C++). */
typedef void *fcontext_t;
typedef struct {
  fcontext_t fctx;
  void *data;
} transfer_t;
transfer_t jump_fcontext(fcontext_t const to, void *vp);
fcontext_t make_fcontext(void *sp, size_t size, void (*fn)(transfer_t));
#endif

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static ws__stack_pool pool;
static volatile long other_switches; /* counted by the other side */

/* --- wsched: ws__fiber_switch --------------------------------------------------- */

static ws__fiber ws_main, ws_other;

static void ws_body(void *arg, ws__fiber *from)
{
  (void)arg;
  for (;;) {
    other_switches++;
    from = ws__fiber_switch(&ws_other, from);
  }
}

static void run_wsched(long n)
{
  for (long i = 0; i < n; i++)
    ws__fiber_switch(&ws_main, &ws_other);
}

#if !defined(WS_FIBER_UCONTEXT)
/* --- wsched-raw: ws__fiber_swap ----------------------------------------------- */

static void *raw_sp[2]; /* main's, the other's */

static void raw_body(void *pass, void *arg)
{
  (void)pass;
  (void)arg;
  for (;;) {
    other_switches++;
    ws__fiber_swap(&raw_sp[1], raw_sp[0], NULL);
  }
}

static void run_raw(long n)
{
  for (long i = 0; i < n; i++)
    ws__fiber_swap(&raw_sp[0], raw_sp[1], NULL);
}
#endif

/* --- swapcontext ---------------------------------------------------------------- */

static ucontext_t uc_main, uc_other;

static void uc_body(void)
{
  for (;;) {
    other_switches++;
    swapcontext(&uc_other, &uc_main);
  }
}

static void run_swapcontext(long n)
{
  for (long i = 0; i < n; i++)
    swapcontext(&uc_main, &uc_other);
}

#if defined(WS_HAVE_FCONTEXT)
/* --- fcontext ------------------------------------------------------------------- */

static fcontext_t fc_other;

static void fc_body(transfer_t t)
{
  for (;;) {
    other_switches++;
    t = jump_fcontext(t.fctx, NULL);
  }
}

static void run_fcontext(long n)
{
  for (long i = 0; i < n; i++)
    fc_other = jump_fcontext(fc_other, NULL).fctx;
}
#endif

/* --- the methods ---------------------------------------------------------------- */

typedef struct {
  const char *name;
  void (*run)(long round_trips);
} method;

static const method methods[] = {
    {"wsched", run_wsched},
#if !defined(WS_FIBER_UCONTEXT)
    {"wsched-raw", run_raw},
#endif
    {"swapcontext", run_swapcontext},
#if defined(WS_HAVE_FCONTEXT)
    {"fcontext", run_fcontext},
#endif
};
#define NMETHODS (sizeof methods / sizeof methods[0])

static ws__stack *get_stack(void)
{
  ws__stack *s;
  if (ws__stack_get(&pool, &s) != 0) {
    fprintf(stderr, "fiberswitch: no memory for a stack\n");
    exit(1);
  }
  return s;
}

/* Makes every method's other context, each on a stack of its own. */
static void setup(void)
{
  if (ws__stack_pool_init(&pool, NULL) != 0)
    exit(1);
  ws__fiber_init_thread(&ws_main);
  ws__fiber_make(&ws_other, get_stack(), ws_body, NULL);
#if !defined(WS_FIBER_UCONTEXT)
  ws__stack *s = get_stack();
  raw_sp[1] = ws__fiber_prepare(ws__stack_top(s), raw_body, NULL);
#endif
  ws__stack *u = get_stack();
  getcontext(&uc_other);
  uc_other.uc_stack.ss_sp = u->low + 64;
  uc_other.uc_stack.ss_size = u->size - 64;
  uc_other.uc_link = NULL;
  makecontext(&uc_other, uc_body, 0);
#if defined(WS_HAVE_FCONTEXT)
  ws__stack *f = get_stack();
  fc_other = make_fcontext(ws__stack_top(f), f->size - 64, fc_body);
#endif
}

/* Runs n round trips of m and checks the other side counted them. */
static void run_checked(const method *m, long n)
{
  long before = other_switches;
  m->run(n);
  if (other_switches - before != n) {
    fprintf(stderr, "fiberswitch: %s: the other side ran %ld times for %ld round trips\n", m->name,
            other_switches - before, n);
    exit(1);
  }
}

/* One process: ns per switch of every method, best of `batches`. */
static void measure(int proc, long rounds, int batches, double *ns)
{
  setup();
  for (size_t k = 0; k < NMETHODS; k++) {
    const method *m = &methods[(k + (size_t)proc) % NMETHODS];
    run_checked(m, rounds / 10 + 1); /* warm: first touches, caches, branch predictors */
    double best = 1e30;
    for (int b = 0; b < batches; b++) {
      int64_t t0 = now_ns();
      run_checked(m, rounds);
      double per = (double)(now_ns() - t0) / (2.0 * (double)rounds);
      if (per < best)
        best = per;
    }
    ns[m - methods] = best;
  }
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void usage(void)
{
  fprintf(stderr, "usage: fiberswitch [--rounds N] [--batches B] [--procs P]\n"
                  "       fiberswitch --list\n"
                  "       fiberswitch --count N --method M   (untimed, for callgrind)\n"
                  "methods:");
  for (size_t k = 0; k < NMETHODS; k++)
    fprintf(stderr, " %s", methods[k].name);
  fprintf(stderr, "\n");
  exit(2);
}

int main(int argc, char **argv)
{
  long rounds = 1000000, count = -1;
  int batches = 5, procs = 9;
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && strcmp(argv[i], "--rounds") == 0)
      rounds = atol(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--batches") == 0)
      batches = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--procs") == 0)
      procs = atoi(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--count") == 0)
      count = atol(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--method") == 0)
      only = argv[++i];
    else if (strcmp(argv[i], "--list") == 0) {
      for (size_t k = 0; k < NMETHODS; k++)
        printf("%s\n", methods[k].name);
      return 0;
    } else
      usage();
  }
  if (rounds < 1 || batches < 1 || procs < 1 || procs > 99)
    usage();

  if (count >= 0) {
    for (size_t k = 0; k < NMETHODS; k++)
      if (only != NULL && strcmp(only, methods[k].name) == 0) {
        setup();
        run_checked(&methods[k], count);
        printf("%s: %ld round trips\n", only, count);
        return 0;
      }
    usage();
  }

  double ns[99][NMETHODS];
  for (int p = 0; p < procs; p++) {
    int fd[2];
    if (pipe(fd) != 0)
      return 1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
      return 1;
    if (pid == 0) {
      double r[NMETHODS];
      measure(p, rounds, batches, r);
      if (write(fd[1], r, sizeof r) != (ssize_t)sizeof r)
        _exit(1);
      _exit(0);
    }
    close(fd[1]);
    ssize_t got = read(fd[0], ns[p], sizeof ns[p]);
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    if (got != (ssize_t)sizeof ns[p] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      fprintf(stderr, "fiberswitch: process %d failed\n", p);
      return 1;
    }
  }

  printf("context switch (%s), ns per switch: median of %d processes (min..max), each the best "
         "of %d batches of %ld round trips\n",
#if defined(WS_FIBER_UCONTEXT)
         "wsched: ucontext",
#elif defined(__x86_64__)
         "wsched: asm x86-64",
#else
         "wsched: asm aarch64",
#endif
         procs, batches, rounds);
  double med[NMETHODS];
  for (size_t k = 0; k < NMETHODS; k++) {
    double col[99];
    for (int p = 0; p < procs; p++)
      col[p] = ns[p][k];
    qsort(col, (size_t)procs, sizeof col[0], cmp_double);
    med[k] = procs % 2 ? col[procs / 2] : (col[procs / 2 - 1] + col[procs / 2]) / 2;
    printf("  %-12s %8.2f  (%.2f..%.2f)\n", methods[k].name, med[k], col[0], col[procs - 1]);
  }
#if defined(WS_HAVE_FCONTEXT)
  printf("  wsched / fcontext: %.2f\n", med[0] / med[NMETHODS - 1]);
#else
  printf("  (fcontext: not built; install libboost-context-dev and reconfigure)\n");
#endif
  return 0;
}
