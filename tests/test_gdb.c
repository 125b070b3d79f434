/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. The gdb helper tools/gdb/wsched.py (issue #31: "gdb can still
 * print a backtrace of a parked task"); tests/check_gdb.sh runs this
 * program under gdb and reads what `ws-parked` prints.
 *   parked — three tasks park on 2 workers without spares, each in a
 *            function of its own: parked_in_sleep (ws_sleep for an hour),
 *            parked_in_suspend (ws_suspend, resumed only at the end) and
 *            parked_in_future_wait (ws_future_wait on parked_in_suspend's
 *            future, which it cannot run itself: it has started). Once the
 *            stats count them parked and both workers are idle (every
 *            switch done, so every parked context has its registers
 *            saved), it calls gdb_stop_here, where check_gdb.sh's gdb
 *            stops; then it resumes the suspended task, destroys the pool
 *            (which ends the sleep with WS_ESHUTDOWN) and checks every
 *            result: looking at the parked tasks changed nothing. Without
 *            gdb it runs the same, nobody stopping it.
 *            `test_gdb parked hold`: before gdb_stop_here it prints
 *            "held PID" and waits for a line (or the end) on stdin, for a
 *            gdb that attaches (gdb -p PID, the README's way) and detaches.
 */
#include "test.h"

#if defined(__linux__)
#include <sys/prctl.h>
#endif

#define HOUR_NS (3600 * (int64_t)1000000000)

static _Atomic uint64_t suspend_handle; /* given by the suspend callback */
static _Atomic int sleep_rc = 1, suspend_rc = 1, wait_rc = 1;
static ws_future_t *suspended; /* parked_in_suspend's future */
static bool hold; /* `parked hold`: wait on stdin for a gdb to attach */
/* For `ws-parked -pool gdb_pool` (a local could be optimized out there;
   volatile: the compiler would drop a static that is only written). */
static ws_pool_t *volatile gdb_pool;

/* The tasks: noinline, and each stores its wait's result after the call,
   so that the call is not a tail call and the function keeps a frame of
   its own below the wait (check_gdb.sh looks for both names). */

static __attribute__((noinline)) int parked_in_sleep(void *arg)
{
  (void)arg;
  atomic_store(&sleep_rc, ws_sleep(HOUR_NS));
  return 0;
}

static void give_handle(void *arg, ws_resume_t r)
{
  (void)arg;
  atomic_store(&suspend_handle, r.id);
}

static __attribute__((noinline)) int parked_in_suspend(void *arg)
{
  atomic_store(&suspend_rc, ws_suspend(give_handle, arg));
  return 7;
}

static __attribute__((noinline)) int parked_in_future_wait(void *arg)
{
  atomic_store(&wait_rc, ws_future_wait(arg, -1));
  return 0;
}

/* check_gdb.sh's breakpoint. Not static, so that its name is the symbol's;
   the empty asm keeps the call (a call of an empty function could go). */
__attribute__((noinline)) void gdb_stop_here(void);
__attribute__((noinline)) void gdb_stop_here(void)
{
  __asm__ volatile("" ::: "memory");
}

static void part_parked(void)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 2;
  o.max_spares = WS_SPARES_NONE; /* every wait parks (one on a spare would block) */
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  gdb_pool = p;

  ws_future_t *fs, *fw;
  ASSERT_OK(ws_submit(p, parked_in_sleep, NULL, &fs));
  ASSERT_OK(ws_submit(p, parked_in_suspend, NULL, &suspended));
  /* The handle is given once the task is set aside: from then on it has
     started, so the waiter below parks instead of running it in place. */
  int64_t give_up = test_deadline();
  while (atomic_load(&suspend_handle) == 0) {
    if (test_now_ns() > give_up)
      TEST_FAIL("parked_in_suspend never suspended");
    sched_yield();
  }
  ASSERT_OK(ws_submit(p, parked_in_future_wait, suspended, &fw));

  ws_stats_t st;
  for (;;) {
    ws_pool_stats(p, &st, NULL, 0);
    if (st.parked_tasks == 3)
      break;
    if (test_now_ns() > give_up)
      TEST_FAIL("%" PRIu64 " of 3 tasks parked", st.parked_tasks);
    sched_yield();
  }
  /* A task counts as parked before its switch; an idle worker has made
     every switch it had to. */
  test_wait_all_parked(p, 2);
  fprintf(stderr, "3 tasks parked, stopping in gdb_stop_here\n");
  if (hold) {
#if defined(PR_SET_PTRACER)
    /* Yama's ptrace_scope 1 lets only an ancestor attach: gdb is not one. */
    (void)prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    printf("held %d\n", (int)getpid());
    fflush(stdout);
    int ch;
    while ((ch = getchar()) != EOF && ch != '\n')
      ; /* one line or the end */
  }
  gdb_stop_here();

  ws_resume_t r = {atomic_load(&suspend_handle)};
  ASSERT_OK(ws_resume(r));
  ASSERT_OK(ws_future_wait(fw, TEST_DEADLINE_NS));
  int rc;
  ASSERT_OK(ws_future_result(suspended, &rc));
  ASSERT_EQ(rc, 7);
  ASSERT_EQ(atomic_load(&suspend_rc), 0);
  ASSERT_EQ(atomic_load(&wait_rc), 0);
  ASSERT_OK(ws_pool_destroy(p)); /* ends the hour's sleep */
  ASSERT_EQ(atomic_load(&sleep_rc), WS_ESHUTDOWN);
  ws_future_release(fs);
  ws_future_release(suspended);
  ws_future_release(fw);
}

static const test_part parts[] = {
    {"parked", part_parked, false},
};

int main(int argc, char **argv)
{
  hold = argc > 2 && strcmp(argv[2], "hold") == 0;
  return TEST_RUN(argc, argv, parts);
}
