// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
//! fib, nqueens, fanout, tri and sort; uts lives in uts.rs.

use crate::{parse_size, timed, Outcome, Run};
use rayon::prelude::*;

// ---- fib: fork-join with no cutoff ----------------------------------------

fn fib_task(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon::join(|| fib_task(n - 1), || fib_task(n - 2));
    a + b
}

pub fn fib(size: &str) -> Result<Run, String> {
    let n = parse_size(size, 0, 60)?;
    let (mut x, mut y) = (0u64, 1u64);
    for _ in 0..n {
        let t = x + y;
        x = y;
        y = t;
    }
    let want = x;
    Ok(Box::new(move |pool: &rayon::ThreadPool| {
        let (got, elapsed) = timed(|| pool.install(|| fib_task(n)));
        Outcome {
            elapsed,
            answer: got.to_string(),
            ok: got == want,
        }
    }))
}

// ---- nqueens: one task per safe column ------------------------------------

/// Solutions for n = 0..16.
const NQUEENS_KNOWN: [u64; 17] = [
    1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512,
];

/// Counts the completions of a board given its three attack masks. Every
/// safe column is one child task: rayon's fork is the binary `join`, so a
/// k-way fork is a balanced tree of k - 1 joins over the list of columns.
fn queens(all: u32, cols: u32, left: u32, right: u32) -> u64 {
    if cols == all {
        return 1;
    }
    let mut bits = [0u32; 32];
    let mut k = 0;
    let mut free = all & !(cols | left | right);
    while free != 0 {
        let bit = free & free.wrapping_neg();
        free ^= bit;
        bits[k] = bit;
        k += 1;
    }
    if k == 0 {
        return 0;
    }
    queens_fork(all, cols, left, right, &bits[..k])
}

/// Places a queen on each column of `bits` (one task each) and sums.
fn queens_fork(all: u32, cols: u32, left: u32, right: u32, bits: &[u32]) -> u64 {
    if let [bit] = *bits {
        return queens(
            all,
            cols | bit,
            ((left | bit) << 1) & all,
            (right | bit) >> 1,
        );
    }
    let (a, b) = bits.split_at(bits.len() / 2);
    let (x, y) = rayon::join(
        || queens_fork(all, cols, left, right, a),
        || queens_fork(all, cols, left, right, b),
    );
    x + y
}

fn queens_serial(all: u32, cols: u32, left: u32, right: u32) -> u64 {
    if cols == all {
        return 1;
    }
    let mut sum = 0;
    let mut free = all & !(cols | left | right);
    while free != 0 {
        let bit = free & free.wrapping_neg();
        free ^= bit;
        sum += queens_serial(
            all,
            cols | bit,
            ((left | bit) << 1) & all,
            (right | bit) >> 1,
        );
    }
    sum
}

pub fn nqueens(size: &str) -> Result<Run, String> {
    let n = parse_size(size, 1, 20)?;
    let all = (1u32 << n) - 1;
    let want = match NQUEENS_KNOWN.get(n as usize) {
        Some(&w) => w,
        None => queens_serial(all, 0, 0, 0),
    };
    Ok(Box::new(move |pool: &rayon::ThreadPool| {
        let (got, elapsed) = timed(|| pool.install(|| queens(all, 0, 0, 0)));
        Outcome {
            elapsed,
            answer: got.to_string(),
            ok: got == want,
        }
    }))
}

// ---- fanout: the main thread submits N independent tiny tasks -------------

pub fn fanout(size: &str) -> Result<Run, String> {
    let n = parse_size(size, 1, 1 << 31)?;
    let mut slots = vec![0u64; n as usize];
    Ok(Box::new(move |pool: &rayon::ThreadPool| {
        slots.iter_mut().for_each(|s| *s = 0);
        // in_place_scope runs the loop on this (non-worker) thread: every
        // spawn is injected into the pool from outside, and the scope's end
        // waits for all of them.
        let ((), elapsed) = timed(|| {
            pool.in_place_scope(|s| {
                for (i, slot) in slots.iter_mut().enumerate() {
                    s.spawn(move |_| *slot = i as u64 + 1);
                }
            })
        });
        let good = slots
            .iter()
            .enumerate()
            .filter(|&(i, &v)| v == i as u64 + 1)
            .count() as u64;
        Outcome {
            elapsed,
            answer: good.to_string(),
            ok: good == n,
        }
    }))
}

// ---- tri: parallel loop with triangular cost -------------------------------

fn tri_iter(i: u64) -> u64 {
    let mut x = (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for _ in 0..i {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    x
}

/// Answers the Go, Java and Rust peers and the C peers (which compute theirs
/// by matrix powers over GF(2)) agreed on; other sizes are computed serially
/// before timing starts.
const TRI_KNOWN: &[(u64, u64)] = &[
    (1000, 1470359940646472591),
    (2000, 16104136941049589645),
    (3000, 11742803937030613110),
    (10000, 13002097167768187927),
    (20000, 11630069088216439415),
    (30000, 11923028442741524185),
    (34000, 11492779753814018237),
];

pub fn tri(size: &str) -> Result<Run, String> {
    let n = parse_size(size, 0, i32::MAX as u64)?;
    let want = match TRI_KNOWN.iter().find(|&&(k, _)| k == n) {
        Some(&(_, w)) => w,
        None => (0..n).map(tri_iter).fold(0u64, |a, b| a.wrapping_add(b)),
    };
    Ok(Box::new(move |pool: &rayon::ThreadPool| {
        let (got, elapsed) = timed(|| {
            pool.install(|| {
                (0..n)
                    .into_par_iter()
                    .map(tri_iter)
                    .reduce(|| 0u64, |a, b| a.wrapping_add(b))
            })
        });
        Outcome {
            elapsed,
            answer: got.to_string(),
            ok: got == want,
        }
    }))
}

// ---- sort: the library's parallel sort ---------------------------------------

/// MurmurHash3's 64-bit finaliser, for sort's order-independent fingerprint.
fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Wrapping sum of fmix64 of every element read as u32: the same for every
/// order of the same multiset.
fn fingerprint(a: &[i32]) -> u64 {
    a.iter()
        .fold(0u64, |f, &v| f.wrapping_add(fmix64(v as u32 as u64)))
}

/// Element i is the low 32 bits, as i32, of the state after i + 1
/// xorshift64 steps (13, 7, 17) from 0x9E3779B97F4A7C15 (WORKLOADS.md).
fn sort_input(n: usize) -> Vec<i32> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u32 as i32
        })
        .collect()
}

pub fn sort(size: &str) -> Result<Run, String> {
    let n = parse_size(size, 0, 1 << 28)? as usize;
    let input = sort_input(n);
    let want = fingerprint(&input);
    let mut data = input.clone();
    Ok(Box::new(move |pool: &rayon::ThreadPool| {
        data.copy_from_slice(&input); // untimed; touches every page
                                      // par_sort is rayon's stable parallel merge sort, as
                                      // ws_parallel_sort is stable; it allocates its buffer inside.
        let ((), elapsed) = timed(|| pool.install(|| data.par_sort()));
        let sorted = data.windows(2).all(|w| w[0] <= w[1]);
        let got = fingerprint(&data);
        Outcome {
            elapsed,
            answer: got.to_string(),
            ok: sorted && got == want,
        }
    }))
}
