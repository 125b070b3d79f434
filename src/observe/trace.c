/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The timeline trace: per-worker event buffers and the Chrome Trace Event
 * JSON writer.
 *
 * Recording. Each worker appends to its own buffer (w->tbuf): no lock and no
 * shared cache line on the recording path. A buffer holds at most `max`
 * events; past that, events are dropped and counted, never blocking the
 * worker. Task slices stay balanced: a BEGIN is kept only if there is room
 * for it and for the END of every slice already open, and an END is kept
 * exactly when its BEGIN was (slices nest LIFO on a worker).
 *
 * Detaching. ws_trace_stop must not read (or free) a buffer while its owner
 * appends to it. The owner brackets every append with w->trace_writing
 * (store 1, then load w->tbuf, both seq_cst); the controller swaps w->tbuf to
 * NULL (seq_cst) and then waits until trace_writing is 0. Either the owner's
 * load sees NULL and it does not append, or the controller sees 1 and waits
 * for the append to finish (its store of 0 is a release the controller's
 * load acquires). The flag lives in the worker, which outlives the buffer.
 *
 * Labels. ws_task_label and a group's label (ws_group_label) record a
 * LABEL event that names the innermost task slice open on the worker. The
 * string is copied into the worker's buffer (once per distinct content, so
 * a label given to a million tasks costs one copy), because the caller's
 * string may be gone by the time the trace is written. A label is kept
 * exactly when its slice's BEGIN was, and only while the buffer has room
 * (WS__TRACE_STR_MAX bytes of labels per worker, WS__LABEL_MAX per label).
 * Nothing of this runs unless the worker traces: ws_task_label tests the
 * hook bit, and a group's label is read only by the hooked run.
 *
 * Writing. Events become Chrome trace events, one lane (tid) per worker
 * under the process's real pid: BEGIN/END pairs become complete ("X") task
 * slices, named by their label, else their function's symbol (dladdr),
 * else "<module>+0x<offset>" (which addr2line resolves), PARK/WAKE a
 * "parked" slice and a "wakeup" instant, and a STEAL a flow ("s" on the
 * victim's lane, "f" on the thief's) with a fresh id. Every string goes
 * through one escaping writer (json.h). Time stamps are microseconds
 * printed from integer nanoseconds, so a nested slice never seems to end
 * after its parent. Each lane is sorted by time (longer slice first on ties).
 */
#include "internal.h"
#include "hooks.h"
#include "json.h"
#include "observe.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define WS__TRACE_DEFAULT_EVENTS ((size_t)1 << 18)
/* Smallest per-worker cap: smaller max_events are raised to it (wsched.h). */
#define WS__TRACE_MIN_EVENTS 16
/* Bytes kept of one label (ws_task_label documents it), and of all the
   labels of one worker's buffer. */
#define WS__LABEL_MAX 255
#define WS__TRACE_STR_MAX ((size_t)1 << 20)

/* Allocations go through ws__malloc, like every other one, so that the
   tests' fault injection reaches them. */
static void *zalloc(size_t size)
{
  void *q = ws__malloc(size);
  if (q != NULL)
    memset(q, 0, size);
  return q;
}

/* realloc through ws__malloc: old holds `used` bytes. NULL (old untouched)
   on failure. */
static void *grow(void *old, size_t used, size_t size)
{
  void *q = ws__malloc(size);
  if (q != NULL && used != 0)
    memcpy(q, old, used);
  if (q != NULL)
    ws__free(old);
  return q;
}

static bool append(ws__tbuf *b, const ws__tev *e)
{
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 1024;
    if (cap > b->max)
      cap = b->max;
    ws__tev *n = cap > b->cap ? grow(b->ev, b->n * sizeof *n, cap * sizeof *n) : NULL;
    if (n == NULL)
      return false;
    b->ev = n;
    b->cap = cap;
  }
  b->ev[b->n++] = *e;
  return true;
}

