// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
//! pingpong N (WORKLOADS.md section 7): two tasks, ping and pong, each in a
//! loop receiving the token on its own channel and sending it on the other's.
//!
//! The channels are `tokio::sync::mpsc` with capacity 1: the channel a Tokio
//! user takes for a stream of values between two tasks (`oneshot` carries
//! one value and would need a new channel per hop). Tokio has no unbuffered
//! (rendezvous) channel like Go's, so a send completes without waiting for
//! the receiver; each side still waits for the token before its next hop.

use crate::{parse_size, Outcome, Run};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// One side: 0 = ping, 1 = pong. Each token it receives is one hop: the
/// token counts the hops made so far, so ping receives the even ones. It
/// counts the hop and sends the token on; the hop that makes the count n
/// reads the clock and reports it on `done` instead. Returning drops `out`,
/// which ends the other side's loop.
async fn side(
    side: u64,
    n: u64,
    mut inbox: mpsc::Receiver<u64>,
    out: mpsc::Sender<u64>,
    done: mpsc::Sender<(u64, Instant)>,
    out_of_turn: Arc<AtomicU64>,
) {
    while let Some(mut v) = inbox.recv().await {
        if v & 1 != side {
            out_of_turn.fetch_add(1, Ordering::Relaxed);
        }
        v += 1;
        if v >= n {
            let _ = done.send((v, Instant::now())).await;
            return;
        }
        if out.send(v).await.is_err() {
            return; // the other side is gone: the token is lost, n is not reached
        }
    }
}

pub fn prepare(size: &str) -> Result<Run, String> {
    let n = parse_size(size, 1, 2_000_000_000)?;
    Ok(Box::new(move |rt: &tokio::runtime::Runtime| {
        let out_of_turn = Arc::new(AtomicU64::new(0));
        // The harness runs on the main thread (block_on); the two sides are
        // tasks on the runtime's workers.
        let (token, end) = rt.block_on(async {
            let (to_ping, ping_in) = mpsc::channel(1);
            let (to_pong, pong_in) = mpsc::channel(1);
            let (done_tx, mut done_rx) = mpsc::channel(1);
            let start = Instant::now();
            let ping = tokio::spawn(side(0, n, ping_in, to_pong, done_tx.clone(), out_of_turn.clone()));
            // Hop 1 is ping's. The harness gives up its sender before pong
            // gets it, so when pong returns ping's channel closes.
            to_ping.send(0).await.expect("ping is waiting");
            let pong = tokio::spawn(side(1, n, pong_in, to_ping, done_tx, out_of_turn.clone()));
            let got = done_rx.recv().await;
            // Untimed: the other side sees its channel closed and returns.
            let _ = ping.await;
            let _ = pong.await;
            match got {
                Some((token, at)) => (token, at.duration_since(start)),
                None => (0, Duration::ZERO),
            }
        });
        let ok = token == n && out_of_turn.load(Ordering::Relaxed) == 0;
        Outcome {
            elapsed: end,
            answer: token.to_string(),
            ok,
            extra: String::new(),
            latency: String::new(),
        }
    }))
}
