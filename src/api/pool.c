/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Pools: creation and options, submission, shutdown, waiting for
 * termination or idleness, destruction. The ACCEPTING -> DRAINING ->
 * TERMINATED state machine and the count of outstanding tasks are
 * core/life.c.
 */
#include "frames.h"
#include "internal.h"
#include "life.h"
#include "observe.h"
#include "spares.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

void ws_options_init_sized(ws_options_t *opt, size_t size)
{
  if (opt == NULL || size < sizeof opt->size)
    return;
  /* The caller's struct may be older and smaller than ours: touch `size`
     bytes, never sizeof *opt. */
  memset(opt, 0, size);
  opt->size = size;
}

/* Every field after `size`, in order. A layout from an older header ends
   after one of them; a new field goes at the end of ws_options_t and of
   this table. */
#define WS__FIELD(f)                                                                               \
  {                                                                                                \
    offsetof(ws_options_t, f), sizeof(((ws_options_t *)0)->f)                                      \
  }
static const struct {
  size_t offset, len;
} option_fields[] = {
    WS__FIELD(workers),
    WS__FIELD(deque),
    WS__FIELD(steal),
    WS__FIELD(steal_batch),
    WS__FIELD(spin_rounds),
    WS__FIELD(seed),
    WS__FIELD(stack_size),
    WS__FIELD(max_spares),
    WS__FIELD(spare_idle_ms),
    WS__FIELD(schedtrace_ms),
    WS__FIELD(pin),
    WS__FIELD(order),
    WS__FIELD(park_stack_size),
    WS__FIELD(migrate),
    WS__FIELD(slice),
    WS__FIELD(name),
    WS__FIELD(on_thread_start),
    WS__FIELD(on_thread_exit),
    WS__FIELD(hook_arg),
    WS__FIELD(io_owned),
};
#undef WS__FIELD

/* Reads the caller's options into *o (already the defaults): the fields that
   fit whole in opt->size, so padding after an older layout's last field is
   never read as a newer field. WS_EINVAL for a size no header ever had. */
static int read_options(ws_options_t *o, const ws_options_t *opt)
{
  if (opt->size < sizeof opt->size || opt->size > sizeof *opt)
    return WS_EINVAL;
  for (size_t i = 0; i < sizeof option_fields / sizeof option_fields[0]; i++)
    if (option_fields[i].offset + option_fields[i].len <= opt->size)
      memcpy((char *)o + option_fields[i].offset, (const char *)opt + option_fields[i].offset,
             option_fields[i].len);
  return 0;
}

/* What ws_pool_create has made so far (ws_pool_t.made), so that one
   function takes any partly built pool apart. */
enum {
  MADE_IDLE_LOCK = 1u << 0,
  MADE_DEPOT = 1u << 1,
  MADE_COMP_LOCK = 1u << 2,
  MADE_TRACE_LOCK = 1u << 3,
  MADE_PROF_LOCK = 1u << 4,
  MADE_INJECT = 1u << 5,
  MADE_HIGH = 1u << 6,
  MADE_POLLS = 1u << 7
};

/* Frees pool p, whose first nslots worker slots are initialised and whose
   other parts are as p->made says (arrays: NULL when not allocated). */
static void pool_free(ws_pool_t *p, unsigned nslots)
{
  for (unsigned i = 0; i < nslots; i++) {
    ws__task_cache_drain(&p->workers[i].records);
    ws__tpark_free(&p->workers[i]);
    ws__frames_free(&p->workers[i]);
    ws__deque_destroy(&p->workers[i].deque);
    ws__free(p->workers[i].runq);
    WS__CHECK(pthread_mutex_destroy(&p->workers[i].mig_lock) == 0);
  }
  ws__free(p->workers);
  ws__free(p->home_cpu);
  if (p->topo != NULL)
    ws__topo_free(p->topo);
  if (p->made & MADE_INJECT)
    ws__inject_destroy(&p->inject);
  if (p->made & MADE_HIGH)
    ws__inject_destroy(&p->high);
  if (p->made & MADE_POLLS)
    ws__polls_destroy(&p->polls);
  if (p->made & MADE_DEPOT)
    ws__task_depot_destroy(&p->depot);
  if (p->made & MADE_COMP_LOCK)
    pthread_mutex_destroy(&p->comp_lock);
  if (p->made & MADE_IDLE_LOCK)
    pthread_mutex_destroy(&p->idle_lock);
  if (p->made & MADE_TRACE_LOCK)
    pthread_mutex_destroy(&p->trace_lock);
  if (p->made & MADE_PROF_LOCK)
    pthread_mutex_destroy(&p->prof_lock);
  ws__free(p);
}