void ws__trace_event(ws__worker *w, uint32_t kind, uint64_t ptr, uint32_t arg)
{
  /* seq_cst store then load: the Dekker pair with ws_trace_stop's swap. */
  atomic_store_explicit(&w->trace_writing, 1, memory_order_seq_cst);
  ws__tbuf *b = atomic_load_explicit(&w->tbuf, memory_order_seq_cst);
  if (b != NULL) {
    ws__tev e = {ws__now_ns() - w->pool->trace_t0, ptr, kind, arg};
    if (kind == WS__EV_STEAL)
      e.ptr = b->flow_seq++; /* a flow id, unique per thief */
    if (kind == WS__EV_BEGIN) {
      e.arg = b->open_recorded + b->open_dropped;
      if (b->open_dropped == 0 && b->n + b->open_recorded + 2 <= b->max && append(b, &e))
        b->open_recorded++;
      else {
        b->open_dropped++;
        b->dropped++;
      }
    } else if (kind == WS__EV_END) {
      if (b->open_dropped != 0) {
        b->open_dropped--; /* its BEGIN was dropped */
        b->dropped++;
      } else if (b->open_recorded != 0) {
        append(b, &e); /* room was reserved when its BEGIN was kept */
        b->open_recorded--;
      } /* else the slice began before tracing did: not recorded */
    } else if (b->n + b->open_recorded + 1 > b->max || !append(b, &e)) {
      b->dropped++;
    }
  }
  /* Release: the controller that sees 0 sees the appended event. */
  atomic_store_explicit(&w->trace_writing, 0, memory_order_release);
}

/* FNV-1a. */
static uint32_t label_hash(const char *s, size_t n)
{
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++)
    h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

/* *off receives the offset in b->str of a copy of the n bytes at s (no NUL
   among them), stored now unless an equal string is there already. False,
   b unchanged but for a larger index, when there is no room. */
static bool intern(ws__tbuf *b, const char *s, size_t n, uint32_t *off)
{
  if (2 * (b->idx_n + 1) > b->idx_cap) {
    size_t cap = b->idx_cap ? 2 * b->idx_cap : 64;
    uint32_t *idx = zalloc(cap * sizeof *idx);
    if (idx == NULL)
      return false;
    for (size_t i = 0; i < b->idx_cap; i++) /* rehash */
      if (b->idx[i] != 0) {
        const char *c = b->str + b->idx[i] - 1;
        size_t k = label_hash(c, strlen(c)) & (cap - 1);
        while (idx[k] != 0)
          k = (k + 1) & (cap - 1);
        idx[k] = b->idx[i];
      }
    ws__free(b->idx);
    b->idx = idx;
    b->idx_cap = cap;
  }
  size_t k = label_hash(s, n) & (b->idx_cap - 1);
  for (; b->idx[k] != 0; k = (k + 1) & (b->idx_cap - 1)) {
    const char *c = b->str + b->idx[k] - 1;
    if (strncmp(c, s, n) == 0 && c[n] == '\0') {
      *off = b->idx[k] - 1;
      return true;
    }
  }
  if (b->str_n + n + 1 > WS__TRACE_STR_MAX)
    return false;
  if (b->str_n + n + 1 > b->str_cap) {
    size_t cap = b->str_cap ? 2 * b->str_cap : 4096;
    while (cap < b->str_n + n + 1)
      cap *= 2;
    if (cap > WS__TRACE_STR_MAX)
      cap = WS__TRACE_STR_MAX;
    char *str = grow(b->str, b->str_n, cap);
    if (str == NULL)
      return false;
    b->str = str;
    b->str_cap = cap;
  }
  memcpy(b->str + b->str_n, s, n);
  b->str[b->str_n + n] = '\0';
  *off = (uint32_t)b->str_n;
  b->idx[k] = (uint32_t)b->str_n + 1;
  b->idx_n++;
  b->str_n += n + 1;
  return true;
}

/* The bytes of label kept: at most WS__LABEL_MAX, cut before a UTF-8
   character that would not fit whole. */
static size_t label_len(const char *label)
{
  size_t n = strnlen(label, WS__LABEL_MAX + 1);
  if (n > WS__LABEL_MAX) {
    n = WS__LABEL_MAX;
    while (n > 0 && ((unsigned char)label[n] & 0xC0) == 0x80)
      n--; /* label[n] continues a character: cut before its lead byte */
  }
  return n;
}

