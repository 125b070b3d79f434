/*
 * test_uts.c - tests for the UTS library.
 *
 *   test_uts          unit checks plus a 4-thread walk of T1 and T3
 *   test_uts --full   also every preset serially (T1L, T2L, T3L take
 *                     about a minute between them)
 *
 * The digests below were computed with the openssl command-line tool, e.g.
 *   printf '\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x13' | openssl sha1
 * so they check the node rule against an independent SHA-1.
 */
#define _POSIX_C_SOURCE 200809L
#include "uts.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                     \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
  do {                                                                                             \
    unsigned long long a_ = (unsigned long long)(a);                                               \
    unsigned long long b_ = (unsigned long long)(b);                                               \
    if (a_ != b_) {                                                                                \
      fprintf(stderr, "%s:%d: %s == %s failed: %llu != %llu\n", __FILE__, __LINE__, #a, #b, a_,    \
              b_);                                                                                 \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

static void hex(const unsigned char *s, char out[2 * UTS_STATE_BYTES + 1])
{
  for (int i = 0; i < UTS_STATE_BYTES; i++)
    sprintf(out + 2 * i, "%02x", s[i]);
}

static void check_digest(const uts_node_t *n, const char *want)
{
  char got[2 * UTS_STATE_BYTES + 1];

  hex(n->state, got);
  if (strcmp(got, want) != 0) {
    fprintf(stderr, "digest %s, want %s\n", got, want);
    failures++;
  }
}

static void test_nodes(void)
{
  uts_params_t p;
  uts_node_t root, child;

  CHECK(uts_preset(&p, "T1") == 0);
  uts_root(&p, &root);
  CHECK(root.depth == 0);
  check_digest(&root, "c6988ab70cc9559ae4d6cba254e29a845a85f86b");
  CHECK_EQ_U64(uts_rand(&root), 0x5a85f86b);
  /* floor(log(1 - 0x5a85f86b/2^31) / log(1 - 1/5)) = 5 */
  CHECK_EQ_U64(uts_num_children(&p, &root), 5);
  uts_child(&p, &root, 3, &child);
  CHECK(child.depth == 1);
  check_digest(&child, "4e62c7789552ef31fa428ed5d9023d3f3ec368ef");

  CHECK(uts_preset(&p, "t3") == 0); /* names are case-insensitive */
  uts_root(&p, &root);
  check_digest(&root, "a11dabbcec7aab309c890ab3dbc256eaeb582782");
  CHECK_EQ_U64(uts_rand(&root), 0x6b582782);
  CHECK_EQ_U64(uts_num_children(&p, &root), 2000); /* floor(b0), uncapped */
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

    CHECK(uts_preset(&p, ps->name) == 0);
    CHECK(uts_identify(&p) == ps);
    uts_format(&p, buf, sizeof buf);
    for (char *c = strtok(buf, " "); c != NULL && n < 32; c = strtok(NULL, " "))
      words[n++] = c;
    CHECK(uts_parse(&q, n, words, err, sizeof err) == 0);
    CHECK(uts_identify(&q) == ps);
  }

  {
    char *a[] = {"-t", "1", "-a", "3", "-d", "10", "-b", "4", "-r", "19"};
    CHECK(uts_parse(&p, 10, a, err, sizeof err) == 0);
    CHECK(uts_identify(&p) != NULL && strcmp(uts_identify(&p)->name, "T1") == 0);
  }
  {
    char *a[] = {"T1", "-r", "20"}; /* later flags override a preset */
    CHECK(uts_parse(&p, 3, a, err, sizeof err) == 0);
    CHECK(p.seed == 20 && p.gen_mx == 10 && uts_identify(&p) == NULL);
  }
  {
    char *a[] = {"T3", "-d", "99"}; /* BIN ignores -d: still T3 */
    CHECK(uts_parse(&p, 3, a, err, sizeof err) == 0);
    CHECK(uts_identify(&p) != NULL && strcmp(uts_identify(&p)->name, "T3") == 0);
  }
  {
    char *bad[][2] = {{"-t", "3"}, {"-x", "1"},    {"-q", "1.5"},
                      {"-d", "0"}, {"-b", "four"}, {"T9", "T1"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
      err[0] = '\0';
      CHECK(uts_parse(&p, 2, bad[i], err, sizeof err) == -1);
      CHECK(err[0] != '\0');
    }
    char *missing[] = {"-b"};
    CHECK(uts_parse(&p, 1, missing, err, sizeof err) == -1);
  }
  CHECK(uts_preset(&p, "nope") == -1);
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
  CHECK_EQ_U64(a.nodes, 4);
  CHECK_EQ_U64(a.leaves, 3);
  CHECK_EQ_U64(a.maxdepth, 7);

  uts_preset(&p, "T1");
  CHECK(uts_check(&p, &a) == 0);
  p.seed = 12345;
  CHECK(uts_check(&p, &a) == -1);
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

  CHECK(uts_preset(&p, name) == 0);
  uts_root(&p, &root);
  k = uts_num_children(&p, &root);
  uts_result_add_node(&total, 0, k);
  for (int t = 0; t < NT; t++) {
    w[t] = (struct walk){&p, root, t, k, UTS_RESULT_INIT, 0};
    CHECK(pthread_create(&th[t], NULL, walker, &w[t]) == 0);
  }
  for (int t = 0; t < NT; t++) {
    pthread_join(th[t], NULL);
    CHECK(!w[t].oom);
    uts_result_merge(&total, &w[t].r);
  }
  printf("%s on %d threads: nodes=%llu leaves=%llu depth=%d\n", name, NT,
         (unsigned long long)total.nodes, (unsigned long long)total.leaves, (int)total.maxdepth);
  CHECK(uts_check(&p, &total) == 1);
}

static void test_serial(const char *name)
{
  uts_params_t p;
  uts_result_t r;

  CHECK(uts_preset(&p, name) == 0);
  CHECK(uts_search_serial(&p, &r) == 0);
  printf("%s serial: nodes=%llu leaves=%llu depth=%d\n", name, (unsigned long long)r.nodes,
         (unsigned long long)r.leaves, (int)r.maxdepth);
  CHECK(uts_check(&p, &r) == 1);
}

int main(int argc, char **argv)
{
  int full = argc > 1 && strcmp(argv[1], "--full") == 0;
  const uts_preset_info_t *ps;

  printf("sha1: %s\n", uts_hash_impl());
  test_nodes();
  test_parse();
  test_merge();
  test_threads("T1");
  test_threads("T3");
  if (full)
    for (int i = 0; (ps = uts_preset_at(i)) != NULL; i++)
      test_serial(ps->name);
  if (failures != 0) {
    fprintf(stderr, "test_uts: %d check(s) failed\n", failures);
    return 1;
  }
  printf("test_uts: all checks passed\n");
  return 0;
}
