/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The stack pool (stack.h).
 *
 * Memory. Stacks are carved from anonymous private mappings made with
 * MAP_NORESERVE (no commit charge: a 64 KiB stack that touches two pages
 * costs two pages) and MAP_STACK, and advised MADV_NOHUGEPAGE (a huge page
 * would make the first touch of one stack resident for 2 MiB worth of its
 * neighbours). The record of a stack (ws__stack) sits at its top, so a
 * stack costs no allocation; frames grow down from just below it. The
 * page size comes from sysconf: aarch64 kernels use 4, 16 or 64 KiB.
 *
 *   slab (one mapping, one VMA), stacks shifted by a page less 64 bytes:
 *     |    page 0    |  ...  |    page m    |  ...  |    page 2m   |
 *     |         | c  stack 0 ... frames rec | c  stack 1 ... rec | ...
 *                 low                         low
 *   guarded stack (one mapping split in two VMAs):
 *     | PROT_NONE page | canary ... frames rec |
 *
 * The shift puts the top of each slab stack (its record and first ~4 KiB
 * of frames) in the same page as the canary of the next: a stack whose
 * frames stay within that page (a parked task waiting in a shallow call,
 * the common case) costs one resident page and one page fault, not two
 * (one for the top, one for the canary). Page faults cost 17-22 us each on
 * this project's VM (measured with a loop touching fresh pages): with two
 * per stack, 10,000 parked sleepers spent most of their start in them. A
 * slab maps one page more than its stacks, for the last one's top.
 *
 * Mappings are counted because Linux limits them per process
 * (vm.max_map_count, 65530 by default) and a guard page costs two: the
 * mapping is split where the protection changes, even when stacks are
 * carved from one region. So:
 *   - a pool guards only the first opt.guarded stacks it maps (Folly's
 *     policy), each in a mapping of its own, and only while all pools of
 *     the process together stay within the budget (ws__stack_mapping_budget,
 *     a quarter of vm.max_map_count: the rest is the program's);
 *   - every other stack comes from a slab, and slabs double (16 stacks,
 *     then 32, ... up to 64 MiB), so n stacks take O(log n) mappings
 *     until the cap and n / (64 MiB / stride) after: 100,000 stacks of
 *     64 KiB take 64 guarded (128 mappings) plus 103 slabs: 231;
 *   - budget exhausted, a pool still makes stacks, unguarded.
 * docs/DESIGN.md has the arithmetic.
 *
 * Overflow. Every stack has a canary in its lowest 8 bytes, written when
 * the stack is handed out, checked at every switch away from a context on
 * it (fiber.c) and when it is given back. A guarded stack also has the
 * PROT_NONE page below: the fault lands in ws__stack_segv, which finds the
 * stack in a registry of guarded stacks, prints the option to raise and
 * aborts; a fault that is not ours goes to the handler it replaced. The
 * handler runs on the thread's alternate signal stack (the faulting stack
 * is full): ws__stack_thread_init gives a thread one.
 *
 * Returning memory. A pool keeps up to opt.keep free stacks resident
 * (warm: reused first, most recent first, their pages still mapped in).
 * When a stack given back makes it keep + 1, all but the keep / 2 most
 * recent are released with madvise(MADV_DONTNEED), so that a released
 * stack costs (almost) no memory, only 8 bytes in the pool's cold array
 * (its address), and gets a new record and canary when it is reused. A
 * guarded stack is released whole; a run of adjacent slab stacks from the
 * page after the first one's canary to the page before the last one's top:
 * those two pages are shared with the neighbours, which may be in use. They are released in a batch, sorted by address, adjacent
 * stacks (a slab's) in one call: each call flushes the TLB of the other
 * CPUs the process ran on, by interprocessor interrupt. In this project's
 * 2-vCPU VM, test_fiber's part many (100,000 stacks given back) spent
 * 14.5-15.8 s of system time with one call per stack (99,977 calls) and
 * 1.9-2.1 s in all with batches (6,016 calls; 3 runs each).
 * MADV_DONTNEED, not MADV_FREE: the memory leaves the process at once,
 * which is what a bound on resident memory needs (MADV_FREE keeps it
 * counted until the kernel is short of memory); the price is a
 * zero-filled page fault per page touched on reuse. Pages never touched
 * cost the kernel nothing to skip.
 */
#include "stack.h"

#include "platform.h"
#include "wsched.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(MAP_ANONYMOUS) && defined(MAP_ANON)
#define MAP_ANONYMOUS MAP_ANON
#endif
#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif
#ifndef MAP_STACK
#define MAP_STACK 0
#endif

/* Bytes at the top of each stack for its record. */
#define WS__STACK_RECORD 64
_Static_assert(sizeof(ws__stack) <= WS__STACK_RECORD, "the stack record outgrew its slot");

/* Stacks in a pool's first slab; later slabs double up to this many bytes. */
#define WS__SLAB_FIRST 16
#define WS__SLAB_MAX_BYTES ((size_t)64 << 20)
#define WS__SLAB_MIN_CAP 128

/* Guarded stacks the signal handler can find (process-wide): 64 KiB of
   zero pages until used. The budget's default allows 8191. */
#define WS__GUARD_SLOTS 8192

/* The budget when vm.max_map_count cannot be read: Linux's default / 4. */
#define WS__MAX_MAP_COUNT_DEFAULT 65530

/* --- process-wide state ------------------------------------------------------ */

static size_t ws__page; /* sysconf(_SC_PAGESIZE); written once under page_once */
static pthread_once_t page_once = PTHREAD_ONCE_INIT;
static size_t budget_default; /* written once under budget_once */
static pthread_once_t budget_once = PTHREAD_ONCE_INIT;
static _Atomic size_t budget_test; /* test hook: 0, or the budget */
static _Atomic size_t maps_total; /* mappings all pools hold; any pool's owner adds and subtracts */

/* The registry the signal handler reads: a slot holds a guarded stack or
   NULL. Pool owners claim and clear slots; the handler (any thread) scans
   them all, which is cheap on the way to abort(). */
static _Atomic(ws__stack *) guards[WS__GUARD_SLOTS];

static pthread_once_t handler_once = PTHREAD_ONCE_INIT;
static struct sigaction old_segv; /* what ws__stack_segv replaced; written once, before it runs */

static void ws__page_once(void)
{
  long pg = sysconf(_SC_PAGESIZE);
  ws__page = pg > 0 ? (size_t)pg : 4096; /* POSIX requires it; 4096 only if it lied */
}

static size_t ws__page_size(void)
{
  pthread_once(&page_once, ws__page_once);
  return ws__page;
}

static void ws__budget_once(void)
{
  size_t max = WS__MAX_MAP_COUNT_DEFAULT;
#if defined(__linux__)
  int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n > 0) {
      buf[n] = '\0';
      char *end;
      unsigned long long v = strtoull(buf, &end, 10);
      if (end != buf && v >= 64 && v <= SIZE_MAX)
        max = (size_t)v;
    }
  }