/* NULL when ws_pool_create accepts options o, else what is wrong with
   them, naming the field (ws_options_check). */
static const char *check_options(const ws_options_t *o)
{
  if (o->workers > WS_MAX_WORKERS)
    return "ws_options_t.workers: more than WS_MAX_WORKERS (1024)";
  if (o->deque != WS_DEQUE_DEFAULT && o->deque != WS_DEQUE_LOCKFREE && o->deque != WS_DEQUE_LOCKED)
    return "ws_options_t.deque: not a ws_deque_kind_t";
  if (o->steal != WS_STEAL_DEFAULT && o->steal != WS_STEAL_ONE && o->steal != WS_STEAL_HALF)
    return "ws_options_t.steal: not a ws_steal_policy_t";
  if (o->steal_batch > WS__STEAL_BATCH_MAX)
    return "ws_options_t.steal_batch: more than 256";
  if (o->spin_rounds > WS__SPIN_ROUNDS_MAX && o->spin_rounds != WS_SPIN_NONE)
    return "ws_options_t.spin_rounds: more than 1000000 (and not WS_SPIN_NONE)";
  if (o->max_spares > WS_MAX_SPARES && o->max_spares != WS_SPARES_NONE)
    return "ws_options_t.max_spares: more than WS_MAX_SPARES (and not WS_SPARES_NONE)";
  if (o->order != WS_ORDER_DEFAULT && o->order != WS_ORDER_LIFO && o->order != WS_ORDER_FIFO)
    return "ws_options_t.order: not a ws_order_t";
  if (o->park_stack_size > WS__PARK_STACK_MAX)
    return "ws_options_t.park_stack_size: more than 1 GiB";
  return NULL;
}

const char *ws_options_check(const ws_options_t *opt)
{
  if (opt == NULL)
    return NULL; /* the defaults */
  ws_options_t o;
  ws_options_init(&o);
  if (read_options(&o, opt) != 0)
    return "ws_options_t.size: no wsched.h has that size (fill it with ws_options_init)";
  return check_options(&o);
}

/* The victim order by topology (hwloc, or WS_TOPOLOGY's synthetic one)
   for a pool of more than one worker; p->topo stays NULL when flat.
   Returns 0 or an error. */
static int pool_topology(ws_pool_t *p)
{
  const char *synthetic = getenv("WS_TOPOLOGY");
  if (synthetic != NULL && *synthetic == '\0')
    synthetic = NULL; /* empty: unset */
  int rc = ws__topo_build(&p->topo, p->nworkers, p->home_cpu, synthetic);
  if (rc != 0)
    return rc;
  if (synthetic != NULL && !ws__topo_synthetic_used(p->topo)) {
    /* Missing or refusing hwloc: the description says why, as
       "flat (<reason>)"; keep <reason> (drop the prefix and the ')'). */
    char desc[200], why[320];
    ws__topo_describe(p->topo, desc, sizeof desc);
    size_t dlen = strlen(desc);
    bool wrapped = strncmp(desc, "flat (", 6) == 0 && dlen > 6 && desc[dlen - 1] == ')';
    const char *reason = wrapped ? desc + 6 : desc;
    int rlen = (int)(wrapped ? dlen - 7 : dlen);
    snprintf(why, sizeof why, "WS_TOPOLOGY=%.64s ignored (%.*s)", synthetic, rlen, reason);
    ws__env_report("WS_TOPOLOGY", why, "the flat victim order");
    ws__env_note(p->env_notes, sizeof p->env_notes, why);
  }
  if (ws__topo_is_flat(p->topo) && !ws__topo_synthetic_used(p->topo)) {
    ws__topo_free(p->topo); /* flat: the plain random permutation does it */
    p->topo = NULL;
  }
  return 0;
}

/* ws_pool_create, step 1: p's configuration from the checked options o,
   and its atomics at their first values. Nothing can fail. */