/* Names the innermost task slice open on the calling worker w: a LABEL
   event (see the top). The same bracket as ws__trace_event's. */
static void trace_label(ws__worker *w, const char *label)
{
  /* seq_cst store then load: the Dekker pair with ws_trace_stop's swap. */
  atomic_store_explicit(&w->trace_writing, 1, memory_order_seq_cst);
  ws__tbuf *b = atomic_load_explicit(&w->tbuf, memory_order_seq_cst);
  if (b != NULL) {
    uint32_t off;
    ws__tev e = {0, 0, WS__EV_LABEL, 0}; /* no time: it belongs to its slice */
    if (b->open_dropped != 0) {
      b->dropped++; /* the slice's BEGIN was dropped */
    } else if (b->open_recorded == 0) {
      /* the slice began before tracing did: not recorded */
    } else if (b->n + b->open_recorded + 1 > b->max || !intern(b, label, label_len(label), &off)) {
      b->dropped++;
    } else {
      e.ptr = off;
      if (!append(b, &e))
        b->dropped++;
    }
  }
  /* Release: the controller that sees 0 sees the appended event. */
  atomic_store_explicit(&w->trace_writing, 0, memory_order_release);
}

void ws__trace_begin(ws__worker *w, const ws__task *t)
{
  ws__trace_event(w, WS__EV_BEGIN, (uint64_t)(uintptr_t)t->fn, 0);
  /* A group child's sink is its group's (task.h): a frame child that is
     not a join half, or a heap one. */
  uint32_t f = t->flags;
  if (((f & (WS__TASK_FRAME | WS__TASK_JOIN)) == WS__TASK_FRAME || (f & WS__TASK_GROUP)) &&
      t->sink->label != NULL)
    trace_label(w, t->sink->label);
}

int ws_task_label(const char *label)
{
  ws__worker *w = ws__tls_worker;
  if (label == NULL || w == NULL)
    return WS_EINVAL;
  if (__builtin_expect(ws__hooks(w) & WS__HOOK_TRACE, 0))
    trace_label(w, label);
  return 0;
}

static void tbuf_free(ws__tbuf *b)
{
  if (b == NULL)
    return;
  ws__free(b->ev);
  ws__free(b->str);
  ws__free(b->idx);
  ws__free(b);
}

size_t ws__trace_env_events(char *notes, size_t notes_len)
{
  uint64_t v;
  char why[160];
  int env = ws__env_uint("WS_TRACE_EVENTS", WS__TRACE_MIN_EVENTS, UINT32_MAX, &v, why, sizeof why);
  if (env == WS__ENV_SET)
    return (size_t)v;
  if (env == WS__ENV_BAD) {
    char instead[64];
    snprintf(instead, sizeof instead, "%u events per worker", (unsigned)WS__TRACE_DEFAULT_EVENTS);
    ws__env_report("WS_TRACE_EVENTS", why, instead);
    if (notes != NULL)
      ws__env_note(notes, notes_len, why);
  }
  return WS__TRACE_DEFAULT_EVENTS;
}