#endif
  budget_default = max / 4;
}

size_t ws__stack_mapping_budget(void)
{
  size_t t = atomic_load_explicit(&budget_test, memory_order_relaxed); /* test hook */
  if (t != 0)
    return t;
  pthread_once(&budget_once, ws__budget_once);
  return budget_default;
}

void ws__stack_set_mapping_budget(size_t budget)
{
  atomic_store_explicit(&budget_test, budget, memory_order_relaxed); /* test hook */
}

size_t ws__stack_mappings(void)
{
  return atomic_load_explicit(&maps_total, memory_order_relaxed); /* a count, orders nothing */
}

/* --- messages without stdio (the guard handler is a signal handler) ---------- */

typedef struct {
  char buf[320];
  size_t n;
} ws__msg;

static void msg_str(ws__msg *m, const char *s)
{
  while (*s != '\0' && m->n < sizeof m->buf - 1)
    m->buf[m->n++] = *s++;
}

static void msg_uint(ws__msg *m, uintmax_t v, unsigned base)
{
  char tmp[3 * sizeof v];
  size_t k = 0;
  do {
    tmp[k++] = "0123456789abcdef"[v % base];
    v /= base;
  } while (v != 0);
  if (base == 16)
    msg_str(m, "0x");
  while (k > 0 && m->n < sizeof m->buf - 1)
    m->buf[m->n++] = tmp[--k];
}