static void pool_configure(ws_pool_t *p, const ws_options_t *o)
{
  p->observe = &ws__observe_table; /* the core's way up (core/hooks.h) */
  if (o->workers != 0) {
    p->nworkers = o->workers;
    snprintf(p->workers_from, sizeof p->workers_from, "the options");
  } else {
    p->nworkers = ws__default_workers_from(p->workers_from, sizeof p->workers_from, p->env_notes,
                                           sizeof p->env_notes);
  }
  if (ws__platform_env_note() != NULL)
    ws__env_note(p->env_notes, sizeof p->env_notes, ws__platform_env_note());
  ws__trace_env_events(p->env_notes, sizeof p->env_notes);
  p->ncpus = ws__affinity_count();
  p->pin = o->pin != 0;
  double limit;
  p->cgroup_limit = ws__cgroup_cpu_limit(NULL, &limit) == 1 ? limit : 0;
  p->deque_kind = o->deque == WS_DEQUE_LOCKED ? WS_DEQUE_LOCKED : WS_DEQUE_LOCKFREE;
  p->steal_policy = o->steal == WS_STEAL_HALF ? WS_STEAL_HALF : WS_STEAL_ONE;
  p->fifo = o->order == WS_ORDER_FIFO;
  p->steal_batch = o->steal_batch != 0 ? o->steal_batch : WS__DEFAULT_STEAL_BATCH;
  p->spin_rounds = o->spin_rounds == 0              ? WS__DEFAULT_SPIN_ROUNDS
                   : o->spin_rounds == WS_SPIN_NONE ? 0
                                                    : o->spin_rounds;
  p->max_spares = o->max_spares == 0                ? WS__DEFAULT_MAX_SPARES
                  : o->max_spares == WS_SPARES_NONE ? 0
                                                    : o->max_spares;
  p->spare_idle_ms = o->spare_idle_ms != 0 ? o->spare_idle_ms : WS__DEFAULT_SPARE_IDLE_MS;
  p->stack_size = o->stack_size;
  p->park_stack_size = o->park_stack_size; /* 0: the stack pool's default (stack.h) */
  p->migrate = o->migrate != 0 && WS__MIGRATE_SUPPORTED;
  p->slice = o->slice == 0 ? WS_SLICE_DEFAULT : o->slice == WS_SLICE_NONE ? 0 : o->slice;
  p->seed = o->seed != 0 ? o->seed : WS__DEFAULT_SEED;
  /* The threads' prefix: what a name can hold of o->name (the cut to fit
     a role comes later, ws__thread_name_format). */
  const char *name = o->name != NULL && o->name[0] != '\0' ? o->name : "ws";
  size_t nlen = strnlen(name, sizeof p->name - 1);
  memcpy(p->name, name, nlen);
  p->name[nlen] = '\0';
  p->on_thread_start = o->on_thread_start;
  p->on_thread_exit = o->on_thread_exit;
  p->hook_arg = o->hook_arg;
  p->io_owned = o->io_owned != 0;
  atomic_init(&p->nstarting, o->on_thread_start != NULL ? p->nworkers : 0);
  atomic_init(&p->nslots, p->nworkers);
  atomic_init(&p->nblocked, 0);
  atomic_init(&p->nspares_active, 0);
  atomic_init(&p->compensated, 0);
  atomic_init(&p->uncompensated, 0);
  atomic_init(&p->life, 0);
  atomic_init(&p->term_word, 0);
  atomic_init(&p->idle_epoch, 0);
  atomic_init(&p->idle_waiters, 0);
  atomic_init(&p->nidle, 0);
  atomic_init(&p->nspinning, 0);
  atomic_init(&p->nwaiting, 0);
  atomic_init(&p->submitted, 0);
  atomic_init(&p->rejected, 0);
}

/* ws_pool_create, step 2: p's locks, queues, poller, worker slots, homes
   and topology. Returns 0, or an error with *slots slots initialised and
   p->made saying what else exists (pool_free takes it apart). */
