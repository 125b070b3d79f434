/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * uts.c - the UTS tree generator (see uts.h for the API, README.md for the
 * rules this follows and the published counts it reproduces).
 *
 * Hashing. A node's state is a SHA-1 digest from libcrypto. Two ways are
 * built in; the choice is made at compile time:
 *
 *   default        SHA1_Init/SHA1_Update/SHA1_Final on a SHA_CTX that lives
 *                  on the caller's stack. These calls are deprecated in
 *                  OpenSSL 3, so OPENSSL_SUPPRESS_DEPRECATED is defined before
 *                  the include. No shared state at all, so it is thread-safe
 *                  by construction, and it measured fastest (README.md).
 *   UTS_SHA1_EVP   EVP_DigestInit_ex2/Update/Final_ex on an EVP_MD_CTX that
 *                  each thread allocates once (kept in a thread-local pointer,
 *                  freed by a pthread key destructor at thread exit), with the
 *                  SHA-1 EVP_MD fetched once for the process (pthread_once).
 *                  For the day the low-level calls are removed.
 *
 * The one-shot SHA1() is not used: in OpenSSL 3 it looks the algorithm up
 * on every call, and it measured about 6x slower than the low-level calls
 * and 3.5x slower than EVP with a fetched EVP_MD.
 */
#include "uts.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef UTS_SHA1_EVP
#include <openssl/evp.h>
#include <pthread.h>
#else
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#endif

/* ------------------------------------------------------------------------ */
/* SHA-1.                                                                    */

static void put_be32(unsigned char *out, uint32_t v)
{
  out[0] = (unsigned char)(v >> 24);
  out[1] = (unsigned char)(v >> 16);
  out[2] = (unsigned char)(v >> 8);
  out[3] = (unsigned char)v;
}

#ifdef UTS_SHA1_EVP

static EVP_MD *uts__sha1_md; /* written once under sha1_once, then read-only */
static pthread_once_t uts__sha1_once = PTHREAD_ONCE_INIT;
static pthread_key_t uts__ctx_key; /* destructor frees a thread's context     */
static _Thread_local EVP_MD_CTX *uts__ctx; /* owned by its thread            */

static void uts__free_ctx(void *ctx)
{
  EVP_MD_CTX_free(ctx);
}

static void uts__sha1_setup(void)
{
  uts__sha1_md = EVP_MD_fetch(NULL, "SHA1", NULL);
  if (uts__sha1_md == NULL || pthread_key_create(&uts__ctx_key, uts__free_ctx) != 0) {
    fprintf(stderr, "uts: cannot set up SHA-1 (EVP_MD_fetch)\n");
    abort();
  }
}

/* Any thread. Uses this thread's own context. */
static void uts__sha1(const unsigned char *buf, size_t len, unsigned char out[UTS_STATE_BYTES])
{
  unsigned int olen = 0;
  EVP_MD_CTX *ctx = uts__ctx;

  if (ctx == NULL) {
    pthread_once(&uts__sha1_once, uts__sha1_setup);
    ctx = EVP_MD_CTX_new();
    if (ctx == NULL || pthread_setspecific(uts__ctx_key, ctx) != 0) {
      fprintf(stderr, "uts: cannot allocate an EVP_MD_CTX\n");
      abort();
    }
    uts__ctx = ctx;
  }
  if (EVP_DigestInit_ex2(ctx, uts__sha1_md, NULL) != 1 || EVP_DigestUpdate(ctx, buf, len) != 1 ||
      EVP_DigestFinal_ex(ctx, out, &olen) != 1 || olen != UTS_STATE_BYTES) {
    fprintf(stderr, "uts: SHA-1 failed\n");
    abort();
  }
}

const char *uts_hash_impl(void)
{
  return "EVP (per-thread EVP_MD_CTX)";
}

#else /* low-level SHA-1 */

/* Any thread: the context is on this stack frame. */
static void uts__sha1(const unsigned char *buf, size_t len, unsigned char out[UTS_STATE_BYTES])
{
  SHA_CTX c;

  SHA1_Init(&c);
  SHA1_Update(&c, buf, len);
  SHA1_Final(out, &c);
}

const char *uts_hash_impl(void)
{
  return "SHA1_Init/Update/Final";
}

#endif

/* ------------------------------------------------------------------------ */
/* The tree.                                                                 */

void uts_root(const uts_params_t *p, uts_node_t *root)
{
  unsigned char buf[UTS_STATE_BYTES] = {0}; /* 16 zero bytes ++ seed */

  put_be32(buf + 16, (uint32_t)p->seed);
  root->depth = 0;
  uts__sha1(buf, sizeof buf, root->state);
}

