/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Execution contexts and the switch between them: the foundation under
 * parked tasks (issue #31). A context is either a thread's own (the stack
 * it runs on, made with ws__fiber_init_thread) or one made on a pooled
 * stack (src/platform/stack.h) with ws__fiber_make. ws__fiber_switch
 * suspends the running context and resumes another on the same thread;
 * ws__fiber_exit leaves a made context for the last time.
 *
 * Two backends, the same API (CMake picks one, docs/DESIGN.md "Stacks and
 * context switches"):
 *   asm       fiber_x86_64.S (System V) or fiber_aarch64.S (AAPCS64): the
 *             callee-saved registers, the stack pointer and the FP control
 *             state (MXCSR and the x87 control word; FPCR) on the stack of
 *             the context being left. Linux x86-64 and aarch64.
 *   ucontext  getcontext/makecontext/swapcontext: the posix platform
 *             (-DWSCHED_PLATFORM=posix) and every other architecture
 *             (CMake defines WS_FIBER_UCONTEXT for the whole build, so a
 *             test sees the same struct as the library).
 *
 * The annotations that keep AddressSanitizer and ThreadSanitizer seeing
 * through a switch are made here (fiber.c), in every build where they are
 * compiled in: callers do nothing.
 *
 * Who may call what: every function runs on the thread that runs the
 * contexts it names, and a context runs on one thread at a time. A
 * suspended context may be resumed by another thread once a happens-before
 * edge (a queue, a lock) orders its suspension before the resume; what
 * the code running in it may then assume about thread-local storage is the
 * scheduler's business (docs/DESIGN.md).
 */
#ifndef WS_FIBER_H
#define WS_FIBER_H

#include "stack.h"

#include <stdbool.h>
#include <stddef.h>

#if defined(WS_FIBER_UCONTEXT)
#include <ucontext.h>
#elif !defined(__x86_64__) && !defined(__aarch64__)
#error "no assembly context switch for this architecture: CMake should define WS_FIBER_UCONTEXT"
#endif

/* Whether this translation unit is compiled with AddressSanitizer or
   ThreadSanitizer (gcc says __SANITIZE_*__, clang __has_feature). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WS__FIBER_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define WS__FIBER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(WS__FIBER_ASAN)
#define WS__FIBER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(WS__FIBER_TSAN)
#define WS__FIBER_TSAN 1
#endif

/* ws__fiber_switch is inline (below) where nothing goes with the switch
   but the canary check: the asm backend without sanitizers. An out-of-line
   wrapper's return after the switch goes to another context's caller than
   the one the return predictor expects, a misprediction on every switch:
   16.5 ns a switch out of line against 6.0 inline, in bench/fiberswitch on
   this project's VM. */
#if !defined(WS_FIBER_UCONTEXT) && !defined(WS__FIBER_ASAN) && !defined(WS__FIBER_TSAN)
#define WS__FIBER_SWITCH_INLINE 1
#endif

typedef struct ws__fiber ws__fiber;

/* What a made context runs first: fn(arg, from), from being the context
   that switched to it. It must never return: it ends in ws__fiber_exit. */
typedef void ws__fiber_fn(void *arg, ws__fiber *from);

/* Storage the caller provides (a task record, an array); nothing in it is
   for the caller to read except where a function says so. */
struct ws__fiber {
  void *sp; /* asm: while suspended, where ws__fiber_swap saved its registers */
  ws__stack *stack; /* NULL for a thread's own context */
  ws__fiber_fn *fn; /* made contexts: what runs first, and its argument */
  void *arg;
  bool exited; /* set by ws__fiber_exit; the context resumed next releases it */
  /* Sanitizer state (unused when they are not compiled in): */
  void *asan_fake; /* ASan: this context's fake stack while it is suspended */
  const void *asan_bottom; /* ASan: its stack's lowest address and size */
  size_t asan_size;
  void *tsan; /* TSan: its fiber */
#if defined(WS_FIBER_UCONTEXT)
  ws__fiber *from; /* the context that last switched to this one */
  ucontext_t uc; /* while suspended: its registers */
#if defined(__i386__)
  unsigned mxcsr; /* while suspended: its MXCSR, which glibc's i386 context lacks */
#endif
#endif
};

/* Makes f the context of the calling thread on the stack it runs on now,
   so that it can switch to made contexts and be switched back to. */
void ws__fiber_init_thread(ws__fiber *f);

/* Makes f a new context on stack s (which nothing else runs on) that calls
   fn(arg, from) when first switched to. Its FP control state (rounding,
   flush-to-zero, exception masks) starts as the caller's at this call, as
   a new thread inherits its creator's. s holds nothing else while f lives:
   fn's frames start at its top. */
void ws__fiber_make(ws__fiber *f, ws__stack *s, ws__fiber_fn *fn, void *arg);

/* Suspends the running context `from` and resumes `to` (suspended, or made
   and not started), checking first that from's stack canary is intact
   (ws__stack_overflow otherwise). Returns when a context switches back to
   `from`: the context that did (which may have exited: its stack is free
   from the moment this returns). */
#if !defined(WS__FIBER_SWITCH_INLINE)
ws__fiber *ws__fiber_switch(ws__fiber *from, ws__fiber *to);
#endif

/* Leaves the running made context `self` for the last time and resumes
   `to`, whose switch returns self with self->exited set. Nothing runs on
   self's stack after this, so that switch's caller may give the stack
   back or make a new context on it at once. */
_Noreturn void ws__fiber_exit(ws__fiber *self, ws__fiber *to);

/* Releases what f holds besides its stack (sanitizer state) when it will
   never run again: made and never started, or suspended for good. Not for
   the running context; nothing to do (but harmless) after an exit, which
   releases itself. */
void ws__fiber_destroy(ws__fiber *f);

#if !defined(WS_FIBER_UCONTEXT)
/* The assembly (fiber_<arch>.S), for fiber.c and tests only. */

/* Saves the callee-saved registers and FP control state on the running
   stack, stores the stack pointer in *save_sp, switches to the stack at
   to_sp, restores what is saved there and returns `pass` there (to the
   ws__fiber_swap call that saved it, or into a prepared entry). */
void *ws__fiber_swap(void **save_sp, void *to_sp, void *pass);

/* Writes below `top` (16-byte aligned) a frame that ws__fiber_swap
   resumes as a call of main(pass, arg), pass being the value given to the
   swap, with the caller's FP control state. Returns its stack pointer. */
void *ws__fiber_prepare(char *top, void (*main)(void *pass, void *arg), void *arg);
#endif

#if defined(WS__FIBER_SWITCH_INLINE)
static inline ws__fiber *ws__fiber_switch(ws__fiber *from, ws__fiber *to)
{
  if (from->stack != NULL && __builtin_expect(!ws__stack_canary_ok(from->stack), 0))
    ws__stack_overflow(from->stack, "found at a switch away from it");
  /* an exited context that this returns needs no release: no sanitizer */
  return (ws__fiber *)ws__fiber_swap(&from->sp, to->sp, from);
}
#endif

#endif /* WS_FIBER_H */
