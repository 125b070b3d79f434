// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
package wsbench;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RecursiveTask;

/** Unbalanced Tree Search: one RecursiveTask per tree node. */
final class Uts {
    private Uts() {}

    /** One named tree and the counts it must produce. */
    record Tree(boolean binomial, double b0, double q, int m, int genMx, int seed,
                long nodes, long leaves, long depth) {}

    static final Tree T1 = new Tree(false, 4, 0, 0, 10, 19, 4130071, 3305118, 10);
    static final Tree T3 = new Tree(true, 2000, 0.124875, 8, 0, 42, 4112897, 3599034, 1572);

    /** Node, leaf and maximum-depth counts of a subtree. */
    static final class Count {
        long nodes, leaves, depth;
        void add(Count o) {
            nodes += o.nodes;
            leaves += o.leaves;
            if (o.depth > depth) depth = o.depth;
        }
    }

    /** MessageDigest is not thread-safe: one per worker thread. */
    private static final ThreadLocal<MessageDigest> SHA1 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-1");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    });

    /** SHA-1(the first len bytes of prefix || i big-endian). */
    static byte[] hash(byte[] prefix, int len, int i) {
        MessageDigest md = SHA1.get();
        md.update(prefix, 0, len);
        md.update((byte) (i >>> 24));
        md.update((byte) (i >>> 16));
        md.update((byte) (i >>> 8));
        md.update((byte) i);
        return md.digest();
    }

    static double prob(byte[] d) {
        int r = ((d[16] & 0xFF) << 24) | ((d[17] & 0xFF) << 16) | ((d[18] & 0xFF) << 8) | (d[19] & 0xFF);
        return (r & 0x7FFFFFFF) / 2147483648.0;
    }

    static int numChildren(Tree t, byte[] d, int depth) {
        if (t.binomial()) {
            if (depth == 0) return (int) Math.floor(t.b0());
            return prob(d) < t.q() ? t.m() : 0;
        }
        if (depth >= t.genMx()) return 0;
        double p = 1.0 / (1.0 + t.b0());
        int n = (int) Math.floor(Math.log(1.0 - prob(d)) / Math.log(1.0 - p));
        return Math.min(n, 100);
    }

    /**
     * Visits the node with digest d and its subtree. The parent computes each
     * child's digest when it creates the child's task.
     */
    static final class Node extends RecursiveTask<Count> {
        private final Tree t;
        private final byte[] d;
        private final int depth;
        Node(Tree t, byte[] d, int depth) {
            this.t = t; this.d = d; this.depth = depth;
        }

        @Override
        protected Count compute() {
            int n = numChildren(t, d, depth);
            Count c = new Count();
            c.nodes = 1;
            c.depth = depth;
            if (n == 0) {
                c.leaves = 1;
                return c;
            }
            Node[] kids = new Node[n];
            for (int k = 0; k < n; k++) kids[k] = new Node(t, hash(d, 20, k), depth + 1);
            ForkJoinTask.invokeAll(kids);
            for (Node k : kids) c.add(k.getRawResult());
            return c;
        }
    }

    static Main.Run prepare(ForkJoinPool pool, String size) throws Main.UsageError {
        Tree t = switch (size) {
            case "T1" -> T1;
            case "T3" -> T3;
            default -> throw new Main.UsageError("uts size \"" + size + "\": known trees are T1 and T3");
        };
        return () -> {
            long t0 = System.nanoTime();
            // The root: SHA-1(16 zero bytes || seed).
            Count c = pool.invoke(new Node(t, hash(new byte[16], 16, t.seed()), 0));
            long t1 = System.nanoTime();
            boolean ok = c.nodes == t.nodes() && c.leaves == t.leaves() && c.depth == t.depth();
            return new Main.Outcome(t1 - t0, Long.toString(c.nodes), ok);
        };
    }
}
