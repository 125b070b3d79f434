/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test of the context switch and the stack pool
 * (src/platform/fiber.h, src/platform/stack.h), under every backend (asm,
 * ucontext) and sanitizer the build has. Counts, never timings:
 *   pingpong  — 10^6 round trips between the thread's context and a made
 *               one, each side checking 32 locals on its own stack after
 *               every switch; a ring of three checks who switched to whom.
 *   registers — 16 values live across each switch in compiled code on both
 *               sides; with the asm backend also every callee-saved
 *               register, set to a pattern by tests/fiber_regs_<arch>.S,
 *               checked after a round trip to a context that overwrote them
 *               all (x86-64: rbx rbp r12-r15; aarch64: x19-x29 d8-d15).
 *   fpenv     — the FP control state is each context's own: rounding mode,
 *               MXCSR (x86-64) and the x87 control word separately, FPCR
 *               (aarch64); a made context starts with its creator's state
 *               at the time it was made.
 *   many      — 100,000 contexts alive at once, each parked in the middle
 *               of a function, then all resumed to finish: their locals
 *               intact, the mappings /proc/self/maps shows grow by no more
 *               than the pool says it made (guards on the first 64 only),
 *               the process total stays far under vm.max_map_count, and
 *               the resident memory per parked context is printed.
 *   reuse     — 10^5 contexts made, run and exited one after another on
 *               one stack (what an exit releases, the sanitizers' fibers
 *               and shadow, does not pile up).
 *   release   — stacks given back past the pool's bound go back to the
 *               system (their pages read as zero again) and are reused
 *               last, with a fresh canary.
 *   scavenge  — ws__stack_scavenge keeps the free stacks the peak demand
 *               of the current or the previous period needs, and gives
 *               the others back (counted, step by step).
 *   budget    — with the process-wide mapping budget nearly used up, a
 *               pool guards only what fits and still hands out stacks.
 *   nomem     — a refused slab gives WS_ENOMEM and changes nothing.
 *   migrate   — a context parked by one thread is resumed by another.
 *   overflow_canary, overflow_guard — a frame too big for an unguarded
 *               stack overwrites its canary, and a runaway recursion hits
 *               the guard page of a guarded one: in a child process, which
 *               must abort with the message that names the option to raise.
 * Under TSan, every switch also checks that TSan's current fiber is the
 * resumed context's. Run only when named, each skipped (77) in a build
 * without its sanitizer:
 *   asan_report — an overflow of a local array in a context: ASan names
 *               the frame (it knows the context's stack, from the
 *               annotations).
 *   tsan_race — two contexts on two threads race: TSan reports it, in the
 *               context's function.
 */
#include "test.h"

#include "fiber.h"
#include "platform.h"
#include "stack.h"

#include <fenv.h>
#include <limits.h>
#include <sys/resource.h>
#if defined(WS__FIBER_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

#define SCALE(n) ((n) / TEST_SCALE_DIV)

/* --- helpers ------------------------------------------------------------------- */

/* Under TSan: the fiber TSan thinks is running is f's (the annotation of
   the last switch). 1 if not, else 0; always 0 without TSan. */
static long tsan_wrong(const ws__fiber *f)
{
#if defined(WS__FIBER_TSAN)
  return __tsan_get_current_fiber() != f->tsan;
#else
  (void)f;
  return 0;
#endif
}

/* Lines of /proc/self/maps: the process's mappings (VMAs). -1 without /proc. */
static long count_maps(void)
{
  FILE *f = fopen("/proc/self/maps", "r");
  if (f == NULL)
    return -1;
  long n = 0;
  int c;
  while ((c = fgetc(f)) != EOF)
    n += c == '\n';
  fclose(f);
  return n;
}