/* "wsched: stack overflow: a task stack of N bytes at 0x..<what>; raise
   <option> (now N bytes per stack)\n" to stderr, then abort. */
static _Noreturn void ws__overflow_report(const ws__stack *s, const char *what, const void *addr)
{
  ws__msg m = {.n = 0};
  const ws__stack_pool *p = s->pool;
  msg_str(&m, "wsched: stack overflow: a task stack of ");
  msg_uint(&m, s->size, 10);
  msg_str(&m, " bytes at ");
  msg_uint(&m, (uintptr_t)s->low, 16);
  msg_str(&m, what);
  if (addr != NULL) {
    msg_str(&m, " (fault at ");
    msg_uint(&m, (uintptr_t)addr, 16);
    msg_str(&m, ")");
  }
  msg_str(&m, "; raise ");
  msg_str(&m, p != NULL ? p->opt.size_option : WS__STACK_SIZE_OPTION);
  msg_str(&m, " (now ");
  msg_uint(&m, p != NULL ? p->stride : s->size, 10);
  msg_str(&m, " bytes per stack)\n");
  for (size_t off = 0; off < m.n;) {
    ssize_t w = write(STDERR_FILENO, m.buf + off, m.n - off);
    if (w <= 0 && errno != EINTR)
      break;
    if (w > 0)
      off += (size_t)w;
  }
  abort();
}

_Noreturn void ws__stack_overflow(const ws__stack *s, const char *when)
{
  ws__msg m = {.n = 0};
  msg_str(&m, " overwrote its canary, ");
  msg_str(&m, when);
  ws__overflow_report(s, m.buf, NULL);
}

/* --- the guard-page handler ---------------------------------------------------- */

static void ws__stack_segv(int sig, siginfo_t *si, void *uc)
{
  uintptr_t a = (uintptr_t)si->si_addr;
  size_t pg = ws__page;
  for (unsigned i = 0; i < WS__GUARD_SLOTS; i++) {
    /* acquire: pairs with the claim's release, so the record is readable */
    const ws__stack *s = atomic_load_explicit(&guards[i], memory_order_acquire);
    /* (a released stack's record reads as zeros until it is reused) */
    uintptr_t low = s != NULL ? (uintptr_t)s->low : 0;
    if (low > pg && a >= low - pg && a < low)
      ws__overflow_report(s, " ran into its guard page", si->si_addr);
  }
  /* Not a guard page of ours: the handler we replaced decides. */
  if (old_segv.sa_flags & SA_SIGINFO) {
    old_segv.sa_sigaction(sig, si, uc);
  } else if (old_segv.sa_handler != SIG_DFL && old_segv.sa_handler != SIG_IGN) {
    old_segv.sa_handler(sig);
  } else {
    /* The default action: restored, the faulting access runs again and
       kills the process as it would have without us. */
    sigaction(SIGSEGV, &old_segv, NULL);
  }
}

static void ws__handler_once(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = ws__stack_segv;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  ws__page_size();
  if (sigaction(SIGSEGV, NULL, &old_segv) == 0)
    sigaction(SIGSEGV, &sa, NULL);
}

/* A registry slot for s, or -1 when all are taken. Owner of s's pool. */
static int ws__guard_claim(ws__stack *s)
{
  for (int i = 0; i < WS__GUARD_SLOTS; i++) {
    ws__stack *none = NULL;
    /* release: the handler that finds s reads its record */
    if (atomic_compare_exchange_strong_explicit(&guards[i], &none, s, memory_order_release,
                                                memory_order_relaxed))
      return i;
  }
  return -1;
}

