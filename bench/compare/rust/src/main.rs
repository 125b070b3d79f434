// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
//! The rayon peer of wsbench: the six comparison workloads written the way a
//! Rust programmer would write them with rayon, on one `ThreadPool` whose
//! `num_threads` is `--workers`.
//!
//! Usage: `rayon [--workers P] [--repeat R] WORKLOAD [SIZE]` or `rayon --list`
//!
//! Every repetition prints one line
//! `RESULT impl=rayon workload=W size=S workers=P ms=M answer=A ok=1|0`
//! and the process exits 1 if any answer was wrong, 2 on a usage error.
//! The pool is built once; the timed region is the workload alone.

mod uts;
mod workloads;

use std::process::exit;
use std::time::{Duration, Instant};

/// What one run of a workload produced.
pub struct Outcome {
    /// The work alone.
    pub elapsed: Duration,
    pub answer: String,
    pub ok: bool,
}

/// One run of a workload, prepared once per process. It times only the work
/// itself: resetting inputs and checking the answer happen outside its clock.
pub type Run = Box<dyn FnMut(&rayon::ThreadPool) -> Outcome>;

/// Runs f and returns its result with the wall time it took.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t0 = Instant::now();
    let r = f();
    (r, t0.elapsed())
}

/// name, default size, description: what --list prints.
const LIST: [(&str, &str, &str); 6] = [
    ("fib", "32", "fib(N) by rayon::join, no cutoff"),
    (
        "nqueens",
        "12",
        "all N-queens solutions, one task per safe column (tree of joins)",
    ),
    (
        "uts",
        "T1",
        "UTS tree T1 or T3, one task per child node (tree of joins)",
    ),
    (
        "fanout",
        "1000000",
        "main thread spawns N tasks via ThreadPool::in_place_scope",
    ),
    ("tri", "34000", "into_par_iter().map().reduce() over 0..N"),
    (
        "sort",
        "10000000",
        "par_sort() (stable merge sort) of N i32 inside ThreadPool::install",
    ),
];

fn usage(msg: &str) -> ! {
    if !msg.is_empty() {
        eprintln!("rayon: {}", msg);
    }
    eprintln!("usage: rayon [--workers P] [--repeat R] fib|nqueens|uts|fanout|tri|sort [SIZE]");
    eprintln!("       rayon --list");
    exit(2);
}

/// Parses an integer size in [lo, hi].
pub fn parse_size(size: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match size.parse::<u64>() {
        Ok(v) if v >= lo && v <= hi => Ok(v),
        _ => Err(format!(
            "size \"{}\": need an integer in [{}, {}]",
            size, lo, hi
        )),
    }
}

fn main() {
    let mut workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut repeat = 1usize;
    let mut posn: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--workers" | "--repeat" => {
                let v = match args.next().map(|v| v.parse::<usize>()) {
                    Some(Ok(v)) if v >= 1 => v,
                    _ => usage(&format!("{} needs a positive integer", a)),
                };
                if a == "--workers" {
                    workers = v;
                } else {
                    repeat = v;
                }
            }
            "-h" | "--help" => usage(""),
            "--list" => {
                for (name, size, about) in LIST {
                    println!("{:<8} {:<8} {}", name, size, about);
                }
                return;
            }
            _ => posn.push(a),
        }
    }
    if posn.is_empty() || posn.len() > 2 {
        usage("expected WORKLOAD [SIZE]");
    }
    let name = posn[0].clone();
    let default_size = match LIST.iter().find(|w| w.0 == name) {
        Some(w) => w.1,
        None => usage(&format!("unknown workload {}", name)),
    };
    let size = posn
        .get(1)
        .cloned()
        .unwrap_or_else(|| default_size.to_string());

    // Deep joins (uts T3 is 1572 levels) nest frames on one worker's stack;
    // the stack is reserved, not committed, so a large one costs nothing.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .stack_size(256 << 20)
        .build()
        .unwrap_or_else(|e| {
            eprintln!("rayon: cannot build the thread pool: {}", e);
            exit(2)
        });

    let prepared = match name.as_str() {
        "fib" => workloads::fib(&size),
        "nqueens" => workloads::nqueens(&size),
        "uts" => uts::prepare(&size),
        "fanout" => workloads::fanout(&size),
        "sort" => workloads::sort(&size),
        _ => workloads::tri(&size),
    };
    let mut run = prepared.unwrap_or_else(|e| usage(&e));

    let mut all_ok = true;
    for _ in 0..repeat {
        let out = run(&pool);
        let ms = out.elapsed.as_nanos() as f64 / 1e6;
        all_ok &= out.ok;
        println!(
            "RESULT impl=rayon workload={} size={} workers={} ms={:.3} answer={} ok={}",
            name, size, workers, ms, out.answer, out.ok as i32
        );
    }
    if !all_ok {
        eprintln!("rayon: WRONG ANSWER");
        exit(1);
    }
}
