/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Context switches (fiber.h): the C side of both backends, and the
 * sanitizer annotations that keep AddressSanitizer and ThreadSanitizer
 * seeing through a switch.
 *
 * A switch from context A to context B, on one thread, in this order:
 *   1. A's stack canary is checked, while the overflow is fresh
 *      (ws__stack_overflow prints the option to raise and aborts).
 *   2. ASan: __sanitizer_start_switch_fiber(&A->asan_fake, B's stack):
 *      A's fake stack (detect_stack_use_after_return) is set aside in A;
 *      when A leaves for the last time (ws__fiber_exit), NULL instead, and
 *      ASan frees it.
 *   3. TSan: __tsan_switch_to_fiber(B->tsan, 0) immediately before the
 *      switch, with synchronisation (flag 0: what A did happens before
 *      what B does, as on one thread it does). The functions that make
 *      this call and the switch are not instrumented by TSan (WS__NO_TSAN),
 *      so that nothing TSan tracks happens between the annotation and the
 *      switch, and no frame is pushed on one fiber's shadow stack and
 *      popped from another's: a wrapper whose function exit runs on
 *      another fiber than its entry corrupts TSan's shadow stack
 *      (Tencent/flare #197 crashed so). Here every context resumes inside
 *      the call it left from, so entry and exit would pair up even if
 *      instrumented (the test cannot tell the difference); the exclusion
 *      keeps it so when the code changes.
 *   4. The switch: ws__fiber_swap (asm) or swapcontext.
 *   5. Now on B's stack: ASan: __sanitizer_finish_switch_fiber(
 *      B->asan_fake, &A->asan_bottom, &A->asan_size), ASan reporting the
 *      bounds of the stack just left. That is how a thread's own context
 *      learns its stack bounds as ASan sees them (ws__fiber_init_thread
 *      does not ask).
 *   6. If A exited: release it. TSan: __tsan_destroy_fiber(A->tsan), which
 *      must not be the running fiber, so B does it. ASan: clear the shadow
 *      of A's stack, where frames that never returned left poisoned
 *      redzones that the next context on that stack would trip over.
 * A made context's first run does 5 and 6 in ws__fiber_main, with no fake
 * stack yet (NULL).
 *
 * How `from` reaches the resumed side: the asm passes it through
 * ws__fiber_swap's return value (rax / x0, no memory); ucontext cannot, so
 * the switcher stores it in B->from before swapcontext (not in a
 * thread-local: a context resumed on another thread would read the old
 * thread's, the compiler having kept the TLS address across the switch).
 */
#include "fiber.h"

#include "platform.h"

#include <stdint.h>
#include <string.h>

#if defined(WS__FIBER_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(WS__FIBER_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

/* Not instrumented by TSan, entry and exit included: clang's
   no_sanitize("thread") keeps __tsan_func_entry/exit (checked with clang 14),
   disable_sanitizer_instrumentation drops them; gcc's no_sanitize_thread
   drops both. Only in TSan builds (the clang attribute would also switch
   ASan off). */
#if defined(WS__FIBER_TSAN) && defined(__clang__)
#if __has_attribute(disable_sanitizer_instrumentation)
#define WS__NO_TSAN __attribute__((disable_sanitizer_instrumentation))
#else
#error "this clang keeps TSan's function entry/exit in no_sanitize(\"thread\") functions"
#endif
#elif defined(WS__FIBER_TSAN)
#define WS__NO_TSAN __attribute__((no_sanitize_thread))
#else
#define WS__NO_TSAN
#endif

/* Step 6 for an exited or abandoned context f (not the running one). */
WS__NO_TSAN static void ws__fiber_release(ws__fiber *f)
{
  if (f->stack == NULL)
    return;
#if defined(WS__FIBER_TSAN)
  if (f->tsan != NULL)
    __tsan_destroy_fiber(f->tsan);
#endif
  f->tsan = NULL;
#if defined(WS__FIBER_ASAN)
  /* Only above where it was left (with a page of margin): every frame
     below returned, and unpoisoned its redzones as it did. The whole of a
     big stack (8 MiB: 1 MiB of shadow) at every exit made 10^4 parks
     write gigabytes. sp is where the switch away saved it, or where
     ws__fiber_exit stood; NULL (ucontext, or never run): all of it. */
  char *from = f->stack->low, *sp = f->sp;
  size_t page = 4096; /* a margin: any page size does */
  if (sp != NULL && sp - page > from && sp <= from + f->stack->size)
    from = (char *)((uintptr_t)(sp - page) & ~(uintptr_t)(page - 1));
  __asan_unpoison_memory_region(from, (size_t)(f->stack->low + f->stack->size - from));
#endif
}

/* Steps 5 and 6, first thing on the stack of `self`, arrived from `prev`. */
WS__NO_TSAN static inline void ws__fiber_arrived(ws__fiber *self, ws__fiber *prev)
{
#if defined(WS__FIBER_ASAN)
  __sanitizer_finish_switch_fiber(self->asan_fake, &prev->asan_bottom, &prev->asan_size);
#else
  (void)self;
#endif
  if (prev->exited)
    ws__fiber_release(prev);
}

/* Step 1 (fiber.h has it inline too). */
WS__NO_TSAN static inline void ws__fiber_check(const ws__fiber *f)
{
  if (f->stack != NULL && __builtin_expect(!ws__stack_canary_ok(f->stack), 0))
    ws__stack_overflow(f->stack, "found at a switch away from it");
}

/* The first code of a made context, on its own stack. */
WS__NO_TSAN static void ws__fiber_main(void *pass, void *arg)
{
  ws__fiber *self = arg, *from = pass;
  ws__fiber_arrived(self, from);
  self->fn(self->arg, from);
  ws__panic(__FILE__, __LINE__,
            "a context's entry function returned (it must end in ws__fiber_exit)");
}

#if defined(WS_FIBER_UCONTEXT)
/* The FP control state a context keeps (fiber.h): glibc's swapcontext
   keeps the x87 environment on i386 but not MXCSR (SSE's rounding,
   flush-to-zero and masks), which x86-64's keeps: on i386 the switch saves
   and restores it here (test_fiber fpenv). A CPU without SSE has none. */
#if defined(__i386__)
static unsigned mxcsr_get(void)
{
  unsigned v = 0;
  if (__builtin_cpu_supports("sse"))
    __asm__ volatile("stmxcsr %0" : "=m"(v));
  return v;
}

static void mxcsr_set(unsigned v)
{
  if (__builtin_cpu_supports("sse"))
    __asm__ volatile("ldmxcsr %0" : : "m"(v));
}
#define MXCSR_SAVE(f) ((f)->mxcsr = mxcsr_get())
#define MXCSR_RESTORE(f) mxcsr_set((f)->mxcsr)
#else
#define MXCSR_SAVE(f) ((void)(f))
#define MXCSR_RESTORE(f) ((void)(f))
#endif

/* makecontext passes ints only: the context's address comes in two halves. */
WS__NO_TSAN static void ws__fiber_uc_entry(unsigned lo, unsigned hi)
{
  ws__fiber *self = (ws__fiber *)(uintptr_t)(((uint64_t)hi << 32) | lo);
  MXCSR_RESTORE(self); /* its creator's, saved by ws__fiber_make */
  ws__fiber_main(self->from, self);
}
#endif

void ws__fiber_init_thread(ws__fiber *f)
{
  memset(f, 0, sizeof *f);
#if defined(WS__FIBER_TSAN)
  f->tsan = __tsan_get_current_fiber();
#endif
}

void ws__fiber_make(ws__fiber *f, ws__stack *s, ws__fiber_fn *fn, void *arg)
{
  f->stack = s;
  f->fn = fn;
  f->arg = arg;
  f->exited = false;
  f->asan_fake = NULL;
  f->asan_bottom = s->low;
  f->asan_size = s->size;
  f->tsan = NULL;
#if defined(WS__FIBER_TSAN)
  f->tsan = __tsan_create_fiber(0);
#endif
#if defined(WS_FIBER_UCONTEXT)
  f->from = NULL;
  if (getcontext(&f->uc) != 0)
    ws__panic(__FILE__, __LINE__, "getcontext failed");
  f->uc.uc_stack.ss_sp = s->low;
  f->uc.uc_stack.ss_size = s->size;
  f->uc.uc_link = NULL;
  MXCSR_SAVE(f);
  uint64_t p = (uint64_t)(uintptr_t)f;
  makecontext(&f->uc, (void (*)(void))ws__fiber_uc_entry, 2, (unsigned)(p & 0xffffffffu),
              (unsigned)(p >> 32));
#else
  f->sp = ws__fiber_prepare(ws__stack_top(s), ws__fiber_main, f);
#endif
}

#if !defined(WS__FIBER_SWITCH_INLINE) /* else fiber.h has it */
WS__NO_TSAN ws__fiber *ws__fiber_switch(ws__fiber *from, ws__fiber *to)
{
  ws__fiber_check(from);
#if defined(WS__FIBER_ASAN)
  __sanitizer_start_switch_fiber(&from->asan_fake, to->asan_bottom, to->asan_size);
#endif
#if defined(WS__FIBER_TSAN)
  __tsan_switch_to_fiber(to->tsan, 0);
#endif
#if defined(WS_FIBER_UCONTEXT)
  to->from = from;
  MXCSR_SAVE(from);
  if (swapcontext(&from->uc, &to->uc) != 0)
    ws__panic(__FILE__, __LINE__, "swapcontext failed");
  MXCSR_RESTORE(from);
  ws__fiber *prev = from->from;
#else
  ws__fiber *prev = ws__fiber_swap(&from->sp, to->sp, from);
#endif
  ws__fiber_arrived(from, prev);
  return prev;
}
#endif

WS__NO_TSAN _Noreturn void ws__fiber_exit(ws__fiber *self, ws__fiber *to)
{
  ws__fiber_check(self);
  self->exited = true;
#if defined(WS__FIBER_ASAN)
  self->sp = __builtin_frame_address(0); /* how far down to clear (ws__fiber_release) */
  __sanitizer_start_switch_fiber(NULL, to->asan_bottom, to->asan_size);
#endif
#if defined(WS__FIBER_TSAN)
  __tsan_switch_to_fiber(to->tsan, 0);
#endif
#if defined(WS_FIBER_UCONTEXT)
  to->from = self;
  setcontext(&to->uc);
#else
  ws__fiber_swap(&self->sp, to->sp, self);
#endif
  ws__panic(__FILE__, __LINE__, "an exited context was resumed");
}

void ws__fiber_destroy(ws__fiber *f)
{
  if (!f->exited)
    ws__fiber_release(f);
}
