// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
package wsbench;

import java.util.Map;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.RecursiveTask;
import java.util.stream.LongStream;

/** fib, nqueens, fanout and tri; uts lives in Uts. */
final class Workloads {
    private Workloads() {}

    // ---- fib: fork-join with no cutoff -------------------------------------

    /** Forks fib(n-1), computes fib(n-2) itself, then joins: the usual shape. */
    static final class Fib extends RecursiveTask<Long> {
        private final int n;
        Fib(int n) { this.n = n; }

        @Override
        protected Long compute() {
            if (n < 2) return (long) n;
            Fib a = new Fib(n - 1);
            a.fork();
            long b = new Fib(n - 2).compute();
            return a.join() + b;
        }
    }

    static Main.Run fib(ForkJoinPool pool, String size) throws Main.UsageError {
        int n = (int) Main.parseLong(size, 0, 60);
        long x = 0, y = 1;
        for (int i = 0; i < n; i++) { long t = x + y; x = y; y = t; }
        final long want = x;
        return () -> {
            long t0 = System.nanoTime();
            long got = pool.invoke(new Fib(n));
            long t1 = System.nanoTime();
            return new Main.Outcome(t1 - t0, Long.toString(got), got == want);
        };
    }

    // ---- nqueens: one task per safe column ---------------------------------

    /** Solutions for n = 0..16. */
    private static final long[] NQUEENS_KNOWN = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724,
        2680, 14200, 73712, 365596, 2279184, 14772512};

    /** Counts the completions of a board given its three attack masks. */
    static final class Queens extends RecursiveTask<Long> {
        private final int all, cols, left, right;
        Queens(int all, int cols, int left, int right) {
            this.all = all; this.cols = cols; this.left = left; this.right = right;
        }

        @Override
        protected Long compute() {
            if (cols == all) return 1L;
            int free = all & ~(cols | left | right);
            Queens[] kids = new Queens[Integer.bitCount(free)];
            for (int k = 0; free != 0; k++) {
                int bit = free & -free;
                free ^= bit;
                kids[k] = new Queens(all, cols | bit, ((left | bit) << 1) & all, (right | bit) >>> 1);
            }
            ForkJoinTask.invokeAll(kids);
            long sum = 0;
            for (Queens q : kids) sum += q.getRawResult();
            return sum;
        }
    }

    static long queensSerial(int all, int cols, int left, int right) {
        if (cols == all) return 1;
        long sum = 0;
        for (int free = all & ~(cols | left | right); free != 0; ) {
            int bit = free & -free;
            free ^= bit;
            sum += queensSerial(all, cols | bit, ((left | bit) << 1) & all, (right | bit) >>> 1);
        }
        return sum;
    }

    static Main.Run nqueens(ForkJoinPool pool, String size) throws Main.UsageError {
        int n = (int) Main.parseLong(size, 1, 20);
        int all = (1 << n) - 1;
        final long want = n < NQUEENS_KNOWN.length ? NQUEENS_KNOWN[n] : queensSerial(all, 0, 0, 0);
        return () -> {
            long t0 = System.nanoTime();
            long got = pool.invoke(new Queens(all, 0, 0, 0));
            long t1 = System.nanoTime();
            return new Main.Outcome(t1 - t0, Long.toString(got), got == want);
        };
    }

    // ---- fanout: the main thread submits N independent tiny tasks ----------

    static final class Slot extends RecursiveAction {
        private final long[] slots;
        private final int i;
        Slot(long[] slots, int i) { this.slots = slots; this.i = i; }

        @Override
        protected void compute() { slots[i] = i + 1L; }
    }

    static Main.Run fanout(ForkJoinPool pool, String size) throws Main.UsageError {
        int n = (int) Main.parseLong(size, 1, Integer.MAX_VALUE - 8);
        long[] slots = new long[n];
        Slot[] tasks = new Slot[n];
        return () -> {
            java.util.Arrays.fill(slots, 0);
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                tasks[i] = new Slot(slots, i);
                pool.execute(tasks[i]);
            }
            for (int i = 0; i < n; i++) {
                tasks[i].join();
                tasks[i] = null;
            }
            long t1 = System.nanoTime();
            long good = 0;
            for (int i = 0; i < n; i++) if (slots[i] == i + 1L) good++;
            return new Main.Outcome(t1 - t0, Long.toString(good), good == n);
        };
    }

    // ---- tri: parallel loop with triangular cost ---------------------------

    static long triIter(long i) {
        long x = (i + 1) * 0x9E3779B97F4A7C15L;
        for (long s = 0; s < i; s++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    /**
     * Answers the Go, Java and Rust peers and the C peers (which compute theirs
     * by matrix powers over GF(2)) agreed on; other sizes are computed serially.
     */
    private static final Map<Long, Long> TRI_KNOWN = Map.of(
        1000L, Long.parseUnsignedLong("1470359940646472591"),
        2000L, Long.parseUnsignedLong("16104136941049589645"),
        3000L, Long.parseUnsignedLong("11742803937030613110"),
        10000L, Long.parseUnsignedLong("13002097167768187927"),
        20000L, Long.parseUnsignedLong("11630069088216439415"),
        30000L, Long.parseUnsignedLong("11923028442741524185"),
        34000L, Long.parseUnsignedLong("11492779753814018237"));

    static Main.Run tri(ForkJoinPool pool, String size) throws Main.UsageError {
        long n = Main.parseLong(size, 0, Integer.MAX_VALUE);
        Long known = TRI_KNOWN.get(n);
        long w = 0;
        if (known != null) {
            w = known;
        } else {
            for (long i = 0; i < n; i++) w += triIter(i); // untimed reference
        }
        final long want = w;
        // A parallel stream started from inside a ForkJoinPool runs in that
        // pool, so the loop uses exactly --workers threads.
        return () -> {
            long t0 = System.nanoTime();
            long got = pool.submit(() -> LongStream.range(0, n).parallel().map(Workloads::triIter).sum()).get();
            long t1 = System.nanoTime();
            return new Main.Outcome(t1 - t0, Long.toUnsignedString(got), got == want);
        };
    }
}
