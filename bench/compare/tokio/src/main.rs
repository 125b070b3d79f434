// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
//! The Tokio peer of wsbench: the workloads where an async runtime is the
//! natural tool (WORKLOADS.md sections 7 and 8), written the way a Tokio user
//! would write them, on one multi-thread runtime whose `worker_threads` is
//! `--workers`. The fork/join workloads (fib, nqueens, uts, fanout, tri,
//! sort) are not run here: the rayon peer covers Rust's fork/join.
//!
//! Usage: `tokio [--workers P] [--repeat R] WORKLOAD [SIZE]` or `tokio --list`
//!
//! Every repetition prints one line
//! `RESULT impl=tokio workload=W size=S workers=P ms=M answer=A ok=1|0`
//! (service and service-bg add percentile fields after ok= and print a
//! LATENCY line after it) and the process exits 1 if any answer was wrong,
//! 2 on a usage error or a workload it does not run. The runtime is built
//! once; the timed region is the workload alone.

mod pingpong;
mod service;

use std::process::exit;
use std::time::Duration;

/// What one run of a workload produced.
pub struct Outcome {
    /// The timed part alone.
    pub elapsed: Duration,
    pub answer: String,
    pub ok: bool,
    /// Fields printed after ok= (service: the percentiles), or empty.
    pub extra: String,
    /// The LATENCY line's us= field (service), or empty.
    pub latency: String,
}

/// One run of a workload, prepared once per process.
pub type Run = Box<dyn FnMut(&tokio::runtime::Runtime) -> Outcome>;

/// name, default size, description: what --list prints.
const LIST: [(&str, &str, &str); 3] = [
    (
        "pingpong",
        "1000000",
        "two tasks hand a token over tokio::sync::mpsc channels of capacity 1, N hops",
    ),
    (
        "service",
        "80",
        "open loop: a std::thread starts 200000 10-us requests with handle.spawn at load L%",
    ),
    (
        "service-bg",
        "80",
        "service with an async fib 27 (every call tokio::spawn'ed) looping in the background",
    ),
];

/// Workloads of WORKLOADS.md that this peer does not run, and why.
const NOT_RUN: [&str; 6] = ["fib", "nqueens", "uts", "fanout", "tri", "sort"];

fn usage(msg: &str) -> ! {
    if !msg.is_empty() {
        eprintln!("tokio: {}", msg);
    }
    eprintln!("usage: tokio [--workers P] [--repeat R] pingpong|service|service-bg [SIZE]");
    eprintln!("       tokio --list");
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
                    println!("{:<10} {:<8} {}", name, size, about);
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
    if NOT_RUN.contains(&name.as_str()) {
        eprintln!(
            "tokio: {} is a fork/join workload; the tokio peer runs only pingpong, service \
             and service-bg (the rayon peer is Rust's fork/join)",
            name
        );
        exit(2);
    }
    let default_size = match LIST.iter().find(|w| w.0 == name) {
        Some(w) => w.1,
        None => usage(&format!("unknown workload {}", name)),
    };
    let size = posn
        .get(1)
        .cloned()
        .unwrap_or_else(|| default_size.to_string());

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .build()
        .unwrap_or_else(|e| {
            eprintln!("tokio: cannot build the runtime: {}", e);
            exit(2)
        });

    let prepared = match name.as_str() {
        "pingpong" => pingpong::prepare(&size),
        "service" => service::prepare(&size, workers, false),
        _ => service::prepare(&size, workers, true),
    };
    let mut run = prepared.unwrap_or_else(|e| usage(&e));

    let mut all_ok = true;
    for _ in 0..repeat {
        let out = run(&rt);
        let ms = out.elapsed.as_nanos() as f64 / 1e6;
        all_ok &= out.ok;
        let extra = if out.extra.is_empty() {
            String::new()
        } else {
            format!(" {}", out.extra)
        };
        println!(
            "RESULT impl=tokio workload={} size={} workers={} ms={:.3} answer={} ok={}{}",
            name, size, workers, ms, out.answer, out.ok as i32, extra
        );
        if !out.latency.is_empty() {
            println!(
                "LATENCY impl=tokio workload={} size={} workers={} {}",
                name, size, workers, out.latency
            );
        }
    }
    if !all_ok {
        eprintln!("tokio: WRONG ANSWER");
        exit(1);
    }
}