/* VmRSS of /proc/self/status in bytes, -1 without it. */
static long vm_rss(void)
{
  FILE *f = fopen("/proc/self/status", "r");
  if (f == NULL)
    return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
      break;
  fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

/* Lines of /proc/self/maps inside the mappings of pool p: the VMAs its
   stacks take (the kernel may merge adjacent ones, never split them more
   than the guard pages do). -1 without /proc. */
static long count_maps_in(const ws__stack_pool *p)
{
  FILE *f = fopen("/proc/self/maps", "r");
  if (f == NULL)
    return -1;
  long n = 0;
  char line[512];
  unsigned long lo, hi;
  while (fgets(line, sizeof line, f) != NULL) {
    if (sscanf(line, "%lx-%lx", &lo, &hi) != 2)
      continue;
    for (const struct ws__stack_map *m = p->maps; m != NULL; m = m->next)
      if ((uintptr_t)m->base < hi && lo < (uintptr_t)m->base + m->len) {
        n++;
        break;
      }
  }
  fclose(f);
  return n;
}

static long max_map_count(void)
{
  FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
  long v = -1;
  if (f != NULL) {
    if (fscanf(f, "%ld", &v) != 1)
      v = -1;
    fclose(f);
  }
  return v;
}

static ws__stack_pool pool;

static void pool_init(unsigned guarded, unsigned keep)
{
  ws__stack_options o;
  ws__stack_options_init(&o);
  o.guarded = guarded;
  o.keep = keep;
  ASSERT_OK(ws__stack_pool_init(&pool, &o));
}

static ws__stack *stack_get(void)
{
  ws__stack *s;
  ASSERT_OK(ws__stack_get(&pool, &s));
  ASSERT(ws__stack_canary_ok(s));
  return s;
}

/* 32 locals that depend on where they live and on a round number: a
   frame whose memory another context overwrote fails the check. */
#define NLOCAL 32

static void locals_fill(volatile uint64_t *v, uint64_t round)
{
  for (int i = 0; i < NLOCAL; i++)
    v[i] = ((uint64_t)(uintptr_t)&v[i] * 0x9E3779B97F4A7C15ULL) ^ (round * 131 + (uint64_t)i);
}

static long locals_bad(const volatile uint64_t *v, uint64_t round)
{
  long bad = 0;
  for (int i = 0; i < NLOCAL; i++)
    bad += v[i] !=
           (((uint64_t)(uintptr_t)&v[i] * 0x9E3779B97F4A7C15ULL) ^ (round * 131 + (uint64_t)i));
  return bad;
}

/* --- pingpong ------------------------------------------------------------------ */

#define PINGPONG_ROUNDS 1000000

static ws__fiber main_f, ping_f;
static long ping_bad, ping_rounds, ping_wrong_from;

static void ping_body(void *arg, ws__fiber *from)
{
  (void)arg;
  volatile uint64_t mine[NLOCAL];
  if (from != &main_f)
    ping_wrong_from++;
  for (uint64_t r = 0;; r++) {
    locals_fill(mine, r);
    ws__fiber *back = ws__fiber_switch(&ping_f, &main_f);
    ping_wrong_from += (back != &main_f) + tsan_wrong(&ping_f);
    ping_bad += locals_bad(mine, r);
    ping_rounds++;
    if (r + 1 == PINGPONG_ROUNDS)
      break;
  }
  ws__fiber_exit(&ping_f, &main_f);
}

/* A ring main -> a -> b -> main: each switch returns the one before. */
static ws__fiber ring_f[2];
static long ring_wrong, ring_laps;

static void ring_body(void *arg, ws__fiber *from)
{
  int me = (int)(intptr_t)arg;
  ws__fiber *expect_from = me == 0 ? &main_f : &ring_f[0];
  ws__fiber *next = me == 0 ? &ring_f[1] : &main_f;
  ring_wrong += from != expect_from;
  for (int lap = 0; lap < 1000; lap++) {
    ws__fiber *got = ws__fiber_switch(&ring_f[me], next);
    /* after the first lap, a is resumed by main, b by a */
    ring_wrong += got != expect_from;
  }
  ws__fiber_exit(&ring_f[me], next);
}

static void part_pingpong(void)
{
  pool_init(WS__STACK_GUARDED_DEFAULT, WS__STACK_KEEP_DEFAULT);
  ws__fiber_init_thread(&main_f);
  ws__stack *s = stack_get();
  ws__fiber_make(&ping_f, s, ping_body, NULL);
  volatile uint64_t mine[NLOCAL];
  long bad = 0, wrong = 0;
  for (uint64_t r = 0;; r++) {
    locals_fill(mine, r + 7);
    ws__fiber *back = ws__fiber_switch(&main_f, &ping_f);
    bad += locals_bad(mine, r + 7) + tsan_wrong(&main_f);
    if (back->exited)
      break;
    wrong += back != &ping_f;
  }
  ASSERT_EQ(ping_rounds, PINGPONG_ROUNDS);
  ASSERT_EQ(bad, 0);
  ASSERT_EQ(ping_bad, 0);
  ASSERT_EQ(wrong, 0);
  ASSERT_EQ(ping_wrong_from, 0);
  ws__stack_put(&pool, s);
  fprintf(stderr, "pingpong: %d round trips (%d switches), 2 x %d locals checked after each\n",
          PINGPONG_ROUNDS, 2 * PINGPONG_ROUNDS, NLOCAL);

  ws__stack *a = stack_get(), *b = stack_get();
  ws__fiber_make(&ring_f[0], a, ring_body, (void *)(intptr_t)0);
  ws__fiber_make(&ring_f[1], b, ring_body, (void *)(intptr_t)1);
  for (;;) {
    ws__fiber *got = ws__fiber_switch(&main_f, &ring_f[0]);
    ring_wrong += got != &ring_f[1];
    if (got->exited)
      break;
    ring_laps++;
  }
  /* a exited into b, which got a back as an exited context and went on */
  ASSERT(ring_f[0].exited && ring_f[1].exited);
  ASSERT_EQ(ring_laps, 1000);
  ASSERT_EQ(ring_wrong, 0);
  ws__stack_put(&pool, a);
  ws__stack_put(&pool, b);
  ws__stack_pool_destroy(&pool);
}

/* --- registers ----------------------------------------------------------------- */

/* 16 values live across a switch: the compiler keeps some in callee-saved
   registers and the other side's code uses those registers for its own. */
static uint64_t live16(ws__fiber *self, ws__fiber *other, uint64_t seed, int rounds, bool do_switch)
{
  uint64_t a = seed, b = seed * 3 + 1, c = seed ^ 0x55, d = seed + 99, e = seed * 7, f = ~seed,
           g = seed << 3, h = seed >> 2, i = seed * 11 + 5, j = seed ^ 0xf0f0, k = seed + 12345,
           l = seed * 13, m = seed - 77, n = seed * 17 + 3, o = seed ^ 0xabcdef, q = seed * 19;
  for (int r = 0; r < rounds; r++) {
    if (do_switch)
      ws__fiber_switch(self, other);
    a += b ^ q;
    b += c * 3;
    c ^= d + r;
    d += e >> 1;
    e ^= f * 5;
    f += g ^ h;
    g += h + i;
    h ^= i << 2;
    i += j * 7;
    j ^= k + l;
    k += l ^ m;
    l ^= m * 9;
    m += n ^ o;
    n ^= o + a;
    o += q * 11;
    q ^= a + r;
  }
  return a ^ b ^ c ^ d ^ e ^ f ^ g ^ h ^ i ^ j ^ k ^ l ^ m ^ n ^ o ^ q;
}

#define LIVE_ROUNDS 1000
static ws__fiber regs_f;
static uint64_t regs_other_sum;

static void regs_body(void *arg, ws__fiber *from)
{
  (void)arg;
  regs_other_sum = live16(&regs_f, from, 0xdeadbeefcafeULL, LIVE_ROUNDS, true);
  ws__fiber_exit(&regs_f, from);
}

#if !defined(WS_FIBER_UCONTEXT)
/* tests/fiber_regs_<arch>.S: sets every callee-saved register to a
   pattern, swaps to to_sp, and on return gives the mask of the registers
   that came back changed (bit i: the i-th of x86-64 rbx rbp r12 r13 r14
   r15; aarch64 x19..x29 then d8..d15). */
uint64_t ws_test_regs_swap(void **save_sp, void *to_sp);
/* The other side, run as a prepared context's main: forever, overwrites
   every callee-saved register and swaps back to sps[0], saving in sps[1]. */
void ws_test_regs_body(void *pass, void *sps);
#if defined(__x86_64__)
#define NREGS 6
static const char *const reg_names[] = {"rbx", "rbp", "r12", "r13", "r14", "r15"};
#else
#define NREGS 19
static const char *const reg_names[] = {"x19", "x20", "x21", "x22", "x23", "x24", "x25",
                                        "x26", "x27", "x28", "x29", "d8",  "d9",  "d10",
                                        "d11", "d12", "d13", "d14", "d15"};
#endif
#endif

static void part_registers(void)
{
  pool_init(WS__STACK_GUARDED_DEFAULT, WS__STACK_KEEP_DEFAULT);
  ws__fiber_init_thread(&main_f);
  ws__stack *s = stack_get();
#if !defined(WS_FIBER_UCONTEXT)
  /* Raw swaps between assembly on both sides: no compiled code between
     the patterns and the checks (and none a sanitizer instruments). */
  void *sps[2];
  sps[1] = ws__fiber_prepare(ws__stack_top(s), ws_test_regs_body, sps);
  uint64_t seen = 0;
  for (int r = 0; r < 1000; r++)
    seen |= ws_test_regs_swap(&sps[0], sps[1]);
  for (int r = 0; r < NREGS; r++)
    if (seen & (UINT64_C(1) << r))
      fprintf(stderr, "registers: %s not preserved across ws__fiber_swap\n", reg_names[r]);
  ASSERT_EQ(seen, 0);
  fprintf(stderr, "registers: all %d callee-saved registers intact across 1000 raw round trips\n",
          NREGS);
#endif
  /* Compiled code on both sides, through ws__fiber_switch. */
  ws__fiber_make(&regs_f, s, regs_body, NULL);
  uint64_t mine = live16(&main_f, &regs_f, 0x1234567ULL, LIVE_ROUNDS, true);
  /* the other side has one more switch: its exit */
  ws__fiber *last = ws__fiber_switch(&main_f, &regs_f);
  ASSERT(last == &regs_f && last->exited);
  ASSERT_EQ(mine, live16(NULL, NULL, 0x1234567ULL, LIVE_ROUNDS, false));
  ASSERT_EQ(regs_other_sum, live16(NULL, NULL, 0xdeadbeefcafeULL, LIVE_ROUNDS, false));
  fprintf(stderr, "registers: 16 live values intact across %d switches on each side\n",
          LIVE_ROUNDS);
  ws__stack_put(&pool, s);
  ws__stack_pool_destroy(&pool);
}

/* --- fpenv --------------------------------------------------------------------- */

/* The FP control state beyond the rounding mode that fenv.h reads:
   x86-64: MXCSR (whose rounding fesetround sets too) and the x87 control
   word separately; aarch64: FPCR. */
typedef struct {
  uint32_t mxcsr, fpcr;
  uint16_t x87cw;
} fpctl;

static fpctl fp_get(void)
{
  fpctl c = {0, 0, 0};
#if defined(__x86_64__) || defined(__i386__)
  __asm__ __volatile__("stmxcsr %0" : "=m"(c.mxcsr));
  __asm__ __volatile__("fnstcw %0" : "=m"(c.x87cw));
#elif defined(__aarch64__)
  uint64_t v;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(v));
  c.fpcr = (uint32_t)v;
#endif
  return c;
}