static int pool_allocate(ws_pool_t *p, unsigned *slots)
{
  *slots = 0;
  int rc = WS_ENOMEM;
  if (pthread_mutex_init(&p->idle_lock, NULL) != 0)
    return rc;
  p->made |= MADE_IDLE_LOCK;
  if (ws__task_depot_init(&p->depot) != 0)
    return rc;
  p->made |= MADE_DEPOT;
  if (pthread_mutex_init(&p->comp_lock, NULL) != 0)
    return rc;
  p->made |= MADE_COMP_LOCK;
  if (pthread_mutex_init(&p->trace_lock, NULL) != 0)
    return rc;
  p->made |= MADE_TRACE_LOCK;
  if (pthread_mutex_init(&p->prof_lock, NULL) != 0)
    return rc;
  p->made |= MADE_PROF_LOCK;
  if (ws__inject_init(&p->inject) != 0)
    return rc;
  p->made |= MADE_INJECT;
  if (ws__inject_init(&p->high) != 0)
    return rc;
  p->made |= MADE_HIGH;
  if ((rc = ws__polls_init(&p->polls)) != 0)
    return rc;
  p->made |= MADE_POLLS;

  unsigned n = p->nworkers, cap = n + p->max_spares;
  p->workers = ws__aligned_alloc(WS__CACHELINE, cap * sizeof *p->workers);
  if (p->workers == NULL)
    return WS_ENOMEM;

  /* Homes: worker i on the i-th CPU of the affinity mask (round robin). The
     topology (hwloc) groups the workers by what their homes share. */
  p->home_cpu = ws__malloc(n * sizeof *p->home_cpu);
  int *mask = ws__malloc(p->ncpus * sizeof *mask);
  int nmask = mask != NULL ? ws__affinity_list(mask, p->ncpus) : WS_ENOMEM;
  if (p->home_cpu == NULL || nmask < 0) {
    ws__free(mask);
    return nmask == WS_ESYS ? WS_ESYS : WS_ENOMEM;
  }
  for (unsigned i = 0; i < n; i++)
    p->home_cpu[i] = nmask > 0 ? mask[i % (unsigned)nmask] : -1;
  ws__free(mask);
  if (n > 1 && (rc = pool_topology(p)) != 0)
    return rc;

  memset(p->workers, 0, cap * sizeof *p->workers);
  for (; *slots < n; (*slots)++)
    if (ws__slot_init(p, &p->workers[*slots], *slots, p->seed) != 0)
      return WS_ENOMEM;
  return 0;
}

/* ws_pool_create, step 3: the workers' threads, then schedtrace and the
   trace from the environment or the options. 0, or WS_ESYS with no thread
   left running. */
static int pool_start(ws_pool_t *p, const ws_options_t *o)
{
  for (unsigned i = 0; i < p->nworkers; i++) {
    if (ws__thread_start(&p->workers[i].thread, o->stack_size, ws__worker_main, &p->workers[i]) !=
        0) {
      /* Stop the ones already running: nothing was submitted, so shutting
         down terminates at once and they exit. */
      ws_shutdown(p);
      for (unsigned k = 0; k < i; k++)
        pthread_join(p->workers[k].thread, NULL);
      return WS_ESYS;
    }
  }
  /* Every worker's on_thread_start has returned (wsched.h, "Threads").
     Acquire: pairs with each worker's release decrement. */
  for (uint32_t n; (n = atomic_load_explicit(&p->nstarting, memory_order_acquire)) != 0;)
    ws__futex_wait(&p->nstarting, n, WS__NO_DEADLINE);
  unsigned st_ms = o->schedtrace_ms;
  if (st_ms == 0) {
    uint64_t v;
    char why[160];
    int env = ws__env_uint("WS_SCHEDTRACE", 0, UINT_MAX, &v, why, sizeof why);
    if (env == WS__ENV_SET) {
      st_ms = (unsigned)v;
    } else if (env == WS__ENV_BAD) {
      ws__env_report("WS_SCHEDTRACE", why, "no schedtrace");
      ws__env_note(p->env_notes, sizeof p->env_notes, why);
    }
  }
  if (ws__schedtrace_start(p, st_ms) != 0)
    fprintf(stderr, "wsched: schedtrace: cannot start its thread\n");
  ws__trace_env_start(p);
  return 0;
}

int ws_pool_create(ws_pool_t **pool, const ws_options_t *opt)
{
  ws_options_t o;
  int rc;

  if (pool == NULL)
    return WS_EINVAL;
  *pool = NULL;
  ws_options_init(&o);
  if (opt != NULL && (rc = read_options(&o, opt)) != 0)
    return rc;
  if (check_options(&o) != NULL)
    return WS_EINVAL;

  ws__platform_init();
  ws_pool_t *p = ws__aligned_alloc(WS__CACHELINE, sizeof *p);
  if (p == NULL)
    return WS_ENOMEM;
  memset(p, 0, sizeof *p);
  pool_configure(p, &o);
  unsigned slots;
  if ((rc = pool_allocate(p, &slots)) != 0 || (rc = pool_start(p, &o)) != 0) {
    pool_free(p, slots);
    return rc;
  }
  *pool = p;
  return 0;
}