int ws_trace_start(ws_pool_t *p, size_t max_events)
{
  if (p == NULL)
    return WS_EINVAL;
  if (max_events == 0)
    max_events = ws__trace_env_events(NULL, 0);
  if (max_events < WS__TRACE_MIN_EVENTS)
    max_events = WS__TRACE_MIN_EVENTS; /* documented in wsched.h */
  pthread_mutex_lock(&p->trace_lock);
  if (p->tracing) {
    pthread_mutex_unlock(&p->trace_lock);
    return WS_EBUSY;
  }
  unsigned nslots = ws__nslots(p);
  ws__tbuf **bufs = zalloc(nslots * sizeof *bufs);
  for (unsigned i = 0; bufs != NULL && i < nslots; i++) {
    bufs[i] = zalloc(sizeof **bufs);
    if (bufs[i] == NULL) {
      for (unsigned k = 0; k < i; k++)
        ws__free(bufs[k]);
      ws__free(bufs);
      bufs = NULL;
    } else {
      bufs[i]->max = max_events;
    }
  }
  if (bufs == NULL) {
    pthread_mutex_unlock(&p->trace_lock);
    return WS_ENOMEM;
  }
  /* The start time is read by recording workers after they see their
     buffer (release store below, acquire... the seq_cst load in
     ws__trace_event). Spare slots started later get their buffer from
     ws__observe_slot_init; comp_lock makes "counted in nslots here" or
     "sees trace_spare_events" hold for each. */
  p->trace_t0 = ws__now_ns();
  pthread_mutex_lock(&p->comp_lock);
  p->trace_spare_events = max_events;
  for (unsigned i = 0; i < nslots; i++) {
    ws__worker *w = &p->workers[i];
    atomic_store_explicit(&w->tbuf, bufs[i], memory_order_seq_cst);
    ws__hooks_set(w, WS__HOOK_TRACE); /* a hint */
  }
  for (unsigned i = nslots; i < ws__nslots(p); i++)
    ws__observe_slot_init(p, &p->workers[i]);
  pthread_mutex_unlock(&p->comp_lock);
  ws__free(bufs);
  p->tracing = true;
  pthread_mutex_unlock(&p->trace_lock);
  return 0;
}

void ws__observe_slot_init(ws_pool_t *p, ws__worker *w)
{
  if (p->prof_spares) /* relaxed: the region's tasks are published later */
    ws__hooks_set(w, WS__HOOK_PROFILE);
  if (p->trace_spare_events != 0) {
    ws__tbuf *b = zalloc(sizeof *b);
    if (b == NULL)
      return; /* this spare is not traced: its lane stays empty */
    b->max = p->trace_spare_events;
    atomic_store_explicit(&w->tbuf, b, memory_order_seq_cst); /* see the top */
    ws__hooks_set(w, WS__HOOK_TRACE); /* a hint */
  }
}

const ws__observe_ops ws__observe_table = {
    .trace_event = ws__trace_event,
    .run_observed = ws__run_observed,
    .slot_init = ws__observe_slot_init,
};

/* --- the writer -------------------------------------------------------------- */

typedef struct outev {
  int64_t ts, dur;
  uint64_t ptr, id;
  const char *label; /* a task slice's label (in its buffer's str), or NULL */
  uint32_t lane, arg;
  char ph; /* 'X' slice, 's'/'f' flow, 'i' instant */
  char what; /* 't' task, 'p' parked, 'w' wakeup, 'S' steal, 'k' task parked, 'r' task resumed */
  bool open; /* a slice still open when the trace stopped */
  bool parks; /* a task slice that ends where its task parked */
} outev;

typedef struct outvec {
  outev *v;
  size_t n, cap;
  bool failed;
} outvec;

static void push(outvec *o, outev e)
{
  if (o->n == o->cap) {
    size_t cap = o->cap ? 2 * o->cap : 4096;
    outev *n = grow(o->v, o->n * sizeof *n, cap * sizeof *n);
    if (n == NULL) {
      o->failed = true;
      return;
    }
    o->v = n;
    o->cap = cap;
  }
  o->v[o->n++] = e;
}

static int cmp_out(const void *a_, const void *b_)
{
  const outev *a = a_, *b = b_;
  if (a->lane != b->lane)
    return a->lane < b->lane ? -1 : 1;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  if (a->dur != b->dur)
    return a->dur > b->dur ? -1 : 1; /* the enclosing slice first */
  return 0;
}