static void fp_set(fpctl c)
{
#if defined(__x86_64__) || defined(__i386__)
  __asm__ __volatile__("ldmxcsr %0" : : "m"(c.mxcsr));
  __asm__ __volatile__("fldcw %0" : : "m"(c.x87cw));
#elif defined(__aarch64__)
  uint64_t v = c.fpcr;
  __asm__ __volatile__("msr fpcr, %0" : : "r"(v));
#else
  (void)c;
#endif
}

/* A state unlike the default in every part the switch saves. */
static fpctl fp_odd(fpctl c, int which)
{
#if defined(__x86_64__) || defined(__i386__)
  /* MXCSR: flush-to-zero (bit 15) or denormals-are-zero (bit 6); x87
     precision control (bits 8-9) single or extended-less (double). */
  c.mxcsr |= which == 1 ? 0x8000u : 0x0040u;
  c.x87cw = (uint16_t)((c.x87cw & ~0x0300u) | (which == 1 ? 0x0000u : 0x0200u));
#elif defined(__aarch64__)
  /* FPCR: flush-to-zero (bit 24) or default NaN (bit 25). */
  c.fpcr |= which == 1 ? (1u << 24) : (1u << 25);
#else
  (void)which;
#endif
  return c;
}

/* Equal control state: MXCSR's status flags (bits 0-5) left out, which any
   FP operation (a sanitizer's runtime's included) may raise. */
static bool fp_eq(fpctl a, fpctl b)
{
  return (a.mxcsr & ~0x3fu) == (b.mxcsr & ~0x3fu) && a.x87cw == b.x87cw && a.fpcr == b.fpcr;
}

static ws__fiber fp_f;
static fpctl fp_born; /* the state main had when it made fp_f */
static int fp_born_round = FE_TONEAREST;
static long fp_bad;

static void fp_body(void *arg, ws__fiber *from)
{
  (void)arg;
  /* Born with its creator's state at ws__fiber_make, not main's now. */
  fp_bad += !fp_eq(fp_get(), fp_born) || fegetround() != fp_born_round;
  fesetround(FE_DOWNWARD);
  fp_set(fp_odd(fp_get(), 2));
  fpctl mine = fp_get();
  for (int r = 0; r < 100; r++) {
    ws__fiber_switch(&fp_f, from);
    fp_bad += !fp_eq(fp_get(), mine) || fegetround() != FE_DOWNWARD;
  }
  ws__fiber_exit(&fp_f, from);
}