int ws_submit(ws_pool_t *p, ws_task_fn fn, void *arg, ws_future_t **future)
{
  if (future != NULL)
    *future = NULL;
  if (p == NULL || fn == NULL)
    return WS_EINVAL;

  /* A task submitted by a task under a cancellation token is under it too
     (wsched.h, "Cancellation tokens"), whichever pool it goes to. */
  ws__worker *self = ws__tls_worker;
  ws_token_t *k = self != NULL ? ws__inherited_token(self->jf.cur, fn) : NULL;
  if (__builtin_expect(k != NULL, 0))
    return ws__submit_under(p, fn, arg, 0, k, future);
  ws__worker *w = ws__self_in(p);
  if (w == NULL && future == NULL)
    return ws__submit_entry(p, fn, arg); /* no record on this side (data/inject.h) */
  ws__task *t = ws__task_new(w, p, fn, arg, future != NULL ? WS__TASK_FUTURE : 0,
                             future != NULL ? 2 : 1, NULL);
  if (t == NULL)
    return WS_ENOMEM;
  if (w != NULL) {
    if (future != NULL)
      *future = ws__handle(t); /* the handle holds its own reference */
    ws__submit_child(w, t);
    return 0;
  }
  int rc = ws__submit_root(p, t);
  if (rc == 0 && future != NULL)
    *future = ws__handle(t);
  return rc;
}

int ws_submit_ex(ws_pool_t *p, ws_task_fn fn, void *arg, unsigned flags, ws_future_t **future)
{
  if (flags == 0)
    return ws_submit(p, fn, arg, future);
  if (future != NULL)
    *future = NULL;
  if (p == NULL || fn == NULL || (flags & ~WS_SUBMIT_HIGH) != 0)
    return WS_EINVAL;
  ws__worker *w = ws__self_in(p);
  ws__worker *self = ws__tls_worker; /* inherits, as ws_submit (any pool's task) */
  ws_token_t *k = self != NULL ? ws__inherited_token(self->jf.cur, fn) : NULL;
  if (__builtin_expect(k != NULL, 0))
    return ws__submit_under(p, fn, arg, flags, k, future);
  ws__task *t = ws__task_new(w, p, fn, arg, future != NULL ? WS__TASK_FUTURE : 0,
                             future != NULL ? 2 : 1, NULL);
  if (t == NULL)
    return WS_ENOMEM;
  if (future != NULL)
    *future = ws__handle(t); /* before the push: t may run at once */
  int rc = ws__submit_high(p, w, t);
  if (rc != 0 && future != NULL)
    *future = NULL; /* t was freed */
  return rc;
}

/* ws_submit_batch under token k: a ws__tokened per task, made first (all
   or nothing), then one batch of tokened records. */
static int batch_under(ws_pool_t *p, ws_task_fn fn, void *const *args, size_t n, ws_token_t *k,
                       ws_future_t **futures)
{
  if (n > SIZE_MAX / sizeof(void *))
    return WS_ENOMEM;
  void **wrapped = ws__malloc(n * sizeof *wrapped);
  if (wrapped == NULL)
    return WS_ENOMEM;
  size_t made = 0;
  for (; made < n; made++) {
    ws__tokened *e = ws__malloc(sizeof *e);
    if (e == NULL)
      break;
    e->fn = fn;
    e->arg = args[made];
    e->token = k;
    e->claimed = false;
    wrapped[made] = e;
  }
  int rc = WS_ENOMEM;
  if (made == n) {
    for (size_t i = 0; i < n; i++)
      ws__token_ref(k); /* each record's, dropped when it runs or is discarded */
    rc = ws_submit_batch(p, ws__token_run, wrapped, n, futures);
    if (rc != 0)
      for (size_t i = 0; i < n; i++)
        ws__token_unref(k); /* ours (the running task's) keeps it above 0 */
  }
  if (rc != 0)
    for (size_t i = 0; i < made; i++)
      ws__free(wrapped[i]);
  ws__free(wrapped);
  return rc;
}

