/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * sha1_bench.c - time the ways libcrypto offers to hash one UTS child
 * (24 bytes: a 20-byte state and a 4-byte index), one thread.
 *
 *   uts-sha1-bench [N]      N hashes per way (default 4000000)
 *
 * Each hash feeds the next one's input, so the loop cannot be hoisted, and
 * every way must end on the same digest (exit 1 if not). The result decided
 * which SHA-1 path uts.c uses; see README.md.
 */
#define _POSIX_C_SOURCE 200809L
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

enum way { ONESHOT, LOWLEVEL, EVP_LEGACY, EVP_FETCHED, NWAYS };

static const char *const names[NWAYS] = {
    "SHA1() one-shot",
    "SHA1_Init/Update/Final, stack SHA_CTX",
    "EVP_DigestInit_ex(EVP_sha1()), reused ctx",
    "EVP_DigestInit_ex2(fetched MD), reused ctx",
};

int main(int argc, char **argv)
{
  long n = argc > 1 ? strtol(argv[1], NULL, 10) : 4000000;
  unsigned char buf[24], out[20], first[20];
  unsigned int len;
  int status = 0;
  EVP_MD_CTX *ctx = EVP_MD_CTX_new();
  EVP_MD *md = EVP_MD_fetch(NULL, "SHA1", NULL);

  if (n < 1 || ctx == NULL || md == NULL) {
    fprintf(stderr, "usage: uts-sha1-bench [N>0] (or libcrypto failed)\n");
    return 2;
  }
  for (int w = 0; w < NWAYS; w++) {
    double t0;

    memset(buf, 0, sizeof buf);
    memset(out, 0, sizeof out);
    t0 = now_ns();
    for (long i = 0; i < n; i++) {
      memcpy(buf, out, 20);
      buf[23] = (unsigned char)i;
      switch (w) {
      case ONESHOT:
        SHA1(buf, sizeof buf, out);
        break;
      case LOWLEVEL: {
        SHA_CTX c;

        SHA1_Init(&c);
        SHA1_Update(&c, buf, sizeof buf);
        SHA1_Final(out, &c);
        break;
      }
      case EVP_LEGACY:
        EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
        EVP_DigestUpdate(ctx, buf, sizeof buf);
        EVP_DigestFinal_ex(ctx, out, &len);
        break;
      case EVP_FETCHED:
        EVP_DigestInit_ex2(ctx, md, NULL);
        EVP_DigestUpdate(ctx, buf, sizeof buf);
        EVP_DigestFinal_ex(ctx, out, &len);
        break;
      }
    }
    printf("%-44s %7.1f ns/hash\n", names[w], (now_ns() - t0) / (double)n);
    if (w == 0)
      memcpy(first, out, sizeof out);
    else if (memcmp(first, out, sizeof out) != 0) {
      fprintf(stderr, "uts-sha1-bench: %s gave another digest\n", names[w]);
      status = 1;
    }
  }
  EVP_MD_free(md);
  EVP_MD_CTX_free(ctx);
  return status;
}
