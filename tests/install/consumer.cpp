// SPDX-License-Identifier: MIT
// consumer.c in C++: wsched.h compiles as C++ (extern "C", the inline
// ws_options_init), and a C++ program links and runs against it.
#include <atomic>
#include <cstdio>
#include <wsched.h>

static std::atomic<long> sum{0};

static int add(void *arg)
{
  sum += static_cast<long>(reinterpret_cast<intptr_t>(arg));
  return 0;
}

int main()
{
  if (ws_version() != WS_VERSION)
    return 1;
  ws_options_t opt;
  ws_options_init(&opt);
  opt.workers = 2;
  ws_pool_t *pool = nullptr;
  int rc = ws_pool_create(&pool, &opt);
  if (rc != 0) {
    std::fprintf(stderr, "ws_pool_create: %s\n", ws_strerror(rc));
    return 1;
  }
  for (long i = 1; i <= 1000; i++)
    if (ws_submit(pool, add, reinterpret_cast<void *>(static_cast<intptr_t>(i)), nullptr) != 0)
      return 1;
  ws_pool_destroy(pool);
  std::printf("sum=%ld (C++)\n", sum.load());
  return sum.load() == 500500 ? 0 : 1;
}
