// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
/*
 * tbb.cpp - the oneTBB peer (C++17).
 *
 * All work runs inside one tbb::task_arena of P slots, and a
 * tbb::global_control caps the whole process at P threads (the main thread
 * plus P - 1 TBB workers). The tree workloads use one tbb::task_group per
 * internal node: run() for every child, then wait(), which in TBB executes
 * or steals tasks rather than blocking; sort is tbb::parallel_sort. init()
 * warms the arena with a parallel_for so the workers exist before the first
 * timed run.
 */
#include "common.h"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

namespace {

std::unique_ptr<tbb::global_control> g_threads;
std::unique_ptr<tbb::task_arena> g_arena;

int tbb_init(int workers)
{
    g_threads = std::make_unique<tbb::global_control>(
        tbb::global_control::max_allowed_parallelism, workers);
    /* Worker stacks stay at TBB's default (4 MiB): uts T3 nests 1572
     * task_group waits, and one thread ran it in a 1.5 MiB stack
     * (ulimit -s). Raising it to 64 MiB with global_control made tri 50%
     * slower at 2 workers in an A/B test here, for reasons not known. */
    g_arena = std::make_unique<tbb::task_arena>(workers);
    g_arena->initialize();
    std::atomic<int> sink{0};
    g_arena->execute([&] {
        tbb::parallel_for(0, 10000, [&](int i) {
            sink.fetch_add(i & 1, std::memory_order_relaxed);
        });
    });
    return g_arena->max_concurrency() == workers ? workers : -1;
}

void tbb_fini(void)
{
    g_arena.reset();
    g_threads.reset();
}

/* --- fib ------------------------------------------------------------ */

uint64_t fib_rec(int n)
{
    if (n < 2)
        return static_cast<uint64_t>(n);
    uint64_t x = 0, y = 0;
    tbb::task_group g;
    g.run([&] { x = fib_rec(n - 1); });
    g.run([&] { y = fib_rec(n - 2); });
    g.wait();
    return x + y;
}

uint64_t fib(int n)
{
    uint64_t r = 0;
    g_arena->execute([&] { r = fib_rec(n); });
    return r;
}

/* --- nqueens -------------------------------------------------------- */

uint64_t nq(uint32_t all, uint32_t cols, uint32_t ld, uint32_t rd)
{
    if (cols == all)
        return 1;
    uint64_t cnt[32]; /* one slot per child; n <= 16 */
    int k = 0;
    tbb::task_group g;
    for (uint32_t avail = ~(cols | ld | rd) & all; avail != 0;) {
        uint32_t bit = avail & (0u - avail);
        avail ^= bit;
        uint64_t *slot = &cnt[k++];
        g.run([=] {
            *slot = nq(all, cols | bit, ((ld | bit) << 1) & all, (rd | bit) >> 1);
        });
    }
    g.wait();
    uint64_t total = 0;
    for (int i = 0; i < k; i++)
        total += cnt[i];
    return total;
}

uint64_t nqueens(int n)
{
    uint64_t r = 0;
    g_arena->execute([&] { r = nq((UINT32_C(1) << n) - 1, 0, 0, 0); });
    return r;
}

/* --- uts ------------------------------------------------------------ */

uts_result_t uts_rec(const uts_params_t *p, const uts_node_t &n)
{
    int k = uts_num_children(p, &n);
    uts_result_t r = UTS_RESULT_INIT;
    uts_result_add_node(&r, n.depth, k);
    if (k == 0)
        return r;
    std::vector<uts_result_t> kids(static_cast<size_t>(k));
    tbb::task_group g;
    for (int i = 0; i < k; i++) {
        uts_node_t c;
        uts_child(p, &n, i, &c);
        uts_result_t *slot = &kids[static_cast<size_t>(i)];
        g.run([p, c, slot] { *slot = uts_rec(p, c); });
    }
    g.wait();
    for (const uts_result_t &kr : kids)
        uts_result_merge(&r, &kr);
    return r;
}

void uts(const uts_params_t *p, uts_result_t *out)
{
    g_arena->execute([&] {
        uts_node_t root;
        uts_root(p, &root);
        *out = uts_rec(p, root);
    });
}

/* --- fanout --------------------------------------------------------- */

/* The main thread is not a TBB worker; it enters the arena, run()s every
 * task into one task_group and wait()s (helping while it waits). */
void fanout(uint64_t *slots, size_t n)
{
    g_arena->execute([&] {
        tbb::task_group g;
        for (size_t i = 0; i < n; i++)
            g.run([slots, i] { slots[i] = static_cast<uint64_t>(i) + 1; });
        g.wait();
    });
}

/* --- tri ------------------------------------------------------------ */

/* parallel_reduce is TBB's parallel loop for a loop that sums; the default
 * auto_partitioner splits the range further when workers steal. */
uint64_t tri(uint64_t n)
{
    uint64_t r = 0;
    g_arena->execute([&] {
        r = tbb::parallel_reduce(
            tbb::blocked_range<uint64_t>(0, n), uint64_t{0},
            [](const tbb::blocked_range<uint64_t> &range, uint64_t acc) {
                for (uint64_t i = range.begin(); i != range.end(); ++i)
                    acc += tri_iter(i);
                return acc;
            },
            std::plus<uint64_t>());
    });
    return r;
}

/* --- sort ----------------------------------------------------------- */

/* TBB's own parallel sort (a parallel quicksort with std::less, in place),
 * run inside the arena so that it uses its P slots. */
void sort(int32_t *a, size_t n)
{
    g_arena->execute([&] { tbb::parallel_sort(a, a + n); });
}

} // namespace

int main(int argc, char **argv)
{
    bench_ops_t ops = {};
    ops.impl = "tbb";
    ops.init = tbb_init;
    ops.fini = tbb_fini;
    ops.fib = fib;
    ops.nqueens = nqueens;
    ops.uts = uts;
    ops.fanout = fanout;
    ops.tri = tri;
    ops.sort = sort;
    return bench_main(argc, argv, &ops);
}