static void ws__guard_release(int slot)
{
  /* release: the handler stops looking at the stack before it is unmapped */
  atomic_store_explicit(&guards[slot], NULL, memory_order_release);
}

/* --- threads ------------------------------------------------------------------- */

static _Thread_local char *altstack; /* what ws__stack_thread_init installed */

int ws__stack_thread_init(void)
{
  /* A fault with SIGSEGV blocked kills the process without a handler:
     a pool's workers start with every signal blocked (thread.c), and the
     report needs this one. */
  sigset_t segv;
  sigemptyset(&segv);
  sigaddset(&segv, SIGSEGV);
  pthread_sigmask(SIG_UNBLOCK, &segv, NULL);
  stack_t cur;
  if (sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE))
    return 0; /* the thread has one (the program's, or a sanitizer's) */
  size_t size = 64 * 1024;
  if ((size_t)SIGSTKSZ > size) /* not a constant in glibc >= 2.34 */
    size = (size_t)SIGSTKSZ;
  char *mem = ws__malloc(size);
  if (mem == NULL)
    return WS_ENOMEM;
  stack_t st;
  memset(&st, 0, sizeof st);
  st.ss_sp = mem;
  st.ss_size = size;
  if (sigaltstack(&st, NULL) != 0) {
    ws__free(mem);
    return WS_ESYS;
  }
  altstack = mem;
  return 0;
}

void ws__stack_thread_fini(void)
{
  if (altstack == NULL)
    return;
  stack_t st;
  memset(&st, 0, sizeof st);
  st.ss_flags = SS_DISABLE;
  sigaltstack(&st, NULL);
  ws__free(altstack);
  altstack = NULL;
}

/* --- pools --------------------------------------------------------------------- */

/* The owner's update of a counter others read. */
static inline void bump(_Atomic size_t *c, long d)
{
  size_t v = atomic_load_explicit(c, memory_order_relaxed); /* single writer */
  atomic_store_explicit(c, v + (size_t)d, memory_order_relaxed); /* read relaxed by stats */
}

void ws__stack_options_init(ws__stack_options *o)
{
  memset(o, 0, sizeof *o);
  o->size = WS__STACK_SIZE_DEFAULT;
  o->guarded = WS__STACK_GUARDED_DEFAULT;
  o->keep = WS__STACK_KEEP_DEFAULT;
  o->size_option = WS__STACK_SIZE_OPTION;
}

/* The most stacks a slab holds: WS__SLAB_MAX_BYTES of them, and at least
   WS__SLAB_MIN_CAP where that fits a quarter of the address space (big
   stacks: 100,000 of 8 MiB take 790 slabs, not 12,500 mappings). */
static size_t ws__slab_cap(const ws__stack_pool *p)
{
  size_t cap = WS__SLAB_MAX_BYTES / p->stride, fits = SIZE_MAX / 4 / p->stride;
  if (cap < WS__SLAB_MIN_CAP)
    cap = WS__SLAB_MIN_CAP < fits ? WS__SLAB_MIN_CAP : fits;
  return cap > 0 ? cap : 1;
}

int ws__stack_pool_init(ws__stack_pool *p, const ws__stack_options *opt)
{
  ws__stack_options dflt;
  if (opt == NULL) {
    ws__stack_options_init(&dflt);
    opt = &dflt;
  }
  size_t page = ws__page_size();
  size_t size = opt->size != 0 ? opt->size : WS__STACK_SIZE_DEFAULT;
  if (size < WS__STACK_SIZE_MIN)
    size = WS__STACK_SIZE_MIN;
  if (size > SIZE_MAX / 4)
    return WS_EINVAL;
  memset(p, 0, sizeof *p);
  p->opt = *opt;
  p->page = page;
  p->stride = (size + page - 1) / page * page;
  p->opt.size = p->stride;
  if (p->opt.size_option == NULL)
    p->opt.size_option = WS__STACK_SIZE_OPTION;
  p->slab_stacks = WS__SLAB_FIRST;
  if (p->slab_stacks > ws__slab_cap(p))
    p->slab_stacks = ws__slab_cap(p);
  if (p->opt.guarded > 0)
    pthread_once(&handler_once, ws__handler_once);
  return 0;
}