static void part_fpenv(void)
{
  pool_init(WS__STACK_GUARDED_DEFAULT, WS__STACK_KEEP_DEFAULT);
  ws__fiber_init_thread(&main_f);
  fpctl dflt = fp_get();
  ASSERT_EQ(fegetround(), FE_TONEAREST);
  ws__stack *s = stack_get();
  fp_born = dflt;
  ws__fiber_make(&fp_f, s, fp_body, NULL);
  fesetround(FE_UPWARD);
  fp_set(fp_odd(fp_get(), 1));
  fpctl mine = fp_get();
  long bad = 0;
  for (;;) {
    ws__fiber *got = ws__fiber_switch(&main_f, &fp_f);
    bad += !fp_eq(fp_get(), mine) || fegetround() != FE_UPWARD;
    if (got->exited)
      break;
  }
  ASSERT_EQ(bad, 0);
  ASSERT_EQ(fp_bad, 0);
  /* Made while main's state is odd: born odd, whatever main does after. */
  fp_born = mine;
  fp_born_round = FE_UPWARD;
  ws__fiber_make(&fp_f, s, fp_body, NULL);
  fp_set(dflt);
  fesetround(FE_TONEAREST);
  bad = 0;
  for (;;) {
    ws__fiber *got = ws__fiber_switch(&main_f, &fp_f);
    bad += !fp_eq(fp_get(), dflt) || fegetround() != FE_TONEAREST;
    if (got->exited)
      break;
  }
  ASSERT_EQ(bad, 0);
  ASSERT_EQ(fp_bad, 0);
  fp_set(dflt);
  ASSERT(fp_eq(fp_get(), dflt));
  ws__stack_put(&pool, s);
  ws__stack_pool_destroy(&pool);
  fprintf(stderr, "fpenv: rounding mode and %s kept per context, inherited at make\n",
#if defined(__x86_64__) || defined(__i386__)
          "MXCSR and x87 control word"
#elif defined(__aarch64__)
          "FPCR"
#else
          "(no control register read on this architecture)"
#endif
  );
}

/* --- many ---------------------------------------------------------------------- */

/* ThreadSanitizer counts fibers as threads and dies past 8128 of them;
   gcc 12's runtime also takes about 12 ms to create one (clang 14's 40 us). */
#if defined(WS__FIBER_TSAN)
#define MANY 500
#else
#define MANY SCALE(100000)
#endif

typedef struct {
  ws__fiber f;
  ws__stack *s;
  uint32_t index;
  int state; /* 1 parked, 2 finished */
  long bad;
} many_ctx;

static void many_body(void *arg, ws__fiber *from)
{
  many_ctx *c = arg;
  volatile uint64_t v[8];
  for (int i = 0; i < 8; i++)
    v[i] = (uint64_t)c->index * 8 + (uint64_t)i + ((uint64_t)(uintptr_t)&v[i] << 20);
  c->state = 1;
  from = ws__fiber_switch(&c->f, from); /* parked here, mid-function */
  c->bad += tsan_wrong(&c->f);
  for (int i = 0; i < 8; i++)
    c->bad += v[i] != (uint64_t)c->index * 8 + (uint64_t)i + ((uint64_t)(uintptr_t)&v[i] << 20);
  c->state = 2;
  ws__fiber_exit(&c->f, from);
}