int ws_submit_batch(ws_pool_t *p, ws_task_fn fn, void *const *args, size_t n, ws_future_t **futures)
{
  if (futures != NULL)
    for (size_t i = 0; i < n; i++)
      futures[i] = NULL;
  if (p == NULL || fn == NULL || (args == NULL && n != 0))
    return WS_EINVAL;
  if (n == 0)
    return 0;
  ws__worker *self = ws__tls_worker; /* inherits, as ws_submit */
  ws_token_t *k = self != NULL ? ws__inherited_token(self->jf.cur, fn) : NULL;
  if (__builtin_expect(k != NULL, 0))
    return batch_under(p, fn, args, n, k, futures);
  ws__worker *w = ws__self_in(p);
  if (w == NULL && futures == NULL)
    return ws__submit_entries(p, fn, args, n); /* no records on this side (data/inject.h) */
  /* All or nothing: every record first, then one submission. Handles are
     made while the records are ours alone (ws__handle reads gen). */
  ws__task *first = NULL, *last = NULL;
  for (size_t i = 0; i < n; i++) {
    ws__task *t = ws__task_new(w, p, fn, args[i], futures != NULL ? WS__TASK_FUTURE : 0,
                               futures != NULL ? 2 : 1, NULL);
    if (t == NULL) {
      for (ws__task *u = first, *next; u != NULL; u = next) {
        next = u == last ? NULL : atomic_load_explicit(&u->qnext, memory_order_relaxed);
        ws__task_free(w != NULL ? &w->records : NULL, &p->depot, u);
      }
      if (futures != NULL)
        for (size_t k = 0; k < i; k++)
          futures[k] = NULL;
      return WS_ENOMEM;
    }
    if (futures != NULL)
      futures[i] = ws__handle(t);
    /* Relaxed: published by the queue's release (or each push's). */
    if (last != NULL)
      atomic_store_explicit(&last->qnext, t, memory_order_relaxed);
    else
      first = t;
    last = t;
  }
  if (w != NULL) {
    /* Children of the running task: each onto our deque, as ws_submit. */
    for (ws__task *t = first, *next; t != NULL; t = next) {
      next = t == last ? NULL : atomic_load_explicit(&t->qnext, memory_order_relaxed);
      ws__submit_child(w, t);
    }
    return 0;
  }
  int rc = ws__submit_roots(p, first, last, n);
  if (rc != 0 && futures != NULL)
    for (size_t i = 0; i < n; i++)
      futures[i] = NULL;
  return rc;
}

int ws_shutdown(ws_pool_t *p)
{
  if (p == NULL)
    return WS_EINVAL;
  /* Timers and watches first (core/netpoll.c): once the pool drains, nothing
     may fire into it. */
  ws__polls_shutdown(p);
  uint64_t v = atomic_load_explicit(&p->life, memory_order_relaxed);
  while (ws__life_state(v) == WS_POOL_ACCEPTING) {
    /* seq_cst: pairs with the root submitters' fetch_add (core/life.c). */
    if (atomic_compare_exchange_weak_explicit(&p->life, &v, v | WS_POOL_DRAINING,
                                              memory_order_seq_cst, memory_order_relaxed))
      break;
  }
  /* Suspended tasks (ws_suspend) end with WS_ESHUTDOWN (sleeps ended with
     the timers above): the pool no longer accepts, so none can start. */
  ws__tpark_shutdown(p);
  ws__try_terminate(p); /* nothing outstanding: terminate now; otherwise the last task does */
  return 0;
}

int ws_pool_state(const ws_pool_t *p)
{
  if (p == NULL)
    return WS_EINVAL;
  /* Acquire: a caller that sees TERMINATED sees every task's effects. */
  return ws__life_state(atomic_load_explicit(&((ws_pool_t *)p)->life, memory_order_acquire));
}

int ws_pool_workers(const ws_pool_t *p)
{
  return p == NULL ? WS_EINVAL : (int)p->nworkers;
}

int ws_pool_slots(const ws_pool_t *p)
{
  /* Both fields are read-only after creation; <= 1024 + 4096, fits. */
  return p == NULL ? WS_EINVAL : (int)(p->nworkers + p->max_spares);
}

int ws_await_termination(ws_pool_t *p, int64_t timeout_ns)
{
  if (p == NULL)
    return WS_EINVAL;
  if (ws__self_in(p) != NULL)
    return WS_EDEADLK; /* our own task is outstanding */
  int64_t deadline = ws__deadline(timeout_ns);
  ws__publish_private(ws__tls_worker); /* a worker of another pool about to block */
  /* Acquire: pairs with the terminator's release store. */
  while (atomic_load_explicit(&p->term_word, memory_order_acquire) == 0) {
    if (timeout_ns == 0 || !ws__futex_wait(&p->term_word, 0, deadline))
      return atomic_load_explicit(&p->term_word, memory_order_acquire) ? 0 : WS_ETIMEDOUT;
  }
  return 0;
}

