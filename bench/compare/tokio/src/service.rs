// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
//! service L and service-bg L (WORKLOADS.md section 8): an open-loop service.
//! A plain `std::thread`, outside the runtime, starts N requests at
//! precomputed Poisson arrival times with `handle.spawn`, sleeping with
//! `thread::sleep` in between (never spinning) after setting its timer slack
//! to 1 ns; each request spins on `Instant::now` for 10 us. The measure is
//! every request's sojourn, from its spawn to its end.

use crate::{parse_size, Outcome, Run};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

const N: usize = 200_000;
/// S, the CPU time one request demands.
const WORK: Duration = Duration::from_micros(10);
const BG_FIB: u64 = 27;
const BG_WANT: u64 = 196_418;
/// A request that never ends is reported as a miss (ok=0), not a hang.
const TIMEOUT: Duration = Duration::from_secs(600);
/// Percentiles of the LATENCY line, in parts per million; the max follows.
const LATENCY_PPM: [u64; 9] = [
    500_000, 750_000, 900_000, 950_000, 990_000, 995_000, 999_000, 999_500, 999_900,
];

/// a_0 .. a_{n-1}, the arrival times in ns after t0: splitmix64 from
/// 0x5EED0000 + load, exponential gaps of mean S * 100 / (load * workers) ns,
/// summed in double precision.
fn arrivals(n: usize, load: u64, workers: usize) -> Vec<f64> {
    let mean = WORK.as_nanos() as f64 * 100.0 / (load as f64 * workers as f64);
    let mut x: u64 = 0x5EED_0000 + load;
    let mut sum = 0.0f64;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            let u = (z >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            sum += -(1.0 - u).ln() * mean;
            sum
        })
        .collect()
}

/// The ppm-th percentile of sorted v: its ceil(ppm / 1e6 * n)-th smallest
/// value, in integers so that 99.9 % of 200000 is exactly 199800.
fn rank<T: Copy>(v: &[T], ppm: u64) -> T {
    let k = ((ppm * v.len() as u64 + 999_999) / 1_000_000).max(1);
    v[k as usize - 1]
}

fn us(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e3)
}

/// What the requests write. All times are ns after `base`, a clock reading
/// taken once per process. Slot i's `end` and `done` are written only by
/// request i and read by the main thread after `finished` reached N: the
/// increment that reaches N acquires every earlier one (each is AcqRel), and
/// the mutex then orders it before the main thread's reads.
struct Shared {
    base: Instant,
    end: Vec<AtomicU64>,
    done: Vec<AtomicU32>,
    finished: AtomicUsize,
    all_done: Mutex<bool>,
    all_done_cv: Condvar,
}

impl Shared {
    /// Request i: spin on the clock for S, then mark the slot.
    fn request(&self, i: usize) {
        let b = Instant::now();
        let mut now = b;
        while now.duration_since(b) < WORK {
            now = Instant::now();
        }
        self.end[i].store(now.duration_since(self.base).as_nanos() as u64, Ordering::Relaxed);
        self.done[i].fetch_add(1, Ordering::Relaxed);
        if self.finished.fetch_add(1, Ordering::AcqRel) + 1 == N {
            *self.all_done.lock().unwrap() = true;
            self.all_done_cv.notify_all();
        }
    }
}

/// fib(n) as in WORKLOADS.md section 1, every call a task: both sub-calls
/// are `tokio::spawn`ed and awaited. Boxed because an async fn cannot
/// spawn itself by name (its future type would be infinite).
fn fib(n: u64) -> Pin<Box<dyn Future<Output = u64> + Send>> {
    Box::pin(async move {
        if n < 2 {
            return n;
        }
        let a = tokio::spawn(fib(n - 1));
        let b = tokio::spawn(fib(n - 2));
        a.await.expect("fib task") + b.await.expect("fib task")
    })
}

/// What the generator thread measured: t0, and per request its spawn time
/// and its lateness, in ns (t0 and spawn times after `base`).
struct Generated {
    t0: u64,
    sub: Vec<u64>,
    late: Vec<i64>,
}

/// The generator: its own thread, outside the runtime. It sleeps while it
/// is early and spawns a request at once when it is late.
fn generate(sh: &'static Shared, arrive: Arc<Vec<f64>>, handle: tokio::runtime::Handle) -> Generated {
    // The default slack (50 us) would make every sleep up to 50 us late.
    // SAFETY: prctl with PR_SET_TIMERSLACK takes one integer argument.
    let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    if r != 0 {
        eprintln!("tokio: prctl(PR_SET_TIMERSLACK, 1) failed; sleeps keep the default slack");
    }
    let base = sh.base;
    let start = Instant::now();
    let mut sub = vec![0u64; N];
    let mut late = vec![0i64; N];
    for i in 0..N {
        let due = start + Duration::from_nanos(arrive[i] as u64);
        let now = Instant::now();
        if now < due {
            std::thread::sleep(due - now);
        }
        let s = Instant::now();
        sub[i] = s.duration_since(base).as_nanos() as u64;
        // s is never before due when the sleep was taken; when late it is after.
        late[i] = s.duration_since(due).as_nanos() as i64;
        handle.spawn(async move { sh.request(i) });
    }
    Generated {
        t0: start.duration_since(base).as_nanos() as u64,
        sub,
        late,
    }
}