static void put_us(FILE *f, int64_t ns)
{
  if (ns < 0)
    ns = 0;
  fprintf(f, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

/* What dladdr says of a task function, remembered: a trace names the same
   few functions over and over. A direct-mapped cache (fn 0: empty). */
typedef struct fn_info {
  uint64_t fn;
  const char *sym; /* its exported symbol, or NULL */
  const char *module; /* the object it is in, or NULL */
  uint64_t off; /* fn - the object's load address */
} fn_info;

enum { FN_CACHE = 256 };

static const fn_info *fn_lookup(fn_info *cache, uint64_t fn)
{
  fn_info *c = &cache[(fn >> 4) % FN_CACHE];
  if (c->fn == fn)
    return c;
  Dl_info info;
  *c = (fn_info){fn, NULL, NULL, 0};
  if (fn != 0 && dladdr((void *)(uintptr_t)fn, &info) != 0) {
    /* Only an exact match: the nearest exported symbol below a static
       function or a lambda is another function's name. */
    if (info.dli_sname != NULL && (uintptr_t)info.dli_saddr == fn)
      c->sym = info.dli_sname;
    if (info.dli_fname != NULL && info.dli_fname[0] != '\0') {
      c->module = info.dli_fname;
      c->off = fn - (uint64_t)(uintptr_t)info.dli_fbase;
    }
  }
  return c;
}

static void put_str(FILE *f, const char *s)
{
  ws__json_str(f, s, strlen(s));
}

/* A task slice's name, then its args but the closing brace (see the top). */
static void put_task(FILE *f, fn_info *cache, const outev *e)
{
  const fn_info *fi = fn_lookup(cache, e->ptr);
  fputs(",\"name\":", f);
  if (e->label != NULL)
    put_str(f, e->label);
  else if (fi->sym != NULL)
    put_str(f, fi->sym);
  else if (fi->module != NULL) {
    /* "libfoo.so+0x1a2b" ("addr2line -e libfoo.so 0x1a2b"); a long name is
       cut, and the writer mends a character cut in two */
    const char *base = strrchr(fi->module, '/');
    char buf[256];
    snprintf(buf, sizeof buf, "%s+0x%" PRIx64, base != NULL ? base + 1 : fi->module, fi->off);
    put_str(f, buf);
  } else
    put_str(f, "task");
  fprintf(f, ",\"cat\":\"task\",\"dur\":");
  put_us(f, e->dur);
  fprintf(f, ",\"args\":{\"fn\":\"0x%" PRIx64 "\"", e->ptr);
  if (e->label != NULL) {
    fputs(",\"label\":", f);
    put_str(f, e->label);
  }
  if (fi->sym != NULL) {
    fputs(",\"symbol\":", f);
    put_str(f, fi->sym);
  }
  if (fi->module != NULL) {
    fputs(",\"module\":", f);
    put_str(f, fi->module);
    fprintf(f, ",\"offset\":\"0x%" PRIx64 "\"", fi->off);
  }
}

/* The task slices open on a context when it parked (their functions, the
   innermost last), until it resumes: a worker's events interleave its
   contexts, and a task parked in the middle of another's slice would
   otherwise close the wrong one. Keyed by the context's address. */
typedef struct parked_slices {
  uint64_t ctx; /* 0: a free entry */
  uint32_t depth;
  uint64_t *fn;
  const char **lab; /* their labels (NULL: none) */
} parked_slices;

typedef struct parked_map {
  parked_slices *v;
  size_t n, cap; /* cap: a power of two, or 0 */
  bool failed;
} parked_map;

static parked_slices *parked_find(parked_map *m, uint64_t ctx, bool add)
{
  if (add && 2 * (m->n + 1) > m->cap) {
    size_t cap = m->cap ? 2 * m->cap : 64;
    parked_slices *v = zalloc(cap * sizeof *v);
    if (v == NULL) {
      m->failed = true;
      return NULL;
    }
    for (size_t i = 0; i < m->cap; i++) /* rehash */
      if (m->v[i].ctx != 0) {
        size_t k = (size_t)(m->v[i].ctx >> 4) & (cap - 1);
        while (v[k].ctx != 0)
          k = (k + 1) & (cap - 1);
        v[k] = m->v[i];
      }
    ws__free(m->v);
    m->v = v;
    m->cap = cap;
  }
  if (m->cap == 0)
    return NULL;
  size_t k = (size_t)(ctx >> 4) & (m->cap - 1);
  while (m->v[k].ctx != 0 && m->v[k].ctx != ctx)
    k = (k + 1) & (m->cap - 1);
  if (m->v[k].ctx == ctx)
    return &m->v[k];
  if (!add)
    return NULL;
  m->v[k].ctx = ctx;
  m->n++;
  return &m->v[k];
}

/* Removes entry q (open addressing: the entries after it move up). */
static void parked_remove(parked_map *m, parked_slices *q)
{
  size_t i = (size_t)(q - m->v);
  ws__free(q->fn);
  ws__free(q->lab);
  m->v[i] = (parked_slices){0, 0, NULL, NULL};
  m->n--;
  for (size_t j = (i + 1) & (m->cap - 1); m->v[j].ctx != 0; j = (j + 1) & (m->cap - 1)) {
    parked_slices x = m->v[j];
    m->v[j] = (parked_slices){0, 0, NULL, NULL};
    size_t k = (size_t)(x.ctx >> 4) & (m->cap - 1);
    while (m->v[k].ctx != 0)
      k = (k + 1) & (m->cap - 1);
    m->v[k] = x;
  }
}

/* Turns one worker's raw events into output events. */
static void convert(outvec *o, unsigned lane, const ws__tbuf *b, int64_t stop_ts)
{
  enum { MAXD = 4096 };
  int64_t begin[MAXD];
  uint64_t fn[MAXD];
  const char *lab[MAXD];
  uint32_t depth = 0, lost = 0;
  int64_t park_at = -1;
  parked_map pm = {0};
  for (size_t i = 0; i < b->n; i++) {
    const ws__tev *e = &b->ev[i];
    switch (e->kind) {
    case WS__EV_TPARK: {
      /* The open slices end here, marked as parked; they reopen when the
         context resumes. */
      push(o, (outev){e->ts, 0, 0, 0, NULL, lane, 0, 'i', 'k', false, false});
      parked_slices *q = depth != 0 ? parked_find(&pm, e->ptr, true) : NULL;
      if (q != NULL) {
        ws__free(q->fn);
        ws__free(q->lab);
        q->fn = ws__malloc(depth * sizeof *q->fn);
        q->lab = ws__malloc(depth * sizeof *q->lab);
        q->depth = q->fn != NULL && q->lab != NULL ? depth : 0;
        if (q->depth != 0) {
          memcpy(q->fn, fn, depth * sizeof *fn);
          memcpy(q->lab, lab, depth * sizeof *lab);
        }
      }
      while (depth > 0) {
        depth--;
        push(o, (outev){begin[depth], e->ts - begin[depth], fn[depth], 0, lab[depth], lane, depth,
                        'X', 't', false, true});
      }
      break;
    }
    case WS__EV_TRESUME: {
      push(o, (outev){e->ts, 0, 0, 0, NULL, lane, 0, 'i', 'r', false, false});
      parked_slices *q = parked_find(&pm, e->ptr, false);
      if (q != NULL) {
        /* This context's slices go on above what runs now: none (a context
           resumes from its worker loop, between tasks). */
        for (uint32_t k = 0; k < q->depth && depth < MAXD; k++, depth++) {
          begin[depth] = e->ts;
          fn[depth] = q->fn[k];
          lab[depth] = q->lab[k];
        }
        parked_remove(&pm, q);
      }
      break;
    }
    case WS__EV_BEGIN:
      if (depth < MAXD) {
        begin[depth] = e->ts;
        fn[depth] = e->ptr;
        lab[depth] = NULL;
        depth++;
      } else {
        lost++;
      }
      break;
    case WS__EV_END:
      if (lost) {
        lost--;
      } else if (depth > 0) {
        depth--;
        push(o, (outev){begin[depth], e->ts - begin[depth], fn[depth], 0, lab[depth], lane, depth,
                        'X', 't', false, false});
      }
      break;
    case WS__EV_LABEL:
      if (lost == 0 && depth > 0) /* else its slice was lost (MAXD) */
        lab[depth - 1] = b->str + e->ptr;
      break;
    case WS__EV_PARK:
      park_at = e->ts;
      break;
    case WS__EV_WAKE:
      if (park_at >= 0)
        push(o, (outev){park_at, e->ts - park_at, 0, 0, NULL, lane, 0, 'X', 'p', false, false});
      push(o, (outev){e->ts, 0, 0, 0, NULL, lane, 0, 'i', 'w', false, false});
      park_at = -1;
      break;
    case WS__EV_STEAL: {
      uint64_t id = ((uint64_t)lane << 32) | (e->ptr & 0xFFFFFFFFu);
      push(o, (outev){e->ts, 0, 0, id, NULL, e->arg, 0, 's', 'S', false, false});
      push(o, (outev){e->ts, 0, 0, id, NULL, lane, 0, 'f', 'S', false, false});
      break;
    }
    }
  }
  while (depth > 0) { /* still running when the trace stopped */
    depth--;
    push(o, (outev){begin[depth], stop_ts - begin[depth], fn[depth], 0, lab[depth], lane, depth,
                    'X', 't', true, false});
  }
  if (park_at >= 0)
    push(o, (outev){park_at, stop_ts - park_at, 0, 0, NULL, lane, 0, 'X', 'p', true, false});
  for (size_t k = 0; k < pm.cap; k++) {
    ws__free(pm.v[k].fn);
    ws__free(pm.v[k].lab);
  }
  ws__free(pm.v);
  if (pm.failed)
    o->failed = true;
}

static int write_json(ws_pool_t *p, const char *path, ws__tbuf **bufs, unsigned nlanes,
                      int64_t stop_ts)
{
  outvec o = {0};
  uint64_t dropped = 0;
  for (unsigned i = 0; i < nlanes; i++) {
    if (bufs[i] == NULL)
      continue; /* a spare slot started before the trace and not traced */
    convert(&o, i, bufs[i], stop_ts);
    dropped += bufs[i]->dropped;
  }
  if (o.failed) {
    ws__free(o.v);
    return WS_ENOMEM;
  }
  if (o.n > 1)
    qsort(o.v, o.n, sizeof *o.v, cmp_out);
  FILE *f = fopen(path, "w");
  if (f == NULL) {
    ws__free(o.v);
    return WS_ESYS;
  }
  /* The process's pid, so that traces of several processes open side by
     side; lanes are slots, not thread ids (a steal names its victim by
     slot), each named as its thread names itself (wsched.h, "Threads"). */
  long pid = (long)getpid();
  char name[64];
  snprintf(name, sizeof name, "wsched %d.%d.%d", WS_VERSION_MAJOR, WS_VERSION_MINOR,
           WS_VERSION_PATCH);
  fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"version\":", f);
  put_str(f, name);
  fprintf(f, ",\"workers\":%u,\"dropped_events\":%" PRIu64 "},\"traceEvents\":[\n", nlanes,
          dropped);
  fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"args\":{\"name\":", pid);
  put_str(f, p->name); /* the pool's name, "ws" by default */
  fputs("}},\n", f);
  for (unsigned i = 0; i < nlanes; i++) {
    char role[16];
    snprintf(role, sizeof role, "%c%u", i < p->nworkers ? 'w' : 's', i);
    ws__thread_name_format(name, p->name, role);
    fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%u,\"args\":{\"name\":",
            pid, i);
    put_str(f, name);
    fputs("}},\n", f);
  }
  fn_info cache[FN_CACHE] = {{0}};
  for (size_t k = 0; k < o.n; k++) {
    const outev *e = &o.v[k];
    const char *sep = k + 1 < o.n ? ",\n" : "\n";
    fprintf(f, "{\"pid\":%ld,\"tid\":%u,\"ts\":", pid, e->lane);
    put_us(f, e->ts);
    switch (e->what) {
    case 't':
      fputs(",\"ph\":\"X\"", f);
      put_task(f, cache, e);
      fprintf(f, ",\"depth\":%u%s%s}}%s", e->arg, e->open ? ",\"open\":true" : "",
              e->parks ? ",\"parked\":true" : "", sep);
      break;
    case 'p':
      fprintf(f, ",\"ph\":\"X\",\"name\":\"parked\",\"cat\":\"park\",\"dur\":");
      put_us(f, e->dur);
      fprintf(f, "}%s", sep);
      break;
    case 'w':
      fprintf(f, ",\"ph\":\"i\",\"s\":\"t\",\"name\":\"wakeup\",\"cat\":\"park\"}%s", sep);
      break;
    case 'k':
      fprintf(f, ",\"ph\":\"i\",\"s\":\"t\",\"name\":\"task parked\",\"cat\":\"tpark\"}%s", sep);
      break;
    case 'r':
      fprintf(f, ",\"ph\":\"i\",\"s\":\"t\",\"name\":\"task resumed\",\"cat\":\"tpark\"}%s", sep);
      break;
    default:
      fprintf(f, ",\"ph\":\"%c\",%s\"name\":\"steal\",\"cat\":\"steal\",\"id\":%" PRIu64 "}%s",
              e->ph, e->ph == 'f' ? "\"bp\":\"e\"," : "", e->id, sep);
      break;
    }
  }
  fprintf(f, "]}\n");
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    ws__free(o.v);
    return WS_ESYS;
  }
  ws__free(o.v);
  return 0;
}