static void part_many(void)
{
  long max = max_map_count();
  fprintf(stderr, "many: %d contexts; vm.max_map_count %ld, page %ld bytes, budget %zu mappings\n",
          MANY, max, sysconf(_SC_PAGESIZE), ws__stack_mapping_budget());
  many_ctx *ctx = calloc(MANY, sizeof *ctx);
  ASSERT(ctx != NULL);
  /* resident before the RSS baseline (volatile: the compiler drops memsets
     of calloc'd memory) */
  for (size_t b = 0; b < (size_t)MANY * sizeof *ctx; b += 512)
    ((volatile char *)ctx)[b] = 0;
  ws__fiber_init_thread(&main_f);
  pool_init(WS__STACK_GUARDED_DEFAULT, WS__STACK_KEEP_DEFAULT);
  long maps0 = count_maps(), rss0 = vm_rss();
  size_t total0 = ws__stack_mappings();
  for (uint32_t i = 0; i < MANY; i++) {
    ctx[i].index = i;
    ctx[i].s = stack_get();
    ws__fiber_make(&ctx[i].f, ctx[i].s, many_body, &ctx[i]);
    ws__fiber *back = ws__fiber_switch(&main_f, &ctx[i].f);
    ASSERT(back == &ctx[i].f && !back->exited);
    ASSERT_EQ(ctx[i].state, 1);
  }
  long maps1 = count_maps(), rss1 = vm_rss(), mine = count_maps_in(&pool);
  ws__stack_stats st;
  ws__stack_pool_stats(&pool, &st);
  fprintf(stderr,
          "many: %d parked: pool made %zu stacks (%zu guarded) in %zu mappings, %zu MiB of "
          "address space; /proc/self/maps %ld -> %ld lines (+%ld), %ld of them the pool's\n",
          MANY, st.made, st.guarded, st.mappings, st.bytes >> 20, maps0, maps1, maps1 - maps0,
          mine);
  ASSERT_EQ(st.in_use, MANY);
  ASSERT_EQ(st.made, MANY);
  ASSERT_EQ(st.guarded, WS__STACK_GUARDED_DEFAULT);
  ASSERT_EQ(ws__stack_mappings(), total0 + st.mappings);
  ASSERT_LE(ws__stack_mappings(), ws__stack_mapping_budget());
  /* 2 per guarded stack, 1 per slab: slabs double from 16 stacks to 64 MiB */
  size_t cap = ((size_t)64 << 20) / pool.stride, slabs = 0, n = 16, left = MANY - st.guarded;
  while (left > 0) {
    slabs++;
    left -= left < n ? left : n;
    n = n * 2 <= cap ? n * 2 : cap;
  }
  ASSERT_EQ(st.mappings, 2 * st.guarded + slabs);
  if (mine >= 0) {
    /* Each guard page is a VMA of its own; the kernel may merge the rest. */
    ASSERT_LE(mine, (long)st.mappings);
    ASSERT_GT(mine, (long)st.guarded);
    ASSERT_LT(maps1, max > 0 ? max / 4 : 65530 / 4);
#if !defined(WS_TEST_SANITIZED)
    /* nothing else mapped (the sanitizers map per fiber, TSan 4 each) */
    ASSERT_LE(maps1 - maps0, (long)st.mappings);
#endif
  }
  if (rss0 > 0 && rss1 > rss0) {
    long per = (rss1 - rss0) / MANY;
    fprintf(stderr, "many: resident memory per parked context: %ld bytes (%.1f pages)\n", per,
            (double)per / (double)sysconf(_SC_PAGESIZE));
#if !defined(WS_TEST_SANITIZED)
    /* the top page (record and frames) and the canary's page */
    ASSERT_LE(per, 2 * sysconf(_SC_PAGESIZE) + 512);
#endif
  }
  long bad = 0;
  for (uint32_t i = MANY; i-- > 0;) {
    ws__fiber *back = ws__fiber_switch(&main_f, &ctx[i].f);
    ASSERT(back == &ctx[i].f && back->exited);
    bad += ctx[i].bad + (ctx[i].state != 2);
    ws__stack_put(&pool, ctx[i].s);
  }
  ASSERT_EQ(bad, 0);
  ws__stack_pool_stats(&pool, &st);
  ASSERT_EQ(st.in_use, 0);
  size_t warm = 0; /* keep, then keep / 2 after each release */
  for (long i = 0; i < MANY; i++)
    if (++warm > WS__STACK_KEEP_DEFAULT)
      warm = WS__STACK_KEEP_DEFAULT / 2;
  ASSERT_EQ(st.warm, warm);
  ASSERT_EQ(st.cold, MANY - warm);
  ASSERT_EQ(st.released, MANY - warm);
  fprintf(stderr, "many: given back: %zu kept, %zu released in %zu madvise calls\n", st.warm,
          st.released, st.releases);
  long rss2 = vm_rss();
  ws__stack_pool_destroy(&pool);
  long maps2 = count_maps();
  fprintf(stderr,
          "many: all %d resumed and finished, locals intact; after giving back: RSS %+ld KiB "
          "from the baseline; after destroy: %ld maps\n",
          MANY, (rss2 - rss0) / 1024, maps2);
  ASSERT_EQ(ws__stack_mappings(), total0);
#if !defined(WS_TEST_SANITIZED)
  if (maps0 > 0)
    ASSERT_LE(maps2, maps0); /* (TSan keeps what it mapped for dead fibers) */
#endif
  free(ctx);
}

/* --- reuse --------------------------------------------------------------------- */

#if defined(WS__FIBER_TSAN)
#define REUSE 200 /* a TSan fiber each: ~12 ms with gcc 12 */
#else
#define REUSE SCALE(100000)
#endif

static ws__fiber reuse_f;
static long reuse_runs;

static void reuse_body(void *arg, ws__fiber *from)
{
  volatile char buf[256];
  memset((char *)buf, (int)(intptr_t)arg, sizeof buf);
  reuse_runs += buf[17] == (char)(intptr_t)arg;
  ws__fiber_exit(&reuse_f, from);
}

static void part_reuse(void)
{
  pool_init(1, 1);
  ws__fiber_init_thread(&main_f);
  ws__stack *s = stack_get();
  for (long i = 0; i < REUSE; i++) {
    ws__fiber_make(&reuse_f, s, reuse_body, (void *)(intptr_t)(i & 0x7f));
    ws__fiber *back = ws__fiber_switch(&main_f, &reuse_f);
    ASSERT(back == &reuse_f && back->exited);
  }
  ASSERT_EQ(reuse_runs, REUSE);
  /* made and never run, then made again: destroy releases the first */
  ws__fiber_make(&reuse_f, s, reuse_body, NULL);
  ws__fiber_destroy(&reuse_f);
  ws__stack_put(&pool, s);
  ws__stack_pool_destroy(&pool);
  fprintf(stderr, "reuse: %ld contexts made, run and exited on one stack\n", reuse_runs);
}

/* --- release ------------------------------------------------------------------- */

static void part_release(void)
{
  pool_init(0, 2);
  ws__stack *s[5];
  char *low[5];
  for (int i = 0; i < 5; i++) {
    s[i] = stack_get();
    low[i] = s[i]->low;
    memset(s[i]->low + 8, 0x5a, s[i]->size - 8); /* every page resident */
  }
  /* Slab stacks are shifted so that the top page of one (its record and
     first frames) is the canary page of the next: one page per shallow
     stack (stack.c, the top). */
  for (int i = 0; i < 4; i++)
    ASSERT_EQ(((uintptr_t)ws__stack_top(s[i]) - 1) / pool.page, (uintptr_t)low[i + 1] / pool.page);
  long rss_full = vm_rss();
  /* keep = 2: the third stack given back releases the two before it, the
     fifth the two before it; each pair is adjacent (one slab): one call */
  for (int i = 0; i < 5; i++)
    ws__stack_put(&pool, s[i]);
  long rss_after = vm_rss();
  ws__stack_stats st;
  ws__stack_pool_stats(&pool, &st);
  fprintf(stderr,
          "release: 5 stacks given back with keep = 2: %zu kept, %zu released in %zu calls (RSS "
          "%ld -> %ld KiB)\n",
          st.warm, st.released, st.releases, rss_full / 1024, rss_after / 1024);
  ASSERT_EQ(st.warm, 1);
  ASSERT_EQ(st.cold, 4);
  ASSERT_EQ(st.released, 4);
  ASSERT_EQ(st.releases, 2);
  /* The kept one has its bytes; the released ones read as zero
     (MADV_DONTNEED on private anonymous memory) from the page after their
     canary's to their top page, which are shared with the neighbours. */
  long zero = 0;
  for (int i = 0; i < 4; i++) {
    bool all_zero = true;
    for (size_t b = 64; b < pool.stride + 64 - pool.page; b += 64)
      all_zero &= low[i][b] == 0;
    zero += all_zero;
  }
  ASSERT_EQ(low[4][100], 0x5a);
  ASSERT_EQ(zero, 4);
  /* Reuse: the resident one first, then released ones with a new record
     and canary (stack_get checks it). */
  ASSERT(stack_get() == s[4]);
  ws__stack *c = stack_get();
  ASSERT(c->low == low[3] && c->size == pool.stride - 64 && c->pool == &pool);
  ASSERT(stack_get()->low == low[2]);
  ws__stack_pool_destroy(&pool);
}

