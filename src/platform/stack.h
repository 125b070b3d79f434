/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Stacks for contexts that are not a thread's own (src/platform/fiber.h):
 * a pool that maps them, hands them out, takes them back, returns their
 * memory to the system past a bound, and detects overflow. The essay at the
 * top of stack.c and docs/DESIGN.md ("Stacks and context switches") give the
 * layout, the mapping budget and the arithmetic behind the defaults.
 *
 * Who may call what:
 *   - A pool (ws__stack_pool) belongs to one thread at a time, its owner,
 *     and takes no lock: ws__stack_get, ws__stack_put and
 *     ws__stack_pool_destroy are the owner's. Handing a pool to another
 *     thread needs a happens-before edge (a queue, a lock) like any plain
 *     data. A stack goes back to the pool that made it.
 *   - ws__stack_pool_stats and the process-wide ws__stack_mappings: any
 *     thread (the counters are single-writer atomics read relaxed; each
 *     is a value the pool had, the set is not a snapshot).
 *   - ws__stack_thread_init / _fini: the thread itself, on its own stack.
 *   - ws__stack_canary_ok and ws__stack_overflow: whoever runs on or owns
 *     the stack (fiber.c checks the canary at every switch away).
 */
#ifndef WS_STACK_H
#define WS_STACK_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes of memory per stack when the options say 0 (rounded up to whole
   pages): 64 KiB, 16 KiB where pointers are 32 bits (100,000 stacks of
   64 KiB would not fit the address space). docs/DESIGN.md, "Stacks and
   context switches", has the why. */
#define WS__STACK_SIZE_DEFAULT (UINTPTR_MAX > 0xffffffffu ? 64 * 1024 : 16 * 1024)
/* The smallest stack a pool makes (smaller sizes are raised to it). */
#define WS__STACK_SIZE_MIN (8 * 1024)
/* How many of a pool's stacks get a guard page: the first ones it maps. */
#define WS__STACK_GUARDED_DEFAULT 64
/* Free stacks a pool keeps resident; past that, the older half of them is
   released in one go. */
#define WS__STACK_KEEP_DEFAULT 32
/* The option an overflow message tells the user to raise, unless the
   pool's options name another: the scheduler's (core/tpark.c). */
#define WS__STACK_SIZE_OPTION "ws_options_t.park_stack_size"

typedef struct ws__stack_pool ws__stack_pool;

/* One stack. The record lives in the stack's own memory, above its
   highest usable byte, so a stack costs no allocation of its own. */
typedef struct ws__stack {
  char *low; /* lowest usable byte, page aligned; the canary is its first 8 bytes */
  size_t size; /* usable bytes, from low up to this record (its address is the top) */
  struct ws__stack *next; /* in the pool's list of resident free stacks; owner only */
  ws__stack_pool *pool; /* the pool that made it (its options name the size option) */
  bool guarded; /* a PROT_NONE page lies just below low */
} ws__stack;

/* The highest address of a stack plus one: where a context starts, 16-byte
   aligned. */
static inline char *ws__stack_top(const ws__stack *s)
{
  return (char *)s;
}

typedef struct ws__stack_options {
  /* Bytes of memory per stack, without the guard page; rounded up to whole
     pages, at least WS__STACK_SIZE_MIN. 0: WS__STACK_SIZE_DEFAULT. The
     usable part is this less the record (64 bytes) and the canary (8). */
  size_t size;
  /* How many of the stacks this pool maps first get a guard page, as long
     as the process-wide mapping budget allows (each costs two mappings).
     0: none. ws__stack_options_init sets WS__STACK_GUARDED_DEFAULT. */
  unsigned guarded;
  /* Free stacks kept resident. A stack given back when as many are free
     and resident makes the pool release all but the keep / 2 most recently
     given back (madvise, adjacent stacks in one call), so releases come in
     batches. ws__stack_options_init sets WS__STACK_KEEP_DEFAULT. */
  unsigned keep;
  /* Named by the overflow message as the option to raise. NULL:
     WS__STACK_SIZE_OPTION. The string must outlive the pool. */
  const char *size_option;
} ws__stack_options;

void ws__stack_options_init(ws__stack_options *o);

/* One mapping of a pool: a slab, or a guarded stack with its guard page.
   For destroy (and tests, which find them in /proc/self/maps). */
struct ws__stack_map {
  char *base;
  size_t len;
  int slot; /* a guarded stack's slot in the guard-page handler's registry, else -1 */
  struct ws__stack_map *next;
};

/* Counters of one pool. Written only by the owner, with relaxed atomic
   stores; any thread may read them (ws__stack_pool_stats). */