/* A stack in the stride bytes at mem, its canary written (not counted). */
static ws__stack *ws__stack_carve(ws__stack_pool *p, char *mem, bool guarded)
{
  ws__stack *s = (ws__stack *)(void *)(mem + p->stride - WS__STACK_RECORD);
  s->low = mem;
  s->size = p->stride - WS__STACK_RECORD;
  s->next = NULL;
  s->pool = p;
  s->guarded = guarded;
  *(uint64_t *)(void *)s->low = ws__stack_canary(s->low);
  return s;
}

static void ws__map_add(ws__stack_pool *p, struct ws__stack_map *m, char *base, size_t len,
                        int slot, size_t nmaps)
{
  m->base = base;
  m->len = len;
  m->slot = slot;
  m->next = p->maps;
  p->maps = m;
  bump(&p->mappings, (long)nmaps);
  bump(&p->bytes, (long)len);
}

/* A stack with a guard page in a mapping of its own, or NULL (then the
   caller takes one from a slab): the pool has its guarded ones, the budget
   or the handler's registry is full, or the system said no. */
static ws__stack *ws__stack_new_guarded(ws__stack_pool *p)
{
  if (atomic_load_explicit(&p->guarded, memory_order_relaxed) >= p->opt.guarded)
    return NULL;
  /* relaxed: a count; two pools racing for the last slots may both
     overshoot briefly, and the loser gives its reservation back */
  size_t before = atomic_fetch_add_explicit(&maps_total, 2, memory_order_relaxed);
  if (before + 2 > ws__stack_mapping_budget()) {
    atomic_fetch_sub_explicit(&maps_total, 2, memory_order_relaxed);
    return NULL;
  }
  struct ws__stack_map *m = ws__malloc_quiet(sizeof *m);
  size_t len = p->page + p->stride;
  char *base = MAP_FAILED;
  if (m != NULL)
    base =
        mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (base != MAP_FAILED && mprotect(base + p->page, p->stride, PROT_READ | PROT_WRITE) != 0) {
    munmap(base, len);
    base = MAP_FAILED;
  }
  if (base == MAP_FAILED) {
    ws__free(m);
    atomic_fetch_sub_explicit(&maps_total, 2, memory_order_relaxed); /* a count */
    return NULL;
  }
  ws__stack *s = ws__stack_carve(p, base + p->page, true);
  int slot = ws__guard_claim(s);
  if (slot < 0) {
    munmap(base, len);
    ws__free(m);
    atomic_fetch_sub_explicit(&maps_total, 2, memory_order_relaxed); /* a count */
    return NULL;
  }
  ws__map_add(p, m, base, len, slot, 2);
  bump(&p->guarded, 1);
  bump(&p->made, 1);
  return s;
}