/* --- scavenge ------------------------------------------------------------------ */

/* Gets n stacks into s[] and gives them back, most recent last. */
static void scav_cycle(ws__stack **s, int n)
{
  for (int i = 0; i < n; i++)
    s[i] = stack_get();
  for (int i = 0; i < n; i++)
    ws__stack_put(&pool, s[i]);
}

static void scav_expect(size_t warm, size_t released)
{
  ws__stack_stats st;
  ws__stack_pool_stats(&pool, &st);
  ASSERT_EQ(st.warm, warm);
  ASSERT_EQ(st.released, released);
  ASSERT_EQ(st.warm + st.cold + st.in_use, st.made);
}

static void part_scavenge(void)
{
  enum { N = 40, KEEP = 4 };
  ws__stack *s[N];
  pool_init(0, 1000);
  /* A burst of N in period 1: its stacks stay warm through periods 1 and
     2 (the peak of the current or the previous period), and go back in
     period 3, all but KEEP. */
  scav_cycle(s, N);
  ws__stack_scavenge(&pool, KEEP); /* end of period 1: peak N */
  scav_expect(N, 0);
  ws__stack_scavenge(&pool, KEEP); /* end of period 2: peaks 0 and N */
  scav_expect(N, 0);
  ws__stack_scavenge(&pool, KEEP); /* end of period 3: peaks 0 and 0 */
  scav_expect(KEEP, N - KEEP);
  /* The KEEP kept are the most recently given back. */
  for (int i = N; i-- > N - KEEP;)
    ASSERT(stack_get() == s[i]);
  for (int i = N - KEEP; i < N; i++)
    ws__stack_put(&pool, s[i]);
  /* A demand that comes back each period keeps its stacks: 30 in use at
     once, 10 of them still in use at the look (peak 30 - 10 in use = 20
     free kept, all there are). */
  ws__stack_scavenge(&pool, KEEP);
  ws__stack_scavenge(&pool, KEEP); /* the peaks of periods before are gone */
  scav_expect(KEEP, N - KEEP);
  size_t released = N - KEEP;
  for (int round = 0; round < 3; round++) {
    ws__stack *t[30];
    for (int i = 0; i < 30; i++)
      t[i] = stack_get();
    for (int i = 0; i < 20; i++)
      ws__stack_put(&pool, t[10 + i]);
    ws__stack_scavenge(&pool, KEEP);
    scav_expect(20, released); /* nothing went back */
    for (int i = 0; i < 10; i++)
      ws__stack_put(&pool, t[i]);
    ws__stack_scavenge(&pool, KEEP); /* peak 30 this period or the last */
    scav_expect(30, released);
  }
  /* Idle: the last period's peak was the 10 still in use when it began;
     then nothing, and all but KEEP go. */
  ws__stack_scavenge(&pool, KEEP);
  scav_expect(10, released + 20);
  ws__stack_scavenge(&pool, KEEP);
  scav_expect(KEEP, released + 30 - KEEP);
  fprintf(stderr, "scavenge: a burst of %d kept for two periods, then %d kept\n", N, KEEP);
  ws__stack_pool_destroy(&pool);
}

/* --- budget -------------------------------------------------------------------- */

static void part_budget(void)
{
  size_t used = ws__stack_mappings();
  ws__stack_set_mapping_budget(used + 5); /* room for two guarded stacks (4) and a slab */
  pool_init(10, WS__STACK_KEEP_DEFAULT);
  ws__stack *s[20];
  for (int i = 0; i < 20; i++)
    s[i] = stack_get();
  ws__stack_stats st;
  ws__stack_pool_stats(&pool, &st);
  fprintf(stderr, "budget: %zu mappings allowed: %zu of 20 stacks guarded, %zu mappings\n",
          used + 5, st.guarded, st.mappings);
  ASSERT_EQ(st.guarded, 2);
  ASSERT(s[0]->guarded && s[1]->guarded && !s[2]->guarded);
  ASSERT_EQ(st.made, 20);
  ASSERT_EQ(st.mappings, 2 * 2 + 2); /* slabs of 16 and 32 */
  for (int i = 0; i < 20; i++)
    ws__stack_put(&pool, s[i]);
  ws__stack_pool_destroy(&pool);
  ASSERT_EQ(ws__stack_mappings(), used);
  ws__stack_set_mapping_budget(0);
}

/* --- nomem --------------------------------------------------------------------- */

static void part_nomem(void)
{
  pool_init(0, WS__STACK_KEEP_DEFAULT);
  ws__stack *s[17];
  ws__alloc_fault(1, 0); /* the next allocation (the first slab) fails */
  ASSERT_EQ(ws__stack_get(&pool, &s[0]), WS_ENOMEM);
  ws__stack_stats st;
  ws__stack_pool_stats(&pool, &st);
  ASSERT(st.made == 0 && st.mappings == 0 && st.in_use == 0);
  for (int i = 0; i < 16; i++)
    s[i] = stack_get();
  ws__alloc_fault(1, 0); /* the second slab */
  ASSERT_EQ(ws__stack_get(&pool, &s[16]), WS_ENOMEM);
  ws__stack_pool_stats(&pool, &st);
  ASSERT(st.made == 16 && st.mappings == 1 && st.in_use == 16);
  ws__alloc_fault(0, 0);
  s[16] = stack_get();
  for (int i = 0; i < 17; i++)
    ws__stack_put(&pool, s[i]);
  ws__stack_pool_destroy(&pool);
  fprintf(stderr, "nomem: a refused slab is WS_ENOMEM, and the pool goes on\n");
}