int ws_trace_stop(ws_pool_t *p, const char *path)
{
  if (p == NULL)
    return WS_EINVAL;
  pthread_mutex_lock(&p->trace_lock);
  if (!p->tracing) {
    pthread_mutex_unlock(&p->trace_lock);
    return WS_EBUSY;
  }
  int64_t stop_ts = ws__now_ns() - p->trace_t0;
  /* One lane per slot (a steal names its victim by slot), empty for a slot
     without a buffer. comp_lock: no spare slot starts tracing meanwhile. */
  pthread_mutex_lock(&p->comp_lock);
  p->trace_spare_events = 0;
  unsigned nslots = ws__nslots(p);
  ws__tbuf **bufs = zalloc(nslots * sizeof *bufs);
  unsigned nlanes = bufs != NULL ? nslots : 0;
  for (unsigned i = 0; i < nslots; i++) {
    ws__worker *w = &p->workers[i];
    ws__hooks_clear(w, WS__HOOK_TRACE); /* a hint */
    /* seq_cst swap, then seq_cst load of trace_writing: see the top. */
    ws__tbuf *b = atomic_exchange_explicit(&w->tbuf, NULL, memory_order_seq_cst);
    while (atomic_load_explicit(&w->trace_writing, memory_order_seq_cst) != 0)
      ws__cpu_relax(); /* the owner is finishing one append */
    if (b == NULL)
      continue;
    if (bufs != NULL)
      bufs[i] = b;
    else
      tbuf_free(b);
  }
  pthread_mutex_unlock(&p->comp_lock);
  p->tracing = false;
  pthread_mutex_unlock(&p->trace_lock);
  int rc = bufs == NULL ? WS_ENOMEM : 0;
  if (rc == 0 && path != NULL)
    rc = write_json(p, path, bufs, nlanes, stop_ts);
  for (unsigned i = 0; i < nlanes; i++)
    tbuf_free(bufs[i]);
  ws__free(bufs);
  return rc;
}