void uts_child(const uts_params_t *p, const uts_node_t *parent, int i, uts_node_t *child)
{
  unsigned char buf[UTS_STATE_BYTES + 4]; /* parent state ++ i */

  (void)p;
  memcpy(buf, parent->state, UTS_STATE_BYTES);
  put_be32(buf + UTS_STATE_BYTES, (uint32_t)i);
  child->depth = parent->depth + 1;
  uts__sha1(buf, sizeof buf, child->state);
}

uint32_t uts_rand(const uts_node_t *n)
{
  const unsigned char *s = n->state + 16;

  return (((uint32_t)s[0] << 24) | ((uint32_t)s[1] << 16) | ((uint32_t)s[2] << 8) |
          (uint32_t)s[3]) &
         0x7FFFFFFFu;
}

static double uts__prob(const uts_node_t *n)
{
  return (double)uts_rand(n) / 2147483648.0; /* 2^31: in [0, 1) */
}

/* Expected child count of a geometric node at depth d. The root (d = 0)
 * always expects b0, whatever the shape. The arithmetic is spelled out in
 * this exact order on purpose: the published counts depend on it to the last
 * bit wherever a node's draw falls on a boundary. */
static double uts__geo_mean(const uts_params_t *p, int d)
{
  double dd = (double)d, gm = (double)p->gen_mx;

  if (d == 0)
    return p->b0;
  switch (p->shape) {
  case UTS_EXPDEC:
    return p->b0 * pow(dd, -log(p->b0) / log(gm));
  case UTS_CYCLIC:
    if (d > 5 * p->gen_mx)
      return 0.0;
    return pow(p->b0, sin(2.0 * 3.141592653589793 * dd / gm));
  case UTS_FIXED:
    return d < p->gen_mx ? p->b0 : 0.0;
  case UTS_LINEAR:
  default:
    return p->b0 * (1.0 - dd / gm);
  }
}

static int uts__geo_children(const uts_params_t *p, const uts_node_t *n)
{
  double b = uts__geo_mean(p, n->depth);
  double pr, k;

  if (!(b > 0.0)) /* mean 0 (or a shape gone negative): a leaf */
    return 0;
  pr = 1.0 / (1.0 + b);
  /* Inverse CDF of the geometric distribution with success prob. pr. */
  k = floor(log(1.0 - uts__prob(n)) / log(1.0 - pr));
  if (!(k >= 0.0)) /* pr == 1 gives 0 / -inf = -0 */
    return 0;
  return k >= UTS_MAX_CHILDREN ? UTS_MAX_CHILDREN : (int)k;
}

static int uts__bin_children(const uts_params_t *p, const uts_node_t *n)
{
  int m = p->m > UTS_MAX_CHILDREN ? UTS_MAX_CHILDREN : p->m;

  return uts__prob(n) < p->q ? m : 0;
}

int uts_num_children(const uts_params_t *p, const uts_node_t *n)
{
  switch (p->type) {
  case UTS_BIN:
    if (n->depth == 0)
      return (int)floor(p->b0); /* the only uncapped count */
    return uts__bin_children(p, n);
  case UTS_HYBRID:
    if ((double)n->depth < p->f * (double)p->gen_mx)
      return uts__geo_children(p, n);
    return uts__bin_children(p, n);
  case UTS_GEO:
  default:
    return uts__geo_children(p, n);
  }
}

/* ------------------------------------------------------------------------ */
/* Presets. Parameters and counts are those published with the benchmark's   */
/* sample trees; every one was reproduced by uts-serial (README.md).         */

static const uts_preset_info_t uts__presets[] = {
    {"T1", "-t 1 -a 3 -d 10 -b 4 -r 19", "geometric, fixed shape", {4130071, 3305118, 10}},
    {"T2", "-t 1 -a 2 -d 16 -b 6 -r 502", "geometric, cyclic shape", {4117769, 2342762, 81}},
    {"T3", "-t 0 -b 2000 -q 0.124875 -m 8 -r 42", "binomial", {4112897, 3599034, 1572}},
    {"T4", "-t 2 -a 0 -d 16 -b 6 -r 1 -q 0.234375 -m 4", "hybrid", {4132453, 3108986, 134}},
    {"T5", "-t 1 -a 0 -d 20 -b 4 -r 34", "geometric, linear shape", {4147582, 2181318, 20}},
    {"T1L",
     "-t 1 -a 3 -d 13 -b 4 -r 29",
     "geometric, fixed shape, large",
     {102181082, 81746377, 13}},
    {"T2L",
     "-t 1 -a 2 -d 23 -b 7 -r 220",
     "geometric, cyclic shape, large",
     {96793510, 53791152, 67}},
    {"T3L", "-t 0 -b 2000 -q 0.200014 -m 5 -r 7", "binomial, large", {111345631, 89076904, 17844}},
};