/* --- migrate ------------------------------------------------------------------- */

static ws__fiber mig_f;
static ws__fiber mig_thread_f[2];
static pthread_t mig_thread[2];
static long mig_bad;

static void mig_body(void *arg, ws__fiber *from)
{
  (void)arg;
  volatile uint64_t mine[NLOCAL];
  for (uint64_t r = 0; r < 100; r++) {
    locals_fill(mine, r);
    /* parks; the other thread resumes it (not pthread_self(), which glibc
       declares const: the compiler may reuse the first thread's answer) */
    from = ws__fiber_switch(&mig_f, from);
    mig_bad += locals_bad(mine, r) + tsan_wrong(&mig_f);
    mig_bad += from != &mig_thread_f[(r + 1) % 2];
  }
  ws__fiber_exit(&mig_f, from);
}

static pthread_mutex_t mig_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t mig_c = PTHREAD_COND_INITIALIZER;
static int mig_turn; /* under mig_m: which thread resumes next; -1 done */

static void *mig_thread_fn(void *arg)
{
  int me = (int)(intptr_t)arg;
  ws__fiber_init_thread(&mig_thread_f[me]);
  for (;;) {
    pthread_mutex_lock(&mig_m);
    while (mig_turn != me && mig_turn != -1)
      pthread_cond_wait(&mig_c, &mig_m);
    int turn = mig_turn;
    pthread_mutex_unlock(&mig_m);
    if (turn == -1)
      break;
    /* The mutex orders the other thread's park before this resume. */
    ws__fiber *back = ws__fiber_switch(&mig_thread_f[me], &mig_f);
    pthread_mutex_lock(&mig_m);
    mig_turn = back->exited ? -1 : 1 - me;
    pthread_cond_broadcast(&mig_c);
    pthread_mutex_unlock(&mig_m);
  }
  return NULL;
}

static void part_migrate(void)
{
  pool_init(WS__STACK_GUARDED_DEFAULT, WS__STACK_KEEP_DEFAULT);
  ws__stack *s = stack_get();
  ws__fiber_make(&mig_f, s, mig_body, NULL);
  mig_turn = 0;
  for (int i = 0; i < 2; i++)
    ASSERT_EQ(pthread_create(&mig_thread[i], NULL, mig_thread_fn, (void *)(intptr_t)i), 0);
  for (int i = 0; i < 2; i++)
    ASSERT_EQ(pthread_join(mig_thread[i], NULL), 0);
  ASSERT(mig_f.exited);
  ASSERT_EQ(mig_bad, 0);
  ws__stack_put(&pool, s);
  ws__stack_pool_destroy(&pool);
  fprintf(stderr, "migrate: a context resumed 100 times, each time by the other thread\n");
}

/* --- overflow ------------------------------------------------------------------ */

/* Runs body in a child process with its stderr in out (NUL-terminated,
   also copied to ours); returns its wait status. */
static int run_child(void (*body)(void), const char *what, char *out, size_t size)
{
  int pfd[2];
  ASSERT_EQ(pipe(pfd), 0);
  fflush(stderr);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    struct rlimit nocore = {0, 0}; /* the abort is expected: no core file */
    setrlimit(RLIMIT_CORE, &nocore);
    dup2(pfd[1], STDERR_FILENO);
    close(pfd[0]);
    close(pfd[1]);
    body();
    _exit(0);
  }
  close(pfd[1]);
  size_t n = 0;
  ssize_t r;
  while (n < size - 1 && (r = read(pfd[0], out + n, size - 1 - n)) > 0)
    n += (size_t)r;
  out[n] = '\0';
  close(pfd[0]);
  int st;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  fprintf(stderr, "%s: the child said:\n%s", what, out);
  return st;
}

/* The child must die of SIGABRT having said `needle` and the option. */
static void expect_overflow(void (*body)(void), const char *what, const char *needle)
{
  static char out[16384];
  int st = run_child(body, what, out, sizeof out);
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT)
    TEST_FAIL("%s: the child did not abort (wait status %#x)", what, st);
  if (strstr(out, needle) == NULL || strstr(out, "raise " WS__STACK_SIZE_OPTION) == NULL)
    TEST_FAIL("%s: no \"%s\" and \"raise %s\" in what the child said", what, needle,
              WS__STACK_SIZE_OPTION);
}

static ws__fiber victim_f;

/* A frame too big for what is left of the stack: its array starts below
   the stack's lowest byte (in the neighbouring stack's top, our memory). */
static void canary_body(void *arg, ws__fiber *from)
{
  ws__stack *s = arg;
  /* the frame, not a local's address (ASan may keep locals elsewhere) */
  char *here = __builtin_frame_address(0);
  size_t n = (size_t)(here - s->low) + 256;
  char big[n];
  memset(big, 0x33, n);
  __asm__ __volatile__("" : : "r"(big) : "memory");
  ws__fiber_switch(&victim_f, from); /* the check: aborts here */
  ws__fiber_exit(&victim_f, from);
}

static void overflow_canary_child(void)
{
  pool_init(0, WS__STACK_KEEP_DEFAULT);
  ws__fiber_init_thread(&main_f);
  ws__stack *a = stack_get(), *b = stack_get();
  ws__stack *victim = a->low > b->low ? a : b; /* the other lies just below it */
  ASSERT(!victim->guarded);
  ws__fiber_make(&victim_f, victim, canary_body, victim);
  ws__fiber_switch(&main_f, &victim_f);
  fprintf(stderr, "the overflow went unnoticed\n");
}