void ws__trace_env_start(ws_pool_t *p)
{
  static _Atomic unsigned pools; /* ordinal of the pool, for "%d" in the path */
  const char *path = getenv("WS_TRACE");
  if (path == NULL || *path == '\0')
    return;
  unsigned ordinal = atomic_fetch_add_explicit(&pools, 1, memory_order_relaxed); /* a counter */
  const char *pct = strstr(path, "%d");
  char buf[4096];
  if (pct != NULL && strstr(pct + 1, "%") == NULL) {
    snprintf(buf, sizeof buf, "%.*s%u%s", (int)(pct - path), path, ordinal, pct + 2);
    path = buf;
  }
  size_t len = strlen(path) + 1;
  if ((p->trace_env_path = ws__malloc(len)) != NULL)
    memcpy(p->trace_env_path, path, len);
  if (p->trace_env_path == NULL || ws_trace_start(p, 0) != 0) {
    fprintf(stderr, "wsched: WS_TRACE: cannot start tracing\n");
    ws__free(p->trace_env_path);
    p->trace_env_path = NULL;
  }
}

void ws__trace_env_stop(ws_pool_t *p)
{
  if (p->trace_env_path == NULL)
    return;
  int rc = ws_trace_stop(p, p->trace_env_path);
  if (rc != 0 && rc != WS_EBUSY)
    fprintf(stderr, "wsched: WS_TRACE: cannot write %s: %s\n", p->trace_env_path, ws_strerror(rc));
  ws__free(p->trace_env_path);
  p->trace_env_path = NULL;
}