#define UTS_NPRESETS ((int)(sizeof uts__presets / sizeof uts__presets[0]))

const uts_preset_info_t *uts_preset_at(int i)
{
  return i >= 0 && i < UTS_NPRESETS ? &uts__presets[i] : NULL;
}

void uts_params_init(uts_params_t *p)
{
  p->type = UTS_GEO;
  p->shape = UTS_LINEAR;
  p->b0 = 4.0;
  p->seed = 0;
  p->q = 15.0 / 64.0;
  p->m = 4;
  p->gen_mx = 6;
  p->f = 0.5;
}

static int uts__streq_nocase(const char *a, const char *b)
{
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
      return 0;
  return *a == *b;
}

static const uts_preset_info_t *uts__find_preset(const char *name)
{
  for (int i = 0; i < UTS_NPRESETS; i++)
    if (uts__streq_nocase(uts__presets[i].name, name))
      return &uts__presets[i];
  return NULL;
}

static int uts__parse_into(uts_params_t *p, int argc, char *const argv[], char *err, size_t errlen);

/* Split a preset's flag string into words and parse them over *p. */
static int uts__apply_preset(uts_params_t *p, const uts_preset_info_t *ps, char *err, size_t errlen)
{
  char buf[128];
  char *words[32];
  int n = 0;

  snprintf(buf, sizeof buf, "%s", ps->args);
  for (char *c = buf; *c != '\0' && n < 32;) {
    while (*c == ' ')
      *c++ = '\0';
    if (*c == '\0')
      break;
    words[n++] = c;
    while (*c != ' ' && *c != '\0')
      c++;
  }
  return uts__parse_into(p, n, words, err, errlen);
}

int uts_preset(uts_params_t *p, const char *name)
{
  const uts_preset_info_t *ps = uts__find_preset(name);
  uts_params_t tmp;

  if (ps == NULL)
    return -1;
  uts_params_init(&tmp);
  if (uts__apply_preset(&tmp, ps, NULL, 0) != 0)
    return -1; /* cannot happen: the table is checked by test_uts */
  *p = tmp;
  return 0;
}

static void uts__err(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;

  if (err == NULL || errlen == 0)
    return;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

static int uts__num(const char *s, double *out)
{
  char *end;

  errno = 0;
  *out = strtod(s, &end);
  return end != s && *end == '\0' && errno == 0 && isfinite(*out);
}

static int uts__int(const char *s, long lo, long hi, long *out)
{
  char *end;

  errno = 0;
  *out = strtol(s, &end, 10);
  return end != s && *end == '\0' && errno == 0 && *out >= lo && *out <= hi;
}

static int uts__parse_into(uts_params_t *p, int argc, char *const argv[], char *err, size_t errlen)
{
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *v;
    double d;
    long l;

    if (a[0] != '-') {
      const uts_preset_info_t *ps = uts__find_preset(a);

      if (ps == NULL) {
        uts__err(err, errlen, "unknown tree preset '%s'", a);
        return -1;
      }
      if (uts__apply_preset(p, ps, err, errlen) != 0)
        return -1;
      continue;
    }
    if (a[1] == '\0' || a[2] != '\0' || strchr("tbrqmdaf", a[1]) == NULL) {
      uts__err(err, errlen, "unknown tree flag '%s'", a);
      return -1;
    }
    if (i + 1 >= argc) {
      uts__err(err, errlen, "tree flag '%s' needs a value", a);
      return -1;
    }
    v = argv[++i];
    switch (a[1]) {
    case 't':
      if (!uts__int(v, 0, 2, &l))
        goto bad;
      p->type = (uts_type_t)l;
      break;
    case 'a':
      if (!uts__int(v, 0, 3, &l))
        goto bad;
      p->shape = (uts_shape_t)l;
      break;
    case 'b':
      if (!uts__num(v, &d) || d < 0.0 || d > 1e6)
        goto bad;
      p->b0 = d;
      break;
    case 'r':
      if (!uts__int(v, INT32_MIN, INT32_MAX, &l))
        goto bad;
      p->seed = (int32_t)l;
      break;
    case 'q':
      if (!uts__num(v, &d) || d < 0.0 || d > 1.0)
        goto bad;
      p->q = d;
      break;
    case 'm':
      if (!uts__int(v, 0, 1000000, &l))
        goto bad;
      p->m = (int)l;
      break;
    case 'd':
      if (!uts__int(v, 1, 1000000, &l))
        goto bad;
      p->gen_mx = (int)l;
      break;
    case 'f':
      if (!uts__num(v, &d) || d < 0.0 || d > 1e6)
        goto bad;
      p->f = d;
      break;
    }
    continue;
  bad:
    uts__err(err, errlen, "bad value '%s' for tree flag '%s'", v, a);
    return -1;
  }
  return 0;
}