static void part_overflow_canary(void)
{
  expect_overflow(overflow_canary_child, "overflow_canary", "overwrote its canary");
}

static volatile long deep_limit = LONG_MAX;

static long deep(long n)
{
  volatile char frame[512];
  for (size_t i = 0; i < sizeof frame; i += 64)
    frame[i] = (char)n;
  if (n >= deep_limit)
    return n;
  return deep(n + 1) + frame[n % 512];
}

static void guard_body(void *arg, ws__fiber *from)
{
  (void)arg;
  deep(0);
  ws__fiber_exit(&victim_f, from);
}

static void overflow_guard_child(void)
{
  ASSERT_OK(ws__stack_thread_init());
  pool_init(1, WS__STACK_KEEP_DEFAULT);
  ws__fiber_init_thread(&main_f);
  ws__stack *s = stack_get();
  ASSERT(s->guarded);
  ws__fiber_make(&victim_f, s, guard_body, NULL);
  ws__fiber_switch(&main_f, &victim_f);
  fprintf(stderr, "the overflow went unnoticed\n");
}

static void part_overflow_guard(void)
{
  expect_overflow(overflow_guard_child, "overflow_guard", "ran into its guard page");
}

/* --- what the sanitizers report from inside a context ------------------------- */

/* The child must have failed (a sanitizer's exit code, or its abort) and
   said every one of needles. */
#if defined(WS__FIBER_ASAN) || defined(WS__FIBER_TSAN)
static void expect_report(void (*body)(void), const char *what, const char *const *needles)
{
  static char out[65536];
  int st = run_child(body, what, out, sizeof out);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
    TEST_FAIL("%s: the child did not fail", what);
  for (; *needles != NULL; needles++)
    if (strstr(out, *needles) == NULL)
      TEST_FAIL("%s: no \"%s\" in what the child said", what, *needles);
}
#endif

#if defined(WS__FIBER_ASAN)
static ws__fiber san_f;
static volatile int san_index = 8;

/* Out of line, so that UBSan cannot see the bound and leaves it to ASan. */
__attribute__((noinline)) static void poke(volatile char *p, int i)
{
  p[i] = 1;
}

static void asan_victim(void *arg, ws__fiber *from)
{
  (void)arg;
  volatile char buf[8];
  poke(buf, san_index); /* one past its end */
  san_index = buf[0];
  ws__fiber_exit(&san_f, from);
}

static void asan_child(void)
{
  pool_init(0, WS__STACK_KEEP_DEFAULT);
  ws__fiber_init_thread(&main_f);
  ws__fiber_make(&san_f, stack_get(), asan_victim, NULL);
  ws__fiber_switch(&main_f, &san_f);
}
#endif

/* ASan finds the frame of a local on a context's stack: it knows the
   stack is one (without the annotations: "wild pointer", no frame). */
static void part_asan_report(void)
{
#if defined(WS__FIBER_ASAN)
  static const char *const needles[] = {"stack-buffer-overflow", "is located in stack of thread",
                                        "in frame", "asan_victim", NULL};
  expect_report(asan_child, "asan_report", needles);
#else
  test_skip("not an AddressSanitizer build");
#endif
}

#if defined(WS__FIBER_TSAN)
static ws__fiber race_f[2], race_thread_f[2];
static ws__stack *race_stack[2];
static long race_counter; /* written by both contexts, unsynchronised: the race */

static void race_writer(void *arg, ws__fiber *from)
{
  int me = (int)(intptr_t)arg;
  race_counter++;
  ws__fiber_exit(&race_f[me], from);
}

static void *race_thread(void *arg)
{
  int me = (int)(intptr_t)arg;
  ws__fiber_init_thread(&race_thread_f[me]);
  ws__fiber_make(&race_f[me], race_stack[me], race_writer, arg);
  ws__fiber_switch(&race_thread_f[me], &race_f[me]);
  return NULL;
}

static void tsan_child(void)
{
  pool_init(0, WS__STACK_KEEP_DEFAULT);
  pthread_t t[2];
  for (int i = 0; i < 2; i++)
    race_stack[i] = stack_get();
  for (int i = 0; i < 2; i++)
    ASSERT_EQ(pthread_create(&t[i], NULL, race_thread, (void *)(intptr_t)i), 0);
  for (int i = 0; i < 2; i++)
    ASSERT_EQ(pthread_join(t[i], NULL), 0);
}
#endif

/* TSan still sees what contexts on two threads do: it reports their race,
   in the context's function. */
static void part_tsan_race(void)
{
#if defined(WS__FIBER_TSAN)
  static const char *const needles[] = {"ThreadSanitizer: data race", "race_writer", NULL};
  expect_report(tsan_child, "tsan_race", needles);
#else
  test_skip("not a ThreadSanitizer build");
#endif
}

static const test_part parts[] = {
    {"pingpong", part_pingpong, false},
    {"registers", part_registers, false},
    {"fpenv", part_fpenv, false},
    {"many", part_many, false},
    {"reuse", part_reuse, false},
    {"release", part_release, false},
    {"scavenge", part_scavenge, false},
    {"budget", part_budget, false},
    {"nomem", part_nomem, false},
    {"migrate", part_migrate, false},
    {"overflow_canary", part_overflow_canary, false},
    {"overflow_guard", part_overflow_guard, false},
    {"asan_report", part_asan_report, true},
    {"tsan_race", part_tsan_race, true},
};

int main(int argc, char **argv)
{
  fprintf(stderr, "context switch: %s; stacks of %d KiB, page %ld bytes\n",
#if defined(WS_FIBER_UCONTEXT)
          "ucontext",
#elif defined(__x86_64__)
          "asm x86-64",
#else
          "asm aarch64",
#endif
          WS__STACK_SIZE_DEFAULT / 1024, sysconf(_SC_PAGESIZE));
  return TEST_RUN(argc, argv, parts);
}