/* A new slab for the pool: 0 or WS_ENOMEM. */
static int ws__stack_new_slab(ws__stack_pool *p)
{
  if (ws__alloc_fault_point())
    return WS_ENOMEM;
  size_t n = p->slab_stacks;
  size_t len = n * p->stride + p->page; /* + the last stack's top page (see the top) */
  struct ws__stack_map *m = ws__malloc_quiet(sizeof *m);
  if (m == NULL)
    return WS_ENOMEM;
  char *base = mmap(NULL, len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (base == MAP_FAILED) {
    ws__free(m);
    return WS_ENOMEM;
  }
#if defined(MADV_NOHUGEPAGE)
  madvise(base, len, MADV_NOHUGEPAGE); /* advice: failure changes nothing we rely on */
#endif
  atomic_fetch_add_explicit(&maps_total, 1, memory_order_relaxed); /* a count */
  ws__map_add(p, m, base, len, -1, 1);
  p->slab_next = base;
  p->slab_end = base + n * p->stride;
  p->slab_stacks = n * 2 <= ws__slab_cap(p) ? n * 2 : ws__slab_cap(p);
  return 0;
}

int ws__stack_get(ws__stack_pool *p, ws__stack **out)
{
  ws__stack *s = p->warm;
  size_t cold_n = atomic_load_explicit(&p->cold_n, memory_order_relaxed);
  if (s != NULL) {
    p->warm = s->next;
    bump(&p->warm_n, -1);
  } else if (cold_n > 0) {
    uintptr_t e = p->cold[cold_n - 1];
    bump(&p->cold_n, -1);
    s = ws__stack_carve(p, (char *)(e & ~(uintptr_t)1), (e & 1) != 0); /* its pages were released */
  } else if ((s = ws__stack_new_guarded(p)) == NULL) {
    if (p->slab_next == p->slab_end) {
      int rc = ws__stack_new_slab(p);
      if (rc != 0)
        return rc;
    }
    /* The shift (see the top): low is 64 bytes below a page boundary. */
    s = ws__stack_carve(p, p->slab_next + p->page - WS__STACK_RECORD, false);
    p->slab_next += p->stride;
    bump(&p->made, 1);
  }
  s->next = NULL;
  bump(&p->in_use, 1);
  size_t used = atomic_load_explicit(&p->in_use, memory_order_relaxed); /* our own */
  if (used > p->peak_cur)
    p->peak_cur = used;
  *out = s;
  return 0;
}

/* Room for n more entries in the cold array: false when it cannot grow. */
static bool ws__cold_reserve(ws__stack_pool *p, size_t n)
{
  size_t have = atomic_load_explicit(&p->cold_n, memory_order_relaxed);
  if (have + n <= p->cold_cap)
    return true;
  size_t cap = p->cold_cap > 0 ? p->cold_cap : 64;
  while (cap < have + n)
    cap *= 2;
  uintptr_t *a = ws__malloc_quiet(cap * sizeof *a);
  if (a == NULL)
    return false;
  if (have > 0)
    memcpy(a, p->cold, have * sizeof *a);
  ws__free(p->cold);
  p->cold = a;
  p->cold_cap = cap;
  return true;
}

/* Releases the warm stacks after the first `keep` of the list: into the
   cold array, sorted by address, adjacent ones in one madvise. */
static void ws__stack_release(ws__stack_pool *p, size_t keep)
{
  ws__stack **link = &p->warm;
  for (size_t i = 0; i < keep && *link != NULL; i++)
    link = &(*link)->next;
  size_t n = 0;
  for (ws__stack *s = *link; s != NULL; s = s->next)
    n++;
  if (n == 0 || !ws__cold_reserve(p, n))
    return; /* no room to remember them: they stay resident */
  size_t base = atomic_load_explicit(&p->cold_n, memory_order_relaxed);
  uintptr_t *e = p->cold + base;
  size_t k = 0;
  for (ws__stack *s = *link; s != NULL; s = s->next) {
    uintptr_t v = (uintptr_t)s->low | (s->guarded ? 1 : 0);
    size_t j = k++; /* insertion sort: a batch is keep / 2 + 1 long */
    for (; j > 0 && e[j - 1] > v; j--)
      e[j] = e[j - 1];
    e[j] = v;
  }
  *link = NULL;
  bump(&p->warm_n, -(long)n);
  for (size_t i = 0; i < n;) {
    char *lo = (char *)(e[i] & ~(uintptr_t)1);
    size_t j = i + 1;
    if (e[i] & 1) {
      madvise(lo, p->stride, MADV_DONTNEED); /* guarded: its own mapping, whole */
    } else {
      /* A run of adjacent slab stacks: from the page after the first
         one's canary page to the last one's top page, excluded (both are
         shared with neighbours, see the top). */
      while (j < n && !(e[j] & 1) && (char *)e[j] == lo + (j - i) * p->stride)
        j++;
      char *from = lo + WS__STACK_RECORD; /* the page after lo's */
      madvise(from, (j - i) * p->stride - p->page, MADV_DONTNEED); /* advice, as above */
    }
    bump(&p->releases, 1);
    i = j;
  }
  bump(&p->released, (long)n);
  bump(&p->cold_n, (long)n);
}

void ws__stack_trim(ws__stack_pool *p, size_t keep)
{
  if (atomic_load_explicit(&p->warm_n, memory_order_relaxed) > keep)
    ws__stack_release(p, keep);
}

void ws__stack_scavenge(ws__stack_pool *p, size_t keep)
{
  size_t used = atomic_load_explicit(&p->in_use, memory_order_relaxed); /* our own */
  size_t peak = p->peak_cur > p->peak_prev ? p->peak_cur : p->peak_prev;
  size_t want = peak > used ? peak - used : 0;
  ws__stack_trim(p, want > keep ? want : keep);
  p->peak_prev = p->peak_cur;
  p->peak_cur = used;
}

size_t ws__stack_warm(const ws__stack_pool *p)
{
  return atomic_load_explicit(&p->warm_n, memory_order_relaxed); /* the owner's own */
}

void ws__stack_put(ws__stack_pool *p, ws__stack *s)
{
  WS__CHECK(s->pool == p);
  if (!ws__stack_canary_ok(s))
    ws__stack_overflow(s, "found when it was given back");
  bump(&p->in_use, -1);
  s->next = p->warm;
  p->warm = s;
  bump(&p->warm_n, 1);
  if (atomic_load_explicit(&p->warm_n, memory_order_relaxed) > p->opt.keep)
    ws__stack_trim(p, p->opt.keep / 2);
}

void ws__stack_pool_destroy(ws__stack_pool *p)
{
  struct ws__stack_map *m = p->maps;
  while (m != NULL) {
    struct ws__stack_map *next = m->next;
    if (m->slot >= 0)
      ws__guard_release(m->slot);
    munmap(m->base, m->len);
    ws__free(m);
    m = next;
  }
  size_t held = atomic_load_explicit(&p->mappings, memory_order_relaxed);
  atomic_fetch_sub_explicit(&maps_total, held, memory_order_relaxed); /* a count */
  ws__free(p->cold);
  p->cold = NULL;
  p->cold_cap = 0;
  p->maps = NULL;
  p->warm = NULL;
  p->slab_next = p->slab_end = NULL;
  atomic_store_explicit(&p->in_use, 0, memory_order_relaxed); /* read relaxed by stats */
  atomic_store_explicit(&p->made, 0, memory_order_relaxed);
  atomic_store_explicit(&p->guarded, 0, memory_order_relaxed);
  atomic_store_explicit(&p->warm_n, 0, memory_order_relaxed);
  atomic_store_explicit(&p->cold_n, 0, memory_order_relaxed);
  atomic_store_explicit(&p->mappings, 0, memory_order_relaxed);
  atomic_store_explicit(&p->bytes, 0, memory_order_relaxed);
}

void ws__stack_pool_stats(const ws__stack_pool *p, ws__stack_stats *out)
{
  /* relaxed: counters, each one the pool had */
  out->in_use = atomic_load_explicit(&p->in_use, memory_order_relaxed);
  out->made = atomic_load_explicit(&p->made, memory_order_relaxed);
  out->guarded = atomic_load_explicit(&p->guarded, memory_order_relaxed);
  out->warm = atomic_load_explicit(&p->warm_n, memory_order_relaxed);
  out->cold = atomic_load_explicit(&p->cold_n, memory_order_relaxed);
  out->mappings = atomic_load_explicit(&p->mappings, memory_order_relaxed);
  out->bytes = atomic_load_explicit(&p->bytes, memory_order_relaxed);
  out->released = atomic_load_explicit(&p->released, memory_order_relaxed);
  out->releases = atomic_load_explicit(&p->releases, memory_order_relaxed);
}
