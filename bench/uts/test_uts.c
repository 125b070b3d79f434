/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * test_uts.c - tests for the UTS library, on tests/test.h's assertions and
 * runner (no wsched: the UTS library alone).
 *
 *   test_uts          unit checks (nodes, parse, merge) plus a 4-thread walk
 *                     of T1 and T3 (threads_T1, threads_T3)
 *   test_uts PART     one of those
 *   test_uts full     (only when named) every preset serially (T1L, T2L,
 *                     T3L take about a minute between them)
 *   test_uts --list   the parts
 *
 * The digests below were computed with the openssl command-line tool, e.g.
 *   printf '\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x13' | openssl sha1
 * so they check the node rule against an independent SHA-1.
 */
#define _POSIX_C_SOURCE 200809L
#include "test.h"
#include "uts.h"

static void hex(const unsigned char *s, char out[2 * UTS_STATE_BYTES + 1])
{
  for (int i = 0; i < UTS_STATE_BYTES; i++)
    sprintf(out + 2 * i, "%02x", s[i]);
}

static void check_digest(const uts_node_t *n, const char *want)
{
  char got[2 * UTS_STATE_BYTES + 1];

  hex(n->state, got);
  ASSERT_STREQ(got, want);
}

static void test_nodes(void)
{
  uts_params_t p;
  uts_node_t root, child;

  ASSERT_EQ(uts_preset(&p, "T1"), 0);
  uts_root(&p, &root);
  ASSERT_EQ(root.depth, 0);
  check_digest(&root, "c6988ab70cc9559ae4d6cba254e29a845a85f86b");
  ASSERT_EQ(uts_rand(&root), 0x5a85f86b);
  /* floor(log(1 - 0x5a85f86b/2^31) / log(1 - 1/5)) = 5 */
  ASSERT_EQ(uts_num_children(&p, &root), 5);
  uts_child(&p, &root, 3, &child);
  ASSERT_EQ(child.depth, 1);
  check_digest(&child, "4e62c7789552ef31fa428ed5d9023d3f3ec368ef");

  ASSERT_EQ(uts_preset(&p, "t3"), 0); /* names are case-insensitive */
  uts_root(&p, &root);
  check_digest(&root, "a11dabbcec7aab309c890ab3dbc256eaeb582782");
  ASSERT_EQ(uts_rand(&root), 0x6b582782);
  ASSERT_EQ(uts_num_children(&p, &root), 2000); /* floor(b0), uncapped */
}

