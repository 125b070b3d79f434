// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// The Java peer of wsbench: the six comparison workloads written the way a
// Java programmer would write them, on one ForkJoinPool whose parallelism is
// --workers.
//
// Usage: java-fj [--workers P] [--repeat R] WORKLOAD [SIZE]
//        java-fj --list
//
// Every repetition prints one line
//   RESULT impl=java-fj workload=W size=S workers=P ms=M answer=A ok=1|0
// and the process exits 1 if any answer was wrong, 2 on a usage error.
// The pool is created once; the timed region is the workload alone.
package wsbench;

import java.util.Locale;
import java.util.concurrent.ForkJoinPool;

public final class Main {
    /** What one run of a workload produced; nanos covers the work alone. */
    record Outcome(long nanos, String answer, boolean ok) {}

    /**
     * One run of a workload, prepared once per process. It times only the work
     * itself: resetting inputs and checking the answer happen outside its clock.
     */
    interface Run {
        Outcome run() throws Exception;
    }

    static final class UsageError extends Exception {
        UsageError(String msg) { super(msg); }
    }

    /** name, default size, description: what --list prints. */
    private static final String[][] LIST = {
        {"fib", "32", "fib(N), RecursiveTask: fork one call, compute the other, join"},
        {"nqueens", "12", "all N-queens solutions, one RecursiveTask per safe column (invokeAll)"},
        {"uts", "T1", "UTS tree T1 or T3, one RecursiveTask per child node (invokeAll)"},
        {"fanout", "1000000", "main thread executes N RecursiveActions on the pool, joins each"},
        {"tri", "34000", "LongStream.range(0, N).parallel() run inside the pool"},
        {"sort", "10000000", "Arrays.parallelSort(int[]) run inside the pool, common parallelism = P"},
    };

    private static void usage(String msg) {
        if (!msg.isEmpty()) System.err.println("java-fj: " + msg);
        System.err.println("usage: java-fj [--workers P] [--repeat R] fib|nqueens|uts|fanout|tri|sort [SIZE]");
        System.err.println("       java-fj --list");
        System.exit(2);
    }

    static long parseLong(String size, long lo, long hi) throws UsageError {
        try {
            long v = Long.parseLong(size);
            if (v >= lo && v <= hi) return v;
        } catch (NumberFormatException e) {
            // fall through
        }
        throw new UsageError("size \"" + size + "\": need an integer in [" + lo + ", " + hi + "]");
    }

    private static int positive(String opt, String v) {
        try {
            int n = Integer.parseInt(v);
            if (n >= 1) return n;
        } catch (NumberFormatException e) {
            // fall through
        }
        usage(opt + " needs a positive integer");
        return 0;
    }

    public static void main(String[] args) throws Exception {
        int workers = Runtime.getRuntime().availableProcessors();
        int repeat = 1;
        String name = null, size = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--workers") || a.equals("--repeat")) {
                if (i + 1 >= args.length) usage(a + " needs a value");
                int v = positive(a, args[++i]);
                if (a.equals("--workers")) workers = v; else repeat = v;
            } else if (a.equals("-h") || a.equals("--help")) {
                usage("");
            } else if (a.equals("--list")) {
                for (String[] w : LIST) System.out.printf("%-8s %-8s %s%n", w[0], w[1], w[2]);
                return;
            } else if (name == null) {
                name = a;
            } else if (size == null) {
                size = a;
            } else {
                usage("expected WORKLOAD [SIZE]");
            }
        }
        if (name == null) usage("expected WORKLOAD [SIZE]");

        // Arrays.parallelSort splits by the common pool's parallelism, read
        // once when the ForkJoinPool class initialises: set it first, and
        // for sort only, so the other workloads run as they always did.
        if (name.equals("sort")) {
            System.setProperty("java.util.concurrent.ForkJoinPool.common.parallelism",
                Integer.toString(workers));
        }
        ForkJoinPool pool = new ForkJoinPool(workers);
        Run run;
        try {
            if (size == null) {
                for (String[] w : LIST) if (w[0].equals(name)) size = w[1];
            }
            switch (name) {
                case "fib" -> run = Workloads.fib(pool, size);
                case "nqueens" -> run = Workloads.nqueens(pool, size);
                case "uts" -> run = Uts.prepare(pool, size);
                case "fanout" -> run = Workloads.fanout(pool, size);
                case "tri" -> run = Workloads.tri(pool, size);
                case "sort" -> run = Sort.prepare(pool, size, workers);
                default -> { usage("unknown workload " + name); return; }
            }
        } catch (UsageError e) {
            usage(e.getMessage());
            return;
        }

        boolean allOk = true;
        for (int r = 0; r < repeat; r++) {
            Outcome out = run.run();
            allOk &= out.ok();
            System.out.printf(Locale.ROOT,
                "RESULT impl=java-fj workload=%s size=%s workers=%d ms=%.3f answer=%s ok=%d%n",
                name, size, workers, out.nanos() / 1e6, out.answer(), out.ok() ? 1 : 0);
        }
        System.out.flush();
        pool.shutdown();
        if (!allOk) {
            System.err.println("java-fj: WRONG ANSWER");
            System.exit(1);
        }
    }
}