int uts_parse(uts_params_t *p, int argc, char *const argv[], char *err, size_t errlen)
{
  uts_params_t tmp;

  uts__err(err, errlen, "%s", "");
  uts_params_init(&tmp);
  if (uts__parse_into(&tmp, argc, argv, err, errlen) != 0)
    return -1;
  *p = tmp;
  return 0;
}

int uts_format(const uts_params_t *p, char *buf, size_t buflen)
{
  switch (p->type) {
  case UTS_BIN:
    return snprintf(buf, buflen, "-t 0 -b %.17g -q %.17g -m %d -r %ld", p->b0, p->q, p->m,
                    (long)p->seed);
  case UTS_HYBRID:
    return snprintf(buf, buflen, "-t 2 -a %d -d %d -b %.17g -r %ld -q %.17g -m %d -f %.17g",
                    (int)p->shape, p->gen_mx, p->b0, (long)p->seed, p->q, p->m, p->f);
  case UTS_GEO:
  default:
    return snprintf(buf, buflen, "-t 1 -a %d -d %d -b %.17g -r %ld", (int)p->shape, p->gen_mx,
                    p->b0, (long)p->seed);
  }
}

/* Same tree? Compares only what uts_num_children reads for this type. */
static int uts__same_tree(const uts_params_t *a, const uts_params_t *b)
{
  int geo = a->type != UTS_BIN, bin = a->type != UTS_GEO;

  if (a->type != b->type || a->seed != b->seed || a->b0 != b->b0)
    return 0;
  if (geo && (a->shape != b->shape || a->gen_mx != b->gen_mx))
    return 0;
  if (bin && (a->q != b->q || a->m != b->m))
    return 0;
  if (a->type == UTS_HYBRID && a->f != b->f)
    return 0;
  return 1;
}

const uts_preset_info_t *uts_identify(const uts_params_t *p)
{
  for (int i = 0; i < UTS_NPRESETS; i++) {
    uts_params_t q;

    if (uts_preset(&q, uts__presets[i].name) == 0 && uts__same_tree(p, &q))
      return &uts__presets[i];
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* Results.                                                                  */

void uts_result_merge(uts_result_t *into, const uts_result_t *from)
{
  into->nodes += from->nodes;
  into->leaves += from->leaves;
  if (from->maxdepth > into->maxdepth)
    into->maxdepth = from->maxdepth;
}

int uts_expected(const uts_params_t *p, uts_result_t *out)
{
  const uts_preset_info_t *ps = uts_identify(p);

  if (ps == NULL)
    return -1;
  *out = ps->expected;
  return 0;
}

int uts_check(const uts_params_t *p, const uts_result_t *r)
{
  uts_result_t e;

  if (uts_expected(p, &e) != 0)
    return -1;
  return r->nodes == e.nodes && r->leaves == e.leaves && r->maxdepth == e.maxdepth;
}

/* ------------------------------------------------------------------------ */
/* Serial reference walk.                                                    */

int uts_search_serial(const uts_params_t *p, uts_result_t *out)
{
  size_t cap = 4096, top = 0;
  uts_node_t *stack = malloc(cap * sizeof *stack);
  uts_result_t r = UTS_RESULT_INIT;

  if (stack == NULL)
    return -1;
  uts_root(p, &stack[top++]);
  while (top > 0) {
    uts_node_t n = stack[--top];
    int k = uts_num_children(p, &n);

    uts_result_add_node(&r, n.depth, k);
    if ((size_t)k > cap - top) {
      size_t ncap = cap;
      uts_node_t *ns;

      while ((size_t)k > ncap - top)
        ncap *= 2;
      ns = realloc(stack, ncap * sizeof *ns);
      if (ns == NULL) {
        free(stack);
        return -1;
      }
      stack = ns;
      cap = ncap;
    }
    /* Push in reverse so child 0 is visited first (pre-order). */
    for (int i = k - 1; i >= 0; i--)
      uts_child(p, &n, i, &stack[top++]);
  }
  free(stack);
  *out = r;
  return 0;
}
