/* SPDX-License-Identifier: MIT */
/*
 * The one allocator family of the library (libuv's uv__malloc family is the
 * model) and the two ways the library stops a process: a broken internal
 * invariant (ws__panic) and a contract the caller broke (ws__misuse).
 *
 * Every allocation of the library goes through this family, and every block
 * is given back with ws__free. ws__malloc and ws__aligned_alloc obey the
 * fault-injection hook of the tests (ws__alloc_fault), so that
 * test_allocsweep can fail the k-th allocation for every k. The _quiet
 * variants never fail on purpose. They serve allocations whose failure is
 * not a failure of the call that makes them (cpu.c: reading cgroup files
 * only loses the CPU cap), and task records, whose allocation is a fault
 * point whether the record comes from a cache or from memory (task.c asks
 * ws__alloc_fault_point itself). ws__sys_fault does the same for the
 * system calls that the platform layer lets tests fail (platform.h).
 */
#include "platform.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fault injection (tests only). fault_first counts down to the failing
   allocation; then every fault_every-th fails. */
static _Atomic long fault_first;
static _Atomic long fault_every;
static _Atomic long fault_count;

void ws__alloc_fault(long first, long every)
{
  /* Relaxed: the tests arm the hook before starting the threads that allocate. */
  atomic_store_explicit(&fault_every, every, memory_order_relaxed);
  atomic_store_explicit(&fault_count, 0, memory_order_relaxed);
  atomic_store_explicit(&fault_first, first, memory_order_relaxed);
}

bool ws__alloc_fault_point(void)
{
  long first = atomic_load_explicit(&fault_first, memory_order_relaxed); /* test hook */
  if (__builtin_expect(first == 0, 1))
    return false;
  long n = atomic_fetch_add_explicit(&fault_count, 1, memory_order_relaxed) + 1;
  if (n < first)
    return false;
  if (n == first)
    return true;
  long every = atomic_load_explicit(&fault_every, memory_order_relaxed); /* test hook */
  return every > 0 && (n - first) % every == 0;
}

/* System-call faults (tests only): per operation, the calls left to fail
   and their errno. */
static _Atomic long sys_fault_left[WS__SYS_NOPS];
static _Atomic int sys_fault_err[WS__SYS_NOPS];

void ws__sys_fault(ws__sysop op, int err, long count)
{
  /* Relaxed: the tests arm the hook before the calls it fails. */
  atomic_store_explicit(&sys_fault_err[op], err, memory_order_relaxed);
  atomic_store_explicit(&sys_fault_left[op], count, memory_order_relaxed);
}

int ws__sys_fault_point(ws__sysop op)
{
  /* Relaxed: a test hook, as fault_first. */
  if (__builtin_expect(atomic_load_explicit(&sys_fault_left[op], memory_order_relaxed) == 0, 1))
    return 0;
  if (atomic_fetch_sub_explicit(&sys_fault_left[op], 1, memory_order_relaxed) <= 0) {
    atomic_fetch_add_explicit(&sys_fault_left[op], 1, memory_order_relaxed); /* raced to 0 */
    return 0;
  }
  return atomic_load_explicit(&sys_fault_err[op], memory_order_relaxed);
}

void *ws__malloc(size_t size)
{
  if (ws__alloc_fault_point())
    return NULL;
  return malloc(size);
}

void *ws__aligned_alloc(size_t align, size_t size)
{
  if (ws__alloc_fault_point())
    return NULL;
  return ws__aligned_alloc_quiet(align, size);
}

void *ws__aligned_alloc_quiet(size_t align, size_t size)
{
  size = (size + align - 1) / align * align; /* aligned_alloc wants a multiple */
  return aligned_alloc(align, size);
}

void *ws__malloc_quiet(size_t size)
{
  return malloc(size);
}

char *ws__strdup_quiet(const char *s)
{
  size_t n = strlen(s) + 1;
  char *d = ws__malloc_quiet(n);
  if (d != NULL)
    memcpy(d, s, n);
  return d;
}

void ws__free(void *p)
{
  free(p);
}

_Noreturn void ws__misuse(const char *what)
{
  fprintf(stderr, "wsched: misuse: %s\n", what);
  fflush(stderr);
  abort();
}

_Noreturn void ws__panic(const char *file, int line, const char *what)
{
  fprintf(stderr, "wsched: internal invariant broken at %s:%d: %s\n", file, line, what);
  fflush(stderr);
  abort();
}