pub fn prepare(size: &str, workers: usize, bg: bool) -> Result<Run, String> {
    let load = parse_size(size, 1, 99)?;
    let arrive = Arc::new(arrivals(N, load, workers));
    let sh: &'static Shared = Box::leak(Box::new(Shared {
        base: Instant::now(),
        end: (0..N).map(|_| AtomicU64::new(0)).collect(),
        done: (0..N).map(|_| AtomicU32::new(0)).collect(),
        finished: AtomicUsize::new(0),
        all_done: Mutex::new(false),
        all_done_cv: Condvar::new(),
    }));
    Ok(Box::new(move |rt: &tokio::runtime::Runtime| {
        for i in 0..N {
            sh.end[i].store(0, Ordering::Relaxed);
            sh.done[i].store(0, Ordering::Relaxed);
        }
        sh.finished.store(0, Ordering::Relaxed);
        *sh.all_done.lock().unwrap() = false;

        // The background job, started just before t0: fib 27 again and
        // again until stop; runs counts the runs that ended, bad the wrong
        // answers among them.
        let stop = Arc::new(AtomicBool::new(false));
        let runs = Arc::new(AtomicU64::new(0));
        let bad = Arc::new(AtomicU64::new(0));
        let bg_task = if bg {
            let (stop, runs, bad) = (stop.clone(), runs.clone(), bad.clone());
            Some(rt.spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    if fib(BG_FIB).await != BG_WANT {
                        bad.fetch_add(1, Ordering::Relaxed);
                    }
                    runs.fetch_add(1, Ordering::Relaxed);
                }
            }))
        } else {
            None
        };

        let (arrive, handle) = (arrive.clone(), rt.handle().clone());
        let gen = std::thread::spawn(move || generate(sh, arrive, handle));
        let missed = {
            let guard = sh.all_done.lock().unwrap();
            let (_guard, res) = sh
                .all_done_cv
                .wait_timeout_while(guard, TIMEOUT, |done| !*done)
                .unwrap();
            res.timed_out()
        };
        let bg_runs = runs.load(Ordering::Relaxed);
        stop.store(true, Ordering::Relaxed);
        if let Some(t) = bg_task {
            rt.block_on(t).expect("background task"); // untimed: the run in progress ends
        }
        let g = gen.join().expect("generator thread");

        // Verify: every slot done exactly once. The last request's end is
        // the end of the timed region.
        let mut good = 0usize;
        let mut last = g.t0;
        let mut soj: Vec<i64> = Vec::with_capacity(N);
        for i in 0..N {
            if sh.done[i].load(Ordering::Relaxed) == 1 {
                good += 1;
                let end = sh.end[i].load(Ordering::Relaxed);
                soj.push(end as i64 - g.sub[i] as i64);
                last = last.max(end);
            }
        }
        let elapsed = Duration::from_nanos(last - g.t0);
        let ok = !missed && good == N && bad.load(Ordering::Relaxed) == 0;
        if !ok {
            return Outcome {
                elapsed,
                answer: good.to_string(),
                ok: false,
                extra: String::new(),
                latency: String::new(),
            };
        }
        soj.sort_unstable();
        let mut late = g.late;
        late.sort_unstable();
        let max = soj[N - 1];
        let mut extra = format!(
            "p50_us={} p90_us={} p99_us={} p999_us={} p9999_us={} max_us={} \
             late_p50_us={} late_p99_us={} late_max_us={}",
            us(rank(&soj, 500_000)),
            us(rank(&soj, 900_000)),
            us(rank(&soj, 990_000)),
            us(rank(&soj, 999_000)),
            us(rank(&soj, 999_900)),
            us(max),
            us(rank(&late, 500_000)),
            us(rank(&late, 990_000)),
            us(late[N - 1])
        );
        if bg {
            extra += &format!(" bg={}", bg_runs);
        }
        let mut pts: Vec<String> = LATENCY_PPM.iter().map(|&p| us(rank(&soj, p))).collect();
        pts.push(us(max));
        Outcome {
            elapsed,
            answer: good.to_string(),
            ok: true,
            extra,
            latency: format!("us={}", pts.join(",")),
        }
    }))
}