int ws_pool_wait_idle(ws_pool_t *p, int64_t timeout_ns)
{
  if (p == NULL)
    return WS_EINVAL;
  if (ws__self_in(p) != NULL)
    return WS_EDEADLK;
  int64_t deadline = ws__deadline(timeout_ns);
  ws__publish_private(ws__tls_worker); /* a worker of another pool about to block */
  int rc = 0;
  /* seq_cst: pairs with ws__life_done's load of idle_waiters after its
     decrement: either it sees us, or we see its zero. */
  atomic_fetch_add_explicit(&p->idle_waiters, 1, memory_order_seq_cst);
  for (;;) {
    uint32_t e = atomic_load_explicit(&p->idle_epoch, memory_order_acquire); /* before the check */
    if (ws__life_count(atomic_load_explicit(&p->life, memory_order_seq_cst)) == 0)
      break;
    if (timeout_ns == 0 || !ws__futex_wait(&p->idle_epoch, e, deadline)) {
      if (ws__life_count(atomic_load_explicit(&p->life, memory_order_seq_cst)) != 0)
        rc = WS_ETIMEDOUT;
      break;
    }
  }
  atomic_fetch_sub_explicit(&p->idle_waiters, 1, memory_order_relaxed); /* a hint for wakers */
  return rc;
}

int ws_pool_destroy(ws_pool_t *p)
{
  if (p == NULL)
    return WS_EINVAL;
  if (ws__self_in(p) != NULL)
    return WS_EDEADLK;
  ws_shutdown(p);
  ws_await_termination(p, WS_FOREVER);
  ws__schedtrace_stop(p);
  for (unsigned i = 0; i < p->nworkers; i++)
    pthread_join(p->workers[i].thread, NULL);
  /* Spares exit at termination (or retired earlier); join every thread that
     ran in a spare slot. No spare can start now: no task runs. */
  unsigned nslots = ws__nslots(p);
  for (unsigned i = p->nworkers; i < nslots; i++)
    if (p->workers[i].thread_joinable)
      pthread_join(p->workers[i].thread, NULL);
  /* Acquire: pairs with the guests' release (internal.h): their last
     touches of the pool come before the free. Termination came after their
     increment (it needs their decrement of life), so each one is seen. */
  while (atomic_load_explicit(&p->guests, memory_order_acquire) != 0)
    sched_yield();
  ws__trace_env_stop(p); /* WS_TRACE: every worker has exited, nothing records */
  if (p->tracing)
    ws_trace_stop(p, NULL); /* a trace the application did not stop */
  pool_free(p, nslots);
  return 0;
}

int ws_pool_describe(const ws_pool_t *p, char *buf, size_t len)
{
  if (p == NULL || (buf == NULL && len != 0))
    return WS_EINVAL;
  char topo[512] = "flat: a random permutation of the other workers";
  if (p->topo != NULL) {
    char what[200];
    ws__topo_describe(p->topo, what, sizeof what);
    snprintf(topo, sizeof topo,
             "%s; thieves try the same core, then the same last-level cache, "
             "then the same NUMA node, then the rest",
             what);
  }
  char quota[64] = "no cgroup CPU limit";
  if (p->cgroup_limit > 0)
    snprintf(quota, sizeof quota, "cgroup CPU limit %.2f", p->cgroup_limit);
  return snprintf(buf, len,
                  "%u workers from %s; %u CPUs in the affinity mask, %s; %s; "
                  "topology: %s%s%s",
                  p->nworkers, p->workers_from, p->ncpus, quota, p->pin ? "pinned" : "not pinned",
                  topo, p->env_notes[0] != '\0' ? "; environment: " : "", p->env_notes);
}

/* A spare's slot index is >= nworkers: it runs while the worker it
   replaces is still inside its task, so the two need distinct indices. */
int ws_current_worker(void)
{
  ws__worker *w = ws__tls_worker;
  return w != NULL ? (int)w->index : -1;
}

ws_pool_t *ws_current_pool(void)
{
  ws__worker *w = ws__tls_worker;
  return w != NULL ? w->pool : NULL;
}
