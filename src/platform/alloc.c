/* SPDX-FileCopyrightText: 2026 The wsched authors */
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
 *
 * The family ends in one replaceable pair (ws__alloc_replace, under the
 * public ws_set_allocator of api/memory.c: a user's arena, jemalloc, a
 * counting allocator in tests), which libwsched_mpi reaches through
 * ws_mem_alloc and ws_mem_free. A count of live blocks lets it refuse to
 * swap the pair while a block of the old one could still be given back to
 * the new one.
 */
#include "platform.h"

#include "wsched.h"

#include <stdalign.h>
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

/* The allocator in use (ws_set_allocator). u_alloc and u_free are NULL for
   the C library's. Written by ws__alloc_replace only, while no block is
   live (and, by its contract, while no other thread is in the library);
   read by every allocation and free. u_user is stored before the two
   functions' release stores and loaded after their acquire loads, so a
   thread that calls the user's function sees the user pointer stored with
   it (and whatever the caller prepared before ws_set_allocator). */
static _Atomic(ws_alloc_fn) u_alloc;
static _Atomic(ws_free_fn) u_free;
static _Atomic(void *) u_user;

/* Blocks allocated and not yet freed, through any allocator: what makes
   ws__alloc_replace answer WS_EBUSY. Incremented (relaxed) after each
   allocation, decremented (release) after each free returned; read
   (acquire) by ws__alloc_replace. One shared line, touched only when the
   library really allocates, which its hot paths avoid (task records come
   from caches, data/task.c). */
static _Atomic size_t live;

/* One block of the allocator in use: size bytes (0 asks for 1) aligned to
   align (a power of two), or NULL. The size handed on is a multiple of the
   alignment, at least max_align_t's: what C11 aligned_alloc wants, and what
   wsched.h promises an ws_alloc_fn. */
static void *alloc_block(size_t align, size_t size)
{
  if (align < alignof(max_align_t))
    align = alignof(max_align_t);
  if (size > SIZE_MAX - align)
    return NULL;
  size = size == 0 ? align : (size + align - 1) / align * align;
  /* Acquire: pairs with ws__alloc_replace's release store (see u_user). */
  ws_alloc_fn fn = atomic_load_explicit(&u_alloc, memory_order_acquire);
  void *p;
  if (fn == NULL)
    p = align == alignof(max_align_t) ? malloc(size) : aligned_alloc(align, size);
  else
    p = fn(atomic_load_explicit(&u_user, memory_order_relaxed), align, size); /* see u_user */
  if (p != NULL)
    atomic_fetch_add_explicit(&live, 1, memory_order_relaxed); /* a count (see live) */
  return p;
}

void *ws__malloc(size_t size)
{
  if (ws__alloc_fault_point())
    return NULL;
  return alloc_block(0, size);
}

void *ws__aligned_alloc(size_t align, size_t size)
{
  if (ws__alloc_fault_point())
    return NULL;
  return alloc_block(align, size);
}

void *ws__aligned_alloc_quiet(size_t align, size_t size)
{
  return alloc_block(align, size);
}

void *ws__malloc_quiet(size_t size)
{
  return alloc_block(0, size);
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
  if (p == NULL)
    return;
  /* Acquire: pairs with ws__alloc_replace's release store (see u_user). */
  ws_free_fn fn = atomic_load_explicit(&u_free, memory_order_acquire);
  if (fn == NULL)
    free(p);
  else
    fn(atomic_load_explicit(&u_user, memory_order_relaxed), p); /* see u_user */
  /* Release: pairs with ws__alloc_replace's acquire load; a 0 it reads
     comes after every free call has returned. */
  atomic_fetch_sub_explicit(&live, 1, memory_order_release);
}

int ws__alloc_replace(ws_alloc_fn alloc_fn, ws_free_fn free_fn, void *user)
{
  /* Acquire: pairs with ws__free's release decrement. */
  if (atomic_load_explicit(&live, memory_order_acquire) != 0)
    return WS_EBUSY; /* a block of the allocator in use would go to the new one's free */
  atomic_store_explicit(&u_user, user, memory_order_relaxed); /* published by the stores below */
  atomic_store_explicit(&u_free, free_fn, memory_order_release); /* pairs with ws__free */
  atomic_store_explicit(&u_alloc, alloc_fn, memory_order_release); /* pairs with alloc_block */
  return 0;
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