struct ws__stack_pool {
  ws__stack_options opt; /* size rounded, size_option filled in; read-only */
  size_t stride; /* bytes per stack: opt.size rounded up to pages */
  size_t page; /* sysconf(_SC_PAGESIZE) */
  ws__stack *warm; /* free stacks whose memory is resident, most recent first; owner only */
  /* the most stacks in use at once since the last ws__stack_scavenge, and
     in the period before it; owner only */
  size_t peak_cur, peak_prev;
  uintptr_t *cold; /* free stacks released whole, record included: their low
                      addresses, bit 0 set for a guarded one; owner only */
  size_t cold_cap; /* entries cold has room for; owner only */
  char *slab_next, *slab_end; /* the unused part of the newest slab; owner only */
  size_t slab_stacks; /* stacks in the next slab (doubles up to a cap); owner only */
  struct ws__stack_map *maps; /* every mapping, for destroy; owner only */
  /* the statistics: owner writes (relaxed store), anyone reads (relaxed) */
  _Atomic size_t in_use; /* handed out by get and not yet put back */
  _Atomic size_t made; /* carved from mappings: in use + free */
  _Atomic size_t guarded; /* of those, with a guard page */
  _Atomic size_t warm_n; /* free and resident */
  _Atomic size_t cold_n; /* free and released (the entries of cold) */
  _Atomic size_t mappings; /* mappings this pool holds: 2 per guarded stack, 1 per slab */
  _Atomic size_t bytes; /* bytes of address space those mappings span */
  _Atomic size_t released; /* stacks released, in all */
  _Atomic size_t releases; /* madvise calls that released them */
};

typedef struct ws__stack_stats {
  size_t in_use, made, guarded, warm, cold, mappings, bytes, released, releases;
} ws__stack_stats;

/* Sets up an empty pool (maps nothing yet). opt NULL: the defaults. Returns
   0, or WS_EINVAL for a size that overflows. Installs the guard-page
   SIGSEGV handler the first time a pool with guards is made (see stack.c:
   it chains to the handler it replaces). */
int ws__stack_pool_init(ws__stack_pool *p, const ws__stack_options *opt);

/* Unmaps every stack of the pool, free or not: no context may run on one
   of them any more, and none may be put back after. Owner only. */
void ws__stack_pool_destroy(ws__stack_pool *p);

/* A stack with an intact canary: a free one (the most recently given back
   first), else a new one (guarded while the pool's guard count and the
   budget allow). Returns 0, or WS_ENOMEM when no memory or mapping can be
   had (nothing changed). Owner only. */
int ws__stack_get(ws__stack_pool *p, ws__stack **out);

/* Gives a stack back: no context may run on it any more. Checks its canary
   (an overflow since the last switch aborts here with the message) and
   keeps it resident; if more than opt.keep free stacks are then resident,
   releases all but the opt.keep / 2 most recently given back. Owner only. */
void ws__stack_put(ws__stack_pool *p, ws__stack *s);

/* Releases the pool's free resident stacks beyond the `keep` most recently
   given back (nothing if there are not more). Owner only. */
void ws__stack_trim(ws__stack_pool *p, size_t keep);

/* Called once per period: keeps resident as many free stacks as the
   pool's peak demand (the most in use at once in this period or the one
   before) needs beyond those in use now, at least `keep`, and releases
   the others (the least recently given back). So a demand that comes
   back within a period finds its stacks warm, and an idle pool's stacks
   go back within two periods. Owner only. */
void ws__stack_scavenge(ws__stack_pool *p, size_t keep);

/* Free resident stacks now (a relaxed read of the counter). Owner only. */
size_t ws__stack_warm(const ws__stack_pool *p);

/* The pool's counters. Any thread. */
void ws__stack_pool_stats(const ws__stack_pool *p, ws__stack_stats *out);

/* Mappings all pools of the process hold, and the most they may hold:
   vm.max_map_count / 4 (16382 under Linux's default 65530) unless a test
   set another. A guard page is only added while it fits. Any thread. */
size_t ws__stack_mappings(void);
size_t ws__stack_mapping_budget(void);
/* Tests only: the budget from now on (0: back to the default). */
void ws__stack_set_mapping_budget(size_t budget);

/* The value the canary of a stack at `low` holds (an odd pattern mixed
   with the address, so a stack copied elsewhere does not match). */
static inline uint64_t ws__stack_canary(const char *low)
{
  return UINT64_C(0x5753f1b3a7c4d9e5) ^ (uint64_t)(uintptr_t)low;
}

/* Whether the lowest 8 bytes of s still hold its canary. */
static inline bool ws__stack_canary_ok(const ws__stack *s)
{
  return *(const uint64_t *)(const void *)s->low == ws__stack_canary(s->low);
}

/* The canary of s is overwritten: prints "wsched: stack overflow: ...;
   raise <size option>" (without using much stack) and aborts. `when` says
   where it was found ("at a context switch"). */
_Noreturn void ws__stack_overflow(const ws__stack *s, const char *when);

/* Gives the calling thread an alternate signal stack, unless it has one,
   and unblocks SIGSEGV for it,
   so that the guard-page handler can report an overflow (it cannot run on
   the stack that overflowed). Every thread that runs contexts on guarded
   stacks calls it once, before; without it a guard-page overflow kills
   the process with a plain SIGSEGV. Returns 0, WS_ENOMEM, or WS_ESYS
   (sigaltstack refused). */
int ws__stack_thread_init(void);
/* Removes and frees what ws__stack_thread_init installed (nothing if the
   thread had its own). Before the thread ends. */
void ws__stack_thread_fini(void);

#endif /* WS_STACK_H */
