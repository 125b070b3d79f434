// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
package wsbench;

import java.util.Arrays;
import java.util.concurrent.ForkJoinPool;

/**
 * sort: Arrays.parallelSort(int[]) on the input of WORKLOADS.md.
 *
 * <p>Arrays.parallelSort takes its degree of parallelism from the common
 * pool (ForkJoinPool.getCommonPoolParallelism(), by default one less than
 * the CPUs: 1 on a 2-CPU machine, where it would then sort serially), so
 * Main sets java.util.concurrent.ForkJoinPool.common.parallelism to
 * --workers before the first use of ForkJoinPool. The sort is started
 * inside the benchmark's pool of --workers threads, like tri's stream: its
 * subtasks are forked from a worker of that pool and so run there. It
 * allocates its merge buffer itself, inside the timed call.
 */
final class Sort {
    private Sort() {}

    /** MurmurHash3's 64-bit finaliser, for the fingerprint. */
    private static long fmix64(long x) {
        x ^= x >>> 33;
        x *= 0xff51afd7ed558ccdL;
        x ^= x >>> 33;
        x *= 0xc4ceb9fe1a85ec53L;
        return x ^ (x >>> 33);
    }

    /** Wrapping sum of fmix64 of every element read as unsigned 32-bit. */
    private static long fingerprint(int[] a) {
        long f = 0;
        for (int v : a) f += fmix64(Integer.toUnsignedLong(v));
        return f;
    }

    /**
     * Element i is the low 32 bits, as int, of the state after i + 1
     * xorshift64 steps (13, 7, 17) from 0x9E3779B97F4A7C15.
     */
    private static int[] input(int n) {
        int[] a = new int[n];
        long s = 0x9E3779B97F4A7C15L;
        for (int i = 0; i < n; i++) {
            s ^= s << 13;
            s ^= s >>> 7;
            s ^= s << 17;
            a[i] = (int) s;
        }
        return a;
    }

    static Main.Run prepare(ForkJoinPool pool, String size, int workers) throws Main.UsageError {
        int n = (int) Main.parseLong(size, 0, 1L << 28);
        int common = ForkJoinPool.getCommonPoolParallelism();
        if (common != workers) {
            throw new Main.UsageError("sort: the common pool's parallelism is " + common
                + ", not --workers " + workers + " (Arrays.parallelSort would use " + common + ")");
        }
        int[] in = input(n);
        long want = fingerprint(in);
        int[] data = new int[n];
        return () -> {
            System.arraycopy(in, 0, data, 0, n); // untimed; touches every page
            long t0 = System.nanoTime();
            pool.submit(() -> Arrays.parallelSort(data)).get();
            long t1 = System.nanoTime();
            boolean sorted = true;
            for (int i = 1; i < n; i++) sorted &= data[i - 1] <= data[i];
            long got = fingerprint(data);
            return new Main.Outcome(t1 - t0, Long.toUnsignedString(got), sorted && got == want);
        };
    }
}