static void test_parse(void)
{
  uts_params_t p, q;
  char err[128], buf[160];
  const uts_preset_info_t *ps;

  /* Every preset: its flags parse, name the same tree, and survive a
     * round trip through uts_format. */
  for (int i = 0; (ps = uts_preset_at(i)) != NULL; i++) {
    char *words[32];
    int n = 0;

    ASSERT_EQ(uts_preset(&p, ps->name), 0);
    ASSERT(uts_identify(&p) == ps);
    uts_format(&p, buf, sizeof buf);
    for (char *c = strtok(buf, " "); c != NULL && n < 32; c = strtok(NULL, " "))
      words[n++] = c;
    ASSERT_EQ(uts_parse(&q, n, words, err, sizeof err), 0);
    ASSERT(uts_identify(&q) == ps);
  }

  {
    char *a[] = {"-t", "1", "-a", "3", "-d", "10", "-b", "4", "-r", "19"};
    ASSERT_EQ(uts_parse(&p, 10, a, err, sizeof err), 0);
    ASSERT(uts_identify(&p) != NULL && strcmp(uts_identify(&p)->name, "T1") == 0);
  }
  {
    char *a[] = {"T1", "-r", "20"}; /* later flags override a preset */
    ASSERT_EQ(uts_parse(&p, 3, a, err, sizeof err), 0);
    ASSERT(p.seed == 20 && p.gen_mx == 10 && uts_identify(&p) == NULL);
  }
  {
    char *a[] = {"T3", "-d", "99"}; /* BIN ignores -d: still T3 */
    ASSERT_EQ(uts_parse(&p, 3, a, err, sizeof err), 0);
    ASSERT(uts_identify(&p) != NULL && strcmp(uts_identify(&p)->name, "T3") == 0);
  }
  {
    char *bad[][2] = {{"-t", "3"}, {"-x", "1"},    {"-q", "1.5"},
                      {"-d", "0"}, {"-b", "four"}, {"T9", "T1"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      err[0] = '\0';
      ASSERT_EQ(uts_parse(&p, 2, bad[i], err, sizeof err), -1);
      ASSERT(err[0] != '\0');
    }
    char *missing[] = {"-b"};
    ASSERT_EQ(uts_parse(&p, 1, missing, err, sizeof err), -1);
  }
  ASSERT_EQ(uts_preset(&p, "nope"), -1);
}

static void test_merge(void)
{
  uts_result_t a = UTS_RESULT_INIT, b = UTS_RESULT_INIT;
  uts_params_t p;

  uts_result_add_node(&a, 0, 2);
  uts_result_add_node(&a, 1, 0);
  uts_result_add_node(&b, 1, 0);
  uts_result_add_node(&b, 7, 0);
  uts_result_merge(&a, &b);
  ASSERT_EQ(a.nodes, 4);
  ASSERT_EQ(a.leaves, 3);
  ASSERT_EQ(a.maxdepth, 7);

  uts_preset(&p, "T1");
  ASSERT_EQ(uts_check(&p, &a), 0);
  p.seed = 12345;
  ASSERT_EQ(uts_check(&p, &a), -1);
}

/* Parallel walk: thread t of NT walks the subtrees of root children
 * t, t + NT, ...; the merged counts must be the published ones. Each
 * thread hashes concurrently with the others. */
enum { NT = 4 };

struct walk {
  const uts_params_t *p;
  uts_node_t root;
  int t, k;
  uts_result_t r;
  int oom;
};

static void *walker(void *arg)
{
  struct walk *w = arg;
  size_t cap = 1024, top = 0;
  uts_node_t *st = malloc(cap * sizeof *st);

  if (st == NULL) {
    w->oom = 1;
    return NULL;
  }
  for (int i = w->t; i < w->k; i += NT) {
    uts_child(w->p, &w->root, i, &st[top++]);
    while (top > 0) {
      uts_node_t n = st[--top];
      int k = uts_num_children(w->p, &n);

      uts_result_add_node(&w->r, n.depth, k);
      while ((size_t)k > cap - top) {
        uts_node_t *ns = realloc(st, 2 * cap * sizeof *ns);

        if (ns == NULL) {
          free(st);
          w->oom = 1;
          return NULL;
        }
        st = ns;
        cap *= 2;
      }
      for (int c = 0; c < k; c++)
        uts_child(w->p, &n, c, &st[top++]);
    }
  }
  free(st);
  return NULL;
}

static void test_threads(const char *name)
{
  uts_params_t p;
  uts_result_t total = UTS_RESULT_INIT;
  struct walk w[NT];
  pthread_t th[NT];
  uts_node_t root;
  int k;

  ASSERT_EQ(uts_preset(&p, name), 0);
  uts_root(&p, &root);
  k = uts_num_children(&p, &root);
  uts_result_add_node(&total, 0, k);
  for (int t = 0; t < NT; t++) {
    w[t] = (struct walk){&p, root, t, k, UTS_RESULT_INIT, 0};
    ASSERT_EQ(pthread_create(&th[t], NULL, walker, &w[t]), 0);
  }
  for (int t = 0; t < NT; t++) {
    pthread_join(th[t], NULL);
    ASSERT(!w[t].oom);
    uts_result_merge(&total, &w[t].r);
  }
  printf("%s on %d threads: nodes=%llu leaves=%llu depth=%d\n", name, NT,
         (unsigned long long)total.nodes, (unsigned long long)total.leaves, (int)total.maxdepth);
  ASSERT_EQ(uts_check(&p, &total), 1);
}

static void test_serial(const char *name)
{
  uts_params_t p;
  uts_result_t r;

  ASSERT_EQ(uts_preset(&p, name), 0);
  ASSERT_EQ(uts_search_serial(&p, &r), 0);
  printf("%s serial: nodes=%llu leaves=%llu depth=%d\n", name, (unsigned long long)r.nodes,
         (unsigned long long)r.leaves, (int)r.maxdepth);
  ASSERT_EQ(uts_check(&p, &r), 1);
}

/* --- the parts --------------------------------------------------------------- */

static void part_threads_T1(void)
{
  test_threads("T1");
}

static void part_threads_T3(void)
{
  test_threads("T3");
}

static void part_full(void)
{
  const uts_preset_info_t *ps;
  for (int i = 0; (ps = uts_preset_at(i)) != NULL; i++)
    test_serial(ps->name);
}

static const test_part parts[] = {
    {"nodes", test_nodes, false},           {"parse", test_parse, false},
    {"merge", test_merge, false},           {"threads_T1", part_threads_T1, false},
    {"threads_T3", part_threads_T3, false}, {"full", part_full, true}, /* about a minute: by hand */
};

int main(int argc, char **argv)
{
  fprintf(stderr, "sha1: %s\n", uts_hash_impl()); /* stdout: --list only */
  return TEST_RUN(argc, argv, parts);
}
